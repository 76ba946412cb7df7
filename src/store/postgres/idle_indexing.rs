//! Catching the search index up in the pauses between writes ([`super::pending_index`]).
//!
//! After a write of this server leaves events pending, one task per store waits until the
//! store has had no write for [`QUIET`], then indexes [`BATCH`] events a transaction until none
//! is pending, skipping threads that a change holds at that moment (their server catches up
//! after it, or the next search does). It indexes other servers' pending events too: the
//! database is one index.

use super::pending_index::{Locked, BATCH};
use super::Database;
use crate::store::StoreResult;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

/// How long the store must go without a write before the index is caught up.
const QUIET: Duration = Duration::from_millis(200);

/// The idle indexing state of one store.
#[derive(Debug, Default)]
pub(super) struct IdleIndexing {
    /// Some write may have left events pending since the task last looked.
    dirty: AtomicBool,
    /// The task is scheduled or running.
    running: AtomicBool,
    /// When the last write was, in µs since [`epoch`].
    last_write: AtomicU64,
}

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn now_micros() -> u64 {
    epoch().elapsed().as_micros() as u64
}

impl IdleIndexing {
    /// Records that the database held pending events when the store connected (another
    /// server's, a server stopped before its pause).
    pub(super) fn pending_from_start(&self) {
        self.dirty.store(true, Ordering::Release);
    }

    /// Records a write that left events pending.
    pub(super) fn wrote(&self) {
        self.last_write.store(now_micros(), Ordering::Relaxed);
        self.dirty.store(true, Ordering::Release);
    }

    fn quiet_for(&self) -> Duration {
        Duration::from_micros(now_micros().saturating_sub(self.last_write.load(Ordering::Relaxed)))
    }
}

/// Starts the store's task if events may be pending and none runs; cheap otherwise.
pub(super) fn start_if_needed(db: &Arc<Database>) {
    let state = &db.idle_indexing;
    if !state.dirty.load(Ordering::Acquire) || state.running.swap(true, Ordering::AcqRel) {
        return;
    }
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => drop(runtime.spawn(run(Arc::downgrade(db)))),
        Err(_) => state.running.store(false, Ordering::Release),
    }
}

async fn run(store: Weak<Database>) {
    loop {
        // Wait for a pause in the writes.
        loop {
            let Some(db) = store.upgrade() else { return };
            let quiet = db.idle_indexing.quiet_for();
            drop(db);
            if quiet >= QUIET {
                break;
            }
            tokio::time::sleep(QUIET - quiet).await;
        }
        let Some(db) = store.upgrade() else { return };
        db.idle_indexing.dirty.store(false, Ordering::Release);
        let left = index_batch(&db).await;
        let state = &db.idle_indexing;
        match left {
            Ok(true) => {
                state.dirty.store(true, Ordering::Release);
                continue;
            }
            Ok(false) => {}
            Err(error) => tracing::debug!(%error, "indexing pending events for search failed; a search will"),
        }
        state.running.store(false, Ordering::Release);
        // A write that came while the batch ran saw the task running and left it to us.
        if !state.dirty.load(Ordering::Acquire) || state.running.swap(true, Ordering::AcqRel) {
            return;
        }
    }
}

/// One batch in its own transaction; whether events are still pending.
async fn index_batch(db: &Database) -> StoreResult<bool> {
    Ok(db.index_pending_batch(BATCH, Locked::Skip).await?.left)
}
