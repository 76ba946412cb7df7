//! PostgreSQL's blobs: `threadkeeper_blobs` holds each blob's bytes once, by id;
//! `threadkeeper_blob_names` holds which threads name which blob, each name referencing its
//! blob (a foreign key), so no transaction can name a blob that another one freed.
//!
//! An append that names blobs is its own transaction, outside group commit (appends without
//! blobs never wait for one): the append's own statement (which locks the thread's row and
//! checks the version), then a share lock on the named blobs that are held (`FOR KEY SHARE`:
//! a free waits for it), the new blobs that are not held yet, and the names. Freeing after a
//! delete is a statement of its own once the delete committed, and gives way to any append
//! that named a blob meanwhile: the names' foreign key makes the free fail rather than take a
//! named blob, and the blob stays.

use super::append::APPEND_SQL;
use super::{lost_race, pg_error, Database};
use crate::event_log::EventLog;
use crate::media::{Blob, BlobId, BlobInfo};
use crate::store::{AppendBlobs, Appended, StoreError, StoreResult};
use bytes::Bytes;
use std::collections::HashSet;
use std::sync::Arc;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::Row;

/// Schema 3 → 4: the blobs and who names them. Names are keyed by thread first (a delete and a
/// fork read a thread's names) and indexed by blob (the foreign key's check when a blob is
/// freed, and the free's own question whether any thread names it).
pub(super) const MIGRATION: &str = "CREATE TABLE threadkeeper_blobs (
        id         text PRIMARY KEY,
        media_type text NOT NULL,
        size       bigint NOT NULL,
        width      bigint,
        height     bigint,
        data       bytea NOT NULL
    );
    CREATE TABLE threadkeeper_blob_names (
        thread_key bigint NOT NULL,
        blob       text NOT NULL REFERENCES threadkeeper_blobs (id),
        PRIMARY KEY (thread_key, blob)
    );
    CREATE INDEX threadkeeper_blob_names_by_blob ON threadkeeper_blob_names (blob);";

const PUT_SQL: &str = "INSERT INTO threadkeeper_blobs (id, media_type, size, width, height, data)
    VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING";

/// A new blob in an append: the update of a row that appeared meanwhile (a concurrent put)
/// locks it until the append commits, as `FOR KEY SHARE` does the ones held before.
const PUT_LOCKED_SQL: &str = "INSERT INTO threadkeeper_blobs (id, media_type, size, width, height, data)
    VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO UPDATE SET id = EXCLUDED.id";

/// The named blobs held, locked against a free until the append commits (in id order, as every
/// such lock is taken, so two appends never wait for each other in a circle).
const LOCK_HELD_SQL: &str = "SELECT id FROM threadkeeper_blobs WHERE id = ANY($1) ORDER BY id FOR KEY SHARE";

const NAME_SQL: &str = "INSERT INTO threadkeeper_blob_names (thread_key, blob)
    SELECT t.thread_key, b.id FROM threadkeeper_threads t, unnest($2::text[]) AS b(id)
    WHERE t.thread_id = $1 ON CONFLICT DO NOTHING";

/// A fork (`$2`) names what its source (`$1`) names; run in the fork's transaction.
pub(super) const COPY_NAMES_SQL: &str = "INSERT INTO threadkeeper_blob_names (thread_key, blob)
    SELECT $2, blob FROM threadkeeper_blob_names WHERE thread_key = $1";

/// Forgets what a deleted thread (`$1`) names; run in the delete's transaction. Yields the
/// blobs to try to free once it committed.
pub(super) const FORGET_NAMES_SQL: &str = "DELETE FROM threadkeeper_blob_names WHERE thread_key = $1 RETURNING blob";

const FREE_SQL: &str = "DELETE FROM threadkeeper_blobs b WHERE b.id = ANY($1)
    AND NOT EXISTS (SELECT 1 FROM threadkeeper_blob_names n WHERE n.blob = b.id)";

impl Database {
    /// One append that names blobs, as its own transaction: `Ok(None)` when it lost a race to
    /// another change and should be sent again.
    pub(super) async fn try_append_with_blobs(
        self: &Arc<Self>,
        thread_id: &str,
        expected_version: Option<u64>,
        events: &EventLog,
        blobs: &AppendBlobs,
        now: u64,
    ) -> Result<StoreResult<Appended>, tokio_postgres::Error> {
        let mut client = match self.client().await {
            Ok(client) => client,
            Err(e) => return Ok(Err(e)),
        };
        let append = client.prepare_cached(APPEND_SQL).await?;
        let tx = client.transaction().await?;
        let carry = self.notify_gate.may_carry();
        let (expected, count, at) = (expected_version.map(|v| v as i64), events.len() as i64, now as i64);
        let bodies: Vec<&str> = events.iter().collect();
        let values: [&(dyn ToSql + Sync); 6] = [&thread_id, &expected, &count, &at, &bodies, &carry];
        self.count();
        let rows = tx.query(&append, &values).await?;
        let row = rows.first();
        if !row.is_some_and(|row| row.get::<_, bool>(0)) {
            tx.rollback().await?;
            return Ok(self.outcome(thread_id, expected_version, now, row).await);
        }
        let appended = Appended {
            version: row.expect("checked above").get::<_, i64>(1) as u64,
            event_count: row.expect("checked above").get::<_, i64>(2) as u64,
            updated_at: now,
        };

        let named: Vec<&str> = blobs.named.iter().map(BlobId::as_str).collect();
        self.count();
        let held: HashSet<String> = tx.query(LOCK_HELD_SQL, &[&named]).await?.iter().map(|r| r.get(0)).collect();
        let arriving: HashSet<&str> = blobs.new.iter().map(|blob| blob.info.id.as_str()).collect();
        if let Some(missing) = named.iter().find(|id| !held.contains(**id) && !arriving.contains(**id)) {
            tx.rollback().await?;
            return Ok(Err(StoreError::BlobMissing { blob: (*missing).to_owned() }));
        }
        // The bytes of a blob held already never cross the wire again.
        for blob in blobs.new.iter().filter(|blob| !held.contains(blob.info.id.as_str())) {
            self.count();
            tx.execute(PUT_LOCKED_SQL, &BlobParams::of(blob).values()).await?;
        }
        self.count();
        tx.execute(NAME_SQL, &[&thread_id, &named]).await?;
        self.count();
        tx.commit().await?;
        if !carry {
            self.notify_gate.committed_uncarried(self);
        }
        Ok(Ok(appended))
    }

    /// [`Database::try_append_with_blobs`], sent again (with fresh numbers) when it loses a race.
    pub(super) async fn append_with_blobs(
        self: &Arc<Self>,
        thread_id: &str,
        expected_version: Option<u64>,
        events: &EventLog,
        blobs: &AppendBlobs,
        now: u64,
    ) -> StoreResult<Appended> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.try_append_with_blobs(thread_id, expected_version, events, blobs, now).await {
                Ok(result) => return result,
                Err(e) if lost_race(&e) => {
                    if let Some(error) = self.after_lost_race(thread_id, expected_version, attempt, now).await {
                        return Err(error);
                    }
                }
                Err(e) => return Err(pg_error(e)),
            }
        }
    }

    pub(super) async fn put_blob(&self, blob: &Blob) -> StoreResult<()> {
        self.query(PUT_SQL, &BlobParams::of(blob).values()).await.map(drop)
    }

    pub(super) async fn blob(&self, id: &BlobId) -> StoreResult<Option<Blob>> {
        let sql = "SELECT media_type, size, width, height, data FROM threadkeeper_blobs WHERE id = $1";
        let rows = self.query(sql, &[&id.as_str()]).await?;
        Ok(rows.first().map(|row| Blob { info: read_info(id, row), bytes: Bytes::from(row.get::<_, Vec<u8>>(4)) }))
    }

    pub(super) async fn blob_info(&self, id: &BlobId) -> StoreResult<Option<BlobInfo>> {
        let sql = "SELECT media_type, size, width, height FROM threadkeeper_blobs WHERE id = $1";
        let rows = self.query(sql, &[&id.as_str()]).await?;
        Ok(rows.first().map(|row| read_info(id, row)))
    }

    /// Frees each of `candidates` that no thread names, after the delete that stopped naming
    /// them committed. Best effort: a blob it cannot free stays kept (as a blob put and never
    /// named does). When an append named one again meanwhile, the names' foreign key fails the
    /// statement; then each is tried alone, so that one alone stays.
    pub(super) async fn free_unnamed(&self, candidates: Vec<String>) {
        if candidates.is_empty() {
            return;
        }
        match self.try_free(&candidates).await {
            Err(e) if kept_by_a_name(&e) && candidates.len() > 1 => {
                for candidate in &candidates {
                    if let Err(e) = self.try_free(std::slice::from_ref(candidate)).await {
                        log_kept(&e);
                    }
                }
            }
            Err(e) => log_kept(&e),
            Ok(()) => {}
        }
    }

    async fn try_free(&self, candidates: &[String]) -> Result<(), FreeFailure> {
        let client = self.client().await.map_err(FreeFailure::Store)?;
        let statement = client.prepare_cached(FREE_SQL).await.map_err(FreeFailure::Pg)?;
        self.count();
        client.execute(&statement, &[&candidates]).await.map_err(FreeFailure::Pg)?;
        Ok(())
    }
}

enum FreeFailure {
    Store(StoreError),
    Pg(tokio_postgres::Error),
}

/// A free that failed because a thread named the blob meanwhile (or waited in a circle with
/// such an append): keeping the blob is the right outcome.
fn kept_by_a_name(e: &FreeFailure) -> bool {
    matches!(e, FreeFailure::Pg(e) if e.code() == Some(&SqlState::FOREIGN_KEY_VIOLATION)
        || e.code() == Some(&SqlState::T_R_DEADLOCK_DETECTED))
}

fn log_kept(e: &FreeFailure) {
    match e {
        _ if kept_by_a_name(e) => tracing::debug!("PostgreSQL: a blob was named again while it was freed; kept"),
        FreeFailure::Pg(e) => tracing::warn!(error = %super::chain(e), "PostgreSQL: could not free blobs; kept"),
        FreeFailure::Store(e) => tracing::warn!(error = %e, "PostgreSQL: could not free blobs; kept"),
    }
}

/// A blob's statement parameters (`$1`…`$6`).
struct BlobParams<'a> {
    id: &'a str,
    media_type: &'a str,
    size: i64,
    width: Option<i64>,
    height: Option<i64>,
    data: &'a [u8],
}

impl<'a> BlobParams<'a> {
    fn of(blob: &'a Blob) -> Self {
        let info = &blob.info;
        BlobParams {
            id: info.id.as_str(),
            media_type: &info.media_type,
            size: info.size as i64,
            width: info.dimensions.map(|(w, _)| i64::from(w)),
            height: info.dimensions.map(|(_, h)| i64::from(h)),
            data: &blob.bytes,
        }
    }

    fn values(&self) -> [&(dyn ToSql + Sync); 6] {
        [&self.id, &self.media_type, &self.size, &self.width, &self.height, &self.data]
    }
}

fn read_info(id: &BlobId, row: &Row) -> BlobInfo {
    let width: Option<i64> = row.get(2);
    let height: Option<i64> = row.get(3);
    BlobInfo {
        id: id.clone(),
        media_type: row.get(0),
        size: row.get::<_, i64>(1) as u64,
        dimensions: width.zip(height).map(|(w, h)| (w as u32, h as u32)),
    }
}
