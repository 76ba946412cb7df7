//! `parseToolCalls`: tool calls out of a CLI model's text reply.
//!
//! The model is told to reply with only a fenced block
//! `` ```json\n{"tool_calls": [{"name": "...", "args": {...}, "id": "call_1"}]}\n``` `` or with
//! plain text.

use super::js_whitespace;
use crate::messages::{StoredMessage, ToolCall};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One call found in a reply.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParsedToolCall {
    pub id: String,
    pub name: String,
    pub args: Map<String, Value>,
}

/// The calls found in a reply and the text that remains for the assistant message.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParsedToolCalls {
    pub tool_calls: Vec<ParsedToolCall>,
    pub content: String,
}

impl ParsedToolCalls {
    /// The AI message a provider returns for this reply.
    pub fn to_stored_message(&self) -> StoredMessage {
        let mut message = StoredMessage::ai(self.content.clone());
        if !self.tool_calls.is_empty() {
            let calls = self.tool_calls.iter().map(|c| ToolCall::new(&c.id, &c.name, c.args.clone())).collect();
            message.data.tool_calls = Some(calls);
        }
        message
    }
}

/// Finds the tool calls in `text`. Never fails.
///
/// The first `` ```json `` fence is read as upstream's regex `` /```json\s*\n?([\s\S]*?)\n?\s*```/ ``
/// reads it: the block runs to the next `` ``` ``, surrounding whitespace excluded. If the block is
/// a JSON object whose `tool_calls` is an array of call objects, each becomes
/// `{id: id ?? "call_" + index, name, args: args ?? {}}`.
///
/// A call object must have a string `name`, an object (or null/absent) `args` and a string (or
/// null/absent) `id`. If any entry breaks that rule the block is not a tool-call block at all
/// (upstream would pass garbage calls on or throw midway); there are no calls then, as there
/// are for a missing fence, invalid JSON, a missing `tool_calls` array or an empty one.
///
/// `content`: with calls, the text before the fence and the text after it, each trimmed, the
/// non-empty ones joined by a blank line (`"\n\n"`), so the gap the block leaves does not pile
/// up blank lines. Without calls, the whole text, trimmed. Trimming uses JavaScript's whitespace
/// rules, as upstream trims the CLI's output before parsing it.
pub fn parse_tool_calls(text: &str) -> ParsedToolCalls {
    let no_calls = || ParsedToolCalls { tool_calls: Vec::new(), content: js_whitespace::trim(text).to_owned() };
    let Some(fence) = find_json_fence(text) else {
        return no_calls();
    };
    let Some(tool_calls) = read_calls(fence.json).filter(|calls| !calls.is_empty()) else {
        return no_calls();
    };
    let parts = [js_whitespace::trim(&text[..fence.start]), js_whitespace::trim(&text[fence.end..])];
    let content = parts.into_iter().filter(|p| !p.is_empty()).collect::<Vec<_>>().join("\n\n");
    ParsedToolCalls { tool_calls, content }
}

struct Fence<'a> {
    /// Byte range of the whole block, fences included.
    start: usize,
    end: usize,
    json: &'a str,
}

fn find_json_fence(text: &str) -> Option<Fence<'_>> {
    const OPEN: &str = "```json";
    const CLOSE: &str = "```";
    let start = text.find(OPEN)?;
    let after_open = &text[start + OPEN.len()..];
    let body = js_whitespace::trim_start(after_open);
    let body_start = text.len() - body.len();
    // If this opening has no closing fence, no later one has either.
    let close = body_start + body.find(CLOSE)?;
    Some(Fence { start, end: close + CLOSE.len(), json: js_whitespace::trim_end(&text[body_start..close]) })
}

fn read_calls(json: &str) -> Option<Vec<ParsedToolCall>> {
    let parsed: Value = serde_json::from_str(json).ok()?;
    let entries = parsed.get("tool_calls")?.as_array()?;
    entries.iter().enumerate().map(|(index, entry)| read_call(index, entry)).collect()
}

fn read_call(index: usize, entry: &Value) -> Option<ParsedToolCall> {
    let entry = entry.as_object()?;
    let name = entry.get("name")?.as_str()?.to_owned();
    let args = match entry.get("args") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(args)) => args.clone(),
        Some(_) => return None,
    };
    let id = match entry.get("id") {
        None | Some(Value::Null) => format!("call_{index}"),
        Some(Value::String(id)) => id.clone(),
        Some(_) => return None,
    };
    Some(ParsedToolCall { id, name, args })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fence(text: &str) -> Option<(usize, usize, &str)> {
        find_json_fence(text).map(|f| (f.start, f.end, f.json))
    }

    #[test]
    fn fence_matches_upstream_regex() {
        assert_eq!(fence("```json\n{}\n```"), Some((0, 14, "{}")));
        assert_eq!(fence("a ```json  \n\n {} \n ``` b ```json\n[]\n```"), Some((2, 22, "{}")));
        assert_eq!(fence("```json```"), Some((0, 10, "")));
        assert_eq!(fence("```json\n{}"), None);
        assert_eq!(fence("```JSON\n{}\n```"), None);
        assert_eq!(fence("```\n{}\n```"), None);
        // The block ends at the first closing fence, even inside a JSON string (as upstream).
        assert_eq!(fence("```json\n{\"a\":\"```\"}\n```"), Some((0, 17, "{\"a\":\"")));
    }

    #[test]
    fn stored_message_of_a_reply() {
        let parsed = parse_tool_calls("Checking.\n```json\n{\"tool_calls\":[{\"name\":\"ls\"}]}\n```");
        assert_eq!(
            serde_json::to_string(&parsed.to_stored_message()).unwrap(),
            r#"{"type":"ai","data":{"content":"Checking.","tool_calls":[{"id":"call_0","name":"ls","args":{},"type":"tool_call"}]}}"#
        );
        assert_eq!(
            serde_json::to_string(&parse_tool_calls("plain").to_stored_message()).unwrap(),
            r#"{"type":"ai","data":{"content":"plain"}}"#
        );
    }
}
