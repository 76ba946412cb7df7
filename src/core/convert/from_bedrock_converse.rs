//! Events from a Bedrock Converse body's `messages`: the inverse of the `bedrock-converse`
//! projection.
//!
//! | message / block | events |
//! |---|---|
//! | user `text` | `message` user |
//! | user `toolResult` | `tool_result`: `result` the `json` of a lone `{json}`, else the text of the `{text}` blocks joined; with `status: "error"`, the `error` it was rendered from (its label read back, `recoverable: true` when it has none) |
//! | assistant `reasoningContent` | `reasoning` `{provider: "bedrock", text, signature}` or `{provider: "bedrock", redactedData}` |
//! | assistant `text` | `message` assistant |
//! | assistant `toolUse` | `tool_call` |
//! | `cachePoint` | nothing: the render places cache points by its options |
//!
//! The opening user message the renderer makes is not read; blank text is left out. Other blocks
//! (images, documents, guard content) are refused, naming the block.

use super::from_gemini::ERROR_LABELS;
use super::from_messages::EventStamp;
use super::input_fields::{fault, object, string};
use crate::event::{json_type, AgentEvent, EventError, REASONING_EVENT_TYPE};
use crate::messages::{is_blank, OPENING_TEXT};
use serde_json::{Map, Value};

/// The events of Converse `messages`. Errors name the place: `messages[1].content[0].toolUse.name: missing`.
pub fn bedrock_converse_to_events(messages: &[Value], stamp: &EventStamp) -> Result<Vec<AgentEvent>, EventError> {
    let mut out = Vec::new();
    for (m, message) in messages.iter().enumerate() {
        let path = format!("messages[{m}]");
        let fields = object(message, &path)?;
        let role = string(fields, "role", &path)?;
        if !matches!(role, "user" | "assistant") {
            return Err(fault(&format!("{path}.role"), format!("expected \"user\" or \"assistant\", found {role:?}")));
        }
        let blocks = match fields.get("content") {
            Some(Value::Array(blocks)) => blocks,
            Some(other) => {
                return Err(fault(&format!("{path}.content"), format!("expected an array, found {}", json_type(other))))
            }
            None => return Err(fault(&format!("{path}.content"), "missing")),
        };
        let opening = blocks.len() == 1 && blocks[0].get("text").and_then(Value::as_str) == Some(OPENING_TEXT);
        if m == 0 && role == "user" && opening {
            continue;
        }
        for (b, block) in blocks.iter().enumerate() {
            let path = format!("{path}.content[{b}]");
            let block = object(block, &path)?;
            let kind = match block.keys().next() {
                Some(kind) if block.len() == 1 => kind.as_str(),
                _ => return Err(fault(&path, "expected a block with exactly one member")),
            };
            let inner = &block[kind];
            let event = match (role, kind) {
                (_, "cachePoint") => continue,
                (_, "text") => {
                    let text = inner.as_str().ok_or_else(|| fault(&format!("{path}.text"), "expected a string"))?;
                    if is_blank(text) {
                        continue;
                    }
                    let mut event = head("message");
                    event.insert("role".into(), role.into());
                    event.insert("content".into(), text.into());
                    event
                }
                ("assistant", "reasoningContent") => {
                    reasoning(object(inner, &format!("{path}.reasoningContent"))?, &path)?
                }
                ("assistant", "toolUse") => {
                    let use_path = format!("{path}.toolUse");
                    let call = object(inner, &use_path)?;
                    let args = match call.get("input") {
                        Some(Value::Object(input)) => input.clone(),
                        None | Some(Value::Null) => Map::new(),
                        Some(other) => Map::from_iter([("input".to_owned(), other.clone())]),
                    };
                    let mut event = head("tool_call");
                    event.insert("toolName".into(), string(call, "name", &use_path)?.into());
                    event.insert("toolCallId".into(), string(call, "toolUseId", &use_path)?.into());
                    event.insert("args".into(), Value::Object(args));
                    event
                }
                ("user", "toolResult") => {
                    tool_result(object(inner, &format!("{path}.toolResult"))?, &format!("{path}.toolResult"))?
                }
                (role, kind) => {
                    let expected =
                        if role == "user" { "text or toolResult" } else { "text, toolUse or reasoningContent" };
                    return Err(fault(
                        &path,
                        format!("unsupported {kind:?} block in a {role} message: expected {expected}"),
                    ));
                }
            };
            out.push(finish(event, stamp, &path)?);
        }
    }
    Ok(out)
}

fn head(event_type: &str) -> Map<String, Value> {
    Map::from_iter([("type".to_owned(), Value::from(event_type))])
}

fn reasoning(content: &Map<String, Value>, path: &str) -> Result<Map<String, Value>, EventError> {
    let mut event = head(REASONING_EVENT_TYPE);
    event.insert("provider".into(), "bedrock".into());
    if let Some(text) = content.get("reasoningText") {
        let text_path = format!("{path}.reasoningContent.reasoningText");
        let text = object(text, &text_path)?;
        event.insert("text".into(), string(text, "text", &text_path)?.into());
        if text.contains_key("signature") {
            event.insert("signature".into(), string(text, "signature", &text_path)?.into());
        }
    } else {
        event.insert(
            "redactedData".into(),
            string(content, "redactedContent", &format!("{path}.reasoningContent"))?.into(),
        );
    }
    Ok(event)
}

fn tool_result(result: &Map<String, Value>, path: &str) -> Result<Map<String, Value>, EventError> {
    let id = string(result, "toolUseId", path)?;
    let content = match result.get("content") {
        Some(Value::Array(content)) => content.as_slice(),
        None => &[],
        Some(other) => {
            return Err(fault(&format!("{path}.content"), format!("expected an array, found {}", json_type(other))))
        }
    };
    let value = match content {
        [single] if single.get("json").is_some() => single["json"].clone(),
        parts => {
            let mut text = String::new();
            for (i, part) in parts.iter().enumerate() {
                match part.get("text").and_then(Value::as_str) {
                    Some(part_text) => text.push_str(part_text),
                    None => return Err(fault(&format!("{path}.content[{i}]"), "expected {text} (or one {json})")),
                }
            }
            Value::String(text)
        }
    };
    if result.get("status").and_then(Value::as_str) == Some("error") {
        let text = match &value {
            Value::String(text) => text.clone(),
            other => crate::js_json::to_string(other),
        };
        let (error, recoverable) = match ERROR_LABELS.iter().find(|(label, _)| text.starts_with(label)) {
            Some((label, recoverable)) => (text[label.len()..].to_owned(), *recoverable),
            None => (text, true),
        };
        let mut event = head("error");
        event.insert("error".into(), error.into());
        event.insert("recoverable".into(), recoverable.into());
        event.insert("toolCallId".into(), id.into());
        return Ok(event);
    }
    let mut event = head("tool_result");
    event.insert("toolCallId".into(), id.into());
    event.insert("result".into(), value);
    Ok(event)
}

fn finish(mut event: Map<String, Value>, stamp: &EventStamp, path: &str) -> Result<AgentEvent, EventError> {
    event.insert("iteration".into(), Value::Number(stamp.iteration.clone()));
    if let Some(timestamp) = &stamp.timestamp {
        event.insert("timestamp".into(), Value::Number(timestamp.clone()));
    }
    AgentEvent::from_map(event, path)
}
