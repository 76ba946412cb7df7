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

use crate::messages::{Entry, MessageType, StoredMessage};
use crate::messages::{IdMap, IdRule};
use serde::Serialize;
use std::borrow::Cow;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Request<'a> {
    pub messages: Vec<Message<'a>>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum Message<'a> {
    System {
        content: Cow<'a, str>,
    },
    User {
        content: Cow<'a, str>,
    },
    Assistant {
        content: Option<Cow<'a, str>>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall<'a>>,
    },
    Tool {
        tool_call_id: Cow<'a, str>,
        content: Cow<'a, str>,
    },
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

pub fn project<'a>(system: Option<&'a str>, entries: &'a [Entry<'a>]) -> Request<'a> {
    let mut ids = IdMap::new(IdRule::OPENAI);
    let mut messages = Vec::with_capacity(entries.len() + 1);
    messages.extend(system.map(|text| Message::System { content: Cow::Borrowed(text) }));
    for entry in entries {
        if let Entry::Message(message) = entry {
            messages.extend(project_message(message, &mut ids));
        }
    }
    Request { messages }
}

fn project_message<'a>(message: &'a StoredMessage, ids: &mut IdMap<'a>) -> Option<Message<'a>> {
    let content = message.content_text();
    Some(match message.message_type {
        MessageType::System => Message::System { content },
        MessageType::Human => Message::User { content },
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
            Message::Tool { tool_call_id: ids.get(message.data.tool_call_id.as_deref().unwrap_or_default()), content }
        }
        MessageType::Other(_) => return None,
    })
}
