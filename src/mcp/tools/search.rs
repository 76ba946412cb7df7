//! `search_threads`: full-text search over the store's threads.
//!
//! SEARCH: the one place search is wired in. Until `ThreadService::search` exists this tool
//! is not listed and a call answers a tool error. To enable it: set [`AVAILABLE`] to true,
//! fill [`SearchThreadsOutput`] with what a hit carries, and call the service in
//! [`search_threads`]. Nothing else in the MCP server needs to change.

use super::ToolResult;
use crate::service::ThreadService;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const NAME: &str = "search_threads";
pub const DESCRIPTION: &str = "Search the stored threads' text; each hit names its thread and event (read it \
with read_thread fromEvent or get_event).";

/// Whether this build can search (and so lists the tool).
pub const AVAILABLE: bool = false;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchThreadsArgs {
    /// What to look for.
    pub query: String,
    /// Most hits: 1 to 200 (default 20).
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchThreadsOutput {
    pub hits: Vec<SearchHit>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    pub thread_id: String,
    pub event_index: u64,
    /// The matching text around the hit.
    pub snippet: String,
}

pub async fn search_threads(service: &ThreadService, args: SearchThreadsArgs) -> ToolResult {
    let _ = (service, args);
    Err("search is not available in this build".to_owned())
}
