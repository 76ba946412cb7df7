//! Catching a store's search index up in the pauses between its writes, for stores whose index
//! trails their events (SQLite's and PostgreSQL's `pending_index`).
//!
//! After a write leaves events pending, one task per store waits until the store has had no
//! write for [`QUIET`], then indexes a batch a transaction until none is pending, so an append
//! arriving meanwhile waits for one batch at most, and a search finds little or nothing left to
//! do. Without a Tokio runtime (a blocking caller) nothing is scheduled, and the next search,
//! or a store opened later, catches up instead.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

/// How long the store must go without a write before the index is caught up.
pub(crate) const QUIET: Duration = Duration::from_millis(200);

/// A store whose index can be caught up a batch at a time.
pub(crate) trait IdleIndexed: Send + Sync + 'static {
    fn idle_indexing(&self) -> &IdleIndexing;

    /// Indexes one batch of pending events in its own transaction; whether some are still
    /// pending, or why it failed (a search indexes them instead).
    fn index_batch(self: Arc<Self>) -> impl Future<Output = Result<bool, String>> + Send;
}

/// The idle indexing state of one store.
#[derive(Debug, Default)]
pub(crate) struct IdleIndexing {
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
    /// Records that the store may hold pending events from before it opened (another process,
    /// a server stopped before its pause, a crash).
    pub(crate) fn pending_from_start(&self) {
        self.dirty.store(true, Ordering::Release);
    }

    /// Records a write that left events pending.
    pub(crate) fn wrote(&self) {
        self.last_write.store(now_micros(), Ordering::Relaxed);
        self.dirty.store(true, Ordering::Release);
    }

    fn quiet_for(&self) -> Duration {
        Duration::from_micros(now_micros().saturating_sub(self.last_write.load(Ordering::Relaxed)))
    }
}

/// Starts the store's task if events may be pending and none runs; cheap otherwise.
pub(crate) fn start_if_needed<S: IdleIndexed>(store: &Arc<S>) {
    let state = store.idle_indexing();
    if !state.dirty.load(Ordering::Acquire) || state.running.swap(true, Ordering::AcqRel) {
        return;
    }
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => drop(runtime.spawn(run(Arc::downgrade(store)))),
        Err(_) => state.running.store(false, Ordering::Release),
    }
}

async fn run<S: IdleIndexed>(store: Weak<S>) {
    loop {
        // Wait for a pause in the writes.
        loop {
            let Some(strong) = store.upgrade() else { return };
            let quiet = strong.idle_indexing().quiet_for();
            drop(strong);
            if quiet >= QUIET {
                break;
            }
            tokio::time::sleep(QUIET - quiet).await;
        }
        let Some(strong) = store.upgrade() else { return };
        strong.idle_indexing().dirty.store(false, Ordering::Release);
        let left = strong.clone().index_batch().await;
        let state = strong.idle_indexing();
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
