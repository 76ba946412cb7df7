//! `parseToolCalls`: tool calls out of a CLI model's text reply.
//!
//! The model is told to reply with only a fenced block
//! `` ```json\n{"tool_calls": [{"name": "...", "args": {...}, "id": "call_1"}]}\n``` `` or with
//! plain text.

use super::js_whitespace;
use crate::js_json;
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
/// Each entry is read on its own, as upstream maps each one, so one odd entry never costs the
/// others: an entry that cannot be a call at all (not an object, or no string `name`) is
/// skipped alone, and `index` stays the entry's position in the array. See [`read_call`] for
/// what a numeric `id` and non-object `args` become. No calls at all — a missing fence,
/// invalid JSON, a missing or empty `tool_calls` array, or only entries that are not calls —
/// leaves the whole text as content.
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
    Some(entries.iter().enumerate().filter_map(|(index, entry)| read_call(index, entry)).collect())
}

/// One entry as upstream's `{name, args: args ?? {}, id: id ?? "call_" + index}` reads it, kept
/// within what a provider accepts: `None` when the entry has no string `name` (no call).
///
/// - `id`: a string as is; a number or boolean as JavaScript's `String()` prints it (`7`,
///   `1.5`, `1e+21`, `true`), so the id upstream would send is the one we give; null or absent
///   → `"call_" + index`; an object or array (no usable text) → `"call_" + index` too.
/// - `args`: an object as is; null or absent → `{}`; anything else (a string, number, array,
///   boolean) → `{"input": <that value>}`. Upstream passes such a value through, but a tool
///   call's arguments must be an object for every provider (LangChain's `tool_calls[].args`,
///   OpenAI's `arguments`, Anthropic's `input`), so the value is kept whole under `input`, the
///   same wrapping `xml/parseThread` gives a `tool_input` body that is not an object.
fn read_call(index: usize, entry: &Value) -> Option<ParsedToolCall> {
    let entry = entry.as_object()?;
    let name = entry.get("name")?.as_str()?.to_owned();
    let args = match entry.get("args") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(args)) => args.clone(),
        Some(other) => Map::from_iter([("input".to_owned(), other.clone())]),
    };
    let id = match entry.get("id") {
        Some(Value::String(id)) => id.clone(),
        Some(Value::Number(n)) => js_json::number_to_string(n),
        Some(Value::Bool(b)) => b.to_string(),
        None | Some(Value::Null | Value::Array(_) | Value::Object(_)) => format!("call_{index}"),
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

    #[test]
    fn each_entry_is_read_on_its_own() {
        let parsed = parse_tool_calls(
            "```json\n{\"tool_calls\":[{\"name\":\"a\",\"id\":7},{\"name\":5},\"junk\",\
             {\"name\":\"b\",\"args\":\"ls -la\",\"id\":1.5e21},{\"name\":\"c\",\"args\":[1],\"id\":{}},\
             {\"name\":\"d\",\"args\":false,\"id\":true}]}\n```",
        );
        let calls: Vec<(String, String, Value)> =
            parsed.tool_calls.into_iter().map(|c| (c.id, c.name, Value::Object(c.args))).collect();
        assert_eq!(
            calls,
            [
                ("7".into(), "a".into(), serde_json::json!({})),
                ("1.5e+21".into(), "b".into(), serde_json::json!({"input": "ls -la"})),
                ("call_4".into(), "c".into(), serde_json::json!({"input": [1]})),
                ("true".into(), "d".into(), serde_json::json!({"input": false})),
            ]
        );
        assert_eq!(parsed.content, "");
    }

    #[test]
    fn only_entries_that_are_not_calls_give_no_calls() {
        let text = "```json\n{\"tool_calls\":[{\"name\":5},null]}\n```";
        assert_eq!(parse_tool_calls(text), ParsedToolCalls { tool_calls: Vec::new(), content: text.into() });
    }
}
