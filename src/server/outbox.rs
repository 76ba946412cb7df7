//! The answers waiting to be written, and the backpressure they put on the reader.
//!
//! Answers are produced by many tasks and must never wait (a task that finished its work holds
//! nothing else), so sending to the outbox always succeeds at once. Instead the reader checks
//! [`Outbox::wait_for_room`] before it takes the next message: it stops while too many answer
//! bytes wait to be written or too many requests are still running. A client that does not read
//! its answers therefore stops the server reading its requests; it does not make it grow.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
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

/// Writes answers to the output; the writer thread and, on the fast path, answering tasks
/// share it.
pub trait AnswerWriter: Send {
    /// Frames and writes answers, then flushes; false once the output has failed.
    fn write_answers(&mut self, answers: &[&str]) -> bool;
}

pub type SharedWriter = Arc<Mutex<Box<dyn AnswerWriter>>>;

/// The sending side: cheap to clone, one per task that answers.
#[derive(Clone)]
pub struct Outbox {
    tx: mpsc::UnboundedSender<String>,
    queued: Arc<Queued>,
    writer: SharedWriter,
}

/// The writer's side.
pub struct OutboxReceiver {
    rx: mpsc::UnboundedReceiver<String>,
    queued: Arc<Queued>,
}

pub fn outbox(writer: SharedWriter) -> (Outbox, OutboxReceiver) {
    let (tx, rx) = mpsc::unbounded_channel();
    let queued = Arc::new(Queued::default());
    (Outbox { tx, queued: queued.clone(), writer }, OutboxReceiver { rx, queued })
}

impl Outbox {
    /// Writes one answer: at once when nothing waits to be written and no one is writing
    /// (saving the hand-off to the writer thread, most of a small request's round trip),
    /// else queued for the writer thread. Gives it back when the writer is gone.
    pub fn send(&self, message: String) -> Result<(), String> {
        let message = match CORK.with(|cork| match cork.borrow_mut().as_mut() {
            Some(held) => {
                held.push(message);
                None
            }
            None => Some(message),
        }) {
            Some(message) => message,
            None => return Ok(()),
        };
        if self.queued.bytes.load(Ordering::Acquire) == 0 {
            if let Ok(mut writer) = self.writer.try_lock() {
                // A client that does not read blocks this write, and with it whoever answers
                // next: that is the backpressure, as when the writer thread blocks.
                if !writer.write_answers(&[&message]) {
                    return Err(message);
                }
                drop(writer);
                freed_after_writing(message);
                return Ok(());
            }
        }
        let len = message.len();
        self.queued.bytes.fetch_add(len, Ordering::AcqRel);
        self.tx.send(message).map_err(|e| {
            self.queued.bytes.fetch_sub(len, Ordering::AcqRel);
            e.0
        })
    }

    /// Writes answers held by [`corked`], in one write when the fast path allows.
    pub fn send_all(&self, messages: &mut Vec<String>) {
        if messages.is_empty() {
            return;
        }
        if self.queued.bytes.load(Ordering::Acquire) == 0 {
            if let Ok(mut writer) = self.writer.try_lock() {
                let answers: Vec<&str> = messages.iter().map(String::as_str).collect();
                writer.write_answers(&answers);
                drop((answers, writer));
                for message in messages.drain(..) {
                    freed_after_writing(message);
                }
                return;
            }
        }
        for message in messages.drain(..) {
            let _ = self.send(message);
        }
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

/// After an answer of at least this many bytes is written, freed memory is given back at once.
const GIVE_BACK_AFTER_BYTES: usize = 32 << 20;

/// Frees a written answer; a big one's memory, and what its making freed (its copies, the
/// renderers' scratch), goes back to the system now rather than at the next big free.
pub fn freed_after_writing(answer: String) {
    let big = answer.len() >= GIVE_BACK_AFTER_BYTES;
    drop(answer);
    if big {
        crate::service::give_back_memory();
    }
}

thread_local! {
    /// Answers held back while the reader handles messages that were already read.
    static CORK: std::cell::RefCell<Option<Vec<String>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` (which must not await: answers are held on this thread) holding back every answer
/// sent meanwhile, and appends those to `held`. The reader handles the messages it has already
/// read this way and writes their answers together when it has to wait for input: one write
/// for a pipelined burst instead of one per answer.
pub fn corked<R>(held: &mut Vec<String>, f: impl FnOnce() -> R) -> R {
    CORK.with(|cork| *cork.borrow_mut() = Some(std::mem::take(held)));
    let result = f();
    *held = CORK.with(|cork| cork.borrow_mut().take()).unwrap_or_default();
    result
}
