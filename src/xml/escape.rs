//! XML escaping for thread documents.
//!
//! `full` is the seed's `escapeXml`: `& < > " '`. `minimal` escapes only `& < >` and is used
//! for bodies when the host asks for it (bare quotes in JSON bodies save tokens). Both replace
//! characters XML 1.0 forbids with U+FFFD, so every document parses.

use serde::{Deserialize, Serialize};

/// How much to escape in element bodies. Attribute values are always escaped fully.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EscapeMode {
    /// `& < > " '` (the seed's rule).
    #[default]
    Full,
    /// `& < >` only.
    Minimal,
}

const REPLACEMENT: &str = "\u{FFFD}";

/// The seed's `escapeXml`, plus U+FFFD for characters XML 1.0 forbids.
pub fn escape_xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    escape_into(&mut out, text, EscapeMode::Full);
    out
}

/// Appends `text` to `out`, escaped per `mode`.
pub fn escape_into(out: &mut String, text: &str, mode: EscapeMode) {
    match mode {
        EscapeMode::Full => escape_blocks::<true>(out, text),
        EscapeMode::Minimal => escape_blocks::<false>(out, text),
    }
}

// Escaping is most of the work of rendering a thread, so it is written for speed: clean 8-byte
// words are found with a few word operations and copied whole; other bytes go through a table
// that gives each byte its output (itself, or an entity, or U+FFFD) without a branch, because
// in code and JSON a special character every few bytes would make a branch mispredict often.

/// Most output bytes one input byte can produce (`"` → `&quot;`).
const MAX_EXPANSION: usize = 6;
/// Input is escaped in blocks so that the worst-case reservation stays small for huge bodies.
const BLOCK: usize = 4096;

/// What one input byte becomes: the first `len` bytes of `bytes`.
#[derive(Clone, Copy)]
struct Output {
    bytes: [u8; 8],
    len: usize,
}

const fn output(text: &str) -> Output {
    let mut bytes = [0u8; 8];
    let mut i = 0;
    while i < text.len() {
        bytes[i] = text.as_bytes()[i];
        i += 1;
    }
    Output { bytes, len: text.len() }
}

const fn outputs(quotes: bool) -> [Output; 256] {
    let mut table = [Output { bytes: [0; 8], len: 1 }; 256];
    let mut b = 0;
    while b < 256 {
        table[b].bytes[0] = b as u8;
        if b < 0x20 && !matches!(b as u8, b'\t' | b'\n' | b'\r') {
            table[b] = output(REPLACEMENT);
        }
        b += 1;
    }
    table[b'&' as usize] = output("&amp;");
    table[b'<' as usize] = output("&lt;");
    table[b'>' as usize] = output("&gt;");
    if quotes {
        table[b'"' as usize] = output("&quot;");
        table[b'\'' as usize] = output("&apos;");
    }
    table
}

static FULL_OUTPUTS: [Output; 256] = outputs(true);
static MINIMAL_OUTPUTS: [Output; 256] = outputs(false);

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// True if some byte of `word` is below `n` (n ≤ 0x80).
const fn has_byte_below(word: u64, n: u8) -> bool {
    word.wrapping_sub(ONES * n as u64) & !word & HIGHS != 0
}

const fn has_byte(word: u64, b: u8) -> bool {
    has_byte_below(word ^ (ONES * b as u64), 1)
}

/// True if some byte of `word` may need more than a copy: a special character, a control
/// character (tab, newline and carriage return included), or 0xEF, which starts U+FFFE/U+FFFF.
const fn needs_attention<const QUOTES: bool>(word: u64) -> bool {
    has_byte_below(word, 0x20)
        || has_byte(word, b'&')
        || has_byte(word, b'<')
        || has_byte(word, b'>')
        || has_byte(word, 0xEF)
        || (QUOTES && (has_byte(word, b'"') || has_byte(word, b'\'')))
}

fn escape_blocks<const QUOTES: bool>(out: &mut String, text: &str) {
    let mut start = 0;
    while start < text.len() {
        // Blocks end on character boundaries, so U+FFFE and U+FFFF are never split.
        let mut end = (start + BLOCK).min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        escape_block::<QUOTES>(out, &text.as_bytes()[start..end]);
        start = end;
    }
}

/// Appends the escaped form of `input`, a run of whole UTF-8 characters.
fn escape_block<const QUOTES: bool>(out: &mut String, input: &[u8]) {
    let table = if QUOTES { &FULL_OUTPUTS } else { &MINIMAL_OUTPUTS };
    let n = input.len();
    // SAFETY: the bytes appended are `input` with ASCII specials replaced by ASCII entities, C0
    // controls by U+FFFD, and the 3-byte encodings of U+FFFE/U+FFFF by that of U+FFFD; all
    // other bytes are copied in order. `input` is whole characters of a `str`, so the result
    // stays valid UTF-8.
    let buf = unsafe { out.as_mut_vec() };
    buf.reserve(n * MAX_EXPANSION + 8);
    let base = buf.len();
    let dst = buf.as_mut_ptr();
    let mut len = base;
    let mut i = 0;
    // Bounds: each step writes 8 bytes at `len` and advances `len` by at most MAX_EXPANSION
    // per input byte consumed, so every write ends before base + n * MAX_EXPANSION + 8, which
    // is within the capacity reserved above.
    let write = |len: &mut usize, bytes: [u8; 8], advance: usize| {
        // SAFETY: in bounds as shown above; unaligned writes of plain bytes.
        unsafe { dst.add(*len).cast::<[u8; 8]>().write_unaligned(bytes) };
        *len += advance;
    };
    while i < n {
        let word_end = i + 8;
        if word_end <= n {
            let word: [u8; 8] = input[i..word_end].try_into().expect("8 bytes");
            if !needs_attention::<QUOTES>(u64::from_le_bytes(word)) {
                write(&mut len, word, 8);
                i = word_end;
                continue;
            }
        }
        while i < word_end.min(n) {
            let b = input[i];
            if b == 0xEF && input.get(i + 1) == Some(&0xBF) && matches!(input.get(i + 2), Some(0xBE | 0xBF)) {
                write(&mut len, output(REPLACEMENT).bytes, 3);
                i += 3;
            } else {
                let out = table[b as usize];
                write(&mut len, out.bytes, out.len);
                i += 1;
            }
        }
    }
    // SAFETY: bytes base..len were written above and are valid UTF-8 (see the first comment).
    unsafe { buf.set_len(len) };
}

/// True for characters that XML 1.0 does not allow in a document.
pub fn is_forbidden_char(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{8}' | '\u{B}' | '\u{C}' | '\u{E}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_the_five_specials() {
        assert_eq!(escape_xml(r#"a & b < c > d " e ' f"#), "a &amp; b &lt; c &gt; d &quot; e &apos; f");
        assert_eq!(escape_xml("&amp;"), "&amp;amp;");
    }

    #[test]
    fn minimal_keeps_quotes() {
        let mut out = String::new();
        escape_into(&mut out, r#"{"a":'b'} & <x>"#, EscapeMode::Minimal);
        assert_eq!(out, r#"{"a":'b'} &amp; &lt;x&gt;"#);
    }

    #[test]
    fn forbidden_characters_become_replacement() {
        let text = "a\u{0}b\u{1b}[31mc\u{B}\u{C}\u{FFFE}\u{FFFF}\t\n\r\u{FFFD}\u{FFFC}😀";
        assert_eq!(escape_xml(text), "a\u{FFFD}b\u{FFFD}[31mc\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\t\n\r\u{FFFD}\u{FFFC}😀");
        for c in ['\u{0}', '\u{8}', '\u{B}', '\u{C}', '\u{E}', '\u{1F}', '\u{FFFE}', '\u{FFFF}'] {
            assert!(is_forbidden_char(c));
        }
        for c in ['\t', '\n', '\r', ' ', '\u{FFFD}', '\u{7F}'] {
            assert!(!is_forbidden_char(c));
        }
    }

    /// Texts longer than a block, with every character class at every position around the
    /// block boundaries and word edges.
    #[test]
    fn block_and_word_boundaries_do_not_change_the_result() {
        for special in ["\u{FFFE}", "\u{FFFF}", "\u{EFFF}", "😀", "&", "\"", "\u{1}", "\r\n", "é"] {
            for at in (BLOCK - 12..BLOCK + 12).chain(0..12) {
                let text = format!("{}{special}{}", "a".repeat(at), "b'".repeat(5));
                for mode in [EscapeMode::Full, EscapeMode::Minimal] {
                    let mut out = String::new();
                    escape_into(&mut out, &text, mode);
                    assert_eq!(out, reference(&text, mode), "{special:?} at {at}");
                }
            }
        }
        let long = "x<y & \"z\" \u{FFFE}\u{1b}[0m é😀 ".repeat(3 * BLOCK);
        let mut out = String::from("kept ");
        escape_into(&mut out, &long, EscapeMode::Full);
        assert_eq!(out, format!("kept {}", reference(&long, EscapeMode::Full)));
    }

    fn reference(text: &str, mode: EscapeMode) -> String {
        text.chars()
            .map(|c| match c {
                '&' => "&amp;".to_owned(),
                '<' => "&lt;".to_owned(),
                '>' => "&gt;".to_owned(),
                '"' if mode == EscapeMode::Full => "&quot;".to_owned(),
                '\'' if mode == EscapeMode::Full => "&apos;".to_owned(),
                c if is_forbidden_char(c) => "\u{FFFD}".to_owned(),
                c => c.to_string(),
            })
            .collect()
    }

    /// The table-driven loop against the definition, character by character, over every
    /// character class and every 0xEF-led character near the ends of the text.
    #[test]
    fn matches_the_character_by_character_definition() {
        let mut samples: Vec<char> = (0u32..0x80).filter_map(char::from_u32).collect();
        samples.extend((0xF000u32..=0xFFFF).step_by(97).filter_map(char::from_u32));
        samples.extend(['\u{FFFD}', '\u{FFFE}', '\u{FFFF}', '\u{FEFF}', 'é', '中', '😀']);
        for mode in [EscapeMode::Full, EscapeMode::Minimal] {
            for &a in &samples {
                for b in ['x', '\u{FFFE}', '&', '\u{EFFF}'] {
                    for text in [format!("{a}"), format!("{a}{b}"), format!("{b}{a}z"), format!("ab{a}{a}")] {
                        let mut out = String::new();
                        escape_into(&mut out, &text, mode);
                        assert_eq!(out, reference(&text, mode), "{text:?} {mode:?}");
                    }
                }
            }
        }
    }
}
