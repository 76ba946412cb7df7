//! JavaScript's idea of whitespace (`\s`, `String.prototype.trim`), which upstream's
//! detection and parsing rely on. It differs from Rust's `char::is_whitespace` in U+FEFF (JS
//! only) and U+0085 (Rust only).

pub(super) fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{9}'..='\u{D}'
            | ' '
            | '\u{A0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200A}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202F}'
            | '\u{205F}'
            | '\u{3000}'
            | '\u{FEFF}'
    )
}

pub(super) fn trim(text: &str) -> &str {
    text.trim_matches(is_js_whitespace)
}

pub(super) fn trim_start(text: &str) -> &str {
    text.trim_start_matches(is_js_whitespace)
}

pub(super) fn trim_end(text: &str) -> &str {
    text.trim_end_matches(is_js_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_javascript_trim() {
        assert_eq!(trim("\u{FEFF}\u{A0}\t x \u{2028}\u{3000}"), "x");
        assert_eq!(trim("\u{85}x"), "\u{85}x");
        assert_eq!(trim_start("  a "), "a ");
        assert_eq!(trim_end("  a "), "  a");
    }
}
