//! SQLite's search index: an FTS5 table in the same file. What an append adds is indexed a
//! little later, before any search reads the index ([`super::pending_index`]); pops and
//! deletes forget what they remove in their own transaction.
//!
//! The table is contentless (`content=''`, with `contentless_delete=1` so rows can be deleted):
//! it holds the index alone, not a second copy of the text. A row's id is the event's place,
//! `thread_key << 32 | seq`, and its one column the event's words
//! ([`crate::store::search::indexed_words`]) joined by spaces. The `ascii` tokenizer splits that
//! text back into exactly those words (it splits at ASCII spaces and punctuation only, and the
//! words hold neither), so FTS5 matches the words the core made rather than its own reading of
//! the text. Queries are built from the parsed
//! query's words, each quoted ([`fts5_query`]): no user text reaches `MATCH`.

use super::rank_function;
use crate::search::{Query, Term};
use crate::store::search::{page_by_windows, SearchPage, SearchRequest, StoredHit, RANK_WINDOW};
use rusqlite::{params, Connection};
use std::sync::LazyLock;

/// Creates the index (schema 3 → 4); [`super::pending_index::index_everything`] fills it in
/// the migration's transaction.
pub(super) const MIGRATION: &str = "CREATE VIRTUAL TABLE search_index USING fts5(
        words, content='', contentless_delete=1, tokenize='ascii', detail=full
    );";

/// Events per thread the row id can place (the low 32 bits).
const SEQ_BITS: u32 = 32;

pub(super) fn row_id(key: i64, seq: i64) -> i64 {
    (key << SEQ_BITS) | seq
}

/// An FTS5 string: the text in double quotes, quotes inside doubled.
fn quoted(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

fn fts5_term(term: &Term) -> String {
    let phrase = quoted(&term.words.join(" "));
    if term.prefix {
        format!("{phrase} *")
    } else {
        phrase
    }
}

/// The query in FTS5's syntax: `("a" AND "b c" AND "d" *) NOT "e"`.
pub(crate) fn fts5_query(query: &Query) -> String {
    let required: Vec<String> = query.required().map(fts5_term).collect();
    let mut out = format!("({})", required.join(" AND "));
    for term in query.excluded() {
        out.push_str(" NOT ");
        out.push_str(&fts5_term(term));
    }
    out
}

/// One page of hits (and one more, to tell whether more follow), window by window (see
/// [`RANK_WINDOW`]). Within a window, ranked by `bm25()` (negated, so higher is better), or
/// for a query of one term by [`rank_function`] (the same order, without counting every
/// event that holds the term first); ties in thread creation order, then event order (the
/// row id's order).
pub(super) fn search(conn: &Connection, request: &SearchRequest) -> rusqlite::Result<SearchPage> {
    let filtered = request.types.is_some() || request.since.is_some() || request.until.is_some();
    let one_term = request.query.required().count() == 1;
    let mut select = conn.prepare_cached(&STATEMENTS[usize::from(filtered) * 2 + usize::from(one_term)])?;
    let query = fts5_query(&request.query);
    let (types, thread_ids) = (json_list(&request.types), json_list(&request.thread_ids));
    page_by_windows(request, |slice| {
        let rows = select.query_map(
            params![
                query,
                types,
                request.since,
                request.until,
                thread_ids,
                slice.take as i64,
                slice.skip as i64,
                RANK_WINDOW as i64,
                slice.first_match() as i64,
            ],
            |r| {
                Ok(StoredHit {
                    thread_id: r.get(0)?,
                    event_index: r.get::<_, i64>(1)? as u64,
                    body: r.get(2)?,
                    score: r.get(3)?,
                })
            },
        )?;
        rows.collect()
    })
}

fn json_list(list: &Option<Vec<String>>) -> Option<String> {
    list.as_ref().map(|l| serde_json::Value::from(l.clone()).to_string())
}

/// The four statements: without and with filters, each ranked by `bm25()` and by
/// [`rank_function`] (a query of one term).
static STATEMENTS: LazyLock<[String; 4]> = LazyLock::new(|| {
    let ranked = |template: &str, rank: &str| template.replace("{rank}", rank);
    let weighted = "-bm25(search_index)";
    let unweighted = format!("{}(search_index)", rank_function::NAME);
    [
        ranked(WINDOW, weighted),
        ranked(WINDOW, &unweighted),
        ranked(FILTERED_WINDOW, weighted),
        ranked(FILTERED_WINDOW, &unweighted),
    ]
});

/// The slice of the window's ranking (`?6` hits after `?7`), with the events it names.
macro_rules! page_of_window {
    () => {
        ",
    page AS (SELECT id, score FROM win ORDER BY score DESC, id LIMIT ?6 OFFSET ?7)
    SELECT t.thread_id, e.seq, e.body, page.score
    FROM page
    CROSS JOIN events e ON e.thread_key = (page.id >> 32) AND e.seq = (page.id & 4294967295)
    CROSS JOIN threads t ON t.thread_key = e.thread_key
    ORDER BY page.score DESC, page.id"
    };
}

/// The window's matches come from FTS5 in row id order, newest first, so a window costs its
/// own matches (one `bm25()` each), never every match of a common word; only the page's events
/// are read. (`?2`–`?4`, the filters, are unused here: both statements take the same
/// parameters.)
const WINDOW: &str = concat!(
    "WITH win AS (
        SELECT rowid AS id, {rank} AS score
        FROM search_index
        WHERE search_index MATCH ?1
          AND (?5 IS NULL OR (rowid >> 32) IN (
              SELECT thread_key FROM threads WHERE thread_id IN (SELECT value FROM json_each(?5))))
        ORDER BY rowid DESC
        LIMIT ?8 OFFSET ?9
    )",
    page_of_window!()
);

/// With type or time filters, the window is of the matches that pass them: each match's
/// event is read, newest first, until the window is full. CROSS JOIN keeps FTS5 the outer
/// loop, in its row id order.
const FILTERED_WINDOW: &str = concat!(
    "WITH win AS (
        SELECT s.rowid AS id, {rank} AS score
        FROM search_index s
        CROSS JOIN events e ON e.thread_key = (s.rowid >> 32) AND e.seq = (s.rowid & 4294967295)
        CROSS JOIN threads t ON t.thread_key = e.thread_key
        WHERE search_index MATCH ?1
          AND (?2 IS NULL OR json_extract(e.body, '$.type') IN (SELECT value FROM json_each(?2)))
          AND (?3 IS NULL OR json_extract(e.body, '$.timestamp') >= ?3)
          AND (?4 IS NULL OR json_extract(e.body, '$.timestamp') < ?4)
          AND (?5 IS NULL OR t.thread_id IN (SELECT value FROM json_each(?5)))
        ORDER BY s.rowid DESC
        LIMIT ?8 OFFSET ?9
    )",
    page_of_window!()
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::parse_query;

    #[test]
    fn queries_reach_fts5_as_quoted_words_only() {
        let q = parse_query(r#"deploy "main branch" conf* -staging NEAR( a:b ^c"#).unwrap();
        assert_eq!(
            fts5_query(&q),
            r#"("deploy" AND "main branch" AND "conf" * AND "near" AND "a b" AND "c") NOT "staging""#
        );
    }
}
