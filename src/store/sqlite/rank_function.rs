//! `term_frequency_rank(search_index)`: BM25 without its term weight, as an FTS5 auxiliary
//! function, for a query of one term.
//!
//! BM25 sums, per term, the term's weight (its inverse document frequency) times a saturated,
//! length-normalized count of the term in the event. With one term the weight multiplies every
//! score alike, so the order is BM25's without it; but FTS5's `bm25()` computes it first, by
//! counting every event of the store that holds the term: for a phrase found in a third of a
//! million events, position by position, 28 ms of a 35 ms search. This function is that
//! count's remainder: the same formula (`k1` 1.2, `b` 0.75, the index's average length), with
//! the weight left out.

use rusqlite::ffi;
use rusqlite::Connection;
use std::ffi::{c_int, CStr};
use std::ptr;

/// The function's name in SQL.
pub(super) const NAME: &str = "term_frequency_rank";
const NAME_C: &CStr = c"term_frequency_rank";

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Registers the function on `conn` (FTS5 functions are per connection).
pub(super) fn register(conn: &Connection) -> rusqlite::Result<()> {
    let api = fts5_api(conn)?;
    // SAFETY: `api` is the live FTS5 API of this connection (checked non-null and at least
    // version 2, which has xCreateFunction); the name is a static C string and the function
    // takes no user data, so nothing needs destroying.
    let rc = unsafe {
        match (*api).xCreateFunction {
            Some(create) => create(api, NAME_C.as_ptr(), ptr::null_mut(), Some(rank), None),
            None => ffi::SQLITE_ERROR,
        }
    };
    check(rc, "cannot register the ranking function")
}

/// The connection's `fts5_api`, got as SQLite documents: `SELECT fts5(?1)` with a pointer bound.
fn fts5_api(conn: &Connection) -> rusqlite::Result<*mut ffi::fts5_api> {
    let mut api: *mut ffi::fts5_api = ptr::null_mut();
    // SAFETY: the statement is prepared, bound, stepped and finalized on this connection's
    // handle within this call; the bound pointer outlives the step that writes through it.
    let rc = unsafe {
        let db = conn.handle();
        let mut stmt: *mut ffi::sqlite3_stmt = ptr::null_mut();
        let rc = ffi::sqlite3_prepare_v2(db, c"SELECT fts5(?1)".as_ptr(), -1, &mut stmt, ptr::null_mut());
        if rc != ffi::SQLITE_OK {
            rc
        } else {
            ffi::sqlite3_bind_pointer(stmt, 1, (&raw mut api).cast(), c"fts5_api_ptr".as_ptr(), None);
            ffi::sqlite3_step(stmt);
            ffi::sqlite3_finalize(stmt)
        }
    };
    check(rc, "cannot reach FTS5")?;
    // SAFETY: non-null, it points at FTS5's static API structure.
    if api.is_null() || unsafe { (*api).iVersion } < 2 {
        return Err(error(ffi::SQLITE_ERROR, "this SQLite's FTS5 has no function API"));
    }
    Ok(api)
}

fn check(rc: c_int, what: &str) -> rusqlite::Result<()> {
    if rc == ffi::SQLITE_OK {
        Ok(())
    } else {
        Err(error(rc, what))
    }
}

fn error(rc: c_int, what: &str) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(ffi::Error::new(rc), Some(what.to_owned()))
}

/// The function FTS5 calls for each row.
unsafe extern "C" fn rank(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    _argc: c_int,
    _argv: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: FTS5 passes its API and the current row's context, valid for this call.
    match unsafe { score(&*api, fts) } {
        Ok(score) => unsafe { ffi::sqlite3_result_double(ctx, score) },
        Err(rc) => unsafe { ffi::sqlite3_result_error_code(ctx, rc) },
    }
}

/// The row's score for the query's first phrase (its one required term).
///
/// # Safety
/// `api` and `fts` are what FTS5 passed to an auxiliary function call in progress.
unsafe fn score(api: &ffi::Fts5ExtensionApi, fts: *mut ffi::Fts5Context) -> Result<f64, c_int> {
    let ok = |rc: c_int| if rc == ffi::SQLITE_OK { Ok(()) } else { Err(rc) };
    macro_rules! call {
        ($f:ident) => {
            api.$f.ok_or(ffi::SQLITE_MISUSE)?
        };
    }
    let (mut rows, mut tokens, mut length, mut instances) = (0i64, 0i64, 0 as c_int, 0 as c_int);
    // SAFETY (all calls below): documented FTS5 API calls on the context FTS5 gave us, with
    // out-pointers to locals.
    unsafe {
        ok(call!(xRowCount)(fts, &mut rows))?;
        ok(call!(xColumnTotalSize)(fts, 0, &mut tokens))?;
        ok(call!(xColumnSize)(fts, 0, &mut length))?;
        ok(call!(xInstCount)(fts, &mut instances))?;
    }
    let mut frequency = 0u32;
    for i in 0..instances {
        let (mut phrase, mut column, mut offset) = (0 as c_int, 0 as c_int, 0 as c_int);
        // SAFETY: as above; `i` is below the count FTS5 gave.
        ok(unsafe { call!(xInst)(fts, i, &mut phrase, &mut column, &mut offset) })?;
        if phrase == 0 {
            frequency += 1;
        }
    }
    let average = if rows > 0 { tokens as f64 / rows as f64 } else { 1.0 };
    let tf = f64::from(frequency);
    Ok(tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * f64::from(length) / average.max(1.0))))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Row ids of `query`'s matches, best first by `rank` (ties by row id).
    fn ranked(conn: &Connection, query: &str, rank: &str) -> Vec<i64> {
        let sql = format!("SELECT rowid FROM t WHERE t MATCH ?1 ORDER BY {rank}, rowid");
        let mut select = conn.prepare(&sql).unwrap();
        select.query_map([query], |r| r.get(0)).unwrap().collect::<Result<_, _>>().unwrap()
    }

    #[test]
    fn one_term_is_ranked_in_bm25s_order() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE VIRTUAL TABLE t USING fts5(words, content='', contentless_delete=1, detail=full)")
            .unwrap();
        register(&conn).unwrap();
        let texts = [
            "needle",
            "needle needle hay",
            "hay hay hay hay hay needle",
            "needle in a haystack needle again needle",
            "a needle pin",
            "pins and needles",
            "hay",
            "needle needle needle needle",
            "needle pin needle pin",
        ];
        for (i, text) in texts.iter().enumerate() {
            conn.execute("INSERT INTO t (rowid, words) VALUES (?1, ?2)", rusqlite::params![i as i64 + 1, text])
                .unwrap();
        }
        for query in ["\"needle\"", "\"needle pin\"", "\"pin\" *", "(\"needle\") NOT \"hay\""] {
            let ours = ranked(&conn, query, &format!("-{NAME}(t)"));
            assert_eq!(ours, ranked(&conn, query, "bm25(t)"), "{query}");
            assert!(!ours.is_empty(), "{query}");
        }
    }
}
