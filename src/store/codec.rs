//! How durable stores keep events, settings and metadata: as JSON text.
//!
//! An event is stored as the compact JSON of its fields in received order (serde_json keeps
//! insertion order), and validated again when read, so what comes back is what went in.

use super::{StoreError, StoreResult, ThreadRecord};
use crate::event_log::EventLogBuilder;
use serde::Serialize;
use serde_json::{Map, Value};

pub fn encode_json<T: Serialize>(value: &T) -> StoreResult<String> {
    serde_json::to_string(value).map_err(|e| StoreError::Unavailable(format!("cannot encode as JSON: {e}")))
}

/// A 0-based event position as the databases' signed 64-bit integers hold it. Positions past
/// `i64::MAX` become `i64::MAX` (no thread has that many events), not a negative number that
/// would select every event.
pub fn seq_bound(from: u64) -> i64 {
    i64::try_from(from).unwrap_or(i64::MAX)
}

/// Reads a stored event back into `events`, validating it; `seq` names it if the stored text is
/// damaged.
pub fn decode_event(thread_id: &str, seq: u64, body: &str, events: &mut EventLogBuilder) -> StoreResult<()> {
    let damaged = |reason: String| {
        StoreError::Unavailable(format!("stored event {seq} of thread {thread_id:?} is damaged: {reason}"))
    };
    events.push_checked(body, &format!("events[{seq}]")).map_err(|e| damaged(e.to_string()))
}

/// A thread row as the database returns it.
pub struct RawRecord {
    pub thread_id: String,
    pub version: i64,
    pub event_count: i64,
    pub settings: String,
    pub metadata: String,
    pub created_at: i64,
    pub updated_at: i64,
}

impl RawRecord {
    pub fn decode(self) -> StoreResult<ThreadRecord> {
        let damaged = |what: &str, e: serde_json::Error| {
            StoreError::Unavailable(format!("stored {what} of thread {:?} are damaged: {e}", self.thread_id))
        };
        let settings = serde_json::from_str(&self.settings).map_err(|e| damaged("settings", e))?;
        let metadata: Map<String, Value> = serde_json::from_str(&self.metadata).map_err(|e| damaged("metadata", e))?;
        Ok(ThreadRecord {
            version: self.version as u64,
            event_count: self.event_count as u64,
            settings,
            metadata,
            created_at: self.created_at as u64,
            updated_at: self.updated_at as u64,
            thread_id: self.thread_id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_keep_their_key_order_and_unknown_fields() {
        let text =
            r#"{"zeta":1,"type":"message","iteration":2,"role":"user","content":"hi","extra":{"b":1,"a":[1.5,null]}}"#;
        let mut events = EventLogBuilder::new();
        decode_event("t", 0, text, &mut events).unwrap();
        assert_eq!(events.finish().get(0), Some(text));
    }

    #[test]
    fn positions_past_i64_max_stay_past_the_end() {
        assert_eq!(seq_bound(0), 0);
        assert_eq!(seq_bound(i64::MAX as u64), i64::MAX);
        assert_eq!(seq_bound(i64::MAX as u64 + 1), i64::MAX);
        assert_eq!(seq_bound(u64::MAX), i64::MAX);
    }

    #[test]
    fn damaged_events_are_reported_with_their_position() {
        let err = decode_event("t1", 7, r#"{"type":"message"}"#, &mut EventLogBuilder::new()).unwrap_err();
        assert_eq!(
            err,
            StoreError::Unavailable("stored event 7 of thread \"t1\" is damaged: events[7].iteration: missing".into())
        );
    }
}
