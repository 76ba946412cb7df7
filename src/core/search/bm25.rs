//! BM25 relevance, for stores that score in Rust (the memory store). SQLite scores with
//! FTS5's `bm25()` and PostgreSQL with `ts_rank_cd`: the order of hits may differ between
//! stores, the hits do not.

use super::query::Query;

/// The usual constants.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// What the whole index knows when one event is scored.
pub struct Corpus {
    /// Events indexed.
    pub events: u64,
    /// Average words per event.
    pub average_words: f64,
}

/// The score of an event holding `words` for `query`; `documents_with` gives, per term that
/// must match (in [`Query::required`] order), how many events hold it. Higher is better.
pub fn score(query: &Query, words: &[String], corpus: &Corpus, documents_with: &[u64]) -> f64 {
    let length = words.len() as f64;
    let norm = K1 * (1.0 - B + B * length / corpus.average_words.max(1.0));
    query
        .required()
        .zip(documents_with)
        .map(|(term, &df)| {
            let tf = term.positions(words).count() as f64;
            let n = corpus.events as f64;
            let idf = ((n - df as f64 + 0.5) / (df as f64 + 0.5) + 1.0).ln();
            idf * tf * (K1 + 1.0) / (tf + norm)
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::{parse_query, words};

    #[test]
    fn rarer_terms_and_more_matches_score_higher() {
        let q = parse_query("alpha").unwrap();
        let corpus = Corpus { events: 100, average_words: 5.0 };
        let once = score(&q, &words("alpha beta gamma delta eps"), &corpus, &[10]);
        let twice = score(&q, &words("alpha alpha gamma delta eps"), &corpus, &[10]);
        let rare = score(&q, &words("alpha beta gamma delta eps"), &corpus, &[1]);
        assert!(twice > once && rare > once && once > 0.0);
    }
}
