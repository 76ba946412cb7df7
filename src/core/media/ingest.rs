//! Media parts as hosts send them, turned into parts as threads keep them.
//!
//! A host may give a media part's bytes as `data` (base64, or a `data:` URL). Ingesting an
//! event decodes them, checks them (not empty, within [`IngestLimits::max_blob_bytes`], of the
//! declared type where the signature can tell, an image's header within bounds), and replaces
//! `data` with the `blob` id, in its place, adding `size` and, for images, `width` and
//! `height`. The bytes are set apart for the store. Parts that name a `blob` are listed, so the
//! caller can check the store holds it and add what it knows of it.

use super::blob_id::BlobId;
use super::bytes::{Blob, BlobInfo};
use super::parts::{check_media_type, MediaKind};
use super::sniff;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine as _;
use bytes::Bytes;
use serde_json::{Map, Value};

/// The bounds an ingested blob must keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IngestLimits {
    pub max_blob_bytes: usize,
}

impl IngestLimits {
    /// The server's default: a 20 MB screenshot is an honest input.
    pub const DEFAULT: IngestLimits = IngestLimits { max_blob_bytes: 32 << 20 };
}

/// Why a part was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IngestError {
    #[error("{path}: {reason}")]
    Invalid { path: String, reason: String },
    /// The bytes are over [`IngestLimits::max_blob_bytes`].
    #[error("{path}: {value} bytes is over the {max}-byte limit of a blob")]
    TooBig { path: String, value: u64, max: u64 },
}

/// What ingesting events set apart: new blobs with their bytes, and the blobs parts named by
/// id, each with the path of the first part naming it.
#[derive(Clone, Debug, Default)]
pub struct Ingested {
    pub new_blobs: Vec<Blob>,
    pub named: Vec<(BlobId, String)>,
}

impl Ingested {
    /// Whether the events hold any blob part (new or named): such an append records which
    /// blobs its thread names.
    pub fn is_empty(&self) -> bool {
        self.new_blobs.is_empty() && self.named.is_empty()
    }

    /// Every blob id the events name, once each, new ones first.
    pub fn all_ids(&self) -> Vec<BlobId> {
        let mut ids: Vec<BlobId> = self.new_blobs.iter().map(|blob| blob.info.id.clone()).collect();
        ids.extend(self.named.iter().map(|(id, _)| id.clone()));
        ids.sort();
        ids.dedup();
        ids
    }

    fn add_new(&mut self, blob: Blob) {
        if !self.new_blobs.iter().any(|known| known.info.id == blob.info.id) {
            self.new_blobs.push(blob);
        }
    }

    /// Moves the blobs of `brought` that parts name by id into [`Ingested::new_blobs`]: the
    /// bytes came with the events (an importer read them), so the store need not hold them yet.
    pub fn provide(&mut self, brought: &[Blob]) {
        for blob in brought {
            if let Some(at) = self.named.iter().position(|(id, _)| *id == blob.info.id) {
                self.named.remove(at);
                self.add_new(blob.clone());
            }
        }
    }

    fn add_named(&mut self, id: BlobId, path: String) {
        if !self.named.iter().any(|(known, _)| *known == id) && !self.new_blobs.iter().any(|b| b.info.id == id) {
            self.named.push((id, path));
        }
    }
}

/// Ingests the parts of one event (`path` names it, e.g. `events[3]`). Events of other types,
/// and string contents, are left as they are; shapes that are not parts are left for event
/// validation to name.
pub fn ingest_event(
    event: &mut Value,
    path: &str,
    limits: IngestLimits,
    out: &mut Ingested,
) -> Result<(), IngestError> {
    let Value::Object(fields) = event else { return Ok(()) };
    if !matches!(fields.get("type").and_then(Value::as_str), Some("message" | "tool_result")) {
        return Ok(());
    }
    let Some(Value::Array(parts)) = fields.get_mut("content") else { return Ok(()) };
    for (i, part) in parts.iter_mut().enumerate() {
        let part_path = format!("{path}.content[{i}]");
        let Value::Object(part) = part else { continue };
        if MediaKind::from_name(part.get("type").and_then(Value::as_str).unwrap_or_default()).is_none() {
            continue;
        }
        if let Some(blob) = ingest_part(part, &part_path, limits)? {
            out.add_new(blob);
        } else if let Some(Value::String(id)) = part.get("blob") {
            let id = BlobId::parse(id).map_err(|reason| invalid(&format!("{part_path}.blob"), reason))?;
            out.add_named(id, format!("{part_path}.blob"));
        }
    }
    Ok(())
}

/// Ingests one media part (`path` names it): its `data` becomes a blob, given back, and the
/// part names it in its place. A part without `data`, or of no media kind, is left as it is.
pub fn ingest_part(
    part: &mut Map<String, Value>,
    path: &str,
    limits: IngestLimits,
) -> Result<Option<Blob>, IngestError> {
    let Some(kind) = part.get("type").and_then(Value::as_str).and_then(MediaKind::from_name) else { return Ok(None) };
    if !part.contains_key("data") {
        return Ok(None);
    }
    take_data(part, kind, path, limits).map(Some)
}

/// Decodes, checks and stores aside one part's `data`, rewriting the part to name its blob.
fn take_data(
    part: &mut Map<String, Value>,
    kind: MediaKind,
    path: &str,
    limits: IngestLimits,
) -> Result<Blob, IngestError> {
    let data_path = format!("{path}.data");
    if part.contains_key("blob") || part.contains_key("url") {
        return Err(invalid(path, "a part gives one of `data`, `blob` or `url`".into()));
    }
    let declared = match part.get("mediaType") {
        None => None,
        Some(Value::String(media_type)) => Some(media_type.clone()),
        Some(_) => return Err(invalid(&format!("{path}.mediaType"), "expected a string".into())),
    };
    let Some(Value::String(data)) = part.get("data") else {
        return Err(invalid(&data_path, "expected a string of base64 or a data: URL".into()));
    };
    let (url_type, bytes) = decode(data, &data_path, limits)?;
    let info = describe(kind, declared.as_deref().or(url_type.as_deref()), &bytes, path)?;
    let blob = Blob { info, bytes: Bytes::from(bytes) };
    rewrite(part, &blob.info, declared.is_none());
    Ok(blob)
}

/// The bytes of `data`, and the media type a `data:` URL declares.
fn decode(data: &str, path: &str, limits: IngestLimits) -> Result<(Option<String>, Vec<u8>), IngestError> {
    let (media_type, encoded) = match data.strip_prefix("data:") {
        Some(rest) => {
            let Some((header, payload)) = rest.split_once(',') else {
                return Err(invalid(path, "a data: URL needs a comma before its data".into()));
            };
            let Some(media_type) = header.strip_suffix(";base64") else {
                return Err(invalid(path, "a data: URL must be base64 (\"data:TYPE;base64,...\")".into()));
            };
            (Some(media_type).filter(|t| !t.is_empty()).map(str::to_owned), payload)
        }
        None => (None, data),
    };
    // Base64 is 4 characters per 3 bytes: refuse an oversized blob before decoding it.
    let decoded_len = encoded.trim_end_matches('=').len() as u64 * 3 / 4;
    if decoded_len > limits.max_blob_bytes as u64 {
        return Err(IngestError::TooBig {
            path: path.to_owned(),
            value: decoded_len,
            max: limits.max_blob_bytes as u64,
        });
    }
    let bytes = BASE64.decode(encoded).map_err(|e| invalid(path, format!("not valid base64: {e}")))?;
    if bytes.is_empty() {
        return Err(invalid(path, "empty: a blob holds at least one byte".into()));
    }
    Ok((media_type, bytes))
}

/// Standard base64, padded or not (hosts' encoders differ); nothing else between the characters.
pub const BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// What is known of `bytes` as a part of `kind` declared as `declared`: the type checked
/// against the signature, an image's size read from its header.
pub fn describe(kind: MediaKind, declared: Option<&str>, bytes: &[u8], path: &str) -> Result<BlobInfo, IngestError> {
    let sniffed = sniff::media_type_of(bytes);
    let media_type = match declared {
        Some(declared) => {
            check_media_type(kind, declared).map_err(|reason| invalid(&format!("{path}.mediaType"), reason))?;
            if sniff::contradicts(declared, bytes) {
                let found = sniffed.map_or("bytes of no type it could recognise".to_owned(), |t| format!("{t} bytes"));
                return Err(invalid(
                    &format!("{path}.mediaType"),
                    format!("declared {declared:?}, but the data holds {found}"),
                ));
            }
            declared.to_owned()
        }
        None => match sniffed {
            Some(sniffed) => {
                check_media_type(kind, sniffed).map_err(|reason| invalid(&format!("{path}.data"), reason))?;
                sniffed.to_owned()
            }
            None => {
                return Err(invalid(
                    &format!("{path}.mediaType"),
                    "missing, and the data's type could not be recognised".into(),
                ))
            }
        },
    };
    let dimensions = if kind == MediaKind::Image || media_type.starts_with("image/") {
        match sniff::image_size(bytes) {
            Some((width, height)) => {
                sniff::check_image_size(width, height).map_err(|reason| invalid(&format!("{path}.data"), reason))?;
                Some((width, height))
            }
            None => None,
        }
    } else {
        None
    };
    Ok(BlobInfo { id: BlobId::of(bytes), media_type, size: bytes.len() as u64, dimensions })
}

/// The part with `data` replaced, in its place, by `blob`, and what the store knows set
/// ([`add_info`]).
fn rewrite(part: &mut Map<String, Value>, info: &BlobInfo, add_media_type: bool) {
    let old = std::mem::take(part);
    for (key, value) in old {
        match key.as_str() {
            "data" => part.insert("blob".into(), Value::String(info.id.to_string())),
            _ => part.insert(key, value),
        };
    }
    add_info(part, info, add_media_type);
}

/// Sets what the store knows of a part's blob: `size` and an image's `width` and `height`
/// (the store's figures replace a host's, in their place, else they come last), and
/// `mediaType` when asked and the part has none.
pub fn add_info(part: &mut Map<String, Value>, info: &BlobInfo, add_media_type: bool) {
    if add_media_type && !part.contains_key("mediaType") {
        part.insert("mediaType".into(), Value::String(info.media_type.clone()));
    }
    part.insert("size".into(), Value::from(info.size));
    if let Some((width, height)) = info.dimensions {
        part.insert("width".into(), Value::from(width));
        part.insert("height".into(), Value::from(height));
    }
}

/// Adds to every part of `event` that names `info`'s blob what the store knows of it.
pub fn add_info_to_event(event: &mut Value, info: &BlobInfo) {
    let Some(Value::Array(parts)) = event.get_mut("content") else { return };
    for part in parts {
        let Value::Object(part) = part else { continue };
        if part.get("blob").and_then(Value::as_str) == Some(info.id.as_str()) {
            add_info(part, info, false);
        }
    }
}

fn invalid(path: &str, reason: String) -> IngestError {
    IngestError::Invalid { path: path.to_owned(), reason }
}

/// A data string's prefix (the `data:...;base64,` header, or nothing) and bytes, when the
/// standard padded base64 of those bytes is exactly what follows the prefix.
pub fn split_exact(data: &str) -> Option<(String, Vec<u8>)> {
    let (prefix, encoded) = match data.strip_prefix("data:") {
        Some(rest) => {
            let comma = rest.find(',')?;
            rest[..comma].ends_with(";base64").then_some(())?;
            data.split_at("data:".len() + comma + 1)
        }
        None => ("", data),
    };
    let bytes = BASE64.decode(encoded).ok().filter(|bytes| !bytes.is_empty())?;
    (super::bytes::to_base64(&bytes) == encoded).then(|| (prefix.to_owned(), bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::bytes::to_base64;
    use crate::media::sniff::tests::png;
    use serde_json::json;

    const LIMITS: IngestLimits = IngestLimits { max_blob_bytes: 1024 };

    fn ingest(mut event: Value) -> Result<(Value, Ingested), String> {
        let mut out = Ingested::default();
        ingest_event(&mut event, "events[0]", LIMITS, &mut out).map_err(|e| e.to_string())?;
        Ok((event, out))
    }

    #[test]
    fn data_becomes_a_blob_in_its_place() {
        let bytes = png(640, 480);
        let id = BlobId::of(&bytes);
        let event = json!({"type": "message", "role": "user", "iteration": 0, "content": [
            {"type": "text", "text": "see"},
            {"type": "image", "data": to_base64(&bytes), "detail": "low", "mediaType": "image/png"},
            {"type": "image", "data": format!("data:image/png;base64,{}", to_base64(&bytes))},
        ]});
        let (event, out) = ingest(event).unwrap();
        assert_eq!(
            serde_json::to_string(&event["content"]).unwrap(),
            serde_json::to_string(&json!([
                {"type": "text", "text": "see"},
                {"type": "image", "blob": id.as_str(), "detail": "low", "mediaType": "image/png", "size": bytes.len(), "width": 640, "height": 480},
                {"type": "image", "blob": id.as_str(), "mediaType": "image/png", "size": bytes.len(), "width": 640, "height": 480},
            ]))
            .unwrap()
        );
        assert_eq!(out.new_blobs.len(), 1, "the same bytes twice are one blob");
        assert_eq!(out.new_blobs[0].bytes, bytes);
        assert_eq!(out.all_ids(), vec![id]);
    }

    #[test]
    fn named_blobs_are_listed_with_their_path() {
        let id = BlobId::of(b"pdf");
        let event = json!({"type": "tool_result", "toolCallId": "c", "iteration": 1, "content": [
            {"type": "file", "blob": id.as_str(), "mediaType": "application/pdf"}]});
        let (_, out) = ingest(event).unwrap();
        assert_eq!(out.named, vec![(id, "events[0].content[0].blob".to_owned())]);
    }

    #[test]
    fn hostile_data_is_refused_naming_the_path() {
        let part = |p: Value| json!({"type": "message", "role": "user", "iteration": 0, "content": [p]});
        let cases = [
            (json!({"type": "image", "data": "%%%"}), "events[0].content[0].data: not valid base64"),
            (json!({"type": "image", "data": ""}), "events[0].content[0].data: empty"),
            (
                json!({"type": "image", "data": "data:image/png,abc"}),
                "events[0].content[0].data: a data: URL must be base64",
            ),
            (
                json!({"type": "image", "data": to_base64(b"%PDF-1.4"), "mediaType": "image/png"}),
                "events[0].content[0].mediaType: declared \"image/png\", but the data holds application/pdf bytes",
            ),
            (
                json!({"type": "image", "data": to_base64(&png(100_000, 100_000))}),
                "events[0].content[0].data: the image header claims 100000 × 100000 px",
            ),
            (
                json!({"type": "image", "data": to_base64(&[7; 2000])}),
                "events[0].content[0].data: 2000 bytes is over the 1024-byte limit",
            ),
            (
                json!({"type": "audio", "data": to_base64(&png(1, 1))}),
                "events[0].content[0].data: an audio part holds audio/*, found \"image/png\"",
            ),
            (
                json!({"type": "file", "data": to_base64(b"plain")}),
                "events[0].content[0].mediaType: missing, and the data's type could not be recognised",
            ),
            (
                json!({"type": "image", "data": to_base64(&png(1, 1)), "url": "https://x.test"}),
                "events[0].content[0]: a part gives one of `data`, `blob` or `url`",
            ),
        ];
        for (p, expected) in cases {
            let err = ingest(part(p)).unwrap_err();
            assert!(err.starts_with(expected), "{err}\n  expected {expected}");
        }
    }

    #[test]
    fn unchecked_types_are_taken_as_declared() {
        let event = json!({"type": "message", "role": "user", "iteration": 0, "content": [
            {"type": "file", "data": to_base64(b"hello"), "mediaType": "text/plain", "filename": "a.txt"}]});
        let (event, out) = ingest(event).unwrap();
        assert_eq!(event["content"][0]["mediaType"], "text/plain");
        assert_eq!(event["content"][0]["size"], 5);
        assert!(event["content"][0].get("width").is_none());
        assert_eq!(out.new_blobs[0].info.media_type, "text/plain");
    }

    proptest::proptest! {
        /// Whatever the bytes, a file part's data becomes the blob of exactly those bytes, and
        /// the logged part holds no data.
        #[test]
        fn any_bytes_become_their_own_blob(bytes in proptest::collection::vec(proptest::num::u8::ANY, 1..=1024), padded in proptest::bool::ANY) {
            let mut data = to_base64(&bytes);
            if !padded {
                data = data.trim_end_matches('=').to_owned();
            }
            let event = json!({"type": "tool_result", "toolCallId": "c", "iteration": 0, "content": [
                {"type": "file", "data": data, "mediaType": "application/octet-stream"}]});
            let (event, out) = ingest(event).unwrap();
            let part = &event["content"][0];
            proptest::prop_assert!(part.get("data").is_none());
            let id = BlobId::of(&bytes);
            proptest::prop_assert_eq!(part["blob"].as_str().unwrap(), id.as_str());
            proptest::prop_assert_eq!(part["size"].as_u64().unwrap(), bytes.len() as u64);
            proptest::prop_assert_eq!(&out.new_blobs[0].bytes[..], &bytes[..]);
        }
    }
}
