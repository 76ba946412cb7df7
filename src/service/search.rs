//! `ThreadService::search`: a query over every thread the store holds, in pages.
//!
//! The store finds and ranks the events; this layer checks the request against its limits,
//! turns the page's place into an opaque cursor, and makes each hit's snippet from the event's
//! text with the core's rules, so every store shows the same snippet.

use super::{ServiceError, ThreadService};
use crate::search::snippet::snippet;
use crate::search::{parse_query, SearchableEvent};
use crate::store::search::{MAX_SEARCH_LIMIT, MAX_SEARCH_OFFSET};
use crate::store::SearchRequest;
use serde::Serialize;
use serde_json::Value;

/// Hits per page when the caller does not say.
pub const DEFAULT_SEARCH_LIMIT: usize = 20;

/// Most threads a search may be narrowed to at once.
pub const MAX_SEARCH_THREADS: usize = 100;

/// Most event types a search may be narrowed to at once.
pub const MAX_SEARCH_TYPES: usize = 16;

/// Where and how much to search; every field is optional.
#[derive(Clone, Debug, Default)]
pub struct SearchOptions {
    /// Hits per page, 1 to [`MAX_SEARCH_LIMIT`] (default [`DEFAULT_SEARCH_LIMIT`]).
    pub limit: Option<usize>,
    /// A previous page's `next_cursor`.
    pub cursor: Option<String>,
    pub thread_ids: Option<Vec<String>>,
    pub types: Option<Vec<String>>,
    /// Events whose `timestamp` (ms since the epoch) is at least this.
    pub since: Option<f64>,
    /// Events whose `timestamp` is before this.
    pub until: Option<f64>,
}

/// One matching event.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    pub thread_id: String,
    /// The event's position in `thread/events`.
    pub event_index: u64,
    pub iteration: Value,
    #[serde(rename = "type")]
    pub event_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The matching text, matches between `«` and `»` (see [`crate::search::snippet`]).
    pub snippet: String,
    /// Relevance, higher is better; comparable within one store only.
    pub score: f64,
}

/// A page of hits, best first.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchResults {
    pub hits: Vec<SearchHit>,
    /// Pass as `cursor` for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

const CURSOR_PREFIX: &str = "o";

fn invalid(path: &str, reason: impl Into<String>) -> ServiceError {
    ServiceError::InvalidParams { path: path.to_owned(), reason: reason.into() }
}

fn offset_of(cursor: &str) -> Result<usize, ServiceError> {
    cursor
        .strip_prefix(CURSOR_PREFIX)
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|&n| n <= MAX_SEARCH_OFFSET)
        .ok_or_else(|| invalid("cursor", "not a cursor this server gave (pass a previous page's nextCursor)"))
}

impl ThreadService {
    /// The events matching `query` (see [`crate::search::query`]), best first, one page.
    /// A malformed query, limit, cursor or filter is [`ServiceError::InvalidParams`] naming
    /// the field.
    pub async fn search(&self, query: &str, options: SearchOptions) -> Result<SearchResults, ServiceError> {
        let query = parse_query(query).map_err(|e| invalid("query", e.to_string()))?;
        let limit = options.limit.unwrap_or(DEFAULT_SEARCH_LIMIT);
        if limit == 0 || limit > MAX_SEARCH_LIMIT {
            return Err(invalid("limit", format!("must be 1 to {MAX_SEARCH_LIMIT}, got {limit}")));
        }
        let offset = options.cursor.as_deref().map(offset_of).transpose()?.unwrap_or(0);
        for (path, list, max) in
            [("threadIds", &options.thread_ids, MAX_SEARCH_THREADS), ("types", &options.types, MAX_SEARCH_TYPES)]
        {
            if let Some(list) = list {
                if list.is_empty() || list.len() > max {
                    return Err(invalid(path, format!("must name 1 to {max}, got {}", list.len())));
                }
            }
        }
        for (path, at) in [("since", options.since), ("until", options.until)] {
            if at.is_some_and(|t| !t.is_finite()) {
                return Err(invalid(path, "must be a finite number of milliseconds since the epoch"));
            }
        }
        let request = SearchRequest {
            query: query.clone(),
            limit,
            offset,
            thread_ids: options.thread_ids,
            types: options.types,
            since: options.since,
            until: options.until,
        };
        let page = self.store.search(request).await?;
        let next = offset + page.hits.len();
        let next_cursor = (page.more && next <= MAX_SEARCH_OFFSET).then(|| format!("{CURSOR_PREFIX}{next}"));
        let hits = page
            .hits
            .into_iter()
            .map(|hit| {
                let event = SearchableEvent::of_json(&hit.body);
                let (iteration, event_type, role, snippet) = match event {
                    Some(e) => (e.iteration.clone(), e.event_type.clone(), e.role.clone(), snippet(&e.text, &query)),
                    None => (Value::Null, String::new(), None, String::new()),
                };
                SearchHit {
                    thread_id: hit.thread_id,
                    event_index: hit.event_index,
                    iteration,
                    event_type,
                    role,
                    snippet,
                    score: hit.score,
                }
            })
            .collect();
        Ok(SearchResults { hits, next_cursor })
    }
}
