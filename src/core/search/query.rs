//! The query language, and what a match means in every store.
//!
//! A query is terms separated by spaces; every term must match (AND):
//!
//! - `word`: an event holding that word (case-insensitive, see [`super::tokenize`]);
//! - `"quoted phrase"`: those words, one after the other;
//! - `prefix*`: a word starting with `prefix`; `"quoted phr"*` ends a phrase with a prefix;
//! - `-term`: events *not* matching the term (a word, phrase or prefix).
//!
//! Text between the quotes or in a word is cut into words as event text is, so `main.rs`
//! means the phrase `"main rs"`, and characters that are no part of a word (`:`, `^`, `(`)
//! only separate words; they have no other meaning. A term with no word in it (`:`, `--`)
//! matches everything and is dropped. Limits: [`MAX_QUERY_CHARS`] characters, [`MAX_QUERY_TERMS`]
//! terms after dropping; at least one term that is not excluded.

use super::tokenize::{tokens, MAX_INDEXED_WORDS};

/// Longest query, in characters.
pub const MAX_QUERY_CHARS: usize = 1_000;

/// Most terms (words, phrases, prefixes and exclusions together).
pub const MAX_QUERY_TERMS: usize = 32;

/// One term: a word (one word), or a phrase (several, in order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term {
    /// Lowercased, as [`super::tokenize`] makes them; never empty.
    pub words: Vec<String>,
    /// The last word is a prefix.
    pub prefix: bool,
    /// Events matching the term are left out.
    pub excluded: bool,
}

/// A parsed query: at least one term that is not excluded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    terms: Vec<Term>,
}

/// Why a query was refused; the message says what to change.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    #[error("the query is empty")]
    Empty,
    #[error("the query is {chars} characters long; the limit is {MAX_QUERY_CHARS}")]
    TooLong { chars: usize },
    #[error("the query has {terms} terms; the limit is {MAX_QUERY_TERMS}")]
    TooManyTerms { terms: usize },
    #[error("a quote opened at character {at} is never closed")]
    UnbalancedQuote { at: usize },
    #[error("the query has no words to search for (only exclusions, or no letters or digits)")]
    NothingToFind,
    #[error("`*` at character {at} follows no word (a prefix needs letters or digits before the `*`)")]
    BarePrefix { at: usize },
}

/// Parses `input`; never panics, whatever the input.
pub fn parse_query(input: &str) -> Result<Query, QueryError> {
    let chars = input.chars().count();
    if chars > MAX_QUERY_CHARS {
        return Err(QueryError::TooLong { chars });
    }
    if input.trim().is_empty() {
        return Err(QueryError::Empty);
    }
    let mut terms = Vec::new();
    let mut rest = input.char_indices().peekable();
    while let Some(&(at, c)) = rest.peek() {
        if c.is_whitespace() {
            rest.next();
            continue;
        }
        let char_at = input[..at].chars().count() + 1;
        let mut excluded = false;
        if c == '-' {
            excluded = true;
            rest.next();
        }
        // The term's text: a quoted span, or up to the next space.
        let (text, quoted) = match rest.peek() {
            Some(&(start, '"')) => {
                rest.next();
                let body = start + 1;
                let Some(close) = input[body..].find('"') else {
                    return Err(QueryError::UnbalancedQuote { at: input[..start].chars().count() + 1 });
                };
                while rest.peek().is_some_and(|&(i, _)| i <= body + close) {
                    rest.next();
                }
                (&input[body..body + close], true)
            }
            _ => {
                let start = rest.peek().map_or(input.len(), |&(i, _)| i);
                let mut end = start;
                while let Some(&(i, c)) = rest.peek() {
                    if c.is_whitespace() || c == '"' {
                        break;
                    }
                    end = i + c.len_utf8();
                    rest.next();
                }
                (&input[start..end], false)
            }
        };
        // A `*` right after a quote, or ending a word, makes the last word a prefix.
        let mut prefix = false;
        let mut text = text;
        if quoted {
            if let Some(&(_, '*')) = rest.peek() {
                rest.next();
                prefix = true;
            }
        } else if let Some(stripped) = text.strip_suffix('*') {
            text = stripped.trim_end_matches('*');
            prefix = true;
        }
        let words: Vec<String> = tokens(text, MAX_INDEXED_WORDS).into_iter().map(|t| t.word).collect();
        if words.is_empty() {
            if prefix {
                return Err(QueryError::BarePrefix { at: char_at });
            }
            continue; // punctuation only: it separates words, nothing more
        }
        // `foo*bar` is not a prefix: the `*` ends the term only when nothing follows it.
        let prefix = prefix && text.chars().last().is_some_and(char::is_alphanumeric);
        terms.push(Term { words, prefix, excluded });
    }
    if terms.is_empty() {
        return Err(QueryError::NothingToFind);
    }
    if terms.len() > MAX_QUERY_TERMS {
        return Err(QueryError::TooManyTerms { terms: terms.len() });
    }
    if terms.iter().all(|t| t.excluded) {
        return Err(QueryError::NothingToFind);
    }
    Ok(Query { terms })
}

impl Query {
    pub fn terms(&self) -> &[Term] {
        &self.terms
    }

    /// The terms that must match.
    pub fn required(&self) -> impl Iterator<Item = &Term> {
        self.terms.iter().filter(|t| !t.excluded)
    }

    /// The terms that must not.
    pub fn excluded(&self) -> impl Iterator<Item = &Term> {
        self.terms.iter().filter(|t| t.excluded)
    }

    /// Whether an event holding `words` (as [`super::words`] gives them) matches: the
    /// definition every store's engine must agree with.
    pub fn matches(&self, words: &[String]) -> bool {
        self.required().all(|t| t.first_match(words).is_some())
            && self.excluded().all(|t| t.first_match(words).is_none())
    }
}

impl Term {
    /// Whether the word at `i` matches the term's `k`th word.
    fn word_matches(&self, k: usize, word: &str) -> bool {
        let want = &self.words[k];
        if self.prefix && k == self.words.len() - 1 {
            word.starts_with(want.as_str())
        } else {
            word == want
        }
    }

    /// Where the term matches in `words`: the position of each match's first word.
    pub fn positions<'a>(&'a self, words: &'a [String]) -> impl Iterator<Item = usize> + 'a {
        let n = self.words.len();
        (0..words.len().saturating_sub(n - 1)).filter(move |&i| (0..n).all(|k| self.word_matches(k, &words[i + k])))
    }

    pub fn first_match(&self, words: &[String]) -> Option<usize> {
        self.positions(words).next()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn term(words: &[&str], prefix: bool, excluded: bool) -> Term {
        Term { words: words.iter().map(|w| w.to_string()).collect(), prefix, excluded }
    }

    #[test]
    fn words_phrases_prefixes_and_exclusions() {
        let q = parse_query(r#"Deploy "main branch" conf* -staging -"dry run""#).unwrap();
        assert_eq!(
            q.terms(),
            [
                term(&["deploy"], false, false),
                term(&["main", "branch"], false, false),
                term(&["conf"], true, false),
                term(&["staging"], false, true),
                term(&["dry", "run"], false, true),
            ]
        );
    }

    #[test]
    fn punctuation_separates_words_and_has_no_meaning() {
        let q = parse_query("src/main.rs NEAR( a:b ^x").unwrap();
        assert_eq!(
            q.terms(),
            [
                term(&["src", "main", "rs"], false, false),
                term(&["near"], false, false),
                term(&["a", "b"], false, false),
                term(&["x"], false, false),
            ]
        );
        assert_eq!(parse_query(r#""fix th"*"#).unwrap().terms(), [term(&["fix", "th"], true, false)]);
    }

    #[test]
    fn malformed_queries_say_what_is_wrong() {
        assert_eq!(parse_query(""), Err(QueryError::Empty));
        assert_eq!(parse_query("  \t"), Err(QueryError::Empty));
        assert_eq!(parse_query("-foo -bar"), Err(QueryError::NothingToFind));
        assert_eq!(parse_query(": ^ --"), Err(QueryError::NothingToFind));
        assert_eq!(parse_query(r#"foo "bar"#), Err(QueryError::UnbalancedQuote { at: 5 }));
        assert_eq!(parse_query("*"), Err(QueryError::BarePrefix { at: 1 }));
        assert_eq!(parse_query("ok -*"), Err(QueryError::BarePrefix { at: 4 }));
        assert_eq!(parse_query("\0"), Err(QueryError::NothingToFind));
    }

    #[test]
    fn limits_are_exact() {
        let at_limit = "a".repeat(MAX_QUERY_CHARS);
        assert!(parse_query(&at_limit).is_ok());
        assert_eq!(parse_query(&format!("{at_limit}é")), Err(QueryError::TooLong { chars: MAX_QUERY_CHARS + 1 }));
        let terms = |n: usize| (0..n).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
        assert!(parse_query(&terms(MAX_QUERY_TERMS)).is_ok());
        assert_eq!(parse_query(&terms(MAX_QUERY_TERMS + 1)), Err(QueryError::TooManyTerms { terms: 33 }));
        assert!(matches!(parse_query(&"x".repeat(100_000)), Err(QueryError::TooLong { .. })));
    }

    #[test]
    fn matching_is_and_with_phrases_prefixes_and_exclusions() {
        let words = super::super::words("The deploy failed: main branch is locked");
        let m = |q: &str| parse_query(q).unwrap().matches(&words);
        assert!(m("deploy failed"));
        assert!(m("DEPLOY \"main branch\""));
        assert!(!m("\"branch main\""));
        assert!(m("lock*"));
        assert!(!m("locks*"));
        assert!(!m("deploy -locked"));
        assert!(m("deploy -\"locked branch\""));
        assert!(!m("deploy missing"));
        assert!(m("\"main bra\"*"));
    }

    proptest! {
        #[test]
        fn parsing_never_panics(input in "\\PC{0,300}") {
            let _ = parse_query(&input);
        }

        #[test]
        fn hostile_syntax_never_panics(input in r#"[a-z"*\-:^() \x00NEAR]{0,120}"#) {
            if let Ok(q) = parse_query(&input) {
                prop_assert!(q.terms().len() <= MAX_QUERY_TERMS);
                prop_assert!(q.required().count() >= 1);
                for t in q.terms() {
                    prop_assert!(!t.words.is_empty());
                    prop_assert!(t.words.iter().all(|w| w.chars().all(char::is_alphanumeric) || !w.is_empty()));
                }
            }
        }

        #[test]
        fn a_word_of_the_text_finds_the_text(text in "[a-zA-Zé0-9 ,.]{1,80}", pick in 0usize..40) {
            let words = super::super::words(&text);
            if !words.is_empty() {
                let word = &words[pick % words.len()];
                prop_assert!(parse_query(word).unwrap().matches(&words));
                let both = format!("{word} -{word}");
                prop_assert!(!parse_query(&both).unwrap().matches(&words));
            }
        }
    }
}
