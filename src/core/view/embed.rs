//! Putting untrusted text into the page: JSON inside `<script type="application/json">`, and
//! plain text inside elements. Nothing from a thread becomes markup or script.

/// JSON text made safe to sit between `<script type="application/json">` and `</script>`:
/// `<`, `>` and `&` only occur inside JSON strings, where `\u003c` etc. mean the same, so no
/// `</script>` or `<!--` can appear. U+2028/U+2029 are escaped too for older parsers.
pub fn json_for_script(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 32);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Text escaped for an element's content or a quoted attribute value.
pub fn html_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn script_breakouts_are_escaped() {
        let json = serde_json::to_string("</script><!--<script>").unwrap();
        let safe = json_for_script(&json);
        assert_eq!(safe, r#""\u003c/script\u003e\u003c!--\u003cscript\u003e""#);
    }

    proptest! {
        /// Whatever the string, the escaped JSON has no `<` and reads back to the same value.
        #[test]
        fn escaped_json_reads_back_the_same(text in any::<String>()) {
            let json = serde_json::to_string(&text).unwrap();
            let safe = json_for_script(&json);
            prop_assert!(!safe.contains('<'));
            prop_assert_eq!(serde_json::from_str::<String>(&safe).unwrap(), text);
        }

        #[test]
        fn html_text_has_no_markup(text in any::<String>()) {
            let escaped = html_text(&text);
            prop_assert!(!escaped.contains('<') && !escaped.contains('"'));
        }
    }
}
