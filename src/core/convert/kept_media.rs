//! Media bytes of kept items held as blobs (`responses/toEvents` with `keepMediaAsBlobs`) and put
//! back on read (`responses/fromEvents`).
//!
//! A kept item (`responsesItem`) is the host's item verbatim, so an image's `data:` URL would sit
//! in the log as base64 beside the blob its event's part already stores. Instead, each string of
//! the kept item that is exactly the `data` of one of the same event's content parts is replaced
//! by that part's blob id, and the event records where: `responsesItemBlobs: [{at, blob,
//! prefix}]` (`at` a JSON pointer into the item, `prefix` what stood before the base64, such as
//! `data:image/png;base64,`). Appending the event stores the part's bytes as that very blob, so
//! the thread names it for as long as the item is kept. Reading puts `prefix` + the blob's
//! standard base64 back at `at`: the very string given. A string whose base64 is not the standard
//! padded form of its bytes (it would not read back the same) stays in the item as it was.

use super::from_messages::KEPT_ITEM_KEY;
use super::input_fields::fault;
use crate::event::{json_type, AgentEvent, EventError};
use crate::media::bytes::to_base64;
use crate::media::ingest::split_exact;
use crate::media::{BlobId, MediaBytes};
use serde_json::{json, Map, Value};

/// The event field that says where a kept item's media bytes were replaced by blob ids.
pub const KEPT_ITEM_BLOBS_KEY: &str = "responsesItemBlobs";

/// The events with each kept item's media strings replaced by blob ids (see the module doc).
pub fn kept_media_to_blobs(events: Vec<AgentEvent>) -> Vec<AgentEvent> {
    events
        .into_iter()
        .map(|event| {
            let mut fields = event.into_fields();
            let datas = part_datas(&fields);
            if datas.is_empty() {
                return AgentEvent::from_map(fields, "event").expect("a converted event");
            }
            let mut refs = Vec::new();
            if let Some(item @ Value::Object(_)) = fields.get_mut(KEPT_ITEM_KEY) {
                replace_datas(item, &datas, &mut String::new(), &mut refs);
            }
            if !refs.is_empty() {
                fields.insert(KEPT_ITEM_BLOBS_KEY.into(), Value::Array(refs));
            }
            AgentEvent::from_map(fields, "event").expect("a converted event")
        })
        .collect()
}

/// The `data` strings of an event's content parts that read back exactly from their bytes, with
/// their prefix and blob id.
fn part_datas(fields: &Map<String, Value>) -> Vec<(String, String, BlobId)> {
    let Some(Value::Array(parts)) = fields.get("content") else { return Vec::new() };
    parts
        .iter()
        .filter_map(|part| part.get("data").and_then(Value::as_str))
        .filter_map(|data| {
            let (prefix, bytes) = split_exact(data)?;
            Some((data.to_owned(), prefix, BlobId::of(&bytes)))
        })
        .collect()
}

fn replace_datas(value: &mut Value, datas: &[(String, String, BlobId)], at: &mut String, refs: &mut Vec<Value>) {
    match value {
        Value::String(text) => {
            if let Some((_, prefix, blob)) = datas.iter().find(|(data, _, _)| data == text) {
                refs.push(json!({"at": at.clone(), "blob": blob.as_str(), "prefix": prefix}));
                *text = blob.as_str().to_owned();
            }
        }
        Value::Array(entries) => {
            for (i, entry) in entries.iter_mut().enumerate() {
                let len = at.len();
                at.push_str(&format!("/{i}"));
                replace_datas(entry, datas, at, refs);
                at.truncate(len);
            }
        }
        Value::Object(fields) => {
            for (key, entry) in fields.iter_mut() {
                let len = at.len();
                at.push('/');
                at.push_str(&key.replace('~', "~0").replace('/', "~1"));
                replace_datas(entry, datas, at, refs);
                at.truncate(len);
            }
        }
        _ => {}
    }
}

/// One place of a kept item whose media string is held as a blob.
struct BlobRef {
    at: String,
    blob: BlobId,
    prefix: String,
}

/// The blobs the events' kept items name (`responsesItemBlobs`), each with the path naming it;
/// a malformed entry is refused, naming it.
pub fn kept_item_blobs(events: &[Value]) -> Result<Vec<(BlobId, String)>, EventError> {
    let mut blobs = Vec::new();
    for (index, event) in events.iter().enumerate() {
        for (j, found) in blob_refs(event, index)?.into_iter().enumerate() {
            blobs.push((found.blob, format!("events[{index}].{KEPT_ITEM_BLOBS_KEY}[{j}].blob")));
        }
    }
    Ok(blobs)
}

fn blob_refs(event: &Value, index: usize) -> Result<Vec<BlobRef>, EventError> {
    let path = format!("events[{index}].{KEPT_ITEM_BLOBS_KEY}");
    let Some(refs) = event.get(KEPT_ITEM_BLOBS_KEY) else { return Ok(Vec::new()) };
    let Value::Array(refs) = refs else {
        return Err(fault(&path, format!("expected a list, found {}", json_type(refs))));
    };
    refs.iter()
        .enumerate()
        .map(|(j, entry)| {
            let at_path = format!("{path}[{j}]");
            let text = |key: &str| {
                entry
                    .get(key)
                    .and_then(Value::as_str)
                    .ok_or_else(|| fault(&format!("{at_path}.{key}"), "expected a string"))
            };
            let blob = BlobId::parse(text("blob")?).map_err(|reason| fault(&format!("{at_path}.blob"), reason))?;
            Ok(BlobRef { at: text("at")?.to_owned(), blob, prefix: text("prefix")?.to_owned() })
        })
        .collect()
}

/// The events with each kept item's media strings put back from `media` (which holds the blobs
/// [`kept_item_blobs`] named) and `responsesItemBlobs` removed.
pub fn kept_media_from_blobs(events: &mut [Value], media: &MediaBytes) -> Result<(), EventError> {
    for (index, event) in events.iter_mut().enumerate() {
        let refs = blob_refs(event, index)?;
        let Value::Object(fields) = event else { continue };
        fields.remove(KEPT_ITEM_BLOBS_KEY);
        for (j, found) in refs.into_iter().enumerate() {
            let at_path = format!("events[{index}].{KEPT_ITEM_BLOBS_KEY}[{j}]");
            let bytes = media.get(found.blob.as_str()).ok_or_else(|| {
                fault(&format!("{at_path}.blob"), format!("names blob {}, which the store does not hold", found.blob))
            })?;
            let place =
                fields.get_mut(KEPT_ITEM_KEY).and_then(|item| item.pointer_mut(&found.at)).ok_or_else(|| {
                    fault(&format!("{at_path}.at"), format!("{:?} names no place in responsesItem", found.at))
                })?;
            *place = Value::String(format!("{}{}", found.prefix, to_base64(bytes)));
        }
    }
    Ok(())
}

/// A content part that names a provider's file (`file_id`) and gives no bytes nor URL: the
/// event model cannot hold it, but a kept item keeps it whole, so the model input passes it over.
pub fn names_provider_file(part: &Value) -> bool {
    let held = ["image_url", "file_data", "file_url"].iter().any(|key| part.get(key).is_some_and(|v| !v.is_null()));
    matches!(part.get("type").and_then(Value::as_str), Some("input_image" | "input_file"))
        && part.get("file_id").is_some()
        && !held
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    #[test]
    fn only_standard_base64_is_replaced() {
        assert_eq!(split_exact("data:image/png;base64,AAEC"), Some(("data:image/png;base64,".into(), vec![0, 1, 2])));
        assert_eq!(split_exact("AAE=").map(|(p, _)| p), Some(String::new()));
        assert_eq!(split_exact("AAE"), None, "unpadded base64 would read back padded");
        assert_eq!(split_exact("data:text/plain,hi"), None);
        assert_eq!(split_exact(""), None);
    }

    #[test]
    fn a_kept_item_reads_back_the_same() {
        let url = "data:image/png;base64,AAEC";
        let item = json!({"role": "user", "content": [{"type": "input_image", "image_url": url, "detail": "low"}]});
        let event = json!({"type": "message", "role": "user", "iteration": 0,
            "content": [{"type": "image", "data": url, "detail": "low"}], "responsesItem": item});
        let stored = kept_media_to_blobs(vec![AgentEvent::from_value(event, "e").unwrap()]).pop().unwrap().into_value();
        assert!(!stored["responsesItem"].to_string().contains("AAEC"), "{stored}");
        let id = BlobId::of(&[0, 1, 2]);
        assert_eq!(stored["responsesItem"]["content"][0]["image_url"], id.as_str());
        let mut events = vec![stored];
        assert_eq!(
            kept_item_blobs(&events).unwrap(),
            vec![(id.clone(), "events[0].responsesItemBlobs[0].blob".to_owned())]
        );
        let mut media = MediaBytes::new();
        media.insert(&id, Bytes::from_static(&[0, 1, 2]));
        kept_media_from_blobs(&mut events, &media).unwrap();
        assert_eq!(events[0]["responsesItem"], item);
        assert!(events[0].get(KEPT_ITEM_BLOBS_KEY).is_none());
    }
}
