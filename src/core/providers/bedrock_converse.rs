//! Amazon Bedrock Converse: `{messages, system?}` as the `Converse` operation takes them (the
//! JSON wire form; see the protocol page for boto3).
//!
//! | entry | content block, in a message of role |
//! |---|---|
//! | system message | `system: [{text}]` |
//! | human | `{text}`, user |
//! | ai | `{text}` when it has text, then `{toolUse: {toolUseId, name, input}}` per call, assistant |
//! | tool | `{toolResult: {toolUseId, content: [{json}] or [{text}], status?: "error"}}`, user |
//! | media parts with their bytes | `{image: {format, source: {bytes}}}` (PNG, JPEG, GIF, WebP), `{document: {format, name, source: {bytes}}}` (PDF, CSV, HTML, TXT, MD, Word, Excel), in the message or in `toolResult.content` |
//! | reasoning of Bedrock's | `{reasoningContent: {reasoningText: {text, signature}}}` or `{reasoningContent: {redactedContent}}`, first in the next assistant message |
//! | other reasoning | left out |
//!
//! A result that is a JSON object goes as `{json}`, any other as `{text}`; a blank one has no
//! content block. Consecutive blocks of one role form one message, so roles alternate and a
//! step's results share one user message. Blank text blocks are left out, and when the first
//! message would be the assistant's, a user message holding [`OPENING_TEXT`] comes first.
//!
//! With [`CacheControl::Auto`] the request carries `{cachePoint: {type: "default"}}` blocks
//! where Anthropic's breakpoints would be ([`super::cache_points`]): after the system prompt,
//! after the last rolling summary, and after the blocks the lookback rules pick; at most four.

use super::cache_points::{anchors, BlockSpot, MAX_BREAKPOINTS};
use super::media_parts::{self, Carried};
use super::reasoning::{Reasoning, Replay, Vendor};
use crate::media::parts::Media;
use crate::media::{MediaBytes, MediaKind};
use crate::messages::{is_blank, Entry, MessageType, StoredMessage, OPENING_TEXT};
use crate::messages::{IdMap, IdRule};
use serde::Serialize;
use serde_json::{Map, Value};
use std::borrow::Cow;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Request<'a> {
    pub messages: Vec<Message<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<Vec<Block<'a>>>,
}

/// `options.cacheControl` for this format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CacheControl {
    #[default]
    None,
    Auto,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Message<'a> {
    pub role: Role,
    pub content: Vec<Block<'a>>,
}

/// A content block: a union with one member set.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Block<'a> {
    Text(Cow<'a, str>),
    ToolUse(ToolUse<'a>),
    ToolResult(ToolResult<'a>),
    ReasoningContent(ReasoningContent<'a>),
    CachePoint(CachePoint),
    Image(Image),
    Document(Document),
}

/// `{format, source: {bytes}}`: the JSON wire form carries the bytes as base64.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Image {
    pub format: &'static str,
    pub source: Source,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Document {
    pub format: &'static str,
    pub name: String,
    pub source: Source,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Source {
    pub bytes: String,
}

impl Block<'_> {
    /// Whether a cache point may follow it: not reasoning, not an empty result.
    fn markable(&self) -> bool {
        match self {
            Block::Text(_) | Block::ToolUse(_) | Block::Image(_) | Block::Document(_) => true,
            Block::ToolResult(result) => !result.content.is_empty(),
            Block::ReasoningContent(_) | Block::CachePoint(_) => false,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUse<'a> {
    pub tool_use_id: Cow<'a, str>,
    pub name: &'a str,
    pub input: &'a Map<String, Value>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult<'a> {
    pub tool_use_id: Cow<'a, str>,
    pub content: Vec<ResultContent<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<&'static str>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ResultContent<'a> {
    Text(Cow<'a, str>),
    Json(Value),
    Image(Image),
    Document(Document),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ReasoningContent<'a> {
    ReasoningText(ReasoningText<'a>),
    /// The base64 text of the bytes, as the JSON wire form carries a blob.
    RedactedContent(&'a str),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReasoningText<'a> {
    pub text: &'a str,
    pub signature: &'a str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CachePoint {
    #[serde(rename = "type")]
    pub kind: &'static str,
}

const CACHE_POINT: Block<'static> = Block::CachePoint(CachePoint { kind: "default" });

pub fn project<'a>(
    system: Option<&'a str>,
    entries: &'a [Entry<'a>],
    media: &'a MediaBytes,
    replay: &Replay,
) -> Request<'a> {
    let mut ids = IdMap::new(IdRule::ANTHROPIC);
    let mut messages: Vec<Message<'a>> = Vec::new();
    // Reasoning waits here for the assistant message it opens; a user message first drops it.
    let mut reasoning: Vec<Block<'a>> = Vec::new();
    for entry in entries {
        let message = match entry {
            Entry::Message(message) => message,
            Entry::Reasoning(record) => {
                reasoning.extend(replay.of(record, Vendor::Bedrock).and_then(reasoning_block));
                continue;
            }
        };
        let Some((role, mut blocks)) = project_message(message, media, &mut ids) else { continue };
        if role == Role::Assistant {
            blocks.splice(0..0, reasoning.drain(..));
        }
        reasoning.clear();
        match messages.last_mut() {
            Some(last) if last.role == role => {
                let is_reasoning = |b: &Block<'_>| matches!(b, Block::ReasoningContent(_));
                let lead = last.content.iter().take_while(|b| is_reasoning(b)).count();
                let (new_reasoning, rest): (Vec<_>, Vec<_>) = blocks.into_iter().partition(is_reasoning);
                last.content.splice(lead..lead, new_reasoning);
                last.content.extend(rest);
            }
            _ => messages.push(Message { role, content: blocks }),
        }
    }
    if messages.first().is_some_and(|m| m.role == Role::Assistant) {
        messages.insert(0, Message { role: Role::User, content: vec![Block::Text(Cow::Borrowed(OPENING_TEXT))] });
    }
    let system = system.filter(|text| !is_blank(text)).map(|text| vec![Block::Text(Cow::Borrowed(text))]);
    Request { messages, system }
}

/// The request with cache points as `cache` says; the first `stable_prefix` entries (rolling
/// summaries, one text block each in the first user message) end on one of their own.
pub fn project_cached<'a>(
    system: Option<&'a str>,
    entries: &'a [Entry<'a>],
    media: &'a MediaBytes,
    cache: CacheControl,
    stable_prefix: usize,
    replay: &Replay,
) -> Request<'a> {
    let mut request = project(system, entries, media, replay);
    if cache == CacheControl::Auto {
        place_cache_points(&mut request, stable_prefix);
    }
    request
}

/// Puts a cache point after the system prompt, after the stable prefix, and after the blocks
/// [`anchors`] picks with what is left of the four.
pub fn place_cache_points(request: &mut Request<'_>, stable_prefix: usize) {
    let mut left = MAX_BREAKPOINTS;
    if let Some(system) = request.system.as_mut() {
        system.push(CACHE_POINT);
        left -= 1;
    }
    let mut marks: Vec<(usize, usize)> = Vec::new();
    if let Some(first) = request.messages.first() {
        if stable_prefix > 0 && first.role == Role::User && first.content.len() >= stable_prefix {
            marks.push((0, stable_prefix - 1));
            left -= 1;
        }
    }
    let spots: Vec<(BlockSpot, usize)> = request
        .messages
        .iter()
        .enumerate()
        .flat_map(|(m, message)| {
            message
                .content
                .iter()
                .enumerate()
                .map(move |(b, block)| (BlockSpot { message: m, markable: block.markable() }, b))
        })
        .collect();
    let blocks: Vec<BlockSpot> = spots.iter().map(|(spot, _)| *spot).collect();
    let newest_assistant = request.messages.iter().rposition(|m| m.role == Role::Assistant);
    marks.extend(anchors(&blocks, newest_assistant, left).into_iter().map(|at| (spots[at].0.message, spots[at].1)));
    // From the back, so the positions still to come stay where they were.
    marks.sort_unstable();
    marks.dedup();
    for (m, b) in marks.into_iter().rev() {
        request.messages[m].content.insert(b + 1, CACHE_POINT);
    }
}

/// XML context mode under caching: the system prompt, then one user message holding the
/// document as the text blocks of `xml` ([`super::xml_blocks`]), each breakpoint a cache point,
/// and after them the media the document names (`media_after`, as without caching).
pub fn project_xml<'a>(
    system: Option<&'a str>,
    xml: &super::xml_blocks::XmlBlocks<'a>,
    media_after: &'a [Value],
    media: &'a MediaBytes,
) -> Request<'a> {
    let mut content = Vec::with_capacity(xml.blocks.len() + xml.breakpoints.len());
    for (at, text) in xml.blocks.iter().enumerate() {
        content.push(Block::Text(Cow::Borrowed(text)));
        if xml.breakpoints.contains(&at) {
            content.push(CACHE_POINT);
        }
    }
    let carried = media_parts::native(media_after, media, |part, carried| carried_form(part, carried).is_some());
    content.extend(carried.map(media_blocks).unwrap_or_default());
    let mut system = system.filter(|text| !is_blank(text)).map(|text| vec![Block::Text(Cow::Borrowed(text))]);
    if let Some(system) = system.as_mut() {
        system.push(CACHE_POINT);
    }
    Request { messages: vec![Message { role: Role::User, content }], system }
}

/// Bedrock's reasoning block: redacted bytes, or signed text. Unsigned text is never taken back.
fn reasoning_block(reasoning: Reasoning<'_>) -> Option<Block<'_>> {
    let content = match (reasoning.redacted_data, reasoning.signature) {
        (Some(data), _) => ReasoningContent::RedactedContent(data),
        (None, Some(signature)) => {
            ReasoningContent::ReasoningText(ReasoningText { text: reasoning.text.unwrap_or_default(), signature })
        }
        (None, None) => return None,
    };
    Some(Block::ReasoningContent(content))
}

/// The role and non-empty blocks of one message; `None` when it has nothing to say.
fn project_message<'a>(
    message: &'a StoredMessage,
    media: &'a MediaBytes,
    ids: &mut IdMap<'a>,
) -> Option<(Role, Vec<Block<'a>>)> {
    let pieces = media_parts::native_of(message, media, |part, carried| carried_form(part, carried).is_some());
    let content = message.content_text();
    let text = (!is_blank(&content)).then(|| Block::Text(content.clone()));
    let (role, blocks) = match message.message_type {
        MessageType::Human | MessageType::System => match pieces {
            Some(pieces) => (Role::User, media_blocks(pieces)),
            None => (Role::User, text.into_iter().collect()),
        },
        MessageType::Ai => {
            let calls = message.tool_calls().iter().map(|call| {
                Block::ToolUse(ToolUse {
                    tool_use_id: ids.get(call.id.as_deref().unwrap_or_default()),
                    name: &call.name,
                    input: &call.args,
                })
            });
            (Role::Assistant, text.into_iter().chain(calls).collect())
        }
        MessageType::Tool => {
            let is_error = message.data.extra.get("status").and_then(Value::as_str) == Some("error");
            let content = match pieces {
                Some(pieces) => media_blocks(pieces).into_iter().filter_map(Block::into_result_content).collect(),
                None => result_content(content, is_error),
            };
            let result = ToolResult {
                tool_use_id: ids.get(message.data.tool_call_id.as_deref().unwrap_or_default()),
                content,
                status: is_error.then_some("error"),
            };
            (Role::User, vec![Block::ToolResult(result)])
        }
        MessageType::Other(_) => return None,
    };
    (!blocks.is_empty()).then_some((role, blocks))
}

impl<'a> Block<'a> {
    /// The block as a `toolResult` content item, for the kinds one takes.
    fn into_result_content(self) -> Option<ResultContent<'a>> {
        match self {
            Block::Text(text) => Some(ResultContent::Text(text)),
            Block::Image(image) => Some(ResultContent::Image(image)),
            Block::Document(document) => Some(ResultContent::Document(document)),
            _ => None,
        }
    }
}

/// What a media part goes out as: Converse takes bytes (not URLs) of these formats.
enum Form {
    Image(&'static str),
    Document(&'static str),
}

fn carried_form(part: &Media<'_>, carried: &Carried<'_>) -> Option<Form> {
    if carried.is_url() {
        return None;
    }
    let essence = media_parts::essence(part);
    if part.kind == MediaKind::Image {
        return match essence.as_str() {
            "image/png" => Some(Form::Image("png")),
            "image/jpeg" | "image/jpg" => Some(Form::Image("jpeg")),
            "image/gif" => Some(Form::Image("gif")),
            "image/webp" => Some(Form::Image("webp")),
            _ => None,
        };
    }
    if part.kind != MediaKind::File {
        return None;
    }
    let format = match essence.as_str() {
        "application/pdf" => "pdf",
        "text/csv" => "csv",
        "text/html" => "html",
        "text/plain" => "txt",
        "text/markdown" => "md",
        "application/msword" => "doc",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document" => "docx",
        "application/vnd.ms-excel" => "xls",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet" => "xlsx",
        _ => return None,
    };
    Some(Form::Document(format))
}

/// Text and media pieces as blocks, blank text left out.
fn media_blocks(pieces: Vec<media_parts::Piece<'_>>) -> Vec<Block<'_>> {
    let blocks = media_parts::parts_of(
        pieces,
        |text| (!is_blank(&text)).then_some(Block::Text(text)),
        |part, carried| {
            let source = Source { bytes: carried.base64_or_url() };
            Some(match carried_form(part, carried).expect("carried parts have a form") {
                Form::Image(format) => Block::Image(Image { format, source }),
                Form::Document(format) => Block::Document(Document { format, name: document_name(part), source }),
            })
        },
    );
    blocks.into_iter().flatten().collect()
}

/// A document's `name` as Converse allows it (letters, digits, single spaces, hyphens,
/// parentheses, square brackets): the file's name without its extension, others as hyphens.
fn document_name(part: &Media<'_>) -> String {
    let file = media_parts::filename_of(part);
    let stem = file.rsplit_once('.').map_or(file.as_str(), |(stem, _)| stem);
    let mut name = String::new();
    for c in stem.chars() {
        let c = if c.is_ascii_alphanumeric() || "-()[]".contains(c) {
            c
        } else if c.is_whitespace() {
            ' '
        } else {
            '-'
        };
        if !(c == ' ' && (name.is_empty() || name.ends_with(' '))) {
            name.push(c);
        }
    }
    let name = name.trim_end().to_owned();
    if name.is_empty() {
        "document".to_owned()
    } else {
        name
    }
}

/// A JSON object result as `{json}`, other text as `{text}`, a blank one as nothing.
fn result_content(content: Cow<'_, str>, is_error: bool) -> Vec<ResultContent<'_>> {
    if is_blank(&content) {
        return Vec::new();
    }
    if !is_error {
        if let Ok(object @ Value::Object(_)) = serde_json::from_str::<Value>(&content) {
            return vec![ResultContent::Json(object)];
        }
    }
    vec![ResultContent::Text(content)]
}
