//! `messagesToXml`: a message list as one `<thread>` document.

use super::js_whitespace;
use super::thread_splice::{looks_like_thread, split_thread};
use crate::messages::{MessageType, StoredMessage};
use crate::xml::{escape_into, EscapeMode};
use std::collections::HashMap;
use std::fmt::Write as _;

/// Renders `messages` as a `<thread>` document, one event per line, every `iteration="0"`:
///
/// - system → `system`, human → `human`, other types → an event of that type name;
/// - AI → `ai` when its content is non-empty, then one `tool_input` per tool call with
///   `name`, `call_id` (empty when the call has no id) and the JSON of its args;
/// - tool → `tool_output` with `call_id`, `status="success"` and `name` taken from the AI tool
///   call with that id anywhere in the list (the last one wins), else `unknown`.
///
/// `id` counts the emitted events. Non-string content is JSON-encoded. A human message whose
/// string content is itself a `<thread>` document (XML context mode) is not escaped: its events
/// are spliced in its place with their `id`s renumbered. If it is the last message, whatever
/// followed its `</thread>` (the response prefix) follows the result's `</thread>` too;
/// otherwise that text, when not blank, becomes a `human` event after the spliced ones. A lone
/// such message is returned byte for byte. Content that starts like a thread but is not one in
/// the serializer's form is escaped like any other text.
pub fn messages_to_xml(messages: &[StoredMessage]) -> String {
    if let [only] = messages {
        if let Some(content) = pre_serialized_thread(only) {
            if split_thread(content).is_some() {
                return content.to_owned();
            }
        }
    }

    let mut names: HashMap<&str, &str> = HashMap::new();
    for call in messages.iter().filter(|m| m.message_type == MessageType::Ai).flat_map(|m| m.tool_calls()) {
        if let Some(id) = call.id.as_deref().filter(|id| !id.is_empty()) {
            names.insert(id, &call.name);
        }
    }

    let mut doc = Document { out: String::from("<thread>\n"), next_id: 0 };
    let mut final_trailer = "";
    for (index, message) in messages.iter().enumerate() {
        let content = message.content_text();
        match &message.message_type {
            MessageType::System => doc.event("system", &[], &content),
            MessageType::Human => {
                let Some(thread) = pre_serialized_thread(message).and_then(split_thread) else {
                    doc.event("human", &[], &content);
                    continue;
                };
                for event in &thread.events {
                    event.write_line(&mut doc.out, doc.next_id);
                    doc.next_id += 1;
                }
                let trailer = js_whitespace::trim(thread.trailer);
                if index + 1 == messages.len() && !trailer.is_empty() {
                    final_trailer = thread.trailer;
                } else if !trailer.is_empty() {
                    doc.event("human", &[], trailer);
                }
            }
            MessageType::Ai => {
                if !content.is_empty() {
                    doc.event("ai", &[], &content);
                }
                for call in message.tool_calls() {
                    let call_id = call.id.as_deref().unwrap_or_default();
                    let mut args = String::new();
                    crate::js_json::write_object(&mut args, &call.args);
                    doc.event("tool_input", &[("name", &call.name), ("call_id", call_id)], &args);
                }
            }
            MessageType::Tool => {
                let call_id = message.data.tool_call_id.as_deref().unwrap_or_default();
                let name = names.get(call_id).copied().unwrap_or("unknown");
                doc.event("tool_output", &[("name", name), ("call_id", call_id), ("status", "success")], &content);
            }
            MessageType::Other(type_name) => doc.event(type_name, &[], &content),
        }
    }
    doc.out.push_str("</thread>");
    doc.out.push_str(final_trailer);
    doc.out
}

/// The content of a human message that looks like a serialized thread.
fn pre_serialized_thread(message: &StoredMessage) -> Option<&str> {
    let content = message.content_str()?;
    (message.message_type == MessageType::Human && looks_like_thread(content)).then_some(content)
}

struct Document {
    out: String,
    next_id: usize,
}

impl Document {
    /// Appends `  <event type=".." id=".." {attrs} iteration="0">{body}</event>\n`.
    fn event(&mut self, type_name: &str, attrs: &[(&str, &str)], body: &str) {
        let out = &mut self.out;
        out.push_str("  <event type=\"");
        escape_into(out, type_name, EscapeMode::Full);
        let _ = write!(out, "\" id=\"{}\"", self.next_id);
        for (name, value) in attrs {
            let _ = write!(out, " {name}=\"");
            escape_into(out, value, EscapeMode::Full);
            out.push('"');
        }
        out.push_str(" iteration=\"0\">");
        escape_into(out, body, EscapeMode::Full);
        out.push_str("</event>\n");
        self.next_id += 1;
    }
}
