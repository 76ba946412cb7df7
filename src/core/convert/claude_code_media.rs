//! Claude Code's image and document blocks as content parts: pasted into a user's message, or
//! in a `tool_result`'s content (a screenshot, a PDF the Read tool gave back).
//!
//! A user line's text and media blocks that stand together make one `message` whose content is
//! their parts, in order (empty text blocks left out); a `tool_result` whose content holds media
//! beside text alone becomes a `tool_result` with `content` parts. Each media part's bytes are
//! stored as a blob as the line is read ([`super::session_media`]). Lines without media read
//! as they always did, and a block of another kind, or a source naming bytes kept elsewhere
//! (a `file` id), keeps its list as it was.

use super::host_session::SessionError;
use super::media_blocks::anthropic_media;
use super::session_media::{LineFields, SessionMedia};
use serde_json::{json, Value};

/// Where a block's bytes and media type are.
const SOURCE_FIELDS: LineFields = LineFields { data: "source.data", media_type: "source.media_type" };

/// A user line's content, cut where its media stand.
pub(super) enum Piece {
    /// A block read on its own, at its index.
    Block(usize, Value),
    /// Text and media blocks standing together, from the index of the first: one message.
    Parts(usize, Vec<Value>),
}

/// `content` as pieces: each run of text and media blocks that holds media is one piece;
/// every other block is a piece of its own, as before.
pub(super) fn pieces(content: Vec<Value>) -> Vec<Piece> {
    let mut pieces = Vec::with_capacity(content.len());
    let mut run: Vec<(usize, Value)> = Vec::new();
    for (index, block) in content.into_iter().enumerate() {
        if is_text(&block) || is_media(&block) {
            run.push((index, block));
        } else {
            end_run(&mut run, &mut pieces);
            pieces.push(Piece::Block(index, block));
        }
    }
    end_run(&mut run, &mut pieces);
    pieces
}

fn end_run(run: &mut Vec<(usize, Value)>, pieces: &mut Vec<Piece>) {
    if run.iter().any(|(_, block)| is_media(block)) {
        let first = run[0].0;
        pieces.push(Piece::Parts(first, run.drain(..).map(|(_, block)| block).collect()));
    } else {
        pieces.extend(run.drain(..).map(|(index, block)| Piece::Block(index, block)));
    }
}

/// Whether a `tool_result`'s content blocks are read as parts: media beside text alone.
pub(super) fn are_parts(blocks: &[Value]) -> bool {
    blocks.iter().any(is_media) && blocks.iter().all(|block| is_text(block) || is_media(block))
}

/// The parts of `blocks` (text and media blocks: [`pieces`], [`are_parts`]), each media part's
/// bytes stored as a blob; `path_of` names a block by its index among them.
pub(super) fn parts(
    blocks: &[Value],
    path_of: impl Fn(usize) -> String,
    media: &mut SessionMedia,
    line: usize,
) -> Result<Vec<Value>, SessionError> {
    let mut parts = Vec::with_capacity(blocks.len());
    for (i, block) in blocks.iter().enumerate() {
        let Some(fields) = block.as_object() else { continue };
        let path = path_of(i);
        if is_text(block) {
            let text = fields.get("text").and_then(Value::as_str).unwrap_or_default();
            if !text.trim().is_empty() {
                parts.push(json!({"type": "text", "text": text}));
            }
            continue;
        }
        let part = anthropic_media(fields, &path).map_err(|e| SessionError::new(line, e.to_string()))?;
        if let Some(mut part) = part {
            media
                .ingest(&mut part, &path, SOURCE_FIELDS)
                .map_err(|(path, reason)| SessionError::new(line, format!("{path}: {reason}")))?;
            parts.push(part);
        }
    }
    Ok(parts)
}

fn is_text(block: &Value) -> bool {
    block.get("type").and_then(Value::as_str) == Some("text") && block.get("text").is_some_and(Value::is_string)
}

/// An `image` or `document` block whose source holds its bytes or an http(s) URL.
fn is_media(block: &Value) -> bool {
    matches!(block.get("type").and_then(Value::as_str), Some("image" | "document"))
        && matches!(block.pointer("/source/type").and_then(Value::as_str), Some("base64" | "url" | "text"))
}
