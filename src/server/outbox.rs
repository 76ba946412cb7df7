//! The answers waiting to be written, and the backpressure they put on the reader.
//!
//! Answers are produced by many tasks and must never wait (a task that finished its work holds
//! nothing else), so sending to the outbox always succeeds at once. Instead the reader checks
//! [`Outbox::wait_for_room`] before it takes the next message: it stops while too many answer
//! bytes wait to be written or too many requests are still running. A client that does not read
//! its answers therefore stops the server reading its requests; it does not make it grow.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, Notify};
use tokio_util::task::TaskTracker;

/// The reader waits while at least this many answer bytes are not yet written.
pub const MAX_QUEUED_OUTPUT_BYTES: usize = 4 << 20;
/// The reader waits while this many requests (or batch entries) are running or queued.
pub const MAX_IN_FLIGHT: usize = 32;
/// Requests that end without an answer (notifications) wake no one; re-check this often then.
const RECHECK: Duration = Duration::from_millis(5);

#[derive(Default)]
struct Queued {
    bytes: AtomicUsize,
    written: Notify,
}

/// The sending side: cheap to clone, one per task that answers.
#[derive(Clone)]
pub struct Outbox {
    tx: mpsc::UnboundedSender<String>,
    queued: Arc<Queued>,
}

/// The writer's side.
pub struct OutboxReceiver {
    rx: mpsc::UnboundedReceiver<String>,
    queued: Arc<Queued>,
}

pub fn outbox() -> (Outbox, OutboxReceiver) {
    let (tx, rx) = mpsc::unbounded_channel();
    let queued = Arc::new(Queued::default());
    (Outbox { tx, queued: queued.clone() }, OutboxReceiver { rx, queued })
}

impl Outbox {
    /// Queues one answer; gives it back when the writer is gone.
    pub fn send(&self, message: String) -> Result<(), String> {
        let len = message.len();
        self.queued.bytes.fetch_add(len, Ordering::AcqRel);
        self.tx.send(message).map_err(|e| {
            self.queued.bytes.fetch_sub(len, Ordering::AcqRel);
            e.0
        })
    }

    /// Returns once there is room for one more request: fewer than [`MAX_QUEUED_OUTPUT_BYTES`]
    /// unwritten and fewer than [`MAX_IN_FLIGHT`] requests running (`running` counts them).
    pub async fn wait_for_room(&self, running: &TaskTracker) {
        loop {
            let written = self.queued.written.notified();
            tokio::pin!(written);
            // Registered before the check, so a write in between is not missed.
            written.as_mut().enable();
            if self.queued.bytes.load(Ordering::Acquire) >= MAX_QUEUED_OUTPUT_BYTES {
                // Only a write makes room: no polling while the client is not reading.
                written.await;
            } else if running.len() >= MAX_IN_FLIGHT {
                tokio::select! {
                    _ = written => {}
                    _ = tokio::time::sleep(RECHECK) => {}
                }
            } else {
                return;
            }
        }
    }
}

impl OutboxReceiver {
    /// The next answer, blocking the calling thread; `None` once every sender is gone.
    pub fn blocking_recv(&mut self) -> Option<String> {
        self.rx.blocking_recv()
    }

    /// An answer already waiting, if any.
    pub fn try_recv(&mut self) -> Option<String> {
        self.rx.try_recv().ok()
    }

    /// Marks `bytes` of answers as written and wakes a waiting reader.
    pub fn written(&self, bytes: usize) {
        self.queued.bytes.fetch_sub(bytes, Ordering::AcqRel);
        self.queued.written.notify_waiters();
    }
}
