//! Blobs as the service serves them: `blob/put`, `blob/get`, `blob/stat`, the blobs an append
//! names checked against the store, and the bytes a render needs looked up.

use super::state::ThreadState;
use super::RenderFormat;
use super::{validate_events, ServiceError, ServiceResult, ThreadService, ValidEvents};
use crate::event::AgentEvent;
use crate::event_log::{EventLog, EventLogBuilder};
use crate::media::ingest::{add_info_to_event, describe, IngestError, IngestLimits};
use crate::media::Ingested;
use crate::media::{Blob, BlobId, BlobInfo, MediaBytes, MediaKind};
use base64::Engine as _;
use bytes::Bytes;
use serde_json::Value;

impl ThreadService {
    /// Keeps `data` (base64, or a `data:` URL) as a blob; `media_type` is checked against the
    /// bytes' signature where one is known, and read from it when absent.
    pub async fn put_blob(&self, data: &str, media_type: Option<&str>) -> ServiceResult<BlobInfo> {
        let limits = IngestLimits { max_blob_bytes: self.limits.max_blob_bytes };
        let blob = decode_blob(data, media_type, limits)?;
        self.store.put_blob(&blob).await?;
        Ok(blob.info)
    }

    pub async fn blob(&self, id: &str) -> ServiceResult<Blob> {
        let id = parse_id(id)?;
        self.store.blob(&id).await?.ok_or_else(|| not_held(&id))
    }

    pub async fn blob_info(&self, id: &str) -> ServiceResult<BlobInfo> {
        let id = parse_id(id)?;
        self.store.blob_info(&id).await?.ok_or_else(|| not_held(&id))
    }

    /// The events with what the store knows of each blob they name by id added to its parts
    /// (`size`, an image's `width` and `height`): refused, naming the part, when the store does
    /// not hold one.
    pub(super) async fn with_blob_info(&self, valid: ValidEvents) -> ServiceResult<ValidEvents> {
        if valid.media.named.is_empty() {
            return Ok(valid);
        }
        let infos = self.named_blob_infos(&valid.media).await?;
        let ValidEvents { events, media, .. } = valid;
        let values = events
            .into_iter()
            .map(|event| {
                let mut value = event.into_value();
                infos.iter().for_each(|info| add_info_to_event(&mut value, info));
                value
            })
            .collect();
        let mut again = validate_events(&self.limits, values)?;
        again.media = media;
        Ok(again)
    }

    /// [`ThreadService::with_blob_info`] for events in their stored form (an import's).
    pub(super) async fn with_blob_info_stored(
        &self,
        stored: EventLog,
        media: Ingested,
    ) -> ServiceResult<(EventLog, Ingested)> {
        if media.named.is_empty() {
            return Ok((stored, media));
        }
        let infos = self.named_blob_infos(&media).await?;
        let mut log = EventLogBuilder::with_capacity(stored.len(), 0);
        for json in stored.iter() {
            let mut value: Value = serde_json::from_str(json).map_err(|e| ServiceError::Internal(e.to_string()))?;
            infos.iter().for_each(|info| add_info_to_event(&mut value, info));
            log.push_value(&value);
        }
        Ok((log.finish(), media))
    }

    /// What the store knows of each blob `media` names by id: refused, naming the part, when
    /// it does not hold one.
    async fn named_blob_infos(&self, media: &Ingested) -> ServiceResult<Vec<BlobInfo>> {
        let mut infos = Vec::with_capacity(media.named.len());
        for (id, path) in &media.named {
            match self.store.blob_info(id).await? {
                Some(info) => infos.push(info),
                None => {
                    let reason = format!("names blob {id}, which the store does not hold (put it with blob/put, or give the part's data)");
                    return Err(ServiceError::InvalidParams { path: path.clone(), reason });
                }
            }
        }
        Ok(infos)
    }

    /// The bytes a render of `state`'s view in `format` carries: none for the formats that
    /// name media parts only (XML, text).
    pub(super) async fn media_of_view(&self, state: &ThreadState, format: RenderFormat) -> ServiceResult<MediaBytes> {
        if matches!(format, RenderFormat::Xml | RenderFormat::Text) {
            return Ok(MediaBytes::new());
        }
        self.media_for(state.view_blobs()).await
    }

    /// The bytes of the blobs `ids`.
    pub async fn media_for(&self, ids: Vec<BlobId>) -> ServiceResult<MediaBytes> {
        let mut media = MediaBytes::new();
        for id in ids {
            if media.contains(id.as_str()) {
                continue;
            }
            if let Some(blob) = self.store.blob(&id).await? {
                media.insert(&id, blob.bytes);
            }
        }
        Ok(media)
    }
}

/// How a turn document carries media parts' bytes (`thread/export`'s `blobs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BlobsForm {
    /// Parts name their blobs; the host fetches them with `blob/get`.
    #[default]
    Refs,
    /// Parts carry their bytes as base64 `data`: one self-contained document.
    Inline,
}

/// The events with each media part's `blob` replaced, in place, by its bytes as `data`.
pub(super) fn inline_blobs(events: Vec<AgentEvent>, media: &MediaBytes) -> ServiceResult<Vec<AgentEvent>> {
    events
        .into_iter()
        .map(|event| {
            let mut fields = event.into_fields();
            if let Some(Value::Array(parts)) = fields.get_mut("content") {
                for part in parts.iter_mut().filter_map(Value::as_object_mut) {
                    let Some(Value::String(id)) = part.get("blob") else { continue };
                    let bytes =
                        media.get(id).ok_or_else(|| ServiceError::Store(format!("blob {id} is named but not held")))?;
                    let data = Value::String(crate::media::bytes::to_base64(bytes));
                    *part = std::mem::take(part)
                        .into_iter()
                        .map(|(k, v)| if k == "blob" { ("data".to_owned(), data.clone()) } else { (k, v) })
                        .collect();
                }
            }
            Ok(AgentEvent::from_map(fields, "event")?)
        })
        .collect()
}

/// A blob from `blob/put`'s params.
fn decode_blob(data: &str, media_type: Option<&str>, limits: IngestLimits) -> ServiceResult<Blob> {
    let (url_type, payload) = match data.strip_prefix("data:") {
        Some(rest) => match rest.split_once(',') {
            Some((header, payload)) if header.ends_with(";base64") => {
                (Some(header.trim_end_matches(";base64")).filter(|t| !t.is_empty()), payload)
            }
            _ => return Err(invalid("data", "a data: URL must be base64 (\"data:TYPE;base64,...\")".into())),
        },
        None => (None, data),
    };
    let decoded_len = payload.trim_end_matches('=').len() as u64 * 3 / 4;
    if decoded_len > limits.max_blob_bytes as u64 {
        return Err(ServiceError::Limit {
            limit: "maxBlobBytes",
            value: decoded_len,
            max: limits.max_blob_bytes as u64,
        });
    }
    let bytes =
        crate::media::ingest::BASE64.decode(payload).map_err(|e| invalid("data", format!("not valid base64: {e}")))?;
    if bytes.is_empty() {
        return Err(invalid("data", "empty: a blob holds at least one byte".into()));
    }
    let declared = media_type.or(url_type);
    let kind = match declared.or(crate::media::sniff::media_type_of(&bytes)) {
        Some(t) if t.starts_with("image/") => MediaKind::Image,
        Some(t) if t.starts_with("audio/") => MediaKind::Audio,
        _ => MediaKind::File,
    };
    let info = describe(kind, declared, &bytes, "").map_err(|e| match e {
        // `describe` names the part's fields; here they are the params' own.
        IngestError::Invalid { path, reason } => invalid(path.trim_start_matches('.'), reason),
        other => other.into(),
    })?;
    let info = BlobInfo { media_type: info.media_type, ..info };
    Ok(Blob { info, bytes: Bytes::from(bytes) })
}

fn parse_id(id: &str) -> ServiceResult<BlobId> {
    BlobId::parse(id).map_err(|reason| invalid("blob", reason))
}

fn not_held(id: &BlobId) -> ServiceError {
    invalid("blob", format!("{id} is not held by the store"))
}

fn invalid(path: &str, reason: String) -> ServiceError {
    ServiceError::InvalidParams { path: path.to_owned(), reason }
}
