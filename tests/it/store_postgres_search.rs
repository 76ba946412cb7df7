//! PostgreSQL's search index trailing the events (`pending_index`): a search sees every event
//! appended before it by any server, the index catches up while a server is idle, pops and
//! deletes leave no stale vector, and databases of schema 5 and 4 upgrade.
//!
//! Each test has a scratch database of its own, so that what is pending is its own doing.

use crate::support::conformance::log_of;
use crate::support::events::user;
use crate::support::postgres::{admin, database_url, runtime, ScratchDatabase};
use crate::support::search::{hits, quokka, request};
use crate::support::{Server, Wire};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};
use threadkeeper::store::{OpenThread, PostgresStore, Store};

/// The hits of `query` through the library, sorted.
async fn found(store: &PostgresStore, query: &str) -> Vec<(String, u64)> {
    let mut hits: Vec<(String, u64)> =
        store.search(request(query)).await.unwrap().hits.into_iter().map(|h| (h.thread_id, h.event_index)).collect();
    hits.sort();
    hits
}

/// One number from the database.
fn number(url: &str, sql: &str) -> i64 {
    let (url, sql) = (url.to_owned(), sql.to_owned());
    // Its own thread and runtime: callers may be inside another runtime.
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async {
            let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await.unwrap();
            let connection = tokio::spawn(connection);
            let value: i64 = client.query_one(&sql, &[]).await.unwrap_or_else(|e| panic!("{sql}: {e}")).get(0);
            drop(client);
            let _ = connection.await;
            value
        })
    })
    .join()
    .unwrap()
}

/// Events the index does not hold yet.
fn pending_events(url: &str) -> i64 {
    number(url, "SELECT coalesce(sum(event_count - indexed_count), 0)::bigint FROM threadkeeper_threads")
}

/// Vectors that should not be there (of an event gone, or past the thread's indexed count) plus
/// indexed events without one: zero when the index is exact.
fn index_errors(url: &str) -> i64 {
    number(
        url,
        "SELECT (SELECT count(*) FROM threadkeeper_event_search s
                 LEFT JOIN threadkeeper_events e ON e.thread_key = s.thread_key AND e.seq = s.seq
                 LEFT JOIN threadkeeper_threads t ON t.thread_key = s.thread_key
                 WHERE e.seq IS NULL OR t.thread_key IS NULL OR s.seq >= t.indexed_count OR t.indexed_count > t.event_count)
              + (SELECT count(*) FROM threadkeeper_events e
                 JOIN threadkeeper_threads t ON t.thread_key = e.thread_key
                 WHERE e.seq < t.indexed_count AND NOT EXISTS (
                     SELECT 1 FROM threadkeeper_event_search s WHERE s.thread_key = e.thread_key AND s.seq = e.seq))",
    )
}

/// Waits (up to 10 s) for the servers to have indexed everything while idle.
fn wait_until_indexed(url: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while pending_events(url) > 0 {
        assert!(Instant::now() < deadline, "still {} events pending after 10 s idle", pending_events(url));
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_search_sees_what_another_server_appended_just_before() {
    let Some(url) = database_url("a_search_sees_what_another_server_appended_just_before") else { return };
    let scratch = runtime().block_on(ScratchDatabase::create(&url));
    let mut writer = Server::start(Wire::Ndjson, &scratch.url);
    let mut reader = Server::start(Wire::Ndjson, &scratch.url);
    writer.ok("thread/open", json!({"threadId": "w"}));
    writer.ok("thread/append", json!({"threadId": "w", "events": [quokka(1), quokka(2)]}));
    assert_eq!(hits(&mut reader, "quokka"), [("w".to_owned(), 0), ("w".to_owned(), 1)]);
    assert_eq!(pending_events(&scratch.url), 0, "the search indexed what it found pending");
    writer.ok("thread/pop", json!({"threadId": "w", "count": 1}));
    writer.ok("thread/append", json!({"threadId": "w", "events": [user("a wombat", 3)]}));
    assert_eq!(hits(&mut reader, "quokka"), [("w".to_owned(), 0)], "the popped event is no longer found");
    assert_eq!(hits(&mut reader, "wombat"), [("w".to_owned(), 1)], "the event in its place is");
    assert_eq!(index_errors(&scratch.url), 0);
    assert!(writer.stop().success());
    assert!(reader.stop().success());
}

#[test]
fn the_index_catches_up_while_the_server_is_idle() {
    let Some(url) = database_url("the_index_catches_up_while_the_server_is_idle") else { return };
    let scratch = runtime().block_on(ScratchDatabase::create(&url));
    let mut server = Server::start(Wire::Ndjson, &scratch.url);
    server.ok("thread/open", json!({"threadId": "idle"}));
    for n in 0..20 {
        server.ok("thread/append", json!({"threadId": "idle", "events": [quokka(n), quokka(n)]}));
    }
    server.ok("thread/fork", json!({"threadId": "idle", "newThreadId": "idle-fork"}));
    wait_until_indexed(&scratch.url);
    assert_eq!(index_errors(&scratch.url), 0);
    assert_eq!(hits(&mut server, "quokka").len(), 80, "the thread's 40 events and the fork's 40");
    server.ok("thread/pop", json!({"threadId": "idle", "count": 10}));
    assert_eq!(hits(&mut server, "quokka").len(), 70, "popped events are no longer found");
    assert_eq!(index_errors(&scratch.url), 0);
    assert!(server.stop().success());
}

#[test]
fn pops_and_deletes_after_indexing_leave_no_stale_hits() {
    let Some(url) = database_url("pops_and_deletes_after_indexing_leave_no_stale_hits") else { return };
    let rt = runtime();
    let scratch = rt.block_on(ScratchDatabase::create(&url));
    rt.block_on(async {
        let store = PostgresStore::connect(&scratch.url).await.unwrap();
        for id in ["a", "b"] {
            store.open(OpenThread { thread_id: id.into(), now: 1, ..Default::default() }).await.unwrap();
            store.append(id, None, &log_of(&[quokka(1), quokka(2), quokka(3)]), 2).await.unwrap();
        }
        assert_eq!(store.index_pending().await.unwrap(), 6);
        // The popped events' places are taken by others: the old vectors must not answer for them.
        store.pop("a", None, 2, 3).await.unwrap();
        store.append("a", None, &log_of(&[user("a wombat", 4), user("a wombat", 5)]), 4).await.unwrap();
        assert_eq!(store.index_pending().await.unwrap(), 2);
        assert_eq!(found(&store, "quokka").await.iter().filter(|(t, _)| t == "a").count(), 1);
        assert_eq!(found(&store, "wombat").await, [("a".to_owned(), 1), ("a".to_owned(), 2)]);
        // A pop of pending events only (nothing of them indexed) leaves the indexed ones.
        store.append("a", None, &log_of(&[quokka(6)]), 5).await.unwrap();
        store.pop("a", None, 1, 6).await.unwrap();
        assert_eq!(found(&store, "quokka").await.iter().filter(|(t, _)| t == "a").count(), 1);
        // Deleted and made again: the old thread's events are not found under the new one.
        assert!(store.delete("b").await.unwrap());
        store.open(OpenThread { thread_id: "b".into(), now: 7, ..Default::default() }).await.unwrap();
        store.append("b", None, &log_of(&[user("a wombat", 1)]), 8).await.unwrap();
        assert_eq!(found(&store, "quokka").await, [("a".to_owned(), 0)]);
        assert_eq!(found(&store, "wombat").await, [("a".to_owned(), 1), ("a".to_owned(), 2), ("b".to_owned(), 0)]);
    });
    assert_eq!(index_errors(&scratch.url), 0);
}

/// More events pending in one thread than a catch-up indexes in a transaction: the search
/// indexes them all, batch after batch, before it reads.
#[test]
fn a_search_indexes_a_backlog_larger_than_a_batch() {
    let Some(url) = database_url("a_search_indexes_a_backlog_larger_than_a_batch") else { return };
    let rt = runtime();
    let scratch = rt.block_on(ScratchDatabase::create(&url));
    rt.block_on(async {
        let events: Vec<Value> = (0..4_500).map(quokka).collect();
        {
            let writer = PostgresStore::connect(&scratch.url).await.unwrap();
            writer.open(OpenThread { thread_id: "big".into(), now: 1, ..Default::default() }).await.unwrap();
            writer.append("big", None, &log_of(&events), 2).await.unwrap();
        }
        let reader = PostgresStore::connect(&scratch.url).await.unwrap();
        let mut page = request("quokka");
        page.thread_ids = Some(vec!["big".to_owned()]);
        page.limit = 1;
        assert_eq!(reader.search(page).await.unwrap().hits.len(), 1);
        assert_eq!(pending_events(&scratch.url), 0, "every batch indexed before the search read");
    });
    assert_eq!(index_errors(&scratch.url), 0);
}

/// Appends and pops of one store race another store's catch-ups and searches: the index ends
/// exact (no vector of a popped event, every indexed event with its own).
#[test]
fn catch_ups_racing_pops_and_appends_leave_the_index_exact() {
    let Some(url) = database_url("catch_ups_racing_pops_and_appends_leave_the_index_exact") else { return };
    let rt = runtime();
    let scratch = rt.block_on(ScratchDatabase::create(&url));
    rt.block_on(async {
        let writer = Arc::new(PostgresStore::connect(&scratch.url).await.unwrap());
        let indexer = Arc::new(PostgresStore::connect(&scratch.url).await.unwrap());
        let threads: Vec<String> = (0..4).map(|t| format!("race-{t}")).collect();
        for id in &threads {
            writer.open(OpenThread { thread_id: id.clone(), now: 1, ..Default::default() }).await.unwrap();
        }
        let writes = threads.iter().cloned().map(|id| {
            let writer = writer.clone();
            tokio::spawn(async move {
                for round in 0..20u64 {
                    let words = [user("a quokka", round), user("a wombat", round), user("a numbat", round)];
                    writer.append(&id, None, &log_of(&words), 2 + round).await.unwrap();
                    writer.pop(&id, None, 2, 2 + round).await.unwrap();
                }
            })
        });
        let writes: Vec<_> = writes.collect();
        let catch_ups = {
            let indexer = indexer.clone();
            tokio::spawn(async move {
                for _ in 0..30 {
                    indexer.index_pending().await.unwrap();
                    found(&indexer, "wombat").await;
                }
            })
        };
        for write in writes {
            write.await.unwrap();
        }
        catch_ups.await.unwrap();
        // Each round left its quokka; the wombats and numbats were popped.
        assert_eq!(found(&indexer, "quokka").await.len(), 4 * 20);
        assert!(found(&indexer, "wombat").await.is_empty());
        assert!(found(&indexer, "numbat").await.is_empty());
    });
    assert_eq!(index_errors(&scratch.url), 0);
}

/// Threads with a few events, indexed: the database a test then turns into an older schema's.
fn indexed_database(rt: &tokio::runtime::Runtime, url: &str) -> ScratchDatabase {
    let scratch = rt.block_on(ScratchDatabase::create(url));
    rt.block_on(async {
        let store = PostgresStore::connect(&scratch.url).await.unwrap();
        store.open(OpenThread { thread_id: "old".into(), now: 1, ..Default::default() }).await.unwrap();
        store.append("old", None, &log_of(&[quokka(1), user("a wombat", 2), quokka(3)]), 2).await.unwrap();
        store.index_pending().await.unwrap();
    });
    scratch
}

fn schema_version(url: &str) -> i64 {
    number(url, "SELECT version FROM threadkeeper_schema")
}

fn events_have_a_search_column(url: &str) -> bool {
    number(
        url,
        "SELECT count(*) FROM information_schema.columns
         WHERE table_name = 'threadkeeper_events' AND column_name = 'search'",
    ) > 0
}

/// A database of schema 5 (the vectors in the events' `search` column, written by the append)
/// keeps its vectors, moved to their own table, with nothing left pending.
#[test]
fn a_database_of_schema_5_moves_its_vectors_out_of_the_events() {
    let Some(url) = database_url("a_database_of_schema_5_moves_its_vectors_out_of_the_events") else { return };
    let rt = runtime();
    let scratch = indexed_database(&rt, &url);
    rt.block_on(admin(
        &scratch.url,
        "ALTER TABLE threadkeeper_events ADD COLUMN search tsvector;
         UPDATE threadkeeper_events e SET search = s.search FROM threadkeeper_event_search s
             WHERE s.thread_key = e.thread_key AND s.seq = e.seq;
         CREATE INDEX threadkeeper_events_search ON threadkeeper_events USING gin (search) WITH (fastupdate = on);
         DROP TABLE threadkeeper_event_search;
         ALTER TABLE threadkeeper_threads DROP COLUMN indexed_count;
         UPDATE threadkeeper_schema SET version = 5;
         -- A word only the stored vector holds: found after the upgrade only if it was moved.
         UPDATE threadkeeper_events SET search = search || 'moved'::tsvector WHERE seq = 1;",
    ));
    rt.block_on(async {
        let store = PostgresStore::connect(&scratch.url).await.unwrap();
        assert_eq!(schema_version(&scratch.url), 6);
        assert_eq!(pending_events(&scratch.url), 0, "schema 5 had indexed every event");
        assert!(!events_have_a_search_column(&scratch.url));
        assert_eq!(found(&store, "moved").await, [("old".to_owned(), 1)]);
        assert_eq!(found(&store, "quokka").await, [("old".to_owned(), 0), ("old".to_owned(), 2)]);
        store.append("old", None, &log_of(&[quokka(4)]), 3).await.unwrap();
        assert_eq!(found(&store, "quokka").await.len(), 3);
    });
    assert_eq!(index_errors(&scratch.url), 0);
}

/// A database from before the index (schema 4) is indexed once, while the server connects.
#[test]
fn a_database_of_schema_4_is_indexed_on_upgrade() {
    let Some(url) = database_url("a_database_of_schema_4_is_indexed_on_upgrade") else { return };
    let rt = runtime();
    let scratch = indexed_database(&rt, &url);
    rt.block_on(admin(
        &scratch.url,
        "DROP TABLE threadkeeper_event_search; ALTER TABLE threadkeeper_threads DROP COLUMN indexed_count;
         UPDATE threadkeeper_schema SET version = 4",
    ));
    rt.block_on(async {
        let store = PostgresStore::connect(&scratch.url).await.unwrap();
        assert_eq!(schema_version(&scratch.url), 6);
        assert_eq!(pending_events(&scratch.url), 0, "indexed in the migration");
        assert!(!events_have_a_search_column(&scratch.url));
        assert_eq!(found(&store, "wombat").await, [("old".to_owned(), 1)]);
    });
    assert_eq!(index_errors(&scratch.url), 0);
}
