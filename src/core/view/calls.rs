//! How the standard-mode render (rule 8b) answers each tool call and human-input request, as
//! links between event positions the page draws side by side.

use crate::event::{AgentEvent, EventKind};
use serde::Serialize;

/// What answered a `tool_call`, or why nothing did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum CallOutcome {
    /// A `tool_result`, an `error` naming the call, or a `human_input_received` (rule 3).
    Answered { by: usize },
    /// No answer before the thread moved on or ended: the render adds (or drops) a
    /// "[Tool call not completed]" answer with this reason (rule 5).
    NotCompleted { reason: String },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CallLink {
    pub call: usize,
    #[serde(flatten)]
    pub outcome: CallOutcome,
}

/// A `human_input_requested` and the `human_input_received` that followed it, if any.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AskLink {
    pub request: usize,
    pub answer: Option<usize>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Links {
    /// One per `tool_call`, in call order.
    pub calls: Vec<CallLink>,
    /// `tool_result`s whose call is unknown or already answered (rule 6).
    pub strays: Vec<usize>,
    pub asks: Vec<AskLink>,
}

struct Pending<'a> {
    id: &'a str,
    call: usize,
    /// Why the call was interrupted: the latest question or error that came while it waited.
    reason: Option<String>,
}

const NO_RESULT: &str = "no result was recorded for this call";

/// Links the events' calls to their answers the way rule 8b pairs them.
pub fn link_events(events: &[AgentEvent]) -> Links {
    let mut links = Links::default();
    let mut pending: Vec<Pending<'_>> = Vec::new();
    // A message arrived while calls were pending: the next call closes them (rule 5).
    let mut moved_on = false;
    // The call a human answer would answer (rule 3).
    let mut awaiting_human: Option<usize> = None;
    let mut open_ask: Option<usize> = None;
    for (index, event) in events.iter().enumerate() {
        match event.kind() {
            EventKind::ToolCall { tool_call_id, .. } => {
                if moved_on {
                    close_all(&mut pending, &mut links);
                    moved_on = false;
                }
                pending.push(Pending { id: tool_call_id, call: index, reason: None });
            }
            EventKind::ToolResult { tool_call_id, .. } => match take(&mut pending, tool_call_id) {
                Some(call) => answer(&mut links, call.call, index),
                None => links.strays.push(index),
            },
            EventKind::Error { error, tool_call_id, .. } => match tool_call_id.and_then(|id| take(&mut pending, id)) {
                Some(call) => answer(&mut links, call.call, index),
                None if !pending.is_empty() => {
                    let reason = format!("the run reported an error: {error}");
                    pending.iter_mut().for_each(|p| p.reason = Some(reason.clone()));
                    moved_on = true;
                }
                None => {}
            },
            EventKind::HumanInputRequested { question } => {
                links.asks.push(AskLink { request: index, answer: None });
                open_ask = Some(links.asks.len() - 1);
                if let Some(latest) = pending.last() {
                    awaiting_human = Some(latest.call);
                    let reason = format!("the run stopped to ask for human input: {question}");
                    pending.iter_mut().for_each(|p| p.reason = Some(reason.clone()));
                }
            }
            EventKind::HumanInputReceived { .. } => {
                if let Some(ask) = open_ask.take() {
                    links.asks[ask].answer = Some(index);
                }
                let waiting = awaiting_human.take().and_then(|call| pending.iter().position(|p| p.call == call));
                match waiting {
                    Some(position) => answer(&mut links, pending.remove(position).call, index),
                    None if !pending.is_empty() => moved_on = true,
                    None => {}
                }
            }
            EventKind::Message { content, .. } if !pending.is_empty() && !content.is_blank() => moved_on = true,
            _ => {}
        }
    }
    close_all(&mut pending, &mut links);
    links.calls.sort_by_key(|link| link.call);
    links
}

fn take<'a>(pending: &mut Vec<Pending<'a>>, id: &str) -> Option<Pending<'a>> {
    let position = pending.iter().position(|p| p.id == id)?;
    Some(pending.remove(position))
}

fn answer(links: &mut Links, call: usize, by: usize) {
    links.calls.push(CallLink { call, outcome: CallOutcome::Answered { by } });
}

fn close_all(pending: &mut Vec<Pending<'_>>, links: &mut Links) {
    for p in pending.drain(..) {
        let reason = p.reason.unwrap_or_else(|| NO_RESULT.to_owned());
        links.calls.push(CallLink { call: p.call, outcome: CallOutcome::NotCompleted { reason } });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn events(values: serde_json::Value) -> Vec<AgentEvent> {
        AgentEvent::list_from_values(serde_json::from_value(values).unwrap()).unwrap()
    }

    fn call(id: &str, iteration: u64) -> serde_json::Value {
        json!({"type": "tool_call", "toolName": "t", "toolCallId": id, "args": {}, "iteration": iteration})
    }

    fn result(id: &str, iteration: u64) -> serde_json::Value {
        json!({"type": "tool_result", "toolCallId": id, "result": "ok", "iteration": iteration})
    }

    #[test]
    fn pairs_results_with_their_calls() {
        let links = link_events(&events(json!([call("a", 1), call("b", 1), result("b", 1), result("a", 1)])));
        assert_eq!(
            links.calls,
            vec![
                CallLink { call: 0, outcome: CallOutcome::Answered { by: 3 } },
                CallLink { call: 1, outcome: CallOutcome::Answered { by: 2 } },
            ]
        );
        assert!(links.strays.is_empty());
    }

    #[test]
    fn a_call_left_at_the_end_is_not_completed() {
        let links = link_events(&events(json!([call("a", 1)])));
        assert_eq!(links.calls[0].outcome, CallOutcome::NotCompleted { reason: NO_RESULT.to_owned() });
    }

    #[test]
    fn a_late_result_is_a_stray_after_the_run_moved_on() {
        let links = link_events(&events(json!([
            call("a", 1),
            {"type": "message", "role": "system", "content": "note", "iteration": 1},
            call("b", 2),
            result("a", 2),
            result("b", 2),
        ])));
        assert_eq!(links.calls[0].outcome, CallOutcome::NotCompleted { reason: NO_RESULT.to_owned() });
        assert_eq!(links.calls[1].outcome, CallOutcome::Answered { by: 4 });
        assert_eq!(links.strays, vec![3]);
    }

    #[test]
    fn errors_and_human_answers_answer_calls() {
        let links = link_events(&events(json!([
            call("a", 1),
            {"type": "error", "error": "boom", "recoverable": false, "toolCallId": "a", "iteration": 1},
            call("b", 2),
            {"type": "human_input_requested", "question": "go?", "iteration": 2},
            {"type": "human_input_received", "response": "yes", "iteration": 2},
        ])));
        assert_eq!(links.calls[0].outcome, CallOutcome::Answered { by: 1 });
        assert_eq!(links.calls[1].outcome, CallOutcome::Answered { by: 4 });
        assert_eq!(links.asks, vec![AskLink { request: 3, answer: Some(4) }]);
    }

    #[test]
    fn an_interrupted_call_says_why() {
        let links = link_events(&events(json!([
            call("a", 1),
            {"type": "human_input_requested", "question": "which file?", "iteration": 1},
        ])));
        let reason = "the run stopped to ask for human input: which file?".to_owned();
        assert_eq!(links.calls[0].outcome, CallOutcome::NotCompleted { reason });
    }
}
