//! Events from Pydantic AI messages (`ModelMessagesTypeAdapter`'s JSON form): the inverse of
//! the `pydantic-ai` projection.
//!
//! | part | event |
//! |---|---|
//! | `system-prompt` | `message` system |
//! | `user-prompt` | `message` user; of a list of contents, the text ones joined |
//! | `text` | `message` assistant |
//! | `tool-call` | `tool_call`; `args` given as JSON text parsed (an object, else kept under `input`) |
//! | `tool-return` | `tool_result` with the `content`; with `outcome` `"failed"` or `"retried"`, a recoverable `error` naming the call |
//! | `retry-prompt` | a recoverable `error`, naming the call when it has a `tool_name` |
//! | `retry-feedback` | a recoverable `error` |
//! | `user-prompt` / `tool-return` whose list `content` holds media | `message` user / `tool_result` of content parts ([`super::pydantic_ai_media`]; the bytes stored as blobs when appended) |
//! | `thinking` of a known `provider_name` (`anthropic`, `bedrock`, `openai`) | `reasoning` event with the `content` as `text` and the `signature` (OpenAI's as `encryptedContent`, its `id` as `itemId`; Anthropic's redacted thinking's as `redactedData`) |
//! | `thinking` of `google-gla` / `google-vertex` | `reasoning` event of Google with the text (none when empty); its `signature` is the `thoughtSignature` of the next text or call, as Pydantic AI sends it to Gemini |
//! | any other (`thinking` of no known provider, files, built-in tools, …), and blank text | no event of its own |
//!
//! Every event carries, under [`META_KEY`], what the event has no field for: `part`, the part's
//! other fields (those the projection gives back from the event are left out); `lead`, before
//! its part, each message's fields but `parts` (`{"message": …}`) where a message starts and
//! the parts with no event (`{"part": …}`); on the last event, `trail`, what follows it. Its
//! `messageId` (`[run_id:]message.part`) finds them again when the thread renders. So rendering
//! the events as `pydantic-ai` gives the messages back, as long as they are a history Pydantic
//! AI writes (each call answered in the next request); messages with no part that makes an
//! event are not kept.

use super::from_messages::EventStamp;
use super::input_fields::{fault, object, string};
use super::pydantic_ai_media::{has_media, parts_and_shapes};
use crate::event::{json_type, AgentEvent, EventError, REASONING_EVENT_TYPE, THOUGHT_SIGNATURE_KEY};
use crate::js_json;
use crate::messages::{is_blank, IdRule};
use crate::providers::pydantic_ai::META_KEY;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The events of Pydantic AI messages. Errors name the message, part and field:
/// `messages[1].parts[0].tool_call_id: missing`.
pub fn pydantic_ai_to_events(messages: &[Value], stamp: &EventStamp) -> Result<Vec<AgentEvent>, EventError> {
    let mut reader = Reader::default();
    for (m, message) in messages.iter().enumerate() {
        reader.message(message, m)?;
    }
    reader.finish(stamp)
}

#[derive(Default)]
struct Reader {
    events: Vec<Map<String, Value>>,
    /// Kept items waiting for the next event.
    pending: Vec<Value>,
    /// Calls of this input not answered yet in it, by id: their answers will be tool messages.
    open_calls: HashMap<String, String>,
    /// Gemini's signature from a thinking part, for the next text or call it signs.
    thought_signature: Option<String>,
}

/// What a part becomes: the event's own fields, and the part's fields left to keep.
struct Mapped {
    event: Map<String, Value>,
    rest: Map<String, Value>,
}

impl Reader {
    fn message(&mut self, message: &Value, m: usize) -> Result<(), EventError> {
        let path = format!("messages[{m}]");
        let fields = object(message, &path)?;
        match string(fields, "kind", &path)? {
            "request" | "response" => {}
            other => {
                return Err(fault(
                    &format!("{path}.kind"),
                    format!("expected \"request\" or \"response\", found {other:?}"),
                ))
            }
        }
        let parts = match fields.get("parts") {
            Some(Value::Array(parts)) => parts,
            None => return Err(fault(&format!("{path}.parts"), "missing")),
            Some(other) => {
                return Err(fault(&format!("{path}.parts"), format!("expected an array, found {}", json_type(other))))
            }
        };
        let mut head = fields.clone();
        head.shift_remove("parts");
        let prefix = match fields.get("run_id") {
            Some(Value::String(run)) => format!("{run}:{m}."),
            _ => format!("{m}."),
        };
        self.pending.push(item("message", head));
        for (p, part) in parts.iter().enumerate() {
            let part_path = format!("{path}.parts[{p}]");
            let part = object(part, &part_path)?;
            match self.part(part, &part_path)? {
                Some(Mapped { mut event, rest }) => {
                    let signs = matches!(event.get("type").and_then(Value::as_str), Some("message" | "tool_call"));
                    if let Some(signature) = self.thought_signature.take_if(|_| signs) {
                        event.insert(THOUGHT_SIGNATURE_KEY.into(), Value::String(signature));
                    }
                    event.insert("messageId".into(), Value::String(format!("{prefix}{p}")));
                    let mut meta = Map::new();
                    if !self.pending.is_empty() {
                        meta.insert("lead".into(), Value::Array(std::mem::take(&mut self.pending)));
                    }
                    meta.insert("part".into(), Value::Object(rest));
                    event.insert(META_KEY.into(), Value::Object(meta));
                    self.events.push(event);
                }
                None => self.pending.push(item("part", part.clone())),
            }
        }
        Ok(())
    }

    fn part(&mut self, part: &Map<String, Value>, path: &str) -> Result<Option<Mapped>, EventError> {
        let mut rest = part.clone();
        let mapped = |event_type: &str, fields: Vec<(&str, Value)>, rest: Map<String, Value>| {
            let mut event = Map::new();
            event.insert("type".into(), event_type.into());
            event.extend(fields.into_iter().map(|(key, value)| (key.to_owned(), value)));
            Some(Mapped { event, rest })
        };
        Ok(match string(part, "part_kind", path)? {
            "system-prompt" => match part.get("content") {
                Some(Value::String(text)) => {
                    rest.shift_remove("content");
                    mapped("message", vec![("role", "system".into()), ("content", text.as_str().into())], rest)
                }
                _ => None,
            },
            "user-prompt" if part.get("content").and_then(Value::as_array).is_some_and(|c| has_media(c)) => {
                let contents = part.get("content").and_then(Value::as_array).expect("checked above");
                let (parts, shapes) = parts_and_shapes(contents, &format!("{path}.content"))?;
                rest.insert("content".into(), Value::Array(shapes));
                mapped("message", vec![("role", "user".into()), ("content", Value::Array(parts))], rest)
            }
            "thinking" => {
                // Pydantic AI keeps Gemini's signature on a thinking part before the part it
                // signs: the signature goes to that part's event, as Gemini wants it back.
                if is_google(part) {
                    self.thought_signature =
                        part.get("signature").and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned);
                }
                match thinking_event(part) {
                    Some((fields, taken)) => {
                        for key in taken {
                            rest.shift_remove(key);
                        }
                        mapped(REASONING_EVENT_TYPE, fields, rest)
                    }
                    None => None,
                }
            }
            kind @ ("user-prompt" | "text") => {
                let text = match part.get("content") {
                    Some(Value::String(text)) => {
                        rest.shift_remove("content");
                        text.clone()
                    }
                    Some(Value::Array(contents)) if kind == "user-prompt" => {
                        contents.iter().filter_map(content_text).collect()
                    }
                    _ => String::new(),
                };
                // A blank message says nothing; standard mode leaves it out, so its part is kept whole.
                if is_blank(&text) {
                    return Ok(None);
                }
                let role = if kind == "text" { "assistant" } else { "user" };
                mapped("message", vec![("role", role.into()), ("content", text.into())], rest)
            }
            "tool-call" => {
                let name = string(part, "tool_name", path)?;
                let id = string(part, "tool_call_id", path)?;
                let args = match part.get("args") {
                    Some(Value::Object(args)) => {
                        rest.shift_remove("args");
                        args.clone()
                    }
                    Some(Value::String(text)) => match serde_json::from_str(text) {
                        Ok(Value::Object(args)) => args,
                        Ok(other) => Map::from_iter([("input".to_owned(), other)]),
                        Err(_) => Map::from_iter([("input".to_owned(), Value::String(text.clone()))]),
                    },
                    None | Some(Value::Null) => Map::new(),
                    Some(other) => Map::from_iter([("input".to_owned(), other.clone())]),
                };
                rest.shift_remove("tool_name");
                if IdRule::OPENAI.allows(id) {
                    rest.shift_remove("tool_call_id");
                }
                self.open_calls.insert(id.to_owned(), name.to_owned());
                let fields = vec![("toolName", name.into()), ("toolCallId", id.into()), ("args", Value::Object(args))];
                mapped("tool_call", fields, rest)
            }
            "tool-return" => {
                let content = part.get("content").ok_or_else(|| fault(&format!("{path}.content"), "missing"))?;
                let id = string(part, "tool_call_id", path)?;
                let error = matches!(part.get("outcome").and_then(Value::as_str), Some("failed" | "retried"));
                if content.is_string() {
                    rest.shift_remove("content");
                }
                self.answer(part, id, path, &mut rest)?;
                // Media in the return: a list holding some, or one item (a tool that returned a file).
                let single = content.is_object() && has_media(std::slice::from_ref(content));
                let media = content.as_array().filter(|c| has_media(c)).map(Vec::as_slice);
                if let (Some(contents), false) = (media.or(single.then(|| std::slice::from_ref(content))), error) {
                    let (parts, mut shapes) = parts_and_shapes(contents, &format!("{path}.content"))?;
                    let kept = if single { shapes.remove(0) } else { Value::Array(shapes) };
                    rest.insert("content".into(), kept);
                    return Ok(mapped(
                        "tool_result",
                        vec![("toolCallId", id.into()), ("content", Value::Array(parts))],
                        rest,
                    ));
                }
                if error {
                    let fields =
                        vec![("error", text(content).into()), ("recoverable", true.into()), ("toolCallId", id.into())];
                    mapped("error", fields, rest)
                } else {
                    mapped("tool_result", vec![("toolCallId", id.into()), ("result", content.clone())], rest)
                }
            }
            "retry-prompt" | "retry-feedback" => {
                let content = part.get("content").ok_or_else(|| fault(&format!("{path}.content"), "missing"))?;
                if content.is_string() {
                    rest.shift_remove("content");
                }
                let mut fields = vec![("error", text(content).into()), ("recoverable", true.into())];
                if let (Some(Value::String(_)), Some(Value::String(id))) =
                    (part.get("tool_name"), part.get("tool_call_id"))
                {
                    self.answer(part, id, path, &mut rest)?;
                    fields.push(("toolCallId", id.as_str().into()));
                }
                mapped("error", fields, rest)
            }
            _ => None,
        })
    }

    /// An answer to call `id`: when it answers a call of this input still open, it renders as that
    /// call's tool message, which gives back its tool name and id; otherwise both stay kept.
    fn answer(
        &mut self,
        part: &Map<String, Value>,
        id: &str,
        path: &str,
        rest: &mut Map<String, Value>,
    ) -> Result<(), EventError> {
        let name = string(part, "tool_name", path)?;
        if self.open_calls.get(id).is_some_and(|called| called == name) {
            self.open_calls.remove(id);
            rest.shift_remove("tool_name");
            if IdRule::OPENAI.allows(id) {
                rest.shift_remove("tool_call_id");
            }
        }
        Ok(())
    }

    fn finish(mut self, stamp: &EventStamp) -> Result<Vec<AgentEvent>, EventError> {
        if !self.pending.is_empty() {
            if let Some(Value::Object(meta)) = self.events.last_mut().and_then(|event| event.get_mut(META_KEY)) {
                meta.insert("trail".into(), Value::Array(std::mem::take(&mut self.pending)));
            }
        }
        Ok(self
            .events
            .into_iter()
            .map(|mut fields| {
                // The stamp goes before the kept fields, where the other inverses put it.
                let meta = fields.shift_remove(META_KEY);
                let message_id = fields.shift_remove("messageId");
                fields.insert("iteration".into(), Value::Number(stamp.iteration.clone()));
                if let Some(timestamp) = &stamp.timestamp {
                    fields.insert("timestamp".into(), Value::Number(timestamp.clone()));
                }
                fields.extend(message_id.map(|id| ("messageId".to_owned(), id)));
                fields.extend(meta.map(|meta| (META_KEY.to_owned(), meta)));
                AgentEvent::from_map(fields, "event").expect("converted events have their fields")
            })
            .collect())
    }
}

/// An event's fields, in order.
type EventFields = Vec<(&'static str, Value)>;

/// A thinking part a known provider signed or produced, as a reasoning event's fields, and
/// the part's fields the event gives back. `None` for a provider replay does not know.
fn thinking_event(part: &Map<String, Value>) -> Option<(EventFields, Vec<&'static str>)> {
    // Gemini's thinking is its text alone (none when empty): the signature is the next part's.
    if is_google(part) {
        let content = part.get("content").and_then(Value::as_str).filter(|c| !c.is_empty())?;
        return Some((vec![("provider", "google".into()), ("text", content.into())], vec!["content"]));
    }
    let provider = match part.get("provider_name").and_then(Value::as_str)? {
        "anthropic" => "anthropic",
        "bedrock" => "bedrock",
        "openai" | "openai-responses" => "openai",
        _ => return None,
    };
    let text = |key: &str| part.get(key).and_then(Value::as_str).filter(|s| !s.is_empty());
    let mut fields = vec![("provider", Value::from(provider))];
    let mut taken = Vec::new();
    if let Some(Value::String(content)) = part.get("content") {
        fields.push(("text", Value::from(content.as_str())));
        taken.push("content");
    }
    // OpenAI's signature is its encrypted reasoning, and the part's id the item's.
    // Anthropic's redacted thinking is a part of that id whose signature is the data.
    let redacted = matches!(text("id"), Some("redacted_thinking" | "redacted_content"));
    let (signature_key, id_key) = match provider {
        "openai" => ("encryptedContent", Some("itemId")),
        "anthropic" | "bedrock" if redacted => ("redactedData", None),
        _ => ("signature", None),
    };
    if let Some(signature) = text("signature") {
        fields.push((signature_key, Value::from(signature)));
        taken.push("signature");
    }
    if let (Some(id_key), Some(id)) = (id_key, text("id")) {
        fields.push((id_key, Value::from(id)));
    }
    Some((fields, taken))
}

fn is_google(part: &Map<String, Value>) -> bool {
    matches!(part.get("provider_name").and_then(Value::as_str), Some("google-gla" | "google-vertex" | "google"))
}

fn item(key: &str, value: Map<String, Value>) -> Value {
    Value::Object(Map::from_iter([(key.to_owned(), Value::Object(value))]))
}

/// The text of one user content: a string, or a text content's `content`.
fn content_text(content: &Value) -> Option<&str> {
    match content {
        Value::String(text) => Some(text),
        Value::Object(fields) if fields.get("kind").and_then(Value::as_str) == Some("text-content") => {
            fields.get("content").and_then(Value::as_str)
        }
        _ => None,
    }
}

/// Content as the text a model reads: a string as is, anything else as JSON text.
fn text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        other => js_json::to_string(other),
    }
}
