//! `messagesToPrompt`: the plain-text encoding of a message list.

use crate::messages::{MessageType, StoredMessage};

/// Each message as `"[Label]\n" + content`, joined by `"\n\n"`. Labels: `System`, `User`,
/// `Assistant`, `Tool Result`, else the type's own name. Non-string content is JSON-encoded.
/// Tool calls are not shown (as upstream).
pub fn messages_to_prompt(messages: &[StoredMessage]) -> String {
    let mut out = String::new();
    for (i, message) in messages.iter().enumerate() {
        if i > 0 {
            out.push_str("\n\n");
        }
        out.push('[');
        out.push_str(match &message.message_type {
            MessageType::System => "System",
            MessageType::Human => "User",
            MessageType::Ai => "Assistant",
            MessageType::Tool => "Tool Result",
            MessageType::Other(name) => name,
        });
        out.push_str("]\n");
        out.push_str(&message.content_text());
    }
    out
}
