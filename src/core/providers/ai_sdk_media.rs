//! The exact shape of an AI SDK media part, kept so the `ai-sdk` render gives the part back as
//! it came: `aiSdk/toEvents` keeps, beside the event's content parts (`aiSdk.parts`, one entry
//! per part, `null` where the usual render gives the part back already), the part with its
//! bytes taken out (`part`, `""` where the bytes were) and, for bytes given as a `data:` URL,
//! the URL's head (`dataUrl`, `data:image/png;base64,`). The render puts the bytes back, as
//! base64 after that head, or the URL.
//!
//! Where the bytes are, by part type: `image` → `image`; `file`, `media`, `file-data`,
//! `image-data` → `data` (of a tagged `{type: "data", data}` → `data.data`, of `{type: "url",
//! url}` → `data.url`); `file-url`, `image-url` → `url`; `text` → `text` (its text).

use super::media_parts::Carried;
use crate::media::bytes::to_base64;
use serde_json::{Map, Value};

/// The field of `part` that holds its bytes, URL or text, if the part has one.
pub fn payload_mut(part: &mut Map<String, Value>) -> Option<&mut Value> {
    let key = match part.get("type").and_then(Value::as_str)? {
        "image" => "image",
        "file" | "media" | "file-data" | "image-data" => "data",
        "file-url" | "image-url" => "url",
        "text" => "text",
        _ => return None,
    };
    let value = part.get_mut(key)?;
    if let Value::Object(tagged) = value {
        let inner = match tagged.get("type").and_then(Value::as_str)? {
            "data" => "data",
            "url" => "url",
            _ => return None,
        };
        return tagged.get_mut(inner);
    }
    Some(value)
}

/// The kept part of `hint` with `carried`'s bytes (or URL) put back.
pub fn media_part(hint: &Value, carried: &Carried<'_>) -> Option<Value> {
    let mut part = hint.get("part")?.as_object()?.clone();
    let payload = match carried {
        Carried::Bytes(bytes) => {
            let head = hint.get("dataUrl").and_then(Value::as_str).unwrap_or_default();
            format!("{head}{}", to_base64(bytes))
        }
        Carried::Url(url) => (*url).to_owned(),
    };
    *payload_mut(&mut part)? = Value::String(payload);
    Some(Value::Object(part))
}

/// The kept text part of `hint` with its text put back.
pub fn text_part(hint: &Value, text: &str) -> Option<Value> {
    let mut part = hint.get("part")?.as_object()?.clone();
    *payload_mut(&mut part)? = Value::from(text);
    Some(Value::Object(part))
}

/// The hints of a message's parts, when `aiSdk` kept any.
pub fn hints(carried: Option<&Value>) -> &[Value] {
    carried.and_then(|c| c.get("parts")).and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

/// The hint of part `index`, unless `null`.
pub fn hint(hints: &[Value], index: usize) -> Option<&Value> {
    hints.get(index).filter(|h| !h.is_null())
}
