//! The `messages` format's media: a message made of content parts goes out with LangChain's
//! standard content blocks — `{type: "text", text}`, `{type: "image" | "file" | "audio",
//! base64, mime_type}` for bytes, `{type: …, url}` for a URL (a file's name in `extras`) — and
//! as its text (media as placeholders) when none of its media has its bytes at hand, as every
//! render without bytes shows it.

use super::stored::{Content, StoredMessage};
use crate::media::bytes::to_base64;
use crate::media::{MediaBytes, Part, PartSource};
use serde_json::{json, Map, Value};
use std::borrow::Cow;

/// `message` as the `messages` format writes it: unchanged unless it is made of parts.
pub fn with_media_blocks<'a>(message: &'a StoredMessage, media: &MediaBytes) -> Cow<'a, StoredMessage> {
    let Some(parts) = message.data.content.parts() else { return Cow::Borrowed(message) };
    let mut out = message.clone();
    out.data.content = match blocks(parts, media) {
        Some(blocks) => Content::Other(Box::new(Value::Array(blocks))),
        None => Content::Text(message.content_text().into_owned()),
    };
    Cow::Owned(out)
}

/// The standard blocks of `parts`, when at least one media part has its bytes or a URL.
fn blocks(parts: &[Value], media: &MediaBytes) -> Option<Vec<Value>> {
    let mut carried = false;
    let blocks = Part::all(parts)
        .map(|part| match part {
            Part::Text(text) => json!({"type": "text", "text": text}),
            Part::Media(part) => {
                let bytes = match part.source {
                    PartSource::Blob(id) => media.get(id),
                    _ => None,
                };
                if let Some(block) = super::block_forms::block_in_its_form(part.fields, bytes) {
                    carried = true;
                    return block;
                }
                let mut block = Map::new();
                block.insert("type".into(), part.kind.as_str().into());
                match part.source {
                    PartSource::Blob(id) => match media.get(id) {
                        Some(bytes) => {
                            block.insert("base64".into(), to_base64(bytes).into());
                        }
                        None => return json!({"type": "text", "text": part.placeholder()}),
                    },
                    PartSource::Url(url) => {
                        block.insert("url".into(), url.into());
                    }
                    // Bytes not stored yet (events not appended): named, as without their bytes.
                    PartSource::Data(_) => return json!({"type": "text", "text": part.placeholder()}),
                }
                carried = true;
                if let Some(media_type) = part.media_type() {
                    block.insert("mime_type".into(), media_type.into());
                }
                if let Some(name) = part.filename() {
                    block.insert("extras".into(), json!({"filename": name}));
                }
                Value::Object(block)
            }
        })
        .collect();
    carried.then_some(blocks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::BlobId;
    use crate::messages::MessageType;

    #[test]
    fn parts_become_standard_blocks_with_their_bytes_and_text_without() {
        let id = BlobId::of(b"%PDF");
        let parts = vec![
            json!({"type": "text", "text": "read"}),
            json!({"type": "file", "blob": id.as_str(), "mediaType": "application/pdf", "filename": "a.pdf"}),
        ];
        let message = StoredMessage::with_parts(MessageType::Human, parts);
        let without = with_media_blocks(&message, &crate::media::bytes::NO_MEDIA);
        assert_eq!(without.content_str(), Some(format!("read\n[file application/pdf {id} \"a.pdf\"]").as_str()));
        let mut media = MediaBytes::new();
        media.insert(&id, bytes::Bytes::from_static(b"%PDF"));
        let with = serde_json::to_value(with_media_blocks(&message, &media)).unwrap();
        assert_eq!(
            with["data"]["content"],
            json!([{"type": "text", "text": "read"},
                   {"type": "file", "base64": "JVBERg==", "mime_type": "application/pdf", "extras": {"filename": "a.pdf"}}])
        );
    }
}
