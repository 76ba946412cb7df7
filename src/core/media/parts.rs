//! Content parts: what a `message` event's `content`, or a `tool_result`'s `content`, holds
//! when it is an array rather than a string.
//!
//! | part | fields |
//! |---|---|
//! | `text` | `text` |
//! | `image` | `blob` or `url`, `mediaType`, `detail`? (`auto`, `low`, `high`, `original`), `size`?, `width`?, `height`? |
//! | `file` | `blob` or `url`, `mediaType`, `filename`?, `size`? |
//! | `audio` | `blob` or `url`, `mediaType`, `size`? |
//!
//! `mediaType` may be left out only beside a `url`. Parts are kept as received (key order,
//! unknown keys); [`Part::of`] gives the typed view renderers use.

use super::blob_id::BlobId;
use crate::event::json_type;
use serde_json::{Map, Value};
use std::fmt::Write as _;

/// The kinds of media a part can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MediaKind {
    Image,
    File,
    Audio,
}

impl MediaKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MediaKind::Image => "image",
            MediaKind::File => "file",
            MediaKind::Audio => "audio",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "image" => Some(MediaKind::Image),
            "file" => Some(MediaKind::File),
            "audio" => Some(MediaKind::Audio),
            _ => None,
        }
    }
}

/// Where a media part's bytes are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartSource<'a> {
    /// In the store, by id (`sha256:…`).
    Blob(&'a str),
    /// At an http(s) URL the host gave; kept as a reference, never fetched.
    Url(&'a str),
    /// Inline, as the host or an importer gave them (base64 or a `data:` URL): only in events
    /// not stored yet (conversions' output, files the command line renders); appending stores
    /// the bytes as a blob.
    Data(&'a str),
}

/// A typed view of one validated part.
#[derive(Clone, Copy, Debug)]
pub enum Part<'a> {
    Text(&'a str),
    Media(Media<'a>),
}

/// A media part: its kind, where its bytes are, and the part's fields for the rest.
#[derive(Clone, Copy, Debug)]
pub struct Media<'a> {
    pub kind: MediaKind,
    pub source: PartSource<'a>,
    pub fields: &'a Map<String, Value>,
}

impl<'a> Media<'a> {
    fn str(&self, key: &str) -> Option<&'a str> {
        self.fields.get(key).and_then(Value::as_str)
    }
    fn number(&self, key: &str) -> Option<u64> {
        self.fields.get(key).and_then(Value::as_u64)
    }
    /// The declared media type (always present with a blob).
    pub fn media_type(&self) -> Option<&'a str> {
        self.str("mediaType")
    }
    /// The media type, or the kind's generic one where a URL part declared none.
    pub fn media_type_or_default(&self) -> &'a str {
        self.media_type().unwrap_or(match self.kind {
            MediaKind::Image => "image/*",
            MediaKind::File => "application/octet-stream",
            MediaKind::Audio => "audio/*",
        })
    }
    pub fn detail(&self) -> Option<&'a str> {
        self.str("detail")
    }
    pub fn filename(&self) -> Option<&'a str> {
        self.str("filename")
    }
    pub fn size(&self) -> Option<u64> {
        self.number("size")
    }
    pub fn dimensions(&self) -> Option<(u64, u64)> {
        Some((self.number("width")?, self.number("height")?))
    }
    pub fn blob(&self) -> Option<&'a str> {
        match self.source {
            PartSource::Blob(id) => Some(id),
            PartSource::Url(_) | PartSource::Data(_) => None,
        }
    }

    /// The part as text, for renders that carry no bytes: kind, media type, where, size and
    /// dimensions, e.g. `[image image/png sha256:… 1280x800 48213 bytes]`.
    pub fn placeholder(&self) -> String {
        let mut text = format!("[{} {}", self.kind.as_str(), self.media_type_or_default());
        match self.source {
            PartSource::Blob(id) => write!(text, " {id}"),
            PartSource::Url(url) => write!(text, " {url}"),
            PartSource::Data(data) => write!(text, " inline, {} characters of base64", data.len()),
        }
        .expect("writing to a String");
        if let Some(name) = self.filename() {
            write!(text, " {name:?}").expect("writing to a String");
        }
        if let Some((width, height)) = self.dimensions() {
            write!(text, " {width}x{height}").expect("writing to a String");
        }
        if let Some(size) = self.size() {
            write!(text, " {size} bytes").expect("writing to a String");
        }
        text.push(']');
        text
    }
}

impl<'a> Part<'a> {
    /// The view of a part that passed [`validate_parts`].
    pub fn of(value: &'a Value) -> Part<'a> {
        let fields = value.as_object().expect("validated: a part is an object");
        let kind = fields.get("type").and_then(Value::as_str).and_then(MediaKind::from_name);
        match kind {
            None => Part::Text(fields.get("text").and_then(Value::as_str).unwrap_or_default()),
            Some(kind) => {
                let source = match (fields.get("blob"), fields.get("url"), fields.get("data")) {
                    (Some(Value::String(id)), _, _) => PartSource::Blob(id),
                    (_, Some(Value::String(url)), _) => PartSource::Url(url),
                    (_, _, Some(Value::String(data))) => PartSource::Data(data),
                    _ => unreachable!("validated: a media part has a blob, a url or data"),
                };
                Part::Media(Media { kind, source, fields })
            }
        }
    }

    /// The views of a validated parts array.
    pub fn all(parts: &'a [Value]) -> impl Iterator<Item = Part<'a>> + 'a {
        parts.iter().map(Part::of)
    }
}

/// The text of parts for renders that take text only: text parts as they are, media parts as
/// their [`Media::placeholder`], joined by newlines.
pub fn text_of(parts: &[Value]) -> String {
    let mut text = String::new();
    for (i, part) in Part::all(parts).enumerate() {
        if i > 0 {
            text.push('\n');
        }
        match part {
            Part::Text(t) => text.push_str(t),
            Part::Media(media) => text.push_str(&media.placeholder()),
        }
    }
    text
}

/// The text parts alone, joined by newlines: a `tool_result`'s result when it has `content`
/// and no `result`.
pub fn text_parts_only(parts: &[Value]) -> String {
    let texts: Vec<&str> = Part::all(parts)
        .filter_map(|part| match part {
            Part::Text(text) => Some(text),
            Part::Media(_) => None,
        })
        .collect();
    texts.join("\n")
}

/// Whether any part is media.
pub fn has_media(parts: &[Value]) -> bool {
    Part::all(parts).any(|part| matches!(part, Part::Media(_)))
}

/// The blob ids parts name, in order (repeats included).
pub fn blobs_named(parts: &[Value]) -> impl Iterator<Item = &str> {
    Part::all(parts).filter_map(|part| match part {
        Part::Media(media) => media.blob(),
        Part::Text(_) => None,
    })
}

/// The content parts of an event that can hold them: a message's parts, a tool result's
/// `content`; none for any other event or a message of plain text.
pub fn parts_of(event: &crate::event::AgentEvent) -> &[Value] {
    match event.kind() {
        crate::event::EventKind::Message { content, .. } => content.parts(),
        crate::event::EventKind::ToolResult { content, .. } => content,
        _ => None,
    }
    .unwrap_or_default()
}

/// The blob ids named by the parts of `events` (messages' and tool results' `content`).
pub fn blobs_of_events(events: &[crate::event::AgentEvent]) -> Vec<BlobId> {
    let mut ids = Vec::new();
    for event in events {
        for id in blobs_named(parts_of(event)) {
            if let Ok(id) = BlobId::parse(id) {
                ids.push(id);
            }
        }
    }
    ids.sort();
    ids.dedup();
    ids
}

/// The media parts that name a blob in `events` (messages' and tool results' `content`), the
/// first part of each blob only, in the events' order: what follows an XML document.
pub fn media_named_once<'a>(events: impl IntoIterator<Item = &'a crate::event::AgentEvent>) -> Vec<Value> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for event in events {
        for part in parts_of(event) {
            if let Part::Media(media) = Part::of(part) {
                if media.blob().is_some_and(|id| seen.insert(id.to_owned())) {
                    out.push(part.clone());
                }
            }
        }
    }
    out
}

/// The `detail` values an image part may carry.
pub const DETAILS: [&str; 4] = ["auto", "low", "high", "original"];

/// Checks a parts array as stored (media by `blob` or `url`); `path` names the array, e.g.
/// `events[2].content`. Errors are `(path, reason)`.
pub fn validate_parts(parts: &[Value], path: &str) -> Result<(), (String, String)> {
    for (i, part) in parts.iter().enumerate() {
        validate_part(part, &format!("{path}[{i}]"))?;
    }
    Ok(())
}

fn validate_part(part: &Value, path: &str) -> Result<(), (String, String)> {
    let at = |key: &str| format!("{path}.{key}");
    let Value::Object(fields) = part else {
        return Err((path.to_owned(), format!("expected a content part object, found {}", json_type(part))));
    };
    let string = |key: &str| -> Result<Option<&str>, (String, String)> {
        match fields.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err((at(key), format!("expected a string, found {}", json_type(other)))),
        }
    };
    let type_ = string("type")?.ok_or_else(|| (at("type"), "missing".to_owned()))?;
    let kind = match type_ {
        "text" => {
            string("text")?.ok_or_else(|| (at("text"), "missing".to_owned()))?;
            return Ok(());
        }
        other => MediaKind::from_name(other).ok_or_else(|| {
            (at("type"), format!("expected \"text\", \"image\", \"file\" or \"audio\", found {other:?}"))
        })?,
    };
    match (string("blob")?, string("url")?, string("data")?) {
        (None, None, None) => {
            return Err((at("blob"), "missing (a media part gives `blob`, `url` or `data`)".to_owned()))
        }
        (Some(blob), None, None) => {
            BlobId::parse(blob).map_err(|reason| (at("blob"), reason))?;
            string("mediaType")?.ok_or_else(|| (at("mediaType"), "missing".to_owned()))?;
        }
        (None, Some(url), None) => {
            check_url(url).map_err(|reason| (at("url"), reason))?;
        }
        // Bytes not stored yet: appending decodes and checks them (`media::ingest`).
        (None, None, Some(_)) => {}
        _ => return Err((path.to_owned(), "a part gives one of `blob`, `url` or `data`".to_owned())),
    }
    if let Some(media_type) = string("mediaType")? {
        check_media_type(kind, media_type).map_err(|reason| (at("mediaType"), reason))?;
    }
    if let Some(detail) = string("detail")? {
        if kind != MediaKind::Image {
            return Err((at("detail"), "only image parts take `detail`".to_owned()));
        }
        if !DETAILS.contains(&detail) {
            return Err((
                at("detail"),
                format!("expected \"auto\", \"low\", \"high\" or \"original\", found {detail:?}"),
            ));
        }
    }
    string("filename")?;
    for key in ["size", "width", "height"] {
        match fields.get(key) {
            None => {}
            Some(v) if v.as_u64().is_some() => {}
            Some(other) => return Err((at(key), format!("expected a whole number, found {}", json_type(other)))),
        }
    }
    Ok(())
}

/// A URL part must point at http or https: other schemes (`file:`, `data:`) would either read
/// the machine the request is built on or hide bytes from the store.
pub fn check_url(url: &str) -> Result<(), String> {
    let scheme = url.split_once(':').map(|(scheme, _)| scheme.to_ascii_lowercase());
    match scheme.as_deref() {
        Some("http" | "https") if url.len() > scheme.as_deref().map_or(0, str::len) + 3 => Ok(()),
        _ => Err(format!("expected an http or https URL, found {:?}", url.chars().take(60).collect::<String>())),
    }
}

/// A media type of the part's kind: an image part holds `image/*`, an audio part `audio/*`;
/// a file holds any `type/subtype`.
pub fn check_media_type(kind: MediaKind, media_type: &str) -> Result<(), String> {
    let essence = media_type.split(';').next().unwrap_or_default().trim();
    let Some((top, sub)) = essence.split_once('/') else {
        return Err(format!("expected a media type such as \"image/png\", found {media_type:?}"));
    };
    if top.is_empty() || sub.is_empty() {
        return Err(format!("expected a media type such as \"image/png\", found {media_type:?}"));
    }
    let expected = match kind {
        MediaKind::Image => Some("image"),
        MediaKind::Audio => Some("audio"),
        MediaKind::File => None,
    };
    match expected {
        Some(top_expected) if !top.eq_ignore_ascii_case(top_expected) => {
            Err(format!("an {} part holds {top_expected}/*, found {media_type:?}", kind.as_str()))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(parts: Value) -> Result<(), String> {
        validate_parts(parts.as_array().unwrap(), "events[0].content")
            .map_err(|(path, reason)| format!("{path}: {reason}"))
    }

    fn blob() -> String {
        BlobId::of(b"x").to_string()
    }

    #[test]
    fn valid_parts_pass() {
        let parts = json!([
            {"type": "text", "text": "look"},
            {"type": "image", "blob": blob(), "mediaType": "image/png", "detail": "high", "size": 3, "width": 1, "height": 1},
            {"type": "image", "url": "https://example.com/a.png"},
            {"type": "file", "blob": blob(), "mediaType": "application/pdf", "filename": "a.pdf"},
            {"type": "audio", "blob": blob(), "mediaType": "audio/wav", "x-kept": true},
        ]);
        assert_eq!(check(parts), Ok(()));
    }

    #[test]
    fn invalid_parts_name_their_path() {
        let cases = [
            (json!([1]), "events[0].content[0]: expected a content part object, found number"),
            (
                json!([{"type": "video", "blob": blob()}]),
                "events[0].content[0].type: expected \"text\", \"image\", \"file\" or \"audio\", found \"video\"",
            ),
            (json!([{"type": "text"}]), "events[0].content[0].text: missing"),
            (
                json!([{"type": "image", "mediaType": "image/png"}]),
                "events[0].content[0].blob: missing (a media part gives `blob`, `url` or `data`)",
            ),
            (
                json!([{"type": "image", "blob": "sha256:00", "mediaType": "image/png"}]),
                "events[0].content[0].blob: expected \"sha256:\" and 64 lowercase hex digits, found \"sha256:00\"",
            ),
            (json!([{"type": "image", "blob": blob()}]), "events[0].content[0].mediaType: missing"),
            (
                json!([{"type": "image", "url": "file:///etc/passwd"}]),
                "events[0].content[0].url: expected an http or https URL, found \"file:///etc/passwd\"",
            ),
            (
                json!([{"type": "image", "blob": blob(), "mediaType": "audio/wav"}]),
                "events[0].content[0].mediaType: an image part holds image/*, found \"audio/wav\"",
            ),
            (
                json!([{"type": "image", "blob": blob(), "mediaType": "image/png", "detail": "max"}]),
                "events[0].content[0].detail: expected \"auto\", \"low\", \"high\" or \"original\", found \"max\"",
            ),
            (
                json!([{"type": "file", "blob": blob(), "mediaType": "application/pdf", "detail": "low"}]),
                "events[0].content[0].detail: only image parts take `detail`",
            ),
            (
                json!([{"type": "file", "blob": blob(), "mediaType": "application/pdf", "size": -1}]),
                "events[0].content[0].size: expected a whole number, found number",
            ),
        ];
        for (parts, expected) in cases {
            assert_eq!(check(parts).unwrap_err(), expected);
        }
    }

    #[test]
    fn text_views_never_hold_bytes() {
        let id = blob();
        let parts = json!([
            {"type": "text", "text": "before"},
            {"type": "image", "blob": id, "mediaType": "image/png", "size": 10, "width": 4, "height": 3},
            {"type": "file", "url": "https://x.test/a.pdf", "mediaType": "application/pdf", "filename": "a.pdf"},
            {"type": "text", "text": "after"},
        ]);
        let parts = parts.as_array().unwrap();
        assert_eq!(
            text_of(parts),
            format!("before\n[image image/png {id} 4x3 10 bytes]\n[file application/pdf https://x.test/a.pdf \"a.pdf\"]\nafter")
        );
        assert_eq!(text_parts_only(parts), "before\nafter");
        assert!(has_media(parts));
        assert_eq!(blobs_named(parts).collect::<Vec<_>>(), vec![id.as_str()]);
    }
}
