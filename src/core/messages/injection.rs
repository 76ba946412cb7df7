//! The system message both context modes share: summaries of compacted iterations (the
//! "context injection") followed by the host's instructions.

use super::stored::StoredMessage;
use crate::context::rolling::is_rolling_summary;
use crate::event::{AgentEvent, EventKind};
use crate::js_json;
use serde_json::Value;

const HEADER: &str = "## Previous Iteration Summaries\n\n";

/// The context injection of a thread, built one event at a time.
///
/// Empty until the first `summary` event; then the header followed, per summary in thread
/// order, by `"### Iteration(s) 1, 2\n" + summary + "\n\n"`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContextInjection {
    text: String,
}

impl ContextInjection {
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes one event into account; only `summary` events change the injection, and not a
    /// rolling round's, which is a message of its own after the system message.
    pub fn push(&mut self, event: &AgentEvent) {
        if is_rolling_summary(event) {
            return;
        }
        if let EventKind::Summary { summarized_iterations, summary } = event.kind() {
            if self.text.is_empty() {
                self.text.push_str(HEADER);
            }
            self.text.push_str("### Iteration(s) ");
            for (i, iteration) in summarized_iterations.iter().enumerate() {
                if i > 0 {
                    self.text.push_str(", ");
                }
                if let Value::Number(n) = iteration {
                    js_json::write_number(&mut self.text, n);
                }
            }
            self.text.push('\n');
            self.text.push_str(summary);
            self.text.push_str("\n\n");
        }
    }

    pub fn extend<'a>(&mut self, events: impl IntoIterator<Item = &'a AgentEvent>) {
        for event in events {
            self.push(event);
        }
    }

    /// The injection text; `""` when the thread has no summaries.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The system message: injection and instructions joined by `"\n\n"`, injection first,
    /// empty parts left out; `None` when both are empty.
    pub fn system_message(&self, instructions: Option<&str>) -> Option<StoredMessage> {
        let parts: Vec<&str> =
            [self.as_str(), instructions.unwrap_or_default()].into_iter().filter(|p| !p.is_empty()).collect();
        (!parts.is_empty()).then(|| StoredMessage::system(parts.join("\n\n")))
    }
}

/// The context injection of `events` (upstream `buildContextInjection`).
pub fn context_injection(events: &[AgentEvent]) -> String {
    let mut injection = ContextInjection::new();
    injection.extend(events);
    injection.text
}

/// The system message of `events` under `instructions`, present iff either exists.
pub fn system_message(events: &[AgentEvent], instructions: Option<&str>) -> Option<StoredMessage> {
    let mut injection = ContextInjection::new();
    injection.extend(events);
    injection.system_message(instructions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn events(values: Vec<Value>) -> Vec<AgentEvent> {
        AgentEvent::list_from_values(values).unwrap()
    }

    #[test]
    fn no_summaries_no_injection() {
        let thread = events(vec![json!({"type":"message","role":"user","content":"hi","iteration":0})]);
        assert_eq!(context_injection(&thread), "");
        assert_eq!(system_message(&thread, None), None);
        assert_eq!(system_message(&thread, Some("")), None);
        assert_eq!(system_message(&thread, Some("Be brief.")), Some(StoredMessage::system("Be brief.")));
    }

    #[test]
    fn summaries_come_first_in_thread_order() {
        let thread = events(vec![
            json!({"type":"summary","iteration":3,"summarizedIterations":[1,2.0],"summary":"Did A."}),
            json!({"type":"message","role":"user","content":"hi","iteration":3}),
            json!({"type":"summary","iteration":4,"summarizedIterations":[3],"summary":"Did B."}),
        ]);
        let injection =
            "## Previous Iteration Summaries\n\n### Iteration(s) 1, 2\nDid A.\n\n### Iteration(s) 3\nDid B.\n\n";
        assert_eq!(context_injection(&thread), injection);
        assert_eq!(system_message(&thread, None), Some(StoredMessage::system(injection)));
        assert_eq!(
            system_message(&thread, Some("Be brief.")),
            Some(StoredMessage::system(format!("{injection}\n\nBe brief.")))
        );
    }

    #[test]
    fn empty_iteration_list_prints_an_empty_join() {
        let thread = events(vec![json!({"type":"summary","iteration":0,"summarizedIterations":[],"summary":"x"})]);
        assert_eq!(context_injection(&thread), "## Previous Iteration Summaries\n\n### Iteration(s) \nx\n\n");
    }
}
