//! Group commit: the appends waiting at one moment go to the database together, so they share
//! one transaction, one round trip and one flush of the write-ahead log (`append`).
//!
//! Each server runs one committer. An append queues its request and waits for its own answer.
//! The committer keeps at most `slots` transactions in flight; while they are all busy, requests
//! pile up, and the next free slot takes every one waiting (up to [`MAX_BATCH`]). A lone
//! append therefore goes out at once, as its own statement; under load the batches grow by
//! themselves. A free slot also holds the waiting appends back (for at most the hold) while
//! threads answered a moment ago are due back (`pace`), so loops that call again at once
//! commit together instead of in small groups taking turns. Each append's own statement decides its fate (its thread's row is locked and
//! its `expectedVersion` checked there), so one append's conflict or missing thread is its
//! answer alone; an error, which rolls the whole transaction back, sends each append again on
//! its own. Appends to one thread go out one after the other, in the order they came.

use super::pace::Pace;
use super::Database;
use crate::event_log::EventLog;
use crate::store::{Appended, StoreError, StoreResult};
use futures_util::stream::{FuturesUnordered, StreamExt};
use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::error::TryRecvError;
use tokio::sync::{mpsc, oneshot};

/// Most appends one transaction carries; more wait for the next.
pub const MAX_BATCH: usize = 64;

/// One append on its way to the database.
pub struct AppendRequest {
    pub thread_id: String,
    pub expected_version: Option<u64>,
    pub events: EventLog,
    pub now: u64,
    pub reply: oneshot::Sender<StoreResult<Appended>>,
    pub arrived: Instant,
}

/// The queue into a server's committer; the committer ends when this is dropped.
pub struct GroupCommitter {
    queue: mpsc::UnboundedSender<AppendRequest>,
}

impl GroupCommitter {
    /// Starts the committer on the current runtime, with at most `slots` transactions in flight
    /// and waiting appends held back for others for at most `hold`.
    pub fn start(db: Arc<Database>, slots: usize, hold: Duration) -> Self {
        let (queue, requests) = mpsc::unbounded_channel();
        tokio::spawn(run(db, requests, slots.max(1), Pace::new(hold)));
        GroupCommitter { queue }
    }

    /// Appends, answered once the transaction that holds it has committed.
    pub async fn append(
        &self,
        thread_id: String,
        expected_version: Option<u64>,
        events: EventLog,
        now: u64,
    ) -> StoreResult<Appended> {
        let (reply, answer) = oneshot::channel();
        let request = AppendRequest { thread_id, expected_version, events, now, reply, arrived: Instant::now() };
        if self.queue.send(request).is_err() {
            return Err(StoreError::Unavailable("PostgreSQL: the committer has stopped".into()));
        }
        answer.await.unwrap_or_else(|_| Err(StoreError::Unavailable("PostgreSQL: the committer has stopped".into())))
    }
}

/// Forms batches and runs them, at most `slots` at once, in this one task (no hand-off to
/// another task between an append's arrival and its transaction).
async fn run(db: Arc<Database>, mut requests: mpsc::UnboundedReceiver<AppendRequest>, slots: usize, mut pace: Pace) {
    // Requests not sent yet, oldest first (appends to a thread already in the batch being
    // formed wait here for a later one, in order).
    let mut waiting: VecDeque<AppendRequest> = VecDeque::new();
    // Threads with an append in flight: the next append to one waits for it (order kept).
    let mut busy: HashSet<String> = HashSet::new();
    let mut in_flight = FuturesUnordered::new();
    let mut open = true;
    loop {
        while open {
            match requests.try_recv() {
                Ok(request) => queue(request, &mut waiting, &mut pace),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => open = false,
            }
        }
        // Hold the waiting back while threads answered a moment ago are due (the oldest
        // waiting for at most the hold).
        let now = Instant::now();
        let held_until = match waiting.front() {
            Some(oldest) if open && in_flight.len() < slots => pace.wait_until(now, oldest.arrived + pace.hold()),
            _ => None,
        };
        // A free slot takes everything waiting (while all are busy, a batch forms).
        while held_until.is_none() && in_flight.len() < slots {
            let batch = next_batch(&mut waiting, &mut busy);
            if batch.is_empty() {
                break;
            }
            in_flight.push(commit(db.clone(), batch));
        }
        if !open && waiting.is_empty() && in_flight.is_empty() {
            return;
        }
        tokio::select! {
            Some(done) = in_flight.next(), if !in_flight.is_empty() => {
                let now = Instant::now();
                for thread_id in done {
                    pace.answered(&thread_id, now);
                    busy.remove(&thread_id);
                }
            }
            request = requests.recv(), if open => match request {
                Some(request) => queue(request, &mut waiting, &mut pace),
                None => open = false,
            },
            () = tokio::time::sleep_until(held_until.unwrap_or(now).into()), if held_until.is_some() => {}
        }
    }
}

/// A request joins the waiting ones, and its thread's pace learns it came.
fn queue(request: AppendRequest, waiting: &mut VecDeque<AppendRequest>, pace: &mut Pace) {
    pace.arrived(&request.thread_id, request.arrived);
    waiting.push_back(request);
}

/// Takes the next batch from the front of `waiting`: each thread once and none of the `busy`
/// ones, up to [`MAX_BATCH`]; its threads become busy.
fn next_batch(waiting: &mut VecDeque<AppendRequest>, busy: &mut HashSet<String>) -> Vec<AppendRequest> {
    let mut batch = Vec::new();
    let mut held = VecDeque::new();
    while let Some(request) = waiting.pop_front() {
        take_or_hold(request, &mut batch, busy, &mut held);
        if batch.len() == MAX_BATCH {
            break;
        }
    }
    held.append(waiting);
    *waiting = held;
    batch
}

fn take_or_hold(
    request: AppendRequest,
    batch: &mut Vec<AppendRequest>,
    threads: &mut HashSet<String>,
    held: &mut VecDeque<AppendRequest>,
) {
    if batch.len() < MAX_BATCH
        && !held.iter().any(|h| h.thread_id == request.thread_id)
        && threads.insert(request.thread_id.clone())
    {
        batch.push(request);
        return;
    }
    held.push_back(request);
}

/// Sends one batch and answers each of its appends; yields its threads.
async fn commit(db: Arc<Database>, batch: Vec<AppendRequest>) -> Vec<String> {
    let threads = batch.iter().map(|r| r.thread_id.clone()).collect();
    let outcome = db.append_batch(&batch).await;
    match outcome {
        Ok(results) => {
            for (request, result) in batch.into_iter().zip(results) {
                let _ = request.reply.send(result);
            }
        }
        // The database refused a statement and rolled the transaction back: each append goes again alone,
        // so whatever one of them caused is its answer only.
        Err(BatchFailure::RolledBack(e)) if batch.len() > 1 => {
            tracing::debug!(appends = batch.len(), error = %e, "group commit rolled back; appending one by one");
            for request in batch {
                let result = db.append_alone(&request).await;
                let _ = request.reply.send(result);
            }
        }
        Err(BatchFailure::RolledBack(_)) => {
            let request = batch.into_iter().next().expect("a batch holds an append");
            let result = db.append_alone(&request).await;
            let _ = request.reply.send(result);
        }
        // The connection failed: whether the transaction committed is unknown, so no append of
        // it may be sent again; each is answered with the failure (-32005).
        Err(BatchFailure::Unavailable(e)) => {
            for request in batch {
                let _ = request.reply.send(Err(e.clone()));
            }
        }
    }
    threads
}

/// Why a group's transaction gave no per-append answers.
pub enum BatchFailure {
    /// The database raised an error: nothing of the transaction committed.
    RolledBack(tokio_postgres::Error),
    /// No connection, or it broke: the transaction's fate is unknown.
    Unavailable(StoreError),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(thread_id: &str) -> AppendRequest {
        let (reply, _) = oneshot::channel();
        AppendRequest {
            thread_id: thread_id.to_owned(),
            expected_version: None,
            events: EventLog::default(),
            now: 0,
            reply,
            arrived: Instant::now(),
        }
    }

    fn ids(requests: &[AppendRequest]) -> Vec<&str> {
        requests.iter().map(|r| r.thread_id.as_str()).collect()
    }

    #[test]
    fn a_batch_holds_each_thread_once_and_later_appends_keep_their_order() {
        let mut batch = Vec::new();
        let mut threads = HashSet::new();
        let mut held = VecDeque::new();
        for id in ["a", "b", "a", "c", "a", "b"] {
            take_or_hold(request(id), &mut batch, &mut threads, &mut held);
        }
        assert_eq!(ids(&batch), ["a", "b", "c"]);
        assert_eq!(ids(&Vec::from(held)), ["a", "a", "b"]);
    }

    #[test]
    fn a_thread_held_back_stays_behind_its_earlier_append() {
        // "a" waits from an earlier batch; a newer "a" may not overtake it.
        let mut batch = vec![request("b")];
        let mut threads = HashSet::from(["b".to_owned()]);
        let mut held = VecDeque::from([request("a")]);
        take_or_hold(request("a"), &mut batch, &mut threads, &mut held);
        assert_eq!(ids(&batch), ["b"]);
        assert_eq!(ids(&Vec::from(held)), ["a", "a"]);
    }

    #[test]
    fn the_next_batch_takes_from_the_front_and_leaves_the_rest_in_order() {
        let mut waiting: VecDeque<_> = ["a", "b", "a", "c", "b"].into_iter().map(request).collect();
        let mut busy = HashSet::new();
        assert_eq!(ids(&next_batch(&mut waiting, &mut busy)), ["a", "b", "c"]);
        assert_eq!(waiting.iter().map(|r| r.thread_id.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        // a, b and c are in flight: their next appends wait for them.
        assert!(next_batch(&mut waiting, &mut busy).is_empty());
        assert_eq!(waiting.len(), 2);
        busy.clear();
        assert_eq!(ids(&next_batch(&mut waiting, &mut busy)), ["a", "b"]);
        assert!(waiting.is_empty());
    }

    #[test]
    fn a_full_batch_holds_the_rest() {
        let mut batch = Vec::new();
        let mut threads = HashSet::new();
        let mut held = VecDeque::new();
        for i in 0..MAX_BATCH + 3 {
            take_or_hold(request(&format!("t{i}")), &mut batch, &mut threads, &mut held);
        }
        assert_eq!(batch.len(), MAX_BATCH);
        assert_eq!(held.len(), 3);
    }
}
