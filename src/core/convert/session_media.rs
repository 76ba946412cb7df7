//! Media in agent hosts' session files: the parts a line's media blocks make, stored as blobs
//! as the line is read, and the copies of their bytes the kept line would hold again.
//!
//! A session importer turns an image or document block into a content part that gives its bytes
//! as `data`; [`SessionMedia::ingest`] checks the bytes and makes the part name its blob right
//! away, so a part that cannot be read (bad base64, a media type the bytes contradict, over
//! `maxBlobBytes`) fails the line, named by its number and the field in the line.
//!
//! Hosts write the same bytes more than once: Claude Code puts a screenshot in the line's
//! `tool_result` content and again in its `toolUseResult`, Codex keeps the item (with its data
//! URL) that the event keeps as `responsesItem`. A blob is stored once whatever names it; and
//! so that the event's kept copy of the line holds no bytes,
//! [`SessionMedia::replace_copies`] puts `{"blob": "sha256:…"}` in the place of every string
//! that is exactly the base64 (or the `data:` URL) of a part read from this or an earlier line.

use crate::media::ingest::{ingest_part, IngestError, IngestLimits};
use crate::media::{Blob, BlobId};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};

/// Copies shorter than this are left alone: no image fits in so few base64 characters, and
/// most strings of a line are short, so they are not hashed.
const SHORTEST_COPY: usize = 16;

/// The blobs a session reader made, and the text each came from.
#[derive(Debug)]
pub struct SessionMedia {
    limits: IngestLimits,
    /// Blobs made since they were last taken, once each.
    blobs: Vec<Blob>,
    /// The SHA-256 of each `data` text a blob came from (a `data:` URL's payload too).
    known: HashMap<[u8; 32], BlobId>,
    /// The lengths of those texts: a string of another length is no copy, and is not hashed.
    lengths: HashSet<usize>,
}

impl Default for SessionMedia {
    fn default() -> Self {
        SessionMedia::new(IngestLimits::DEFAULT)
    }
}

/// Where a part's fields are in the line, for errors: the field holding its bytes, and the one
/// declaring its media type.
#[derive(Clone, Copy, Debug)]
pub(super) struct LineFields {
    pub data: &'static str,
    pub media_type: &'static str,
}

impl SessionMedia {
    pub fn new(limits: IngestLimits) -> Self {
        SessionMedia { limits, blobs: Vec::new(), known: HashMap::new(), lengths: HashSet::new() }
    }

    /// A reader of the same limits that has read nothing (for a branch read on its own).
    pub(super) fn fresh(&self) -> Self {
        SessionMedia::new(self.limits)
    }

    /// Ingests `part` (an importer's, giving `data`), at `path` in its line; `fields` say where
    /// its data and media type are in the line, for the error (path, reason).
    pub(super) fn ingest(&mut self, part: &mut Value, path: &str, fields: LineFields) -> Result<(), (String, String)> {
        let Value::Object(part) = part else { return Ok(()) };
        let texts = data_texts(part);
        let blob = ingest_part(part, path, self.limits).map_err(|e| line_error(e, path, fields))?;
        if let Some(blob) = blob {
            for (length, text) in texts {
                self.lengths.insert(length);
                self.known.insert(text, blob.info.id.clone());
            }
            if !self.blobs.iter().any(|known| known.info.id == blob.info.id) {
                self.blobs.push(blob);
            }
        }
        Ok(())
    }

    /// Replaces, anywhere in `value`, each string that is the bytes of a blob read before with
    /// `{"blob": ID}`.
    pub(super) fn replace_copies(&self, value: &mut Value) {
        if self.known.is_empty() {
            return;
        }
        match value {
            Value::String(text) if text.len() >= SHORTEST_COPY && self.lengths.contains(&text.len()) => {
                if let Some(id) = self.known.get(&digest(text)) {
                    *value = Value::Object(Map::from_iter([("blob".to_owned(), Value::from(id.as_str()))]));
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| self.replace_copies(item)),
            Value::Object(fields) => fields.values_mut().for_each(|field| self.replace_copies(field)),
            _ => {}
        }
    }

    /// [`SessionMedia::replace_copies`] in every field of a line.
    pub(super) fn replace_copies_in(&self, fields: &mut Map<String, Value>) {
        if !self.known.is_empty() {
            fields.values_mut().for_each(|field| self.replace_copies(field));
        }
    }

    /// Adds blobs another reader made (a branch's), once each.
    pub(super) fn absorb(&mut self, blobs: Vec<Blob>) {
        for blob in blobs {
            if !self.blobs.iter().any(|known| known.info.id == blob.info.id) {
                self.blobs.push(blob);
            }
        }
    }

    /// The blobs made since last asked.
    pub fn take_blobs(&mut self) -> Vec<Blob> {
        std::mem::take(&mut self.blobs)
    }
}

/// The lengths and digests a part's `data` is known by: the text, and a `data:` URL's payload
/// alone.
fn data_texts(part: &Map<String, Value>) -> Vec<(usize, [u8; 32])> {
    let Some(Value::String(data)) = part.get("data") else { return Vec::new() };
    let mut texts = vec![(data.len(), digest(data))];
    if let Some((_, payload)) = data.strip_prefix("data:").and_then(|rest| rest.split_once(',')) {
        texts.push((payload.len(), digest(payload)));
    }
    texts
}

fn digest(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

/// A part's error as the line names it: `data` and `mediaType` by their fields in the line.
fn line_error(error: IngestError, part_path: &str, fields: LineFields) -> (String, String) {
    let (path, reason) = match error {
        IngestError::Invalid { path, reason } => (path, reason),
        IngestError::TooBig { path, value, max } => {
            (path, format!("{value} bytes is over the {max}-byte limit of a blob (maxBlobBytes)"))
        }
    };
    let path = match path.strip_prefix(part_path) {
        Some(".data") => format!("{part_path}.{}", fields.data),
        Some(".mediaType") => format!("{part_path}.{}", fields.media_type),
        _ => path,
    };
    (path, reason)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::bytes::to_base64;
    use crate::media::sniff::tests::png;
    use serde_json::json;

    const IMAGE: LineFields = LineFields { data: "source.data", media_type: "source.media_type" };

    #[test]
    fn a_copy_of_stored_bytes_names_the_blob_and_other_strings_stay() {
        let bytes = png(3, 2);
        let data = to_base64(&bytes);
        let mut media = SessionMedia::default();
        let mut part = json!({"type": "image", "data": data, "mediaType": "image/png"});
        media.ingest(&mut part, "message.content[0]", IMAGE).unwrap();
        let id = BlobId::of(&bytes);
        assert_eq!(part["blob"], id.as_str());
        let mut line = json!({"toolUseResult": {"file": {"base64": data, "type": "image/png"}},
            "url": format!("data:image/png;base64,{data}"), "other": "x".repeat(40), "short": "AAAA"});
        media.replace_copies(&mut line);
        let named = json!({"blob": id.as_str()});
        assert_eq!(line["toolUseResult"]["file"]["base64"], named);
        assert_eq!(line["url"], json!(format!("data:image/png;base64,{data}")), "only the texts parts gave");
        assert_eq!((line["other"].as_str().unwrap().len(), &line["short"]), (40, &json!("AAAA")));
        assert_eq!(media.take_blobs().len(), 1);
        assert!(media.take_blobs().is_empty(), "taken once");
    }

    #[test]
    fn errors_name_the_fields_of_the_line() {
        let mut media = SessionMedia::new(IngestLimits { max_blob_bytes: 10 });
        let mut bad = json!({"type": "image", "data": "%%%", "mediaType": "image/png"});
        let (path, reason) = media.ingest(&mut bad, "message.content[2]", IMAGE).unwrap_err();
        assert_eq!(path, "message.content[2].source.data");
        assert!(reason.starts_with("not valid base64"), "{reason}");
        let mut big = json!({"type": "image", "data": to_base64(&png(3, 2)), "mediaType": "image/png"});
        let (path, reason) = media.ingest(&mut big, "x", IMAGE).unwrap_err();
        assert_eq!((path.as_str(), reason.ends_with("limit of a blob (maxBlobBytes)")), ("x.source.data", true));
    }

    proptest::proptest! {
        /// Whatever the bytes, the part names their blob and no copy of their base64 is left.
        #[test]
        fn any_bytes_are_one_blob_and_no_copy_is_left(bytes in proptest::collection::vec(proptest::num::u8::ANY, 12..=512)) {
            let data = to_base64(&bytes);
            let mut media = SessionMedia::default();
            let mut part = json!({"type": "file", "data": data, "mediaType": "application/octet-stream"});
            media.ingest(&mut part, "p", IMAGE).unwrap();
            let mut line = json!({"a": [data, {"b": data}]});
            media.replace_copies(&mut line);
            proptest::prop_assert!(!line.to_string().contains(&data));
            let blobs = media.take_blobs();
            proptest::prop_assert_eq!(blobs.len(), 1);
            proptest::prop_assert_eq!(&blobs[0].bytes[..], &bytes[..]);
            let id = BlobId::of(&bytes);
            proptest::prop_assert_eq!(part["blob"].as_str().unwrap(), id.as_str());
        }
    }
}
