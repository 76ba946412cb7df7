//! The in-memory store's blobs: the bytes by id, and which threads name each.

use super::AppendBlobs;
use crate::media::{Blob, BlobId, BlobInfo};
use crate::store::{StoreError, StoreResult};
use std::collections::{HashMap, HashSet};

#[derive(Debug, Default)]
pub struct MemoryBlobs {
    blobs: HashMap<BlobId, Blob>,
    /// The threads that name each blob.
    named_by: HashMap<BlobId, HashSet<String>>,
    /// The blobs each thread names.
    names: HashMap<String, HashSet<BlobId>>,
}

impl MemoryBlobs {
    pub fn put(&mut self, blob: &Blob) {
        self.blobs.entry(blob.info.id.clone()).or_insert_with(|| blob.clone());
    }

    pub fn get(&self, id: &BlobId) -> Option<Blob> {
        self.blobs.get(id).cloned()
    }

    pub fn info(&self, id: &BlobId) -> Option<BlobInfo> {
        self.blobs.get(id).map(|blob| blob.info.clone())
    }

    /// Checks that every named blob is held or comes with the append; changes nothing.
    pub fn check(&self, blobs: &AppendBlobs) -> StoreResult<()> {
        let arriving = |id: &BlobId| blobs.new.iter().any(|blob| blob.info.id == *id);
        match blobs.named.iter().find(|id| !self.blobs.contains_key(*id) && !arriving(id)) {
            Some(id) => Err(StoreError::BlobMissing { blob: id.to_string() }),
            None => Ok(()),
        }
    }

    /// Keeps the append's new blobs and records that `thread_id` names its blobs; call after
    /// [`MemoryBlobs::check`], in the same critical section.
    pub fn record(&mut self, thread_id: &str, blobs: &AppendBlobs) {
        for blob in &blobs.new {
            self.put(blob);
        }
        for id in &blobs.named {
            self.name(thread_id, id);
        }
    }

    fn name(&mut self, thread_id: &str, id: &BlobId) {
        self.named_by.entry(id.clone()).or_default().insert(thread_id.to_owned());
        self.names.entry(thread_id.to_owned()).or_default().insert(id.clone());
    }

    /// `fork` names what `source` names.
    pub fn fork(&mut self, source: &str, fork: &str) {
        let named: Vec<BlobId> = self.names.get(source).into_iter().flatten().cloned().collect();
        for id in &named {
            self.name(fork, id);
        }
    }

    /// Forgets `thread_id`, freeing each blob no other thread names.
    pub fn delete_thread(&mut self, thread_id: &str) {
        for id in self.names.remove(thread_id).unwrap_or_default() {
            let Some(threads) = self.named_by.get_mut(&id) else { continue };
            threads.remove(thread_id);
            if threads.is_empty() {
                self.named_by.remove(&id);
                self.blobs.remove(&id);
            }
        }
    }

    /// How many blobs and bytes are held (for tests and stats).
    pub fn held(&self) -> (usize, u64) {
        (self.blobs.len(), self.blobs.values().map(|blob| blob.info.size).sum())
    }
}
