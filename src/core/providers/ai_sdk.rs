//! Vercel AI SDK: `{instructions?, messages}`, what `generateText` and `streamText` take
//! (`messages` a `ModelMessage[]`). AI SDK 7 refuses system messages in `messages` unless asked
//! to allow them, so the system message is `instructions`, as the SDK wants it.
//!
//! | entry | part, in a message of role |
//! |---|---|
//! | system message | top-level `instructions` |
//! | human | `{type: "text", text}`, user (content a string unless the part says otherwise) |
//! | human from a `message` system event that `aiSdk/toEvents` made | `{role: "system", content}` without the `[System]: ` label |
//! | ai | `{type: "text", text}` when it has text, then `{type: "tool-call", toolCallId, toolName, input}` per call, assistant |
//! | tool | `{type: "tool-result", toolCallId, toolName, output}`, tool; `output` is `{type: "text", value}`, or `{type: "error-text", value}` for `status: "error"` |
//! | reasoning block whose payload has `text` | `{type: "reasoning", text}`, assistant |
//!
//! Media ([`super::media_parts`]): a user message's media are `{type: "image", image,
//! mediaType}` and `{type: "file", data, mediaType, filename?}` parts (`image` and `data` the
//! bytes as base64, or the part's URL); audio goes as a file part. A tool result carrying
//! media has the output `{type: "content", value: [{type: "text", text}, {type: "media",
//! data, mediaType}]}` (a URL in a result is its placeholder text).
//!
//! Call ids are mapped as the provider pages say into what every provider behind the SDK takes
//! (`^[A-Za-z0-9_-]{1,40}$`); the ids providers give are kept.
//!
//! Consecutive assistant parts form one assistant message and consecutive results one tool
//! message, as `generateText` writes a step; each user or system entry is a message of its own.
//! A part made of an event that carries `aiSdk` (written by `aiSdk/toEvents`, kept on the
//! message by the standard-mode builder) follows it: `message` starts a new message and holds
//! the message's own fields (`providerOptions`, `content: "parts" | "text"`, `role: "system"`);
//! `providerOptions`, `providerExecuted`, `input` (the call's input was not an object and is
//! `args.input`), `output` (`json` with `string` when the value is a string, `content`,
//! `error-text`, `error-json`, `execution-denied` with `reason: false` when it had none),
//! `outputProviderOptions` and `toolName` restore what the events have no field for, so the
//! messages read by `aiSdk/toEvents` render back equal.

use super::media_parts::{self, Carried, Piece};
use super::reasoning::Reasoning;
use super::{ai_sdk_media, ai_sdk_signed};
use crate::event::{REASONING_EVENT_TYPE, THOUGHT_SIGNATURE_KEY};
use crate::media::{MediaBytes, MediaKind};
use crate::messages::labels::{NON_RECOVERABLE_LABEL, RECOVERABLE_LABEL, SYSTEM_LABEL};
use crate::messages::{is_blank, Entry, IdMap, IdRule, MessageType, StoredMessage, ToolCall, CARRIED_KEY};
use serde::Serialize;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Request<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<&'a str>,
    pub messages: Vec<Message<'a>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Message<'a> {
    pub role: Role,
    pub content: Content<'a>,
    #[serde(rename = "providerOptions", skip_serializing_if = "Option::is_none")]
    pub provider_options: Option<&'a Value>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Content<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<Part<'a>>),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Part<'a> {
    Text {
        text: Cow<'a, str>,
        #[serde(rename = "providerOptions", skip_serializing_if = "Option::is_none")]
        provider_options: Option<Cow<'a, Value>>,
    },
    #[serde(rename_all = "camelCase")]
    Image {
        image: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        media_type: Option<&'a str>,
    },
    #[serde(rename_all = "camelCase")]
    File {
        data: String,
        media_type: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        filename: Option<&'a str>,
    },
    Reasoning {
        text: Cow<'a, str>,
        #[serde(rename = "providerOptions", skip_serializing_if = "Option::is_none")]
        provider_options: Option<Cow<'a, Value>>,
    },
    #[serde(rename_all = "camelCase")]
    ToolCall {
        tool_call_id: Cow<'a, str>,
        tool_name: &'a str,
        input: Input<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        provider_options: Option<Cow<'a, Value>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        provider_executed: Option<&'a Value>,
    },
    #[serde(rename_all = "camelCase")]
    ToolResult {
        tool_call_id: Cow<'a, str>,
        tool_name: &'a str,
        output: Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        provider_options: Option<Cow<'a, Value>>,
    },
    /// A part given back in the exact shape `aiSdk/toEvents` kept ([`super::ai_sdk_media`]).
    #[serde(untagged)]
    Kept(Value),
}

/// A call's input: its arguments, or the one value they wrap.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Input<'a> {
    Args(&'a Map<String, Value>),
    Value(&'a Value),
}

/// Ids every provider behind the SDK takes: OpenAI's length and Anthropic's characters.
const ID_RULE: IdRule = IdRule { max_len: 40, word_chars_only: true };

/// A message being gathered, with the message-level fields of its first part.
struct Draft<'a> {
    role: Role,
    parts: Vec<Part<'a>>,
    meta: Option<&'a Map<String, Value>>,
}

pub fn project<'a>(system: Option<&'a str>, entries: &'a [Entry<'a>], media: &'a MediaBytes) -> Request<'a> {
    let mut drafts: Vec<Draft<'a>> = Vec::with_capacity(entries.len());
    // Tool names by call id, for the results (a tool message names no tool).
    let mut names: HashMap<&'a str, &'a str> = HashMap::new();
    let mut ids = IdMap::new(ID_RULE);
    for entry in entries {
        match entry {
            Entry::Reasoning(record) => {
                let carried = record.get(CARRIED_KEY);
                let part = if record.get("type").and_then(Value::as_str) == Some(REASONING_EVENT_TYPE) {
                    // A reasoning event: its signature goes back in the options of its provider.
                    let Some(reasoning) = Reasoning::of(record) else { continue };
                    let provider_options = match carried {
                        Some(_) => options_of(carried),
                        None => ai_sdk_signed::reasoning_options(&reasoning).map(Cow::Owned),
                    };
                    Part::Reasoning { text: Cow::Owned(ai_sdk_signed::reasoning_text(&reasoning)), provider_options }
                } else {
                    let Some(text) = record.get("payload").and_then(|p| p.get("text")).and_then(Value::as_str) else {
                        continue;
                    };
                    Part::Reasoning { text: Cow::Borrowed(text), provider_options: options_of(carried) }
                };
                add(&mut drafts, Role::Assistant, part, carried);
            }
            Entry::Message(message) => project_message(message, &mut names, &mut ids, media, &mut drafts),
        }
    }
    Request { instructions: system, messages: drafts.into_iter().map(finish).collect() }
}

fn project_message<'a>(
    message: &'a StoredMessage,
    names: &mut HashMap<&'a str, &'a str>,
    ids: &mut IdMap<'a>,
    media: &'a MediaBytes,
    out: &mut Vec<Draft<'a>>,
) {
    let carried = message.data.extra.get(CARRIED_KEY);
    match message.message_type {
        MessageType::Human | MessageType::System => {
            if let Some(pieces) = media_parts::native_of(message, media, |_, _| true) {
                add_user_parts(out, pieces, carried);
                return;
            }
            let from_system = meta(carried).and_then(|m| m.get("role")).and_then(Value::as_str) == Some("system");
            let (role, text) = match message.content_str().and_then(|text| text.strip_prefix(SYSTEM_LABEL)) {
                Some(text) if from_system => (Role::System, Cow::Borrowed(text)),
                _ => (Role::User, message.content_text()),
            };
            add(out, role, Part::Text { text, provider_options: options_of(carried) }, carried);
        }
        MessageType::Ai => {
            let text = message.content_text();
            if !is_blank(&text) {
                add(
                    out,
                    Role::Assistant,
                    Part::Text { text, provider_options: signed_options(carried, &message.data.extra) },
                    carried,
                );
            }
            for call in message.tool_calls() {
                let id = call.id.as_deref().unwrap_or_default();
                names.insert(id, &call.name);
                let carried = call.extra.get(CARRIED_KEY);
                add(out, Role::Assistant, tool_call(call, ids.get(id), carried), carried);
            }
        }
        MessageType::Tool => {
            let id = message.data.tool_call_id.as_deref().unwrap_or_default();
            let tool_name = field(carried, "toolName")
                .and_then(Value::as_str)
                .or_else(|| names.get(id).copied())
                .unwrap_or_default();
            let part = Part::ToolResult {
                tool_call_id: ids.get(id),
                tool_name,
                output: media_output(message, media).unwrap_or_else(|| output(message, carried)),
                provider_options: options_of(carried),
            };
            add(out, Role::Tool, part, carried);
        }
        MessageType::Other(_) => {}
    }
}

/// A user message of several parts: text, image and file parts, in the message's order.
fn add_user_parts<'a>(out: &mut Vec<Draft<'a>>, pieces: Vec<Piece<'a>>, carried: Option<&'a Value>) {
    let hints = ai_sdk_media::hints(carried);
    let mut parts = pieces.into_iter().enumerate().filter_map(|(index, piece)| {
        if let Some(kept) = ai_sdk_media::hint(hints, index).and_then(|hint| kept_part(hint, &piece)) {
            return Some(Part::Kept(kept));
        }
        match piece {
            Piece::Text(text) if text.is_empty() => None,
            Piece::Text(text) => Some(Part::Text { text, provider_options: None }),
            Piece::Media(part, carried) => Some(match part.kind {
                MediaKind::Image => Part::Image { image: carried.base64_or_url(), media_type: part.media_type() },
                MediaKind::File | MediaKind::Audio => Part::File {
                    data: carried.base64_or_url(),
                    media_type: media_parts::media_type(&part),
                    filename: part.filename(),
                },
            }),
        }
    });
    let Some(first) = parts.next() else { return };
    add(out, Role::User, first, carried);
    out.last_mut().expect("added above").parts.extend(parts);
}

/// A result's `content` output when it carries media bytes: its text parts and its media, in
/// order (a URL part, which `media` cannot carry, as its placeholder text). Not for errors,
/// whose outputs are text.
fn media_output(message: &StoredMessage, media: &MediaBytes) -> Option<Value> {
    if message.data.extra.get("status").and_then(Value::as_str) == Some("error") {
        return None;
    }
    let carried_fields = message.data.extra.get(CARRIED_KEY);
    let hints = ai_sdk_media::hints(carried_fields);
    // A URL goes back only where the SDK's own part held it; else as its placeholder text.
    let pieces = media_parts::native_of(message, media, |_, carried| !carried.is_url() || !hints.is_empty())?;
    let value: Vec<Value> = pieces
        .into_iter()
        .enumerate()
        .filter_map(|(index, piece)| {
            if let Some(kept) = ai_sdk_media::hint(hints, index).and_then(|hint| kept_part(hint, &piece)) {
                return Some(kept);
            }
            match piece {
                Piece::Text(text) if text.is_empty() => None,
                Piece::Text(text) => Some(serde_json::json!({"type": "text", "text": text})),
                Piece::Media(part, carried @ Carried::Bytes(_)) => Some(serde_json::json!({
                    "type": "media", "data": carried.base64_or_url(), "mediaType": media_parts::media_type(&part),
                })),
                Piece::Media(part, Carried::Url(_)) => {
                    Some(serde_json::json!({"type": "text", "text": part.placeholder()}))
                }
            }
        })
        .collect();
    Some(serde_json::json!({"type": "content", "value": value}))
}

/// A part in the shape `aiSdk/toEvents` kept, with its text, bytes or URL put back.
fn kept_part(hint: &Value, piece: &Piece<'_>) -> Option<Value> {
    let kept_type = hint.get("part").and_then(|p| p.get("type")).and_then(Value::as_str);
    match piece {
        // A media part rendered as its placeholder (its bytes not at hand) goes as text.
        Piece::Text(_) if kept_type != Some("text") => None,
        Piece::Text(text) => ai_sdk_media::text_part(hint, text),
        Piece::Media(_, carried) => ai_sdk_media::media_part(hint, carried),
    }
}

fn tool_call<'a>(call: &'a ToolCall, id: Cow<'a, str>, carried: Option<&'a Value>) -> Part<'a> {
    let wrapped = field(carried, "input") == Some(&Value::Bool(true));
    let input = match call.args.get("input") {
        Some(value) if wrapped => Input::Value(value),
        _ => Input::Args(&call.args),
    };
    Part::ToolCall {
        tool_call_id: id,
        tool_name: &call.name,
        input,
        provider_options: signed_options(carried, &call.extra),
        provider_executed: field(carried, "providerExecuted"),
    }
}

/// A result's `output`: text, or `error-text` for an error answer, unless `aiSdk.output` says
/// which it was.
fn output(message: &StoredMessage, carried: Option<&Value>) -> Value {
    let content = message.content_text();
    let is_error = message.data.extra.get("status").and_then(Value::as_str) == Some("error");
    let unlabelled = || {
        content
            .strip_prefix(RECOVERABLE_LABEL)
            .or_else(|| content.strip_prefix(NON_RECOVERABLE_LABEL))
            .unwrap_or(&content)
    };
    let kind = field(carried, "output").and_then(Value::as_str);
    let mut reason = None;
    let (kind, value) = match (is_error, kind) {
        (false, Some("json")) if field(carried, "string") == Some(&Value::Bool(true)) => {
            ("json", Some(Value::String(content.clone().into_owned())))
        }
        (false, Some(kind @ ("json" | "content"))) => (kind, Some(parsed(&content))),
        (true, Some("error-json")) => ("error-json", Some(parsed(unlabelled()))),
        (true, Some("error-text")) => ("error-text", Some(Value::String(unlabelled().to_owned()))),
        (true, Some("execution-denied")) => {
            // `reason: false`: the denial had none, and the event holds a stand-in.
            if field(carried, "reason") != Some(&Value::Bool(false)) {
                reason = Some(Value::String(unlabelled().to_owned()));
            }
            ("execution-denied", None)
        }
        (true, _) => ("error-text", Some(Value::String(content.clone().into_owned()))),
        (false, _) => ("text", Some(Value::String(content.clone().into_owned()))),
    };
    let mut out = Map::new();
    out.insert("type".into(), kind.into());
    if let Some(value) = value {
        out.insert("value".into(), value);
    }
    if let Some(reason) = reason {
        out.insert("reason".into(), reason);
    }
    if let Some(options) = field(carried, "outputProviderOptions") {
        out.insert("providerOptions".into(), options.clone());
    }
    Value::Object(out)
}

/// JSON text read back as its value; text that is not JSON stays text.
fn parsed(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// Adds `part` to the message it belongs to: the last one when the roles agree and `carried`
/// starts no message (assistant parts and results join by default; a user part only when
/// `aiSdk/toEvents` made it part of the same message), else a new one.
fn add<'a>(out: &mut Vec<Draft<'a>>, role: Role, part: Part<'a>, carried: Option<&'a Value>) {
    let starts = meta(carried);
    if let Some(last) = out.last_mut() {
        let joins_by_default = matches!(role, Role::Assistant | Role::Tool) || carried.is_some();
        if last.role == role && starts.is_none() && joins_by_default && role != Role::System {
            last.parts.push(part);
            return;
        }
    }
    out.push(Draft { role, parts: vec![part], meta: starts });
}

/// A draft as the message: content a string where the SDK's own form has one (system always;
/// user unless its message said `parts`; assistant only when it said `text`), else the parts.
fn finish(draft: Draft<'_>) -> Message<'_> {
    let form = draft.meta.and_then(|m| m.get("content")).and_then(Value::as_str);
    let provider_options = draft.meta.and_then(|m| m.get("providerOptions"));
    let as_text = match draft.role {
        Role::System => true,
        Role::User => form != Some("parts"),
        Role::Assistant => form == Some("text"),
        Role::Tool => false,
    };
    let single_text = matches!(draft.parts.as_slice(), [Part::Text { provider_options: None, .. }]);
    let content = if as_text && (single_text || draft.role == Role::System) {
        let mut texts = draft.parts.into_iter().filter_map(|part| match part {
            Part::Text { text, .. } => Some(text),
            _ => None,
        });
        let first = texts.next().unwrap_or_default();
        Content::Text(texts.fold(first, |mut all, text| {
            all.to_mut().push_str(&text);
            all
        }))
    } else {
        Content::Parts(draft.parts)
    };
    Message { role: draft.role, content, provider_options }
}

/// The part's kept `providerOptions`.
fn options_of(carried: Option<&Value>) -> Option<Cow<'_, Value>> {
    field(carried, "providerOptions").map(Cow::Borrowed)
}

/// The part's kept `providerOptions`; without `aiSdk`, Gemini's signature the event carries.
fn signed_options<'a>(carried: Option<&'a Value>, extra: &'a crate::messages::Extra) -> Option<Cow<'a, Value>> {
    match carried {
        Some(_) => options_of(carried),
        None => ai_sdk_signed::thought_signature_options(extra.get(THOUGHT_SIGNATURE_KEY)).map(Cow::Owned),
    }
}

fn meta(carried: Option<&Value>) -> Option<&Map<String, Value>> {
    carried?.get("message")?.as_object()
}

fn field<'a>(carried: Option<&'a Value>, key: &str) -> Option<&'a Value> {
    carried?.get(key)
}
