//! Pydantic AI: `{messages}`, the JSON form `ModelMessagesTypeAdapter` reads and writes —
//! requests (`kind: "request"`) and responses (`kind: "response"`), each a list of `parts`.
//!
//! | entry | part, in a message of kind |
//! |---|---|
//! | system message | `system-prompt`, first in the first request |
//! | human | `user-prompt` with the text, request |
//! | ai | `text` when it has text, then `tool-call` {`tool_name`, `args`, `tool_call_id`} per call, response |
//! | tool | `tool-return` {`tool_name`, `content`, `tool_call_id`}, request; with `status: "error"`, `outcome: "failed"` (`"interrupted"` for a not-completed answer) |
//! | reasoning event | `thinking` {`content`, `id`?, `signature`?, `provider_name`}, response (OpenAI's encrypted form as `signature`, its item id as `id`; Google's `provider_name` is `google-gla`) |
//! | reasoning turn block | left out (no provider signed it) |
//!
//! Media ([`super::media_parts`]): a user prompt holding media has a list `content` of strings
//! and media: `BinaryContent` (`{data, media_type, kind: "binary"}`, `data` base64) for bytes,
//! `ImageUrl`, `DocumentUrl`, `AudioUrl` (`{url, kind: "image-url"…}`) for URLs. A tool return
//! keeps its text; its media follow it as a `user-prompt` part of the same request, each after
//! `Media of tool call <id>:`, as Pydantic AI itself moves a tool's files into a user prompt.
//!
//! Consecutive parts of one kind of message form one message, so requests and responses
//! alternate, and the repaired entries answer every call in the request right after it.
//!
//! Events made by `pydanticAi/toEvents` carry what the event model has no field for under
//! [`META_KEY`] (see [`crate::convert::pydantic_ai_to_events`]): the part's other fields, and
//! before it (`lead`) or after it (`trail`) the message boundaries with their fields and the parts
//! no event carries. The projection looks that up for each entry ([`Kept`]) and puts it back, so
//! such a thread renders as the messages it was made from. A field kept there wins over the one
//! the entry gives; the entry's fields come first, in Pydantic AI's own order.

use super::media_parts::{self, Carried, Piece};
use super::pydantic_ai_media;
use super::reasoning::{Reasoning, Vendor};
use crate::event::AgentEvent;
use crate::event::REASONING_EVENT_TYPE;
use crate::media::{MediaBytes, MediaKind};
use crate::messages::labels::{NOT_COMPLETED_LABEL, RECOVERABLE_LABEL, STRAY_RESULT_LABEL, SYSTEM_LABEL};
use crate::messages::{Entry, IdRule, MessageType, StoredMessage};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::{HashMap, VecDeque};

/// The event field holding what a Pydantic AI part has beyond the event's own fields.
pub const META_KEY: &str = "pydanticAi";

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Request {
    pub messages: Vec<Value>,
}

/// The kept fields of a thread's events, looked up by the entries made of them: a call's by its
/// id as standard mode renders it, anything else's by its `messageId`. An id met twice (a
/// thread appended to twice from one run) gives its kept fields out in the events' order.
#[derive(Clone, Debug, Default)]
pub struct Kept {
    by_message: HashMap<String, VecDeque<Map<String, Value>>>,
    by_call: HashMap<String, VecDeque<Map<String, Value>>>,
}

impl Kept {
    /// The kept fields of `events`.
    pub fn of<'a>(events: impl IntoIterator<Item = &'a AgentEvent>) -> Self {
        let mut kept = Kept::default();
        for event in events {
            kept.push(event);
        }
        kept
    }

    /// Adds one event's kept fields, if it has any.
    pub fn push(&mut self, event: &AgentEvent) {
        let fields = event.fields();
        let Some(Value::Object(meta)) = fields.get(META_KEY) else { return };
        let text = |key: &str| fields.get(key).and_then(Value::as_str);
        let (map, key) = match (event.event_type(), text("toolCallId"), text("messageId")) {
            ("tool_call", Some(id), _) => (&mut self.by_call, rendered_call_id(id)),
            (_, _, Some(id)) => (&mut self.by_message, id.to_owned()),
            _ => return,
        };
        map.entry(key).or_default().push_back(meta.clone());
    }

    /// Whether an event's JSON text may hold kept fields (a cheap look before parsing it).
    pub fn may_hold(event_json: &str) -> bool {
        event_json.contains("\"pydanticAi\"")
    }

    fn for_message(&mut self, message: &StoredMessage) -> Option<Map<String, Value>> {
        let id = message.data.extra.get("id")?.as_str()?;
        self.by_message.get_mut(id)?.pop_front()
    }

    /// A reasoning event's kept fields, by its `messageId`.
    fn for_record(&mut self, record: &Map<String, Value>) -> Option<Map<String, Value>> {
        let id = record.get("messageId")?.as_str()?;
        self.by_message.get_mut(id)?.pop_front()
    }

    fn for_call(&mut self, id: &str) -> Option<Map<String, Value>> {
        self.by_call.get_mut(id)?.pop_front()
    }
}

/// The id standard mode gives a call the thread named `id`, the first time it is used.
fn rendered_call_id(id: &str) -> String {
    if IdRule::OPENAI.allows(id) {
        id.to_owned()
    } else {
        IdRule::OPENAI.rewrite(id, "")
    }
}

pub fn project(system: Option<&str>, entries: &[Entry<'_>], mut kept: Kept, media: &MediaBytes) -> Request {
    let mut out = Messages { system: system.map(system_part), ..Messages::default() };
    let mut call_names: HashMap<&str, &str> = HashMap::new();
    for entry in entries {
        let message = match entry {
            Entry::Message(message) => message,
            Entry::Reasoning(record) => {
                // Reasoning events only: an unsigned reasoning block no provider replays.
                if record.get("type").and_then(Value::as_str) == Some(REASONING_EVENT_TYPE) {
                    let meta = kept.for_record(record);
                    if let Some(reasoning) = Reasoning::of(record) {
                        if meta.is_some() || reasoning.vendor.is_some() {
                            out.add(Side::Response, meta, |rest| thinking_part(&reasoning, rest));
                        }
                    }
                }
                continue;
            }
        };
        match message.message_type {
            MessageType::Human | MessageType::System => {
                let mut meta = kept.for_message(message);
                match media_parts::native_of(message, media, |_, _| true) {
                    Some(pieces) => {
                        let content = match kept_shapes(meta.as_mut()) {
                            Some(shapes) => pydantic_ai_media::content(pieces, &shapes.items, default_item),
                            None => prompt_content(pieces),
                        };
                        out.add(Side::Request, meta, |rest| part("user-prompt", [("content", Some(content))], rest))
                    }
                    None => out.add(Side::Request, meta, |rest| human_part(message, rest)),
                }
            }
            MessageType::Ai => {
                let text = message.content_text();
                if !text.is_empty() {
                    let meta = kept.for_message(message);
                    out.add(Side::Response, meta, |rest| part("text", [("content", Some(Value::from(&*text)))], rest));
                }
                for call in message.tool_calls() {
                    let id = call.id.as_deref().unwrap_or_default();
                    call_names.insert(id, &call.name);
                    let meta = kept.for_call(id);
                    let leading = [
                        ("tool_name", Some(Value::from(call.name.as_str()))),
                        ("args", Some(Value::Object(call.args.clone()))),
                        ("tool_call_id", Some(Value::from(id))),
                    ];
                    out.add(Side::Response, meta, |rest| part("tool-call", leading, rest));
                }
            }
            MessageType::Tool => {
                let mut meta = kept.for_message(message);
                let id = message.data.tool_call_id.as_deref().unwrap_or_default();
                let name = call_names.get(id).copied().unwrap_or_default();
                // A return whose own content held media gives it back there.
                let pieces = media_parts::native_of(message, media, |_, _| true);
                let shapes = pieces.is_some().then(|| kept_shapes(meta.as_mut())).flatten();
                if let (Some(shapes), Some(pieces)) = (shapes, pieces) {
                    let content = pydantic_ai_media::content(pieces, &shapes.items, default_item);
                    // A return of one file holds the item itself, not a list.
                    let content = match content {
                        Value::Array(mut items) if shapes.single && items.len() == 1 => items.remove(0),
                        other => other,
                    };
                    let leading = [
                        ("tool_name", Some(Value::from(name))),
                        ("content", Some(content)),
                        ("tool_call_id", Some(Value::from(id))),
                    ];
                    out.add(Side::Request, meta, |rest| part("tool-return", leading, rest));
                    continue;
                }
                out.add(Side::Request, meta, |rest| tool_part(message, name, rest));
                if let Some(content) = tool_media(message, id, media) {
                    out.add(Side::Request, None, |_| part("user-prompt", [("content", Some(content))], None));
                }
            }
            MessageType::Other(_) => {}
        }
    }
    out.finish()
}

/// The request body as JSON text (two-space indented when `pretty`).
pub fn to_json(system: Option<&str>, entries: &[Entry<'_>], kept: Kept, media: &MediaBytes, pretty: bool) -> String {
    let request = project(system, entries, kept, media);
    let text = if pretty { serde_json::to_string_pretty(&request) } else { serde_json::to_string(&request) };
    text.expect("projections serialize")
}

/// A carried media part as Pydantic AI's JSON form of `BinaryContent` or a `…Url`.
fn media_item(part: &crate::media::parts::Media<'_>, carried: &Carried<'_>) -> Value {
    match carried {
        Carried::Bytes(_) => serde_json::json!({
            "data": carried.base64_or_url(),
            "media_type": media_parts::media_type(part),
            "kind": "binary",
        }),
        Carried::Url(url) => {
            let kind = match part.kind {
                MediaKind::Image => "image-url",
                MediaKind::Audio => "audio-url",
                MediaKind::File => "document-url",
            };
            serde_json::json!({"url": url, "kind": kind})
        }
    }
}

/// The kept shapes of a list content's items, taken out of the kept part (the render gives
/// the content itself).
fn kept_shapes(meta: Option<&mut Map<String, Value>>) -> Option<Shapes> {
    let rest = meta?.get_mut("part")?.as_object_mut()?;
    match rest.get("content") {
        Some(Value::Array(_) | Value::Object(_)) => match rest.shift_remove("content") {
            Some(Value::Array(items)) => Some(Shapes { items, single: false }),
            Some(item) => Some(Shapes { items: vec![item], single: true }),
            None => None,
        },
        _ => None,
    }
}

/// The kept shapes of a content's items; `single` when the content was one item, not a list.
struct Shapes {
    items: Vec<Value>,
    single: bool,
}

/// A list content's item without a kept shape: text as a string, media as a [`media_item`].
fn default_item(piece: Piece<'_>) -> Option<Value> {
    match piece {
        Piece::Text(text) => Some(Value::from(text.into_owned())),
        Piece::Media(part, carried) => Some(media_item(&part, &carried)),
    }
}

/// A thinking part: the reasoning's text and signature (OpenAI's: its encrypted form and item
/// id), the provider's name unless kept.
fn thinking_part(reasoning: &Reasoning<'_>, rest: Option<&Map<String, Value>>) -> Value {
    let (signature, id) = match reasoning.vendor {
        Some(Vendor::OpenAi) => (reasoning.encrypted_content, reasoning.item_id),
        // Redacted thinking is Pydantic AI's part of that id, the data as its signature.
        _ if reasoning.signature.is_none() && reasoning.redacted_data.is_some() => {
            (reasoning.redacted_data, Some("redacted_thinking"))
        }
        _ => (reasoning.signature, None),
    };
    let provider = match reasoning.vendor {
        Some(Vendor::Anthropic) => Some("anthropic"),
        Some(Vendor::Bedrock) => Some("bedrock"),
        Some(Vendor::Google) => Some("google-gla"),
        Some(Vendor::OpenAi) => Some("openai"),
        None => None,
    };
    let leading = [
        ("content", Some(Value::from(reasoning.text.unwrap_or_default()))),
        ("id", id.map(Value::from)),
        ("signature", signature.map(Value::from)),
        ("provider_name", provider.filter(|_| rest.is_none()).map(Value::from)),
    ];
    part("thinking", leading, rest)
}

/// A user prompt's list content: text as strings, media as [`media_item`]s.
fn prompt_content(pieces: Vec<Piece<'_>>) -> Value {
    Value::Array(
        pieces
            .into_iter()
            .filter_map(|piece| match piece {
                Piece::Text(text) if text.is_empty() => None,
                Piece::Text(text) => Some(Value::from(text.into_owned())),
                Piece::Media(part, carried) => Some(media_item(&part, &carried)),
            })
            .collect(),
    )
}

/// The user prompt carrying a tool return's media, each after the call it answers.
fn tool_media(message: &StoredMessage, id: &str, media: &MediaBytes) -> Option<Value> {
    let mut content = Vec::new();
    for piece in media_parts::native_of(message, media, |_, _| true)? {
        if let Piece::Media(part, carried) = piece {
            content.push(Value::from(media_parts::tool_media_label(id)));
            content.push(media_item(&part, &carried));
        }
    }
    Some(Value::Array(content))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Request,
    Response,
}

impl Side {
    fn of(head: &Map<String, Value>) -> Option<Side> {
        match head.get("kind")?.as_str()? {
            "request" => Some(Side::Request),
            "response" => Some(Side::Response),
            _ => None,
        }
    }

    fn kind(self) -> &'static str {
        match self {
            Side::Request => "request",
            Side::Response => "response",
        }
    }
}

/// One message being filled: its kind, its parts, and its other fields (kept ones, else `kind`).
struct Message {
    side: Side,
    head: Map<String, Value>,
    parts: Vec<Value>,
}

#[derive(Default)]
struct Messages {
    done: Vec<Value>,
    current: Option<Message>,
    /// The system message's part, until the first request takes it.
    system: Option<Value>,
}

impl Messages {
    /// Adds the part an entry makes (given the fields kept for it), after what was kept before it.
    fn add(
        &mut self,
        side: Side,
        meta: Option<Map<String, Value>>,
        make: impl FnOnce(Option<&Map<String, Value>>) -> Value,
    ) {
        let mut meta = meta.unwrap_or_default();
        self.replay(meta.remove("lead"));
        let rest = match meta.get("part") {
            Some(Value::Object(rest)) => Some(rest),
            _ => None,
        };
        let made = make(rest);
        if self.current.as_ref().is_none_or(|m| m.side != side) {
            self.start(side, Map::new());
        }
        self.current.as_mut().expect("started above").parts.push(made);
        self.replay(meta.remove("trail"));
    }

    /// Puts back kept items: `{"message": fields}` starts a message, `{"part": part}` adds a part.
    fn replay(&mut self, items: Option<Value>) {
        let Some(Value::Array(items)) = items else { return };
        for item in items {
            let Value::Object(mut item) = item else { continue };
            if let Some(Value::Object(head)) = item.remove("message") {
                if let Some(side) = Side::of(&head) {
                    self.start(side, head);
                }
            } else if let Some(part @ Value::Object(_)) = item.remove("part") {
                if self.current.is_none() {
                    self.start(Side::Request, Map::new());
                }
                self.current.as_mut().expect("started above").parts.push(part);
            }
        }
    }

    fn start(&mut self, side: Side, mut head: Map<String, Value>) {
        self.flush();
        if !head.contains_key("kind") {
            head.insert("kind".into(), side.kind().into());
        }
        let mut parts = Vec::new();
        if side == Side::Request {
            parts.extend(self.system.take());
        }
        self.current = Some(Message { side, head, parts });
    }

    fn flush(&mut self) {
        if let Some(message) = self.current.take() {
            let mut fields = Map::with_capacity(1 + message.head.len());
            fields.insert("parts".into(), Value::Array(message.parts));
            fields.extend(message.head);
            self.done.push(Value::Object(fields));
        }
    }

    fn finish(mut self) -> Request {
        self.flush();
        if let Some(system) = self.system.take() {
            self.start(Side::Request, Map::new());
            self.current.as_mut().expect("started above").parts.insert(0, system);
            self.flush();
        }
        Request { messages: self.done }
    }
}

fn system_part(text: &str) -> Value {
    part("system-prompt", [("content", Some(Value::from(text)))], None)
}

/// A part: the `leading` fields (a kept one wins; `None` when only a kept one can give it), then
/// the other kept fields in their order, and `part_kind` unless kept.
fn part<const N: usize>(kind: &str, leading: [(&str, Option<Value>); N], rest: Option<&Map<String, Value>>) -> Value {
    let mut out = Map::new();
    for (key, value) in leading {
        if let Some(value) = rest.and_then(|r| r.get(key)).cloned().or(value) {
            out.insert(key.to_owned(), value);
        }
    }
    for (key, value) in rest.into_iter().flatten() {
        if !out.contains_key(key) {
            out.insert(key.clone(), value.clone());
        }
    }
    if !out.contains_key("part_kind") {
        out.insert("part_kind".into(), kind.into());
    }
    Value::Object(out)
}

fn kept_kind(rest: Option<&Map<String, Value>>) -> Option<&str> {
    rest?.get("part_kind")?.as_str()
}

fn strip<'t>(text: &'t str, label: &str) -> &'t str {
    text.strip_prefix(label).unwrap_or(text)
}

/// A human entry's part: a user prompt, or what the kept fields say it was made from (a system
/// prompt, a retry prompt or tool return that answered no open call), its render label taken off.
fn human_part(message: &StoredMessage, rest: Option<&Map<String, Value>>) -> Value {
    let text = message.content_text();
    match kept_kind(rest) {
        Some(kind @ "system-prompt") => part(kind, [("content", Some(strip(&text, SYSTEM_LABEL).into()))], rest),
        Some(kind @ "retry-prompt") => {
            let leading = [
                ("content", Some(strip(&text, RECOVERABLE_LABEL).into())),
                ("tool_name", None),
                ("tool_call_id", None),
            ];
            part(kind, leading, rest)
        }
        Some(kind @ "retry-feedback") => part(kind, [("content", Some(strip(&text, RECOVERABLE_LABEL).into()))], rest),
        Some(kind @ "tool-return") => {
            let id = rest.and_then(|r| r.get("tool_call_id")).and_then(Value::as_str).unwrap_or_default();
            let stray = format!("{STRAY_RESULT_LABEL}{id}]: ");
            let content = text.strip_prefix(stray.as_str()).unwrap_or_else(|| strip(&text, RECOVERABLE_LABEL));
            part(kind, [("tool_name", None), ("content", Some(content.into())), ("tool_call_id", None)], rest)
        }
        _ => part("user-prompt", [("content", Some(Value::from(&*text)))], rest),
    }
}

/// A tool entry's part: the call's return, or what the kept fields say (a retry prompt, a
/// failed or retried return), its error label taken off.
fn tool_part(message: &StoredMessage, name: &str, rest: Option<&Map<String, Value>>) -> Value {
    let text = message.content_text();
    let id = message.data.tool_call_id.as_deref().unwrap_or_default();
    let is_error = message.data.extra.get("status").and_then(Value::as_str) == Some("error");
    let leading = |content: &str| {
        [
            ("tool_name", Some(Value::from(name))),
            ("content", Some(Value::from(content))),
            ("tool_call_id", Some(Value::from(id))),
        ]
    };
    match kept_kind(rest) {
        Some(kind @ "retry-prompt") => {
            let [name, content, id] = leading(strip(&text, RECOVERABLE_LABEL));
            part(kind, [content, name, id], rest)
        }
        Some(kind) if is_error => part(kind, leading(strip(&text, RECOVERABLE_LABEL)), rest),
        Some(kind) => part(kind, leading(&text), rest),
        None if is_error => {
            let outcome = if text.starts_with(NOT_COMPLETED_LABEL) { "interrupted" } else { "failed" };
            let [name, content, id] = leading(&text);
            part("tool-return", [name, content, id, ("outcome", Some(outcome.into()))], None)
        }
        None => part("tool-return", leading(&text), None),
    }
}
