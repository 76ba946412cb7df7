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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::{Limits, ThreadService};
    use crate::store::MemoryStore;
    use serde_json::json;
    use std::sync::{Arc, Mutex};

    /// What the service told it, in order.
    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);

    impl ThreadObserver for Recorder {
        fn appended(&self, a: Appended) {
            let line = format!(
                "appended {} first {} of {} v{}",
                a.record.thread_id,
                a.first,
                a.events.len(),
                a.record.version
            );
            self.0.lock().unwrap().push(line);
        }
        fn rewound(&self, thread_id: &str) {
            self.0.lock().unwrap().push(format!("rewound {thread_id}"));
        }
    }

    #[tokio::test]
    async fn durable_appends_pops_and_deletes_are_told_and_failures_are_not() {
        let recorder = Arc::new(Recorder::default());
        let store = Arc::new(MemoryStore::new(10));
        let service = ThreadService::new(store, Limits::default()).with_observer(recorder.clone());
        service.open(Some("t".into()), None, None).await.unwrap();
        let event = |i: u64| json!({"type": "message", "role": "user", "content": "x", "iteration": i});
        let events = |n: u64| service.validate_events((0..n).map(event).collect()).unwrap();
        service.append("t", events(2), None).await.unwrap();
        service.append("t", events(1), Some(1)).await.unwrap();
        // A version conflict stores nothing and tells nothing.
        assert!(service.append("t", events(1), Some(0)).await.is_err());
        service.pop("t", 1, None).await.unwrap();
        service.append("t", events(1), None).await.unwrap();
        assert!(service.delete("t").await.unwrap());
        assert!(!service.delete("t").await.unwrap(), "nothing to delete: nothing told");
        assert_eq!(
            *recorder.0.lock().unwrap(),
            [
                "appended t first 0 of 2 v1",
                "appended t first 2 of 3 v2",
                "rewound t",
                "appended t first 2 of 3 v4",
                "rewound t",
            ]
        );
    }
}
