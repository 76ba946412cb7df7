//! Redaction of provider reasoning ciphertext.

/// Characters kept at the start and at the end of a redacted value.
const KEEP_PREFIX: usize = 6;
const KEEP_SUFFIX: usize = 4;
/// Shorter values are masked entirely: a kept prefix and suffix would show most of them.
const MIN_KEEP_LEN: usize = KEEP_PREFIX + KEEP_SUFFIX + 6;

/// Masks a ciphertext while keeping its shape: same length in characters, the first six and
/// last four characters kept, `-` around a run of `*` in between, e.g.
/// `gAAAAABoZ1x2...tail` → `gAAAAA-*****...*-tail`. Values shorter than 16 characters become
/// all `*`. Redacting a redacted value changes nothing.
pub fn redact_encrypted_content(value: &str) -> String {
    let chars: Vec<char> = value.chars().collect();
    if chars.len() < MIN_KEEP_LEN {
        return "*".repeat(chars.len());
    }
    let mut out = String::with_capacity(value.len());
    out.extend(&chars[..KEEP_PREFIX]);
    out.push('-');
    out.extend(std::iter::repeat_n('*', chars.len() - KEEP_PREFIX - KEEP_SUFFIX - 2));
    out.push('-');
    out.extend(&chars[chars.len() - KEEP_SUFFIX..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_length_prefix_and_suffix() {
        assert_eq!(redact_encrypted_content("gAAAAABoZ1x2abcdefghWXYZ"), "gAAAAA-************-WXYZ");
        assert_eq!(redact_encrypted_content("gAAAAABoZ1x2abcdefghWXYZ").chars().count(), 24);
        assert_eq!(redact_encrypted_content("0123456789abcdef"), "012345-****-cdef");
    }

    #[test]
    fn short_values_are_fully_masked() {
        assert_eq!(redact_encrypted_content("gAAAAA..."), "*********");
        assert_eq!(redact_encrypted_content(""), "");
        assert_eq!(redact_encrypted_content("0123456789abcde"), "***************");
    }

    #[test]
    fn counts_characters_not_bytes_and_is_idempotent() {
        let redacted = redact_encrypted_content("ééééééééééééééééé");
        assert_eq!(redacted, "éééééé-*****-éééé");
        assert_eq!(redact_encrypted_content(&redacted), redacted);
    }
}
