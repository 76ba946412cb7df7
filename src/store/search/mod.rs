//! The search index part of each store: what a store is asked and answers.
//!
//! Every store indexes the words [`crate::search::words`] makes of an event's searchable text,
//! and answers a parsed [`Query`] with the events that match it as [`Query::matches`] defines.
//! The memory store keeps an inverted index in the process ([`memory`]), changed with the
//! events. SQLite (an FTS5 table) and PostgreSQL (a table of `tsvector`s) let the index trail
//! the appends (each store's `pending_index`, sharing `catch_up`): it is caught up in the
//! pauses between writes (`idle`) and by each search before it reads; pops and deletes remove
//! what they remove from it too.

pub(crate) mod catch_up;
pub(crate) mod idle;
pub(crate) mod memory;

use crate::search::{Query, SearchableEvent};

/// Largest page of hits.
pub const MAX_SEARCH_LIMIT: usize = 100;

/// Hits past this many are not reached by paging (a cursor further on is refused).
pub const MAX_SEARCH_OFFSET: usize = 10_000;

/// Matches are ranked in windows of this many, newest first: the newest [`RANK_WINDOW`]
/// matching events (the newest thread first, its last event first) ranked by relevance, then
/// the next [`RANK_WINDOW`], and so on. A query with fewer matches is ranked by relevance
/// alone. Every store windows the same way, so a window holds the same events in each; and
/// a store ranks a page's window, never every match of a word found in most events (FTS5 has
/// no top-k: `ORDER BY bm25() LIMIT 20` scores them all).
pub const RANK_WINDOW: usize = 1_000;

/// The part of one ranking window a page takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowSlice {
    /// The window's number: 0 holds the newest [`RANK_WINDOW`] matches.
    pub window: usize,
    /// Hits of the window's ranking to skip, then to take.
    pub skip: usize,
    pub take: usize,
}

impl WindowSlice {
    /// Matches (newest first) before the window.
    pub fn first_match(&self) -> usize {
        self.window * RANK_WINDOW
    }
}

/// The window slices that hold hits `offset..offset + count` of the ranking, in order.
pub fn window_slices(offset: usize, count: usize) -> Vec<WindowSlice> {
    let mut slices = Vec::new();
    let (mut at, end) = (offset, offset + count);
    while at < end {
        let window = at / RANK_WINDOW;
        let stop = ((window + 1) * RANK_WINDOW).min(end);
        slices.push(WindowSlice { window, skip: at - window * RANK_WINDOW, take: stop - at });
        at = stop;
    }
    slices
}

/// A page and one more hit (to tell whether more follow), gathered window slice by window
/// slice ([`window_slices`]) from a store that ranks one slice at a time.
pub struct WindowedPage {
    slices: std::vec::IntoIter<WindowSlice>,
    hits: Vec<StoredHit>,
    limit: usize,
    done: bool,
}

impl WindowedPage {
    pub fn new(request: &SearchRequest) -> Self {
        let slices = window_slices(request.offset, request.limit + 1).into_iter();
        WindowedPage { slices, hits: Vec::new(), limit: request.limit, done: false }
    }

    /// The next slice to rank, until the page is full or a window ran short.
    pub fn next_slice(&mut self) -> Option<WindowSlice> {
        if self.done {
            return None;
        }
        self.slices.next()
    }

    /// The hits of the slice [`WindowedPage::next_slice`] gave, best first.
    pub fn add(&mut self, slice: WindowSlice, hits: impl IntoIterator<Item = StoredHit>) {
        let before = self.hits.len();
        self.hits.extend(hits);
        // A window with fewer matches than asked for is the last one.
        self.done = self.hits.len() - before < slice.take;
    }

    pub fn finish(mut self) -> SearchPage {
        let more = self.hits.len() > self.limit;
        self.hits.truncate(self.limit);
        SearchPage { hits: self.hits, more }
    }
}

/// [`WindowedPage`] for a store that ranks a slice synchronously.
pub fn page_by_windows<E>(
    request: &SearchRequest,
    mut ranked_slice: impl FnMut(WindowSlice) -> Result<Vec<StoredHit>, E>,
) -> Result<SearchPage, E> {
    let mut page = WindowedPage::new(request);
    while let Some(slice) = page.next_slice() {
        let hits = ranked_slice(slice)?;
        page.add(slice, hits);
    }
    Ok(page.finish())
}

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

/// One page of hits, best first within each window of [`RANK_WINDOW`] (ties in thread
/// creation order, then event order).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_takes_one_window_or_the_ends_of_two() {
        assert_eq!(window_slices(0, 21), [WindowSlice { window: 0, skip: 0, take: 21 }]);
        assert_eq!(
            window_slices(990, 21),
            [WindowSlice { window: 0, skip: 990, take: 10 }, WindowSlice { window: 1, skip: 0, take: 11 }]
        );
        assert_eq!(window_slices(2_000, 1), [WindowSlice { window: 2, skip: 0, take: 1 }]);
        assert!(window_slices(5, 0).is_empty());
    }
}
