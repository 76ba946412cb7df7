//! The matching text of a hit, with its matches marked.
//!
//! A window of [`SNIPPET_WORDS`] words around the first match of a term that must match;
//! every word of a match of such a term inside the window is wrapped in [`MARK_OPEN`] and
//! [`MARK_CLOSE`]; `…` stands for text left out; runs of white space show as one space.

use super::query::Query;
use super::tokenize::{tokens, Token, MAX_INDEXED_WORDS};

pub const MARK_OPEN: &str = "«";
pub const MARK_CLOSE: &str = "»";
pub const ELLIPSIS: &str = "…";

/// Words a snippet shows at most.
pub const SNIPPET_WORDS: usize = 24;

/// Words shown before the first match.
const LEAD_WORDS: usize = 6;

/// The snippet of `text` for `query`.
pub fn snippet(text: &str, query: &Query) -> String {
    let tokens: Vec<Token> = tokens(text, MAX_INDEXED_WORDS);
    let words: Vec<String> = tokens.iter().map(|t| t.word.clone()).collect();
    let mut marked = vec![false; tokens.len()];
    let mut first = None;
    for term in query.required() {
        for at in term.positions(&words) {
            first = Some(first.map_or(at, |f: usize| f.min(at)));
            for m in &mut marked[at..at + term.words.len()] {
                *m = true;
            }
        }
    }
    if tokens.is_empty() {
        return collapse(&text.chars().take(200).collect::<String>());
    }
    let from = first.unwrap_or(0).saturating_sub(LEAD_WORDS);
    let to = (from + SNIPPET_WORDS).min(tokens.len());
    let mut out = String::new();
    if from > 0 {
        out.push_str(ELLIPSIS);
    }
    let mut cursor = if from == 0 { 0 } else { tokens[from].start };
    for i in from..to {
        let token = &tokens[i];
        out.push_str(&collapse(&text[cursor..token.start]));
        if marked[i] {
            out.push_str(MARK_OPEN);
            out.push_str(&text[token.start..token.end]);
            out.push_str(MARK_CLOSE);
        } else {
            out.push_str(&text[token.start..token.end]);
        }
        cursor = token.end;
    }
    if to < tokens.len() {
        out.push_str(ELLIPSIS);
    } else {
        out.push_str(&collapse(&text[cursor..]));
    }
    out.trim().to_owned()
}

/// Each run of white space or control characters as one space.
fn collapse(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_space = false;
    for c in text.chars() {
        if c.is_whitespace() || c.is_control() {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
        } else {
            out.push(c);
            in_space = false;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::parse_query;

    #[test]
    fn marks_matches_in_a_window() {
        let q = parse_query("deploy \"main branch\"").unwrap();
        assert_eq!(snippet("We Deploy the\nmain  branch now.", &q), "We «Deploy» the «main» «branch» now.");
        let long = format!("{} needle {}", "pad ".repeat(50), "tail ".repeat(50));
        let s = snippet(&long, &parse_query("needle").unwrap());
        assert!(s.starts_with(ELLIPSIS) && s.ends_with(ELLIPSIS) && s.contains("«needle»"), "{s}");
        assert_eq!(s.split_whitespace().count(), SNIPPET_WORDS);
    }

    #[test]
    fn prefixes_are_marked_whole_and_exclusions_not_at_all() {
        let q = parse_query("conf* -nope").unwrap();
        assert_eq!(snippet("the Configuration file", &q), "the «Configuration» file");
        assert_eq!(snippet("run_shell\n{\"cmd\":\"conf\"}", &q), "run_shell {\"cmd\":\"«conf»\"}");
    }
}
