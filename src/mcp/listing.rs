//! The store's threads newest first, a page at a time, each with a short title.

use super::cursor::{self, After};
use crate::event::{EventKind, Role};
use crate::service::{ServiceResult, ThreadService};
use crate::store::ThreadRecord;
use schemars::JsonSchema;
use serde::Serialize;
use std::cmp::Ordering;

/// Longest title, in characters.
pub const TITLE_CHARS: usize = 80;
/// How many of a thread's first events are looked at for its first user message.
const TITLE_SEARCH_EVENTS: u64 = 32;

/// One thread as a listing shows it.
#[derive(Clone, Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSummary {
    pub thread_id: String,
    pub event_count: u64,
    /// Number of appends so far.
    pub version: u64,
    /// Milliseconds since the Unix epoch.
    pub created_at: u64,
    /// Milliseconds since the Unix epoch.
    pub updated_at: u64,
    /// The first user message's text, cut to 80 characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// A page of a listing.
#[derive(Debug)]
pub struct ThreadPage {
    pub threads: Vec<ThreadSummary>,
    /// Present when more threads follow.
    pub next_cursor: Option<String>,
}

/// Why a page cannot be given.
#[derive(Debug, thiserror::Error)]
pub enum ListingError {
    #[error("cursor is not one this server gave out")]
    BadCursor,
    #[error(transparent)]
    Service(#[from] crate::service::ServiceError),
}

/// Newest first; ties (same millisecond) by id, so the order is total and cursors are exact.
fn newest_first(a: &ThreadRecord, b: &ThreadRecord) -> Ordering {
    b.updated_at.cmp(&a.updated_at).then_with(|| a.thread_id.cmp(&b.thread_id))
}

fn comes_after(record: &ThreadRecord, after: &After) -> bool {
    record.updated_at < after.updated_at
        || (record.updated_at == after.updated_at && record.thread_id > after.thread_id)
}

/// Up to `limit` threads after `cursor` (from the newest when `None`).
pub async fn page(service: &ThreadService, cursor: Option<&str>, limit: usize) -> Result<ThreadPage, ListingError> {
    let after = match cursor {
        Some(cursor) => Some(cursor::decode(cursor).ok_or(ListingError::BadCursor)?),
        None => None,
    };
    let mut records = service.list().await?;
    records.retain(|record| after.as_ref().is_none_or(|after| comes_after(record, after)));
    records.sort_unstable_by(newest_first);
    let more = records.len() > limit;
    records.truncate(limit);
    let next_cursor = match (more, records.last()) {
        (true, Some(last)) => {
            Some(cursor::encode(&After { updated_at: last.updated_at, thread_id: last.thread_id.clone() }))
        }
        _ => None,
    };
    let mut threads = Vec::with_capacity(records.len());
    for record in records {
        let title = title_of(service, &record.thread_id).await?;
        threads.push(ThreadSummary {
            thread_id: record.thread_id,
            event_count: record.event_count,
            version: record.version,
            created_at: record.created_at,
            updated_at: record.updated_at,
            title,
        });
    }
    Ok(ThreadPage { threads, next_cursor })
}

/// The first user message among the thread's first events, on one line, cut to
/// [`TITLE_CHARS`].
pub async fn title_of(service: &ThreadService, thread_id: &str) -> ServiceResult<Option<String>> {
    let page = service.events(thread_id, 0, Some(TITLE_SEARCH_EVENTS)).await?;
    for index in 0..page.events.len() {
        let Some(event) = page.events.parse(index) else { continue };
        if let EventKind::Message { role: Role::User, content } = event.kind() {
            if content.is_blank() {
                continue;
            }
            return Ok(Some(one_line_cut(&content.text(), TITLE_CHARS)));
        }
    }
    Ok(None)
}

/// `text` with runs of whitespace made one space, at most `max` characters (the last an
/// ellipsis when cut).
pub fn one_line_cut(text: &str, max: usize) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() <= max {
        return joined;
    }
    let mut cut: String = joined.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_one_line_and_cut_to_the_limit() {
        assert_eq!(one_line_cut("  fix\nthe   bug ", 80), "fix the bug");
        let long = "x".repeat(200);
        let cut = one_line_cut(&long, 80);
        assert_eq!(cut.chars().count(), 80);
        assert!(cut.ends_with('…'));
        assert_eq!(one_line_cut(&"é".repeat(80), 80), "é".repeat(80));
    }
}
