//! The seam for whoever follows a thread's durable changes (the OpenTelemetry export): told
//! after an append is durable and after a pop or delete took events back. Called on the
//! request's own path, so an observer only hands the news on and returns at once.

use crate::event_log::EventLog;
use crate::store::ThreadRecord;

/// Events that just became durable.
pub struct Appended {
    /// The thread after the append (its id, settings and metadata).
    pub record: ThreadRecord,
    /// The thread's events up to and including the new ones (shared text, not copied).
    pub events: EventLog,
    /// The position of the first new event in `events`.
    pub first: usize,
    /// When the append was made, ms since the epoch.
    pub at_ms: u64,
}

pub trait ThreadObserver: Send + Sync {
    fn appended(&self, appended: Appended);
    /// Events were taken back (a pop) or the thread is gone (a delete).
    fn rewound(&self, thread_id: &str);
}
