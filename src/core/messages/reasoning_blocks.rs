//! Reasoning given back as the LangChain blocks it was written in: the `messages` render of
//! reasoning that `messages/toEvents` kept with `keepBlockForms` (Anthropic's `thinking` and
//! `redacted_thinking`, the v1 `reasoning` block).
//!
//! Such a record keeps `langchainBlock: {block, at}`: the block as given, its text's string
//! emptied at the JSON pointer `at`. The render puts the record's text (its redacted data, for
//! a `redacted_thinking` block) back at `at`, and opens the AI message that follows with those
//! blocks, its own text after them as a `text` block. Reasoning kept without a form stays out
//! of the `messages` render, as before.

use super::block_forms::BLOCK_FORM_KEY;
use super::media_blocks::with_media_blocks;
use super::standard::Entry;
use super::stored::{Content, MessageType, StoredMessage};
use crate::media::MediaBytes;
use crate::providers::reasoning::Reasoning;
use serde_json::{json, Map, Value};
use std::borrow::Cow;

/// The messages of `entries` as the `messages` format writes them (media as blocks), each AI
/// message opened by the reasoning blocks kept just before it.
pub fn with_reasoning_blocks<'a>(entries: &'a [Entry<'_>], media: &MediaBytes) -> Vec<Cow<'a, StoredMessage>> {
    let mut out = Vec::with_capacity(entries.len());
    let mut pending: Vec<Value> = Vec::new();
    for entry in entries {
        let message = match entry {
            Entry::Reasoning(record) => {
                pending.extend(kept_block(record));
                continue;
            }
            Entry::Message(message) => with_media_blocks(message, media),
        };
        if pending.is_empty() || message.message_type != MessageType::Ai {
            // Reasoning no AI message follows has no place in this form: left out, as before.
            pending.clear();
            out.push(message);
            continue;
        }
        let mut message = message.into_owned();
        let mut blocks = std::mem::take(&mut pending);
        blocks.extend(content_blocks(&message.data.content));
        message.data.content = Content::Other(Box::new(Value::Array(blocks)));
        out.push(Cow::Owned(message));
    }
    out
}

/// The block a reasoning record kept, its text put back; `None` when it kept no form.
pub(crate) fn kept_block(record: &Map<String, Value>) -> Option<Value> {
    let form = record.get(BLOCK_FORM_KEY)?.as_object()?;
    let mut block = form.get("block")?.clone();
    let at = form.get("at").and_then(Value::as_str)?;
    let reasoning = Reasoning::of(record)?;
    let text = match block.get("type").and_then(Value::as_str) {
        Some("redacted_thinking") => reasoning.redacted_data,
        _ => reasoning.text,
    };
    *block.pointer_mut(at)? = Value::String(text.unwrap_or_default().to_owned());
    Some(block)
}

/// A message's content as content blocks: its text as a `text` block (none when empty).
fn content_blocks(content: &Content) -> Vec<Value> {
    match content {
        Content::Text(text) if text.is_empty() => Vec::new(),
        Content::Text(text) => vec![json!({"type": "text", "text": text})],
        Content::Other(value) => match &**value {
            Value::Null => Vec::new(),
            Value::Array(blocks) => blocks.clone(),
            other => vec![other.clone()],
        },
        Content::Parts(_) => vec![json!({"type": "text", "text": content_text(content)})],
    }
}

fn content_text(content: &Content) -> String {
    match content {
        Content::Parts(parts) => crate::media::parts::text_parts_only(parts),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_forms_come_back_with_their_text() {
        let thinking = json!({"type": "reasoning", "provider": "anthropic", "text": "", "signature": "s",
            BLOCK_FORM_KEY: {"block": {"type": "thinking", "thinking": "", "signature": "s"}, "at": "/thinking"}});
        let redacted = json!({"type": "reasoning", "provider": "anthropic", "redactedData": "r",
            BLOCK_FORM_KEY: {"block": {"type": "redacted_thinking", "data": ""}, "at": "/data"}});
        let v1 = json!({"kind": "reasoning", "payload": {"text": "hm ✓"},
            BLOCK_FORM_KEY: {"block": {"type": "reasoning", "reasoning": ""}, "at": "/reasoning"}});
        let of = |v: &Value| kept_block(v.as_object().unwrap());
        assert_eq!(of(&thinking), Some(json!({"type": "thinking", "thinking": "", "signature": "s"})));
        assert_eq!(of(&redacted), Some(json!({"type": "redacted_thinking", "data": "r"})));
        assert_eq!(of(&v1), Some(json!({"type": "reasoning", "reasoning": "hm ✓"})));
        let plain = json!({"type": "reasoning", "provider": "anthropic", "text": "t"});
        assert_eq!(of(&plain), None);
    }
}
