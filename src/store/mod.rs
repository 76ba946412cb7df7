//! Where threads live: an event log per thread, behind one trait.
//!
//! Events are appended, and taken back only from the end (`pop`); every change moves the
//! thread's version on by one, and each version's event count is kept, so a version names one
//! state of the thread for good (forks at a version, readers noticing pops).
//!
//! The service keeps rendered state in memory and treats the store as the source of truth:
//! every change is acknowledged only after the store has it. Durable stores (SQLite,
//! PostgreSQL) implement the same trait as the in-memory one.

pub mod blobs;
mod changes;
mod codec;
mod data_dir;
mod history;
mod memory;
mod postgres;
pub mod search;
mod spec;
mod sqlite;

pub use changes::ChangeSignal;
pub use data_dir::{create_private_dir, default_data_dir, default_database_path, DEFAULT_DATABASE_FILE};
pub use memory::MemoryStore;
pub use postgres::{PostgresOptions, PostgresStore};
pub use spec::{open_store, open_store_with, StoreSpec, StoreSpecError};
pub use sqlite::SqliteStore;

pub use blobs::AppendBlobs;
pub use search::{SearchPage, SearchRequest, StoredHit};

use crate::event_log::EventLog;
use crate::media::{Blob, BlobId, BlobInfo};
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Per-thread rendering settings, persisted with the thread.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ThreadSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_mode: Option<crate::messages::ContextMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_prefix: Option<String>,
}

/// Everything about a thread except its events.
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadRecord {
    pub thread_id: String,
    /// Number of successful appends; starts at 0.
    pub version: u64,
    pub event_count: u64,
    pub settings: ThreadSettings,
    pub metadata: Map<String, Value>,
    /// Milliseconds since the Unix epoch.
    pub created_at: u64,
    pub updated_at: u64,
}

/// The result of a successful append.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Appended {
    pub version: u64,
    pub event_count: u64,
    pub updated_at: u64,
}

/// The result of a successful pop: the events removed, in thread order, and the thread after.
#[derive(Clone, Debug, PartialEq)]
pub struct Popped {
    pub events: EventLog,
    pub version: u64,
    pub event_count: u64,
    pub updated_at: u64,
}

/// Which prefix of a thread a fork takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForkPoint {
    /// Every event the thread holds now.
    Whole,
    /// The first this many events.
    Events(u64),
    /// The events the thread held right after this version, which must still be its first
    /// events (no pop since has removed any of them).
    Version(u64),
}

/// A new thread holding a prefix of another.
#[derive(Clone, Debug)]
pub struct ForkThread {
    pub source_id: String,
    pub at: ForkPoint,
    pub thread_id: String,
    /// `None` copies the source's metadata.
    pub metadata: Option<Map<String, Value>>,
    /// Milliseconds since the Unix epoch.
    pub now: u64,
}

/// Which kind of store backs the server (reported by `initialize`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StoreKind {
    Memory,
    Sqlite,
    Postgres,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// No thread with this id.
    #[error("thread {thread_id:?} not found")]
    NotFound { thread_id: String },
    /// `expectedVersion` did not match.
    #[error("thread {thread_id:?} is at version {current_version}")]
    VersionConflict { thread_id: String, current_version: u64 },
    /// The store refuses to hold more threads.
    #[error("the store holds its limit of {limit} threads")]
    Full { limit: u64 },
    /// A thread with this id exists already (a fork's new id).
    #[error("thread {thread_id:?} already exists")]
    Exists { thread_id: String },
    /// A request's number does not fit the thread (`field` names it), e.g. popping more
    /// events than there are.
    #[error("{field}: {reason}")]
    OutOfRange { field: &'static str, reason: String },
    /// An append names a blob the store does not hold.
    #[error("blob {blob} is not held by the store")]
    BlobMissing { blob: String },
    /// The backing database failed or is unreachable.
    #[error("store unavailable: {0}")]
    Unavailable(String),
}

pub type StoreResult<T> = Result<T, StoreError>;

/// Changes to a thread's settings and metadata on open; `None` keeps the stored value.
#[derive(Clone, Debug, Default)]
pub struct OpenThread {
    pub thread_id: String,
    pub settings: Option<ThreadSettings>,
    pub metadata: Option<Map<String, Value>>,
    /// Milliseconds since the Unix epoch.
    pub now: u64,
}

/// The event logs of threads.
///
/// Implementations must make `append`, `pop` and `fork` atomic (all or nothing) and durable
/// before they return, and must detect `expected_version` conflicts themselves (not
/// read-then-write).
pub trait Store: Send + Sync + 'static {
    fn kind(&self) -> StoreKind;

    /// Creates the thread, or updates the given settings/metadata of an existing one.
    fn open(&self, request: OpenThread) -> BoxFuture<'_, StoreResult<ThreadRecord>>;

    /// The thread's record, if it exists.
    fn record(&self, thread_id: &str) -> BoxFuture<'_, StoreResult<Option<ThreadRecord>>>;

    /// Events from position `from` (0-based) to the end, with the record they belong to.
    fn events_from(&self, thread_id: &str, from: u64) -> BoxFuture<'_, StoreResult<(ThreadRecord, EventLog)>>;

    /// Appends all `events` or none. With `expected_version`, fails with `VersionConflict`
    /// unless the thread is at that version.
    fn append(
        &self,
        thread_id: &str,
        expected_version: Option<u64>,
        events: &EventLog,
        now: u64,
    ) -> BoxFuture<'_, StoreResult<Appended>>;

    /// Removes the last `count` events (at least 1) as one change that moves the version on,
    /// all or nothing. `expected_version` conflicts as for `append`; `count` past the thread's
    /// length is [`StoreError::OutOfRange`].
    fn pop(
        &self,
        thread_id: &str,
        expected_version: Option<u64>,
        count: u64,
        now: u64,
    ) -> BoxFuture<'_, StoreResult<Popped>>;

    /// Creates `request.thread_id` holding the prefix of the source that `request.at` names,
    /// with the source's settings; at version 1 (the prefix counts as its first append), or 0
    /// when the prefix is empty. [`StoreError::Exists`] when the new id is taken.
    fn fork(&self, request: ForkThread) -> BoxFuture<'_, StoreResult<ThreadRecord>>;

    /// [`Store::append`] of events that name blobs, all or nothing: keeps `blobs.new` (once
    /// each), fails with [`StoreError::BlobMissing`] when a blob of `blobs.named` is neither
    /// held nor new, and records that the thread names every one of them (see [`blobs`]).
    fn append_with_blobs(
        &self,
        thread_id: &str,
        expected_version: Option<u64>,
        events: &EventLog,
        blobs: &AppendBlobs,
        now: u64,
    ) -> BoxFuture<'_, StoreResult<Appended>>;

    /// Keeps `blob`, once: the same bytes again change nothing.
    fn put_blob(&self, blob: &Blob) -> BoxFuture<'_, StoreResult<()>>;

    /// The blob with its bytes, if the store holds it.
    fn blob(&self, id: &BlobId) -> BoxFuture<'_, StoreResult<Option<Blob>>>;

    /// What the store knows of a blob, without its bytes.
    fn blob_info(&self, id: &BlobId) -> BoxFuture<'_, StoreResult<Option<BlobInfo>>>;

    /// Whether a pop after `version` left the thread with fewer than `event_count` events, so
    /// a reader holding that many events must read the thread anew rather than catch up.
    fn rewound_since(&self, thread_id: &str, version: u64, event_count: u64) -> BoxFuture<'_, StoreResult<bool>>;

    /// Every thread's record, oldest first.
    fn list(&self) -> BoxFuture<'_, StoreResult<Vec<ThreadRecord>>>;

    /// Removes the thread; `false` when there was none.
    fn delete(&self, thread_id: &str) -> BoxFuture<'_, StoreResult<bool>>;

    /// The events matching `request`, best first (see [`search`]). The index is kept in the
    /// same change as the events, so a search sees exactly the events the threads hold.
    fn search(&self, request: SearchRequest) -> BoxFuture<'_, StoreResult<SearchPage>>;

    /// The thread's events, when the store holds them in memory: the text is shared, so the
    /// service keeps this log rather than a second copy of its own.
    fn shared_events(&self, _thread_id: &str) -> Option<EventLog> {
        None
    }

    /// Whether the store keeps threads after the server lets go of them (`thread/close`).
    fn is_durable(&self) -> bool {
        self.kind() != StoreKind::Memory
    }

    /// Whether other processes may append to the same threads (so reads must catch up).
    fn is_shared(&self) -> bool {
        false
    }

    /// Starts watching the whole store for changes made by anyone: this process, other
    /// processes on the same SQLite file, other servers on the same PostgreSQL database. The
    /// signal moves on after a change (open, append, pop, fork or delete) has committed; several
    /// changes may show as one, and what changed is read from the store. Watching costs the
    /// store's other calls little (PostgreSQL: changes notify only while someone watches, a few
    /// times a second per server), and stops when the last receiver is dropped.
    fn watch_changes(&self) -> BoxFuture<'_, StoreResult<ChangeSignal>>;
}
