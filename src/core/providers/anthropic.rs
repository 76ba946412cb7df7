//! Anthropic Messages API: top-level `system` and the `messages` turns.
//!
//! | entry | content block, in a turn of role |
//! |---|---|
//! | system message | top-level `system` |
//! | human | `{type: "text", text}`, user |
//! | ai | `{type: "text", text}` when it has text, then `{type: "tool_use", id, name, input}` per call, assistant |
//! | tool | `{type: "tool_result", tool_use_id, content?, is_error}`, user (`content` left out when blank) |
//! | reasoning of Anthropic's | `{type: "thinking", thinking, signature}` or `{type: "redacted_thinking", data}`, first in the next assistant turn ([`super::reasoning`]) |
//! | other reasoning | left out (no other provider's signature is Anthropic's) |
//!
//! Consecutive blocks of one role form one turn, so roles alternate. Text blocks that are empty
//! or whitespace, which the API refuses, are left out (and so is such a `system` or
//! `tool_result` content), and so is a turn left with no block. When the first turn
//! would be the assistant's, a user turn holding [`OPENING_TEXT`] comes first, since the
//! conversation must open with a user turn. Tool results come first in their user turn: the
//! repaired entries place every answer right after its call, before anything else.
//!
//! Media ([`super::media_parts`]): a human message's, and a tool result's, media are `image`
//! blocks (`source` `{type: "base64", media_type, data}` for JPEG, PNG, GIF and WebP bytes, or
//! `{type: "url", url}`) and `document` blocks (a PDF as `base64` or `url`; a `text/plain`
//! file as `{type: "text", media_type: "text/plain", data}`); a tool result's `content` is then
//! a list of text, image and document blocks. Audio, and other files, are their placeholder
//! text (the API takes no audio). Image and document blocks can carry `cache_control`.
//!
//! With [`CacheControl::Auto`] the request carries prompt-caching breakpoints (see
//! [`place_breakpoints`]); without it, not one byte differs from a request without caching.

use super::cache_points::{self, BlockSpot};
use super::media_parts::{self, Carried, Piece};
use super::reasoning::{Reasoning, Replay, Vendor};
use crate::media::parts::Media;
use crate::media::{MediaBytes, MediaKind};
use crate::messages::{is_blank, Entry, MessageType, StoredMessage};
use crate::messages::{IdMap, IdRule};
use serde::Serialize;
use serde_json::{Map, Value};
use std::borrow::Cow;

pub use crate::messages::OPENING_TEXT;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Request<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<System<'a>>,
    pub messages: Vec<Message<'a>>,
}

/// The top-level `system`: a string, or text blocks ([`Block::Text`]) when one of them carries
/// a breakpoint.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum System<'a> {
    Text(&'a str),
    Blocks(Vec<Block<'a>>),
}

/// Whether and how a request marks prompt-caching breakpoints (`options.cacheControl`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CacheControl {
    /// No breakpoints: today's request, byte for byte.
    #[default]
    None,
    /// Breakpoints placed by [`place_breakpoints`], each with this TTL when given.
    Auto { ttl: Option<CacheTtl> },
}

/// A breakpoint's time to live; Anthropic's default is five minutes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum CacheTtl {
    #[serde(rename = "5m")]
    FiveMinutes,
    #[serde(rename = "1h")]
    OneHour,
}

/// `cache_control` as a block carries it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CacheMark {
    #[serde(rename = "type")]
    pub kind: Ephemeral,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl: Option<CacheTtl>,
}

/// The one cache type the API has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Ephemeral {
    Ephemeral,
}

/// The most breakpoints one request may carry (the API refuses more).
pub const MAX_BREAKPOINTS: usize = 4;

/// How many blocks, the breakpoint's own included, the API looks back through for a cached
/// prefix ("about 20 blocks" in its documentation; read conservatively).
pub const LOOKBACK_BLOCKS: usize = 20;

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

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block<'a> {
    Text {
        text: Cow<'a, str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheMark>,
    },
    ToolUse {
        id: Cow<'a, str>,
        name: &'a str,
        input: &'a Map<String, Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheMark>,
    },
    ToolResult {
        tool_use_id: Cow<'a, str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        content: Option<ToolContent<'a>>,
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheMark>,
    },
    /// Replayed as it came; the API refuses `cache_control` on it.
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    RedactedThinking {
        data: &'a str,
    },
    Image {
        source: Source<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheMark>,
    },
    Document {
        source: Source<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheMark>,
    },
}

/// A tool result's `content`: its text, or blocks when it carries media.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ToolContent<'a> {
    Text(Cow<'a, str>),
    Blocks(Vec<Block<'a>>),
}

/// Where an image or document block's bytes are.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Source<'a> {
    Base64 {
        media_type: &'a str,
        data: String,
    },
    Url {
        url: &'a str,
    },
    /// A plain-text document, its bytes as text.
    Text {
        media_type: &'static str,
        data: String,
    },
}

/// The image types the API takes as bytes.
const IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

/// Whether the API takes the part as a block.
fn takes(part: &Media<'_>, carried: &Carried<'_>) -> bool {
    match (part.kind, carried) {
        (MediaKind::Image, Carried::Url(_)) => true,
        (MediaKind::Image, Carried::Bytes(_)) => IMAGE_TYPES.contains(&media_parts::essence(part).as_str()),
        (MediaKind::File, _) if media_parts::is_pdf(part) => true,
        (MediaKind::File, Carried::Bytes(bytes)) => {
            media_parts::essence(part) == "text/plain" && std::str::from_utf8(bytes).is_ok()
        }
        _ => false,
    }
}

/// A carried media part as a block.
fn media_block<'a>(part: &Media<'a>, carried: &Carried<'a>) -> Block<'a> {
    let source = match carried {
        Carried::Url(url) => Source::Url { url },
        Carried::Bytes(bytes) if part.kind == MediaKind::File && !media_parts::is_pdf(part) => {
            Source::Text { media_type: "text/plain", data: String::from_utf8_lossy(bytes).into_owned() }
        }
        Carried::Bytes(_) => {
            Source::Base64 { media_type: media_parts::media_type(part), data: carried.base64_or_url() }
        }
    };
    match part.kind {
        MediaKind::Image => Block::Image { source, cache_control: None },
        _ => Block::Document { source, title: part.filename(), cache_control: None },
    }
}

/// Pieces as blocks; blank text, which the API refuses, is left out.
fn blocks_of<'a>(pieces: Vec<Piece<'a>>) -> Vec<Block<'a>> {
    pieces
        .into_iter()
        .filter_map(|piece| match piece {
            Piece::Text(text) if is_blank(&text) => None,
            Piece::Text(text) => Some(Block::Text { text, cache_control: None }),
            Piece::Media(part, carried) => Some(media_block(&part, &carried)),
        })
        .collect()
}

impl Block<'_> {
    /// A tool result with no content says nothing a breakpoint could usefully end on, and
    /// thinking may not carry one.
    fn is_empty(&self) -> bool {
        matches!(
            self,
            Block::ToolResult { content: None, .. } | Block::Thinking { .. } | Block::RedactedThinking { .. }
        )
    }

    fn mark(&mut self, mark: CacheMark) {
        let (Block::Text { cache_control, .. }
        | Block::ToolUse { cache_control, .. }
        | Block::ToolResult { cache_control, .. }
        | Block::Image { cache_control, .. }
        | Block::Document { cache_control, .. }) = self
        else {
            return;
        };
        *cache_control = Some(mark);
    }

    fn is_thinking(&self) -> bool {
        matches!(self, Block::Thinking { .. } | Block::RedactedThinking { .. })
    }
}

/// The request for `system` and the conversation, with breakpoints as `cache` says; the first
/// `stable_prefix` entries (rolling summaries, which later rounds keep) end on a breakpoint of
/// their own.
pub fn project_cached<'a>(
    system: Option<&'a str>,
    entries: &'a [Entry<'a>],
    media: &'a MediaBytes,
    cache: CacheControl,
    stable_prefix: usize,
    replay: &Replay,
) -> Request<'a> {
    let mut request = project(system, entries, media, replay);
    if let CacheControl::Auto { ttl } = cache {
        place_breakpoints(&mut request, CacheMark { kind: Ephemeral::Ephemeral, ttl }, stable_prefix);
    }
    request
}

/// Marks the last block of the stable prefix: the summaries open the conversation as one user
/// turn of text blocks, one each. Between rounds the end breakpoints read it with the rest; after
/// a round, this one finds it written, so the system prompt and the summaries are read again.
fn mark_stable_prefix(request: &mut Request<'_>, stable_prefix: usize, mark: CacheMark) -> bool {
    let Some(first) = request.messages.first_mut() else { return false };
    if stable_prefix == 0 || first.role != Role::User || first.content.len() < stable_prefix {
        return false;
    }
    first.content[stable_prefix - 1].mark(mark);
    true
}

pub fn project<'a>(
    system: Option<&'a str>,
    entries: &'a [Entry<'a>],
    media: &'a MediaBytes,
    replay: &Replay,
) -> Request<'a> {
    let mut ids = IdMap::new(IdRule::ANTHROPIC);
    let mut messages: Vec<Message<'a>> = Vec::new();
    // Thinking waits here for the assistant turn it opens; a user turn first drops it.
    let mut thinking: Vec<Block<'a>> = Vec::new();
    for entry in entries {
        let message = match entry {
            Entry::Message(message) => message,
            Entry::Reasoning(record) => {
                thinking.extend(replay.of(record, Vendor::Anthropic).and_then(thinking_block));
                continue;
            }
        };
        if let Some((role, mut blocks)) = project_message(message, &mut ids, media) {
            if role == Role::Assistant && !thinking.is_empty() {
                blocks.splice(0..0, thinking.drain(..));
            }
            thinking.clear();
            match messages.last_mut() {
                Some(last) if last.role == role => {
                    // Thinking opens its assistant turn, whatever the turn held before it.
                    let lead = last.content.iter().take_while(|b| b.is_thinking()).count();
                    let (new_thinking, rest): (Vec<_>, Vec<_>) = blocks.into_iter().partition(Block::is_thinking);
                    last.content.splice(lead..lead, new_thinking);
                    last.content.extend(rest);
                }
                _ => messages.push(Message { role, content: blocks }),
            }
        }
    }
    if messages.first().is_some_and(|m| m.role == Role::Assistant) {
        let opening = Block::Text { text: Cow::Borrowed(OPENING_TEXT), cache_control: None };
        messages.insert(0, Message { role: Role::User, content: vec![opening] });
    }
    Request { system: system.filter(|text| !is_blank(text)).map(System::Text), messages }
}

/// Marks at most [`MAX_BREAKPOINTS`] blocks, following Anthropic's prompt-caching rules: a hit
/// is a cached prefix that ends on a block boundary at a breakpoint or at most
/// [`LOOKBACK_BLOCKS`] blocks before one, and each breakpoint writes the prefix up to it. The
/// next request extends this one, so it reads this request's prefix if one of its breakpoints
/// is at most that many blocks after where this request ends, wherever that is:
///
/// 1. The system prompt becomes one text block and carries a breakpoint, so it (and the
///    host's tools before it) stays cached when anything after it changes.
/// 2. The request's last non-empty block: the next request, if it adds few blocks, reads
///    everything up to it.
/// 3. The last non-empty block before the newest assistant turn — where the request ended when
///    the model was asked for that turn — unless the breakpoint after it already looks back
///    that far: an agent step that adds more blocks than the lookback is still read whole.
/// 4. Then the newest block no breakpoint looks back to yet, going back from the end, so that
///    the breakpoints' lookbacks join up: whatever the previous request ended with, it is
///    found as long as it is within their reach.
///
/// Empty blocks (a `tool_result` without content) never carry one. The positions depend on
/// the request alone, so every process marks the same blocks. When the conversation opens with
/// `stable_prefix` rolling summaries, the last of them takes one of the four first
/// ([`mark_stable_prefix`]).
pub fn place_breakpoints(request: &mut Request<'_>, mark: CacheMark, stable_prefix: usize) {
    let mut left = MAX_BREAKPOINTS;
    if mark_system(request, mark) {
        left -= 1;
    }
    if mark_stable_prefix(request, stable_prefix, mark) {
        left -= 1;
    }
    // Every block of the messages in order, as (message, block), and whether it can carry one.
    let blocks: Vec<(usize, usize, bool)> = request
        .messages
        .iter()
        .enumerate()
        .flat_map(|(m, message)| message.content.iter().enumerate().map(move |(b, block)| (m, b, !block.is_empty())))
        .collect();
    let spots: Vec<BlockSpot> = blocks.iter().map(|&(message, _, markable)| BlockSpot { message, markable }).collect();
    let newest_assistant = request.messages.iter().rposition(|m| m.role == Role::Assistant);
    for at in cache_points::anchors(&spots, newest_assistant, left) {
        let (m, b, _) = blocks[at];
        request.messages[m].content[b].mark(mark);
    }
}

/// XML context mode under `cache`: the system prompt, then one user turn holding the document
/// as the text blocks of `xml` ([`super::xml_blocks`]), the system prompt and `xml`'s
/// breakpoints marked.
pub fn project_xml<'a>(
    system: Option<&'a str>,
    xml: &super::xml_blocks::XmlBlocks<'a>,
    media_after: &'a [Value],
    media: &'a MediaBytes,
    mark: CacheMark,
) -> Request<'a> {
    let mut content: Vec<Block<'a>> =
        xml.blocks.iter().map(|text| Block::Text { text: Cow::Borrowed(text), cache_control: None }).collect();
    content.extend(media_parts::native(media_after, media, takes).map(blocks_of).unwrap_or_default());
    let mut request = Request {
        system: system.filter(|text| !is_blank(text)).map(System::Text),
        messages: vec![Message { role: Role::User, content }],
    };
    mark_system(&mut request, mark);
    for &at in &xml.breakpoints {
        request.messages[0].content[at].mark(mark);
    }
    request
}

/// The block Anthropic takes back for its reasoning: redacted data, or signed thinking (an empty
/// text is kept: with `display: "omitted"` the signature is all there is). Unsigned text is
/// never taken back.
fn thinking_block(reasoning: Reasoning<'_>) -> Option<Block<'_>> {
    match (reasoning.redacted_data, reasoning.signature) {
        (Some(data), _) => Some(Block::RedactedThinking { data }),
        (None, Some(signature)) => Some(Block::Thinking { thinking: reasoning.text.unwrap_or_default(), signature }),
        (None, None) => None,
    }
}

/// Marks the system prompt, making it one text block; false when there is none.
fn mark_system(request: &mut Request<'_>, mark: CacheMark) -> bool {
    let Some(System::Text(text)) = request.system else { return false };
    let block = Block::Text { text: Cow::Borrowed(text), cache_control: Some(mark) };
    request.system = Some(System::Blocks(vec![block]));
    true
}

/// The role and non-empty blocks of one message; `None` when it has nothing to say.
fn project_message<'a>(
    message: &'a StoredMessage,
    ids: &mut IdMap<'a>,
    media: &'a MediaBytes,
) -> Option<(Role, Vec<Block<'a>>)> {
    let content = message.content_text();
    // The API refuses text blocks with nothing but whitespace; they say nothing anyway.
    let text = (!is_blank(&content)).then(|| Block::Text { text: content.clone(), cache_control: None });
    let native = || media_parts::native_of(message, media, takes).map(blocks_of);
    let (role, blocks) = match message.message_type {
        MessageType::Human | MessageType::System => match native() {
            Some(blocks) => (Role::User, blocks),
            None => (Role::User, text.into_iter().collect()),
        },
        MessageType::Ai => {
            let calls = message.tool_calls().iter().map(|call| Block::ToolUse {
                id: ids.get(call.id.as_deref().unwrap_or_default()),
                name: &call.name,
                input: &call.args,
                cache_control: None,
            });
            (Role::Assistant, text.into_iter().chain(calls).collect())
        }
        MessageType::Tool => {
            let is_error = message.data.extra.get("status").and_then(Value::as_str) == Some("error");
            let content = match native() {
                Some(blocks) => Some(ToolContent::Blocks(blocks)),
                None => (!is_blank(&content)).then_some(ToolContent::Text(content)),
            };
            let result = Block::ToolResult {
                tool_use_id: ids.get(message.data.tool_call_id.as_deref().unwrap_or_default()),
                content,
                is_error,
                cache_control: None,
            };
            (Role::User, vec![result])
        }
        MessageType::Other(_) => return None,
    };
    (!blocks.is_empty()).then_some((role, blocks))
}
