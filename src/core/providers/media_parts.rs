//! A message's content parts as a projection carries them: text, and the media a provider
//! takes, with their bytes (or URL) at hand; every other media part as its placeholder text.
//!
//! Projections write each provider's own shapes; what they share is here: which media a
//! message holds natively, and, when none is, that the message renders exactly as its text
//! (so a thread without media, or rendered without its bytes, keeps today's bytes).

use crate::media::bytes::{data_url, to_base64};
use crate::media::parts::Media;
use crate::media::{MediaBytes, MediaKind, Part, PartSource};
use crate::messages::StoredMessage;
use serde_json::Value;
use std::borrow::Cow;

/// Where a carried media part's bytes come from.
#[derive(Clone, Copy, Debug)]
pub enum Carried<'a> {
    /// The blob's bytes, from the render's [`MediaBytes`].
    Bytes(&'a [u8]),
    /// The URL the part names; the provider fetches it.
    Url(&'a str),
}

impl<'a> Carried<'a> {
    /// The bytes as standard base64, or the URL as it is.
    pub fn base64_or_url(&self) -> String {
        match self {
            Carried::Bytes(bytes) => to_base64(bytes),
            Carried::Url(url) => (*url).to_owned(),
        }
    }

    /// A `data:` URL of the bytes, or the URL as it is.
    pub fn data_url_or_url(&self, media_type: &str) -> String {
        match self {
            Carried::Bytes(bytes) => data_url(media_type, bytes),
            Carried::Url(url) => (*url).to_owned(),
        }
    }

    pub fn is_url(&self) -> bool {
        matches!(self, Carried::Url(_))
    }
}

/// One piece of a message's content.
#[derive(Clone, Debug)]
pub enum Piece<'a> {
    /// A text part, or the placeholder of a media part the provider cannot carry.
    Text(Cow<'a, str>),
    /// A media part the provider carries.
    Media(Media<'a>, Carried<'a>),
}

/// The pieces of `parts` when at least one media part is carried: a media part is carried when
/// `takes` says the provider takes it and its bytes are in `media` (or it is a URL). `None`
/// when nothing is: the message then renders as its text.
pub fn native<'a>(
    parts: &'a [Value],
    media: &'a MediaBytes,
    takes: impl Fn(&Media<'a>, &Carried<'a>) -> bool,
) -> Option<Vec<Piece<'a>>> {
    let mut carried_any = false;
    let pieces: Vec<Piece<'a>> = Part::all(parts)
        .map(|part| match part {
            Part::Text(text) => Piece::Text(Cow::Borrowed(text)),
            Part::Media(part) => {
                let carried = match part.source {
                    PartSource::Blob(id) => media.get(id).map(Carried::Bytes),
                    PartSource::Url(url) => Some(Carried::Url(url)),
                    // Bytes not stored yet (events not appended): named, as without their bytes.
                    PartSource::Data(_) => None,
                };
                match carried.filter(|carried| takes(&part, carried)) {
                    Some(carried) => {
                        carried_any = true;
                        Piece::Media(part, carried)
                    }
                    None => Piece::Text(Cow::Owned(part.placeholder())),
                }
            }
        })
        .collect();
    carried_any.then_some(pieces)
}

/// Pieces as a provider's content parts, made by `text` and `media`; empty text says nothing
/// and is left out.
pub fn parts_of<'a, P>(
    pieces: Vec<Piece<'a>>,
    text: impl Fn(Cow<'a, str>) -> P,
    media: impl Fn(&Media<'a>, &Carried<'a>) -> P,
) -> Vec<P> {
    pieces
        .into_iter()
        .filter_map(|piece| match piece {
            Piece::Text(t) if t.is_empty() => None,
            Piece::Text(t) => Some(text(t)),
            Piece::Media(part, carried) => Some(media(&part, &carried)),
        })
        .collect()
}

/// [`native`] for a message's content, when it is made of parts.
pub fn native_of<'a>(
    message: &'a StoredMessage,
    media: &'a MediaBytes,
    takes: impl Fn(&Media<'a>, &Carried<'a>) -> bool,
) -> Option<Vec<Piece<'a>>> {
    native(message.data.content.parts()?, media, takes)
}

/// The text part put before each media part of a tool result that goes out apart from the
/// result (Chat Completions' and Pydantic AI's tool messages take text only).
pub fn tool_media_label(call_id: &str) -> String {
    format!("Media of tool call {call_id}:")
}

/// The media type of a carried part (a URL part may declare none).
pub fn media_type<'a>(part: &Media<'a>) -> &'a str {
    part.media_type_or_default()
}

/// The media type without parameters, lowercased, for matching.
pub fn essence(part: &Media<'_>) -> String {
    media_type(part).split(';').next().unwrap_or_default().trim().to_ascii_lowercase()
}

pub fn is_pdf(part: &Media<'_>) -> bool {
    part.kind == MediaKind::File && essence(part) == "application/pdf"
}

/// OpenAI's `input_audio.format` for an audio part: `wav` or `mp3`, the two it takes.
pub fn openai_audio_format(part: &Media<'_>) -> Option<&'static str> {
    match essence(part).as_str() {
        "audio/wav" | "audio/x-wav" | "audio/wave" | "audio/vnd.wave" => Some("wav"),
        "audio/mpeg" | "audio/mp3" => Some("mp3"),
        _ => None,
    }
}

/// A file part's name, or one made of its blob (providers want a name beside file bytes).
pub fn filename_of(part: &Media<'_>) -> String {
    if let Some(name) = part.filename() {
        return name.to_owned();
    }
    let stem = match part.source {
        PartSource::Blob(id) => id.strip_prefix("sha256:").unwrap_or(id).chars().take(12).collect(),
        PartSource::Url(_) | PartSource::Data(_) => "file".to_owned(),
    };
    let extension = if is_pdf(part) { ".pdf" } else { "" };
    format!("{stem}{extension}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::BlobId;
    use serde_json::json;

    #[test]
    fn media_are_carried_only_with_their_bytes_or_url() {
        let id = BlobId::of(b"png");
        let parts = json!([
            {"type": "text", "text": "see"},
            {"type": "image", "blob": id.as_str(), "mediaType": "image/png"},
        ]);
        let parts = parts.as_array().unwrap();
        assert!(native(parts, &crate::media::bytes::NO_MEDIA, |_, _| true).is_none());
        let mut media = MediaBytes::new();
        media.insert(&id, bytes::Bytes::from_static(b"png"));
        let pieces = native(parts, &media, |_, _| true).unwrap();
        assert!(matches!(pieces[1], Piece::Media(_, Carried::Bytes(b"png"))));
        // A provider that does not take the part names it.
        let pieces = native(parts, &media, |_, _| false);
        assert!(pieces.is_none());
    }
}
