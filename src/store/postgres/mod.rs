//! PostgreSQL: threads shared by every server that uses the same database.
//!
//! Each call is one statement (so one round trip once prepared), which PostgreSQL runs as
//! its own transaction; appends waiting together share one transaction and one round trip
//! (`group_commit`, `append`). Conflicts are detected by the database: an append updates its
//! thread's row (which locks it) where the version is the expected one, and inserts a row
//! keyed `(thread, version)` and its events keyed `(thread, seq)`, so two changes to the
//! same version cannot both commit. An append with
//! `expectedVersion` that loses reports a conflict; one without goes after the winner. Reads
//! see one consistent snapshot, so a server catches up with others' appends in one query.
//! Watchers learn of changes through `signal`.

#[macro_use]
mod signal;
mod append;
mod blobs;
mod group_commit;
mod idle_indexing;
mod pace;
mod pending_index;
mod search;

use super::changes::ChangeSignal;
use super::codec::{decode_event, encode_json, seq_bound, RawRecord};
use super::history::{check_pop, fork_version, prefix_len, VersionLog};
use super::search::idle::{self, IdleIndexing};
use super::search::WindowedPage;
use super::{
    AppendBlobs, Appended, ForkPoint, ForkThread, OpenThread, Popped, SearchPage, SearchRequest, Store, StoreError,
    StoreKind, StoreResult, ThreadRecord,
};
use crate::event_log::{EventLog, EventLogBuilder};
use crate::media::{Blob, BlobId, BlobInfo};
use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Runtime};
use futures_util::future::{BoxFuture, FutureExt};
use group_commit::{BatchFailure, GroupCommitter};
use signal::NotifyGate;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio_postgres::error::SqlState;
use tokio_postgres::{NoTls, Row};
use tokio_util::sync::CancellationToken;

/// The schema this version writes; `threadkeeper_schema.version` holds the database's.
pub const SCHEMA_VERSION: i64 = 6;

/// Serializes migrations of servers starting together (`pg_advisory_xact_lock` key).
const MIGRATION_LOCK: i64 = 0x7468_7264_6b70_7231;

/// Migration `i` takes the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 0 → 1: threads, one row per append (the conflict detector), events in append order.
    "CREATE TABLE threadkeeper_threads (
        thread_key  bigserial PRIMARY KEY,
        thread_id   text NOT NULL UNIQUE,
        version     bigint NOT NULL,
        event_count bigint NOT NULL,
        settings    text NOT NULL,
        metadata    text NOT NULL,
        created_at  bigint NOT NULL,
        updated_at  bigint NOT NULL
    );
    CREATE TABLE threadkeeper_appends (
        thread_key  bigint NOT NULL REFERENCES threadkeeper_threads ON DELETE CASCADE,
        version     bigint NOT NULL,
        first_seq   bigint NOT NULL,
        event_count bigint NOT NULL,
        appended_at bigint NOT NULL,
        PRIMARY KEY (thread_key, version)
    );
    CREATE TABLE threadkeeper_events (
        thread_key bigint NOT NULL,
        seq        bigint NOT NULL,
        body       text NOT NULL,
        PRIMARY KEY (thread_key, seq)
    );",
    // 1 → 2: who watches for changes (see `signal`); leases need no durability.
    "CREATE UNLOGGED TABLE threadkeeper_watchers (
        watcher_id  text PRIMARY KEY,
        lease_until timestamptz NOT NULL,
        backend_pid integer
    );",
    // 2 → 3: version rows no longer reference their thread. An append updates its thread's row
    // (which locks it) before inserting its version row, so the reference's check, a trigger
    // and a lock per append, proved nothing; a delete removes the rows itself.
    "DO $$
    DECLARE name text;
    BEGIN
        FOR name IN SELECT conname FROM pg_constraint
                    WHERE conrelid = 'threadkeeper_appends'::regclass AND contype = 'f'
        LOOP
            EXECUTE format('ALTER TABLE threadkeeper_appends DROP CONSTRAINT %I', name);
        END LOOP;
    END $$;",
    // 3 → 4: blobs, kept once, and which threads name them (see `blobs`); nothing else changes.
    blobs::MIGRATION,
    // 4 → 5: the search column of the events (schema 5 wrote it in the append; 5 → 6 moves it).
    search::MIGRATION,
    // 5 → 6: the search index trails the events (see `pending_index`).
    pending_index::MIGRATION,
];

/// Appends without `expectedVersion` that keep losing races give up after this many tries.
const MAX_APPEND_ATTEMPTS: u32 = 64;

/// How a server uses the database (`serve --pg-…` flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PostgresOptions {
    /// Connections per server.
    pub pool_size: usize,
    /// Append statements in flight at once per server (group commit); the appends that wait
    /// meanwhile go out together in the next.
    pub commit_slots: usize,
    /// Longest a waiting append is held back for threads due back at once, so that they
    /// commit together (zero: never held).
    pub commit_hold: Duration,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        // Appends go out at once while fewer than 8 are in flight: holding one back for a batch
        // costs it a flush of the log, where PostgreSQL would have flushed it with the others
        // anyway. Batches form when more wait (many writers per server, or a slow database).
        // Two connections more serve reads, opens and pops meanwhile.
        // A hold of a millisecond is a few commits' time: enough for a host's loops that call
        // again at once, too short for anyone to notice when none is due.
        PostgresOptions { pool_size: 10, commit_slots: 8, commit_hold: Duration::from_millis(1) }
    }
}

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const POOL_WAIT_TIMEOUT: Duration = Duration::from_secs(30);

const RECORD_COLUMNS: &str =
    "t.thread_id, t.version, t.event_count, t.settings, t.metadata, t.created_at, t.updated_at";

/// Pops in one statement, as an append does: locks the thread's row first (as appends do, so
/// the two wait for each other instead of deadlocking), claims `(thread, version + 1)` with a
/// version row whose `first_seq` is the count left (and `event_count` 0), deletes the events
/// from there on, and their search vectors, and moves the thread on (its indexed count no
/// higher than what is left). The events and vectors are read in the statement's snapshot, so
/// when the locked row is newer than that snapshot (a change committed while the pop waited for
/// the lock, or vectors indexed meanwhile, `pending_index`) the pop does nothing and says so, to
/// be sent again. Yields the version and count found, when the pop happened the new version
/// and the removed events, and the snapshot's version (null when the snapshot's indexed count
/// is not the row's). `$5`: whether to notify watchers.
const POP_SQL: &str = concat!(
    "
WITH cur AS (
    SELECT thread_key, version, event_count, indexed_count FROM threadkeeper_threads WHERE thread_id = $1 FOR UPDATE
), snap AS (
    SELECT version, indexed_count FROM threadkeeper_threads WHERE thread_id = $1
), app AS (
    INSERT INTO threadkeeper_appends (thread_key, version, first_seq, event_count, appended_at)
    SELECT thread_key, version + 1, event_count - $3, 0, $4
    FROM cur WHERE ($2::bigint IS NULL OR version = $2::bigint) AND event_count >= $3
        AND (version, indexed_count) = (SELECT version, indexed_count FROM snap)
    RETURNING thread_key, version, first_seq
), del AS (
    DELETE FROM threadkeeper_events e USING app
    WHERE e.thread_key = app.thread_key AND e.seq >= app.first_seq
    RETURNING e.seq, e.body
), unindex AS (
    DELETE FROM threadkeeper_event_search s USING app
    WHERE s.thread_key = app.thread_key AND s.seq >= app.first_seq
), upd AS (
    UPDATE threadkeeper_threads t
    SET version = app.version, event_count = app.first_seq, indexed_count = least(t.indexed_count, app.first_seq),
        updated_at = $4
    FROM app WHERE t.thread_key = app.thread_key
    RETURNING CASE WHEN $5::bool AND ",
    watched!(),
    " THEN ",
    notify!(),
    " END
)
SELECT cur.version, cur.event_count, app.version, del.seq, del.body,
    (SELECT version FROM snap WHERE indexed_count = cur.indexed_count)
FROM cur LEFT JOIN app ON true LEFT JOIN del ON true ORDER BY del.seq"
);

/// The count after a version and the lowest count after it, from the version rows (each row's
/// `first_seq + event_count` is the count that version left).
const VERSION_LOG_SQL: &str = "
SELECT (SELECT first_seq + event_count FROM threadkeeper_appends WHERE thread_key = $1 AND version = $2),
       (SELECT min(first_seq + event_count) FROM threadkeeper_appends WHERE thread_key = $1 AND version > $2)";

/// A version log read ahead for one fork point.
struct FetchedLog {
    count_at: Option<u64>,
    lowest_after: Option<u64>,
}

impl VersionLog for FetchedLog {
    fn count_at(&self, _version: u64) -> StoreResult<Option<u64>> {
        Ok(self.count_at)
    }
    fn lowest_count_after(&self, _version: u64) -> StoreResult<Option<u64>> {
        Ok(self.lowest_after)
    }
}

pub struct PostgresStore {
    db: Arc<Database>,
    committer: GroupCommitter,
}

/// What a server's calls share: the pool, and the signal's gate.
pub struct Database {
    pool: Pool,
    statements: AtomicU64,
    /// Where the pool connects, for the change watch's own connection.
    config: tokio_postgres::Config,
    notify_gate: NotifyGate,
    /// Catching the search index up between writes.
    idle_indexing: IdleIndexing,
}

impl PostgresStore {
    /// Connects to the database at `url` (libpq URL syntax, no TLS) and applies migrations.
    /// Fails when the database cannot be reached now.
    pub async fn connect(url: &str) -> StoreResult<Self> {
        Self::connect_with(url, PostgresOptions::default()).await
    }

    /// As [`PostgresStore::connect`], with the pool and group commit sized by `options`.
    pub async fn connect_with(url: &str, options: PostgresOptions) -> StoreResult<Self> {
        let mut config: tokio_postgres::Config =
            url.parse().map_err(|e| StoreError::Unavailable(format!("invalid PostgreSQL URL: {e}")))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("threadkeeper");
        }
        // Fast recycling drops connections the server closed, so the pool reconnects by itself.
        let manager =
            Manager::from_config(config.clone(), NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
        let pool = Pool::builder(manager)
            .max_size(options.pool_size.max(1))
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(POOL_WAIT_TIMEOUT))
            .create_timeout(Some(CONNECT_TIMEOUT * 2))
            .recycle_timeout(Some(CONNECT_TIMEOUT))
            .build()
            .map_err(|e| StoreError::Unavailable(format!("cannot set up the connection pool: {e}")))?;
        let idle_indexing = IdleIndexing::default();
        let notify_gate = NotifyGate::new();
        let db = Arc::new(Database { pool, statements: AtomicU64::new(0), config, notify_gate, idle_indexing });
        let mut client = db.client().await?;
        migrate(&mut client).await?;
        let pending: bool = client.query_one(pending_index::HAS_PENDING_SQL, &[]).await.map_err(pg_error)?.get(0);
        drop(client);
        if pending {
            db.idle_indexing.pending_from_start();
        }
        let committer = GroupCommitter::start(db.clone(), options.commit_slots, options.commit_hold);
        idle::start_if_needed(&db);
        Ok(PostgresStore { db, committer })
    }

    /// The statement each append runs, for whoever measures or inspects the database's side:
    /// `$1` thread id (text), `$2` expected version (bigint or null), `$3` event count
    /// (bigint), `$4` time in ms (bigint), `$5` the events (text[]), `$6` whether to notify
    /// watchers (bool). The events' search vectors follow later (`pending_index`).
    pub fn append_statement() -> &'static str {
        append::APPEND_SQL
    }

    /// Indexes every event still pending for search (see `pending_index`), a batch a
    /// transaction; how many. A search does this first; the server does it when idle.
    pub async fn index_pending(&self) -> StoreResult<u64> {
        self.db.index_all_pending().await
    }

    /// After a write that left events pending: the idle catch-up is due.
    fn wrote<T>(&self, result: StoreResult<T>) -> StoreResult<T> {
        if result.is_ok() {
            self.db.idle_indexing.wrote();
            idle::start_if_needed(&self.db);
        }
        result
    }

    /// Round trips to the database so far: a statement, once prepared, or a group commit's
    /// pipelined transaction (the search index's catch-up between writes, no call's, aside).
    pub fn statements_sent(&self) -> u64 {
        self.db.statements.load(Ordering::Relaxed)
    }
}

impl Database {
    async fn client(&self) -> StoreResult<Object> {
        use deadpool_postgres::PoolError;
        self.pool.get().await.map_err(|e| match e {
            PoolError::Backend(e) => pg_error(e),
            PoolError::Timeout(_) => {
                StoreError::Unavailable("PostgreSQL: timed out waiting for a connection to the database".to_owned())
            }
            other => StoreError::Unavailable(format!("PostgreSQL: {}", chain(&other))),
        })
    }

    fn count(&self) {
        self.statements.fetch_add(1, Ordering::Relaxed);
    }

    async fn query(&self, sql: &str, params: &[&(dyn tokio_postgres::types::ToSql + Sync)]) -> StoreResult<Vec<Row>> {
        let client = self.client().await?;
        let statement = client.prepare_cached(sql).await.map_err(pg_error)?;
        self.count();
        client.query(&statement, params).await.map_err(pg_error)
    }

    async fn record(&self, thread_id: &str) -> StoreResult<Option<ThreadRecord>> {
        let sql = format!("SELECT {RECORD_COLUMNS} FROM threadkeeper_threads t WHERE t.thread_id = $1");
        let rows = self.query(&sql, &[&thread_id]).await?;
        rows.first().map(|row| raw_record(row).decode()).transpose()
    }
}

impl From<tokio_postgres::Error> for BatchFailure {
    fn from(e: tokio_postgres::Error) -> Self {
        if e.code().is_some() {
            BatchFailure::RolledBack(e)
        } else {
            BatchFailure::Unavailable(pg_error(e))
        }
    }
}

impl Database {
    /// After a change lost a race to another: the error to give up with, or `None` (after a
    /// short back-off) to try again with fresh numbers.
    async fn after_lost_race(
        &self,
        thread_id: &str,
        expected_version: Option<u64>,
        attempt: u32,
        now: u64,
    ) -> Option<StoreError> {
        let thread_id = thread_id.to_owned();
        if expected_version.is_some() {
            // Another server took that version first (or deleted the thread).
            return Some(match self.record(&thread_id).await {
                Ok(Some(record)) => StoreError::VersionConflict { thread_id, current_version: record.version },
                Ok(None) => StoreError::NotFound { thread_id },
                Err(e) => e,
            });
        }
        if attempt >= MAX_APPEND_ATTEMPTS {
            return Some(StoreError::Unavailable(format!(
                "PostgreSQL: gave up changing thread {thread_id:?} after {attempt} attempts lost to concurrent changes"
            )));
        }
        // Back off a little, differently per attempt, so racing servers spread out.
        let jitter = (now as u32 ^ attempt.wrapping_mul(2_654_435_761)) % 4;
        tokio::time::sleep(Duration::from_millis(u64::from(attempt.min(8) + jitter))).await;
        None
    }

    async fn try_pop(
        self: &Arc<Self>,
        thread_id: &str,
        expected_version: Option<u64>,
        count: u64,
        now: u64,
    ) -> Result<Option<StoreResult<Popped>>, tokio_postgres::Error> {
        let client = match self.client().await {
            Ok(client) => client,
            Err(e) => return Ok(Some(Err(e))),
        };
        let statement = client.prepare_cached(POP_SQL).await?;
        self.count();
        let expected = expected_version.map(|v| v as i64);
        let carry = self.notify_gate.may_carry();
        let rows = client.query(&statement, &[&thread_id, &expected, &seq_bound(count), &(now as i64), &carry]).await?;
        drop(client);
        if !carry && rows.first().is_some_and(|row| row.get::<_, Option<i64>>(2).is_some()) {
            self.notify_gate.committed_uncarried(self);
        }
        let Some(first) = rows.first() else {
            return Ok(Some(Err(StoreError::NotFound { thread_id: thread_id.to_owned() })));
        };
        let (current, event_count): (i64, i64) = (first.get(0), first.get(1));
        let Some(version) = first.get::<_, Option<i64>>(2) else {
            if expected_version.is_some_and(|v| v != current as u64) {
                let current_version = current as u64;
                return Ok(Some(Err(StoreError::VersionConflict { thread_id: thread_id.to_owned(), current_version })));
            }
            if first.get::<_, Option<i64>>(5) != Some(current) {
                return Ok(None); // waited for another change: read again
            }
            return Ok(Some(
                check_pop(count, event_count as u64)
                    .and(Err(StoreError::Unavailable("PostgreSQL: the pop changed nothing".into()))),
            ));
        };
        let mut events = EventLogBuilder::new();
        for row in &rows {
            let seq: Option<i64> = row.get(3);
            let body: Option<&str> = row.get(4);
            if let (Some(seq), Some(body)) = (seq, body) {
                if let Err(e) = decode_event(thread_id, seq as u64, body, &mut events) {
                    return Ok(Some(Err(e)));
                }
            }
        }
        let event_count = (event_count - seq_bound(count)) as u64;
        Ok(Some(Ok(Popped { events: events.finish(), version: version as u64, event_count, updated_at: now })))
    }

    async fn try_fork(&self, request: &ForkThread) -> StoreResult<ThreadRecord> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        // The share lock holds off pops and appends of the source until the copy is made.
        self.count();
        let source = tx
            .query_opt(
                "SELECT thread_key, version, event_count FROM threadkeeper_threads WHERE thread_id = $1 FOR SHARE",
                &[&request.source_id],
            )
            .await
            .map_err(pg_error)?;
        let Some(source) = source else {
            return Err(StoreError::NotFound { thread_id: request.source_id.clone() });
        };
        let (key, version, event_count): (i64, i64, i64) = (source.get(0), source.get(1), source.get(2));
        let log = match request.at {
            ForkPoint::Version(v) if v > 0 && v <= version as u64 => {
                self.count();
                let row = tx.query_one(VERSION_LOG_SQL, &[&key, &seq_bound(v)]).await.map_err(pg_error)?;
                let read = |i| row.get::<_, Option<i64>>(i).map(|c| c as u64);
                FetchedLog { count_at: read(0), lowest_after: read(1) }
            }
            _ => FetchedLog { count_at: None, lowest_after: None },
        };
        let prefix = prefix_len(request.at, version as u64, event_count as u64, &log)?;
        let new_version = fork_version(prefix) as i64;
        let metadata = request.metadata.as_ref().map(encode_json).transpose()?;
        let now = request.now as i64;
        // The fork holds the source's vectors of the prefix it copies; the rest is pending.
        let sql = format!(
            "INSERT INTO threadkeeper_threads AS t
                (thread_id, version, event_count, settings, metadata, created_at, updated_at, indexed_count)
             SELECT $2, $3, $4, s.settings, coalesce($5, s.metadata), $6, $6, least($4, s.indexed_count)
             FROM threadkeeper_threads s WHERE s.thread_key = $1
             ON CONFLICT (thread_id) DO NOTHING
             RETURNING t.thread_key, {RECORD_COLUMNS}"
        );
        self.count();
        let inserted = tx
            .query_opt(&sql, &[&key, &request.thread_id, &new_version, &(prefix as i64), &metadata, &now])
            .await
            .map_err(pg_error)?;
        let Some(inserted) = inserted else {
            return Err(StoreError::Exists { thread_id: request.thread_id.clone() });
        };
        let new_key: i64 = inserted.get(0);
        // One statement copies the prefix inside the database; no event passes through here.
        self.count();
        tx.execute(
            "INSERT INTO threadkeeper_events (thread_key, seq, body)
             SELECT $2, seq, body FROM threadkeeper_events WHERE thread_key = $1 AND seq < $3",
            &[&key, &new_key, &(prefix as i64)],
        )
        .await
        .map_err(pg_error)?;
        self.count();
        tx.execute(
            "INSERT INTO threadkeeper_event_search (thread_key, seq, search)
             SELECT $2, s.seq, s.search FROM threadkeeper_event_search s
             WHERE s.thread_key = $1 AND s.seq < (SELECT indexed_count FROM threadkeeper_threads WHERE thread_key = $2)",
            &[&key, &new_key],
        )
        .await
        .map_err(pg_error)?;
        self.count();
        tx.execute(blobs::COPY_NAMES_SQL, &[&key, &new_key]).await.map_err(pg_error)?;
        if new_version > 0 {
            self.count();
            tx.execute(
                "INSERT INTO threadkeeper_appends (thread_key, version, first_seq, event_count, appended_at)
                 VALUES ($1, $2, 0, $3, $4)",
                &[&new_key, &new_version, &(prefix as i64), &now],
            )
            .await
            .map_err(pg_error)?;
        }
        let record = RawRecord {
            thread_id: inserted.get(1),
            version: inserted.get(2),
            event_count: inserted.get(3),
            settings: inserted.get(4),
            metadata: inserted.get(5),
            created_at: inserted.get(6),
            updated_at: inserted.get(7),
        }
        .decode()?;
        self.count();
        tx.execute(signal::NOTIFY_IF_WATCHED_SQL, &[]).await.map_err(pg_error)?;
        tx.commit().await.map_err(pg_error)?;
        Ok(record)
    }
}

/// An error and its causes, e.g. "error connecting to server: Connection refused".
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

fn pg_error(e: tokio_postgres::Error) -> StoreError {
    StoreError::Unavailable(format!("PostgreSQL: {}", chain(&e)))
}

/// Races another append can win; trying again with fresh numbers succeeds.
fn lost_race(e: &tokio_postgres::Error) -> bool {
    matches!(
        e.code(),
        Some(c) if *c == SqlState::UNIQUE_VIOLATION
            || *c == SqlState::T_R_DEADLOCK_DETECTED
            || *c == SqlState::T_R_SERIALIZATION_FAILURE
    )
}

async fn migrate(client: &mut Object) -> StoreResult<()> {
    let tx = client.transaction().await.map_err(pg_error)?;
    tx.query("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]).await.map_err(pg_error)?;
    let exists: bool =
        tx.query_one("SELECT to_regclass('threadkeeper_schema') IS NOT NULL", &[]).await.map_err(pg_error)?.get(0);
    let version: i64 = if exists {
        let row = tx.query_opt("SELECT version FROM threadkeeper_schema", &[]).await.map_err(pg_error)?;
        row.map_or(0, |r| r.get(0))
    } else {
        0
    };
    if version > SCHEMA_VERSION {
        return Err(StoreError::Unavailable(format!(
            "the PostgreSQL database has threadkeeper schema version {version}, newer than the \
             {SCHEMA_VERSION} this threadkeeper understands; refusing to use it (use a newer threadkeeper)"
        )));
    }
    if version == SCHEMA_VERSION {
        return tx.commit().await.map_err(pg_error);
    }
    if !exists {
        tx.batch_execute(
            "CREATE TABLE threadkeeper_schema (
                singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
                version   bigint NOT NULL
            )",
        )
        .await
        .map_err(pg_error)?;
    }
    for (from, migration) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        tx.batch_execute(migration).await.map_err(pg_error)?;
        tracing::info!(from, to = from + 1, "migrated the PostgreSQL schema");
    }
    if version < 5 {
        // From before the index: every event is pending, indexed once, now.
        pending_index::index_everything(&tx).await.map_err(pg_error)?;
    }
    tx.execute(
        "INSERT INTO threadkeeper_schema (singleton, version) VALUES (true, $1)
         ON CONFLICT (singleton) DO UPDATE SET version = $1",
        &[&SCHEMA_VERSION],
    )
    .await
    .map_err(pg_error)?;
    tx.commit().await.map_err(pg_error)
}

fn raw_record(row: &Row) -> RawRecord {
    RawRecord {
        thread_id: row.get(0),
        version: row.get(1),
        event_count: row.get(2),
        settings: row.get(3),
        metadata: row.get(4),
        created_at: row.get(5),
        updated_at: row.get(6),
    }
}

impl Store for PostgresStore {
    fn append_with_blobs(
        &self,
        thread_id: &str,
        expected_version: Option<u64>,
        events: &EventLog,
        blobs: &AppendBlobs,
        now: u64,
    ) -> BoxFuture<'_, StoreResult<Appended>> {
        let thread_id = thread_id.to_owned();
        let (events, blobs) = (events.clone(), blobs.clone());
        async move { self.wrote(self.db.append_with_blobs(&thread_id, expected_version, &events, &blobs, now).await) }
            .boxed()
    }

    fn put_blob(&self, blob: &Blob) -> BoxFuture<'_, StoreResult<()>> {
        let blob = blob.clone();
        async move { self.db.put_blob(&blob).await }.boxed()
    }

    fn blob(&self, id: &BlobId) -> BoxFuture<'_, StoreResult<Option<Blob>>> {
        let id = id.clone();
        async move { self.db.blob(&id).await }.boxed()
    }

    fn blob_info(&self, id: &BlobId) -> BoxFuture<'_, StoreResult<Option<BlobInfo>>> {
        let id = id.clone();
        async move { self.db.blob_info(&id).await }.boxed()
    }

    fn kind(&self) -> StoreKind {
        StoreKind::Postgres
    }

    fn is_shared(&self) -> bool {
        true
    }

    fn open(&self, request: OpenThread) -> BoxFuture<'_, StoreResult<ThreadRecord>> {
        async move {
            let settings = request.settings.as_ref().map(encode_json).transpose()?;
            let metadata = request.metadata.as_ref().map(encode_json).transpose()?;
            let sql = format!(
                "INSERT INTO threadkeeper_threads AS t
                    (thread_id, version, event_count, settings, metadata, created_at, updated_at)
                 VALUES ($1, 0, 0, coalesce($2, '{{}}'), coalesce($3, '{{}}'), $4, $4)
                 ON CONFLICT (thread_id) DO UPDATE SET
                    settings = coalesce($2, t.settings), metadata = coalesce($3, t.metadata), updated_at = $4
                 RETURNING {RECORD_COLUMNS}"
            );
            let now = request.now as i64;
            let rows = self.db.query(&sql, &[&request.thread_id, &settings, &metadata, &now]).await?;
            let row =
                rows.first().ok_or_else(|| StoreError::Unavailable("opening the thread returned nothing".into()))?;
            raw_record(row).decode()
        }
        .boxed()
    }

    fn record(&self, thread_id: &str) -> BoxFuture<'_, StoreResult<Option<ThreadRecord>>> {
        let thread_id = thread_id.to_owned();
        async move { self.db.record(&thread_id).await }.boxed()
    }

    fn events_from(&self, thread_id: &str, from: u64) -> BoxFuture<'_, StoreResult<(ThreadRecord, EventLog)>> {
        let thread_id = thread_id.to_owned();
        async move {
            // One statement, one snapshot: the record matches the events returned.
            let sql = format!(
                "SELECT {RECORD_COLUMNS}, e.seq, e.body FROM threadkeeper_threads t
                 LEFT JOIN threadkeeper_events e ON e.thread_key = t.thread_key AND e.seq >= $2
                 WHERE t.thread_id = $1 ORDER BY e.seq"
            );
            let rows = self.db.query(&sql, &[&thread_id, &seq_bound(from)]).await?;
            let Some(first) = rows.first() else {
                return Err(StoreError::NotFound { thread_id });
            };
            let record = raw_record(first).decode()?;
            Ok((record, decode_events(thread_id, rows).await?))
        }
        .boxed()
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
        async move { self.wrote(self.committer.append(thread_id, expected_version, events, now).await) }.boxed()
    }

    fn pop(
        &self,
        thread_id: &str,
        expected_version: Option<u64>,
        count: u64,
        now: u64,
    ) -> BoxFuture<'_, StoreResult<Popped>> {
        let thread_id = thread_id.to_owned();
        async move {
            if count == 0 {
                check_pop(count, 0)?;
            }
            let mut attempt = 0;
            loop {
                attempt += 1;
                match self.db.try_pop(&thread_id, expected_version, count, now).await {
                    Ok(Some(result)) => return result,
                    Ok(None) if attempt < MAX_APPEND_ATTEMPTS => {}
                    Ok(None) => {
                        return Err(StoreError::Unavailable(format!(
                            "PostgreSQL: gave up popping from thread {thread_id:?} after {attempt} attempts lost to \
                             concurrent changes"
                        )))
                    }
                    Err(e) if lost_race(&e) => {
                        if let Some(error) = self.db.after_lost_race(&thread_id, expected_version, attempt, now).await {
                            return Err(error);
                        }
                    }
                    Err(e) => return Err(pg_error(e)),
                }
            }
        }
        .boxed()
    }

    fn fork(&self, request: ForkThread) -> BoxFuture<'_, StoreResult<ThreadRecord>> {
        // A fork racing another to the same new id waits for it, then finds the id taken.
        async move { self.wrote(self.db.try_fork(&request).await) }.boxed()
    }

    fn rewound_since(&self, thread_id: &str, version: u64, event_count: u64) -> BoxFuture<'_, StoreResult<bool>> {
        let thread_id = thread_id.to_owned();
        async move {
            let rows = self
                .db
                .query(
                    "SELECT min(a.first_seq + a.event_count) FROM threadkeeper_appends a
                     JOIN threadkeeper_threads t ON t.thread_key = a.thread_key
                     WHERE t.thread_id = $1 AND a.version > $2",
                    &[&thread_id, &seq_bound(version)],
                )
                .await?;
            let lowest: Option<i64> = rows.first().and_then(|row| row.get(0));
            Ok(lowest.is_some_and(|count| (count as u64) < event_count))
        }
        .boxed()
    }

    fn list(&self) -> BoxFuture<'_, StoreResult<Vec<ThreadRecord>>> {
        async move {
            let sql = format!("SELECT {RECORD_COLUMNS} FROM threadkeeper_threads t ORDER BY t.thread_key");
            let rows = self.db.query(&sql, &[]).await?;
            rows.iter().map(|row| raw_record(row).decode()).collect()
        }
        .boxed()
    }

    fn delete(&self, thread_id: &str) -> BoxFuture<'_, StoreResult<bool>> {
        let thread_id = thread_id.to_owned();
        async move {
            // Deleting the thread row waits for appends and pops in flight (they lock it), so
            // the versions and events deleted afterwards include theirs.
            let mut client = self.db.client().await?;
            let tx = client.transaction().await.map_err(pg_error)?;
            self.db.count();
            let deleted = tx
                .query("DELETE FROM threadkeeper_threads WHERE thread_id = $1 RETURNING thread_key", &[&thread_id])
                .await
                .map_err(pg_error)?;
            let mut unnamed = Vec::new();
            if let Some(row) = deleted.first() {
                let key: i64 = row.get(0);
                self.db.count();
                let forgotten = tx.query(blobs::FORGET_NAMES_SQL, &[&key]).await.map_err(pg_error)?;
                unnamed = forgotten.iter().map(|row| row.get(0)).collect();
                self.db.count();
                tx.execute("DELETE FROM threadkeeper_events WHERE thread_key = $1", &[&key]).await.map_err(pg_error)?;
                self.db.count();
                tx.execute("DELETE FROM threadkeeper_event_search WHERE thread_key = $1", &[&key])
                    .await
                    .map_err(pg_error)?;
                self.db.count();
                tx.execute("DELETE FROM threadkeeper_appends WHERE thread_key = $1", &[&key])
                    .await
                    .map_err(pg_error)?;
                self.db.count();
                tx.execute(signal::NOTIFY_IF_WATCHED_SQL, &[]).await.map_err(pg_error)?;
            }
            tx.commit().await.map_err(pg_error)?;
            // Its own step: an append that named one of them meanwhile keeps it.
            self.db.free_unnamed(unnamed).await;
            Ok(!deleted.is_empty())
        }
        .boxed()
    }

    fn search(&self, request: SearchRequest) -> BoxFuture<'_, StoreResult<SearchPage>> {
        async move {
            // Every event appended before, by any server, is indexed before the search reads.
            self.db.index_all_pending().await?;
            let client = self.db.client().await?;
            let statement = client.prepare_cached(search::SEARCH_SQL).await.map_err(pg_error)?;
            let query = search::tsquery(&request.query);
            let mut page = WindowedPage::new(&request);
            while let Some(slice) = page.next_slice() {
                let [take, skip, window, first] = search::slice_params(slice);
                self.db.count();
                let rows = client
                    .query(
                        &statement,
                        &[
                            &query,
                            &request.types,
                            &request.since,
                            &request.until,
                            &request.thread_ids,
                            &take,
                            &skip,
                            &window,
                            &first,
                        ],
                    )
                    .await
                    .map_err(pg_error)?;
                page.add(slice, rows.iter().map(search::hit));
            }
            Ok(page.finish())
        }
        .boxed()
    }

    fn watch_changes(&self) -> BoxFuture<'_, StoreResult<ChangeSignal>> {
        let config = self.db.config.clone();
        async move {
            let (sender, signal) = watch::channel(0);
            tokio::spawn(signal::watch_database(config, sender));
            Ok(signal)
        }
        .boxed()
    }
}

/// Rows from this many on are decoded on a blocking thread: decoding checks every event, which
/// for a long thread would hold an async worker, and a cancelled read's answer, for a large part
/// of a second.
const DECODE_OFF_LOOP_FROM_ROWS: usize = 4096;

/// The events of `events_from`'s rows. A read that stops waiting (a cancelled request) stops
/// the decoding.
async fn decode_events(thread_id: String, rows: Vec<Row>) -> StoreResult<EventLog> {
    if rows.len() < DECODE_OFF_LOOP_FROM_ROWS {
        return decode_rows(&thread_id, &rows, &CancellationToken::new());
    }
    let stop = CancellationToken::new();
    let _stop_when_abandoned = stop.clone().drop_guard();
    tokio::task::spawn_blocking(move || decode_rows(&thread_id, &rows, &stop))
        .await
        .map_err(|e| StoreError::Unavailable(format!("decoding task failed: {e}")))?
}

fn decode_rows(thread_id: &str, rows: &[Row], stop: &CancellationToken) -> StoreResult<EventLog> {
    let mut events = EventLogBuilder::new();
    for (i, row) in rows.iter().enumerate() {
        if i % 1024 == 0 && stop.is_cancelled() {
            return Err(StoreError::Unavailable("read abandoned".into()));
        }
        let seq: Option<i64> = row.get(7);
        let body: Option<&str> = row.get(8);
        if let (Some(seq), Some(body)) = (seq, body) {
            decode_event(thread_id, seq as u64, body, &mut events)?;
        }
    }
    Ok(events.finish())
}
