//! Words: maximal runs of Unicode letters and digits (`char::is_alphanumeric`), lowercased.
//!
//! Everything else separates words. A word longer than [`MAX_WORD_BYTES`] is cut at a
//! character boundary, and only an event's first [`MAX_INDEXED_WORDS`] words are indexed: both
//! bounds keep every engine exact (PostgreSQL keeps word positions up to 16,383 and a
//! `tsvector` under 1 MB), and queries are cut the same way, so they still match.

/// Words longer than this many bytes (UTF-8) are cut to it.
pub const MAX_WORD_BYTES: usize = 64;

/// Only an event's first this many words are searched.
pub const MAX_INDEXED_WORDS: usize = 10_000;

/// A word and where it is in the text (byte offsets of the original, uncut run).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub word: String,
    pub start: usize,
    pub end: usize,
}

/// The text's words with their places, at most `limit` of them.
pub fn tokens(text: &str, limit: usize) -> Vec<Token> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
        let in_word = i < text.len() && c.is_alphanumeric();
        match (start, in_word) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                if out.len() == limit {
                    return out;
                }
                out.push(Token { word: normalize(&text[s..i]), start: s, end: i });
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// The text's words, as the index holds them (at most [`MAX_INDEXED_WORDS`]).
pub fn words(text: &str) -> Vec<String> {
    tokens(text, MAX_INDEXED_WORDS).into_iter().map(|t| t.word).collect()
}

/// Lowercased, then cut to [`MAX_WORD_BYTES`]. Lowercasing may produce characters that are
/// not alphanumeric (rare combining marks); the word is kept whole all the same, and queries
/// go through the same function, so both sides agree.
fn normalize(run: &str) -> String {
    let mut word = run.to_lowercase();
    if word.len() > MAX_WORD_BYTES {
        let mut cut = MAX_WORD_BYTES;
        while !word.is_char_boundary(cut) {
            cut -= 1;
        }
        word.truncate(cut);
    }
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_on_anything_but_letters_and_digits() {
        assert_eq!(words("Read src/main.rs: ERROR 42!"), ["read", "src", "main", "rs", "error", "42"]);
        assert_eq!(words("naïve Größe 東京 αβγ"), ["naïve", "größe", "東京", "αβγ"]);
        assert_eq!(words("  ,;--  "), Vec::<String>::new());
    }

    #[test]
    fn places_are_byte_offsets_of_the_original() {
        let text = "Ünïcode — ok";
        let t = tokens(text, 10);
        assert_eq!(&text[t[0].start..t[0].end], "Ünïcode");
        assert_eq!(&text[t[1].start..t[1].end], "ok");
    }

    #[test]
    fn long_words_are_cut_and_counts_bounded() {
        let long = "é".repeat(100);
        let w = words(&long);
        assert_eq!(w.len(), 1);
        assert!(w[0].len() <= MAX_WORD_BYTES && w[0].len() >= MAX_WORD_BYTES - 1);
        let many = "w ".repeat(MAX_INDEXED_WORDS + 5);
        assert_eq!(words(&many).len(), MAX_INDEXED_WORDS);
        assert_eq!(tokens("a b c", 2).len(), 2);
    }
}
