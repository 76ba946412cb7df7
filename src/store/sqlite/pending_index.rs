//! The search index trails the events by a pending list, as PostgreSQL's GIN `fastupdate`
//! does: an append writes its events alone, and their words reach FTS5 later, many appends in
//! one transaction, before any search reads the index.
//!
//! Why: FTS5 flushes a segment and merges at every commit, which took about half of an
//! append's time (a one-event append: 158 µs without the index, 318 µs with it; a hundred
//! events at once: 0.5× too). An agent's appends come in bursts with pauses between them
//! (the model's call), so the index is caught up in the pauses ([`super::idle_indexing`]),
//! and, for whatever is still pending, by the search itself, in its own write transaction:
//! every search sees exactly the events the threads hold, whoever appended them.
//!
//! What is pending is each thread's events from `threads.indexed_count` to `event_count`
//! (a partial index finds those threads). Pops and deletes forget the indexed events they
//! remove in their own transaction; a fork's events are pending in the fork.

use super::search::row_id;
use crate::store::search::catch_up::{CaughtUp, Progress, WholeBuild};
use crate::store::search::indexed_words;
use rusqlite::{params, Connection, TransactionBehavior};

/// Schema 4 → 5: the indexed count of each thread (everything, as schema 4 indexed in the
/// append), and the partial index of the threads with events pending.
pub(super) const MIGRATION: &str = "
    ALTER TABLE threads ADD COLUMN indexed_count INTEGER NOT NULL DEFAULT 0;
    UPDATE threads SET indexed_count = event_count;
    CREATE INDEX threads_pending_index ON threads (thread_key) WHERE indexed_count < event_count;";

/// Whether some thread has events the index does not hold yet.
pub(super) fn has_pending(conn: &Connection) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM threads WHERE indexed_count < event_count)")?
        .query_row([], |r| r.get(0))
}

/// Indexes up to `budget` pending events, oldest thread first, inside the caller's
/// transaction (which must be a write transaction, and commits).
pub(super) fn catch_up(conn: &Connection, budget: u64) -> rusqlite::Result<CaughtUp> {
    let pending: Vec<(i64, i64, i64)> = conn
        .prepare_cached(
            "SELECT thread_key, indexed_count, event_count FROM threads
             WHERE indexed_count < event_count ORDER BY thread_key",
        )?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let total: u64 = pending.iter().map(|&(_, from, to)| (to - from) as u64).sum();
    let mut progress = Progress::start(total, budget);
    let mut select =
        conn.prepare_cached("SELECT seq, body FROM events WHERE thread_key = ?1 AND seq >= ?2 AND seq < ?3")?;
    let mut insert = conn.prepare_cached("INSERT INTO search_index (rowid, words) VALUES (?1, ?2)")?;
    let mut mark = conn.prepare_cached("UPDATE threads SET indexed_count = ?2 WHERE thread_key = ?1")?;
    let mut indexed = 0u64;
    for (key, from, count) in pending {
        if indexed == budget {
            break;
        }
        let room = (budget - indexed).min(i64::MAX as u64) as i64;
        let to = count.min(from.saturating_add(room));
        let mut rows = select.query(params![key, from, to])?;
        while let Some(row) = rows.next()? {
            let (seq, body): (i64, String) = (row.get(0)?, row.get(1)?);
            insert.execute(params![row_id(key, seq), indexed_words(&body).join(" ")])?;
        }
        mark.execute(params![key, to])?;
        indexed += (to - from) as u64;
        progress.indexed(indexed);
    }
    Ok(CaughtUp { indexed, left: indexed < total })
}

/// [`catch_up`] in a write transaction of its own, committed.
pub(super) fn catch_up_now(conn: &mut Connection, budget: u64) -> rusqlite::Result<CaughtUp> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let caught_up = catch_up(&tx, budget)?;
    tx.commit()?;
    Ok(caught_up)
}

/// Indexes every event of a database from before the index (schema 3), inside the migration's
/// transaction, saying so on stderr.
pub(super) fn index_everything(conn: &Connection) -> rusqlite::Result<()> {
    let total: i64 = conn.query_row("SELECT count(*) FROM events", [], |r| r.get(0))?;
    let build = WholeBuild::start(total as u64);
    conn.execute("UPDATE threads SET indexed_count = 0", [])?;
    build.done(&catch_up(conn, u64::MAX)?);
    Ok(())
}

/// Forgets the indexed events of a thread from `keep` on (a pop to `keep` events; a delete
/// with `keep` 0), inside the caller's transaction. Pending events were never indexed.
pub(super) fn forget_from(conn: &Connection, key: i64, keep: i64) -> rusqlite::Result<()> {
    let indexed: i64 = conn
        .prepare_cached("SELECT indexed_count FROM threads WHERE thread_key = ?1")?
        .query_row([key], |r| r.get(0))?;
    let mut delete = conn.prepare_cached("DELETE FROM search_index WHERE rowid = ?1")?;
    for seq in keep..indexed {
        delete.execute([row_id(key, seq)])?;
    }
    conn.prepare_cached("UPDATE threads SET indexed_count = min(indexed_count, ?2) WHERE thread_key = ?1")?
        .execute(params![key, keep])?;
    Ok(())
}
