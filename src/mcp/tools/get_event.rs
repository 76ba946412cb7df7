//! `get_event`: one event as stored (its JSON exactly as kept; media parts name their blob).

use super::{service_error, ToolOutput, ToolResult};
use crate::service::ThreadService;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const NAME: &str = "get_event";
pub const DESCRIPTION: &str = "Get one event of a thread, whole, as stored (JSON). Media parts name their blob \
(sha256:…) and never carry bytes. Use it for an event read_thread cut to fit its budget.";

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetEventArgs {
    pub thread_id: String,
    /// The event's index in the thread, from 0 (the #N of read_thread's lines).
    pub event_index: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GetEventOutput {
    pub thread_id: String,
    pub event_index: u64,
    pub event_count: u64,
    /// The event as stored.
    pub event: Value,
}

pub async fn call(service: &ThreadService, args: GetEventArgs) -> ToolResult {
    let page = service.events(&args.thread_id, args.event_index, Some(1)).await.map_err(service_error)?;
    let Some(json) = page.events.get(0) else {
        return Err(format!(
            "eventIndex {} is past the end of thread {:?}, which has {} events (0 to {})",
            args.event_index,
            args.thread_id,
            page.event_count,
            page.event_count.saturating_sub(1)
        ));
    };
    let text = json.to_owned();
    let event: Value = serde_json::from_str(json).map_err(|e| format!("stored event unreadable: {e}"))?;
    let output = GetEventOutput {
        thread_id: args.thread_id,
        event_index: args.event_index,
        event_count: page.event_count,
        event,
    };
    Ok(ToolOutput::new(&output, text))
}
