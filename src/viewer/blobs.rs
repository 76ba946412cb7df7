//! A thread's media, served: `/blob/<id>` (the bytes) and `/blob/<id>/thumbnail` (a small
//! re-encoded picture of an image). Only blobs that some thread of the store names are served,
//! typed as the store recorded them (never guessed from the bytes); raster images are shown
//! inline, everything else (PDF, audio, SVG, …) is a download.

use super::respond::text;
use crate::event::AgentEvent;
use crate::media::parts::blobs_of_events;
use crate::media::thumbnail::{decodable, thumbnail};
use crate::media::BlobId;
use crate::store::{Store, StoreResult, ThreadRecord};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::sync::Mutex;

/// A blob's own answer asks nothing of anyone and runs nothing: an image opened on its own
/// shows, and nothing else can happen.
const BLOB_CSP: &str = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox";

/// Thumbnails made at once: a page of many pictures asks for all of them together, and each
/// decode may hold a whole image's pixels.
static DECODING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(2);

/// Which blobs the store's threads name. A thread that grew is read from where the cache left
/// it; one that was popped since, again from its start.
#[derive(Default)]
pub struct NamedBlobs {
    by_thread: Mutex<HashMap<String, Named>>,
}

/// The blobs one thread names (sorted, once each), as of a version and event count.
#[derive(Clone, Default)]
struct Named {
    version: u64,
    event_count: u64,
    ids: Vec<BlobId>,
}

impl NamedBlobs {
    /// Whether some thread of `store` names `id` in the events it holds now.
    pub async fn is_named(&self, store: &dyn Store, id: &BlobId) -> StoreResult<bool> {
        let records = store.list().await?;
        let mut fresh = HashMap::with_capacity(records.len());
        let mut named = false;
        for record in records {
            let cached = self.cached(&record.thread_id);
            let now = match cached {
                Some(cached) if cached.version == record.version => cached,
                cached => read_named(store, &record, cached).await?,
            };
            named |= now.ids.binary_search(id).is_ok();
            fresh.insert(record.thread_id, now);
        }
        // Threads deleted since leave the cache.
        *self.by_thread.lock().unwrap_or_else(|p| p.into_inner()) = fresh;
        Ok(named)
    }

    fn cached(&self, thread_id: &str) -> Option<Named> {
        self.by_thread.lock().unwrap_or_else(|p| p.into_inner()).get(thread_id).cloned()
    }
}

/// The blobs `record`'s thread names now: the events after `cached`'s added to its ids when the
/// thread only grew since.
async fn read_named(store: &dyn Store, record: &ThreadRecord, cached: Option<Named>) -> StoreResult<Named> {
    let grown = match cached {
        Some(cached) if cached.event_count <= record.event_count => {
            match store.rewound_since(&record.thread_id, cached.version, cached.event_count).await {
                Ok(false) => Some(cached),
                _ => None,
            }
        }
        _ => None,
    };
    let Named { event_count: from, mut ids, .. } = grown.unwrap_or_default();
    match store.events_from(&record.thread_id, from).await {
        Ok((now, log)) => {
            let events: Vec<AgentEvent> = log.parse_all();
            ids.extend(blobs_of_events(&events));
            ids.sort();
            ids.dedup();
            Ok(Named { version: now.version, event_count: now.event_count, ids })
        }
        // Deleted meanwhile: it names nothing.
        Err(crate::store::StoreError::NotFound { .. }) => Ok(Named::default()),
        Err(e) => Err(e),
    }
}

/// What a blob request asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    Bytes,
    Thumbnail,
}

/// The answer to `/blob/<id>` or `/blob/<id>/thumbnail`.
pub async fn blob_response(store: &dyn Store, named: &NamedBlobs, id: &str, want: Want) -> Response {
    let Ok(id) = BlobId::parse(id) else {
        return text(StatusCode::NOT_FOUND, "no such blob: a blob id is sha256: and 64 hex digits".to_owned());
    };
    let unavailable = |e: crate::store::StoreError| text(StatusCode::SERVICE_UNAVAILABLE, e.to_string());
    match named.is_named(store, &id).await {
        Ok(true) => {}
        Ok(false) => {
            return match store.blob_info(&id).await {
                Ok(Some(_)) => text(StatusCode::FORBIDDEN, format!("forbidden: no thread names {id}")),
                Ok(None) => text(StatusCode::NOT_FOUND, format!("no blob {id}")),
                Err(e) => unavailable(e),
            }
        }
        Err(e) => return unavailable(e),
    }
    let blob = match store.blob(&id).await {
        Ok(Some(blob)) => blob,
        Ok(None) => return text(StatusCode::NOT_FOUND, format!("no blob {id}")),
        Err(e) => return unavailable(e),
    };
    let media_type = blob.info.media_type.clone();
    match want {
        Want::Bytes => bytes_response(&id, &media_type, blob.bytes.to_vec()),
        Want::Thumbnail => {
            if decodable(&media_type).is_none() {
                return text(StatusCode::NOT_FOUND, format!("{id} ({media_type}) has no thumbnail"));
            }
            let Ok(_permit) = DECODING.acquire().await else {
                return text(StatusCode::SERVICE_UNAVAILABLE, "the viewer is stopping".to_owned());
            };
            let made = tokio::task::spawn_blocking(move || thumbnail(&media_type, &blob.bytes)).await;
            match made {
                Ok(Ok(small)) => bytes_response(&id, small.media_type, small.bytes),
                Ok(Err(reason)) => text(StatusCode::NOT_FOUND, format!("{id} has no thumbnail: {reason}")),
                Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
            }
        }
    }
}

fn bytes_response(id: &BlobId, media_type: &str, bytes: Vec<u8>) -> Response {
    let content_type =
        HeaderValue::from_str(media_type).unwrap_or_else(|_| HeaderValue::from_static("application/octet-stream"));
    let mut response = ([(header::CONTENT_TYPE, content_type)], bytes).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(BLOB_CSP));
    headers.insert(header::CONTENT_DISPOSITION, disposition(id, media_type));
    response
}

/// Raster images a browser shows as pictures only are inline; anything else is a download,
/// named by its hash (a part's `filename` is the thread's text, not trusted in a header).
fn disposition(id: &BlobId, media_type: &str) -> HeaderValue {
    if decodable(media_type).is_some() {
        return HeaderValue::from_static("inline");
    }
    let hex = id.as_str().trim_start_matches("sha256:");
    let extension = match media_type {
        "application/pdf" => ".pdf",
        "audio/mpeg" => ".mp3",
        "audio/wav" | "audio/x-wav" => ".wav",
        "audio/ogg" => ".ogg",
        "audio/flac" => ".flac",
        "audio/webm" => ".webm",
        "audio/mp4" | "audio/aac" => ".m4a",
        _ => "",
    };
    HeaderValue::from_str(&format!("attachment; filename=\"blob-{}{extension}\"", &hex[..16]))
        .expect("hex digits and a fixed extension make a header value")
}
