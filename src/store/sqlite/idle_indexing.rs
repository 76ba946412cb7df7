//! Catching the search index up in the pauses between writes ([`super::pending_index`]).
//!
//! After a write leaves events pending, one task per store waits until the store has had no
//! write for [`QUIET`], then indexes [`BATCH`] events a transaction until none is pending, so
//! an append arriving meanwhile waits for one batch at most. A search finds little or nothing
//! left to do. Without a Tokio runtime (a blocking caller) nothing is scheduled, and the next
//! search, or a store opened later, catches up instead.

use super::{pending_index, Fail, Shared};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

/// How long the store must go without a write before the index is caught up.
const QUIET: Duration = Duration::from_millis(200);

/// Events indexed per transaction (about 10–25 ms of work).
const BATCH: u64 = 2_000;

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
    /// A store that may hold pending events from before (another process, a crash).
    pub(super) fn pending_from_start() -> Self {
        let state = IdleIndexing::default();
        state.dirty.store(true, Ordering::Relaxed);
        state
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
pub(super) fn start_if_needed(shared: &Arc<Shared>) {
    let state = &shared.idle_indexing;
    if !state.dirty.load(Ordering::Acquire) || state.running.swap(true, Ordering::AcqRel) {
        return;
    }
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => drop(runtime.spawn(run(Arc::downgrade(shared)))),
        Err(_) => state.running.store(false, Ordering::Release),
    }
}

async fn run(store: Weak<Shared>) {
    loop {
        // Wait for a pause in the writes.
        loop {
            let Some(shared) = store.upgrade() else { return };
            let quiet = shared.idle_indexing.quiet_for();
            drop(shared);
            if quiet >= QUIET {
                break;
            }
            tokio::time::sleep(QUIET - quiet).await;
        }
        let Some(shared) = store.upgrade() else { return };
        shared.idle_indexing.dirty.store(false, Ordering::Release);
        let batch = shared.clone();
        let left = tokio::task::spawn_blocking(move || batch.with_connection(index_batch)).await;
        let state = &shared.idle_indexing;
        match left {
            Ok(Ok(true)) => {
                state.dirty.store(true, Ordering::Release);
                continue;
            }
            Ok(Ok(false)) => {}
            Ok(Err(error)) => tracing::debug!(%error, "indexing pending events for search failed; a search will"),
            Err(error) => tracing::debug!(%error, "the indexing task failed; a search will index instead"),
        }
        state.running.store(false, Ordering::Release);
        // A write that came while the batch ran saw the task running and left it to us.
        if !state.dirty.load(Ordering::Acquire) || state.running.swap(true, Ordering::AcqRel) {
            return;
        }
    }
}

/// One batch in its own transaction; whether events are still pending.
fn index_batch(conn: &mut rusqlite::Connection) -> Result<bool, Fail> {
    Ok(pending_index::catch_up_now(conn, BATCH)?.left)
}
