//! OpenAI Chat Completions: the `messages` array.
//!
//! | entry | message |
//! |---|---|
//! | system message | `{role: "system", content}` |
//! | human | `{role: "user", content}` |
//! | ai | `{role: "assistant", content, tool_calls?}`; `content` is `null` when empty beside calls |
//! | tool | `{role: "tool", tool_call_id, content}` |
//! | reasoning | left out (Chat Completions cannot replay it) |
//!
//! A tool call is `{id, type: "function", function: {name, arguments}}`, `arguments` being
//! `JSON.stringify(args)`.
//!
//! Media ([`super::media_parts`]): a user message holding media has content parts — `text`,
//! `image_url` (`{url, detail?}`, a `data:` URL or the part's URL), `file` (`{filename,
//! file_data}`, PDFs with their bytes) and `input_audio` (`{data, format}`, WAV and MP3 with
//! their bytes); any other media part is its placeholder text. A tool message takes text only,
//! so a result's media follow that batch's tool messages in one user message, each after a
//! text part `Media of tool call <id>:`. Assistant messages carry text only.
//!
//! Under prompt caching ([`project_cached`], [`super::openai_cache`]) the request carries
//! `prompt_cache_key` and `prompt_cache_options`, and with explicit breakpoints the non-empty
//! system, user and tool contents are `[{type: "text", text}]`, two of them marked: the system
//! prompt (the prefix a budget cut keeps) and the last such content (where the next request,
//! which extends this one, matches).

use super::media_parts::{self, Carried, Piece};
use super::openai_cache::{CacheControl, Content, Part, RequestFields};
use crate::media::parts::Media;
use crate::media::{MediaBytes, MediaKind};
use crate::messages::{Entry, MessageType, StoredMessage};
use crate::messages::{IdMap, IdRule};
use serde::Serialize;
use serde_json::{json, Value};
use std::borrow::Cow;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Request<'a> {
    pub messages: Vec<Message<'a>>,
    /// `prompt_cache_key` and `prompt_cache_options`, under caching only.
    #[serde(flatten)]
    pub cache: RequestFields,
}

/// The `type` of a text part.
pub const PART: &str = "text";

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum Message<'a> {
    System {
        content: Content<'a>,
    },
    User {
        content: Content<'a>,
    },
    Assistant {
        content: Option<Cow<'a, str>>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall<'a>>,
    },
    Tool {
        tool_call_id: Cow<'a, str>,
        content: Content<'a>,
    },
}

impl<'a> Message<'a> {
    /// The content a breakpoint may mark: a system, user or tool message's.
    pub fn markable_content(&mut self) -> Option<&mut Content<'a>> {
        match self {
            Message::System { content } | Message::User { content } | Message::Tool { content, .. } => Some(content),
            Message::Assistant { .. } => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolCall<'a> {
    pub id: Cow<'a, str>,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: Function<'a>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Function<'a> {
    pub name: &'a str,
    pub arguments: String,
}

pub fn project<'a>(system: Option<&'a str>, entries: &'a [Entry<'a>], media: &'a MediaBytes) -> Request<'a> {
    let mut ids = IdMap::new(IdRule::OPENAI);
    let mut messages = Vec::with_capacity(entries.len() + 1);
    messages.extend(system.map(|text| Message::System { content: Content::text(Cow::Borrowed(text)) }));
    // The media of the current batch of tool messages, for the user message after it.
    let mut tool_media: Vec<Part<'a>> = Vec::new();
    for entry in entries {
        if let Entry::Message(message) = entry {
            let Some(projected) = project_message(message, &mut ids, media, &mut tool_media) else { continue };
            if !matches!(projected, Message::Tool { .. }) {
                flush_tool_media(&mut messages, &mut tool_media);
            }
            messages.push(projected);
        }
    }
    flush_tool_media(&mut messages, &mut tool_media);
    Request { messages, cache: RequestFields::default() }
}

/// The user message carrying the media of the tool messages just projected, if any.
fn flush_tool_media<'a>(messages: &mut Vec<Message<'a>>, tool_media: &mut Vec<Part<'a>>) {
    if !tool_media.is_empty() {
        messages.push(Message::User { content: Content::Parts(std::mem::take(tool_media)) });
    }
}

/// Whether Chat Completions takes the part as media.
fn takes(part: &Media<'_>, carried: &Carried<'_>) -> bool {
    match part.kind {
        MediaKind::Image => true,
        MediaKind::File => !carried.is_url() && media_parts::is_pdf(part),
        MediaKind::Audio => !carried.is_url() && media_parts::openai_audio_format(part).is_some(),
    }
}

/// A carried media part in Chat Completions' form.
fn media_part(part: &Media<'_>, carried: &Carried<'_>) -> Value {
    let media_type = media_parts::media_type(part);
    match part.kind {
        MediaKind::Image => {
            let mut image_url = json!({"url": carried.data_url_or_url(media_type)});
            // Chat Completions knows these three; `original` is the Responses API's.
            if let Some(detail) = part.detail().filter(|d| matches!(*d, "auto" | "low" | "high")) {
                image_url["detail"] = json!(detail);
            }
            json!({"type": "image_url", "image_url": image_url})
        }
        MediaKind::File => json!({"type": "file", "file": {
            "filename": media_parts::filename_of(part),
            "file_data": carried.data_url_or_url(media_type),
        }}),
        MediaKind::Audio => json!({"type": "input_audio", "input_audio": {
            "data": carried.base64_or_url(),
            "format": media_parts::openai_audio_format(part).unwrap_or("wav"),
        }}),
    }
}

/// Pieces as content parts; empty text says nothing and is left out.
fn parts_of<'a>(pieces: Vec<Piece<'a>>) -> Vec<Part<'a>> {
    media_parts::parts_of(pieces, |text| Part::text(PART, text), |part, carried| Part::Media(media_part(part, carried)))
}

/// The request with `cache`'s fields and breakpoints (see the module's docs); with explicit
/// breakpoints the first `stable_prefix` entries (rolling summaries, which later rounds keep)
/// end on one of their own.
pub fn project_cached<'a>(
    system: Option<&'a str>,
    entries: &'a [Entry<'a>],
    media: &'a MediaBytes,
    cache: CacheControl,
    stable_prefix: usize,
) -> Request<'a> {
    let mut request = project(system, entries, media);
    if let Some((fields, explicit)) = cache.fields() {
        request.cache = fields;
        if explicit {
            place_breakpoints(&mut request.messages, stable_prefix);
        }
    }
    request
}

/// Turns every markable content into parts and marks the first message's when it is the
/// system prompt, the last of the `stable_prefix` rolling summaries (user messages, one each,
/// right after it), and the last markable one.
pub fn place_breakpoints(messages: &mut [Message<'_>], stable_prefix: usize) {
    for content in messages.iter_mut().filter_map(Message::markable_content) {
        *content = std::mem::replace(content, Content::Text(Cow::Borrowed(""))).into_parts(PART);
    }
    let has_system = matches!(messages.first(), Some(Message::System { .. }));
    if let Some(Message::System { content }) = messages.first_mut() {
        content.mark_last();
    }
    let last_summary = (stable_prefix + usize::from(has_system)).checked_sub(1);
    if let Some(Message::User { content }) = last_summary.and_then(|at| messages.get_mut(at)) {
        content.mark_last();
    }
    if let Some(content) =
        messages.iter_mut().rev().filter_map(Message::markable_content).find(|c| matches!(c, Content::Parts(_)))
    {
        content.mark_last();
    }
}

fn project_message<'a>(
    message: &'a StoredMessage,
    ids: &mut IdMap<'a>,
    media: &'a MediaBytes,
    tool_media: &mut Vec<Part<'a>>,
) -> Option<Message<'a>> {
    let content = message.content_text();
    Some(match message.message_type {
        MessageType::System => Message::System { content: Content::Text(content) },
        MessageType::Human => match media_parts::native_of(message, media, takes) {
            Some(pieces) => Message::User { content: Content::Parts(parts_of(pieces)) },
            None => Message::User { content: Content::Text(content) },
        },
        MessageType::Ai => {
            let tool_calls: Vec<ToolCall<'a>> = message
                .tool_calls()
                .iter()
                .map(|call| ToolCall {
                    id: ids.get(call.id.as_deref().unwrap_or_default()),
                    kind: "function",
                    function: Function { name: &call.name, arguments: super::arguments(&call.args) },
                })
                .collect();
            let content = (tool_calls.is_empty() || !content.is_empty()).then_some(content);
            Message::Assistant { content, tool_calls }
        }
        MessageType::Tool => {
            let tool_call_id = ids.get(message.data.tool_call_id.as_deref().unwrap_or_default());
            // The tool message names its media (placeholders); the user message after the
            // batch carries them.
            for piece in media_parts::native_of(message, media, takes).into_iter().flatten() {
                if let Piece::Media(part, carried) = piece {
                    tool_media.push(Part::text(PART, Cow::Owned(media_parts::tool_media_label(&tool_call_id))));
                    tool_media.push(Part::Media(media_part(&part, &carried)));
                }
            }
            Message::Tool { tool_call_id, content: Content::Text(content) }
        }
        MessageType::Other(_) => return None,
    })
}

/// XML context mode with explicit breakpoints: the system prompt, then one user message
/// holding the document as the text parts of `xml` ([`super::xml_blocks`]), the system
/// prompt and `xml`'s breakpoints marked.
pub fn project_xml<'a>(
    system: Option<&'a str>,
    xml: &super::xml_blocks::XmlBlocks<'a>,
    media_after: &'a [Value],
    media: &'a MediaBytes,
    cache: RequestFields,
) -> Request<'a> {
    let mut messages = Vec::with_capacity(2);
    if let Some(text) = system {
        let mut content = Content::text(Cow::Borrowed(text)).into_parts(PART);
        content.mark_last();
        messages.push(Message::System { content });
    }
    let mut content = super::openai_cache::xml_parts(xml, PART);
    if let (Content::Parts(parts), Some(pieces)) = (&mut content, media_parts::native(media_after, media, takes)) {
        parts.extend(parts_of(pieces));
    }
    messages.push(Message::User { content });
    Request { messages, cache }
}
