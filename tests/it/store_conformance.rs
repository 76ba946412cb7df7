//! The store conformance suite (tests/support/conformance.rs) for every backend: memory,
//! SQLite (a real file in a temporary directory) and PostgreSQL (a real server, a fresh
//! database per test).
//!
//! The PostgreSQL tests need `THREADKEEPER_TEST_PG`: run them with
//! `scripts/with-postgres cargo test --test it store_conformance`. Without it they fail, unless
//! `THREADKEEPER_SKIP_PG=1` skips them explicitly.

use crate::support::conformance::{Backing, MeasureSize, OpenAnother};
use futures_util::FutureExt;
use std::sync::Arc;
use threadkeeper::store::{open_store, StoreSpec};

async fn open(spec: &StoreSpec) -> Arc<dyn threadkeeper::store::Store> {
    open_store(spec, 10_000).await.unwrap_or_else(|e| panic!("cannot open {spec}: {e}"))
}

/// Every instance opens the store again from its spec.
fn reopen(spec: StoreSpec) -> OpenAnother {
    Arc::new(move || {
        let spec = spec.clone();
        async move { open(&spec).await }.boxed()
    })
}

mod memory {
    use super::*;

    async fn backing(_test: &'static str) -> Option<Backing> {
        Some(Backing::memory())
    }
    conformance_suite!(backing);
}

mod sqlite {
    use super::*;

    async fn backing(_test: &'static str) -> Option<Backing> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("threads.sqlite3");
        let spec = StoreSpec::Sqlite { path: Some(path.clone()) };
        let store = open(&spec).await;
        Some(Backing::new("sqlite", store, Some(reopen(spec)), dir).measured_by(file_size(path)))
    }

    /// The database file's size once its write-ahead log is copied into it.
    fn file_size(path: std::path::PathBuf) -> MeasureSize {
        Arc::new(move || {
            let path = path.clone();
            async move {
                tokio::task::spawn_blocking(move || {
                    let conn = rusqlite::Connection::open(&path).unwrap();
                    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).unwrap();
                    std::fs::metadata(&path).unwrap().len()
                })
                .await
                .unwrap()
            }
            .boxed()
        })
    }
    conformance_suite!(backing);
}

mod postgres_store {
    use super::*;
    use crate::support::postgres::{database_url, ScratchDatabase};

    async fn backing(test: &'static str) -> Option<Backing> {
        let url = database_url(&format!("postgres_store::{test}"))?;
        let database = ScratchDatabase::create(&url).await;
        let spec = StoreSpec::Postgres { url: database.url.clone() };
        let store = open(&spec).await;
        let size = tables_size(database.url.clone());
        Some(Backing::new("postgres", store, Some(reopen(spec)), database).measured_by(size))
    }

    /// What threadkeeper's tables take on disk: their pages, their indexes' and their TOAST's
    /// (the main forks; the free space and visibility maps come and go with autovacuum). All but
    /// the thread rows, which every change rewrites (a dead version each until vacuum, pruned
    /// or not as concurrent snapshots allow): a cost of changes, not of what they name.
    fn tables_size(url: String) -> MeasureSize {
        Arc::new(move || {
            let url = url.clone();
            async move {
                let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.unwrap();
                let connection = tokio::spawn(connection);
                let sql = "WITH ours AS (
                               SELECT oid, reltoastrelid FROM pg_class
                               WHERE relname LIKE 'threadkeeper%' AND relname NOT LIKE 'threadkeeper_threads%')
                           SELECT sum(pg_relation_size(oid))::bigint FROM (
                               SELECT oid FROM ours
                               UNION SELECT reltoastrelid FROM ours WHERE reltoastrelid <> 0
                               UNION SELECT i.indexrelid FROM pg_index i JOIN ours ON i.indrelid = ours.reltoastrelid
                           ) AS relations";
                let size: i64 = client.query_one(sql, &[]).await.unwrap().get(0);
                drop(client);
                let _ = connection.await;
                size as u64
            }
            .boxed()
        })
    }
    conformance_suite!(backing);
}

#[test]
fn scratch_database_urls_keep_everything_but_the_name() {
    use crate::support::postgres::with_database;
    assert_eq!(with_database("postgres://u@h:5/db", "x"), "postgres://u@h:5/x");
    assert_eq!(with_database("postgresql://u:p@h/db?sslmode=disable", "x"), "postgresql://u:p@h/x?sslmode=disable");
    assert_eq!(with_database("postgres://u@h", "x"), "postgres://u@h/x");
    assert_eq!(with_database("postgres://u@h?connect_timeout=3", "x"), "postgres://u@h/x?connect_timeout=3");
}

/// A SQLite file from before search (schema 3) gains the index when a newer server opens it,
/// built from the events it holds.
#[test]
fn an_existing_sqlite_store_gets_a_search_index_on_open() {
    use threadkeeper::search::parse_query;
    use threadkeeper::store::{OpenThread, SearchRequest, SqliteStore, Store};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.sqlite3");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let request = || SearchRequest {
        query: parse_query("needle").unwrap(),
        limit: 10,
        offset: 0,
        thread_ids: None,
        types: None,
        since: None,
        until: None,
    };
    runtime.block_on(async {
        let store = SqliteStore::open(&path).unwrap();
        store.open(OpenThread { thread_id: "old".into(), now: 1, ..Default::default() }).await.unwrap();
        let body = r#"{"type":"message","role":"user","content":"a needle here","iteration":1}"#;
        let mut log = threadkeeper::event_log::EventLogBuilder::new();
        log.push_validated(body);
        store.append("old", None, &log.finish(), 2).await.unwrap();
    });
    // Back to schema 3: no index, as an older server left the file.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "DROP INDEX threads_pending_index; ALTER TABLE threads DROP COLUMN indexed_count;
         DROP TABLE search_index; PRAGMA user_version = 3;",
    )
    .unwrap();
    drop(conn);
    runtime.block_on(async {
        let store = SqliteStore::open(&path).unwrap();
        let page = store.search(request()).await.unwrap();
        assert_eq!(page.hits.len(), 1, "the old event is found");
        assert_eq!((page.hits[0].thread_id.as_str(), page.hits[0].event_index), ("old", 0));
    });
}
