//! Responses items back from events: the inverse of `responses/toEvents` with `keepItems`.
//!
//! An event that kept its item (`responsesItem`) gives that item, verbatim; one that kept
//! `null` (made from no item of its own) gives nothing; a reasoning `turn_block` event gives
//! the reasoning item its block describes (such an event keeps no copy of it). Other events —
//! written by an earlier version, or by anything but that conversion — give what the
//! `openai-responses` projection makes of them, each run of them projected on its own, its
//! summaries (the projection's `instructions`) first as a system message.

use super::from_messages::KEPT_ITEM_KEY;
use super::from_responses::reasoning_item;
use crate::event::{json_type, AgentEvent, EventError};
use crate::messages::MessageOptions;
use crate::providers::{render_request, Provider};
use serde_json::{json, Value};

/// The items of `events`, in order. A kept item that is neither an object nor `null` is refused,
/// naming it: `events[3].responsesItem: expected an object or null, found string`.
pub fn responses_from_events(events: &[AgentEvent]) -> Result<Vec<Value>, EventError> {
    let mut items = Vec::with_capacity(events.len());
    let mut run_start = 0;
    for (index, event) in events.iter().enumerate() {
        let kept = match event.fields().get(KEPT_ITEM_KEY) {
            Some(kept) => kept,
            None => match reasoning_item(event.fields()) {
                Some(item) => {
                    project_run(&events[run_start..index], &mut items);
                    run_start = index + 1;
                    items.push(item);
                    continue;
                }
                None => continue,
            },
        };
        project_run(&events[run_start..index], &mut items);
        run_start = index + 1;
        match kept {
            Value::Object(_) => items.push(kept.clone()),
            Value::Null => {}
            other => {
                return Err(EventError {
                    path: format!("events[{index}].{KEPT_ITEM_KEY}"),
                    reason: format!("expected an object or null, found {}", json_type(other)),
                })
            }
        }
    }
    project_run(&events[run_start..], &mut items);
    Ok(items)
}

/// The `openai-responses` projection of events that kept no items (default render options).
fn project_run(events: &[AgentEvent], out: &mut Vec<Value>) {
    if events.is_empty() {
        return;
    }
    let text = render_request(events, &MessageOptions::default(), Provider::OpenAiResponses, false);
    let Ok(Value::Object(mut request)) = serde_json::from_str::<Value>(&text) else { return };
    if let Some(Value::String(instructions)) = request.remove("instructions") {
        out.push(json!({"type": "message", "role": "system", "content": instructions}));
    }
    if let Some(Value::Array(input)) = request.remove("input") {
        out.extend(input);
    }
}
