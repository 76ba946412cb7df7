//! `search_threads`: full-text search over the store's threads.
//!
//! The query language is `thread/search`'s (words, `"phrases"`, `prefix*`, `-excluded`); hits
//! come best first, each naming its thread and event, with its snippet.

use super::{ToolOutput, ToolResult};
use crate::service::{SearchOptions, ThreadService};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const NAME: &str = "search_threads";
pub const DESCRIPTION: &str = "Search the stored threads' text; each hit names its thread and event (read it \
with read_thread fromEvent or get_event).";

/// Whether this build can search (and so lists the tool).
pub const AVAILABLE: bool = true;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SearchThreadsArgs {
    /// What to look for.
    pub query: String,
    /// Most hits: 1 to 100 (default 20).
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
    /// A previous answer's `nextCursor`, for the next page.
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchThreadsOutput {
    pub hits: Vec<SearchHit>,
    /// Pass as `cursor` for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    pub thread_id: String,
    pub event_index: u64,
    /// The event's type (`message`, `tool_result`, …).
    #[serde(rename = "type")]
    pub event_type: String,
    /// The matching text around the hit, matches between `«` and `»`.
    pub snippet: String,
}

pub async fn search_threads(service: &ThreadService, args: SearchThreadsArgs) -> ToolResult {
    let options =
        SearchOptions { limit: args.limit.map(|n| n as usize), cursor: args.cursor, ..SearchOptions::default() };
    let results = service.search(&args.query, options).await.map_err(|e| e.to_string())?;
    let hits = results
        .hits
        .into_iter()
        .map(|hit| SearchHit {
            thread_id: hit.thread_id,
            event_index: hit.event_index,
            event_type: hit.event_type,
            snippet: hit.snippet,
        })
        .collect();
    let output = SearchThreadsOutput { hits, next_cursor: results.next_cursor };
    // The text form: a line a hit, as the command line prints them.
    let mut text: String = output
        .hits
        .iter()
        .map(|hit| format!("{}:{} [{}] {}\n", hit.thread_id, hit.event_index, hit.event_type, hit.snippet))
        .collect();
    if text.is_empty() {
        text.push_str("no hits\n");
    }
    if let Some(cursor) = &output.next_cursor {
        text.push_str(&format!("(more: pass cursor {cursor:?})\n"));
    }
    Ok(ToolOutput::new(&output, text))
}
