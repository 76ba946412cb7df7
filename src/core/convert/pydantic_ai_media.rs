//! Media in Pydantic AI contents (a user prompt's list, a tool return's list) as content parts,
//! and the shape of each item kept without its bytes, so the `pydantic-ai` render gives the
//! items back as they came ([`crate::providers::pydantic_ai_media`]).
//!
//! | item (`kind`) | part |
//! |---|---|
//! | a string | `text` |
//! | `text-content` (`TextContent`: `content`, `metadata`) | `text` |
//! | `binary` (`BinaryContent`: `data` base64, `media_type`) | `image` / `audio` / `file` by media type, with `data` |
//! | `image-url` / `audio-url` / `document-url` / `video-url` | `image` / `audio` / `file` with `url` |
//!
//! The kept shape is the item with `data`, `url` or `content` emptied (`""`); a string keeps
//! none (`null`).
//! Other items (a cache point, custom content) are refused, naming the item.

use super::input_fields::fault;
use crate::event::{json_type, EventError};
use serde_json::{json, Map, Value};

/// Whether a content list holds media.
pub fn has_media(items: &[Value]) -> bool {
    items.iter().any(|item| {
        matches!(
            item.get("kind").and_then(Value::as_str),
            Some("binary" | "image-url" | "audio-url" | "document-url" | "video-url")
        )
    })
}

/// The content parts of `items`, and the kept shape of each.
pub fn parts_and_shapes(items: &[Value], path: &str) -> Result<(Vec<Value>, Vec<Value>), EventError> {
    let mut parts = Vec::with_capacity(items.len());
    let mut shapes = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = format!("{path}[{i}]");
        let (part, shape) = match item {
            Value::String(text) => (json!({"type": "text", "text": text}), Value::Null),
            Value::Object(fields) => media_item(fields, &at)?,
            other => return Err(fault(&at, format!("expected a string or media, found {}", json_type(other)))),
        };
        parts.push(part);
        shapes.push(shape);
    }
    Ok((parts, shapes))
}

fn media_item(fields: &Map<String, Value>, path: &str) -> Result<(Value, Value), EventError> {
    let text = |key: &str| fields.get(key).and_then(Value::as_str);
    let kind = text("kind").unwrap_or_default();
    let (part, emptied) = match kind {
        "text-content" => {
            let text = text("content").ok_or_else(|| fault(&format!("{path}.content"), "expected a string"))?;
            (json!({"type": "text", "text": text}), "content")
        }
        "binary" => {
            let data = text("data").ok_or_else(|| fault(&format!("{path}.data"), "expected base64"))?;
            let media_type =
                text("media_type").ok_or_else(|| fault(&format!("{path}.media_type"), "missing"))?;
            let part = json!({"type": kind_of(media_type), "data": data, "mediaType": media_type});
            (part, "data")
        }
        "image-url" | "audio-url" | "document-url" | "video-url" => {
            let url = text("url").ok_or_else(|| fault(&format!("{path}.url"), "missing"))?;
            let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
            if !(lower.starts_with("http://") || lower.starts_with("https://")) {
                return Err(fault(&format!("{path}.url"), "expected an http(s) URL"));
            }
            let part_type = match kind {
                "image-url" => "image",
                "audio-url" => "audio",
                _ => "file",
            };
            (json!({"type": part_type, "url": url}), "url")
        }
        other => {
            return Err(fault(
                &format!("{path}.kind"),
                format!("unsupported content {other:?} beside media: expected a string, text-content, binary, image-url, audio-url, document-url or video-url"),
            ))
        }
    };
    let mut shape = fields.clone();
    shape.insert(emptied.into(), Value::from(""));
    Ok((part, Value::Object(shape)))
}

/// The part type of bytes of `media_type`.
fn kind_of(media_type: &str) -> &'static str {
    if media_type.starts_with("image/") {
        "image"
    } else if media_type.starts_with("audio/") {
        "audio"
    } else {
        "file"
    }
}
