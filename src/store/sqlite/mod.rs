//! SQLite: one database file, one connection, one transaction per call.
//!
//! Durability: the journal is a write-ahead log with `synchronous = FULL`, so a commit returns
//! only after its WAL frames are fsynced; an acknowledged append survives a process crash and
//! a power loss, and an interrupted one leaves no trace (uncommitted frames are ignored on
//! recovery). `NORMAL` would survive a process crash too, but may lose the last commits on
//! power loss, which the store's contract does not allow.
//!
//! Calls run on tokio's blocking pool, so the async runtime never waits on disk. Several
//! processes may use one file: writes are serialized by SQLite's lock (`BEGIN IMMEDIATE` with
//! a busy timeout) and readers catch up, so the store reports itself as shared.
//!
//! Blobs live in the same file (`blobs`), changed in the transactions of the appends, forks
//! and deletes that name, share or free them.

mod blobs;
mod idle_indexing;
mod pending_index;
mod rank_function;
mod search;

use super::changes::{bump, ChangeSignal};
use super::codec::{decode_event, encode_json, seq_bound, RawRecord};
use super::history::{check_expected_version, check_pop, fork_version, prefix_len, VersionLog};
use super::search::idle::{self, IdleIndexing};
use super::{
    AppendBlobs, Appended, ForkThread, OpenThread, Popped, SearchPage, SearchRequest, Store, StoreError, StoreKind,
    StoreResult, ThreadRecord,
};
use crate::event_log::{EventLog, EventLogBuilder};
use crate::media::{Blob, BlobId, BlobInfo};
use futures_util::future::{BoxFuture, FutureExt};
use rusqlite::types::Type;
use rusqlite::{params, Connection, OpenFlags, OptionalExtension, Row, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// The schema this version writes; `PRAGMA user_version` holds the database's.
pub const SCHEMA_VERSION: i64 = 5;

/// Marks the file as ours (`PRAGMA application_id`, "TkTh").
const APPLICATION_ID: i64 = 0x546b_5468;

/// Migration `i` takes the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 0 → 1: threads, and their events in append order.
    "CREATE TABLE threads (
        thread_key  INTEGER PRIMARY KEY AUTOINCREMENT,
        thread_id   TEXT NOT NULL UNIQUE,
        version     INTEGER NOT NULL,
        event_count INTEGER NOT NULL,
        settings    TEXT NOT NULL,
        metadata    TEXT NOT NULL,
        created_at  INTEGER NOT NULL,
        updated_at  INTEGER NOT NULL
    );
    CREATE TABLE events (
        thread_key INTEGER NOT NULL,
        seq        INTEGER NOT NULL,
        body       TEXT NOT NULL,
        PRIMARY KEY (thread_key, seq)
    ) WITHOUT ROWID;",
    // 1 → 2: the event count after every version, for forks at a version and for readers to
    // notice pops. Versions before the upgrade are unknown; each thread's current one is not.
    "CREATE TABLE versions (
        thread_key  INTEGER NOT NULL,
        version     INTEGER NOT NULL,
        event_count INTEGER NOT NULL,
        PRIMARY KEY (thread_key, version)
    ) WITHOUT ROWID;
    INSERT INTO versions (thread_key, version, event_count) SELECT thread_key, version, event_count FROM threads;",
    // 2 → 3: blobs, kept once, and which threads name them (see `blobs`); nothing else changes.
    blobs::MIGRATION,
    // 3 → 4: the search index (see `search`), filled from the events in the same transaction.
    search::MIGRATION,
    // 4 → 5: appends leave their events pending for the index (see `pending_index`).
    pending_index::MIGRATION,
];

/// How long a write waits for another process holding the database lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// How often the change watch asks SQLite whether a commit happened (one cheap pragma).
const WATCH_INTERVAL: Duration = Duration::from_millis(250);

pub struct SqliteStore {
    shared: Arc<Shared>,
}

struct Shared {
    path: PathBuf,
    /// `None` after a failure: the next call reopens the file.
    conn: Mutex<Option<Open>>,
    /// Catching the search index up between writes.
    idle_indexing: IdleIndexing,
}

/// The connection and the file it has open.
struct Open {
    conn: Connection,
    file: Option<FileId>,
}

/// Identifies a file independently of its name (device and inode).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct FileId(u64, u64);

fn file_id(path: &Path) -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| FileId(m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        std::fs::metadata(path).ok().map(|_| FileId(0, 0))
    }
}

impl SqliteStore {
    /// Opens the database at `path`, creating it if missing, and applies migrations.
    /// Blocks; call it before serving or from a blocking context.
    pub fn open(path: &Path) -> StoreResult<Self> {
        let open = Open { conn: connect(path, true)?, file: file_id(path) };
        let pending = pending_index::has_pending(&open.conn).map_err(unavailable(path))?;
        let idle_indexing = IdleIndexing::default();
        if pending {
            idle_indexing.pending_from_start();
        }
        Ok(SqliteStore {
            shared: Arc::new(Shared { path: path.to_owned(), conn: Mutex::new(Some(open)), idle_indexing }),
        })
    }

    /// Indexes every event still pending for search (see `pending_index`), in batches; how
    /// many. Searches do this themselves; this is for a caller that wants it done now.
    pub fn index_pending(&self) -> BoxFuture<'static, StoreResult<u64>> {
        self.call(|conn| Ok(pending_index::catch_up_now(conn, u64::MAX)?.indexed))
    }

    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// Runs `f` with the connection on the blocking pool.
    fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, Fail> + Send + 'static,
    ) -> BoxFuture<'static, StoreResult<T>> {
        self.call_then(false, f)
    }

    /// [`SqliteStore::call`] for a write that leaves events pending for the search index.
    fn call_leaving_pending<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, Fail> + Send + 'static,
    ) -> BoxFuture<'static, StoreResult<T>> {
        self.call_then(true, f)
    }

    fn call_then<T: Send + 'static>(
        &self,
        leaves_pending: bool,
        f: impl FnOnce(&mut Connection) -> Result<T, Fail> + Send + 'static,
    ) -> BoxFuture<'static, StoreResult<T>> {
        let shared = self.shared.clone();
        async move {
            let result = tokio::task::spawn_blocking({
                let shared = shared.clone();
                move || shared.with_connection(f)
            })
            .await
            .map_err(|e| StoreError::Unavailable(format!("database task failed: {e}")))?;
            if leaves_pending && result.is_ok() {
                shared.idle_indexing.wrote();
            }
            idle::start_if_needed(&shared);
            result
        }
        .boxed()
    }

    /// [`SqliteStore::call`] for reads whose cost grows with the thread: `f` gets a token that
    /// fires when the caller stops waiting (a cancelled request), so it stops early and frees
    /// the connection.
    fn call_stoppable<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection, &CancellationToken) -> Result<T, Fail> + Send + 'static,
    ) -> BoxFuture<'static, StoreResult<T>> {
        let stop = CancellationToken::new();
        let stop_when_abandoned = stop.clone().drop_guard();
        let call = self.call(move |conn| f(conn, &stop));
        async move {
            let _stop_when_abandoned = stop_when_abandoned;
            call.await
        }
        .boxed()
    }
}

/// A failed call: the store's own answer, or SQLite's error.
enum Fail {
    Store(StoreError),
    Sqlite(rusqlite::Error),
}

impl From<StoreError> for Fail {
    fn from(e: StoreError) -> Self {
        Fail::Store(e)
    }
}

impl From<rusqlite::Error> for Fail {
    fn from(e: rusqlite::Error) -> Self {
        Fail::Sqlite(e)
    }
}

/// Errors after which the connection itself is suspect (the file was moved, replaced or
/// damaged), so the next call opens the file anew. After I/O errors, a full disk or a busy
/// lock SQLite has rolled back and the connection stays usable: reads go on, writes are
/// tried again on the next call.
fn needs_reopen(e: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode::*;
    match e {
        rusqlite::Error::SqliteFailure(code, _) => {
            matches!(code.code, CannotOpen | NotADatabase | DatabaseCorrupt)
                || code.extended_code == rusqlite::ffi::SQLITE_READONLY_DBMOVED
        }
        _ => false,
    }
}

impl Shared {
    fn with_connection<T>(&self, f: impl FnOnce(&mut Connection) -> Result<T, Fail>) -> StoreResult<T> {
        // Every change is one transaction, so a panic cannot leave a half-applied one behind.
        let mut guard = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        // A file moved or deleted while open would take acknowledged writes with it; one
        // stat per call notices, and the connection follows the name again.
        let file = file_id(&self.path);
        if guard.as_ref().is_some_and(|open| open.file != file) {
            tracing::warn!(path = %self.path.display(), "the database file was moved, deleted or replaced");
            *guard = None;
        }
        if guard.is_none() {
            if file.is_none() {
                return Err(StoreError::Unavailable(format!(
                    "sqlite database {} is missing (moved or deleted while the server runs); put it back",
                    self.path.display()
                )));
            }
            // Reopen without creating: a database that vanished is an error, not a new empty one.
            *guard = Some(Open { conn: connect(&self.path, false)?, file });
            tracing::info!(path = %self.path.display(), "reopened the database");
        }
        match f(&mut guard.as_mut().expect("connected above").conn) {
            Ok(value) => Ok(value),
            Err(Fail::Store(e)) => Err(e),
            Err(Fail::Sqlite(e)) => {
                if needs_reopen(&e) {
                    *guard = None;
                }
                let error = sqlite_error(&self.path, &e);
                tracing::warn!(%error, reopen = guard.is_none(), "database call failed");
                Err(error)
            }
        }
    }
}

fn sqlite_error(path: &Path, e: &rusqlite::Error) -> StoreError {
    StoreError::Unavailable(format!("sqlite database {}: {}", path.display(), describe(e)))
}

fn unavailable(path: &Path) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
    move |e| sqlite_error(path, &e)
}

/// The error with SQLite's extended code, e.g. "disk I/O error (Error writing to disk, code 778)".
fn describe(e: &rusqlite::Error) -> String {
    match e {
        rusqlite::Error::SqliteFailure(code, message) => {
            let text = message.clone().unwrap_or_else(|| code.to_string());
            let name = rusqlite::ffi::code_to_str(code.extended_code);
            format!("{text} ({name}, code {})", code.extended_code)
        }
        other => other.to_string(),
    }
}

/// Why the operating system refuses the file, when it does: SQLite only says "unable to open".
fn os_reason(path: &Path) -> Option<String> {
    let result = if path.exists() {
        std::fs::OpenOptions::new().read(true).write(true).open(path).map(drop)
    } else {
        std::fs::OpenOptions::new().write(true).create_new(true).open(path).map(|_| {
            let _ = std::fs::remove_file(path);
        })
    };
    result.err().map(|e| e.to_string())
}

fn connect(path: &Path, create: bool) -> StoreResult<Connection> {
    let err = unavailable(path);
    let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if create {
        flags |= OpenFlags::SQLITE_OPEN_CREATE;
    }
    let mut conn = Connection::open_with_flags(path, flags).map_err(|e| match os_reason(path) {
        Some(reason) => StoreError::Unavailable(format!("cannot open sqlite database {}: {reason}", path.display())),
        None => err(e),
    })?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(&err)?;
    // Look before changing anything: a file that is not ours, or newer, stays untouched.
    check_schema(&conn, path)?;
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)).map_err(&err)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::Unavailable(format!(
            "sqlite database {}: cannot use a write-ahead log (journal mode stays {mode:?})",
            path.display()
        )));
    }
    conn.pragma_update(None, "synchronous", "FULL").map_err(&err)?;
    rank_function::register(&conn).map_err(&err)?;
    migrate(&mut conn, path)?;
    Ok(conn)
}

/// The database's schema version; refuses files that hold other data or a newer schema.
fn check_schema(conn: &Connection, path: &Path) -> StoreResult<i64> {
    let err = unavailable(path);
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(&err)?;
    let application_id: i64 = conn.query_row("PRAGMA application_id", [], |r| r.get(0)).map_err(&err)?;
    let tables: i64 = conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0)).map_err(&err)?;
    if application_id != APPLICATION_ID && (application_id != 0 || tables != 0) {
        return Err(StoreError::Unavailable(format!(
            "{} is not a threadkeeper database (it holds other data); refusing to change it",
            path.display()
        )));
    }
    if version > SCHEMA_VERSION {
        return Err(StoreError::Unavailable(format!(
            "database {} has schema version {version}, newer than the {SCHEMA_VERSION} this threadkeeper \
             understands; refusing to open it (use a newer threadkeeper)",
            path.display()
        )));
    }
    Ok(version)
}

/// Brings the schema to [`SCHEMA_VERSION`], one migration after the other, in one transaction.
fn migrate(conn: &mut Connection, path: &Path) -> StoreResult<()> {
    let err = unavailable(path);
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(&err)?;
    // Checked again under the write lock: another process may have migrated meanwhile.
    let version = check_schema(&tx, path)?;
    if version == SCHEMA_VERSION {
        return Ok(()); // dropping the transaction ends it; nothing was written
    }
    for (from, migration) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        tx.execute_batch(migration).map_err(&err)?;
        tracing::info!(path = %path.display(), from, to = from + 1, "migrated the database schema");
    }
    // Schema 4 indexed in the append, and the 4 → 5 migration counts its events as indexed;
    // a database from before the index has none of them indexed.
    if version < 4 {
        pending_index::index_everything(&tx).map_err(&err)?;
    }
    tx.pragma_update(None, "application_id", APPLICATION_ID).map_err(&err)?;
    tx.pragma_update(None, "user_version", SCHEMA_VERSION).map_err(&err)?;
    tx.commit().map_err(&err)
}

const RECORD_COLUMNS: &str =
    "t.thread_id, t.version, t.event_count, t.settings, t.metadata, t.created_at, t.updated_at";

fn read_record(row: &Row<'_>) -> rusqlite::Result<RawRecord> {
    Ok(RawRecord {
        thread_id: row.get(0)?,
        version: row.get(1)?,
        event_count: row.get(2)?,
        settings: row.get(3)?,
        metadata: row.get(4)?,
        created_at: row.get(5)?,
        updated_at: row.get(6)?,
    })
}

/// A text column borrowed from its row (an event's body is read without a copy of its own).
fn text_column<'r>(row: &'r Row<'_>, index: usize) -> rusqlite::Result<Option<&'r str>> {
    row.get_ref(index)?
        .as_str_or_null()
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(index, Type::Text, e.into()))
}

/// Moves the thread to `version` holding `count` events, and logs the count.
fn set_version(conn: &Connection, key: i64, version: i64, count: i64, now: u64) -> rusqlite::Result<()> {
    conn.prepare_cached("UPDATE threads SET version = ?2, event_count = ?3, updated_at = ?4 WHERE thread_key = ?1")?
        .execute(params![key, version, count, now as i64])?;
    conn.prepare_cached("INSERT INTO versions (thread_key, version, event_count) VALUES (?1, ?2, ?3)")?
        .execute(params![key, version, count])?;
    Ok(())
}

/// The key, version and event count of a thread.
fn select_current(conn: &Connection, thread_id: &str) -> rusqlite::Result<Option<(i64, i64, i64)>> {
    conn.prepare_cached("SELECT thread_key, version, event_count FROM threads WHERE thread_id = ?1")?
        .query_row([thread_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()
}

/// One thread's version log, read inside the caller's transaction.
struct Versions<'a> {
    conn: &'a Connection,
    key: i64,
}

impl VersionLog for Versions<'_> {
    fn count_at(&self, version: u64) -> StoreResult<Option<u64>> {
        let sql = "SELECT event_count FROM versions WHERE thread_key = ?1 AND version = ?2";
        self.query(sql, version)
    }
    fn lowest_count_after(&self, version: u64) -> StoreResult<Option<u64>> {
        let sql = "SELECT min(event_count) FROM versions WHERE thread_key = ?1 AND version > ?2";
        self.query(sql, version)
    }
}

impl Versions<'_> {
    fn query(&self, sql: &str, version: u64) -> StoreResult<Option<u64>> {
        let row = self.conn.prepare_cached(sql).and_then(|mut stmt| {
            stmt.query_row(params![self.key, seq_bound(version)], |r| r.get::<_, Option<i64>>(0)).optional()
        });
        // The caller's Fail keeps SQLite's own error; this path reports it as unavailable.
        row.map(|count| count.flatten().map(|c| c as u64))
            .map_err(|e| StoreError::Unavailable(format!("reading the version log: {}", describe(&e))))
    }
}

fn select_record(conn: &Connection, thread_id: &str) -> Result<Option<ThreadRecord>, Fail> {
    let sql = format!("SELECT {RECORD_COLUMNS} FROM threads t WHERE t.thread_id = ?1");
    let raw = conn.prepare_cached(&sql)?.query_row([thread_id], read_record).optional()?;
    Ok(raw.map(RawRecord::decode).transpose()?)
}

/// Appends `events` inside the caller's transaction (which commits): checks the version and
/// moves the thread on. Yields the thread's key and what the append answers.
fn append_events(
    conn: &Connection,
    thread_id: &str,
    expected_version: Option<u64>,
    events: &EventLog,
    now: u64,
) -> Result<(i64, Appended), Fail> {
    let Some((key, version, count)) = select_current(conn, thread_id)? else {
        return Err(StoreError::NotFound { thread_id: thread_id.to_owned() }.into());
    };
    check_expected_version(thread_id, expected_version, version as u64)?;
    {
        let mut insert = conn.prepare_cached("INSERT INTO events (thread_key, seq, body) VALUES (?1, ?2, ?3)")?;
        for (i, body) in events.iter().enumerate() {
            insert.execute(params![key, count + i as i64, body])?;
        }
    }
    let (version, count) = (version + 1, count + events.len() as i64);
    set_version(conn, key, version, count, now)?;
    Ok((key, Appended { version: version as u64, event_count: count as u64, updated_at: now }))
}

impl Store for SqliteStore {
    fn kind(&self) -> StoreKind {
        StoreKind::Sqlite
    }

    fn is_shared(&self) -> bool {
        true
    }

    fn open(&self, request: OpenThread) -> BoxFuture<'_, StoreResult<ThreadRecord>> {
        self.call(move |conn| {
            let settings = request.settings.as_ref().map(encode_json).transpose()?;
            let metadata = request.metadata.as_ref().map(encode_json).transpose()?;
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            tx.execute(
                "INSERT INTO threads (thread_id, version, event_count, settings, metadata, created_at, updated_at)
                 VALUES (?1, 0, 0, coalesce(?2, '{}'), coalesce(?3, '{}'), ?4, ?4)
                 ON CONFLICT (thread_id) DO UPDATE SET
                    settings = coalesce(?2, settings), metadata = coalesce(?3, metadata), updated_at = ?4",
                params![request.thread_id, settings, metadata, request.now as i64],
            )?;
            let record = select_record(&tx, &request.thread_id)?
                .ok_or_else(|| StoreError::Unavailable("the thread vanished while it was opened".into()))?;
            tx.commit()?;
            Ok(record)
        })
    }

    fn record(&self, thread_id: &str) -> BoxFuture<'_, StoreResult<Option<ThreadRecord>>> {
        let thread_id = thread_id.to_owned();
        self.call(move |conn| select_record(conn, &thread_id))
    }

    fn events_from(&self, thread_id: &str, from: u64) -> BoxFuture<'_, StoreResult<(ThreadRecord, EventLog)>> {
        let thread_id = thread_id.to_owned();
        self.call_stoppable(move |conn, stop| {
            // One statement: the record and the events come from the same snapshot.
            let sql = format!(
                "SELECT {RECORD_COLUMNS}, e.seq, e.body FROM threads t
                 LEFT JOIN events e ON e.thread_key = t.thread_key AND e.seq >= ?2
                 WHERE t.thread_id = ?1 ORDER BY e.seq"
            );
            let mut stmt = conn.prepare_cached(&sql)?;
            let mut rows = stmt.query(params![thread_id, seq_bound(from)])?;
            let mut record = None;
            let mut events = EventLogBuilder::new();
            let mut read = 0usize;
            while let Some(row) = rows.next()? {
                read += 1;
                if read.is_multiple_of(1024) && stop.is_cancelled() {
                    return Err(StoreError::Unavailable("read abandoned".into()).into());
                }
                if record.is_none() {
                    record = Some(read_record(row)?.decode()?);
                }
                let seq: Option<i64> = row.get(7)?;
                let body = text_column(row, 8)?;
                if let (Some(seq), Some(body)) = (seq, body) {
                    decode_event(&thread_id, seq as u64, body, &mut events)?;
                }
            }
            match record {
                Some(record) => Ok((record, events.finish())),
                None => Err(StoreError::NotFound { thread_id }.into()),
            }
        })
    }

    fn append(
        &self,
        thread_id: &str,
        expected_version: Option<u64>,
        events: &EventLog,
        now: u64,
    ) -> BoxFuture<'_, StoreResult<Appended>> {
        let thread_id = thread_id.to_owned();
        let events = events.clone();
        self.call_leaving_pending(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let (_, appended) = append_events(&tx, &thread_id, expected_version, &events, now)?;
            // Returns once the commit is on disk (synchronous = FULL).
            tx.commit()?;
            Ok(appended)
        })
    }

    fn append_with_blobs(
        &self,
        thread_id: &str,
        expected_version: Option<u64>,
        events: &EventLog,
        blobs: &AppendBlobs,
        now: u64,
    ) -> BoxFuture<'_, StoreResult<Appended>> {
        let thread_id = thread_id.to_owned();
        let events = events.clone();
        let blobs = blobs.clone();
        self.call_leaving_pending(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let (key, appended) = append_events(&tx, &thread_id, expected_version, &events, now)?;
            // A missing blob returns before the commit: dropping the transaction undoes the events.
            blobs::record_append(&tx, key, &blobs)?;
            tx.commit()?;
            Ok(appended)
        })
    }

    fn put_blob(&self, blob: &Blob) -> BoxFuture<'_, StoreResult<()>> {
        let blob = blob.clone();
        self.call(move |conn| Ok(blobs::put(conn, &blob)?))
    }

    fn blob(&self, id: &BlobId) -> BoxFuture<'_, StoreResult<Option<Blob>>> {
        let id = id.clone();
        self.call(move |conn| Ok(blobs::get(conn, &id)?))
    }

    fn blob_info(&self, id: &BlobId) -> BoxFuture<'_, StoreResult<Option<BlobInfo>>> {
        let id = id.clone();
        self.call(move |conn| Ok(blobs::info(conn, &id)?))
    }

    fn pop(
        &self,
        thread_id: &str,
        expected_version: Option<u64>,
        count: u64,
        now: u64,
    ) -> BoxFuture<'_, StoreResult<Popped>> {
        let thread_id = thread_id.to_owned();
        self.call(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let Some((key, version, event_count)) = select_current(&tx, &thread_id)? else {
                return Err(StoreError::NotFound { thread_id }.into());
            };
            check_expected_version(&thread_id, expected_version, version as u64)?;
            check_pop(count, event_count as u64)?;
            let keep = event_count - count as i64;
            let mut events = EventLogBuilder::new();
            {
                let mut select =
                    tx.prepare_cached("SELECT seq, body FROM events WHERE thread_key = ?1 AND seq >= ?2 ORDER BY seq")?;
                let mut rows = select.query(params![key, keep])?;
                while let Some(row) = rows.next()? {
                    let seq: i64 = row.get(0)?;
                    let body = text_column(row, 1)?.unwrap_or_default();
                    decode_event(&thread_id, seq as u64, body, &mut events)?;
                }
            }
            tx.prepare_cached("DELETE FROM events WHERE thread_key = ?1 AND seq >= ?2")?.execute(params![key, keep])?;
            pending_index::forget_from(&tx, key, keep)?;
            set_version(&tx, key, version + 1, keep, now)?;
            tx.commit()?;
            Ok(Popped {
                events: events.finish(),
                version: version as u64 + 1,
                event_count: keep as u64,
                updated_at: now,
            })
        })
    }

    fn fork(&self, request: ForkThread) -> BoxFuture<'_, StoreResult<ThreadRecord>> {
        // The fork's events are pending for the index, like appended ones.
        self.call_leaving_pending(move |conn| {
            let metadata = request.metadata.as_ref().map(encode_json).transpose()?;
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let Some((source, version, event_count)) = select_current(&tx, &request.source_id)? else {
                return Err(StoreError::NotFound { thread_id: request.source_id }.into());
            };
            let log = Versions { conn: &tx, key: source };
            let prefix = prefix_len(request.at, version as u64, event_count as u64, &log)?;
            let version = fork_version(prefix) as i64;
            let inserted = tx.execute(
                "INSERT INTO threads (thread_id, version, event_count, settings, metadata, created_at, updated_at)
                 SELECT ?2, ?3, ?4, settings, coalesce(?5, metadata), ?6, ?6 FROM threads WHERE thread_key = ?1
                 ON CONFLICT (thread_id) DO NOTHING",
                params![source, request.thread_id, version, prefix as i64, metadata, request.now as i64],
            )?;
            if inserted == 0 {
                return Err(StoreError::Exists { thread_id: request.thread_id }.into());
            }
            let key = tx.last_insert_rowid();
            // One statement copies the prefix inside the database; no event passes through here.
            tx.execute(
                "INSERT INTO events (thread_key, seq, body) SELECT ?2, seq, body FROM events
                 WHERE thread_key = ?1 AND seq < ?3",
                params![source, key, prefix as i64],
            )?;
            if version > 0 {
                tx.execute(
                    "INSERT INTO versions (thread_key, version, event_count) VALUES (?1, ?2, ?3)",
                    params![key, version, prefix as i64],
                )?;
            }
            blobs::copy_names(&tx, source, key)?;
            let record = select_record(&tx, &request.thread_id)?
                .ok_or_else(|| StoreError::Unavailable("the fork vanished while it was made".into()))?;
            tx.commit()?;
            Ok(record)
        })
    }

    fn rewound_since(&self, thread_id: &str, version: u64, event_count: u64) -> BoxFuture<'_, StoreResult<bool>> {
        let thread_id = thread_id.to_owned();
        self.call(move |conn| {
            let tx = conn.transaction()?;
            let Some((key, _, _)) = select_current(&tx, &thread_id)? else {
                return Err(StoreError::NotFound { thread_id }.into());
            };
            let lowest = Versions { conn: &tx, key }.lowest_count_after(version)?;
            Ok(lowest.is_some_and(|count| count < event_count))
        })
    }

    fn list(&self) -> BoxFuture<'_, StoreResult<Vec<ThreadRecord>>> {
        self.call(move |conn| {
            let sql = format!("SELECT {RECORD_COLUMNS} FROM threads t ORDER BY t.thread_key");
            let mut stmt = conn.prepare_cached(&sql)?;
            let mut records = Vec::new();
            for raw in stmt.query_map([], read_record)? {
                records.push(raw?.decode()?);
            }
            Ok(records)
        })
    }

    fn delete(&self, thread_id: &str) -> BoxFuture<'_, StoreResult<bool>> {
        let thread_id = thread_id.to_owned();
        self.call(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let Some((key, _, _)) = select_current(&tx, &thread_id)? else {
                return Ok(false);
            };
            pending_index::forget_from(&tx, key, 0)?;
            for table in ["events", "versions"] {
                tx.execute(&format!("DELETE FROM {table} WHERE thread_key = ?1"), [key])?;
            }
            blobs::delete_names(&tx, key)?;
            tx.execute("DELETE FROM threads WHERE thread_key = ?1", [key])?;
            tx.commit()?;
            Ok(true)
        })
    }

    fn search(&self, request: SearchRequest) -> BoxFuture<'_, StoreResult<SearchPage>> {
        self.call(move |conn| {
            // One transaction: the matches and the events they name agree, and nothing is
            // appended between the catch-up and the search.
            let tx = conn.transaction()?;
            if !pending_index::has_pending(&tx)? {
                return Ok(search::search(&tx, &request)?);
            }
            drop(tx);
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            pending_index::catch_up(&tx, u64::MAX)?;
            let page = search::search(&tx, &request)?;
            tx.commit()?;
            Ok(page)
        })
    }

    fn watch_changes(&self) -> BoxFuture<'_, StoreResult<ChangeSignal>> {
        let path = self.shared.path.clone();
        async move {
            let conn = watch_connection(&path)?;
            let (sender, signal) = watch::channel(0);
            let shown = path.display().to_string();
            std::thread::Builder::new()
                .name("sqlite-watch".to_owned())
                .spawn(move || watch_file(&path, conn, &sender))
                .map_err(|e| StoreError::Unavailable(format!("cannot start watching {shown}: {e}")))?;
            Ok(signal)
        }
        .boxed()
    }
}

/// A connection of the watch's own: `PRAGMA data_version` moves on when any other connection,
/// in this process or another, commits to the file. It never writes, nor creates the file.
fn watch_connection(path: &Path) -> StoreResult<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(unavailable(path))?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(unavailable(path))?;
    Ok(conn)
}

fn data_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA data_version", [], |r| r.get(0))
}

/// Polls the file's `data_version` until nobody watches; a file replaced or a failed read
/// reconnects and counts as a change (anything may have happened meanwhile).
fn watch_file(path: &Path, conn: Connection, sender: &watch::Sender<u64>) {
    let mut file = file_id(path);
    let mut seen = data_version(&conn).ok();
    let mut conn = Some(conn);
    while !sender.is_closed() {
        std::thread::sleep(WATCH_INTERVAL);
        let now_file = file_id(path);
        if now_file != file {
            file = now_file;
            conn = None;
        }
        if conn.is_none() {
            conn = watch_connection(path).ok();
            seen = None;
        }
        let Some(open) = &conn else { continue };
        match data_version(open) {
            Ok(version) if seen == Some(version) => {}
            Ok(version) => {
                bump(sender);
                seen = Some(version);
            }
            Err(e) => {
                tracing::debug!(path = %path.display(), error = %e, "change watch reconnects");
                conn = None;
            }
        }
    }
}
