//! Media in the message forms the importers read, as content parts ([`crate::media::parts`]).
//!
//! Each importer's media blocks become parts that give their bytes as `data` (base64) or keep
//! their http(s) `url`; appending the events stores the bytes as blobs. A block that names
//! media the event model cannot hold (a provider's file id) is refused, naming the block:
//! nothing is dropped unseen.
//!
//! | form | blocks read |
//! |---|---|
//! | LangChain | `text`; `image` / `file` / `audio` with `base64` (or `data` with `source_type: "base64"`) and `mime_type`, or `url`; the older `image_url` (`{url, detail?}` or a string); Anthropic's `image` / `document` with a `source`; OpenAI Chat's `file` (`file_data`) and `input_audio` |
//! | OpenAI Responses | `input_text` / `output_text`; `input_image` (`image_url` as a data or http URL, `detail`); `input_file` (`file_data`, `filename`, or `file_url`) |
//! | Vercel AI SDK | `text`; `image` (`image` as base64, a data URL or a URL; `mediaType`); `file` (`data`, `mediaType`, `filename`); in tool outputs `media` (`data`, `mediaType`) |

use super::input_fields::fault;
use crate::event::{json_type, EventError};
use serde_json::{json, Map, Value};

/// Which importer's blocks are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    LangChain,
    Responses,
    AiSdk,
}

/// The parts of a content array that holds media; `None` when it holds none (the importer then
/// reads its text as it always did). Blocks that carry neither text nor media (refusals,
/// reasoning, provider-specific blocks) are passed over as the text readers pass them over.
pub fn media_parts(blocks: &[Value], form: Form, path: &str) -> Result<Option<Vec<Value>>, EventError> {
    let mut parts = Vec::with_capacity(blocks.len());
    let mut has_media = false;
    for (i, block) in blocks.iter().enumerate() {
        let at = format!("{path}[{i}]");
        let part = match block {
            Value::String(text) if form == Form::LangChain => Some(text_part(text)),
            Value::Object(fields) => match form {
                Form::LangChain => langchain_block(fields, &at)?,
                Form::Responses => responses_part(fields, &at)?,
                Form::AiSdk => ai_sdk_part(fields, &at)?,
            },
            _ => None,
        };
        if let Some(part) = part {
            has_media |= part.get("type").and_then(Value::as_str) != Some("text");
            parts.push(part);
        }
    }
    Ok(has_media.then_some(parts))
}

fn text_part(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

fn str_field<'a>(fields: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    fields.get(key).and_then(Value::as_str)
}

/// A media part from bytes given as base64 or as a data URL, or from an http(s) URL.
fn media(kind: &str, source: Source<'_>, media_type: Option<&str>) -> Value {
    let mut part = Map::new();
    part.insert("type".into(), kind.into());
    match source {
        Source::Data(data) => part.insert("data".into(), data.into()),
        Source::Url(url) => part.insert("url".into(), url.into()),
    };
    if let Some(media_type) = media_type {
        part.insert("mediaType".into(), media_type.into());
    }
    Value::Object(part)
}

#[derive(Clone, Copy)]
enum Source<'a> {
    Data(&'a str),
    Url(&'a str),
}

/// A string that is an http(s) URL is one; anything else is bytes (base64 or a data URL).
fn source_of(text: &str) -> Source<'_> {
    if is_http(text) {
        Source::Url(text)
    } else {
        Source::Data(text)
    }
}

/// A field that holds a URL: a `data:` URL's bytes, or an http(s) URL; anything else is
/// refused (a file path, a provider's own scheme), naming the field.
fn url_source<'a>(text: &'a str, path: &str) -> Result<Source<'a>, EventError> {
    match text.get(..5).map(str::to_ascii_lowercase).as_deref() {
        Some("data:") => Ok(Source::Data(text)),
        _ if is_http(text) => Ok(Source::Url(text)),
        _ => Err(fault(
            path,
            format!("expected a data: or http(s) URL, found {:?}", text.chars().take(60).collect::<String>()),
        )),
    }
}

fn is_http(text: &str) -> bool {
    let lower = text.get(..8).unwrap_or(text).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

fn with(mut part: Value, key: &str, value: Option<&Value>) -> Value {
    if let (Some(value), Value::Object(fields)) = (value, &mut part) {
        fields.insert(key.into(), value.clone());
    }
    part
}

fn refuse_file_id(fields: &Map<String, Value>, path: &str) -> Result<(), EventError> {
    for key in ["file_id", "id"] {
        if fields.contains_key(key)
            && !fields.contains_key("base64")
            && !fields.contains_key("data")
            && !fields.contains_key("url")
        {
            return Err(fault(
                path,
                format!("a provider's `{key}` names bytes kept elsewhere: give the bytes (base64) or an http(s) URL"),
            ));
        }
    }
    Ok(())
}

fn langchain_block(fields: &Map<String, Value>, path: &str) -> Result<Option<Value>, EventError> {
    let kind = str_field(fields, "type").unwrap_or_default();
    let mime = str_field(fields, "mime_type").or_else(|| str_field(fields, "media_type"));
    let filename =
        fields.get("filename").or_else(|| fields.get("extras").and_then(|e| e.get("filename"))).or_else(|| {
            fields
                .get("metadata")
                .and_then(|m| m.get("filename"))
                .or_else(|| fields.get("metadata").and_then(|m| m.get("name")))
        });
    Ok(Some(match kind {
        "text" => text_part(str_field(fields, "text").unwrap_or_default()),
        "image" | "file" | "audio" => {
            // Anthropic's own block, as LangChain passes it through.
            if let Some(Value::Object(source)) = fields.get("source") {
                return anthropic_source(kind, source, path).map(Some);
            }
            refuse_file_id(fields, path)?;
            let source = match (str_field(fields, "base64"), str_field(fields, "data"), str_field(fields, "url")) {
                (Some(data), _, _) | (None, Some(data), _) => Source::Data(data),
                (None, None, Some(url)) => url_source(url, &format!("{path}.url"))?,
                _ => return Err(fault(path, format!("an {kind} block gives `base64` or `url`"))),
            };
            let part = media(kind, source, mime);
            let part = if kind == "file" { with(part, "filename", filename) } else { part };
            with(part, "detail", fields.get("detail").filter(|_| kind == "image"))
        }
        "image_url" => {
            let (url, detail, url_path) = match fields.get("image_url") {
                Some(Value::String(url)) => (url.as_str(), None, format!("{path}.image_url")),
                Some(Value::Object(image)) => {
                    (str_field(image, "url").unwrap_or_default(), image.get("detail"), format!("{path}.image_url.url"))
                }
                other => {
                    let found = other.map_or("nothing", json_type);
                    return Err(fault(
                        &format!("{path}.image_url"),
                        format!("expected a URL or {{url}}, found {found}"),
                    ));
                }
            };
            with(media("image", url_source(url, &url_path)?, None), "detail", detail)
        }
        "document" => match fields.get("source") {
            Some(Value::Object(source)) => anthropic_source("file", source, path)?,
            _ => return Err(fault(&format!("{path}.source"), "missing")),
        },
        "input_audio" => {
            let audio = fields.get("input_audio").and_then(Value::as_object);
            let data = audio
                .and_then(|a| str_field(a, "data"))
                .ok_or_else(|| fault(&format!("{path}.input_audio.data"), "missing"))?;
            let format = audio.and_then(|a| str_field(a, "format")).unwrap_or("wav");
            media("audio", Source::Data(data), Some(&format!("audio/{format}")))
        }
        _ => return Ok(None),
    }))
}

/// An Anthropic `image` or `document` block (as Claude Code writes them) as a part: `base64`,
/// `url` and `text` sources (a document's `title` as its `filename`). `None` for any other
/// block, and for a source that names bytes kept elsewhere (a `file` id) or holds blocks
/// (`content`): the importer keeps those as they are.
pub fn anthropic_media(fields: &Map<String, Value>, path: &str) -> Result<Option<Value>, EventError> {
    let kind = match str_field(fields, "type") {
        Some("image") => "image",
        Some("document") => "file",
        _ => return Ok(None),
    };
    let Some(Value::Object(source)) = fields.get("source") else { return Ok(None) };
    if !matches!(str_field(source, "type"), Some("base64" | "url" | "text")) {
        return Ok(None);
    }
    let part = anthropic_source(kind, source, path)?;
    Ok(Some(with(part, "filename", fields.get("title").filter(|title| kind == "file" && title.is_string()))))
}

/// Anthropic's `source` of an image or document block.
fn anthropic_source(kind: &str, source: &Map<String, Value>, path: &str) -> Result<Value, EventError> {
    let media_type = str_field(source, "media_type");
    match str_field(source, "type") {
        Some("base64") => {
            let data = str_field(source, "data").ok_or_else(|| fault(&format!("{path}.source.data"), "missing"))?;
            Ok(media(kind, Source::Data(data), media_type))
        }
        Some("url") => {
            let url = str_field(source, "url").ok_or_else(|| fault(&format!("{path}.source.url"), "missing"))?;
            Ok(media(kind, Source::Url(url), media_type))
        }
        Some("text") => {
            let text = str_field(source, "data").unwrap_or_default();
            let data = crate::media::bytes::to_base64(text.as_bytes());
            Ok(media(kind, Source::Data(&data), Some(media_type.unwrap_or("text/plain"))))
        }
        other => Err(fault(
            &format!("{path}.source.type"),
            format!("expected base64, url or text, found {}", other.map_or("nothing".to_owned(), |t| format!("{t:?}"))),
        )),
    }
}

fn responses_part(fields: &Map<String, Value>, path: &str) -> Result<Option<Value>, EventError> {
    Ok(Some(match str_field(fields, "type").unwrap_or_default() {
        "input_text" | "output_text" | "text" => text_part(str_field(fields, "text").unwrap_or_default()),
        "input_image" => {
            let url = str_field(fields, "image_url").ok_or_else(|| match fields.get("file_id") {
                Some(_) => fault(
                    path,
                    "a provider's `file_id` names bytes kept elsewhere: give `image_url` (a data or http URL)",
                ),
                None => fault(&format!("{path}.image_url"), "missing"),
            })?;
            with(
                media("image", url_source(url, &format!("{path}.image_url"))?, None),
                "detail",
                fields.get("detail").filter(|d| d.as_str() != Some("auto")),
            )
        }
        "input_file" => {
            let filename = fields.get("filename");
            let part = match (str_field(fields, "file_data"), str_field(fields, "file_url")) {
                (Some(data), _) => media("file", Source::Data(data), None),
                (None, Some(url)) => media("file", url_source(url, &format!("{path}.file_url"))?, None),
                _ => return Err(fault(
                    path,
                    "an input_file gives `file_data` or `file_url` (a provider's `file_id` names bytes kept elsewhere)",
                )),
            };
            with(part, "filename", filename)
        }
        _ => return Ok(None),
    }))
}

fn ai_sdk_part(fields: &Map<String, Value>, path: &str) -> Result<Option<Value>, EventError> {
    let media_type = str_field(fields, "mediaType");
    let kind_of = |default_image: bool| match media_type {
        _ if default_image => "image",
        Some(t) if t.starts_with("image") => "image",
        Some(t) if t.starts_with("audio") => "audio",
        _ => "file",
    };
    let kind = str_field(fields, "type").unwrap_or_default();
    let (source, kind) = match kind {
        "text" => return Ok(Some(text_part(str_field(fields, "text").unwrap_or_default()))),
        "image" => {
            let image = str_field(fields, "image")
                .ok_or_else(|| fault(&format!("{path}.image"), "expected base64, a data URL or a URL"))?;
            (source_of(image), "image")
        }
        "file" | "media" | "file-data" | "image-data" => {
            let source = match fields.get("data") {
                Some(Value::String(data)) => source_of(data),
                // AI SDK 6+: tagged file data.
                Some(Value::Object(tagged)) => match str_field(tagged, "type") {
                    Some("data") => Source::Data(
                        str_field(tagged, "data")
                            .ok_or_else(|| fault(&format!("{path}.data.data"), "expected base64 or a data URL"))?,
                    ),
                    Some("url") => url_source(
                        str_field(tagged, "url").ok_or_else(|| fault(&format!("{path}.data.url"), "missing"))?,
                        &format!("{path}.data.url"),
                    )?,
                    other => {
                        return Err(fault(
                            &format!("{path}.data.type"),
                            format!(
                                "expected data or url (a provider's reference or inline text names no bytes), found {}",
                                other.map_or("nothing".to_owned(), |t| format!("{t:?}"))
                            ),
                        ))
                    }
                },
                _ => return Err(fault(&format!("{path}.data"), "expected base64, a data URL or a URL")),
            };
            (source, kind_of(kind == "image-data"))
        }
        "file-url" | "image-url" => {
            let url = str_field(fields, "url").ok_or_else(|| fault(&format!("{path}.url"), "missing"))?;
            (url_source(url, &format!("{path}.url"))?, kind_of(kind == "image-url"))
        }
        other => {
            return Err(fault(
                &format!("{path}.type"),
                format!("unsupported part type {other:?} beside media: expected text, image, file, media, file-data, file-url, image-data or image-url"),
            ))
        }
    };
    let part = media(kind, source, media_type.filter(|t| t.contains('/')));
    Ok(Some(with(part, "filename", fields.get("filename").filter(|_| kind == "file"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(blocks: Value, form: Form) -> Result<Option<Value>, String> {
        media_parts(blocks.as_array().unwrap(), form, "content").map(|p| p.map(Value::Array)).map_err(|e| e.to_string())
    }

    #[test]
    fn langchain_blocks_of_every_generation_become_parts() {
        let blocks = json!([
            "look",
            {"type": "text", "text": "at this"},
            {"type": "image", "base64": "AAAA", "mime_type": "image/png"},
            {"type": "image", "source_type": "base64", "data": "BBBB", "mime_type": "image/jpeg"},
            {"type": "image", "url": "https://x.test/a.png"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,CCCC", "detail": "high"}},
            {"type": "file", "base64": "DDDD", "mime_type": "application/pdf", "filename": "a.pdf"},
            {"type": "audio", "base64": "EEEE", "mime_type": "audio/wav"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "FFFF"}},
            {"type": "reasoning", "reasoning": "passed over"},
        ]);
        assert_eq!(
            parts(blocks, Form::LangChain).unwrap().unwrap(),
            json!([
                {"type": "text", "text": "look"},
                {"type": "text", "text": "at this"},
                {"type": "image", "data": "AAAA", "mediaType": "image/png"},
                {"type": "image", "data": "BBBB", "mediaType": "image/jpeg"},
                {"type": "image", "url": "https://x.test/a.png"},
                {"type": "image", "data": "data:image/png;base64,CCCC", "detail": "high"},
                {"type": "file", "data": "DDDD", "mediaType": "application/pdf", "filename": "a.pdf"},
                {"type": "audio", "data": "EEEE", "mediaType": "audio/wav"},
                {"type": "image", "data": "FFFF", "mediaType": "image/png"},
            ])
        );
        assert_eq!(parts(json!([{"type": "text", "text": "only text"}]), Form::LangChain).unwrap(), None);
        assert_eq!(
            parts(json!([{"type": "image", "file_id": "file-1"}]), Form::LangChain).unwrap_err(),
            "content[0]: a provider's `file_id` names bytes kept elsewhere: give the bytes (base64) or an http(s) URL"
        );
    }

    #[test]
    fn responses_and_ai_sdk_parts_become_parts() {
        let items = json!([
            {"type": "input_text", "text": "see"},
            {"type": "input_image", "image_url": "data:image/png;base64,AAAA", "detail": "low"},
            {"type": "input_file", "file_data": "data:application/pdf;base64,BBBB", "filename": "r.pdf"},
        ]);
        assert_eq!(
            parts(items, Form::Responses).unwrap().unwrap(),
            json!([
                {"type": "text", "text": "see"},
                {"type": "image", "data": "data:image/png;base64,AAAA", "detail": "low"},
                {"type": "file", "data": "data:application/pdf;base64,BBBB", "filename": "r.pdf"},
            ])
        );
        let ai = json!([
            {"type": "image", "image": "https://x.test/a.png", "mediaType": "image/png"},
            {"type": "file", "data": "CCCC", "mediaType": "application/pdf", "filename": "f.pdf"},
            {"type": "media", "data": "DDDD", "mediaType": "image/webp"},
        ]);
        assert_eq!(
            parts(ai, Form::AiSdk).unwrap().unwrap(),
            json!([
                {"type": "image", "url": "https://x.test/a.png", "mediaType": "image/png"},
                {"type": "file", "data": "CCCC", "mediaType": "application/pdf", "filename": "f.pdf"},
                {"type": "image", "data": "DDDD", "mediaType": "image/webp"},
            ])
        );
    }
}
