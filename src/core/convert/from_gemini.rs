//! Events from a Gemini `generateContent` body's `contents`: the inverse of the `gemini`
//! projection.
//!
//! | content / part | events |
//! |---|---|
//! | user `text` | `message` user |
//! | user `functionResponse` | `tool_result` for its call (`id`, else the first unanswered call of that name): `result` the `output` when `response` is `{output: string}`, else the whole `response` object; an `{error: text}` whose text carries an error label becomes the `error` it was rendered from |
//! | model `text` with `thought: true` | `reasoning` `{provider: "google", text, signature?}` |
//! | model `text` | `message` assistant, `thoughtSignature` kept |
//! | model `functionCall` | `tool_call` (`id`, else `<name>_<content>_<part>`), `thoughtSignature` kept |
//!
//! Signatures are kept verbatim, placeholders included. The opening user content the renderer
//! makes is not read; blank text is left out. Other parts (inline data, files, code execution)
//! are refused, naming the part.

use super::from_messages::EventStamp;
use super::input_fields::{fault, object, string};
use crate::event::{json_type, AgentEvent, EventError, REASONING_EVENT_TYPE, THOUGHT_SIGNATURE_KEY};
use crate::messages::{is_blank, OPENING_TEXT};
use serde_json::{Map, Value};

/// The labels an error answer is rendered with, and whether each means recoverable.
pub(super) const ERROR_LABELS: [(&str, bool); 2] =
    [(crate::messages::labels::RECOVERABLE_LABEL, true), (crate::messages::labels::NON_RECOVERABLE_LABEL, false)];

/// The events of Gemini `contents`. Errors name the place: `contents[2].parts[0].functionCall.name: missing`.
pub fn gemini_to_events(contents: &[Value], stamp: &EventStamp) -> Result<Vec<AgentEvent>, EventError> {
    let mut out = Vec::new();
    // Calls not yet answered: (id, name), for responses that give no id.
    let mut open: Vec<(String, String)> = Vec::new();
    for (c, content) in contents.iter().enumerate() {
        let path = format!("contents[{c}]");
        let fields = object(content, &path)?;
        let role = string(fields, "role", &path)?;
        let parts = match fields.get("parts") {
            Some(Value::Array(parts)) => parts,
            Some(other) => {
                return Err(fault(&format!("{path}.parts"), format!("expected an array, found {}", json_type(other))))
            }
            None => return Err(fault(&format!("{path}.parts"), "missing")),
        };
        if c == 0
            && role == "user"
            && parts.len() == 1
            && parts[0].get("text").and_then(Value::as_str) == Some(OPENING_TEXT)
        {
            continue;
        }
        for (p, part) in parts.iter().enumerate() {
            let path = format!("{path}.parts[{p}]");
            let part = object(part, &path)?;
            let signature = part.get("thoughtSignature").and_then(Value::as_str);
            let mut event = match (role, part) {
                (_, part) if part.contains_key("text") => {
                    let text = string(part, "text", &path)?;
                    let thought = part.get("thought") == Some(&Value::Bool(true));
                    match role {
                        "model" if thought => {
                            let mut event = head(REASONING_EVENT_TYPE);
                            event.insert("provider".into(), "google".into());
                            event.insert("text".into(), text.into());
                            if let Some(signature) = signature {
                                event.insert("signature".into(), signature.into());
                            }
                            out.push(finish(event, stamp, &path)?);
                            continue;
                        }
                        _ if is_blank(text) => continue,
                        "model" => message("assistant", text),
                        "user" => message("user", text),
                        other => {
                            return Err(fault(
                                &format!("{path}.role"),
                                format!("expected \"user\" or \"model\", found {other:?}"),
                            ))
                        }
                    }
                }
                ("model", part) if part.contains_key("functionCall") => {
                    let call_path = format!("{path}.functionCall");
                    let call = object(&part["functionCall"], &call_path)?;
                    let name = string(call, "name", &call_path)?;
                    let id = match call.get("id") {
                        Some(_) => string(call, "id", &call_path)?.to_owned(),
                        None => format!("{name}_{c}_{p}"),
                    };
                    let args = match call.get("args") {
                        Some(Value::Object(args)) => args.clone(),
                        None | Some(Value::Null) => Map::new(),
                        Some(other) => Map::from_iter([("input".to_owned(), other.clone())]),
                    };
                    open.push((id.clone(), name.to_owned()));
                    let mut event = head("tool_call");
                    event.insert("toolName".into(), name.into());
                    event.insert("toolCallId".into(), id.into());
                    event.insert("args".into(), Value::Object(args));
                    event
                }
                ("user", part) if part.contains_key("functionResponse") => {
                    let response_path = format!("{path}.functionResponse");
                    let response = object(&part["functionResponse"], &response_path)?;
                    let name = string(response, "name", &response_path)?;
                    let at = match response.get("id") {
                        Some(_) => {
                            let id = string(response, "id", &response_path)?;
                            open.iter().position(|(open_id, _)| open_id == id)
                        }
                        None => open.iter().position(|(_, open_name)| open_name == name),
                    };
                    let id = match (at, response.get("id").and_then(Value::as_str)) {
                        (Some(at), _) => open.remove(at).0,
                        (None, Some(id)) => id.to_owned(),
                        (None, None) => format!("{name}_{c}_{p}"),
                    };
                    let value =
                        object(response.get("response").unwrap_or(&Value::Null), &format!("{response_path}.response"))?;
                    answer(&id, value)
                }
                _ => {
                    let kinds = if role == "model" { "text or functionCall" } else { "text or functionResponse" };
                    return Err(fault(&path, format!("unsupported part in a {role} content: expected {kinds}")));
                }
            };
            if let Some(signature) = signature {
                event.insert(THOUGHT_SIGNATURE_KEY.into(), signature.into());
            }
            out.push(finish(event, stamp, &path)?);
        }
    }
    Ok(out)
}

fn head(event_type: &str) -> Map<String, Value> {
    Map::from_iter([("type".to_owned(), Value::from(event_type))])
}

fn message(role: &str, text: &str) -> Map<String, Value> {
    let mut event = head("message");
    event.insert("role".into(), role.into());
    event.insert("content".into(), text.into());
    event
}

/// The event a function response was rendered from: `{output: string}` is that string, an
/// `{error}` with a label is the error, any other object is the result itself.
fn answer(id: &str, response: &Map<String, Value>) -> Map<String, Value> {
    let single = |key: &str| (response.len() == 1).then(|| response.get(key)).flatten();
    if let Some(Value::String(text)) = single("error") {
        if let Some((label, recoverable)) = ERROR_LABELS.iter().find(|(label, _)| text.starts_with(label)) {
            let mut event = head("error");
            event.insert("error".into(), text[label.len()..].into());
            event.insert("recoverable".into(), (*recoverable).into());
            event.insert("toolCallId".into(), id.into());
            return event;
        }
    }
    let result = match single("output") {
        Some(Value::String(text)) => Value::String(text.clone()),
        _ => Value::Object(response.clone()),
    };
    let mut event = head("tool_result");
    event.insert("toolCallId".into(), id.into());
    event.insert("result".into(), result);
    event
}

fn finish(mut event: Map<String, Value>, stamp: &EventStamp, path: &str) -> Result<AgentEvent, EventError> {
    event.insert("iteration".into(), Value::Number(stamp.iteration.clone()));
    if let Some(timestamp) = &stamp.timestamp {
        event.insert("timestamp".into(), Value::Number(timestamp.clone()));
    }
    AgentEvent::from_map(event, path)
}
