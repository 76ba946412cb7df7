//! The live export of a serving process: appends in, spans out over OTLP, never in the way.
//!
//! The service tells [`LiveExport`] of each durable append (it is a [`ThreadObserver`]); that
//! call only puts the news on a bounded queue and returns, waking no thread. A model task reads
//! the queue every 0.1 s, turns the news into spans ([`TraceBuilder`] per thread) and puts them on a second bounded queue; an export task
//! sends them in batches. A full queue drops, and what was dropped is counted and logged at
//! most once a minute; a backend that is down or slow only fills the span queue. At shutdown
//! every open run is ended and flagged, and what is queued is sent for at most the time given.

use super::sender::Sender;
use super::{trace_options, OtlpSettings};
use crate::core::trace::{Span, TraceBuilder};
use crate::service::{Appended, ThreadObserver};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::{Instant, MissedTickBehavior};
use tokio_util::sync::CancellationToken;

/// The bounds of the live export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LiveLimits {
    /// Appends waiting to be turned into spans.
    pub queued_appends: usize,
    /// How often the queued appends are read. The model task looks at the queue on a clock
    /// instead of waiting on it, so an append wakes no thread: it only puts its news down.
    pub read_every: Duration,
    /// Finished spans waiting to be sent.
    pub queued_spans: usize,
    /// Most spans in one export request.
    pub batch_spans: usize,
    /// How long a span waits for others to share its request.
    pub batch_delay: Duration,
    /// Threads whose open run is followed; past it the least recently appended one is
    /// forgotten (and read again from its events when it is appended to next).
    pub followed_threads: usize,
    /// How often drops and failures are logged, at most.
    pub report_every: Duration,
}

impl Default for LiveLimits {
    fn default() -> Self {
        LiveLimits {
            queued_appends: 4096,
            read_every: Duration::from_millis(100),
            queued_spans: 2048,
            batch_spans: 512,
            batch_delay: Duration::from_millis(500),
            followed_threads: 10_000,
            report_every: Duration::from_secs(60),
        }
    }
}

enum Change {
    /// Boxed: the queue's slots stay small.
    Appended(Box<Appended>),
    Rewound(String),
}

/// What was lost since the last report.
#[derive(Default)]
struct Losses {
    appends: AtomicU64,
    spans: AtomicU64,
    failed_spans: AtomicU64,
    last_failure: Mutex<Option<String>>,
}

pub struct LiveExport {
    changes: mpsc::Sender<Change>,
    losses: Arc<Losses>,
    stop: CancellationToken,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl LiveExport {
    /// Starts the export's two tasks on the current Tokio runtime.
    pub fn start(settings: &OtlpSettings, limits: LiveLimits) -> Result<Arc<LiveExport>, String> {
        let sender = Sender::new(settings)?;
        let (changes, change_rx) = mpsc::channel(limits.queued_appends.max(1));
        let (spans, span_rx) = mpsc::channel(limits.queued_spans.max(1));
        let losses = Arc::new(Losses::default());
        let stop = CancellationToken::new();
        let model = Model {
            threads: HashMap::new(),
            capture_content: settings.capture_content,
            followed_threads: limits.followed_threads.max(1),
            clock: 0,
        };
        let tasks = vec![
            tokio::spawn(model.run(change_rx, limits.read_every, spans, losses.clone(), stop.clone())),
            tokio::spawn(export(span_rx, sender, limits, losses.clone())),
        ];
        Ok(Arc::new(LiveExport { changes, losses, stop, tasks: Mutex::new(tasks) }))
    }

    /// Ends every open run (flagged), sends what is queued, and stops; gives up after `within`.
    pub async fn shutdown(&self, within: Duration) {
        self.stop.cancel();
        let tasks = std::mem::take(&mut *self.tasks.lock().unwrap_or_else(|p| p.into_inner()));
        let aborts: Vec<_> = tasks.iter().map(JoinHandle::abort_handle).collect();
        let all = futures_util::future::join_all(tasks);
        if tokio::time::timeout(within, all).await.is_err() {
            tracing::warn!(seconds = within.as_secs_f64(), "tracing: gave up sending spans at shutdown");
            aborts.iter().for_each(|task| task.abort());
        }
        report(&self.losses);
    }

    fn put(&self, change: Change) {
        if let Err(mpsc::error::TrySendError::Full(_)) = self.changes.try_send(change) {
            self.losses.appends.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl ThreadObserver for LiveExport {
    fn appended(&self, appended: Appended) {
        self.put(Change::Appended(Box::new(appended)));
    }

    fn rewound(&self, thread_id: &str) {
        self.put(Change::Rewound(thread_id.to_owned()));
    }
}

/// The open runs of the threads followed.
struct Model {
    threads: HashMap<String, Followed>,
    capture_content: bool,
    followed_threads: usize,
    /// Counts appends: the recency of each thread.
    clock: u64,
}

struct Followed {
    builder: TraceBuilder,
    last_append: u64,
}

impl Model {
    async fn run(
        mut self,
        mut changes: mpsc::Receiver<Change>,
        read_every: Duration,
        spans: mpsc::Sender<Span>,
        losses: Arc<Losses>,
        stop: CancellationToken,
    ) {
        let mut out = Vec::new();
        let mut clock = tokio::time::interval(read_every);
        clock.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            let stopping = tokio::select! {
                biased;
                _ = stop.cancelled() => true,
                _ = clock.tick() => false,
            };
            // Never waiting on the queue itself: a receiver that waits must be woken by the sender.
            while let Ok(change) = changes.try_recv() {
                self.read(change, &mut out);
                queue(&spans, &mut out, &losses);
            }
            if stopping {
                break;
            }
        }
        // Shutdown: every open run, ended and flagged.
        for followed in self.threads.values_mut() {
            followed.builder.finish(&mut out);
        }
        queue(&spans, &mut out, &losses);
    }

    fn read(&mut self, change: Change, out: &mut Vec<Span>) {
        match change {
            Change::Rewound(thread_id) => {
                self.threads.remove(&thread_id);
            }
            Change::Appended(appended) => self.appended(*appended, out),
        }
    }

    fn appended(&mut self, appended: Appended, out: &mut Vec<Span>) {
        let Appended { record, events, first, at_ms } = appended;
        self.clock += 1;
        let options = trace_options(&record, self.capture_content);
        if !self.threads.contains_key(&record.thread_id) && self.threads.len() >= self.followed_threads {
            self.forget_oldest();
        }
        let followed = self
            .threads
            .entry(record.thread_id.clone())
            .or_insert_with(|| Followed { builder: TraceBuilder::new(options.clone()), last_append: 0 });
        followed.last_append = self.clock;
        followed.builder.set_options(options.clone());
        if followed.builder.position() as usize > first {
            // Events it read were taken back (a pop whose news was dropped): read them anew.
            followed.builder = TraceBuilder::new(options);
        }
        // What came before this append and was not read here (a restart, a fork, another
        // server's appends, dropped news) is read without giving spans: they were someone
        // else's to send, or are lost.
        let mut ignored = Vec::new();
        for index in followed.builder.position() as usize..events.len() {
            let Some(event) = events.parse(index) else { break };
            let into = if index < first { &mut ignored } else { &mut *out };
            let append_ms = (index >= first).then_some(at_ms);
            followed.builder.push(&event, append_ms, record.created_at, into);
        }
    }

    fn forget_oldest(&mut self) {
        let oldest = self.threads.iter().min_by_key(|(_, f)| f.last_append).map(|(id, _)| id.clone());
        if let Some(id) = oldest {
            self.threads.remove(&id);
        }
    }
}

/// Moves `out` onto the span queue; what does not fit is dropped and counted.
fn queue(spans: &mpsc::Sender<Span>, out: &mut Vec<Span>, losses: &Losses) {
    for span in out.drain(..) {
        if spans.try_send(span).is_err() {
            losses.spans.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Sends spans in batches: a batch goes when it is full or its first span has waited
/// `batch_delay`; when the queue closes, what is left goes at once.
async fn export(mut spans: mpsc::Receiver<Span>, sender: Sender, limits: LiveLimits, losses: Arc<Losses>) {
    let max = limits.batch_spans.max(1);
    let mut reports = tokio::time::interval_at(Instant::now() + limits.report_every, limits.report_every);
    reports.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut batch = Vec::with_capacity(max);
    let mut open = true;
    while open {
        tokio::select! {
            received = spans.recv_many(&mut batch, max) => open = received > 0,
            _ = reports.tick() => {
                report(&losses);
                continue;
            }
        }
        let deadline = Instant::now() + limits.batch_delay;
        while open && batch.len() < max {
            let room = max - batch.len();
            match tokio::time::timeout_at(deadline, spans.recv_many(&mut batch, room)).await {
                Ok(received) => open = received > 0,
                Err(_) => break,
            }
        }
        send(&sender, std::mem::take(&mut batch), &losses).await;
    }
}

async fn send(sender: &Sender, batch: Vec<Span>, losses: &Losses) {
    let count = batch.len() as u64;
    if let Err(e) = sender.send(batch).await {
        losses.failed_spans.fetch_add(count, Ordering::Relaxed);
        tracing::debug!(error = %e, spans = count, "tracing: export failed");
        *losses.last_failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
    }
}

/// Logs what was lost since the last report, if anything.
fn report(losses: &Losses) {
    let appends = losses.appends.swap(0, Ordering::Relaxed);
    let spans = losses.spans.swap(0, Ordering::Relaxed);
    let failed = losses.failed_spans.swap(0, Ordering::Relaxed);
    let last_failure = losses.last_failure.lock().unwrap_or_else(|p| p.into_inner()).take();
    if appends > 0 || spans > 0 {
        tracing::warn!(appends, spans, "tracing: queue full, dropped appends' spans and spans since the last report");
    }
    if failed > 0 {
        let error = last_failure.unwrap_or_default();
        tracing::warn!(spans = failed, %error, "tracing: the backend did not take spans since the last report");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event_log::EventLogBuilder;
    use crate::store::ThreadRecord;
    use serde_json::json;

    /// Nothing listens there: a port bound and let go.
    fn nowhere() -> OtlpSettings {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        OtlpSettings { traces_endpoint: format!("http://127.0.0.1:{port}/v1/traces"), capture_content: false }
    }

    fn appended(thread_id: &str, events: &[serde_json::Value], first: usize) -> Appended {
        let mut log = EventLogBuilder::new();
        for event in events {
            log.push_value(event);
        }
        let record = ThreadRecord {
            thread_id: thread_id.into(),
            version: 1,
            event_count: events.len() as u64,
            settings: Default::default(),
            metadata: Default::default(),
            created_at: 0,
            updated_at: 0,
        };
        Appended { record, events: log.finish(), first, at_ms: 5 }
    }

    #[tokio::test]
    async fn a_full_append_queue_drops_and_counts_without_waiting() {
        // The queue is read only every hour here: the second and third appends find it full.
        let limits = LiveLimits { queued_appends: 1, read_every: Duration::from_secs(3600), ..LiveLimits::default() };
        let export = LiveExport::start(&nowhere(), limits).unwrap();
        let user = json!({"type": "message", "role": "user", "content": "x", "iteration": 0});
        // The clock's first tick reads at once; let it pass before filling the queue.
        tokio::time::sleep(Duration::from_millis(50)).await;
        for _ in 0..3 {
            export.appended(appended("t", std::slice::from_ref(&user), 0));
        }
        assert_eq!(export.losses.appends.load(Ordering::Relaxed), 2);
        export.shutdown(Duration::from_millis(200)).await;
    }

    #[tokio::test]
    async fn a_full_span_queue_drops_and_counts() {
        let limits = LiveLimits { queued_spans: 1, read_every: Duration::from_millis(10), ..LiveLimits::default() };
        let export = LiveExport::start(&nowhere(), limits).unwrap();
        // One append ending a run of a turn and two tools: four spans at once, for a queue of one.
        let events = [
            json!({"type": "message", "role": "user", "content": "x", "iteration": 0}),
            json!({"type": "tool_call", "toolName": "a", "toolCallId": "1", "args": {}, "iteration": 0}),
            json!({"type": "tool_call", "toolName": "b", "toolCallId": "2", "args": {}, "iteration": 0}),
            json!({"type": "tool_result", "toolCallId": "1", "result": 1, "iteration": 0}),
            json!({"type": "tool_result", "toolCallId": "2", "result": 2, "iteration": 0}),
            json!({"type": "completion", "result": "r", "verified": true, "iteration": 0}),
        ];
        export.appended(appended("t", &events, 0));
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while export.losses.spans.load(Ordering::Relaxed) == 0 {
            assert!(tokio::time::Instant::now() < deadline, "no span was dropped");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // At most the queue's one span got through to the exporter: three of four were dropped,
        // or all four when the exporter had not taken the first yet.
        assert!((3..=4).contains(&export.losses.spans.load(Ordering::Relaxed)));
        export.shutdown(Duration::from_millis(200)).await;
    }
}
