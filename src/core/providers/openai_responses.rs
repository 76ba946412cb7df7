//! OpenAI Responses API: `instructions` and the `input` items.
//!
//! | entry | item |
//! |---|---|
//! | system message | top-level `instructions` |
//! | human | `{type: "message", role: "user", content}` |
//! | ai | `{type: "message", role: "assistant", content}` when it has text, then one `{type: "function_call", call_id, name, arguments}` per call |
//! | tool | `{type: "function_call_output", call_id, output}` |
//! | reasoning | `{type: "reasoning", id, summary, encrypted_content}` |
//!
//! A reasoning item is replayed only when it is OpenAI's ([`super::reasoning`]), carries
//! `encrypted_content` and an id (a reasoning event's `encryptedContent` and `itemId`; a
//! block's payload `encrypted_content` and `item_id`, else the block's `id`) and an assistant
//! item (message or function call) follows it; its summary is the `summary`, a string or a
//! list of parts: the API refuses a reasoning item without its following item. Any other
//! reasoning is left out; its text was never model input.
//!
//! Media ([`super::media_parts`]): a user message holding media, and a tool output, are lists
//! of `input_text`, `input_image` (`{image_url, detail}`, a `data:` URL or the part's URL;
//! `detail` the part's, else `auto`) and `input_file` (`{filename, file_data}` for a PDF's
//! bytes, `{file_url}` for a PDF's URL). Audio, and files other than PDFs, are their
//! placeholder text (the Responses API documents no audio input item).
//!
//! Under prompt caching ([`project_cached`], [`super::openai_cache`]) the request carries
//! `prompt_cache_key` and `prompt_cache_options`. With explicit breakpoints the system prompt
//! moves from `instructions` to a first `{type: "message", role: "system"}` input item (a
//! breakpoint needs a content block), the non-empty user messages' `content` and tool
//! outputs' `output` are `[{type: "input_text", text}]`, and two are marked: the system prompt
//! and the last such block.

use super::media_parts::{self, Carried, Piece};
use super::openai_cache::{CacheControl, Content, Part, RequestFields};
use super::reasoning::{Reasoning, Replay, Vendor};
use crate::media::parts::Media;
use crate::media::{MediaBytes, MediaKind};
use crate::messages::{Entry, MessageType, StoredMessage};
use crate::messages::{IdMap, IdRule};
use serde::Serialize;
use serde_json::json;
use serde_json::Value;
use std::borrow::Cow;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Request<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<&'a str>,
    pub input: Vec<Item<'a>>,
    /// `prompt_cache_key` and `prompt_cache_options`, under caching only.
    #[serde(flatten)]
    pub cache: RequestFields,
}

/// The `type` of a text part.
pub const PART: &str = "input_text";

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Item<'a> {
    Message { role: &'static str, content: Content<'a> },
    FunctionCall { call_id: Cow<'a, str>, name: &'a str, arguments: String },
    FunctionCallOutput { call_id: Cow<'a, str>, output: Content<'a> },
    Reasoning { id: &'a str, summary: Vec<SummaryText<'a>>, encrypted_content: &'a str },
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SummaryText<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub text: &'a str,
}

impl<'a> Item<'a> {
    fn is_assistant(&self) -> bool {
        matches!(self, Item::Message { role: "assistant", .. } | Item::FunctionCall { .. })
    }

    /// The content a breakpoint may mark: a system or user message's, or a tool output.
    pub fn markable_content(&mut self) -> Option<&mut Content<'a>> {
        match self {
            Item::Message { role, content } if *role != "assistant" => Some(content),
            Item::FunctionCallOutput { output, .. } => Some(output),
            _ => None,
        }
    }
}

pub fn project<'a>(
    system: Option<&'a str>,
    entries: &'a [Entry<'a>],
    media: &'a MediaBytes,
    replay: &Replay,
) -> Request<'a> {
    let mut ids = IdMap::new(IdRule::OPENAI);
    let mut input: Vec<Item<'a>> = Vec::with_capacity(entries.len());
    // Reasoning waits here until the next item shows whether it may be replayed.
    let mut reasoning: Vec<Item<'a>> = Vec::new();
    for entry in entries {
        let start = input.len();
        match entry {
            Entry::Reasoning(block) => {
                reasoning.extend(replay.of(block, Vendor::OpenAi).and_then(reasoning_item));
                continue;
            }
            Entry::Message(message) => project_message(message, &mut ids, media, &mut input),
        }
        if input.len() > start && !reasoning.is_empty() {
            if input[start].is_assistant() {
                input.splice(start..start, reasoning.drain(..));
            } else {
                reasoning.clear();
            }
        }
    }
    Request { instructions: system, input, cache: RequestFields::default() }
}

/// The request with `cache`'s fields and breakpoints (see the module's docs).
pub fn project_cached<'a>(
    system: Option<&'a str>,
    entries: &'a [Entry<'a>],
    media: &'a MediaBytes,
    cache: CacheControl,
    stable_prefix: usize,
    replay: &Replay,
) -> Request<'a> {
    let mut request = project(system, entries, media, replay);
    if let Some((fields, explicit)) = cache.fields() {
        request.cache = fields;
        if explicit {
            place_breakpoints(&mut request, stable_prefix);
        }
    }
    request
}

/// Moves the instructions into a system message, turns every markable content into parts,
/// and marks the system prompt's, the last of the `stable_prefix` rolling summaries (user
/// messages, one each, right after it), and the last markable one.
pub fn place_breakpoints(request: &mut Request<'_>, stable_prefix: usize) {
    let has_system = request.instructions.is_some();
    if let Some(text) = request.instructions.take() {
        request.input.insert(0, Item::Message { role: "system", content: Content::text(Cow::Borrowed(text)) });
    }
    for content in request.input.iter_mut().filter_map(Item::markable_content) {
        *content = std::mem::replace(content, Content::Text(Cow::Borrowed(""))).into_parts(PART);
    }
    if let Some(Item::Message { role: "system", content }) = request.input.first_mut() {
        content.mark_last();
    }
    let last_summary = (stable_prefix + usize::from(has_system)).checked_sub(1);
    if let Some(Item::Message { role: "user", content }) = last_summary.and_then(|at| request.input.get_mut(at)) {
        content.mark_last();
    }
    let last =
        request.input.iter_mut().rev().filter_map(Item::markable_content).find(|c| matches!(c, Content::Parts(_)));
    if let Some(content) = last {
        content.mark_last();
    }
}

/// Whether the Responses API takes the part as media.
fn takes(part: &Media<'_>, _carried: &Carried<'_>) -> bool {
    match part.kind {
        MediaKind::Image => true,
        MediaKind::File => media_parts::is_pdf(part),
        MediaKind::Audio => false,
    }
}

/// A carried media part in the Responses API's form.
fn media_part(part: &Media<'_>, carried: &Carried<'_>) -> Value {
    let media_type = media_parts::media_type(part);
    match (part.kind, carried) {
        (MediaKind::Image, _) => json!({
            "type": "input_image",
            "image_url": carried.data_url_or_url(media_type),
            "detail": part.detail().unwrap_or("auto"),
        }),
        (_, Carried::Url(url)) => json!({"type": "input_file", "file_url": url}),
        (_, Carried::Bytes(_)) => json!({
            "type": "input_file",
            "filename": media_parts::filename_of(part),
            "file_data": carried.data_url_or_url(media_type),
        }),
    }
}

/// The message's content as parts when it carries media, else its text.
fn content_of<'a>(message: &'a StoredMessage, media: &'a MediaBytes, text: Cow<'a, str>) -> Content<'a> {
    match media_parts::native_of(message, media, takes) {
        Some(pieces) => Content::Parts(parts_of(pieces)),
        None => Content::Text(text),
    }
}

/// Pieces as content parts; empty text says nothing and is left out.
fn parts_of<'a>(pieces: Vec<Piece<'a>>) -> Vec<Part<'a>> {
    media_parts::parts_of(pieces, |text| Part::text(PART, text), |part, carried| Part::Media(media_part(part, carried)))
}

fn project_message<'a>(
    message: &'a StoredMessage,
    ids: &mut IdMap<'a>,
    media: &'a MediaBytes,
    out: &mut Vec<Item<'a>>,
) {
    let content = message.content_text();
    match message.message_type {
        MessageType::Human | MessageType::System => {
            out.push(Item::Message { role: "user", content: content_of(message, media, content) })
        }
        MessageType::Ai => {
            if !content.is_empty() {
                out.push(Item::Message { role: "assistant", content: Content::Text(content) });
            }
            out.extend(message.tool_calls().iter().map(|call| Item::FunctionCall {
                call_id: ids.get(call.id.as_deref().unwrap_or_default()),
                name: &call.name,
                arguments: super::arguments(&call.args),
            }));
        }
        MessageType::Tool => out.push(Item::FunctionCallOutput {
            call_id: ids.get(message.data.tool_call_id.as_deref().unwrap_or_default()),
            output: content_of(message, media, content),
        }),
        MessageType::Other(_) => {}
    }
}

/// The reasoning item of OpenAI's reasoning, when it can be replayed: it has its
/// `encrypted_content` and its id.
fn reasoning_item(reasoning: Reasoning<'_>) -> Option<Item<'_>> {
    let encrypted_content = reasoning.encrypted_content?;
    let id = reasoning.item_id?;
    let summary =
        reasoning.summary_texts().into_iter().map(|text| SummaryText { kind: "summary_text", text }).collect();
    Some(Item::Reasoning { id, summary, encrypted_content })
}

/// XML context mode with explicit breakpoints: the system prompt as a first system message,
/// then one user message holding the document as the text parts of `xml`
/// ([`super::xml_blocks`]), the system prompt and `xml`'s breakpoints marked.
pub fn project_xml<'a>(
    system: Option<&'a str>,
    xml: &super::xml_blocks::XmlBlocks<'a>,
    media_after: &'a [Value],
    media: &'a MediaBytes,
    cache: RequestFields,
) -> Request<'a> {
    let mut input = Vec::with_capacity(2);
    if let Some(text) = system {
        let mut content = Content::text(Cow::Borrowed(text)).into_parts(PART);
        content.mark_last();
        input.push(Item::Message { role: "system", content });
    }
    let mut content = super::openai_cache::xml_parts(xml, PART);
    if let (Content::Parts(parts), Some(pieces)) = (&mut content, media_parts::native(media_after, media, takes)) {
        parts.extend(parts_of(pieces));
    }
    input.push(Item::Message { role: "user", content });
    Request { instructions: None, input, cache }
}
