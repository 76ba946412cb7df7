//! PostgreSQL's search index: the events' vectors in `threadkeeper_event_search`, keyed as the
//! events are, with a GIN index. They trail the events (`pending_index`): a search first indexes
//! what is pending, then reads.
//!
//! The vector is made in Rust, from the words the core makes ([`indexed_words`]), in
//! `tsvector`'s own text form (`'word':1,4 'other':2`), and cast without any parser or
//! dictionary: the index holds exactly the core's words at their positions. Queries are
//! built as `tsquery` text from the parsed query's words, each quoted ([`tsquery`]): no user
//! text reaches `to_tsquery` or any parser. Ranking is `ts_rank_cd` (normalized by length).

use crate::search::{Query, Term};
use crate::store::search::{indexed_words, StoredHit, WindowSlice, RANK_WINDOW};
use std::collections::BTreeMap;
use std::fmt::Write;
use tokio_postgres::Row;

/// Schema 4 → 5: the events' column that schema 5 wrote in the append. Empty on the way from
/// schema 4 (the next migration moves what it holds out, `pending_index`, and drops it).
pub(super) const MIGRATION: &str = "ALTER TABLE threadkeeper_events ADD COLUMN search tsvector;";

/// A lexeme in `tsvector`/`tsquery` text form: quoted, with quotes and backslashes escaped.
fn lexeme(word: &str) -> String {
    format!("'{}'", word.replace('\\', "\\\\").replace('\'', "''"))
}

/// The `tsvector` text of an event's JSON: each word once with its positions (from 1).
pub(crate) fn tsvector_text(body: &str) -> String {
    let mut positions: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, word) in indexed_words(body).into_iter().enumerate() {
        positions.entry(word).or_default().push(i + 1);
    }
    let mut out = String::new();
    for (word, at) in positions {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&lexeme(&word));
        out.push(':');
        for (k, p) in at.iter().enumerate() {
            if k > 0 {
                out.push(',');
            }
            let _ = write!(out, "{p}");
        }
    }
    out
}

fn tsquery_term(term: &Term) -> String {
    let last = term.words.len() - 1;
    let parts: Vec<String> = term
        .words
        .iter()
        .enumerate()
        .map(|(i, w)| if term.prefix && i == last { format!("{}:*", lexeme(w)) } else { lexeme(w) })
        .collect();
    format!("({})", parts.join(" <-> "))
}

/// The query as `tsquery` text: `('a') & ('b' <-> 'c') & ('d':*) & !('e')`.
pub(crate) fn tsquery(query: &Query) -> String {
    let mut parts: Vec<String> = query.required().map(tsquery_term).collect();
    parts.extend(query.excluded().map(|t| format!("!{}", tsquery_term(t))));
    parts.join(" & ")
}

/// The statement of one ranking window's slice (see [`RANK_WINDOW`]): the window's matches,
/// newest first (`$8` of them after `$9`), then the slice of their ranking (`$6` after `$7`);
/// ties in thread creation order, then event order. Type and time filters read the event's
/// JSON. Only the window's events are ranked: `ts_rank_cd` reads each one's vector.
pub(super) const SEARCH_SQL: &str = "
WITH win AS (
    SELECT s.thread_key, s.seq
    FROM threadkeeper_event_search s
    JOIN threadkeeper_events e ON e.thread_key = s.thread_key AND e.seq = s.seq
    JOIN threadkeeper_threads t ON t.thread_key = s.thread_key
    WHERE s.search @@ CAST($1::text AS tsquery)
      AND ($2::text[] IS NULL OR (e.body::jsonb ->> 'type') = ANY($2::text[]))
      AND ($3::float8 IS NULL OR (e.body::jsonb ->> 'timestamp')::float8 >= $3::float8)
      AND ($4::float8 IS NULL OR (e.body::jsonb ->> 'timestamp')::float8 < $4::float8)
      AND ($5::text[] IS NULL OR t.thread_id = ANY($5::text[]))
    ORDER BY s.thread_key DESC, s.seq DESC
    LIMIT $8 OFFSET $9
)
SELECT t.thread_id, e.seq, e.body, ts_rank_cd(s.search, CAST($1::text AS tsquery), 1)::float8 AS score
FROM win
JOIN threadkeeper_event_search s ON s.thread_key = win.thread_key AND s.seq = win.seq
JOIN threadkeeper_events e ON e.thread_key = win.thread_key AND e.seq = win.seq
JOIN threadkeeper_threads t ON t.thread_key = e.thread_key
ORDER BY score DESC, e.thread_key, e.seq
LIMIT $6 OFFSET $7";

pub(super) fn hit(row: &Row) -> StoredHit {
    StoredHit { thread_id: row.get(0), event_index: row.get::<_, i64>(1) as u64, body: row.get(2), score: row.get(3) }
}

/// The statement's parameters for one slice, after the query and the filters:
/// `($6, $7, $8, $9)`.
pub(super) fn slice_params(slice: WindowSlice) -> [i64; 4] {
    [slice.take as i64, slice.skip as i64, RANK_WINDOW as i64, slice.first_match() as i64]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::parse_query;

    #[test]
    fn queries_reach_postgres_as_quoted_lexemes_only() {
        let q = parse_query(r#"deploy "main branch" conf* -staging a:b"#).unwrap();
        assert_eq!(tsquery(&q), "('deploy') & ('main' <-> 'branch') & ('conf':*) & ('a' <-> 'b') & !('staging')");
    }

    #[test]
    fn vectors_hold_each_word_once_with_its_positions() {
        let body = r#"{"type":"message","role":"user","content":"Fix the bug, fix it","iteration":1}"#;
        assert_eq!(tsvector_text(body), "'bug':3 'fix':1,4 'it':5 'the':2");
    }
}
