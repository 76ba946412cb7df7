//! What a media part costs a model, by its provider's published rule, from the width and height
//! a part stores (`options.mediaTokens`). Counts of renders that carry media use these instead
//! of the placeholder text a render without bytes shows.
//!
//! | rule | images | PDFs | source |
//! |---|---|---|---|
//! | `anthropic` | fit in 1568 px long edge and ~1.15 MP, then `w·h/750` | 2,250 a page | <https://docs.anthropic.com/en/docs/build-with-claude/vision>, <https://docs.anthropic.com/en/docs/build-with-claude/pdf-support> |
//! | `openai-tiles` | `low`: 85; else fit in 2048², shortest side to 768, 170 per 512 px tile + 85 | 2,250 a page | <https://platform.openai.com/docs/guides/images-vision#calculating-costs> |
//! | `openai-patches` (`-mini` ×1.62, `-nano` ×2.46) | 32 px patches, at most 1536 (scaled down to fit) | 2,250 a page | same |
//! | `gemini` | 258 when both sides ≤ 384, else 258 per 768 px tile | 258 a page | <https://ai.google.dev/gemini-api/docs/tokens> |
//! | `text` | the placeholder text, as the tokenizer counts it | same | — |
//!
//! Unknown dimensions (a URL part, a blob whose header gave none) count as the rule's largest
//! image. A PDF's pages are not stored: they are estimated from its size, one page per
//! [`PDF_BYTES_PER_PAGE`] (a guess, said as one in the protocol). Anthropic documents
//! 1,500–3,000 tokens a page of text; [`PDF_TOKENS_PER_PAGE`] is the middle. OpenAI publishes no
//! per-page rule and reads a PDF as Anthropic does (text and an image of each page), so its rules
//! use the same constant. Audio and other files have no rule by size: they count as their
//! placeholder text.

use super::Tokenizer;
use crate::event::AgentEvent;
use crate::media::parts::parts_of;
use crate::media::parts::Media;
use crate::media::{MediaKind, Part};
use crate::providers::keep_images::KeepImages;

/// How media parts are counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Deserialize)]
pub enum MediaTokenRule {
    #[serde(rename = "anthropic")]
    Anthropic,
    #[serde(rename = "openai-tiles")]
    OpenAiTiles,
    /// 32 px patches, times the model family's multiplier in thousandths.
    #[serde(rename = "openai-patches")]
    OpenAiPatches,
    #[serde(rename = "openai-patches-mini")]
    OpenAiPatchesMini,
    #[serde(rename = "openai-patches-nano")]
    OpenAiPatchesNano,
    #[serde(rename = "gemini")]
    Gemini,
    /// The placeholder text: what a render without bytes shows.
    #[serde(rename = "text")]
    Text,
}

/// Tokens Anthropic documents per PDF page: 1,500 to 3,000; the middle.
pub const PDF_TOKENS_PER_PAGE: u64 = 2_250;
/// Gemini's tokens per PDF page (each page is an image).
pub const GEMINI_TOKENS_PER_PAGE: u64 = 258;
/// A PDF's pages when only its size is known: one per this many bytes (an estimate).
pub const PDF_BYTES_PER_PAGE: u64 = 50_000;

impl MediaTokenRule {
    /// The rule a format's counts use unless `options.mediaTokens` names one: its provider's;
    /// `messages`, `ai-sdk` and `pydantic-ai` go to many providers and take Anthropic's, the
    /// dearest for most images.
    pub fn default_for(format: &str) -> MediaTokenRule {
        match format {
            "openai-chat" | "openai-responses" => MediaTokenRule::OpenAiTiles,
            "xml" | "text" => MediaTokenRule::Text,
            _ => MediaTokenRule::Anthropic,
        }
    }

    /// The tokens of `part` by this rule; `None` when it counts as its placeholder text.
    pub fn tokens(self, part: &Media<'_>) -> Option<u64> {
        if self == MediaTokenRule::Text {
            return None;
        }
        match part.kind {
            MediaKind::Image => {
                let size = part.dimensions().filter(|&(w, h)| w > 0 && h > 0);
                Some(self.image_tokens(size, part.detail() == Some("low")))
            }
            MediaKind::File if crate::providers::media_parts::is_pdf(part) => {
                let pages = part.size().map_or(1, |size| size.div_ceil(PDF_BYTES_PER_PAGE).max(1));
                let per_page =
                    if self == MediaTokenRule::Gemini { GEMINI_TOKENS_PER_PAGE } else { PDF_TOKENS_PER_PAGE };
                Some(pages * per_page)
            }
            _ => None,
        }
    }

    /// An image's tokens; `None` dimensions count as the rule's largest image.
    pub fn image_tokens(self, size: Option<(u64, u64)>, low: bool) -> u64 {
        match self {
            MediaTokenRule::Anthropic => anthropic(size.unwrap_or((1568, 1568))),
            MediaTokenRule::OpenAiTiles if low => 85,
            MediaTokenRule::OpenAiTiles => openai_tiles(size.unwrap_or((768, 2048))),
            MediaTokenRule::OpenAiPatches => openai_patches(size, 1000),
            MediaTokenRule::OpenAiPatchesMini => openai_patches(size, 1620),
            MediaTokenRule::OpenAiPatchesNano => openai_patches(size, 2460),
            MediaTokenRule::Gemini => gemini(size.unwrap_or((3072, 3072))),
            MediaTokenRule::Text => 0,
        }
    }
}

/// The count of a render carrying the media of `events`, from `count`, the tokens of the same
/// render without bytes. Standard mode: each media part's placeholder text out, its rule's
/// tokens in. XML mode (`xml_mode`): the placeholders stay in the document and each blob's
/// media follow it once, so only the rule's tokens are added. Under `keep`
/// (`options.media.keepImages`) the images before the frontier go as their placeholders, as
/// the render writes them, and count as that text.
pub fn with_media(
    count: u64,
    events: &[AgentEvent],
    xml_mode: bool,
    rule: MediaTokenRule,
    tokenizer: Tokenizer,
    keep: Option<KeepImages>,
) -> u64 {
    let mut seen = std::collections::HashSet::new();
    let mut carried = Vec::new();
    for event in events {
        for part in Part::all(parts_of(event)) {
            let Part::Media(media) = part else { continue };
            if xml_mode && !media.blob().is_some_and(|id| seen.insert(id.to_owned())) {
                continue;
            }
            carried.push(media);
        }
    }
    let images = carried.iter().filter(|media| media.kind == MediaKind::Image).count();
    let mut hidden = keep.map_or(0, |keep| keep.frontier(images));
    let (mut added, mut removed) = (0u64, 0u64);
    for media in carried {
        if hidden > 0 && media.kind == MediaKind::Image {
            hidden -= 1;
            continue;
        }
        let Some(tokens) = rule.tokens(&media) else { continue };
        added += tokens;
        if !xml_mode {
            removed += tokenizer.count(&media.placeholder());
        }
    }
    count.saturating_sub(removed) + added
}

/// Scales `(w, h)` by `factor` when it is below one.
fn scaled((w, h): (u64, u64), factor: f64) -> (f64, f64) {
    let factor = factor.min(1.0);
    (w as f64 * factor, h as f64 * factor)
}

/// Anthropic: fit in 1568 px on the long edge and in about 1.15 megapixels (1,600 tokens at
/// 750 pixels a token), then `w·h/750`.
fn anthropic(size: (u64, u64)) -> u64 {
    let (w, h) = (size.0 as f64, size.1 as f64);
    let fit_edge = 1568.0 / w.max(h);
    let fit_area = (1_200_000.0 / (w * h)).sqrt();
    let (w, h) = scaled(size, fit_edge.min(fit_area));
    ((w.floor() * h.floor()) / 750.0).ceil() as u64
}

/// OpenAI's tiles: fit in 2048×2048, shortest side to 768, then 170 a 512 px tile, plus 85.
fn openai_tiles(size: (u64, u64)) -> u64 {
    let (w, h) = scaled(size, 2048.0 / size.0.max(size.1) as f64);
    let shortest = w.min(h);
    let (w, h) = if shortest > 768.0 { (w * 768.0 / shortest, h * 768.0 / shortest) } else { (w, h) };
    let tiles = (w / 512.0).ceil() as u64 * (h / 512.0).ceil() as u64;
    170 * tiles + 85
}

/// OpenAI's patches: 32 px patches covering the image, scaled down to at most 1536 of them,
/// times the model family's multiplier (thousandths).
fn openai_patches(size: Option<(u64, u64)>, multiplier: u64) -> u64 {
    let patches = match size {
        None => 1536,
        Some((w, h)) => {
            let (w, h) = (w as f64, h as f64);
            let count = |w: f64, h: f64| (w / 32.0).ceil() * (h / 32.0).ceil();
            if count(w, h) <= 1536.0 {
                count(w, h) as u64
            } else {
                // OpenAI's published steps: shrink to the area of 1536 patches, then so the
                // width fills whole patches.
                let shrink = (1536.0 * 32.0 * 32.0 / (w * h)).sqrt();
                let (w1, h1) = (w * shrink, h * shrink);
                let fit = (w1 / 32.0).floor() / (w1 / 32.0);
                (count(w1 * fit, h1 * fit) as u64).min(1536)
            }
        }
    };
    (patches * multiplier).div_ceil(1000)
}

/// Gemini: 258 when both sides are at most 384 px, else 258 per 768×768 tile.
fn gemini((w, h): (u64, u64)) -> u64 {
    if w <= 384 && h <= 384 {
        return 258;
    }
    258 * w.div_ceil(768) * h.div_ceil(768)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn openai_tiles_match_the_documented_examples() {
        // platform.openai.com/docs/guides/images-vision#calculating-costs
        assert_eq!(openai_tiles((1024, 1024)), 765);
        assert_eq!(openai_tiles((2048, 4096)), 1105);
        assert_eq!(MediaTokenRule::OpenAiTiles.image_tokens(Some((4096, 8192)), true), 85);
    }

    #[test]
    fn openai_patches_match_the_documented_examples() {
        assert_eq!(openai_patches(Some((1024, 1024)), 1000), 1024);
        assert_eq!(openai_patches(Some((1800, 2400)), 1000), 1452);
        assert_eq!(openai_patches(Some((1024, 1024)), 1620), 1659);
    }

    #[test]
    fn anthropic_is_area_over_750_after_fitting() {
        // docs.anthropic.com/en/docs/build-with-claude/vision: 1000×1000 ≈ 1,334 tokens;
        // larger images cost about 1,600 at most.
        assert_eq!(anthropic((1000, 1000)), 1334);
        assert_eq!(anthropic((200, 200)), 54);
        assert!((1500..=1640).contains(&anthropic((4000, 3000))), "{}", anthropic((4000, 3000)));
        assert!(anthropic((1568, 400)) <= 837);
    }

    #[test]
    fn gemini_counts_small_images_once_and_tiles_the_rest() {
        assert_eq!(gemini((384, 384)), 258);
        assert_eq!(gemini((1024, 1024)), 258 * 4);
    }

    #[test]
    fn parts_count_by_kind_and_unknowns_by_the_rules_cap() {
        let image = json!({"type": "image", "url": "https://x.test/a.png", "width": 1024, "height": 1024});
        let unknown = json!({"type": "image", "url": "https://x.test/b.png"});
        let pdf =
            json!({"type": "file", "url": "https://x.test/a.pdf", "mediaType": "application/pdf", "size": 120_000});
        let audio = json!({"type": "audio", "url": "https://x.test/a.wav", "mediaType": "audio/wav"});
        fn media(v: &serde_json::Value) -> Media<'_> {
            match crate::media::Part::of(v) {
                crate::media::Part::Media(media) => media,
                _ => unreachable!(),
            }
        }
        let rule = MediaTokenRule::OpenAiTiles;
        assert_eq!(rule.tokens(&media(&image)), Some(765));
        assert_eq!(rule.tokens(&media(&unknown)), Some(170 * 8 + 85));
        assert_eq!(rule.tokens(&media(&pdf)), Some(3 * PDF_TOKENS_PER_PAGE));
        assert_eq!(MediaTokenRule::Gemini.tokens(&media(&pdf)), Some(3 * 258));
        assert_eq!(rule.tokens(&media(&audio)), None);
        assert_eq!(MediaTokenRule::Text.tokens(&media(&image)), None);
    }
}
