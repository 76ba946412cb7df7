//! SQLite's blobs: the `blobs` table holds each blob's bytes once, by id; `blob_names` holds
//! which threads name which blob. Every function here runs inside the caller's transaction, so
//! an append, fork or delete changes the names (and frees blobs) all or nothing with its
//! thread. SQLite has one writer at a time, so no free can slip between a check and a name.

use super::Fail;
use crate::media::{Blob, BlobId, BlobInfo};
use crate::store::{AppendBlobs, StoreError};
use bytes::Bytes;
use rusqlite::{params, Connection, OptionalExtension, Row};

/// Schema 2 → 3: the blobs and who names them. `blob_names` is keyed by thread first (a
/// delete and a fork read a thread's names) and indexed by blob (the free asks whether any
/// other thread names one).
pub(super) const MIGRATION: &str = "CREATE TABLE blobs (
        id         TEXT PRIMARY KEY,
        media_type TEXT NOT NULL,
        size       INTEGER NOT NULL,
        width      INTEGER,
        height     INTEGER,
        data       BLOB NOT NULL
    );
    CREATE TABLE blob_names (
        thread_key INTEGER NOT NULL,
        blob       TEXT NOT NULL,
        PRIMARY KEY (thread_key, blob)
    ) WITHOUT ROWID;
    CREATE INDEX blob_names_by_blob ON blob_names (blob);";

/// Keeps `blob` unless a blob with its id is held already (same id, same bytes).
pub(super) fn put(conn: &Connection, blob: &Blob) -> rusqlite::Result<()> {
    let info = &blob.info;
    let (width, height) = info.dimensions.unzip();
    conn.prepare_cached(
        "INSERT INTO blobs (id, media_type, size, width, height, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (id) DO NOTHING",
    )?
    .execute(params![info.id.as_str(), info.media_type, info.size as i64, width, height, &blob.bytes[..]])?;
    Ok(())
}

/// Keeps an append's new blobs, checks that every named one is held, and records that the
/// thread `key` names them.
pub(super) fn record_append(conn: &Connection, key: i64, blobs: &AppendBlobs) -> Result<(), Fail> {
    for blob in &blobs.new {
        put(conn, blob)?;
    }
    let mut held = conn.prepare_cached("SELECT 1 FROM blobs WHERE id = ?1")?;
    let mut name =
        conn.prepare_cached("INSERT INTO blob_names (thread_key, blob) VALUES (?1, ?2) ON CONFLICT DO NOTHING")?;
    for id in &blobs.named {
        if held.query_row([id.as_str()], |_| Ok(())).optional()?.is_none() {
            return Err(StoreError::BlobMissing { blob: id.to_string() }.into());
        }
        name.execute(params![key, id.as_str()])?;
    }
    Ok(())
}

/// The fork `fork` names every blob `source` names.
pub(super) fn copy_names(conn: &Connection, source: i64, fork: i64) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO blob_names (thread_key, blob) SELECT ?2, blob FROM blob_names WHERE thread_key = ?1",
    )?
    .execute(params![source, fork])?;
    Ok(())
}

/// Forgets what thread `key` names and frees each of those blobs no other thread names.
pub(super) fn delete_names(conn: &Connection, key: i64) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "DELETE FROM blobs WHERE id IN (SELECT blob FROM blob_names WHERE thread_key = ?1)
         AND NOT EXISTS (SELECT 1 FROM blob_names n WHERE n.blob = blobs.id AND n.thread_key <> ?1)",
    )?
    .execute([key])?;
    conn.prepare_cached("DELETE FROM blob_names WHERE thread_key = ?1")?.execute([key])?;
    Ok(())
}

pub(super) fn get(conn: &Connection, id: &BlobId) -> rusqlite::Result<Option<Blob>> {
    conn.prepare_cached("SELECT media_type, size, width, height, data FROM blobs WHERE id = ?1")?
        .query_row([id.as_str()], |row| {
            let info = read_info(id, row)?;
            let bytes: Vec<u8> = row.get(4)?;
            Ok(Blob { info, bytes: Bytes::from(bytes) })
        })
        .optional()
}

pub(super) fn info(conn: &Connection, id: &BlobId) -> rusqlite::Result<Option<BlobInfo>> {
    conn.prepare_cached("SELECT media_type, size, width, height FROM blobs WHERE id = ?1")?
        .query_row([id.as_str()], |row| read_info(id, row))
        .optional()
}

fn read_info(id: &BlobId, row: &Row<'_>) -> rusqlite::Result<BlobInfo> {
    let width: Option<u32> = row.get(2)?;
    let height: Option<u32> = row.get(3)?;
    Ok(BlobInfo {
        id: id.clone(),
        media_type: row.get(0)?,
        size: row.get::<_, i64>(1)? as u64,
        dimensions: width.zip(height),
    })
}
