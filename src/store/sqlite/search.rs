//! SQLite's search index: an FTS5 table in the same file, changed in the transaction of the
//! append, pop, fork or delete that changes the events.
//!
//! The table is contentless (`content=''`, with `contentless_delete=1` so rows can be deleted):
//! it holds the index alone, not a second copy of the text. A row's id is the event's place,
//! `thread_key << 32 | seq`, and its one column the event's words ([`indexed_words`]) joined by
//! spaces. The `ascii` tokenizer splits that text back into exactly those words (it splits at
//! ASCII spaces and punctuation only, and the words hold neither), so FTS5 matches the words
//! the core made rather than its own reading of the text. Queries are built from the parsed
//! query's words, each quoted ([`fts5_query`]): no user text reaches `MATCH`.

use crate::search::{Query, Term};
use crate::store::search::{indexed_words, SearchRequest, StoredHit, BUILD_PROGRESS_EVERY};
use rusqlite::{params, Connection};

/// Creates the index (schema 3 → 4); [`build`] fills it in the same transaction.
pub(super) const MIGRATION: &str = "CREATE VIRTUAL TABLE search_index USING fts5(
        words, content='', contentless_delete=1, tokenize='ascii', detail=full
    );";

/// Events per thread the row id can place (the low 32 bits).
const SEQ_BITS: u32 = 32;

fn row_id(key: i64, seq: i64) -> i64 {
    (key << SEQ_BITS) | seq
}

/// Indexes the events `first..` of a thread, given as their JSON.
pub(super) fn index_events<'a>(
    conn: &Connection,
    key: i64,
    first: i64,
    bodies: impl Iterator<Item = &'a str>,
) -> rusqlite::Result<()> {
    let mut insert = conn.prepare_cached("INSERT INTO search_index (rowid, words) VALUES (?1, ?2)")?;
    for (i, body) in bodies.enumerate() {
        insert.execute(params![row_id(key, first + i as i64), indexed_words(body).join(" ")])?;
    }
    Ok(())
}

/// Forgets the events `from..to` of a thread (a pop, a delete).
pub(super) fn forget_events(conn: &Connection, key: i64, from: i64, to: i64) -> rusqlite::Result<()> {
    let mut delete = conn.prepare_cached("DELETE FROM search_index WHERE rowid = ?1")?;
    for seq in from..to {
        delete.execute([row_id(key, seq)])?;
    }
    Ok(())
}

/// Indexes a fork's events: the source's prefix, read in the fork's transaction.
pub(super) fn index_fork(conn: &Connection, source: i64, fork: i64, prefix: i64) -> rusqlite::Result<()> {
    let mut select = conn.prepare_cached("SELECT body FROM events WHERE thread_key = ?1 AND seq < ?2 ORDER BY seq")?;
    let mut rows = select.query(params![source, prefix])?;
    let mut insert = conn.prepare_cached("INSERT INTO search_index (rowid, words) VALUES (?1, ?2)")?;
    let mut seq = 0;
    while let Some(row) = rows.next()? {
        let body: String = row.get(0)?;
        insert.execute(params![row_id(fork, seq), indexed_words(&body).join(" ")])?;
        seq += 1;
    }
    Ok(())
}

/// Indexes every event of the file (a database from before the index), reporting counts.
pub(super) fn build(conn: &Connection) -> rusqlite::Result<()> {
    let total: i64 = conn.query_row("SELECT count(*) FROM events", [], |r| r.get(0))?;
    // At warn, which the default log filter shows: a database from before the index is
    // indexed once, which can take minutes, and the operator should see why the start is slow.
    // A new database (no events) builds nothing and says nothing.
    if total > 0 {
        tracing::warn!(events = total, "building the search index (once, for the events already stored)");
    }
    let mut select = conn.prepare("SELECT thread_key, seq, body FROM events")?;
    let mut rows = select.query([])?;
    let mut insert = conn.prepare("INSERT INTO search_index (rowid, words) VALUES (?1, ?2)")?;
    let mut done = 0u64;
    while let Some(row) = rows.next()? {
        let (key, seq, body): (i64, i64, String) = (row.get(0)?, row.get(1)?, row.get(2)?);
        insert.execute(params![row_id(key, seq), indexed_words(&body).join(" ")])?;
        done += 1;
        if done.is_multiple_of(BUILD_PROGRESS_EVERY) {
            tracing::warn!(events = done, of = total, "building the search index");
        }
    }
    if total > 0 {
        tracing::warn!(events = done, "built the search index");
    }
    Ok(())
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

/// One page of hits (and one more, to tell whether more follow). Ranked by `bm25()` (negated,
/// so higher is better); ties in thread creation order, then event order (the row id's order).
pub(super) fn search(conn: &Connection, request: &SearchRequest) -> rusqlite::Result<(Vec<StoredHit>, bool)> {
    let filtered = request.types.is_some() || request.since.is_some() || request.until.is_some();
    let mut select = conn.prepare_cached(if filtered { READ_THEN_RANK } else { RANK_THEN_READ })?;
    let rows = select.query_map(
        params![
            fts5_query(&request.query),
            json_list(&request.types),
            request.since,
            request.until,
            json_list(&request.thread_ids),
            request.limit as i64 + 1,
            request.offset as i64,
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
    let mut hits = rows.collect::<rusqlite::Result<Vec<_>>>()?;
    let more = hits.len() > request.limit;
    hits.truncate(request.limit);
    Ok((hits, more))
}

fn json_list(list: &Option<Vec<String>>) -> Option<String> {
    list.as_ref().map(|l| serde_json::Value::from(l.clone()).to_string())
}

/// Without type or time filters the index alone ranks the matches, and only the page's events
/// are read: a word in most events costs one `bm25()` per match, not one event read per match.
/// (`?2`–`?4`, the filters, are unused here: both statements take the same parameters.)
const RANK_THEN_READ: &str = "
    WITH page AS (
        SELECT rowid AS id, -bm25(search_index) AS score
        FROM search_index
        WHERE search_index MATCH ?1
          AND (?5 IS NULL OR (rowid >> 32) IN (
              SELECT thread_key FROM threads WHERE thread_id IN (SELECT value FROM json_each(?5))))
        ORDER BY score DESC, id
        LIMIT ?6 OFFSET ?7
    )
    SELECT t.thread_id, e.seq, e.body, page.score
    FROM page
    CROSS JOIN events e ON e.thread_key = (page.id >> 32) AND e.seq = (page.id & 4294967295)
    CROSS JOIN threads t ON t.thread_key = e.thread_key
    ORDER BY page.score DESC, page.id";

/// With type or time filters each match's event is read to filter it, then ranked.
/// CROSS JOIN keeps FTS5 the outer loop: the events are looked up by the matches' ids.
const READ_THEN_RANK: &str = "
    SELECT t.thread_id, e.seq, e.body, -bm25(search_index) AS score
    FROM search_index s
    CROSS JOIN events e ON e.thread_key = (s.rowid >> 32) AND e.seq = (s.rowid & 4294967295)
    CROSS JOIN threads t ON t.thread_key = e.thread_key
    WHERE search_index MATCH ?1
      AND (?2 IS NULL OR json_extract(e.body, '$.type') IN (SELECT value FROM json_each(?2)))
      AND (?3 IS NULL OR json_extract(e.body, '$.timestamp') >= ?3)
      AND (?4 IS NULL OR json_extract(e.body, '$.timestamp') < ?4)
      AND (?5 IS NULL OR t.thread_id IN (SELECT value FROM json_each(?5)))
    ORDER BY score DESC, e.thread_key, e.seq
    LIMIT ?6 OFFSET ?7";

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
