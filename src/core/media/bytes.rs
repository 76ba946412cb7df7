//! Blobs as stores keep them, and the bytes a render may put into a request.

use super::blob_id::BlobId;
use base64::Engine as _;
use bytes::Bytes;
use std::collections::HashMap;

/// What is known of a blob without its bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobInfo {
    pub id: BlobId,
    pub media_type: String,
    pub size: u64,
    /// An image's width and height as its header states them.
    pub dimensions: Option<(u32, u32)>,
}

/// A blob: its bytes and what is known of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blob {
    pub info: BlobInfo,
    pub bytes: Bytes,
}

/// The bytes of the blobs a render names, by id. A render finds a blob missing only when the
/// caller did not look it up; it then names the part instead of carrying it.
#[derive(Clone, Debug, Default)]
pub struct MediaBytes {
    blobs: HashMap<String, Bytes>,
}

impl MediaBytes {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn insert(&mut self, id: &BlobId, bytes: Bytes) {
        self.blobs.insert(id.as_str().to_owned(), bytes);
    }

    pub fn get(&self, id: &str) -> Option<&[u8]> {
        self.blobs.get(id).map(|bytes| &bytes[..])
    }

    pub fn contains(&self, id: &str) -> bool {
        self.blobs.contains_key(id)
    }

    pub fn is_empty(&self) -> bool {
        self.blobs.is_empty()
    }

    /// The total size of the bytes held.
    pub fn total_bytes(&self) -> usize {
        self.blobs.values().map(Bytes::len).sum()
    }
}

/// No bytes at all: renders of threads without media, and renders that name parts only.
pub static NO_MEDIA: std::sync::LazyLock<MediaBytes> = std::sync::LazyLock::new(MediaBytes::new);

/// Bytes as standard base64 (with padding), as every provider takes them.
pub fn to_base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A `data:` URL of the bytes.
pub fn data_url(media_type: &str, bytes: &[u8]) -> String {
    let mut url = String::with_capacity(media_type.len() + 13 + bytes.len().div_ceil(3) * 4);
    url.push_str("data:");
    url.push_str(media_type);
    url.push_str(";base64,");
    base64::engine::general_purpose::STANDARD.encode_string(bytes, &mut url);
    url
}
