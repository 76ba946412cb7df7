//! A small picture of an image blob, for pages that show what a thread holds: decoded with
//! bounded memory from the type the store recorded (never guessed again from the bytes),
//! scaled to fit [`THUMBNAIL_SIDE`] on its long side, and re-encoded small (JPEG when opaque,
//! PNG when it has transparency).

use image::codecs::jpeg::JpegEncoder;
use image::{DynamicImage, ImageFormat, ImageReader, Limits};
use std::io::Cursor;

/// The long side of a thumbnail, in pixels, at most.
pub const THUMBNAIL_SIDE: u32 = 160;

/// Larger images are not decoded: a crafted header cannot make the decoder allocate more.
const MAX_DECODE_SIDE: u32 = 16_384;
const MAX_DECODE_ALLOC: u64 = 256 * 1024 * 1024;

/// JPEG quality of opaque thumbnails: small, and still legible at 160 px.
const JPEG_QUALITY: u8 = 75;

/// A re-encoded small picture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Thumbnail {
    /// `image/jpeg` or `image/png`.
    pub media_type: &'static str,
    pub bytes: Vec<u8>,
    pub width: u32,
    pub height: u32,
}

/// The image formats a thumbnail is made from, by the media type the store recorded.
pub fn decodable(media_type: &str) -> Option<ImageFormat> {
    match media_type {
        "image/png" => Some(ImageFormat::Png),
        "image/jpeg" => Some(ImageFormat::Jpeg),
        "image/gif" => Some(ImageFormat::Gif),
        "image/webp" => Some(ImageFormat::WebP),
        _ => None,
    }
}

/// The thumbnail of an image of type `media_type`, or why there is none (one line).
pub fn thumbnail(media_type: &str, bytes: &[u8]) -> Result<Thumbnail, String> {
    let format = decodable(media_type).ok_or_else(|| format!("{media_type} is not a type shown as a picture"))?;
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_DECODE_SIDE);
    limits.max_image_height = Some(MAX_DECODE_SIDE);
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    reader.limits(limits);
    let image = reader.decode().map_err(|e| format!("could not be decoded: {e}"))?;
    let small = if image.width() > THUMBNAIL_SIDE || image.height() > THUMBNAIL_SIDE {
        image.thumbnail(THUMBNAIL_SIDE, THUMBNAIL_SIDE)
    } else {
        image
    };
    encode(&small)
}

fn encode(image: &DynamicImage) -> Result<Thumbnail, String> {
    let mut bytes = Vec::new();
    let media_type = if image.color().has_alpha() {
        image.to_rgba8().write_to(&mut Cursor::new(&mut bytes), ImageFormat::Png).map_err(|e| e.to_string())?;
        "image/png"
    } else {
        JpegEncoder::new_with_quality(&mut bytes, JPEG_QUALITY)
            .encode_image(&DynamicImage::ImageRgb8(image.to_rgb8()))
            .map_err(|e| e.to_string())?;
        "image/jpeg"
    };
    Ok(Thumbnail { media_type, bytes, width: image.width(), height: image.height() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{Rgb, RgbImage, Rgba, RgbaImage};

    fn png(image: DynamicImage) -> Vec<u8> {
        let mut bytes = Vec::new();
        image.write_to(&mut Cursor::new(&mut bytes), ImageFormat::Png).unwrap();
        bytes
    }

    #[test]
    fn a_large_picture_shrinks_to_the_long_side_keeping_its_shape() {
        let wide = png(DynamicImage::ImageRgb8(RgbImage::from_fn(1280, 800, |x, y| Rgb([x as u8, y as u8, 7]))));
        let thumb = thumbnail("image/png", &wide).unwrap();
        assert_eq!((thumb.width, thumb.height, thumb.media_type), (160, 100, "image/jpeg"));
        assert!(thumb.bytes.starts_with(&[0xFF, 0xD8]), "a JPEG");
        let decoded = image::load_from_memory(&thumb.bytes).unwrap();
        assert_eq!((decoded.width(), decoded.height()), (160, 100));
    }

    #[test]
    fn transparency_stays_png_and_small_pictures_keep_their_size() {
        let clear = png(DynamicImage::ImageRgba8(RgbaImage::from_pixel(20, 30, Rgba([1, 2, 3, 0]))));
        let thumb = thumbnail("image/png", &clear).unwrap();
        assert_eq!((thumb.width, thumb.height, thumb.media_type), (20, 30, "image/png"));
    }

    #[test]
    fn undecodable_bytes_and_other_types_say_why() {
        assert!(thumbnail("image/png", b"\x89PNG\r\n\x1a\nnot really")
            .unwrap_err()
            .starts_with("could not be decoded"));
        assert!(thumbnail("image/svg+xml", b"<svg/>").unwrap_err().contains("not a type shown"));
        // The recorded type decides; bytes of another format are not guessed at.
        let gif_named_png = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;";
        assert!(thumbnail("image/png", gif_named_png).is_err());
    }
}
