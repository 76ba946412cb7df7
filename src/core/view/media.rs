//! The pictures a written page carries: each image part's thumbnail as a `data:` URL, within a
//! stated bound, so a thread of a thousand screenshots still makes a page that opens and mails.
//!
//! - a thumbnail is at most [`THUMBNAIL_SIDE`](crate::media::thumbnail::THUMBNAIL_SIDE) px on
//!   its long side and its encoded bytes at most [`MAX_THUMBNAIL_BYTES`];
//! - the page's `data:` URLs together are at most [`MAX_PAGE_MEDIA_BYTES`] characters; images
//!   past that bound, or that cannot be decoded, show as text (type, media type, size,
//!   dimensions, blob id) with the reason. PDFs and audio always show as text.
//!
//! Images are keyed by blob id: one thumbnail however many parts name the same blob.

use crate::event::AgentEvent;
use crate::media::bytes::data_url;
use crate::media::parts::parts_of;
use crate::media::thumbnail::{decodable, thumbnail};
use crate::media::{MediaKind, Part};
use serde::Serialize;
use std::collections::BTreeMap;

/// The encoded bytes of one thumbnail, at most.
pub const MAX_THUMBNAIL_BYTES: usize = 48 * 1024;

/// The characters of a page's `data:` URLs together, at most.
pub const MAX_PAGE_MEDIA_BYTES: usize = 2 * 1024 * 1024;

/// What the page shows for one image blob: its thumbnail, or why there is none.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Shown {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thumbnail: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The page's pictures, by blob id, filled within the bounds above.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(transparent)]
pub struct PageMedia {
    shown: BTreeMap<String, Shown>,
    #[serde(skip)]
    embedded: usize,
}

/// An image blob a page names: its id and the media type its part recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageBlob {
    pub id: String,
    pub media_type: String,
}

/// The image blobs `events` name (messages' and tool results' parts), once each, in order.
pub fn images_named(events: &[AgentEvent]) -> Vec<ImageBlob> {
    let mut seen = std::collections::HashSet::new();
    let mut images = Vec::new();
    for event in events {
        for part in parts_of(event) {
            let Part::Media(media) = Part::of(part) else { continue };
            let Some(id) = media.blob() else { continue };
            if media.kind == MediaKind::Image && seen.insert(id) {
                images.push(ImageBlob { id: id.to_owned(), media_type: media.media_type_or_default().to_owned() });
            }
        }
    }
    images
}

impl PageMedia {
    pub fn is_empty(&self) -> bool {
        self.shown.is_empty()
    }

    /// The characters of `data:` URLs embedded so far.
    pub fn embedded_bytes(&self) -> usize {
        self.embedded
    }

    pub fn get(&self, id: &str) -> Option<&Shown> {
        self.shown.get(id)
    }

    /// Whether another thumbnail could still fit: when not, the caller need not read or decode
    /// the rest (they are noted with [`PageMedia::over_budget`]).
    pub fn has_room(&self) -> bool {
        self.embedded + data_url_len("image/jpeg", 1) <= MAX_PAGE_MEDIA_BYTES
    }

    /// Adds `image`'s thumbnail made from its `bytes`, or the reason it shows as text.
    pub fn add(&mut self, image: &ImageBlob, bytes: &[u8]) {
        if !self.has_room() {
            return self.over_budget(image);
        }
        if decodable(&image.media_type).is_none() {
            return self.note(image, format!("{} is not shown as a picture", image.media_type));
        }
        let small = match thumbnail(&image.media_type, bytes) {
            Ok(small) => small,
            Err(reason) => return self.note(image, reason),
        };
        if small.bytes.len() > MAX_THUMBNAIL_BYTES {
            let reason = format!("its thumbnail is over the {MAX_THUMBNAIL_BYTES}-byte cap of one picture");
            return self.note(image, reason);
        }
        if self.embedded + data_url_len(small.media_type, small.bytes.len()) > MAX_PAGE_MEDIA_BYTES {
            return self.over_budget(image);
        }
        let url = data_url(small.media_type, &small.bytes);
        self.embedded += url.len();
        self.shown.insert(image.id.clone(), Shown { thumbnail: Some(url), note: None });
    }

    /// `image` shows as text: the page's pictures are full.
    pub fn over_budget(&mut self, image: &ImageBlob) {
        self.note(image, format!("not embedded: the page's pictures are capped at {MAX_PAGE_MEDIA_BYTES} bytes"))
    }

    /// `image` shows as text, for `reason`.
    pub fn note(&mut self, image: &ImageBlob, reason: String) {
        self.shown.insert(image.id.clone(), Shown { thumbnail: None, note: Some(reason) });
    }
}

fn data_url_len(media_type: &str, bytes: usize) -> usize {
    "data:;base64,".len() + media_type.len() + bytes.div_ceil(3) * 4
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{DynamicImage, ImageFormat, Rgb, RgbImage};
    use std::io::Cursor;

    /// A picture whose thumbnail is noise, so it compresses badly: the budget fills quickly.
    fn noisy_png(seed: u32) -> Vec<u8> {
        let mut state = seed.wrapping_mul(2_654_435_761).max(1);
        let image = RgbImage::from_fn(240, 240, |_, _| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            Rgb([state as u8, (state >> 8) as u8, (state >> 16) as u8])
        });
        let mut bytes = Vec::new();
        DynamicImage::ImageRgb8(image).write_to(&mut Cursor::new(&mut bytes), ImageFormat::Png).unwrap();
        bytes
    }

    fn image(n: u32) -> ImageBlob {
        ImageBlob { id: format!("sha256:{n:064x}"), media_type: "image/png".into() }
    }

    #[test]
    fn the_page_budget_is_never_exceeded_and_the_rest_say_why() {
        let mut media = PageMedia::default();
        let bytes = noisy_png(1);
        for n in 0..200 {
            media.add(&image(n), &bytes);
        }
        assert!(media.embedded_bytes() <= MAX_PAGE_MEDIA_BYTES);
        let total: usize = media.shown.values().filter_map(|s| s.thumbnail.as_ref()).map(String::len).sum();
        assert_eq!(total, media.embedded_bytes());
        let shown = media.shown.values().filter(|s| s.thumbnail.is_some()).count();
        assert!(shown > 10 && shown < 200, "{shown} thumbnails");
        let last = media.get(&image(199).id).unwrap();
        assert!(last.thumbnail.is_none() && last.note.as_deref().unwrap().contains("capped at 2097152 bytes"));
        for s in media.shown.values().filter_map(|s| s.thumbnail.as_ref()) {
            assert!(s.starts_with("data:image/jpeg;base64,"));
            assert!(s.len() <= data_url_len("image/jpeg", MAX_THUMBNAIL_BYTES));
        }
    }

    #[test]
    fn a_thumbnail_over_its_own_cap_shows_as_text() {
        // Transparent noise stays PNG and hardly compresses: 160x160x4 bytes is over the cap.
        let mut state = 7u32;
        let noise = image::RgbaImage::from_fn(240, 240, |_, _| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            image::Rgba(state.to_le_bytes())
        });
        let mut bytes = Vec::new();
        DynamicImage::ImageRgba8(noise).write_to(&mut Cursor::new(&mut bytes), ImageFormat::Png).unwrap();
        let mut media = PageMedia::default();
        media.add(&image(1), &bytes);
        let note = media.get(&image(1).id).unwrap().note.clone().unwrap();
        assert_eq!(note, "its thumbnail is over the 49152-byte cap of one picture");
        assert_eq!(media.embedded_bytes(), 0);
    }

    #[test]
    fn undecodable_and_unshown_types_are_noted() {
        let mut media = PageMedia::default();
        media.add(&image(1), b"not a png");
        let svg = ImageBlob { id: image(2).id, media_type: "image/svg+xml".into() };
        media.add(&svg, b"<svg onload=alert(1)/>");
        assert!(media.get(&image(1).id).unwrap().note.as_deref().unwrap().starts_with("could not be decoded"));
        assert_eq!(media.get(&svg.id).unwrap().note.as_deref(), Some("image/svg+xml is not shown as a picture"));
        assert_eq!(media.embedded_bytes(), 0);
    }
}
