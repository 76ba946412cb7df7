//! PostgreSQL's search index: a `tsvector` column of the events (`search`) with a GIN index,
//! written by the statement that inserts the event, so it is in the append's transaction; a
//! fork copies it with the events, pops and deletes remove it with them.
//!
//! The vector is made in Rust, from the words the core makes ([`indexed_words`]), in
//! `tsvector`'s own text form (`'word':1,4 'other':2`), and cast without any parser or
//! dictionary: the index holds exactly the core's words at their positions. Queries are
//! built as `tsquery` text from the parsed query's words, each quoted ([`tsquery`]): no user
//! text reaches `to_tsquery` or any parser. Ranking is `ts_rank_cd` (normalized by length).

use crate::search::{Query, Term};
use crate::store::search::{indexed_words, StoredHit, WindowSlice, BUILD_PROGRESS_EVERY, RANK_WINDOW};
use std::collections::BTreeMap;
use std::fmt::Write;
use tokio_postgres::Row;

/// Schema 4 → 5: the column and its index. Rows from before are filled by [`build`], in the
/// migration's transaction, before the index is made.
pub(super) const MIGRATION: &str = "ALTER TABLE threadkeeper_events ADD COLUMN search tsvector;";

const CREATE_INDEX: &str =
    "CREATE INDEX threadkeeper_events_search ON threadkeeper_events USING gin (search) WITH (fastupdate = on)";

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

/// Fills the column for rows without it and makes the index (a database from before).
pub(super) async fn build(tx: &deadpool_postgres::Transaction<'_>) -> Result<(), tokio_postgres::Error> {
    let total: i64 = tx.query_one("SELECT count(*) FROM threadkeeper_events", &[]).await?.get(0);
    // At warn, which the default log filter shows: a database from before the index is
    // indexed once, which can take minutes, and the operator should see why the start is slow.
    // A new database (no events) builds nothing and says nothing.
    if total > 0 {
        tracing::warn!(events = total, "building the search index (once, for the events already stored)");
    }
    let mut done = 0u64;
    let mut next_report = BUILD_PROGRESS_EVERY;
    loop {
        let rows = tx
            .query(
                "SELECT thread_key, seq, body FROM threadkeeper_events WHERE search IS NULL
                 ORDER BY thread_key, seq LIMIT 1000",
                &[],
            )
            .await?;
        if rows.is_empty() {
            break;
        }
        let keys: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
        let seqs: Vec<i64> = rows.iter().map(|r| r.get(1)).collect();
        let vectors: Vec<String> = rows.iter().map(|r| tsvector_text(r.get(2))).collect();
        tx.execute(
            "UPDATE threadkeeper_events e SET search = v.words::tsvector
             FROM unnest($1::bigint[], $2::bigint[], $3::text[]) AS v(thread_key, seq, words)
             WHERE e.thread_key = v.thread_key AND e.seq = v.seq",
            &[&keys, &seqs, &vectors],
        )
        .await?;
        done += rows.len() as u64;
        if done >= next_report {
            tracing::warn!(events = done, of = total, "building the search index");
            next_report += BUILD_PROGRESS_EVERY;
        }
    }
    tx.batch_execute(CREATE_INDEX).await?;
    if total > 0 {
        tracing::warn!(events = done, "built the search index");
    }
    Ok(())
}

/// The statement of one ranking window's slice (see [`RANK_WINDOW`]): the window's matches,
/// newest first (`$8` of them after `$9`), then the slice of their ranking (`$6` after `$7`);
/// ties in thread creation order, then event order. Type and time filters read the event's
/// JSON. Only the window's events are ranked: `ts_rank_cd` reads each one's vector.
pub(super) const SEARCH_SQL: &str = "
WITH win AS (
    SELECT e.thread_key, e.seq
    FROM threadkeeper_events e
    JOIN threadkeeper_threads t ON t.thread_key = e.thread_key
    WHERE e.search @@ CAST($1::text AS tsquery)
      AND ($2::text[] IS NULL OR (e.body::jsonb ->> 'type') = ANY($2::text[]))
      AND ($3::float8 IS NULL OR (e.body::jsonb ->> 'timestamp')::float8 >= $3::float8)
      AND ($4::float8 IS NULL OR (e.body::jsonb ->> 'timestamp')::float8 < $4::float8)
      AND ($5::text[] IS NULL OR t.thread_id = ANY($5::text[]))
    ORDER BY e.thread_key DESC, e.seq DESC
    LIMIT $8 OFFSET $9
)
SELECT t.thread_id, e.seq, e.body, ts_rank_cd(e.search, CAST($1::text AS tsquery), 1)::float8 AS score
FROM win
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
