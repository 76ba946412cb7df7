//! The GenAI conventions' message shapes, for content capture: `{role, parts: [...]}` with
//! `text`, `tool_call` and `tool_call_response` parts; output messages add `finish_reason`.
//!
//! Media parts are named, never carried: one stored as a blob is the conventions' `file` part
//! (`file_id` = the blob's id, which `blob/get` answers), one at a URL their `uri` part, both
//! with `mime_type` and `modality` (`image`, `audio`, `video`, else `document`) and what the
//! store knows (`size`, `width`, `height`). The conventions' `blob` part would carry the bytes.

use crate::event::Content;
use crate::media::parts::{Media, Part, PartSource};
use serde_json::{json, Map, Value};

pub fn text_part(text: &str) -> Value {
    json!({"type": "text", "content": text})
}

/// A message's content as parts: its text, or each of its parts (media named, [`media_part`]).
pub fn content_parts(content: Content<'_>) -> Vec<Value> {
    match content {
        Content::Text(text) => vec![text_part(text)],
        Content::Parts(parts) => Part::all(parts)
            .map(|part| match part {
                Part::Text(text) => text_part(text),
                Part::Media(media) => media_part(&media),
            })
            .collect(),
    }
}

/// The media parts of a tool result's content, named.
pub fn media_parts(parts: &[Value]) -> impl Iterator<Item = Value> + '_ {
    Part::all(parts).filter_map(|part| match part {
        Part::Media(media) => Some(media_part(&media)),
        Part::Text(_) => None,
    })
}

/// A media part as the conventions name it, without its bytes.
pub fn media_part(media: &Media<'_>) -> Value {
    let mime_type = media.media_type_or_default();
    let mut part = Map::new();
    let (kind, key, value) = match media.source {
        PartSource::Blob(id) => ("file", "file_id", Some(id)),
        PartSource::Url(url) => ("uri", "uri", Some(url)),
        // Bytes not stored yet (never in a stored thread): named by kind alone.
        PartSource::Data(_) => ("file", "file_id", None),
    };
    part.insert("type".into(), kind.into());
    part.insert("mime_type".into(), mime_type.into());
    part.insert("modality".into(), modality(mime_type).into());
    if let Some(value) = value {
        part.insert(key.into(), value.into());
    }
    if let Some(name) = media.filename() {
        part.insert("filename".into(), name.into());
    }
    if let Some(size) = media.size() {
        part.insert("size".into(), size.into());
    }
    if let Some((width, height)) = media.dimensions() {
        part.insert("width".into(), width.into());
        part.insert("height".into(), height.into());
    }
    Value::Object(part)
}

/// The conventions' modality of a media type.
fn modality(mime_type: &str) -> &'static str {
    match mime_type.split('/').next().unwrap_or_default() {
        "image" => "image",
        "audio" => "audio",
        "video" => "video",
        _ => "document",
    }
}

pub fn tool_call_part(id: &str, name: &str, arguments: &Map<String, Value>) -> Value {
    json!({"type": "tool_call", "id": id, "name": name, "arguments": arguments})
}

pub fn tool_response_part(id: &str, response: &Value) -> Value {
    json!({"type": "tool_call_response", "id": id, "response": response})
}

pub fn message(role: &str, parts: Vec<Value>) -> Value {
    json!({"role": role, "parts": parts})
}

pub fn output_message(parts: Vec<Value>, finish_reason: &str) -> Value {
    json!({"role": "assistant", "parts": parts, "finish_reason": finish_reason})
}

/// `gen_ai.system_instructions`: the parts alone.
pub fn system_instructions(text: &str) -> String {
    Value::Array(vec![text_part(text)]).to_string()
}

/// A JSON attribute value as the conventions record it: the JSON text.
pub fn json_text(values: &[Value]) -> String {
    serde_json::to_string(values).unwrap_or_default()
}
