//! Gemini `generateContent`: the request body in its REST form, `{contents, systemInstruction?}`.
//!
//! | entry | part, in a content of role |
//! |---|---|
//! | system message | `systemInstruction: {parts: [{text}]}` |
//! | human | `{text}`, user |
//! | ai | `{text, thoughtSignature?}` when it has text, then `{functionCall: {id, name, args}, thoughtSignature?}` per call, model |
//! | tool | `{functionResponse: {id, name, response}}`, user |
//! | media parts with their bytes | `{inlineData: {mimeType, data}}` (images, PDFs, audio), in the message; a tool result's right after its `functionResponse`, in the same user content |
//! | reasoning of Google's | `{text, thought: true, thoughtSignature?}`, first in the next model content |
//! | other reasoning | left out |
//!
//! A `thoughtSignature` goes back on the part it came with: the `message` or `tool_call` event
//! keeps it. A function response's `response` is an object: `{error: text}` for an error,
//! the result itself when it is a JSON object, else `{output: text}`.
//!
//! Consecutive parts of one role form one content, so roles alternate, and a step's function
//! responses share one user content, in the order of their calls. Blank text parts are left out,
//! and when the first content would be the model's, a user content holding [`OPENING_TEXT`]
//! comes first.
//!
//! Gemini 3 refuses a request whose current turn (the contents after the last user text) has a
//! step whose first `functionCall` has no signature — a call another model made, or one from
//! before signatures were kept. Such a call gets [`Options::placeholder`], one of the two
//! values Google documents for this.

use super::media_parts::{self, Carried};
use super::reasoning::{Reasoning, Vendor};
use super::ProviderOptions;
use crate::event::THOUGHT_SIGNATURE_KEY;
use crate::media::parts::Media;
use crate::media::{MediaBytes, MediaKind};
use crate::messages::{is_blank, Entry, MessageType, StoredMessage, OPENING_TEXT};
use serde::Serialize;
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Request<'a> {
    pub contents: Vec<Content<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_instruction: Option<SystemInstruction<'a>>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SystemInstruction<'a> {
    pub parts: Vec<Part<'a>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Model,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Content<'a> {
    pub role: Role,
    pub parts: Vec<Part<'a>>,
}

/// One part; exactly one of `text`, `functionCall` and `functionResponse` is set.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Part<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inline_data: Option<InlineData<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thought: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function_call: Option<FunctionCall<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function_response: Option<FunctionResponse<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<&'a str>,
    /// A tool result's media, which goes with the `functionResponse` before it (function
    /// responses cannot hold inline data in every Gemini version).
    #[serde(skip)]
    pub of_response: bool,
}

/// `{mimeType, data}`: the bytes as base64.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InlineData<'a> {
    pub mime_type: &'a str,
    pub data: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FunctionCall<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub args: &'a Map<String, Value>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FunctionResponse<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub response: Value,
}

/// `options.thoughtSignaturePlaceholder`: what an unsigned first call of a step in the
/// current turn carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Deserialize)]
pub enum Placeholder {
    /// The value both the Gemini API and Vertex AI document.
    #[default]
    #[serde(rename = "skip_thought_signature_validator")]
    SkipValidator,
    /// The other value the Gemini API documents.
    #[serde(rename = "context_engineering_is_the_way_to_go")]
    ContextEngineering,
    /// No placeholder: the call goes unsigned (models before Gemini 3 accept that).
    #[serde(rename = "none")]
    None,
}

impl Placeholder {
    pub fn value(self) -> Option<&'static str> {
        match self {
            Placeholder::SkipValidator => Some("skip_thought_signature_validator"),
            Placeholder::ContextEngineering => Some("context_engineering_is_the_way_to_go"),
            Placeholder::None => None,
        }
    }
}

/// What the `gemini` render takes besides the conversation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Options {
    pub placeholder: Placeholder,
}

pub fn project<'a>(
    system: Option<&'a str>,
    entries: &'a [Entry<'a>],
    options: &ProviderOptions,
    media: &'a MediaBytes,
) -> Request<'a> {
    let mut contents: Vec<Content<'a>> = Vec::new();
    // Thoughts wait here for the model content they open; a user content first drops them.
    let mut thoughts: Vec<Part<'a>> = Vec::new();
    // Each call's name and place in its step, by rendered id: responses name the function and
    // follow the calls' order.
    let mut calls: HashMap<&'a str, (&'a str, usize)> = HashMap::new();
    for entry in entries {
        let message = match entry {
            Entry::Message(message) => message,
            Entry::Reasoning(record) => {
                thoughts.extend(options.replay.of(record, Vendor::Google).and_then(thought_part));
                continue;
            }
        };
        let Some((role, mut parts)) = project_message(message, media, &mut calls) else { continue };
        if role == Role::Model {
            parts.splice(0..0, thoughts.drain(..));
        }
        thoughts.clear();
        match contents.last_mut() {
            Some(last) if last.role == role => {
                let lead = last.parts.iter().take_while(|p| p.thought == Some(true)).count();
                let (new_thoughts, rest): (Vec<_>, Vec<_>) = parts.into_iter().partition(|p| p.thought == Some(true));
                last.parts.splice(lead..lead, new_thoughts);
                last.parts.extend(rest);
            }
            _ => contents.push(Content { role, parts }),
        }
    }
    for content in contents.iter_mut().filter(|c| c.role == Role::User) {
        order_responses(&mut content.parts, &calls);
    }
    if contents.first().is_some_and(|c| c.role == Role::Model) {
        contents.insert(0, Content { role: Role::User, parts: vec![text_part(Cow::Borrowed(OPENING_TEXT))] });
    }
    if let Some(placeholder) = options.gemini.placeholder.value() {
        sign_current_turn(&mut contents, placeholder);
    }
    let system_instruction = system
        .filter(|text| !is_blank(text))
        .map(|text| SystemInstruction { parts: vec![text_part(Cow::Borrowed(text))] });
    Request { contents, system_instruction }
}

fn text_part(text: Cow<'_, str>) -> Part<'_> {
    Part { text: Some(text), ..Part::default() }
}

/// The thought part of Google's reasoning: its text (a summary, or empty) and its signature.
fn thought_part(reasoning: Reasoning<'_>) -> Option<Part<'_>> {
    if reasoning.text.is_none() && reasoning.signature.is_none() {
        return None;
    }
    Some(Part {
        text: Some(Cow::Borrowed(reasoning.text.unwrap_or_default())),
        thought: Some(true),
        thought_signature: reasoning.signature,
        ..Part::default()
    })
}

fn signature(extra: &crate::messages::Extra) -> Option<&str> {
    extra.get(THOUGHT_SIGNATURE_KEY).and_then(Value::as_str)
}

/// The role and parts of one message; `None` when it has nothing to say.
fn project_message<'a>(
    message: &'a StoredMessage,
    media: &'a MediaBytes,
    calls: &mut HashMap<&'a str, (&'a str, usize)>,
) -> Option<(Role, Vec<Part<'a>>)> {
    let pieces = media_parts::native_of(message, media, takes);
    let content = message.content_text();
    let (role, parts) = match message.message_type {
        MessageType::Human | MessageType::System => match pieces {
            Some(pieces) => (Role::User, media_parts_of(pieces, false)),
            None => (Role::User, (!is_blank(&content)).then(|| text_part(content)).into_iter().collect()),
        },
        MessageType::Ai => {
            let text = (!is_blank(&content))
                .then(|| Part { thought_signature: signature(&message.data.extra), ..text_part(content) });
            let function_calls = message.tool_calls().iter().enumerate().map(|(index, call)| {
                let id = call.id.as_deref().unwrap_or_default();
                calls.insert(id, (&call.name, index));
                let function_call = FunctionCall { id, name: &call.name, args: &call.args };
                Part {
                    function_call: Some(function_call),
                    thought_signature: signature(&call.extra),
                    ..Part::default()
                }
            });
            (Role::Model, text.into_iter().chain(function_calls).collect())
        }
        MessageType::Tool => {
            let id = message.data.tool_call_id.as_deref().unwrap_or_default();
            let name = calls.get(id).map_or("", |(name, _)| name);
            let is_error = message.data.extra.get("status").and_then(Value::as_str) == Some("error");
            // With media carried, the response holds the text parts and the media follow it.
            let (text, media_parts) = match pieces {
                Some(pieces) => {
                    let parts = media_parts_of(pieces, true);
                    let (media, text): (Vec<_>, Vec<_>) = parts.into_iter().partition(|p| p.inline_data.is_some());
                    let text: Vec<String> = text.into_iter().filter_map(|p| p.text.map(Cow::into_owned)).collect();
                    (Cow::Owned(text.join("\n")), media)
                }
                None => (content, Vec::new()),
            };
            let response = FunctionResponse { id, name, response: response_value(&text, is_error) };
            let mut parts = vec![Part { function_response: Some(response), ..Part::default() }];
            parts.extend(media_parts);
            (Role::User, parts)
        }
        MessageType::Other(_) => return None,
    };
    (!parts.is_empty()).then_some((role, parts))
}

/// Gemini takes images, PDFs and audio as inline bytes (a URL needs its Files API: named).
fn takes(part: &Media<'_>, carried: &Carried<'_>) -> bool {
    !carried.is_url()
        && match part.kind {
            MediaKind::Image | MediaKind::Audio => true,
            MediaKind::File => media_parts::is_pdf(part),
        }
}

/// Text and media pieces as parts, blank text left out; `of_response` marks a tool result's.
fn media_parts_of(pieces: Vec<media_parts::Piece<'_>>, of_response: bool) -> Vec<Part<'_>> {
    let parts = media_parts::parts_of(
        pieces,
        |text| (!is_blank(&text)).then(|| text_part(text)),
        |part, carried| {
            let inline_data = InlineData { mime_type: media_parts::media_type(part), data: carried.base64_or_url() };
            Some(Part { inline_data: Some(inline_data), of_response, ..Part::default() })
        },
    );
    parts.into_iter().flatten().collect()
}

fn response_value(content: &str, is_error: bool) -> Value {
    if is_error {
        return Value::Object(Map::from_iter([("error".to_owned(), Value::String(content.to_owned()))]));
    }
    match serde_json::from_str::<Value>(content) {
        Ok(object @ Value::Object(_)) => object,
        _ => Value::Object(Map::from_iter([("output".to_owned(), Value::String(content.to_owned()))])),
    }
}

/// Puts a content's function responses in the order of their calls (they lead the content:
/// the repaired entries answer every call before anything else comes).
fn order_responses(parts: &mut Vec<Part<'_>>, calls: &HashMap<&str, (&str, usize)>) {
    let responses = parts.iter().take_while(|p| p.function_response.is_some() || p.of_response).count();
    // Each response moves with the media that follow it.
    let mut groups: Vec<Vec<Part<'_>>> = Vec::new();
    for part in parts.drain(..responses) {
        match groups.last_mut() {
            Some(group) if part.of_response => group.push(part),
            _ => groups.push(vec![part]),
        }
    }
    let place =
        |group: &Vec<Part<'_>>| group[0].function_response.as_ref().and_then(|r| calls.get(r.id)).map(|(_, at)| *at);
    groups.sort_by_key(place);
    parts.splice(0..0, groups.into_iter().flatten());
}

/// Gives the first call of each step of the current turn `placeholder` when it has no signature
/// of its own. The current turn starts after the last user content holding anything but
/// function responses.
fn sign_current_turn<'a>(contents: &mut [Content<'a>], placeholder: &'a str) {
    let is_user_text = |c: &Content<'_>| {
        c.role == Role::User && c.parts.iter().any(|p| p.function_response.is_none() && !p.of_response)
    };
    let start = contents.iter().rposition(is_user_text).map_or(0, |at| at + 1);
    for content in contents[start..].iter_mut().filter(|c| c.role == Role::Model) {
        if let Some(first_call) = content.parts.iter_mut().find(|p| p.function_call.is_some()) {
            first_call.thought_signature.get_or_insert(placeholder);
        }
    }
}
