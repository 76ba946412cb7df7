//! `list_threads`: the store's threads, newest first (by `updatedAt`), a page at a time.

use super::{service_error, ToolOutput, ToolResult};
use crate::mcp::listing::{self, ListingError, ThreadSummary};
use crate::service::ThreadService;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

pub const NAME: &str = "list_threads";
pub const DESCRIPTION: &str = "List the stored agent threads, newest first (by updatedAt), a page at a time. \
Each has its id, event count, version, created/updated times (ms since the Unix epoch) and a title (its first \
user message, cut to 80 characters). Pass nextCursor back as cursor for the next page. Read a thread with read_thread.";

pub const DEFAULT_LIMIT: u32 = 50;
pub const MAX_LIMIT: u32 = 200;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ListThreadsArgs {
    /// Most threads in the page: 1 to 200 (default 50).
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<u32>,
    /// The nextCursor of the previous page; leave out for the newest threads.
    pub cursor: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListThreadsOutput {
    pub threads: Vec<ThreadSummary>,
    /// Present when more threads follow: pass it as cursor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

pub async fn call(service: &ThreadService, args: ListThreadsArgs) -> ToolResult {
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(format!("invalid arguments: limit must be 1 to {MAX_LIMIT}, got {limit}"));
    }
    let page = listing::page(service, args.cursor.as_deref(), limit as usize).await.map_err(|e| match e {
        ListingError::BadCursor => "invalid arguments: cursor is not one this server gave out".to_owned(),
        ListingError::Service(e) => service_error(e),
    })?;
    let output = ListThreadsOutput { threads: page.threads, next_cursor: page.next_cursor };
    let text = render(&output);
    Ok(ToolOutput::new(&output, text))
}

/// One line per thread, then where the next page is.
fn render(output: &ListThreadsOutput) -> String {
    let mut text = String::new();
    if output.threads.is_empty() {
        text.push_str("No threads.\n");
    }
    for thread in &output.threads {
        let _ = write!(
            text,
            "{}  {} events  version {}  updatedAt {}",
            thread.thread_id, thread.event_count, thread.version, thread.updated_at
        );
        if let Some(title) = &thread.title {
            let _ = write!(text, "  {title:?}");
        }
        text.push('\n');
    }
    if let Some(cursor) = &output.next_cursor {
        let _ = writeln!(text, "More threads: call list_threads with cursor {cursor:?}.");
    }
    text
}
