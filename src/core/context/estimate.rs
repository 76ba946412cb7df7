//! Upstream's token estimate: `Math.ceil(text.length / 3.5)`, `0` for empty text.

/// The length JavaScript reports for `text`: UTF-16 code units (a character outside the Basic
/// Multilingual Plane, such as most emoji, counts 2).
pub fn utf16_len(text: &str) -> u64 {
    // Four-byte UTF-8 sequences are exactly the characters that take two UTF-16 units; every
    // other character takes one. Counting lead bytes avoids decoding.
    text.bytes().map(|b| u64::from((b & 0xC0) != 0x80) + u64::from(b >= 0xF0)).sum()
}

/// `Math.ceil(length / 3.5)` computed exactly in integers: `ceil(2 * length / 7)`.
pub fn estimate_from_len(length: u64) -> u64 {
    (2 * length).div_ceil(7)
}

/// Upstream's `estimateTokens(text)`.
pub fn estimate_tokens(text: &str) -> u64 {
    estimate_from_len(utf16_len(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn matches_upstream_examples() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("hello"), 2); // ceil(5 / 3.5)
        assert_eq!(estimate_tokens("1234567"), 2); // exactly 2
        assert_eq!(estimate_tokens("12345678"), 3);
    }

    #[test]
    fn counts_utf16_units_as_javascript_does() {
        assert_eq!(utf16_len("é"), 1);
        assert_eq!(utf16_len("中"), 1);
        assert_eq!(utf16_len("😀"), 2);
        assert_eq!(utf16_len("a😀b"), 4);
    }

    proptest! {
        #[test]
        fn length_is_the_utf16_encoding_length(s in any::<String>()) {
            prop_assert_eq!(utf16_len(&s), s.encode_utf16().count() as u64);
        }

        #[test]
        fn integer_ceiling_equals_the_float_one(len in 0u64..(1 << 40)) {
            prop_assert_eq!(estimate_from_len(len), (len as f64 / 3.5).ceil() as u64);
        }
    }
}
