//! Events from Vercel AI SDK `ModelMessage`s: the inverse of the `ai-sdk` projection.
//!
//! | message / part | events |
//! |---|---|
//! | `system` (string content) | `message` system |
//! | `user`, string content or `text` parts | one `message` user per text |
//! | `assistant` `text` (or string content) | `message` assistant |
//! | `assistant` `reasoning` signed by a provider (`providerOptions` `anthropic` / `bedrock` / `amazonBedrock` `signature` or `redactedData`, `google` `thoughtSignature`, `openai` `reasoningEncryptedContent`; [`super::ai_sdk_reasoning`]) | `reasoning` event of that provider, with the text |
//! | `assistant` `reasoning`, unsigned | `turn_block` with a reasoning block whose payload is `{text}` |
//! | `google.thoughtSignature` on a `text` or `tool-call` part | the event's `thoughtSignature` |
//! | `assistant` `tool-call` | `tool_call`; an `input` that is not an object becomes `args: {input}` |
//! | `tool` `tool-result`, output `text` / `json` / `content` | `tool_result` with the value |
//! | `tool` `tool-result`, output `error-text` / `error-json` / `execution-denied` | `error` naming the call, `recoverable: true` (JSON as its text; the denial's reason, else `Tool execution denied.`) |
//!
//! Every event carries `aiSdk` (the standard-mode builder keeps it on the message made of it)
//! holding what the events have no field for, so the `ai-sdk` render gives the messages back:
//! the first event of each message has `message` (its `providerOptions`, `content: "parts"` for
//! a user message given as parts, `"text"` for an assistant message given as a string,
//! `role: "system"`), and a part's own fields follow (`providerOptions`, `providerExecuted`,
//! `input`, `output`, `string`, `reason`, `outputProviderOptions`, `toolName`).
//!
//! Not kept: blank text parts (standard mode leaves blank messages out), and the opening user
//! message the renderer makes itself. A not-completed answer the renderer made for a call that
//! had none is read like any `error-text`: the model saw the call answered so. A user message
//! holding `image` or `file` parts is one `message` of content parts (the bytes stored as blobs
//! when appended), and a `content` output holding `media` a `tool_result` of content parts
//! ([`super::media_blocks`]). Parts the event model cannot hold (custom parts, approvals,
//! results inside an assistant message) are refused, naming the part: nothing is dropped unseen.

use super::ai_sdk_reasoning::{signed_reasoning, thought_signature};
use super::ai_sdk_shapes::hints as shape_hints;
use super::from_messages::EventStamp;
use super::input_fields::{fault, object, string};
use super::media_blocks::{media_parts, Form};
use crate::event::{json_type, AgentEvent, EventError, REASONING_EVENT_TYPE, THOUGHT_SIGNATURE_KEY};
use crate::messages::{is_blank, CARRIED_KEY, OPENING_TEXT};
use crate::turns::events::TURN_BLOCK_EVENT_TYPE;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The text an `execution-denied` output without a reason is recorded with.
const DENIED_TEXT: &str = "Tool execution denied.";

/// The events of AI SDK model messages. Errors name the message and part: `messages[2].content[0].type: …`.
pub fn ai_sdk_to_events(messages: &[Value], stamp: &EventStamp) -> Result<Vec<AgentEvent>, EventError> {
    let mut out = Events { stamp, events: Vec::new(), names: HashMap::new(), meta: None };
    let opening = opening_index(messages);
    for (index, message) in messages.iter().enumerate() {
        if Some(index) == opening {
            continue;
        }
        let path = format!("messages[{index}]");
        let fields = object(message, &path)?;
        let role = string(fields, "role", &path)?;
        let mut meta = Map::new();
        if let Some(options) = fields.get("providerOptions") {
            meta.insert("providerOptions".into(), options.clone());
        }
        let content = fields.get("content").ok_or_else(|| fault(&format!("{path}.content"), "missing"))?;
        match (role, content) {
            ("system", Value::String(text)) => {
                meta.insert("role".into(), "system".into());
                out.meta = Some(meta);
                out.text("system", text, None);
            }
            ("system", other) => {
                return Err(fault(&format!("{path}.content"), format!("expected a string, found {}", json_type(other))))
            }
            ("user" | "assistant", Value::String(text)) => {
                if role == "assistant" {
                    meta.insert("content".into(), "text".into());
                }
                out.meta = Some(meta);
                out.text(role, text, None);
            }
            // A user message that holds media is one message of content parts.
            ("user", Value::Array(parts)) if has_media_part(parts) => {
                let content_path = format!("{path}.content");
                let hints = shape_hints(parts);
                let parts = media_parts(parts, Form::AiSdk, &content_path)?.unwrap_or_default();
                meta.insert("content".into(), "parts".into());
                out.meta = Some(meta);
                let fields = Map::from_iter([
                    ("type".to_owned(), Value::from("message")),
                    ("role".to_owned(), Value::from("user")),
                    ("content".to_owned(), Value::Array(parts)),
                ]);
                out.push(fields, hints.map(|h| ("parts".to_owned(), h)).into_iter().collect());
            }
            ("user" | "assistant" | "tool", Value::Array(parts)) => {
                if role == "user" {
                    meta.insert("content".into(), "parts".into());
                }
                out.meta = Some(meta);
                for (j, part) in parts.iter().enumerate() {
                    out.part(role, part, &format!("{path}.content[{j}]"))?;
                }
            }
            ("user" | "assistant" | "tool", other) => {
                let expected = if role == "tool" { "a list of parts" } else { "a string or a list of parts" };
                return Err(fault(
                    &format!("{path}.content"),
                    format!("expected {expected}, found {}", json_type(other)),
                ));
            }
            (other, _) => {
                return Err(fault(
                    &format!("{path}.role"),
                    format!("expected system, user, assistant or tool, found {other:?}"),
                ))
            }
        }
    }
    Ok(out.events)
}

/// Whether a user message's parts hold an image or a file.
fn has_media_part(parts: &[Value]) -> bool {
    parts.iter().any(|part| matches!(part.get("type").and_then(Value::as_str), Some("image" | "file")))
}

/// Whether a `content` output's item holds media: any form the SDK has had for it.
fn is_media_item(item: &Value) -> bool {
    matches!(
        item.get("type").and_then(Value::as_str),
        Some("media" | "file" | "file-data" | "file-url" | "image-data" | "image-url")
    )
}

/// The opening user message the renderer adds when a conversation opens with the assistant.
fn opening_index(messages: &[Value]) -> Option<usize> {
    let role = |m: &Value| m.get("role").and_then(Value::as_str).map(str::to_owned);
    let mut rest = messages.iter().enumerate().skip_while(|(_, m)| role(m).as_deref() == Some("system"));
    let (index, first) = rest.next()?;
    let is_opening = role(first).as_deref() == Some("user")
        && first.get("content").and_then(Value::as_str) == Some(OPENING_TEXT)
        && first.get("providerOptions").is_none();
    let next_is_not_user =
        rest.next().is_some_and(|(_, next)| matches!(role(next).as_deref(), Some("assistant" | "tool")));
    (is_opening && next_is_not_user).then_some(index)
}

struct Events<'s> {
    stamp: &'s EventStamp,
    events: Vec<AgentEvent>,
    /// Tool names by call id, so a result names its tool only when it differs from its call's.
    names: HashMap<String, String>,
    /// The message's own fields, until its first event carries them.
    meta: Option<Map<String, Value>>,
}

impl Events<'_> {
    /// Pushes an event with `carried` as its `aiSdk`, the message's fields first if still due.
    fn push(&mut self, mut fields: Map<String, Value>, mut carried: Map<String, Value>) {
        if let Some(meta) = self.meta.take() {
            let mut first = Map::from_iter([("message".to_owned(), Value::Object(meta))]);
            first.append(&mut carried);
            carried = first;
        }
        fields.insert(CARRIED_KEY.into(), Value::Object(carried));
        self.push_plain(fields);
    }

    /// A text: a `message` event, unless blank (standard mode leaves those out, so its message
    /// fields wait for the next part).
    fn text(&mut self, role: &str, text: &str, provider_options: Option<&Value>) {
        if is_blank(text) {
            return;
        }
        let mut fields = Map::from_iter([
            ("type".to_owned(), Value::from("message")),
            ("role".to_owned(), Value::from(role)),
            ("content".to_owned(), Value::from(text)),
        ]);
        if let Some(signature) = thought_signature(provider_options) {
            fields.insert(THOUGHT_SIGNATURE_KEY.into(), signature.into());
        }
        self.push(fields, options(provider_options));
    }

    fn part(&mut self, role: &str, part: &Value, path: &str) -> Result<(), EventError> {
        let fields = object(part, path)?;
        let kind = string(fields, "type", path)?;
        let provider_options = fields.get("providerOptions");
        match (role, kind) {
            ("user" | "assistant", "text") => self.text(role, string(fields, "text", path)?, provider_options),
            ("assistant", "reasoning") => {
                let text = string(fields, "text", path)?;
                if let Some(signed) = signed_reasoning(provider_options) {
                    self.signed_reasoning(text, signed, provider_options);
                    return Ok(());
                }
                let mut block = Map::new();
                block.insert("kind".into(), "reasoning".into());
                block.insert("payload".into(), Value::Object(Map::from_iter([("text".to_owned(), Value::from(text))])));
                let mut carried = options(provider_options);
                if let Some(meta) = self.meta.take() {
                    carried.insert("message".into(), Value::Object(meta));
                }
                // The block keeps `aiSdk` itself: standard mode keeps a reasoning block whole.
                block.insert(CARRIED_KEY.into(), Value::Object(carried));
                let fields = Map::from_iter([
                    ("type".to_owned(), Value::from(TURN_BLOCK_EVENT_TYPE)),
                    ("block".to_owned(), Value::Object(block)),
                ]);
                self.push_plain(fields);
            }
            ("assistant", "tool-call") => self.tool_call(fields, path)?,
            ("tool", "tool-result") => self.tool_result(fields, path)?,
            (_, other) => {
                let expected = match role {
                    "user" => "text",
                    "assistant" => "text, reasoning or tool-call",
                    _ => "tool-result",
                };
                return Err(fault(
                    &format!("{path}.type"),
                    format!("unsupported part type {other:?} in a {role} message: expected {expected}"),
                ));
            }
        }
        Ok(())
    }

    /// A reasoning part a provider signed: a `reasoning` event the provider renders replay.
    fn signed_reasoning(&mut self, text: &str, signed: Map<String, Value>, provider_options: Option<&Value>) {
        let mut fields = Map::from_iter([("type".to_owned(), Value::from(REASONING_EVENT_TYPE))]);
        let mut signed = signed;
        if let Some(provider) = signed.shift_remove("provider") {
            fields.insert("provider".into(), provider);
        }
        fields.insert("text".into(), Value::from(text));
        fields.append(&mut signed);
        self.push(fields, options(provider_options));
    }

    /// An event whose `aiSdk` is inside it already.
    fn push_plain(&mut self, mut fields: Map<String, Value>) {
        fields.insert("iteration".into(), Value::Number(self.stamp.iteration.clone()));
        if let Some(timestamp) = &self.stamp.timestamp {
            fields.insert("timestamp".into(), Value::Number(timestamp.clone()));
        }
        self.events.push(AgentEvent::from_map(fields, "event").expect("converted events have their fields"));
    }

    fn tool_call(&mut self, fields: &Map<String, Value>, path: &str) -> Result<(), EventError> {
        let id = string(fields, "toolCallId", path)?;
        let name = string(fields, "toolName", path)?;
        let mut carried = options(fields.get("providerOptions"));
        if let Some(executed) = fields.get("providerExecuted") {
            carried.insert("providerExecuted".into(), executed.clone());
        }
        let args = match fields.get("input") {
            Some(Value::Object(args)) => args.clone(),
            None => return Err(fault(&format!("{path}.input"), "missing")),
            Some(other) => {
                carried.insert("input".into(), Value::Bool(true));
                Map::from_iter([("input".to_owned(), other.clone())])
            }
        };
        self.names.insert(id.to_owned(), name.to_owned());
        let mut event = Map::from_iter([
            ("type".to_owned(), Value::from("tool_call")),
            ("toolName".to_owned(), Value::from(name)),
            ("toolCallId".to_owned(), Value::from(id)),
            ("args".to_owned(), Value::Object(args)),
        ]);
        if let Some(signature) = thought_signature(fields.get("providerOptions")) {
            event.insert(THOUGHT_SIGNATURE_KEY.into(), signature.into());
        }
        self.push(event, carried);
        Ok(())
    }

    fn tool_result(&mut self, fields: &Map<String, Value>, path: &str) -> Result<(), EventError> {
        let id = string(fields, "toolCallId", path)?;
        let name = string(fields, "toolName", path)?;
        let output_path = format!("{path}.output");
        let output = object(fields.get("output").ok_or_else(|| fault(&output_path, "missing"))?, &output_path)?;
        let kind = string(output, "type", &output_path)?;
        let mut carried = options(fields.get("providerOptions"));
        if self.names.get(id).map(String::as_str) != Some(name) {
            carried.insert("toolName".into(), Value::from(name));
        }
        let value = || output.get("value").ok_or_else(|| fault(&format!("{output_path}.value"), "missing"));
        let text_value = || match value()? {
            Value::String(text) => Ok(text.as_str()),
            other => {
                Err(fault(&format!("{output_path}.value"), format!("expected a string, found {}", json_type(other))))
            }
        };
        let answer = match kind {
            "text" => Answer::Result(Value::from(text_value()?)),
            "content" if value()?.as_array().is_some_and(|items| items.iter().any(is_media_item)) => {
                let items = value()?.as_array().expect("checked above");
                let parts = media_parts(items, Form::AiSdk, &format!("{output_path}.value"))?.unwrap_or_default();
                carried.extend(shape_hints(items).map(|h| ("parts".to_owned(), h)));
                Answer::Parts(parts)
            }
            "json" | "content" => {
                let value = value()?;
                if kind == "json" && value.is_string() {
                    carried.insert("string".into(), Value::Bool(true));
                }
                Answer::Result(value.clone())
            }
            "error-text" => Answer::Error(text_value()?.to_owned()),
            "error-json" => Answer::Error(crate::js_json::to_string(value()?)),
            "execution-denied" => match output.get("reason") {
                Some(Value::String(reason)) => Answer::Error(reason.clone()),
                None => {
                    carried.insert("reason".into(), Value::Bool(false));
                    Answer::Error(DENIED_TEXT.to_owned())
                }
                Some(other) => {
                    return Err(fault(
                        &format!("{output_path}.reason"),
                        format!("expected a string, found {}", json_type(other)),
                    ))
                }
            },
            other => {
                return Err(fault(
                    &format!("{output_path}.type"),
                    format!("unsupported output type {other:?}: expected text, json, content, error-text, error-json or execution-denied"),
                ))
            }
        };
        if kind != "text" {
            carried.insert("output".into(), Value::from(kind));
        }
        if let Some(options) = output.get("providerOptions") {
            carried.insert("outputProviderOptions".into(), options.clone());
        }
        let mut event = Map::new();
        match answer {
            Answer::Error(text) => {
                event.insert("type".into(), "error".into());
                event.insert("error".into(), Value::from(text));
                event.insert("recoverable".into(), Value::Bool(true));
                event.insert("toolCallId".into(), Value::from(id));
            }
            Answer::Result(result) => {
                event.insert("type".into(), "tool_result".into());
                event.insert("toolCallId".into(), Value::from(id));
                event.insert("result".into(), result);
            }
            Answer::Parts(parts) => {
                event.insert("type".into(), "tool_result".into());
                event.insert("toolCallId".into(), Value::from(id));
                event.insert("content".into(), Value::Array(parts));
            }
        }
        self.push(event, carried);
        Ok(())
    }
}

/// What answered a call: a result, or an error's text.
enum Answer {
    Result(Value),
    /// Content output holding media: the result as content parts.
    Parts(Vec<Value>),
    Error(String),
}

fn options(provider_options: Option<&Value>) -> Map<String, Value> {
    provider_options.map(|o| Map::from_iter([("providerOptions".to_owned(), o.clone())])).unwrap_or_default()
}
