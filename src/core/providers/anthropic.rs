//! Anthropic Messages API: top-level `system` and the `messages` turns.
//!
//! | entry | content block, in a turn of role |
//! |---|---|
//! | system message | top-level `system` |
//! | human | `{type: "text", text}`, user |
//! | ai | `{type: "text", text}` when it has text, then `{type: "tool_use", id, name, input}` per call, assistant |
//! | tool | `{type: "tool_result", tool_use_id, content?, is_error}`, user (`content` left out when blank) |
//! | reasoning | left out (its encrypted form is OpenAI's) |
//!
//! Consecutive blocks of one role form one turn, so roles alternate. Text blocks that are empty
//! or whitespace, which the API refuses, are left out (and so is such a `system` or
//! `tool_result` content), and so is a turn left with no block. When the first turn
//! would be the assistant's, a user turn holding [`OPENING_TEXT`] comes first, since the
//! conversation must open with a user turn. Tool results come first in their user turn: the
//! repaired entries place every answer right after its call, before anything else.

use crate::messages::{is_blank, Entry, MessageType, StoredMessage};
use crate::messages::{IdMap, IdRule};
use serde::Serialize;
use serde_json::{Map, Value};
use std::borrow::Cow;

pub use crate::messages::OPENING_TEXT;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Request<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system: Option<&'a str>,
    pub messages: Vec<Message<'a>>,
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

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block<'a> {
    Text {
        text: Cow<'a, str>,
    },
    ToolUse {
        id: Cow<'a, str>,
        name: &'a str,
        input: &'a Map<String, Value>,
    },
    ToolResult {
        tool_use_id: Cow<'a, str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        content: Option<Cow<'a, str>>,
        is_error: bool,
    },
}

pub fn project<'a>(system: Option<&'a str>, entries: &'a [Entry<'a>]) -> Request<'a> {
    let mut ids = IdMap::new(IdRule::ANTHROPIC);
    let mut messages: Vec<Message<'a>> = Vec::new();
    for entry in entries {
        if let Entry::Message(message) = entry {
            if let Some((role, blocks)) = project_message(message, &mut ids) {
                match messages.last_mut() {
                    Some(last) if last.role == role => last.content.extend(blocks),
                    _ => messages.push(Message { role, content: blocks }),
                }
            }
        }
    }
    if messages.first().is_some_and(|m| m.role == Role::Assistant) {
        let opening = Block::Text { text: Cow::Borrowed(OPENING_TEXT) };
        messages.insert(0, Message { role: Role::User, content: vec![opening] });
    }
    Request { system: system.filter(|text| !is_blank(text)), messages }
}

/// The role and non-empty blocks of one message; `None` when it has nothing to say.
fn project_message<'a>(message: &'a StoredMessage, ids: &mut IdMap<'a>) -> Option<(Role, Vec<Block<'a>>)> {
    let content = message.content_text();
    // The API refuses text blocks with nothing but whitespace; they say nothing anyway.
    let text = (!is_blank(&content)).then(|| Block::Text { text: content.clone() });
    let (role, blocks) = match message.message_type {
        MessageType::Human | MessageType::System => (Role::User, text.into_iter().collect()),
        MessageType::Ai => {
            let calls = message.tool_calls().iter().map(|call| Block::ToolUse {
                id: ids.get(call.id.as_deref().unwrap_or_default()),
                name: &call.name,
                input: &call.args,
            });
            (Role::Assistant, text.into_iter().chain(calls).collect())
        }
        MessageType::Tool => {
            let is_error = message.data.extra.get("status").and_then(Value::as_str) == Some("error");
            let result = Block::ToolResult {
                tool_use_id: ids.get(message.data.tool_call_id.as_deref().unwrap_or_default()),
                content: (!is_blank(&content)).then_some(content),
                is_error,
            };
            (Role::User, vec![result])
        }
        MessageType::Other(_) => return None,
    };
    (!blocks.is_empty()).then_some((role, blocks))
}
