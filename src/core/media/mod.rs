//! Media in threads: content parts that name images, files and audio by the hash of their
//! bytes, and what the core needs to know of those bytes (their id, their kind and size).
//!
//! A thread's events never hold media bytes: a part names a blob (`sha256:` + 64 hex digits)
//! that a store keeps once, however many events and threads name it. Renders put the bytes
//! into a request only when a model needs them, from a [`MediaBytes`] the caller fills.
//!
//! - [`blob_id`]: the content address of a blob;
//! - [`parts`]: content parts as events carry them, validated, with a typed view;
//! - [`ingest`]: parts as hosts send them (`data` as base64 or a `data:` URL) turned into blob
//!   parts, the bytes set apart for the store;
//! - [`sniff`]: what bytes are by their signature, and an image's size from its header;
//! - [`bytes`]: the bytes a render may put into a request;
//! - [`thumbnail`]: a small re-encoded picture of an image, for pages.

pub mod blob_id;
pub mod bytes;
pub mod ingest;
pub mod parts;
pub mod sniff;
pub mod thumbnail;

pub use blob_id::BlobId;
pub use bytes::{Blob, BlobInfo, MediaBytes};
pub use ingest::{ingest_event, IngestError, IngestLimits, Ingested};
pub use parts::{MediaKind, Part, PartSource};
