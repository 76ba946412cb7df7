//! Standard context mode (seed 001): each event becomes a chat message of its own.
//!
//! | event | message |
//! |---|---|
//! | `message` user / assistant | human / ai with the content |
//! | `message` system | human `"[System]: " + content` |
//! | `human_input_received` | human `"[Human Response]: " + response` |
//! | `tool_call` | ai with empty content and one tool call (see grouping) |
//! | `tool_result` | tool with `tool_call_id`; content the result, or its `JSON.stringify` form |
//! | `error` | human `"[Error (recoverable)]: " + error` or `"[Error]: " + error` |
//! | `summary` | no message; feeds the system message |
//! | `completion`, `human_input_requested`, unknown types | no message |
//!
//! With grouping on, a `tool_call` that directly follows a `tool_call` of the same iteration (in
//! the event list: any event in between, even one that makes no message, ends the group) is
//! added to the previous AI message instead of starting a new one.

use super::injection::ContextInjection;
use super::stored::{StoredMessage, ToolCall};
use crate::event::{AgentEvent, EventKind, Role};
use crate::js_json;
use serde_json::Value;

/// The standard-mode messages of a thread, built one event at a time.
///
/// Every push costs time proportional to that event's size, never to the thread's, so a
/// long-lived thread keeps one builder and pays only for new events.
#[derive(Clone, Debug)]
pub struct StandardMessages {
    group_tool_calls: bool,
    injection: ContextInjection,
    messages: Vec<StoredMessage>,
    /// Iteration of the previous event when it was a `tool_call`: the group still open.
    open_group: Option<f64>,
}

impl StandardMessages {
    pub fn new(group_tool_calls: bool) -> Self {
        StandardMessages {
            group_tool_calls,
            injection: ContextInjection::new(),
            messages: Vec::new(),
            open_group: None,
        }
    }

    pub fn group_tool_calls(&self) -> bool {
        self.group_tool_calls
    }

    /// Converts one more event.
    pub fn push(&mut self, event: &AgentEvent) {
        let open_group = self.open_group.take();
        let message = match event.kind() {
            EventKind::Message { role: Role::User, content } => StoredMessage::human(content),
            EventKind::Message { role: Role::Assistant, content } => StoredMessage::ai(content),
            EventKind::Message { role: Role::System, content } => StoredMessage::human(format!("[System]: {content}")),
            EventKind::HumanInputReceived { response } => StoredMessage::human(format!("[Human Response]: {response}")),
            EventKind::ToolCall { tool_name, tool_call_id, args } => {
                let call = ToolCall::new(tool_call_id, tool_name, args.clone());
                let iteration = iteration_of(event);
                self.open_group = self.group_tool_calls.then_some(iteration);
                if self.group_tool_calls && open_group == Some(iteration) {
                    if let Some(calls) = self.messages.last_mut().and_then(|m| m.data.tool_calls.as_mut()) {
                        calls.push(call);
                        return;
                    }
                }
                StoredMessage::ai_tool_calls(vec![call])
            }
            EventKind::ToolResult { tool_call_id, result } => {
                let content = match result {
                    Value::String(text) => text.clone(),
                    other => js_json::to_string(other),
                };
                StoredMessage::tool(tool_call_id, content)
            }
            EventKind::Error { error, recoverable, .. } => {
                let label = if recoverable { "[Error (recoverable)]" } else { "[Error]" };
                StoredMessage::human(format!("{label}: {error}"))
            }
            EventKind::Summary { .. } => {
                self.injection.push(event);
                return;
            }
            EventKind::Completion { .. } | EventKind::HumanInputRequested { .. } | EventKind::Unknown { .. } => return,
        };
        self.messages.push(message);
    }

    pub fn extend<'a>(&mut self, events: impl IntoIterator<Item = &'a AgentEvent>) {
        for event in events {
            self.push(event);
        }
    }

    /// The context injection accumulated from `summary` events so far.
    pub fn injection(&self) -> &ContextInjection {
        &self.injection
    }

    /// The converted messages so far, without the system message.
    pub fn conversation(&self) -> &[StoredMessage] {
        &self.messages
    }

    /// The system message under `instructions`, when there is one.
    pub fn system_message(&self, instructions: Option<&str>) -> Option<StoredMessage> {
        self.injection.system_message(instructions)
    }

    /// The full list: the system message (if any), then the conversation.
    pub fn to_messages(&self, instructions: Option<&str>) -> Vec<StoredMessage> {
        let system = self.system_message(instructions);
        let mut out = Vec::with_capacity(self.messages.len() + 1);
        out.extend(system);
        out.extend(self.messages.iter().cloned());
        out
    }

    /// As [`Self::to_messages`], consuming the builder instead of cloning the messages.
    pub fn into_messages(self, instructions: Option<&str>) -> Vec<StoredMessage> {
        match self.system_message(instructions) {
            None => self.messages,
            Some(system) => {
                let mut out = Vec::with_capacity(self.messages.len() + 1);
                out.push(system);
                out.extend(self.messages);
                out
            }
        }
    }
}

/// Iterations compare by numeric value, so `1` and `1.0` are the same iteration.
fn iteration_of(event: &AgentEvent) -> f64 {
    event.iteration().as_f64().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn build(group: bool, values: Vec<Value>) -> Vec<StoredMessage> {
        let mut builder = StandardMessages::new(group);
        builder.extend(&AgentEvent::list_from_values(values).unwrap());
        builder.into_messages(None)
    }

    fn call(id: &str, iteration: Value) -> Value {
        json!({"type":"tool_call","toolName":"t","toolCallId":id,"args":{},"iteration":iteration})
    }

    fn ids(message: &StoredMessage) -> Vec<&str> {
        message.tool_calls().iter().map(|c| c.id.as_deref().unwrap()).collect()
    }

    #[test]
    fn grouping_merges_only_adjacent_calls_of_one_iteration() {
        let values = vec![
            call("a", json!(1)),
            call("b", json!(1.0)),
            call("c", json!(2)),
            json!({"type":"completion","result":"r","verified":false,"iteration":2}),
            call("d", json!(2)),
            json!({"type":"tool_result","toolCallId":"d","result":"ok","iteration":2}),
            call("e", json!(2)),
        ];
        let grouped = build(true, values.clone());
        let grouped_ids: Vec<Vec<&str>> = grouped.iter().map(ids).collect();
        assert_eq!(grouped_ids, vec![vec!["a", "b"], vec!["c"], vec!["d"], vec![], vec!["e"]]);
        let ungrouped = build(false, values);
        assert_eq!(ungrouped.len(), 6);
        assert!(ungrouped.iter().all(|m| m.tool_calls().len() <= 1));
    }

    #[test]
    fn grouping_does_not_merge_into_a_text_message() {
        let messages = build(
            true,
            vec![json!({"type":"message","role":"assistant","content":"x","iteration":1}), call("a", json!(1))],
        );
        assert_eq!(messages.len(), 2);
        assert_eq!(messages[0].tool_calls().len(), 0);
        assert_eq!(ids(&messages[1]), vec!["a"]);
    }
}
