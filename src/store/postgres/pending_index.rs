//! The search index trails the events: an append writes its events alone, and their vectors
//! reach the index later, many appends in one transaction, before any search reads it.
//!
//! Why: the vector and its GIN entries, written by the append's own statement, doubled each
//! append's write-ahead log (about 1,400 bytes instead of 650) and cost the database as much
//! time again (`BENCHMARKS.md`, "Many servers on one PostgreSQL"). An agent's appends come in
//! bursts with pauses between them (the model's call), so the index is caught up in the pauses
//! ([`super::idle_indexing`]) and, for whatever is still pending, by the search itself, in a
//! transaction of its own: every search sees exactly the events the threads hold, whichever
//! server appended them.
//!
//! The vectors live in `threadkeeper_event_search`, keyed as the events are, with the GIN
//! index; what is pending is each thread's events from `threadkeeper_threads.indexed_count` to
//! `event_count`. No index names those columns: an append's update of its thread's row stays a
//! heap-only (HOT) update, which a partial index of the pending threads would prevent (it names
//! `event_count`), and finding the pending threads reads the thread rows instead.
//!
//! Who indexes a thread locks its row first (`FOR NO KEY UPDATE`, as an append does), then
//! reads the events: appends, pops, forks and deletes of that thread wait for the index to
//! commit, and two servers never index the same events (the second finds them indexed). The
//! idle catch-up skips threads locked by a change (`SKIP LOCKED`); a search waits for them.
//! Locks are taken in the order appends take them (thread id, bytewise), so a search's
//! catch-up and a group of appends cannot deadlock. Pops and deletes forget the indexed events
//! they remove in their own statement or transaction; a fork copies the source's vectors of
//! the prefix it holds.

use super::search::tsvector_text;
use super::{pg_error, Database};
use crate::store::search::catch_up::{CaughtUp, Progress, WholeBuild};
use crate::store::StoreResult;
use deadpool_postgres::Transaction;
use tokio_postgres::Error;

/// Schema 5 → 6: the vectors move to a table of their own, with the GIN index; each thread's
/// indexed count is its event count where schema 5 had indexed its events in the append, and
/// zero (everything pending) for a database that comes from before the index (schema 4, whose
/// events gained an empty column on the way).
pub(super) const MIGRATION: &str = "
    CREATE TABLE threadkeeper_event_search (
        thread_key bigint NOT NULL,
        seq        bigint NOT NULL,
        search     tsvector NOT NULL,
        PRIMARY KEY (thread_key, seq)
    );
    INSERT INTO threadkeeper_event_search (thread_key, seq, search)
        SELECT thread_key, seq, search FROM threadkeeper_events WHERE search IS NOT NULL;
    ALTER TABLE threadkeeper_threads ADD COLUMN indexed_count bigint NOT NULL DEFAULT 0;
    UPDATE threadkeeper_threads t SET indexed_count = event_count
        WHERE EXISTS (SELECT 1 FROM threadkeeper_event_search s WHERE s.thread_key = t.thread_key);
    DROP INDEX IF EXISTS threadkeeper_events_search;
    ALTER TABLE threadkeeper_events DROP COLUMN search;
    CREATE INDEX threadkeeper_event_search_words ON threadkeeper_event_search
        USING gin (search) WITH (fastupdate = on);";

/// Events indexed per transaction (idle or before a search): the rows of the threads in it
/// stay locked until it commits, so an append to one of them waits for one batch at most.
pub(super) const BATCH: u64 = 2_000;

/// Whether some thread has events the index does not hold yet.
pub(super) const HAS_PENDING_SQL: &str =
    "SELECT EXISTS (SELECT 1 FROM threadkeeper_threads WHERE indexed_count < event_count)";

/// The threads with events pending and how many, in the order appends lock threads.
const PENDING_SQL: &str = "
SELECT thread_key, event_count - indexed_count FROM threadkeeper_threads
WHERE indexed_count < event_count ORDER BY thread_id COLLATE \"C\"";

const LOCK_WAITING_SQL: &str =
    "SELECT indexed_count, event_count FROM threadkeeper_threads WHERE thread_key = $1 FOR NO KEY UPDATE";

const LOCK_SKIPPING_SQL: &str = "SELECT indexed_count, event_count FROM threadkeeper_threads WHERE thread_key = $1
     FOR NO KEY UPDATE SKIP LOCKED";

const EVENTS_SQL: &str =
    "SELECT seq, body FROM threadkeeper_events WHERE thread_key = $1 AND seq >= $2 AND seq < $3 ORDER BY seq";

/// Vectors in `tsvector` text form, cast without a parser (see `search`). A row left over
/// (there should be none) is replaced rather than failing the batch.
const INSERT_SQL: &str = "
INSERT INTO threadkeeper_event_search (thread_key, seq, search)
SELECT $1, v.seq, v.words::tsvector FROM unnest($2::bigint[], $3::text[]) AS v(seq, words)
ON CONFLICT (thread_key, seq) DO UPDATE SET search = excluded.search";

const MARK_SQL: &str = "UPDATE threadkeeper_threads SET indexed_count = $2 WHERE thread_key = $1";

/// What to do about a thread whose row a change holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Locked {
    /// Wait for it (a search, which must see every event).
    Wait,
    /// Leave it for later (the idle catch-up: the change's own server catches up after it).
    Skip,
}

/// Indexes up to `budget` pending events inside the caller's transaction (which commits).
/// Round trips: one, plus three per thread with events pending.
pub(super) async fn catch_up(tx: &Transaction<'_>, budget: u64, locked: Locked) -> Result<CaughtUp, Error> {
    let pending = tx.query(&tx.prepare_cached(PENDING_SQL).await?, &[]).await?;
    let total: u64 = pending.iter().map(|row| row.get::<_, i64>(1) as u64).sum();
    let mut progress = Progress::start(total, budget);
    let lock = tx.prepare_cached(if locked == Locked::Wait { LOCK_WAITING_SQL } else { LOCK_SKIPPING_SQL }).await?;
    let events = tx.prepare_cached(EVENTS_SQL).await?;
    let insert = tx.prepare_cached(INSERT_SQL).await?;
    let mark = tx.prepare_cached(MARK_SQL).await?;
    let mut indexed = 0u64;
    for row in &pending {
        if indexed == budget {
            return Ok(CaughtUp { indexed, left: true });
        }
        let key: i64 = row.get(0);
        // The row as it is now (another server may have indexed it, a pop shortened it).
        let Some(now) = tx.query_opt(&lock, &[&key]).await? else { continue };
        let (from, count): (i64, i64) = (now.get(0), now.get(1));
        let room = (budget - indexed).min(i64::MAX as u64) as i64;
        let to = count.min(from.saturating_add(room));
        if to <= from {
            continue;
        }
        let rows = tx.query(&events, &[&key, &from, &to]).await?;
        let seqs: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
        let vectors: Vec<String> = rows.iter().map(|r| tsvector_text(r.get(1))).collect();
        let (inserted, marked) =
            futures_util::future::join(tx.execute(&insert, &[&key, &seqs, &vectors]), tx.execute(&mark, &[&key, &to]))
                .await;
        inserted?;
        marked?;
        indexed += (to - from) as u64;
        progress.indexed(indexed);
        if to < count {
            // The budget ran out inside this thread.
            return Ok(CaughtUp { indexed, left: true });
        }
    }
    Ok(CaughtUp { indexed, left: false })
}

/// Indexes every event of a database from before the index (schema 4), inside the migration's
/// transaction, saying so on stderr.
pub(super) async fn index_everything(tx: &Transaction<'_>) -> Result<(), Error> {
    let total: i64 = tx.query_one("SELECT count(*) FROM threadkeeper_events", &[]).await?.get(0);
    let build = WholeBuild::start(total as u64);
    build.done(&catch_up(tx, u64::MAX, Locked::Wait).await?);
    Ok(())
}

impl Database {
    /// Indexes up to `budget` pending events in a transaction of its own. Not counted among the
    /// round trips ([`Database::count`]): the idle catch-up's are no call's.
    pub(super) async fn index_pending_batch(&self, budget: u64, locked: Locked) -> StoreResult<CaughtUp> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let caught_up = catch_up(&tx, budget, locked).await.map_err(pg_error)?;
        tx.commit().await.map_err(pg_error)?;
        Ok(caught_up)
    }

    /// Indexes every event pending now, a batch a transaction, waiting for threads that a
    /// change holds (what a search does first); how many.
    pub(super) async fn index_all_pending(&self) -> StoreResult<u64> {
        let client = self.client().await?;
        self.count();
        let pending: bool = client.query_one(HAS_PENDING_SQL, &[]).await.map_err(pg_error)?.get(0);
        drop(client);
        let mut indexed = 0;
        if !pending {
            return Ok(indexed);
        }
        loop {
            self.count();
            let batch = self.index_pending_batch(BATCH, Locked::Wait).await?;
            indexed += batch.indexed;
            if !batch.left {
                return Ok(indexed);
            }
        }
    }
}
