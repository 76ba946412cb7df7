//! PostgreSQL's catch-up in the pauses between writes ([`crate::store::search::idle`]): a batch
//! is [`BATCH`] pending events indexed in one transaction ([`super::pending_index`]), skipping
//! threads that a change holds at that moment (their server catches up after it, or the next
//! search does). It indexes other servers' pending events too: the database is one index.

use super::pending_index::{Locked, BATCH};
use super::Database;
use crate::store::search::idle::{IdleIndexed, IdleIndexing};
use std::sync::Arc;

impl IdleIndexed for Database {
    fn idle_indexing(&self) -> &IdleIndexing {
        &self.idle_indexing
    }

    async fn index_batch(self: Arc<Self>) -> Result<bool, String> {
        match self.index_pending_batch(BATCH, Locked::Skip).await {
            Ok(batch) => Ok(batch.left),
            Err(error) => Err(error.to_string()),
        }
    }
}
