//! OpenAI prompt caching (`options.cacheControl` of `openai-chat` and `openai-responses`).
//!
//! Every model keeps one conversation's requests on the same cache when they carry the same
//! `prompt_cache_key`. GPT-5.6 and later match a cached prefix only exactly at a breakpoint:
//! OpenAI's implicit one at the newest eligible message (system, user or tool; never the
//! assistant's), and explicit ones, `prompt_cache_breakpoint: {"mode": "explicit"}` on a
//! content block. A request writes at most four (three explicit when the implicit one is on).
//!
//! Under caching the request carries the key (the thread's, a hash of its id, or the host's)
//! and, unless breakpoints are off, `prompt_cache_options`; with explicit breakpoints every
//! non-empty system, user and tool content becomes a list of text parts, so that a part keeps
//! its bytes whether or not it carries a breakpoint. Without it, not one byte differs.

use serde::{Serialize, Serializer};
use std::borrow::Cow;

/// Whether and how a request asks OpenAI to cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CacheControl {
    /// Nothing: today's request, byte for byte.
    #[default]
    None,
    On(Caching),
}

/// What a cached request carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Caching {
    /// `prompt_cache_key`; `None` until the thread's is resolved ([`CacheControl::for_thread`]).
    pub key: Option<CacheKey>,
    pub breakpoints: Breakpoints,
    /// `prompt_cache_options.ttl`.
    pub ttl: Option<Ttl>,
}

/// Which breakpoints a request writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Breakpoints {
    /// threadkeeper's explicit ones and OpenAI's implicit one (`mode: "implicit"`).
    #[default]
    Auto,
    /// threadkeeper's explicit ones only (`mode: "explicit"`).
    Explicit,
    /// OpenAI's implicit one only: no block is marked.
    Implicit,
    /// None: only the key is sent (models before GPT-5.6 take nothing else).
    None,
}

impl Breakpoints {
    /// Whether threadkeeper marks blocks (and sends content as parts).
    pub fn explicit(self) -> bool {
        matches!(self, Breakpoints::Auto | Breakpoints::Explicit)
    }
}

/// `prompt_cache_options.ttl`: the breakpoints' minimum lifetime (`30m` is the one value the
/// API takes for a request).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Ttl {
    #[serde(rename = "30m")]
    ThirtyMinutes,
}

/// The most bytes a `prompt_cache_key` may have (OpenAI refuses longer ones).
pub const MAX_KEY_BYTES: usize = 64;

/// A `prompt_cache_key`, held inline so that render options stay `Copy`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheKey {
    bytes: [u8; MAX_KEY_BYTES],
    len: u8,
}

impl CacheKey {
    /// The key `text`, when it is 1 to [`MAX_KEY_BYTES`] bytes.
    pub fn new(text: &str) -> Option<CacheKey> {
        if text.is_empty() || text.len() > MAX_KEY_BYTES {
            return None;
        }
        let mut bytes = [0; MAX_KEY_BYTES];
        bytes[..text.len()].copy_from_slice(text.as_bytes());
        Some(CacheKey { bytes, len: text.len() as u8 })
    }

    /// The key of the thread `thread_id`: `tk-` and 32 hex digits of two FNV-1a hashes of the
    /// id, so the same in every process and release, different between threads, and holding
    /// none of the id's text.
    pub fn of_thread(thread_id: &str) -> CacheKey {
        let hash = |seed: u64| {
            let mut hash = seed;
            for byte in b"threadkeeper/prompt_cache_key\0".iter().chain(thread_id.as_bytes()) {
                hash ^= u64::from(*byte);
                hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
            }
            hash
        };
        let text = format!("tk-{:016x}{:016x}", hash(0xcbf2_9ce4_8422_2325), hash(0x6c62_272e_07bb_0142));
        CacheKey::new(&text).expect("35 bytes")
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).expect("made from a str")
    }
}

impl std::fmt::Debug for CacheKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("CacheKey").field(&self.as_str()).finish()
    }
}

impl Serialize for CacheKey {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl CacheControl {
    /// With the thread's key where none was given.
    pub fn for_thread(self, thread_id: &str) -> CacheControl {
        match self {
            CacheControl::On(caching) if caching.key.is_none() => {
                CacheControl::On(Caching { key: Some(CacheKey::of_thread(thread_id)), ..caching })
            }
            other => other,
        }
    }

    /// The request-level fields, and whether blocks are marked.
    pub fn fields(self) -> Option<(RequestFields, bool)> {
        let CacheControl::On(Caching { key, breakpoints, ttl }) = self else { return None };
        let mode = match breakpoints {
            Breakpoints::Auto | Breakpoints::Implicit => Some("implicit"),
            Breakpoints::Explicit => Some("explicit"),
            Breakpoints::None => None,
        };
        let options = mode.map(|mode| CacheOptions { mode, ttl });
        Some((RequestFields { prompt_cache_key: key, prompt_cache_options: options }, breakpoints.explicit()))
    }
}

/// `prompt_cache_key` and `prompt_cache_options`, as a request carries them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct RequestFields {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_cache_key: Option<CacheKey>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_cache_options: Option<CacheOptions>,
}

/// `prompt_cache_options`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CacheOptions {
    pub mode: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl: Option<Ttl>,
}

/// `prompt_cache_breakpoint: {"mode": "explicit"}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Breakpoint {
    pub mode: &'static str,
}

pub const EXPLICIT: Breakpoint = Breakpoint { mode: "explicit" };

/// The most explicit breakpoints threadkeeper puts on one request (OpenAI writes three
/// besides its implicit one).
pub const MAX_EXPLICIT: usize = 3;

/// A message's content: a string, or parts: text parts (`type` is `"text"` in Chat
/// Completions, `"input_text"` in Responses) and media parts in the provider's own form.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Content<'a> {
    Text(Cow<'a, str>),
    Parts(Vec<Part<'a>>),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Part<'a> {
    Text(TextPart<'a>),
    /// An image, file or audio part as the provider takes it. Breakpoints go on text parts
    /// only: they are what OpenAI documents them on.
    Media(serde_json::Value),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TextPart<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub text: Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_cache_breakpoint: Option<Breakpoint>,
}

impl<'a> Part<'a> {
    pub fn text(kind: &'static str, text: Cow<'a, str>) -> Part<'a> {
        Part::Text(TextPart { kind, text, prompt_cache_breakpoint: None })
    }
}

impl<'a> Content<'a> {
    /// Non-empty text as one part of type `kind`; empty content stays a string (it never
    /// carries a breakpoint, and an empty part says nothing).
    pub fn into_parts(self, kind: &'static str) -> Content<'a> {
        match self {
            Content::Text(text) if !text.is_empty() => Content::Parts(vec![Part::text(kind, text)]),
            other => other,
        }
    }

    /// Marks the last text part; false when there is none to mark.
    pub fn mark_last(&mut self) -> bool {
        match self {
            Content::Parts(parts) => parts
                .iter_mut()
                .rev()
                .find_map(|part| match part {
                    Part::Text(text) => Some(text),
                    Part::Media(_) => None,
                })
                .map(|part| part.prompt_cache_breakpoint = Some(EXPLICIT))
                .is_some(),
            Content::Text(_) => false,
        }
    }

    pub fn text(text: Cow<'a, str>) -> Content<'a> {
        Content::Text(text)
    }
}

/// The document's blocks as parts of type `kind`, its breakpoints marked.
pub fn xml_parts<'a>(xml: &super::xml_blocks::XmlBlocks<'a>, kind: &'static str) -> Content<'a> {
    let mut parts: Vec<TextPart<'a>> = xml
        .blocks
        .iter()
        .map(|text| TextPart { kind, text: Cow::Borrowed(text), prompt_cache_breakpoint: None })
        .collect();
    for &at in &xml.breakpoints {
        parts[at].prompt_cache_breakpoint = Some(EXPLICIT);
    }
    Content::Parts(parts.into_iter().map(Part::Text).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_key_is_stable_distinct_and_holds_no_thread_text() {
        let key = CacheKey::of_thread("run-42");
        assert_eq!(key, CacheKey::of_thread("run-42"));
        assert_ne!(key, CacheKey::of_thread("run-43"));
        assert!(!key.as_str().contains("run") && key.as_str().len() == 35, "{key:?}");
        // Fixed for good: hosts may keep keys across releases.
        assert_eq!(CacheKey::of_thread("run-42").as_str(), "tk-76131c1eea4187ffb2967334de74945c");
        assert_eq!(CacheKey::of_thread("").as_str().len(), 35);
    }

    #[test]
    fn keys_are_one_to_sixty_four_bytes() {
        assert!(CacheKey::new("").is_none());
        assert!(CacheKey::new(&"k".repeat(65)).is_none());
        assert_eq!(CacheKey::new(&"é".repeat(32)).unwrap().as_str(), "é".repeat(32));
    }
}
