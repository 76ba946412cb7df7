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
    let bytes = text.as_bytes();
    let quotes = mode == EscapeMode::Full;
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let (replacement, width): (&str, usize) = match b {
            b'&' => ("&amp;", 1),
            b'<' => ("&lt;", 1),
            b'>' => ("&gt;", 1),
            b'"' if quotes => ("&quot;", 1),
            b'\'' if quotes => ("&apos;", 1),
            b'\t' | b'\n' | b'\r' => {
                i += 1;
                continue;
            }
            0x00..=0x1f => (REPLACEMENT, 1),
            // U+FFFE and U+FFFF are EF BF BE / EF BF BF in UTF-8.
            0xEF if bytes.get(i + 1) == Some(&0xBF) && matches!(bytes.get(i + 2), Some(0xBE | 0xBF)) => {
                (REPLACEMENT, 3)
            }
            _ => {
                i += 1;
                continue;
            }
        };
        out.push_str(&text[start..i]);
        out.push_str(replacement);
        i += width;
        start = i;
    }
    out.push_str(&text[start..]);
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
}
