//! What bytes are, by their signature, and an image's size from its header (never by decoding
//! it: the header is all a token rule needs, and a hostile header claims what it likes, so the
//! size it claims is bounded by [`MAX_IMAGE_SIDE`] and [`MAX_IMAGE_PIXELS`]).

/// Whether bytes carry one kind's signature.
type SignatureTest = fn(&[u8]) -> bool;

/// The media types whose bytes can be checked here, each with its signature test.
const CHECKED: &[(&str, SignatureTest)] = &[
    ("image/png", is_png),
    ("image/jpeg", is_jpeg),
    ("image/jpg", is_jpeg),
    ("image/gif", is_gif),
    ("image/webp", is_webp),
    ("application/pdf", is_pdf),
    ("audio/wav", is_wav),
    ("audio/wave", is_wav),
    ("audio/x-wav", is_wav),
    ("audio/vnd.wave", is_wav),
    ("audio/mpeg", is_mp3),
    ("audio/mp3", is_mp3),
    ("audio/ogg", is_ogg),
    ("audio/flac", is_flac),
    ("audio/x-flac", is_flac),
];

/// The most pixels an image's header may claim on one side.
pub const MAX_IMAGE_SIDE: u32 = 65_535;
/// The most pixels an image's header may claim in all (16,384 × 16,384).
pub const MAX_IMAGE_PIXELS: u64 = 1 << 28;

/// The media type the bytes' signature shows, when it is one this module knows.
pub fn media_type_of(bytes: &[u8]) -> Option<&'static str> {
    // The canonical name of each kind comes first in CHECKED.
    let canonical = [
        "image/png",
        "image/jpeg",
        "image/gif",
        "image/webp",
        "application/pdf",
        "audio/wav",
        "audio/mpeg",
        "audio/ogg",
        "audio/flac",
    ];
    canonical.into_iter().find(|name| CHECKED.iter().any(|(type_, test)| type_ == name && test(bytes)))
}

/// Whether `declared` is a type whose signature this module checks.
pub fn is_checked(declared: &str) -> bool {
    let declared = essence(declared);
    CHECKED.iter().any(|(type_, _)| type_.eq_ignore_ascii_case(&declared))
}

/// Whether the bytes contradict `declared`: false for a type that cannot be checked.
pub fn contradicts(declared: &str, bytes: &[u8]) -> bool {
    let declared = essence(declared);
    match CHECKED.iter().find(|(type_, _)| type_.eq_ignore_ascii_case(&declared)) {
        Some((_, test)) => !test(bytes),
        None => false,
    }
}

/// A media type without its parameters (`image/png; x=y` is `image/png`), lower case.
fn essence(media_type: &str) -> String {
    media_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase()
}

/// An image's width and height as its header states them, for the kinds this module knows.
pub fn image_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if is_png(bytes) {
        // The IHDR chunk comes first: its width and height are big-endian at 16 and 20.
        return Some((be32(bytes, 16)?, be32(bytes, 20)?));
    }
    if is_gif(bytes) {
        return Some((u32::from(le16(bytes, 6)?), u32::from(le16(bytes, 8)?)));
    }
    if is_webp(bytes) {
        return webp_size(bytes);
    }
    if is_jpeg(bytes) {
        return jpeg_size(bytes);
    }
    None
}

/// Why a claimed size is refused, if it is.
pub fn check_image_size(width: u32, height: u32) -> Result<(), String> {
    let pixels = u64::from(width) * u64::from(height);
    if width == 0 || height == 0 || width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE || pixels > MAX_IMAGE_PIXELS {
        return Err(format!(
            "the image header claims {width} × {height} px; an image may have 1 to {MAX_IMAGE_SIDE} px a side and \
             at most {MAX_IMAGE_PIXELS} px in all"
        ));
    }
    Ok(())
}

fn is_png(b: &[u8]) -> bool {
    b.starts_with(b"\x89PNG\r\n\x1a\n")
}
fn is_jpeg(b: &[u8]) -> bool {
    b.starts_with(&[0xFF, 0xD8, 0xFF])
}
fn is_gif(b: &[u8]) -> bool {
    b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a")
}
fn is_webp(b: &[u8]) -> bool {
    b.len() >= 12 && &b[..4] == b"RIFF" && &b[8..12] == b"WEBP"
}
fn is_pdf(b: &[u8]) -> bool {
    b.starts_with(b"%PDF-")
}
fn is_wav(b: &[u8]) -> bool {
    b.len() >= 12 && &b[..4] == b"RIFF" && &b[8..12] == b"WAVE"
}
fn is_mp3(b: &[u8]) -> bool {
    // An ID3 tag, or an MPEG audio frame's sync word with a layer that is not the reserved 0
    // (which tells it from AAC's ADTS frames).
    b.starts_with(b"ID3") || (b.len() >= 2 && b[0] == 0xFF && b[1] & 0xE0 == 0xE0 && (b[1] >> 1) & 3 != 0)
}
fn is_ogg(b: &[u8]) -> bool {
    b.starts_with(b"OggS")
}
fn is_flac(b: &[u8]) -> bool {
    b.starts_with(b"fLaC")
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn le16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
fn le24(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at + 3)?;
    Some(u32::from(s[0]) | u32::from(s[1]) << 8 | u32::from(s[2]) << 16)
}

fn webp_size(b: &[u8]) -> Option<(u32, u32)> {
    match b.get(12..16)? {
        // Lossy: the frame header after the start code 9d 01 2a holds 14-bit sizes.
        b"VP8 " => Some((u32::from(le16(b, 26)? & 0x3FFF), u32::from(le16(b, 28)? & 0x3FFF))),
        // Lossless: after the signature byte 0x2f, 14 bits of width-1 and 14 of height-1.
        b"VP8L" => {
            let s = b.get(21..25)?;
            let width = 1 + (u32::from(s[0]) | (u32::from(s[1]) & 0x3F) << 8);
            let height = 1 + (u32::from(s[1]) >> 6 | u32::from(s[2]) << 2 | (u32::from(s[3]) & 0x0F) << 10);
            Some((width, height))
        }
        // Extended: the canvas's width-1 and height-1 as 24-bit little-endian numbers.
        b"VP8X" => Some((1 + le24(b, 24)?, 1 + le24(b, 27)?)),
        _ => None,
    }
}

/// The size in the first start-of-frame segment, walking the segments from the start.
fn jpeg_size(b: &[u8]) -> Option<(u32, u32)> {
    let mut at = 2;
    loop {
        // Fill bytes (0xFF) may stand before a marker.
        while *b.get(at)? == 0xFF && *b.get(at + 1)? == 0xFF {
            at += 1;
        }
        if *b.get(at)? != 0xFF {
            return None;
        }
        let marker = *b.get(at + 1)?;
        if (0xD0..=0xD9).contains(&marker) || marker == 0x01 {
            at += 2; // markers without a length
            continue;
        }
        let length = usize::from(be16(b, at + 2)?);
        let is_frame = (0xC0..=0xCF).contains(&marker) && !matches!(marker, 0xC4 | 0xC8 | 0xCC);
        if is_frame {
            return Some((u32::from(be16(b, at + 7)?), u32::from(be16(b, at + 5)?)));
        }
        at += 2 + length;
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A minimal PNG header (signature and IHDR) of the given size; enough for the sniffer.
    pub(crate) fn png(width: u32, height: u32) -> Vec<u8> {
        let mut b = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        b.extend_from_slice(&width.to_be_bytes());
        b.extend_from_slice(&height.to_be_bytes());
        b.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
        b
    }

    fn jpeg(width: u16, height: u16) -> Vec<u8> {
        let mut b = vec![0xFF, 0xD8, 0xFF, 0xE0, 0, 4, 0, 0, 0xFF, 0xC0, 0, 11, 8];
        b.extend_from_slice(&height.to_be_bytes());
        b.extend_from_slice(&width.to_be_bytes());
        b.extend_from_slice(&[1, 1, 0x11, 0]);
        b
    }

    #[test]
    fn signatures_name_their_types() {
        assert_eq!(media_type_of(&png(1, 1)), Some("image/png"));
        assert_eq!(media_type_of(&jpeg(1, 1)), Some("image/jpeg"));
        assert_eq!(media_type_of(b"GIF89a\x02\x00\x03\x00"), Some("image/gif"));
        assert_eq!(media_type_of(b"RIFF\0\0\0\0WEBPVP8X"), Some("image/webp"));
        assert_eq!(media_type_of(b"%PDF-1.7\n"), Some("application/pdf"));
        assert_eq!(media_type_of(b"RIFF\0\0\0\0WAVEfmt "), Some("audio/wav"));
        assert_eq!(media_type_of(b"ID3\x04"), Some("audio/mpeg"));
        assert_eq!(media_type_of(&[0xFF, 0xFB, 0x90]), Some("audio/mpeg"));
        assert_eq!(media_type_of(&[0xFF, 0xF1, 0x50]), None, "AAC's ADTS is not MP3");
        assert_eq!(media_type_of(b"hello"), None);
    }

    #[test]
    fn declared_types_are_checked_only_where_a_signature_is_known() {
        assert!(contradicts("image/png", &jpeg(1, 1)));
        assert!(contradicts("Image/PNG; charset=x", b"hello"));
        assert!(!contradicts("image/jpeg", &jpeg(1, 1)));
        assert!(!contradicts("image/jpg", &jpeg(1, 1)));
        assert!(!contradicts("text/plain", &png(1, 1)), "an unchecked type is taken as declared");
        assert!(is_checked("audio/x-wav") && !is_checked("image/heic"));
    }

    #[test]
    fn image_sizes_come_from_headers() {
        assert_eq!(image_size(&png(1280, 800)), Some((1280, 800)));
        assert_eq!(image_size(&jpeg(640, 480)), Some((640, 480)));
        assert_eq!(image_size(b"GIF89a\x02\x01\x03\x00"), Some((258, 3)));
        let mut vp8x = b"RIFF\0\0\0\0WEBPVP8X\0\0\0\0\0\0\0\0".to_vec();
        vp8x.extend_from_slice(&[0x7F, 0x07, 0x00, 0x37, 0x04, 0x00]);
        assert_eq!(image_size(&vp8x), Some((1920, 1080)));
        assert_eq!(image_size(&png(1, 1)[..20]), None, "a cut header has no size");
        assert_eq!(image_size(&[0xFF, 0xD8, 0xFF, 0xE0, 0xFF]), None);
    }

    #[test]
    fn hostile_sizes_are_refused() {
        assert!(check_image_size(100_000, 100_000).is_err());
        assert!(check_image_size(0, 10).is_err());
        assert!(check_image_size(16_384, 16_385).is_err());
        assert!(check_image_size(7680, 4320).is_ok());
        assert!(check_image_size(1920, 65_535).is_ok());
    }
}
