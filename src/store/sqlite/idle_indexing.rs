//! SQLite's catch-up in the pauses between writes ([`crate::store::search::idle`]): a batch is
//! [`BATCH`] pending events indexed in one transaction ([`super::pending_index`]), on a
//! blocking thread since the connection blocks.

use super::{pending_index, Fail, Shared};
use crate::store::search::idle::{IdleIndexed, IdleIndexing};
use std::sync::Arc;

/// Events indexed per transaction (about 10–25 ms of work).
const BATCH: u64 = 2_000;

impl IdleIndexed for Shared {
    fn idle_indexing(&self) -> &IdleIndexing {
        &self.idle_indexing
    }

    async fn index_batch(self: Arc<Self>) -> Result<bool, String> {
        match tokio::task::spawn_blocking(move || self.with_connection(index_batch)).await {
            Ok(left) => left.map_err(|error| error.to_string()),
            Err(error) => Err(format!("the indexing task failed: {error}")),
        }
    }
}

/// One batch in its own transaction; whether events are still pending.
fn index_batch(conn: &mut rusqlite::Connection) -> Result<bool, Fail> {
    Ok(pending_index::catch_up_now(conn, BATCH)?.left)
}
