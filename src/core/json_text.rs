//! JSON text from JavaScript hosts, made acceptable to a strict parser.
//!
//! A JavaScript string is UTF-16 and may hold a lone surrogate (a host that cuts an emoji in
//! half, `"😀".slice(0, 1)`); `JSON.stringify` writes it as the escape `"\ud83d"`. serde_json,
//! following RFC 8259's advice, refuses such escapes, which would make a whole request fail.
//! [`replace_lone_surrogates`] rewrites every lone surrogate escape to `\ufffd` — U+FFFD, the
//! character Node writes when it encodes such a string as UTF-8 — before parsing. Valid
//! surrogate pairs (`\ud83d\ude00`) and everything else are left exactly as they are.

use std::borrow::Cow;

/// `text` with each `\u` escape of a lone UTF-16 surrogate replaced by `\ufffd`: a high
/// surrogate (`\uD800`–`\uDBFF`) not followed by a low one's escape, or a low surrogate
/// (`\uDC00`–`\uDFFF`) not preceded by a high one. Borrowed (no copy) when there is none,
/// which one fast search decides for almost every input.
///
/// Escapes are scanned as JSON reads them, each backslash starting one escape, so `\\ud83d`
/// (an escaped backslash followed by the text `ud83d`) is not an escape of a surrogate. The
/// replacement has the same length as what it replaces, and text that is not valid JSON stays
/// as invalid as it was.
pub fn replace_lone_surrogates(text: &str) -> Cow<'_, str> {
    // Every surrogate escape starts with `\ud` or `\uD`; most texts have no escape at all.
    if memchr::memchr(b'\\', text.as_bytes()).is_none() || (!text.contains("\\ud") && !text.contains("\\uD")) {
        return Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut at = 0;
    while let Some(offset) = bytes[at..].iter().position(|&b| b == b'\\') {
        let start = at + offset;
        match escape_at(bytes, start) {
            Escape::LoneSurrogate => {
                let out = out.get_or_insert_with(|| String::with_capacity(text.len()));
                // `start` and `start + 6` are ASCII positions, so char boundaries.
                out.push_str(&text[copied..start]);
                out.push_str("\\ufffd");
                copied = start + ESCAPE_LEN;
                at = copied;
            }
            Escape::Other { len } => at = start + len,
        }
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut out) => {
            out.push_str(&text[copied..]);
            Cow::Owned(out)
        }
    }
}

/// Length of one `\uXXXX` escape.
const ESCAPE_LEN: usize = 6;

enum Escape {
    LoneSurrogate,
    /// Anything else, `len` bytes long (a surrogate pair is one 12-byte escape here).
    Other {
        len: usize,
    },
}

/// The escape starting with the backslash at `start`.
fn escape_at(bytes: &[u8], start: usize) -> Escape {
    let Some(unit) = code_unit_at(bytes, start) else {
        // `\"`, `\\`, `\n`, ...: the backslash and the character it escapes (an ASCII byte in
        // JSON; whatever byte it is, the search for the next backslash skips it safely).
        return Escape::Other { len: 2.min(bytes.len() - start) };
    };
    match unit {
        0xD800..=0xDBFF => match code_unit_at(bytes, start + ESCAPE_LEN) {
            Some(0xDC00..=0xDFFF) => Escape::Other { len: 2 * ESCAPE_LEN },
            _ => Escape::LoneSurrogate,
        },
        0xDC00..=0xDFFF => Escape::LoneSurrogate,
        _ => Escape::Other { len: ESCAPE_LEN },
    }
}

/// The UTF-16 code unit of a `\uXXXX` escape at `start`, if there is one.
fn code_unit_at(bytes: &[u8], start: usize) -> Option<u16> {
    let escape = bytes.get(start..start + ESCAPE_LEN)?;
    if escape[0] != b'\\' || escape[1] != b'u' {
        return None;
    }
    let hex = std::str::from_utf8(&escape[2..]).ok()?;
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u16::from_str_radix(hex, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fixed(text: &str) -> String {
        replace_lone_surrogates(text).into_owned()
    }

    #[test]
    fn lone_surrogates_become_the_replacement_character() {
        assert_eq!(fixed(r#""\ud83d""#), r#""\ufffd""#);
        assert_eq!(fixed(r#""\udc00""#), r#""\ufffd""#);
        assert_eq!(fixed(r#""a\uD83Db""#), r#""a\ufffdb""#);
        // A high surrogate followed by an escape that is not a low one; then a real pair.
        assert_eq!(fixed(r#""\ud83d\u0041\ud83d\ude00""#), r#""\ufffd\u0041\ud83d\ude00""#);
        // Two highs: the first is lone, the second pairs with the low after it.
        assert_eq!(fixed(r#""\ud83d\ud83d\ude00""#), r#""\ufffd\ud83d\ude00""#);
        // Low then high: both lone.
        assert_eq!(fixed(r#""\ude00\ud83d""#), r#""\ufffd\ufffd""#);
        // At the very end of the text, cut short.
        assert_eq!(fixed(r#""\ud83d"#), r#""\ufffd"#);
        assert_eq!(fixed(r#"\ud8"#), r#"\ud8"#);
        let value: serde_json::Value = serde_json::from_str(&fixed(r#"{"t":"x\ud83d"}"#)).unwrap();
        assert_eq!(value["t"], "x\u{FFFD}");
    }

    #[test]
    fn everything_else_is_borrowed_untouched() {
        for text in [
            r#""\ud83d\ude00""#,
            r#""\\ud83d""#,
            r#""\\\\ud83d""#,
            r#""\"\ud83d\udE00\\""#,
            r#"{"a":"\u00e9\n\t\\u","b":[1,2]}"#,
            "\"😀 \\\\uDFFF\"",
            "",
            "\\",
        ] {
            assert!(matches!(replace_lone_surrogates(text), Cow::Borrowed(t) if t == text), "{text}");
        }
        // An escaped backslash before a real lone escape: only the escape is replaced.
        assert_eq!(fixed(r#""\\\ud83d""#), r#""\\\ufffd""#);
    }

    /// `units` as a JSON string literal with every non-ASCII unit written as a `\u` escape, the
    /// way a JavaScript host's `JSON.stringify` escapes a lone surrogate.
    fn escaped_literal(units: &[u16]) -> String {
        let mut out = String::from("\"");
        for &unit in units {
            match unit {
                0x22 => out.push_str("\\\""),
                0x5C => out.push_str("\\\\"),
                0x20..=0x7E => out.push(char::from(unit as u8)),
                _ => out.push_str(&format!("\\u{unit:04x}")),
            }
        }
        out.push('"');
        out
    }

    proptest! {
        #[test]
        fn any_string_cut_anywhere_parses_as_node_decodes_it(
            text in "(\\PC|[\\\\\"😀é]|\\\\ud83d){0,12}",
            cut in any::<prop::sample::Index>(),
            start in any::<prop::sample::Index>(),
        ) {
            let units: Vec<u16> = text.encode_utf16().collect();
            let end = cut.index(units.len() + 1);
            let piece = &units[start.index(end + 1)..end];
            let json = format!("{{\"s\":{}}}", escaped_literal(piece));
            let value: serde_json::Value = serde_json::from_str(&replace_lone_surrogates(&json)).unwrap();
            prop_assert_eq!(value["s"].as_str().unwrap(), String::from_utf16_lossy(piece));
        }

        #[test]
        fn valid_json_is_returned_byte_identical(text in "(\\PC|[\\\\\"😀é]|\\\\ud83d|\\\\uDC00){0,16}") {
            let raw = serde_json::to_string(&serde_json::json!({"s": text, "n": [1.5, null]})).unwrap();
            prop_assert!(matches!(replace_lone_surrogates(&raw), Cow::Borrowed(t) if t == raw));
            let units: Vec<u16> = text.encode_utf16().collect();
            let escaped = escaped_literal(&units);
            prop_assert!(matches!(replace_lone_surrogates(&escaped), Cow::Borrowed(t) if t == escaped));
        }
    }
}
