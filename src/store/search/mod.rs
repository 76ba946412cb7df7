//! The search index part of each store: what a store is asked and answers.
//!
//! Every store indexes the words [`crate::search::words`] makes of an event's searchable text,
//! in the same change (transaction) that appends, pops, forks or deletes the event, and
//! answers a parsed [`Query`] with the events that match it as
//! [`Query::matches`] defines. The memory store keeps an inverted index in the process
//! ([`memory`]); SQLite an FTS5 table and PostgreSQL a `tsvector` column beside their events.

pub(crate) mod memory;

use crate::search::{Query, SearchableEvent};

/// Largest page of hits.
pub const MAX_SEARCH_LIMIT: usize = 100;

/// Hits past this many are not reached by paging (a cursor further on is refused).
pub const MAX_SEARCH_OFFSET: usize = 10_000;

/// What to look for, and where.
#[derive(Clone, Debug)]
pub struct SearchRequest {
    pub query: Query,
    /// Hits to return, at most [`MAX_SEARCH_LIMIT`].
    pub limit: usize,
    /// Hits to skip (the page's place in the ranking).
    pub offset: usize,
    /// Only these threads, when given.
    pub thread_ids: Option<Vec<String>>,
    /// Only events of these types, when given.
    pub types: Option<Vec<String>>,
    /// Only events whose `timestamp` (ms since the epoch) is at least this; events without a
    /// timestamp are left out when `since` or `until` is given.
    pub since: Option<f64>,
    /// Only events whose `timestamp` is before this.
    pub until: Option<f64>,
}

impl SearchRequest {
    /// Whether an event passes the type and time filters (the query aside).
    pub fn admits(&self, event_type: &str, timestamp: Option<f64>) -> bool {
        if let Some(types) = &self.types {
            if !types.iter().any(|t| t == event_type) {
                return false;
            }
        }
        if self.since.is_none() && self.until.is_none() {
            return true;
        }
        let Some(at) = timestamp else { return false };
        self.since.is_none_or(|since| at >= since) && self.until.is_none_or(|until| at < until)
    }
}

/// One matching event, as the store holds it.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredHit {
    pub thread_id: String,
    /// The event's position in its thread.
    pub event_index: u64,
    /// Relevance; higher is better. Comparable within one store only.
    pub score: f64,
    /// The event's JSON, for the snippet and the fields a hit reports.
    pub body: String,
}

/// One page of hits, best first; ties in thread creation order, then event order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchPage {
    pub hits: Vec<StoredHit>,
    /// Whether more hits follow this page.
    pub more: bool,
}

/// The words an event's JSON is indexed under.
pub fn indexed_words(body: &str) -> Vec<String> {
    SearchableEvent::of_json(body).map(|e| crate::search::words(&e.text)).unwrap_or_default()
}

/// How often a build of a whole index reports progress (events).
pub const BUILD_PROGRESS_EVERY: u64 = 50_000;
