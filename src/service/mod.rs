//! The thread service: open threads, append events, render them. No protocol knowledge.
//!
//! Threads are loaded from the store on first use and kept in a bounded LRU cache of
//! [`ThreadState`]s. Callers are expected to order the requests of one thread (the server does
//! it with one lane per thread); the per-thread mutex only guards against the rest.

mod blobs;
mod budget;
pub use blobs::BlobsForm;
mod attached;
mod context;
mod documents;
mod kept_cut;
mod lru;
mod observer;
mod rolling;
mod search;
mod sessions;
mod state;
mod view;

pub use observer::{Appended, ThreadObserver};
pub use state::{give_back_memory, set_give_back_memory};

use crate::convert::messages_to_prompt;
use crate::event::{AgentEvent, EventError};
use crate::event_log::{EventLog, EventLogBuilder};
use crate::media::{ingest_event, IngestError, IngestLimits, Ingested, MediaBytes};
use crate::messages::{ContextMode, DanglingToolCalls};
use crate::providers::{Provider, ProviderOptions};
use crate::store::{
    AppendBlobs, ForkPoint, ForkThread, OpenThread, Store, StoreError, StoreKind, ThreadRecord, ThreadSettings,
};
use crate::turns::TurnError;
use crate::xml::EscapeMode;
pub use budget::{Budget, BudgetedRender};
pub use context::{CompactionPlanned, TokenCount};
pub use documents::{read_turn, write_turn, NOT_IMPORTABLE};
use lru::Lru;
pub use rolling::{PlannedStep, RollingBudget, RollingPlan, RollingStep};
pub use search::{SearchHit, SearchOptions, SearchResults, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_THREADS, MAX_SEARCH_TYPES};
use serde_json::{Map, Value};
pub use sessions::{BranchImported, SessionImported};
use state::{ThreadState, View};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};
use tokio_util::sync::CancellationToken;

/// Explicit bounds on what one request may ask of the service.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Events in one `thread/append` (or any call that takes an event list).
    pub max_events_per_call: usize,
    /// Compact JSON size of one event, in bytes.
    pub max_event_bytes: usize,
    /// Threads held in memory; the memory store refuses more, durable stores evict.
    pub max_threads_in_memory: usize,
    /// Event bytes up to which a thread keeps its renderers between renders (renders stay
    /// incremental); a bigger thread builds them per render and lets them go.
    pub keep_renders_up_to_bytes: usize,
    /// What reading a turn document given as text may cost (`turns/from*`, `thread/import`).
    pub documents: crate::turns::Limits,
    /// Bytes of one blob (a media part's `data`, `blob/put`).
    pub max_blob_bytes: usize,
}

/// The default of [`Limits::max_blob_bytes`]: a 20 MB screenshot is an honest input.
pub const MAX_BLOB_BYTES: usize = IngestLimits::DEFAULT.max_blob_bytes;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_events_per_call: 50_000,
            max_event_bytes: 4 << 20,
            max_threads_in_memory: 10_000,
            keep_renders_up_to_bytes: state::KEEP_RENDERERS_UP_TO_BYTES,
            documents: crate::turns::Limits::default(),
            max_blob_bytes: MAX_BLOB_BYTES,
        }
    }
}

/// What a thread operation can fail with; the server maps each to its protocol code in one
/// place (`server::errors`).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ServiceError {
    #[error("thread {thread_id:?} not found")]
    NotFound { thread_id: String },
    #[error("version conflict: thread {thread_id:?} is at version {current_version}")]
    VersionConflict { thread_id: String, current_version: u64 },
    /// `hint` says how to pick another id, for the method at hand.
    #[error("thread exists: thread {thread_id:?} already exists; {hint}")]
    ThreadExists { thread_id: String, hint: &'static str },
    #[error("limit exceeded: {limit} is {max}, got {value}")]
    Limit { limit: &'static str, value: u64, max: u64 },
    #[error("invalid params: {}", if path.is_empty() { reason.clone() } else { format!("{path}: {reason}") })]
    InvalidParams { path: String, reason: String },
    #[error("store failed: {0}")]
    Store(String),
    /// A turn document (in the params field `field`) that cannot be read or written.
    #[error("{field}: {error}")]
    Document { field: &'static str, error: TurnError },
    /// The request was cancelled before it changed anything.
    #[error("request cancelled")]
    Cancelled,
    /// A bug: work that should not fail did (a render panicked).
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<StoreError> for ServiceError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound { thread_id } => ServiceError::NotFound { thread_id },
            StoreError::VersionConflict { thread_id, current_version } => {
                ServiceError::VersionConflict { thread_id, current_version }
            }
            StoreError::Full { limit } => {
                ServiceError::Limit { limit: "maxThreadsInMemory", value: limit + 1, max: limit }
            }
            StoreError::Exists { thread_id } => {
                ServiceError::ThreadExists { thread_id, hint: "pass newThreadId to fork under another id" }
            }
            StoreError::OutOfRange { field, reason } => ServiceError::InvalidParams { path: field.into(), reason },
            StoreError::BlobMissing { blob } => ServiceError::InvalidParams {
                path: String::new(),
                reason: format!("names blob {blob}, which the store does not hold"),
            },
            StoreError::Unavailable(reason) => ServiceError::Store(reason),
        }
    }
}

impl From<IngestError> for ServiceError {
    fn from(e: IngestError) -> Self {
        match e {
            IngestError::Invalid { path, reason } => ServiceError::InvalidParams { path, reason },
            IngestError::TooBig { value, max, .. } => ServiceError::Limit { limit: "maxBlobBytes", value, max },
        }
    }
}

impl From<EventError> for ServiceError {
    fn from(e: EventError) -> Self {
        ServiceError::InvalidParams { path: e.path, reason: e.reason }
    }
}

pub type ServiceResult<T> = Result<T, ServiceError>;

/// Where [`ThreadService::import`] puts the imported thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImportTarget {
    /// The id the caller asked for.
    Given(String),
    /// The document's own id: used only when no thread has it.
    FromDocument(String),
    /// A new id.
    New,
}

/// How a render request wants the thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenderFormat {
    Xml,
    Messages,
    Text,
    /// A provider's request body.
    Provider(Provider),
}

/// Per-render overrides of the thread's settings, and format switches.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RenderOptions {
    pub context_mode: Option<ContextMode>,
    pub instructions: Option<String>,
    pub response_prefix: Option<String>,
    pub escape: EscapeMode,
    /// Standard mode: what becomes of calls that were never answered.
    pub dangling_tool_calls: DanglingToolCalls,
    /// For XML: only the lines of events from this position on (a delta for a client that
    /// keeps the earlier lines).
    pub from_event: Option<u64>,
    /// A provider format's own options (Anthropic's cache breakpoints).
    pub provider: ProviderOptions,
    /// How counts (`thread/tokens`, budgets, rolling rounds) measure media parts; `None` is
    /// the format's own rule ([`crate::context::MediaTokenRule::default_for`]).
    pub media_tokens: Option<crate::context::MediaTokenRule>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Rendered {
    Xml {
        version: u64,
        text: String,
    },
    /// The document is `"<thread>\n"` + every event line so far + `tail`; `lines` holds those
    /// of events `from_event..event_count`.
    XmlDelta {
        version: u64,
        event_count: u64,
        from_event: u64,
        lines: String,
        tail: String,
    },
    /// The messages as JSON text of an array (serialized from the kept builder, not copied).
    Messages {
        version: u64,
        context_mode: ContextMode,
        json: String,
    },
    Text {
        version: u64,
        text: String,
    },
    /// `provider`'s request body, as JSON text of an object.
    Provider {
        version: u64,
        context_mode: ContextMode,
        provider: Provider,
        json: String,
    },
}

/// Events that passed validation: parsed, for the renderers, and in their stored form.
#[derive(Clone, Debug, Default)]
pub struct ValidEvents {
    pub events: Vec<AgentEvent>,
    pub stored: EventLog,
    /// The blobs the events name, and the bytes that came with them.
    pub media: Ingested,
}

/// A page of a thread's events.
#[derive(Clone, Debug, PartialEq)]
pub struct EventPage {
    pub version: u64,
    pub event_count: u64,
    pub events: EventLog,
}

type Shared = Arc<AsyncMutex<ThreadState>>;

pub struct ThreadService {
    store: Arc<dyn Store>,
    limits: Limits,
    open: Mutex<Lru<Shared>>,
    observer: Option<Arc<dyn ThreadObserver>>,
}

impl ThreadService {
    pub fn new(store: Arc<dyn Store>, limits: Limits) -> Self {
        ThreadService { store, limits, open: Mutex::new(Lru::new(limits.max_threads_in_memory)), observer: None }
    }

    /// Tells `observer` of every durable append, pop and delete made through this service.
    pub fn with_observer(mut self, observer: Arc<dyn ThreadObserver>) -> Self {
        self.observer = Some(observer);
        self
    }

    pub fn store_kind(&self) -> StoreKind {
        self.store.kind()
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Validates raw JSON events against the limits and the event model, all or nothing.
    /// Each event's compact JSON is written once: it is both what the size limit measures and
    /// what is stored.
    pub fn validate_events(&self, values: Vec<Value>) -> ServiceResult<ValidEvents> {
        validate_events(&self.limits, values)
    }

    pub async fn open(
        &self,
        thread_id: Option<String>,
        settings: Option<ThreadSettings>,
        metadata: Option<Map<String, Value>>,
    ) -> ServiceResult<ThreadRecord> {
        let thread_id = thread_id_or_new(thread_id)?;
        let record =
            self.store.open(OpenThread { thread_id: thread_id.clone(), settings, metadata, now: now_ms() }).await?;
        if let Some(shared) = self.cached(&thread_id) {
            let mut state = shared.lock().await;
            state.record.settings = record.settings.clone();
            state.record.metadata = record.metadata.clone();
            state.record.updated_at = record.updated_at;
        }
        Ok(record)
    }

    pub async fn append(
        &self,
        thread_id: &str,
        valid: ValidEvents,
        expected_version: Option<u64>,
    ) -> ServiceResult<ThreadRecord> {
        let ValidEvents { events, stored, media } = self.with_blob_info(valid).await?;
        let apply = |state: &mut ThreadState, stored: &EventLog, shared, appended| {
            state.apply(&events, stored, shared, appended);
        };
        self.append_applying(thread_id, stored, media, expected_version, apply).await
    }

    /// [`ThreadService::append`] of events known by their stored text alone (validated when it
    /// was made): an import's, which never holds all its events parsed at once.
    async fn append_stored(
        &self,
        thread_id: &str,
        stored: EventLog,
        media: Ingested,
        expected_version: Option<u64>,
    ) -> ServiceResult<ThreadRecord> {
        self.append_applying(thread_id, stored, media, expected_version, ThreadState::apply_stored).await
    }

    /// Stores `stored` (with the blobs `media` brings and names) and brings the thread's state
    /// up to date with `apply` (given the stored events, the store's own log when it keeps
    /// one, and what the store answered).
    async fn append_applying(
        &self,
        thread_id: &str,
        stored: EventLog,
        media: Ingested,
        expected_version: Option<u64>,
        apply: impl FnOnce(&mut ThreadState, &EventLog, Option<EventLog>, crate::store::Appended),
    ) -> ServiceResult<ThreadRecord> {
        let shared = self.load(thread_id).await?;
        let mut state = shared.lock().await;
        let now = now_ms();
        let appended = if media.is_empty() {
            self.store.append(thread_id, expected_version, &stored, now).await
        } else {
            let blobs = AppendBlobs { named: media.all_ids(), new: media.new_blobs };
            let appended = self.store.append_with_blobs(thread_id, expected_version, &stored, &blobs, now).await;
            // Checked a moment ago, a blob can still be freed by another server's delete
            // before this append names it: say which part named it.
            if let Err(StoreError::BlobMissing { blob }) = &appended {
                if let Some((_, path)) = media.named.iter().find(|(id, _)| id.as_str() == blob) {
                    let reason = format!("names blob {blob}, which the store does not hold (it was just freed)");
                    return Err(ServiceError::InvalidParams { path: path.clone(), reason });
                }
            }
            appended
        };
        let appended = match appended {
            Err(StoreError::VersionConflict { .. }) if self.store.is_shared() => {
                // Someone else appended: catch up so the next render shows their events.
                self.catch_up(&mut state).await?;
                appended?
            }
            other => other?,
        };
        // Ours was the only change since we last looked (a pop elsewhere could restore the count).
        let only_ours = appended.version == state.record.version + 1;
        if only_ours && appended.event_count == (state.events.len() + stored.len()) as u64 {
            let shared = self.store.shared_events(thread_id);
            apply(&mut state, &stored, shared, appended);
        } else {
            // Others changed the thread since we last looked, so ours landed after theirs: read them all.
            // The append is durable already; if reading fails, the next read catches up.
            if let Err(e) = self.catch_up(&mut state).await {
                tracing::warn!(error = ?e, "appended, but could not read others' events yet");
            }
        }
        let record =
            ThreadRecord { version: appended.version, event_count: appended.event_count, ..state.record.clone() };
        if let Some(observer) = &self.observer {
            let first = (appended.event_count as usize).saturating_sub(stored.len());
            observer.appended(Appended { record: record.clone(), events: state.events.clone(), first, at_ms: now });
        }
        Ok(record)
    }

    /// Renders the thread. The one long part, building a renderer the thread does not keep yet,
    /// runs off the async workers for big threads and stops when `cancel` fires, which answers
    /// at once with [`ServiceError::Cancelled`]; a render changes no thread data either way.
    pub async fn render(
        &self,
        thread_id: &str,
        format: RenderFormat,
        options: RenderOptions,
        cancel: &CancellationToken,
    ) -> ServiceResult<Rendered> {
        self.render_carrying(thread_id, format, options, true, cancel).await
    }

    /// [`ThreadService::render`] with each media part named by its placeholder line, never
    /// carried: the model input a page for people shows.
    pub async fn render_naming_media(
        &self,
        thread_id: &str,
        format: RenderFormat,
        options: RenderOptions,
        cancel: &CancellationToken,
    ) -> ServiceResult<Rendered> {
        self.render_carrying(thread_id, format, options, false, cancel).await
    }

    async fn render_carrying(
        &self,
        thread_id: &str,
        format: RenderFormat,
        options: RenderOptions,
        carry_media: bool,
        cancel: &CancellationToken,
    ) -> ServiceResult<Rendered> {
        let mut state = self.caught_up(thread_id).await?;
        let media = if carry_media { self.media_of_view(&state, format).await? } else { MediaBytes::new() };
        if state.events.len() < OFFLOAD_RENDERS_FROM_EVENTS {
            return render_now(&mut state, format, options, &media, cancel);
        }
        off_loop(cancel, move |token| render_now(&mut state, format, options, &media, token)).await
    }

    pub async fn events(&self, thread_id: &str, offset: u64, limit: Option<u64>) -> ServiceResult<EventPage> {
        let state = self.caught_up(thread_id).await?;
        let start = (offset as usize).min(state.events.len());
        let end = match limit {
            Some(limit) => start.saturating_add(limit as usize).min(state.events.len()),
            None => state.events.len(),
        };
        Ok(EventPage {
            version: state.record.version,
            event_count: state.record.event_count,
            events: state.events.slice(start..end),
        })
    }

    /// The last `count` events (all of them when there are fewer).
    pub async fn events_tail(&self, thread_id: &str, count: u64) -> ServiceResult<EventPage> {
        let state = self.caught_up(thread_id).await?;
        let start = state.events.len().saturating_sub(usize::try_from(count).unwrap_or(usize::MAX));
        Ok(EventPage {
            version: state.record.version,
            event_count: state.record.event_count,
            events: state.events.slice(start..state.events.len()),
        })
    }

    /// Removes the last `count` events; returns them, in thread order, with the thread after.
    pub async fn pop(
        &self,
        thread_id: &str,
        count: u64,
        expected_version: Option<u64>,
    ) -> ServiceResult<(EventLog, ThreadRecord)> {
        let shared = self.load(thread_id).await?;
        let mut state = shared.lock().await;
        let popped = self.store.pop(thread_id, expected_version, count, now_ms()).await;
        let popped = match popped {
            Err(StoreError::VersionConflict { .. }) if self.store.is_shared() => {
                // Someone else changed the thread: catch up so the next render shows it.
                self.catch_up(&mut state).await?;
                popped?
            }
            other => other?,
        };
        let record = ThreadRecord {
            version: popped.version,
            event_count: popped.event_count,
            updated_at: popped.updated_at,
            ..state.record.clone()
        };
        // Renderers only grow, so the thread's state starts anew from the events that remain.
        let only_ours = popped.version == state.record.version + 1;
        let rebuilt = if only_ours && state.events.len() as u64 == popped.event_count + popped.events.len() as u64 {
            let events = match self.store.shared_events(thread_id) {
                Some(shared) => shared,
                None => state.events.slice(0..popped.event_count as usize),
            };
            build_state(record.clone(), events, self.limits.keep_renders_up_to_bytes).await
        } else {
            // Others changed the thread since we last looked: read what the store holds.
            match self.store.events_from(thread_id, 0).await {
                Ok((record, events)) => build_state(record, events, self.limits.keep_renders_up_to_bytes).await,
                Err(e) => Err(e.into()),
            }
        };
        match rebuilt {
            Ok(rebuilt) => *state = rebuilt,
            Err(e) => {
                // The pop is durable already: forget the thread, so the next request reads it anew.
                tracing::warn!(error = ?e, "popped, but could not read the thread again yet");
                drop(state);
                self.lock_open().remove(thread_id);
            }
        }
        if let Some(observer) = &self.observer {
            observer.rewound(thread_id);
        }
        Ok((popped.events, record))
    }

    /// Creates a thread holding a prefix of `source_id` (see [`ForkPoint`]), with its settings
    /// and, unless `metadata` is given, its metadata.
    pub async fn fork(
        &self,
        source_id: &str,
        at: ForkPoint,
        thread_id: Option<String>,
        metadata: Option<Map<String, Value>>,
    ) -> ServiceResult<ThreadRecord> {
        let thread_id = thread_id_or_new(thread_id)?;
        let request = ForkThread { source_id: source_id.to_owned(), at, thread_id, metadata, now: now_ms() };
        Ok(self.store.fork(request).await?)
    }

    pub async fn info(&self, thread_id: &str) -> ServiceResult<ThreadRecord> {
        let state = self.caught_up(thread_id).await?;
        Ok(state.record.clone())
    }

    /// The thread's record and all its events, as of now.
    pub async fn snapshot(&self, thread_id: &str) -> ServiceResult<(ThreadRecord, EventLog)> {
        let state = self.caught_up(thread_id).await?;
        Ok((state.record.clone(), state.events.clone()))
    }

    /// Creates a thread holding `events`: open, then append expecting version 0, so importing
    /// into a thread that already has appends is a version conflict and changes nothing. An id
    /// taken from the document itself ([`ImportTarget::FromDocument`]) must name no thread at
    /// all: the caller did not pick it, so landing in someone's thread is refused as
    /// [`ServiceError::ThreadExists`] instead. The events come as stored text alone (validated
    /// when it was made), so a big import never holds them all parsed.
    pub async fn import(
        &self,
        target: ImportTarget,
        settings: Option<ThreadSettings>,
        metadata: Option<Map<String, Value>>,
        (events, media): (EventLog, Ingested),
    ) -> ServiceResult<ThreadRecord> {
        let (thread_id, must_be_new) = match target {
            ImportTarget::Given(id) => (id, false),
            ImportTarget::FromDocument(id) => (id, true),
            ImportTarget::New => (new_thread_id(), false),
        };
        check_thread_id(&thread_id)?;
        if let Some(record) = self.store.record(&thread_id).await? {
            if must_be_new {
                return Err(ServiceError::ThreadExists { thread_id, hint: "pass threadId to import under another id" });
            }
            if record.version != 0 {
                return Err(ServiceError::VersionConflict { thread_id, current_version: record.version });
            }
        }
        // Blobs the events name are checked before the thread is made: a refused import
        // stores nothing.
        let (events, media) = self.with_blob_info_stored(events, media).await?;
        self.open(Some(thread_id.clone()), settings, metadata).await?;
        if events.is_empty() {
            return self.info(&thread_id).await;
        }
        self.append_stored(&thread_id, events, media, Some(0)).await
    }

    pub async fn list(&self) -> ServiceResult<Vec<ThreadRecord>> {
        Ok(self.store.list().await?)
    }

    /// Frees the thread's memory. With a store that is not durable this discards the thread.
    pub async fn close(&self, thread_id: &str) -> ServiceResult<()> {
        let was_open = self.lock_open().remove(thread_id).is_some();
        if !self.store.is_durable() {
            if !self.store.delete(thread_id).await? {
                return Err(ServiceError::NotFound { thread_id: thread_id.to_owned() });
            }
            // The events were the store's; it has just freed them.
            state::give_back_memory();
        } else if !was_open && self.store.record(thread_id).await?.is_none() {
            return Err(ServiceError::NotFound { thread_id: thread_id.to_owned() });
        }
        Ok(())
    }

    pub async fn delete(&self, thread_id: &str) -> ServiceResult<bool> {
        self.lock_open().remove(thread_id);
        let deleted = self.store.delete(thread_id).await?;
        if let Some(observer) = self.observer.as_ref().filter(|_| deleted) {
            observer.rewound(thread_id);
        }
        Ok(deleted)
    }

    fn lock_open(&self) -> std::sync::MutexGuard<'_, Lru<Shared>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn cached(&self, thread_id: &str) -> Option<Shared> {
        self.lock_open().get(thread_id)
    }

    /// The open thread, loaded from the store if it is not in memory.
    async fn load(&self, thread_id: &str) -> ServiceResult<Shared> {
        if let Some(shared) = self.cached(thread_id) {
            return Ok(shared);
        }
        let (record, events) = self.store.events_from(thread_id, 0).await?;
        let state = build_state(record, events, self.limits.keep_renders_up_to_bytes).await?;
        let shared = Arc::new(AsyncMutex::new(state));
        let mut open = self.lock_open();
        // Another request may have loaded it meanwhile; keep the first.
        if let Some(existing) = open.get(thread_id) {
            return Ok(existing);
        }
        let evicted = open.insert(thread_id.to_owned(), shared.clone());
        if !evicted.is_empty() {
            tracing::debug!(count = evicted.len(), "evicted least recently used threads from memory");
        }
        Ok(shared)
    }

    /// Applies events other servers appended to a shared store.
    /// The thread's state, locked, with what other writers stored since it was read.
    async fn caught_up(&self, thread_id: &str) -> ServiceResult<OwnedMutexGuard<ThreadState>> {
        let mut state = self.load(thread_id).await?.lock_owned().await;
        self.catch_up(&mut state).await?;
        Ok(state)
    }

    async fn catch_up(&self, state: &mut ThreadState) -> ServiceResult<()> {
        if !self.store.is_shared() {
            return Ok(());
        }
        let from = state.events.len() as u64;
        let (record, events) = self.store.events_from(&state.record.thread_id, from).await?;
        let rewound = record.event_count < from
            || record.created_at != state.record.created_at
            || (record.version != state.record.version
                && self.store.rewound_since(&record.thread_id, state.record.version, from).await?);
        if rewound {
            // Deleted and made anew, or popped, elsewhere: some events we hold are gone.
            let (record, events) = self.store.events_from(&record.thread_id, 0).await?;
            *state = build_state(record, events, self.limits.keep_renders_up_to_bytes).await?;
        } else if !events.is_empty()
            || record.version != state.record.version
            || record.updated_at != state.record.updated_at
            || record.settings != state.record.settings
            || record.metadata != state.record.metadata
        {
            state.catch_up(record, events);
        }
        Ok(())
    }
}

/// Thread ids: 1–128 characters of `[A-Za-z0-9._:-]`.
pub fn check_thread_id(id: &str) -> ServiceResult<()> {
    let valid = (1..=128).contains(&id.len())
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'));
    if valid {
        Ok(())
    } else {
        Err(ServiceError::InvalidParams {
            path: "threadId".into(),
            reason: "must be 1 to 128 characters of A-Z a-z 0-9 . _ : -".into(),
        })
    }
}

fn new_thread_id() -> String {
    format!("t-{}", uuid::Uuid::new_v4().simple())
}

/// The id a caller chose, checked, or a new one.
fn thread_id_or_new(thread_id: Option<String>) -> ServiceResult<String> {
    match thread_id {
        Some(id) => {
            check_thread_id(&id)?;
            Ok(id)
        }
        None => Ok(new_thread_id()),
    }
}

/// Milliseconds since the Unix epoch: the clock of stored records and of events the server makes.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// Validates raw JSON events against the limits and the event model, all or nothing.
fn validate_events(limits: &Limits, values: Vec<Value>) -> ServiceResult<ValidEvents> {
    check_event_count(limits, values.len())?;
    let mut events = Vec::with_capacity(values.len());
    let mut stored = EventLogBuilder::with_capacity(values.len(), 0);
    let mut media = Ingested::default();
    let ingest_limits = IngestLimits { max_blob_bytes: limits.max_blob_bytes };
    for (i, mut value) in values.into_iter().enumerate() {
        // Bytes move into blobs first: the event is measured and stored as it is logged.
        ingest_event(&mut value, &format!("events[{i}]"), ingest_limits, &mut media)?;
        check_event_bytes(limits, stored.push_value(&value))?;
        events.push(AgentEvent::from_value(value, &format!("events[{i}]"))?);
    }
    Ok(ValidEvents { events, stored: stored.finish(), media })
}

/// The stored text of events that are valid already (made from a turn's blocks), one at a
/// time, within the limits of an append; the events themselves are not kept.
struct StoredEvents<'a> {
    limits: &'a Limits,
    log: EventLogBuilder,
    /// The blobs the events name, and the bytes that came with them.
    media: Ingested,
}

impl<'a> StoredEvents<'a> {
    fn new(limits: &'a Limits, count: usize) -> ServiceResult<Self> {
        check_event_count(limits, count)?;
        Ok(StoredEvents { limits, log: EventLogBuilder::with_capacity(count, 0), media: Ingested::default() })
    }

    fn push(&mut self, event: AgentEvent) -> ServiceResult<()> {
        let mut value = event.into_value();
        let path = format!("events[{}]", self.log.len());
        let ingest_limits = IngestLimits { max_blob_bytes: self.limits.max_blob_bytes };
        ingest_event(&mut value, &path, ingest_limits, &mut self.media)?;
        check_event_bytes(self.limits, self.log.push_value(&value))?;
        if self.log.len().is_multiple_of(GIVE_BACK_EVERY_EVENTS) {
            // What made these events (a turn's blocks) is freed as they are stored: its pages
            // go back as the stored text grows, so the two do not add up at the peak.
            give_back_memory();
        }
        Ok(())
    }

    fn finish(self) -> (EventLog, Ingested) {
        (self.log.finish(), self.media)
    }
}

/// [`StoredEvents`] gives freed memory back after this many events.
const GIVE_BACK_EVERY_EVENTS: usize = 4096;

fn check_event_count(limits: &Limits, count: usize) -> ServiceResult<()> {
    let max = limits.max_events_per_call;
    if count > max {
        return Err(ServiceError::Limit { limit: "maxEventsPerCall", value: count as u64, max: max as u64 });
    }
    Ok(())
}

fn check_event_bytes(limits: &Limits, bytes: usize) -> ServiceResult<()> {
    if bytes > limits.max_event_bytes {
        let max = limits.max_event_bytes as u64;
        return Err(ServiceError::Limit { limit: "maxEventBytes", value: bytes as u64, max });
    }
    Ok(())
}

/// Runs `work` on a blocking thread and answers [`ServiceError::Cancelled`] as soon as `cancel`
/// fires; the work may look at the token to stop early, or run out unobserved. For work that
/// changes nothing.
async fn off_loop<T, W>(cancel: &CancellationToken, work: W) -> ServiceResult<T>
where
    T: Send + 'static,
    W: FnOnce(&CancellationToken) -> ServiceResult<T> + Send + 'static,
{
    let token = cancel.clone();
    let job = tokio::task::spawn_blocking(move || work(&token));
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(ServiceError::Cancelled),
        done = job => done.unwrap_or_else(|e| Err(ServiceError::Internal(e.to_string()))),
    }
}

/// A thread's state, built from its events. A big thread's is built on a blocking thread, so
/// neither the reader nor an async worker waits for it (the first request on a fresh fork of a
/// long thread, or on a thread evicted or stored by another server, builds it); a request that
/// stops waiting (a cancelled read) stops the build, which keeps nothing.
async fn build_state(record: ThreadRecord, events: EventLog, keep_renders_up_to: usize) -> ServiceResult<ThreadState> {
    if events.len() < OFFLOAD_BUILDS_FROM_EVENTS {
        return Ok(ThreadState::new(record, events, keep_renders_up_to));
    }
    // Nothing cancels the build but the caller giving up on it: then the guard stops it.
    let stop = CancellationToken::new();
    let _stop_when_abandoned = stop.clone().drop_guard();
    off_loop(&stop, move |stop| {
        ThreadState::build(record, events, keep_renders_up_to, stop).map_err(|_| ServiceError::Cancelled)
    })
    .await
}

/// Threads from this many events build their state on a blocking thread (see [`build_state`]).
const OFFLOAD_BUILDS_FROM_EVENTS: usize = 4096;

/// Threads from this many events render on a blocking thread, so a cancellation is answered at
/// once; smaller ones render in place, which is cheaper than the hand-off.
const OFFLOAD_RENDERS_FROM_EVENTS: usize = 4096;

fn render_now(
    state: &mut ThreadState,
    format: RenderFormat,
    options: RenderOptions,
    media: &MediaBytes,
    cancel: &CancellationToken,
) -> ServiceResult<Rendered> {
    let rendered = render_with_renderers(state, format, options, media, cancel);
    // A thread too big to keep its renderers lets them go as soon as the answer is made.
    state.release_renderers();
    rendered
}

fn render_with_renderers(
    state: &mut ThreadState,
    format: RenderFormat,
    options: RenderOptions,
    media: &MediaBytes,
    cancel: &CancellationToken,
) -> ServiceResult<Rendered> {
    let settings = state.record.settings.clone();
    let version = state.record.version;
    let prefix = options.response_prefix.or(settings.response_prefix);
    let instructions = options.instructions.or(settings.instructions);
    let mode = options.context_mode.or(settings.context_mode).unwrap_or_default();
    let needs = if format == RenderFormat::Xml { None } else { Some(mode) };
    state.prepare(needs, options.escape, cancel).map_err(|_| ServiceError::Cancelled)?;
    Ok(match format {
        RenderFormat::Xml => match options.from_event {
            None => Rendered::Xml { version, text: state.xml_renderer(options.escape).document(prefix.as_deref()) },
            Some(from) => {
                // Positions in the compacted view: a round rewrites it, so clients start again.
                let event_count = state.view().len() as u64;
                if from > event_count {
                    return Err(ServiceError::InvalidParams {
                        path: "options.fromEvent".into(),
                        reason: format!("the thread has {event_count} events"),
                    });
                }
                let lines = state.xml_lines_from(options.escape, from as usize).to_owned();
                let mut tail = String::from("</thread>");
                if let Some(prefix) = prefix.as_deref().filter(|p| !p.is_empty()) {
                    tail.push('\n');
                    tail.push_str(prefix);
                }
                Rendered::XmlDelta { version, event_count, from_event: from, lines, tail }
            }
        },
        RenderFormat::Messages | RenderFormat::Text | RenderFormat::Provider(_) => {
            let view = View {
                instructions: instructions.as_deref(),
                response_prefix: prefix.as_deref(),
                escape: options.escape,
                dangling: options.dangling_tool_calls,
                provider: options.provider,
                media,
            };
            match format {
                RenderFormat::Provider(provider) => {
                    let json = state.provider_json(provider, mode, &view);
                    Rendered::Provider { version, context_mode: mode, provider, json }
                }
                RenderFormat::Text => {
                    Rendered::Text { version, text: messages_to_prompt(&state.messages(mode, &view)) }
                }
                _ => Rendered::Messages { version, context_mode: mode, json: state.messages_json(mode, &view) },
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_ids_are_checked() {
        assert!(check_thread_id("abc-1.2_3:4").is_ok());
        assert!(check_thread_id("").is_err());
        assert!(check_thread_id(&"a".repeat(129)).is_err());
        assert!(check_thread_id("a b").is_err());
        assert!(check_thread_id("é").is_err());
    }
}
