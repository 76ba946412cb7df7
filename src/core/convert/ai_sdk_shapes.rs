//! What `aiSdk/toEvents` keeps of a media message's parts so the `ai-sdk` render gives each
//! back as it came ([`crate::providers::ai_sdk_media`]): the part without its bytes, and a
//! `data:` URL's head. A part the usual render gives back already keeps nothing (`null`).

use crate::providers::ai_sdk_media::payload_mut;
use serde_json::{Map, Value};

/// The hints of `parts` (one per part, `null` where none is needed), or `None` when no part
/// needs one.
pub fn hints(parts: &[Value]) -> Option<Value> {
    let hints: Vec<Value> = parts.iter().map(|part| part.as_object().map_or(Value::Null, hint)).collect();
    hints.iter().any(|h| !h.is_null()).then_some(Value::Array(hints))
}

/// One part's hint: `{part, dataUrl?}`, or `null` when the usual render gives it back.
fn hint(part: &Map<String, Value>) -> Value {
    let mut shape = part.clone();
    let Some(payload) = payload_mut(&mut shape) else { return Value::Null };
    let data_url_head = payload.as_str().and_then(data_url_head).map(str::to_owned);
    if data_url_head.is_none() && rendered_as_is(part) {
        return Value::Null;
    }
    *payload = Value::from("");
    let mut hint = Map::from_iter([("part".to_owned(), Value::Object(shape))]);
    if let Some(head) = data_url_head {
        hint.insert("dataUrl".into(), head.into());
    }
    Value::Object(hint)
}

/// Whether the usual render writes the part as it is: its fields are the render's own, and
/// its media type is given (the render gives a stored blob's, which may be sniffed).
fn rendered_as_is(part: &Map<String, Value>) -> bool {
    let only = |keys: &[&str]| part.keys().all(|k| keys.contains(&k.as_str()));
    let string = |key: &str| part.get(key).is_some_and(Value::is_string);
    let is_url = |key: &str| part.get(key).and_then(Value::as_str).is_some_and(is_http);
    // A top-level media type (`image`) is the SDK's own; the blob's is a full one.
    if part.get("mediaType").and_then(Value::as_str).is_some_and(|t| !t.contains('/')) {
        return false;
    }
    match part.get("type").and_then(Value::as_str) {
        Some("text") => only(&["type", "text"]),
        Some("image") => {
            only(&["type", "image", "mediaType"]) && string("image") && (string("mediaType") || is_url("image"))
        }
        Some("file") => only(&["type", "data", "mediaType", "filename"]) && string("data") && !is_url("data"),
        Some("media") => only(&["type", "data", "mediaType"]) && string("data") && !is_url("data"),
        _ => false,
    }
}

fn is_http(text: &str) -> bool {
    let lower = text.get(..8).unwrap_or(text).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// `data:image/png;base64,` of a data URL.
fn data_url_head(text: &str) -> Option<&str> {
    if !text.get(..5)?.eq_ignore_ascii_case("data:") {
        return None;
    }
    text.find(',').map(|comma| &text[..=comma])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_parts_the_render_would_change_keep_a_shape() {
        let parts = json!([
            {"type": "text", "text": "hi"},
            {"type": "image", "image": "AAAA", "mediaType": "image/png"},
            {"type": "image", "image": "https://x.test/a.png"},
            {"type": "image", "image": "data:image/png;base64,AAAA"},
            {"type": "file", "data": {"type": "data", "data": "BBBB"}, "mediaType": "application/pdf"},
            {"type": "text", "text": "x", "providerOptions": {"a": {"b": 1}}},
        ]);
        assert_eq!(
            hints(parts.as_array().unwrap()).unwrap(),
            json!([
                null,
                null,
                null,
                {"part": {"type": "image", "image": ""}, "dataUrl": "data:image/png;base64,"},
                {"part": {"type": "file", "data": {"type": "data", "data": ""}, "mediaType": "application/pdf"}},
                {"part": {"type": "text", "text": "", "providerOptions": {"a": {"b": 1}}}},
            ])
        );
        assert_eq!(hints(json!([{"type": "text", "text": "a"}]).as_array().unwrap()), None);
    }
}
