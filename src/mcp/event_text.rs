//! One event as a line of text, for agents reading a thread: `#12 [user] …`.
//!
//! A line starts with the event's index and a bracketed label; text that spans lines goes on
//! with every further line indented two spaces, so each event still starts its own `#`
//! line. Media parts are named (kind, media type, blob id, size), never their bytes.

use crate::event::{tool_result_value, AgentEvent, EventKind};
use crate::media::parts::text_of;
use serde_json::Value;
use std::borrow::Cow;

/// The event at `index` as text, ending in a line break.
pub fn event_line(index: u64, event: &AgentEvent) -> String {
    let (label, body): (Cow<'_, str>, Cow<'_, str>) = match event.kind() {
        EventKind::Message { role, content } => (role.as_str().into(), content.text()),
        EventKind::ToolCall { tool_name, tool_call_id, args } => (
            format!("tool_call {tool_name} {tool_call_id}").into(),
            serde_json::to_string(args).unwrap_or_default().into(),
        ),
        EventKind::ToolResult { tool_call_id, result, content } => {
            let body = match (result, content) {
                // Parts without a result: their text with media named.
                (None, Some(parts)) => Cow::Owned(text_of(parts)),
                _ => Cow::Owned(value_text(&tool_result_value(result, content)).into_owned()),
            };
            (format!("tool_result {tool_call_id}").into(), body)
        }
        EventKind::Error { error, recoverable, tool_call_id } => {
            let mut label = String::from("error");
            if let Some(id) = tool_call_id {
                label.push(' ');
                label.push_str(id);
            }
            if !recoverable {
                label.push_str(" unrecoverable");
            }
            (label.into(), error.into())
        }
        EventKind::HumanInputRequested { question } => ("human_input_requested".into(), question.into()),
        EventKind::HumanInputReceived { response } => ("human_input_received".into(), response.into()),
        EventKind::Completion { result, verified } => {
            (if verified { "completion verified" } else { "completion" }.into(), result.into())
        }
        EventKind::Summary { summary, .. } => ("summary".into(), summary.into()),
        // The thinking text a provider showed, if any; signatures and encrypted forms are the
        // provider's, not the reader's.
        EventKind::Reasoning { provider } => {
            let text = event.fields().get("text").and_then(serde_json::Value::as_str).unwrap_or_default();
            (format!("reasoning {provider}").into(), text.into())
        }
        EventKind::Unknown { type_name } => {
            // Everything but the fields every event has, as compact JSON.
            let mut fields = event.fields().clone();
            for key in ["type", "iteration", "timestamp"] {
                fields.shift_remove(key);
            }
            (type_name.to_owned().into(), serde_json::to_string(&fields).unwrap_or_default().into())
        }
    };
    let mut line = format!("#{index} [{label}]");
    if !body.is_empty() {
        line.push(' ');
        push_indented(&mut line, &body);
    }
    line.push('\n');
    line
}

/// A string as itself, anything else as compact JSON.
fn value_text(value: &Value) -> Cow<'_, str> {
    match value {
        Value::String(text) => Cow::Borrowed(text),
        other => Cow::Owned(other.to_string()),
    }
}

fn push_indented(out: &mut String, text: &str) {
    let text = text.trim_end_matches(['\n', '\r']);
    for (i, part) in text.split('\n').enumerate() {
        if i > 0 {
            out.push_str("\n  ");
        }
        out.push_str(part.strip_suffix('\r').unwrap_or(part));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn line(value: Value) -> String {
        event_line(7, &AgentEvent::from_value(value, "event").unwrap())
    }

    #[test]
    fn each_kind_has_a_labelled_line() {
        assert_eq!(
            line(json!({"type": "message", "role": "user", "content": "hi\nthere", "iteration": 1})),
            "#7 [user] hi\n  there\n"
        );
        assert_eq!(
            line(
                json!({"type": "tool_call", "toolName": "read", "toolCallId": "c1", "args": {"p": 1}, "iteration": 1})
            ),
            "#7 [tool_call read c1] {\"p\":1}\n"
        );
        assert_eq!(
            line(json!({"type": "tool_result", "toolCallId": "c1", "result": {"ok": true}, "iteration": 1})),
            "#7 [tool_result c1] {\"ok\":true}\n"
        );
        assert_eq!(line(json!({"type": "future", "iteration": 1, "payload": [1]})), "#7 [future] {\"payload\":[1]}\n");
    }

    #[test]
    fn media_parts_are_named_not_carried() {
        let blob = format!("sha256:{}", "a".repeat(64));
        let text = line(json!({"type": "message", "role": "user", "iteration": 1, "content": [
            {"type": "text", "text": "look"},
            {"type": "image", "blob": blob, "mediaType": "image/png", "size": 10}
        ]}));
        assert!(text.starts_with("#7 [user] look"), "{text}");
        assert!(text.contains(&blob) && text.contains("image/png"), "{text}");
    }
}
