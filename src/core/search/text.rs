//! What of an event is searched: everything it says, nothing of its bookkeeping.
//!
//! Messages: the string content, or the text parts of a content array. Tool calls: the tool's
//! name and the JSON text of the arguments. Tool results: the result (a string as it is,
//! anything else as JSON text) and text parts. Errors, human input questions (with their
//! context and choices) and responses, completions and summaries: their text. Events of types
//! this version does not know: the JSON text of every field but `type`, `iteration` and
//! `timestamp`. Ids (`toolCallId`), flags and numbers that only order the thread are not
//! searched.

use crate::event::{AgentEvent, EventKind};
use crate::media::parts::text_parts_only;
use serde_json::Value;

/// An event's searchable text and the fields a hit reports.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchableEvent {
    pub text: String,
    pub event_type: String,
    pub role: Option<String>,
    pub iteration: Value,
    /// Milliseconds since the epoch, when the event has a `timestamp`.
    pub timestamp: Option<f64>,
}

/// The event's searchable text (see the module).
pub fn searchable_text(event: &AgentEvent) -> String {
    let json = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match event.kind() {
        EventKind::Message { content, .. } => match content.parts() {
            Some(parts) => text_parts_only(parts),
            None => content.as_str().unwrap_or_default().to_owned(),
        },
        EventKind::ToolCall { tool_name, args, .. } => {
            format!("{tool_name}\n{}", Value::Object(args.clone()))
        }
        EventKind::ToolResult { result, content, .. } => {
            let mut text = result.map(json).unwrap_or_default();
            if let Some(parts) = content {
                if !text.is_empty() {
                    text.push('\n');
                }
                text.push_str(&text_parts_only(parts));
            }
            text
        }
        EventKind::Error { error, .. } => error.to_owned(),
        EventKind::HumanInputRequested { question } => {
            let mut text = question.to_owned();
            for key in ["context", "choices"] {
                if let Some(value) = event.fields().get(key) {
                    text.push('\n');
                    text.push_str(&json(value));
                }
            }
            text
        }
        EventKind::HumanInputReceived { response } => response.to_owned(),
        EventKind::Completion { result, .. } => result.to_owned(),
        EventKind::Summary { summary, .. } => summary.to_owned(),
        // What the model showed of its thinking (signatures and encrypted forms say nothing).
        EventKind::Reasoning { .. } => {
            let text = event.fields().get("text").and_then(Value::as_str).unwrap_or_default().to_owned();
            match event.fields().get("summary") {
                Some(summary) if !summary.is_null() => format!("{text}\n{}", json(summary)),
                _ => text,
            }
        }
        EventKind::Unknown { .. } => event
            .fields()
            .iter()
            .filter(|(key, _)| !matches!(key.as_str(), "type" | "iteration" | "timestamp"))
            .map(|(_, value)| json(value))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

impl SearchableEvent {
    pub fn of(event: &AgentEvent) -> Self {
        SearchableEvent {
            text: searchable_text(event),
            event_type: event.event_type().to_owned(),
            role: event.fields().get("role").and_then(Value::as_str).map(str::to_owned),
            iteration: Value::Number(event.iteration().clone()),
            timestamp: event.timestamp().and_then(serde_json::Number::as_f64),
        }
    }

    /// From an event's stored JSON (valid, as stores keep only validated events).
    pub fn of_json(json: &str) -> Option<Self> {
        let fields = serde_json::from_str(json).ok()?;
        Some(Self::of(&AgentEvent::from_validated_fields(fields)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(value: Value) -> String {
        searchable_text(&AgentEvent::from_value(value, "e").unwrap())
    }

    #[test]
    fn every_kind_of_event_says_its_text() {
        let base = |mut v: Value| {
            v["iteration"] = json!(1);
            v
        };
        assert_eq!(text(base(json!({"type": "message", "role": "user", "content": "hi there"}))), "hi there");
        let parts = json!([{"type": "text", "text": "look"}, {"type": "text", "text": "here"}]);
        assert!(text(base(json!({"type": "message", "role": "user", "content": parts}))).contains("here"));
        let call =
            text(base(json!({"type": "tool_call", "toolName": "grep", "toolCallId": "c1", "args": {"q": "needle"}})));
        assert!(call.contains("grep") && call.contains("needle") && !call.contains("c1"));
        assert_eq!(text(base(json!({"type": "tool_result", "toolCallId": "c1", "result": "found"}))), "found");
        assert_eq!(text(base(json!({"type": "tool_result", "toolCallId": "c1", "result": {"n": 3}}))), r#"{"n":3}"#);
        assert_eq!(text(base(json!({"type": "error", "error": "boom", "recoverable": true}))), "boom");
        assert!(
            text(base(json!({"type": "human_input_requested", "question": "ok?", "choices": ["yes"]}))).contains("yes")
        );
        assert_eq!(text(base(json!({"type": "human_input_received", "response": "yes"}))), "yes");
        assert_eq!(text(base(json!({"type": "completion", "result": "done", "verified": true}))), "done");
        assert_eq!(text(base(json!({"type": "summary", "summarizedIterations": [1], "summary": "so far"}))), "so far");
        assert_eq!(text(base(json!({"type": "custom_note", "note": "remember"}))), "remember");
    }
}
