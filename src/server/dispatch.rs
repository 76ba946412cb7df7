//! From frames to responses: envelope checks, lifecycle, batches, cancellation, and one lane
//! per thread so that requests to the same thread run in the order they arrived.
//!
//! Each message is parsed once, into an [`Envelope`] that borrows from it; the method's
//! [`Policy`] in the [`MethodTable`] says how to run it; its answer is written around the
//! caller's id as received (ids are kept verbatim, so `-7` and `1.5` come back as sent).

use super::cancel;
use super::errors::{self, response};
use super::outbox::Outbox;
use super::table::{Answer, Method, MethodTable};
use futures_util::FutureExt;
use jsonrpsee::types::{ErrorObjectOwned, Params};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Where the connection is in its lifecycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Uninitialized,
    Running,
    ShutDown,
}

/// What the reader loop should do after a message.
#[derive(Debug, PartialEq, Eq)]
pub enum Control {
    Continue,
    Exit,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    method: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    params: Option<&'a RawValue>,
}

/// Keeps `null` as a present value (plain `Option` would read it as absent).
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

#[derive(Deserialize)]
struct ThreadTarget<'a> {
    #[serde(rename = "threadId", borrow)]
    thread_id: Option<std::borrow::Cow<'a, str>>,
}

/// One request to run.
struct Job {
    method: &'static str,
    params: Params<'static>,
    /// The caller's id as raw JSON, `None` for a notification.
    id: Option<String>,
    token: CancellationToken,
    /// Counts the job as running until it is dropped, so exit waits for its answer.
    _running: tokio_util::task::task_tracker::TaskTrackerToken,
}

/// Where a request's answer goes: straight to the output, or into its slot of a batch.
enum Reply {
    Out(Outbox),
    Slot(oneshot::Sender<Option<String>>),
}

impl Reply {
    fn send(self, answer: Option<String>) {
        match self {
            Reply::Out(out) => {
                if let Some(answer) = answer {
                    let _ = out.send(answer);
                }
            }
            Reply::Slot(slot) => {
                let _ = slot.send(answer);
            }
        }
    }
}

/// Requests up to this size of a method whose policy allows it run on the reader itself.
const INLINE_MAX_BYTES: usize = 64 * 1024;

/// A request's work, owning what it needs, and where its answer goes.
type Work = (futures_util::future::BoxFuture<'static, Option<String>>, Reply);

struct Lane {
    sender: mpsc::UnboundedSender<Work>,
    pending: Arc<AtomicUsize>,
}

/// Deepest nesting of arrays and objects accepted in a message (serde_json stops at 128).
pub const MAX_JSON_DEPTH: usize = 100;

/// The nesting depth of a JSON text when it is deeper than [`MAX_JSON_DEPTH`].
fn too_deep(text: &[u8]) -> Option<usize> {
    // A text cannot nest deeper than it has openings; counting them is one vectorized pass,
    // far cheaper than following strings byte by byte, and settles almost every message.
    let openings = text.iter().fold(0usize, |n, &b| n + usize::from(b == b'[' || b == b'{'));
    if openings <= MAX_JSON_DEPTH {
        return None;
    }
    Some(json_depth(text)).filter(|&depth| depth > MAX_JSON_DEPTH)
}

/// The deepest nesting of arrays and objects in a JSON text, found without parsing it.
fn json_depth(text: &[u8]) -> usize {
    let (mut depth, mut max, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in text {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// Lanes beyond this many are pruned of idle ones.
const LANE_PRUNE_THRESHOLD: usize = 256;

pub struct Dispatcher {
    table: Arc<MethodTable>,
    phase: Phase,
    shutdown_requested: bool,
    lanes: HashMap<String, Lane>,
    in_flight: Arc<Mutex<HashMap<String, CancellationToken>>>,
    tracker: TaskTracker,
    out: Outbox,
}

impl Dispatcher {
    pub fn new(table: MethodTable, out: Outbox) -> Self {
        Dispatcher {
            table: Arc::new(table),
            phase: Phase::Uninitialized,
            shutdown_requested: false,
            lanes: HashMap::new(),
            in_flight: Arc::new(Mutex::new(HashMap::new())),
            tracker: TaskTracker::new(),
            out,
        }
    }

    /// Whether `shutdown` was received (the exit status is 0 then, else 1).
    pub fn shutdown_requested(&self) -> bool {
        self.shutdown_requested
    }

    /// Tracks every running request, so exit can wait for their answers.
    pub fn tracker(&self) -> &TaskTracker {
        &self.tracker
    }

    /// Sends an error that belongs to no request (id null).
    pub fn send_error(&self, code: i32, message: &str) {
        let _ = self.out.send(response("null", code, message, None));
    }

    /// Sends an error object for the request whose id is the raw JSON `id`.
    pub fn send_error_object(&self, id: &str, error: &ErrorObjectOwned) {
        let _ = self.out.send(errors::response_with(id, error));
    }

    /// Handles one message body: a request, a notification or a batch.
    pub fn handle(&mut self, body: &[u8]) -> Control {
        let text = match std::str::from_utf8(body) {
            Ok(text) => text,
            Err(e) => {
                self.send_error(errors::PARSE_ERROR, &format!("parse error: message is not UTF-8 ({e})"));
                return Control::Continue;
            }
        };
        let received = Received { read: &crate::json_text::replace_lone_surrogates(text), as_sent: text };
        if let Some(depth) = too_deep(body) {
            let error = errors::limit_exceeded("maxJsonDepth", depth as u64, MAX_JSON_DEPTH as u64);
            let _ = self.out.send(errors::response_with("null", &error));
            return Control::Continue;
        }
        if received.read.trim_start().starts_with('[') {
            return self.handle_batch(received);
        }
        self.start(received, Reply::Out(self.out.clone()))
    }

    fn send_parse_error(&self, e: &serde_json::Error) {
        let _ = self.out.send(parse_error(e));
    }

    fn handle_batch(&mut self, received: Received<'_>) -> Control {
        let entries: Vec<&RawValue> = match serde_json::from_str(received.read) {
            Ok(entries) => entries,
            Err(e) => {
                self.send_parse_error(&e);
                return Control::Continue;
            }
        };
        if entries.is_empty() {
            self.send_error(errors::INVALID_REQUEST, "invalid request: empty batch");
            return Control::Continue;
        }
        let mut replies = Vec::with_capacity(entries.len());
        let mut exit = false;
        for entry in entries {
            let (slot, rx) = oneshot::channel();
            if self.start(received.part(entry.get()), Reply::Slot(slot)) == Control::Exit {
                exit = true;
            }
            replies.push(rx);
        }
        let out = self.out.clone();
        let mut collect = async move {
            let mut answers = Vec::with_capacity(replies.len());
            for rx in replies {
                if let Ok(Some(reply)) = rx.await {
                    answers.push(reply);
                }
            }
            if !answers.is_empty() {
                let _ = out.send(format!("[{}]", answers.join(",")));
            }
        }
        .boxed();
        // A batch whose entries all answered at once is answered here, without a task.
        if collect.as_mut().now_or_never().is_none() {
            self.tracker.spawn(collect);
        }
        if exit {
            Control::Exit
        } else {
            Control::Continue
        }
    }

    /// Checks one message (or batch entry) and starts it; its answer (if any) goes to `reply`.
    fn start(&mut self, received: Received<'_>, reply: Reply) -> Control {
        let text = received.read;
        // One parse reads the envelope and checks the whole text is JSON; only a message that
        // fails it is parsed again, to say whether it is JSON at all (in the plain parser's words).
        let envelope = match serde_json::from_str::<Envelope>(text) {
            Ok(envelope) if text.trim_start().starts_with('{') => envelope,
            _ => {
                if let Err(e) = serde_json::from_str::<&RawValue>(text) {
                    return answered(reply, Some(parse_error(&e)));
                }
                return answered(
                    reply,
                    Some(response(
                        "null",
                        errors::INVALID_REQUEST,
                        "invalid request: not a JSON-RPC request object",
                        None,
                    )),
                );
            }
        };
        // The id as the caller wrote it, lone surrogate escapes included: what it matches answers by.
        let id: Option<&str> = envelope.id.map(|id| received.as_sent(id.get()));
        let id_text = id.unwrap_or("null");
        if let Some(raw_id) = envelope.id {
            let first = raw_id.get().as_bytes().first().copied().unwrap_or(b'n');
            if !matches!(first, b'"' | b'-' | b'0'..=b'9' | b'n') {
                return answered(
                    reply,
                    Some(response(
                        "null",
                        errors::INVALID_REQUEST,
                        "invalid request: id must be a string, a number or null",
                        None,
                    )),
                );
            }
        }
        if !envelope.jsonrpc.is_some_and(is_version_2) {
            return answered(
                reply,
                Some(response(id_text, errors::INVALID_REQUEST, "invalid request: \"jsonrpc\" must be \"2.0\"", None)),
            );
        }
        // A method name has no escapes as a rule: borrowed then, decoded only when it has.
        let method = envelope.method.and_then(|m| match serde_json::from_str::<&str>(m.get()) {
            Ok(name) => Some(std::borrow::Cow::Borrowed(name)),
            Err(_) => serde_json::from_str::<String>(m.get()).ok().map(std::borrow::Cow::Owned),
        });
        let method = match method {
            Some(method) => method,
            None => {
                return answered(
                    reply,
                    Some(response(
                        id_text,
                        errors::INVALID_REQUEST,
                        "invalid request: \"method\" must be a string",
                        None,
                    )),
                );
            }
        };
        if envelope.params.is_some_and(|params| params.get() == "null") {
            let error = errors::invalid_params("", "params must be an object or an array when present, not null");
            return answered(reply, Some(errors::response_with(id_text, &error)));
        }
        if let Some(params) = envelope.params {
            if !matches!(params.get().as_bytes().first(), Some(b'{' | b'[')) {
                return answered(
                    reply,
                    Some(response(
                        id_text,
                        errors::INVALID_REQUEST,
                        "invalid request: \"params\" must be an object or an array",
                        None,
                    )),
                );
            }
        }
        let is_notification = id.is_none();
        tracing::debug!(method = %method, id = id_text, "request");

        // Lifecycle (LSP): nothing but initialize before initialize; nothing after shutdown.
        if is_notification {
            match &*method {
                "exit" => return Control::Exit,
                "$/cancelRequest" => {
                    self.cancel(envelope.params, received);
                    return answered(reply, None);
                }
                "initialized" => return answered(reply, None),
                _ if self.phase != Phase::Running || method.starts_with("$/") => return answered(reply, None),
                _ => {}
            }
        } else {
            let refusal = match (self.phase, &*method) {
                (Phase::Uninitialized, "initialize") => None,
                (Phase::Uninitialized, _) => {
                    Some((errors::NOT_INITIALIZED, "server not initialized: send \"initialize\" first"))
                }
                (Phase::ShutDown, _) => Some((errors::INVALID_REQUEST, "invalid request: the server is shut down")),
                (Phase::Running, "initialize") => {
                    Some((errors::INVALID_REQUEST, "invalid request: already initialized"))
                }
                _ => None,
            };
            if let Some((code, message)) = refusal {
                return answered(reply, Some(response(id_text, code, message, None)));
            }
        }

        let table = self.table.clone();
        let Some(method) = table.get(&method) else {
            let message = format!("method not found: {method:?}");
            return answered(reply, id.map(|id| response(id, errors::METHOD_NOT_FOUND, &message, None)));
        };
        let params_text = envelope.params.map(RawValue::get);
        match method.name {
            // The lifecycle changes only once its method has answered: a refused `initialize`
            // (an unsupported protocol version) leaves the server uninitialized.
            "initialize" | "shutdown" => {
                let answer = method.call_now(Params::new(params_text), table.context());
                let answer = answer.expect("lifecycle methods are synchronous");
                if answer.is_ok() {
                    self.phase = if method.name == "initialize" { Phase::Running } else { Phase::ShutDown };
                    self.shutdown_requested |= method.name == "shutdown";
                }
                return answered(reply, id.map(|id| write_answer(id, answer)));
            }
            _ => {}
        }
        let inline = method.policy.inline && params_text.map_or(0, str::len) <= INLINE_MAX_BYTES;
        if inline && !method.policy.per_thread {
            // Done before the reader reads on, so no cancellation can reach it: no token, no
            // entry among the requests in flight, no copy of the params.
            if let Some(answer) = method.call_now(Params::new(params_text), table.context()) {
                return answered(reply, id.map(|id| write_answer(id, answer)));
            }
        }
        let params = Params::new(params_text).into_owned();
        let token = CancellationToken::new();
        let id = id.map(str::to_owned);
        if let Some(id) = &id {
            self.lock_in_flight().insert(id.clone(), token.clone());
        }
        let lane_key = method
            .policy
            .per_thread
            .then(|| params_text.and_then(|p| serde_json::from_str::<ThreadTarget>(p).ok()).and_then(|t| t.thread_id))
            .flatten()
            .map(|id| id.into_owned());
        let job = Job { method: method.name, params, id, token, _running: self.tracker.token() };
        match lane_key {
            Some(key) => self.enqueue(key, job, reply, inline),
            None => self.spawn(job, reply),
        }
        Control::Continue
    }

    fn spawn(&self, job: Job, reply: Reply) {
        let table = self.table.clone();
        let in_flight = self.in_flight.clone();
        self.tracker.spawn(async move {
            reply.send(run(&table, &in_flight, job).await);
        });
    }

    /// Queues `job` in its thread's lane; an `inline` job whose lane is idle starts on the reader.
    fn enqueue(&mut self, key: String, job: Job, reply: Reply, inline: bool) {
        if self.lanes.len() > LANE_PRUNE_THRESHOLD {
            self.lanes.retain(|_, lane| lane.pending.load(Ordering::Acquire) > 0);
        }
        let (table, in_flight) = (self.table.clone(), self.in_flight.clone());
        let lane = self.lanes.entry(key).or_insert_with(|| {
            let (sender, mut receiver) = mpsc::unbounded_channel::<Work>();
            let pending = Arc::new(AtomicUsize::new(0));
            let lane_pending = pending.clone();
            tokio::spawn(async move {
                while let Some((work, reply)) = receiver.recv().await {
                    reply.send(work.await);
                    lane_pending.fetch_sub(1, Ordering::AcqRel);
                }
            });
            Lane { sender, pending }
        });
        let id = job.id.clone();
        let mut work = async move { run(&table, &in_flight, job).await }.boxed();
        if inline && lane.pending.load(Ordering::Acquire) == 0 {
            // Nothing of this thread is queued or running: start it here. Most requests (the
            // memory store, renders kept up to date) finish in this first poll and are answered
            // without a hand-off to another task; the rest continue in the lane, still first.
            if let Some(answer) = work.as_mut().now_or_never() {
                return reply.send(answer);
            }
        }
        lane.pending.fetch_add(1, Ordering::AcqRel);
        if let Err(mpsc::error::SendError((_, reply))) = lane.sender.send((work, reply)) {
            // The lane task is gone (it never is while its sender lives); answer instead of hanging.
            reply.send(
                id.as_deref().map(|id| response(id, errors::INTERNAL_ERROR, "internal error: lane closed", None)),
            );
        }
    }

    fn cancel(&self, params: Option<&RawValue>, received: Received<'_>) {
        #[derive(Deserialize)]
        struct CancelParams<'a> {
            #[serde(borrow)]
            id: &'a RawValue,
        }
        let Some(params) = params else { return };
        if let Ok(p) = serde_json::from_str::<CancelParams>(params.get()) {
            // Requests in flight are known by their ids as sent.
            let id = received.as_sent(p.id.get());
            if let Some(token) = self.lock_in_flight().get(id) {
                tracing::debug!(id, "cancel");
                token.cancel();
            }
        }
    }

    fn lock_in_flight(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.in_flight.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A message as read (lone surrogate escapes replaced, see `json_text`) and as sent. The
/// replacement keeps every byte's position, so a part of the one is found at the same place in
/// the other.
#[derive(Clone, Copy)]
struct Received<'a> {
    read: &'a str,
    as_sent: &'a str,
}

impl<'a> Received<'a> {
    /// `part` of [`Received::read`] as it was sent.
    fn as_sent(&self, part: &str) -> &'a str {
        let start = part.as_ptr() as usize - self.read.as_ptr() as usize;
        &self.as_sent[start..start + part.len()]
    }

    /// `part` of [`Received::read`] (a batch entry) as a message of its own.
    fn part(&self, part: &'a str) -> Received<'a> {
        Received { read: part, as_sent: self.as_sent(part) }
    }
}

/// Whether a `jsonrpc` member's value is the string "2.0", however it is written (`"2\u002e0"`
/// is "2.0" too); the usual spelling is settled without decoding.
fn is_version_2(value: &RawValue) -> bool {
    value.get() == "\"2.0\"" || serde_json::from_str::<String>(value.get()).is_ok_and(|v| v == "2.0")
}

/// The answer to a message that is not JSON.
fn parse_error(e: &serde_json::Error) -> String {
    response("null", errors::PARSE_ERROR, &format!("parse error: {e}"), None)
}

/// Sends an answer known before any work is done.
fn answered(reply: Reply, answer: Option<String>) -> Control {
    reply.send(answer);
    Control::Continue
}

/// Runs one job and gives its response.
async fn run(table: &MethodTable, in_flight: &Mutex<HashMap<String, CancellationToken>>, job: Job) -> Option<String> {
    // The params go to the method whole: it drops them once parsed, so a big request's text is
    // not held twice for as long as the request runs (a 16 MiB import).
    // `_running` stays bound to the end, so the job counts as running until it has answered.
    let Job { method, params, id, token, _running } = job;
    let method: &Method = table.get(method).expect("jobs name registered methods");
    let id_text = id.as_deref().unwrap_or("null");
    let cancelled = || response(id_text, errors::CANCELLED, "request cancelled", None);
    let result = if token.is_cancelled() {
        cancelled()
    } else {
        let call = cancel::scope(token.clone(), method.call(params, table.context().clone()));
        let answer = if method.policy.abandonable {
            tokio::select! {
                answer = call => Some(answer),
                _ = token.cancelled() => None,
            }
        } else {
            Some(call.await)
        };
        match answer {
            None => cancelled(),
            Some(answer) => write_answer(id_text, answer),
        }
    };
    if let Some(id) = &id {
        in_flight.lock().unwrap_or_else(|p| p.into_inner()).remove(id);
    }
    id.as_ref().map(|_| result)
}

/// The response to the request `id` (raw JSON, as received).
fn write_answer(id: &str, answer: Answer) -> String {
    match answer {
        Ok(result) => {
            let result = result.get();
            let mut out = String::with_capacity(result.len() + id.len() + 36);
            out.push_str(r#"{"jsonrpc":"2.0","id":"#);
            out.push_str(id);
            out.push_str(r#","result":"#);
            out.push_str(result);
            out.push('}');
            out
        }
        Err(error) => errors::response_with(id, &error),
    }
}
