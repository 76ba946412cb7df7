//! Blobs: media bytes kept once by their hash, however many events and threads name them.
//!
//! The rules every store keeps (the conformance suite checks them in each):
//!
//! - A blob is kept once: putting the same bytes again changes nothing.
//! - An append whose events name blobs records, in its own transaction, that its thread names
//!   them; it fails as a whole ([`super::StoreError::BlobMissing`]) when one is not held.
//! - A fork names every blob its source names, so it shares them.
//! - Deleting a thread frees each blob it named that no other thread names. Nothing a thread
//!   still names is ever freed, also with two servers on one database: freeing is its own
//!   step after the delete, and an append that names a blob holds it against that step.
//! - A thread names a blob until it is deleted (a pop does not free what the popped events
//!   named), and a blob put with `blob/put` that no thread ever names stays kept.
//!
//! [`MemoryBlobs`] is the in-memory store's table; SQLite and PostgreSQL keep theirs in tables
//! beside the threads.

mod memory;

pub use memory::MemoryBlobs;

use crate::media::{Blob, BlobId};

/// What an append whose events name blobs brings besides its events.
#[derive(Clone, Debug, Default)]
pub struct AppendBlobs {
    /// Blobs whose bytes came with the append, to keep (once) with it.
    pub new: Vec<Blob>,
    /// Every blob the events name, once each (the new ones included).
    pub named: Vec<BlobId>,
}
