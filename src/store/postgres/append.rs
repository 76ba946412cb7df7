//! Appends: one cheap statement per append, and a group of them pipelined in one transaction.
//!
//! An append is a single `UPDATE … RETURNING` of its thread's row (which locks the row, checks
//! `expectedVersion` against the newest committed version and moves the thread on) feeding two
//! inserts: the version row and the events. PostgreSQL plans and starts it cheaply, unlike one
//! statement that joins arrays of many appends, which is what made it the database's CPU and
//! not its log that bounded appends. Appends waiting together (`group_commit`) go out as
//! `BEGIN`, one such statement each, `COMMIT`, all written at once (one round trip, one flush
//! of the log), and each statement's rows are its own append's answer.

use super::group_commit::{AppendRequest, BatchFailure};
use super::{lost_race, pg_error, Database};
use crate::store::{Appended, StoreError, StoreResult};
use futures_util::future::{join3, join_all};
use std::sync::Arc;
use tokio_postgres::types::ToSql;
use tokio_postgres::Row;

/// One append (`$1` thread, `$2` expected version or null, `$3` event count, `$4` time, `$5`
/// the events, `$6` whether to notify watchers). The events' search vectors are not written
/// here: they trail the events (`pending_index`). Yields one row: `(true, new version, new
/// count)` when it happened; `(false, version found, null)` when the version did not match;
/// no row when there is no such thread. The version found is the statement's snapshot's,
/// which is older than the row's when a concurrent change committed while this one waited
/// for the row (the caller reads again then), and a thread deleted meanwhile shows as a
/// version found though the append expected none.
pub(super) const APPEND_SQL: &str = concat!(
    "
WITH cur AS (
    UPDATE threadkeeper_threads
    SET version = version + 1, event_count = event_count + $3, updated_at = $4
    WHERE thread_id = $1 AND ($2::bigint IS NULL OR version = $2::bigint)
    RETURNING thread_key, version, event_count
), app AS (
    INSERT INTO threadkeeper_appends (thread_key, version, first_seq, event_count, appended_at)
    SELECT thread_key, version, event_count - $3, $3, $4 FROM cur
    RETURNING CASE WHEN $6::bool AND ",
    watched!(),
    " THEN ",
    notify!(),
    " END
), ev AS (
    INSERT INTO threadkeeper_events (thread_key, seq, body)
    SELECT cur.thread_key, cur.event_count - $3 + b.pos - 1, b.body
    FROM cur, unnest($5::text[]) WITH ORDINALITY AS b(body, pos)
)
SELECT true, version, event_count FROM cur
UNION ALL
SELECT false, t.version, NULL FROM threadkeeper_threads t
WHERE t.thread_id = $1 AND NOT EXISTS (SELECT 1 FROM cur)"
);

impl Database {
    /// Sends a group of appends (each to another thread) in one transaction, in one round trip:
    /// each append's own result, or why the transaction as a whole gave none.
    pub(super) async fn append_batch(
        self: &Arc<Self>,
        batch: &[AppendRequest],
    ) -> Result<Vec<StoreResult<Appended>>, BatchFailure> {
        let client = self.client().await.map_err(BatchFailure::Unavailable)?;
        let statement = client.prepare_cached(APPEND_SQL).await.map_err(BatchFailure::from)?;
        // Rows are locked in thread order, so that two servers' groups cannot deadlock.
        let mut order: Vec<usize> = (0..batch.len()).collect();
        order.sort_by(|&a, &b| batch[a].thread_id.cmp(&batch[b].thread_id));
        let params: Vec<AppendParams> = batch.iter().map(AppendParams::of).collect();
        let carry = self.notify_gate.may_carry();
        self.count();
        let values: Vec<[&(dyn ToSql + Sync); 6]> = params.iter().map(|p| p.values(&carry)).collect();
        let rows: Vec<Vec<Row>> = if batch.len() == 1 {
            vec![client.query(&statement, &values[0]).await.map_err(BatchFailure::from)?]
        } else {
            // Requests go out in the order their futures are first polled, which `join3` and
            // `join_all` keep: BEGIN, each append, COMMIT, written back to back.
            let appends = order.iter().map(|&i| client.query(&statement, &values[i]));
            let (begun, appended, committed) =
                join3(client.batch_execute("BEGIN"), join_all(appends), client.batch_execute("COMMIT")).await;
            // Had BEGIN failed and the session lived on, the appends would have run (and
            // committed) on their own: their fate is unknown then, so none is sent again.
            begun.map_err(|e| BatchFailure::Unavailable(pg_error(e)))?;
            // A statement that failed aborted the transaction, and COMMIT then rolled it back.
            let mut in_order = Vec::with_capacity(batch.len());
            for result in appended {
                in_order.push(result.map_err(BatchFailure::from)?);
            }
            committed.map_err(BatchFailure::from)?;
            let mut rows: Vec<Vec<Row>> = vec![Vec::new(); batch.len()];
            for (&i, found) in order.iter().zip(in_order) {
                rows[i] = found;
            }
            rows
        };
        drop(client);
        let mut results = Vec::with_capacity(batch.len());
        for (request, rows) in batch.iter().zip(&rows) {
            results.push(self.outcome(&request.thread_id, request.expected_version, request.now, rows.first()).await);
        }
        let changed = results.iter().any(Result::is_ok);
        if changed && !carry {
            self.notify_gate.committed_uncarried(self);
        }
        Ok(results)
    }

    /// What an append's row says happened.
    pub(super) async fn outcome(
        &self,
        thread_id: &str,
        expected_version: Option<u64>,
        now: u64,
        row: Option<&Row>,
    ) -> StoreResult<Appended> {
        let owned_id = || thread_id.to_owned();
        let Some(row) = row else { return Err(StoreError::NotFound { thread_id: owned_id() }) };
        let version: i64 = row.get(1);
        if row.get::<_, bool>(0) {
            let count: i64 = row.get(2);
            return Ok(Appended { version: version as u64, event_count: count as u64, updated_at: now });
        }
        let Some(expected) = expected_version else {
            // Nothing but a missing row stops an append that expects no version: the thread
            // was deleted while this append waited for its row.
            return Err(StoreError::NotFound { thread_id: owned_id() });
        };
        if expected == version as u64 {
            // The snapshot still showed the expected version, so a change committed while this
            // append waited for the row: the newest version is the one to report.
            return Err(match self.record(thread_id).await? {
                Some(record) => StoreError::VersionConflict { thread_id: owned_id(), current_version: record.version },
                None => StoreError::NotFound { thread_id: owned_id() },
            });
        }
        Err(StoreError::VersionConflict { thread_id: owned_id(), current_version: version as u64 })
    }

    /// One append as its own statement, tried again (with fresh numbers) when it loses a race.
    pub(super) async fn append_alone(self: &Arc<Self>, request: &AppendRequest) -> StoreResult<Appended> {
        let thread_id = &request.thread_id;
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.append_batch(std::slice::from_ref(request)).await {
                Ok(mut results) => return results.pop().expect("one result per append"),
                Err(BatchFailure::Unavailable(e)) => return Err(e),
                Err(BatchFailure::RolledBack(e)) if lost_race(&e) => {
                    if let Some(error) =
                        self.after_lost_race(thread_id, request.expected_version, attempt, request.now).await
                    {
                        return Err(error);
                    }
                }
                Err(BatchFailure::RolledBack(e)) => return Err(pg_error(e)),
            }
        }
    }
}

/// One append's statement parameters.
struct AppendParams<'a> {
    thread_id: &'a str,
    expected: Option<i64>,
    count: i64,
    at: i64,
    bodies: Vec<&'a str>,
}

impl<'a> AppendParams<'a> {
    fn values<'s>(&'s self, carry: &'s bool) -> [&'s (dyn ToSql + Sync); 6] {
        [&self.thread_id, &self.expected, &self.count, &self.at, &self.bodies, carry]
    }

    fn of(request: &'a AppendRequest) -> Self {
        AppendParams {
            thread_id: &request.thread_id,
            expected: request.expected_version.map(|v| v as i64),
            count: request.events.len() as i64,
            at: request.now as i64,
            bodies: request.events.iter().collect(),
        }
    }
}
