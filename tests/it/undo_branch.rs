//! Undo and branch through the real server: `thread/events` tail, `thread/pop`, `thread/fork`,
//! renders after a pop, and a database from before the version log.

use crate::support::events::{numbered_event, sample_events};
use crate::support::{Server, Wire};
use serde_json::{json, Value};

/// Every rendering a client can ask for, as text.
fn renders(server: &mut Server, thread: &str) -> Vec<String> {
    let mut seen = Vec::new();
    for (format, options) in [
        ("xml", json!({})),
        ("xml", json!({"escape": "minimal", "responsePrefix": "go"})),
        ("xml", json!({"fromEvent": 0})),
        ("messages", json!({})),
        ("messages", json!({"contextMode": "xml"})),
        ("messages", json!({"danglingToolCalls": "drop"})),
        ("text", json!({})),
        ("openai-chat", json!({})),
        ("anthropic", json!({"contextMode": "xml"})),
    ] {
        let mut rendered =
            server.ok("thread/render", json!({"threadId": thread, "format": format, "options": options}));
        rendered.as_object_mut().unwrap().remove("version");
        seen.push(format!("{format} {options}: {rendered}"));
    }
    seen
}

fn events_of(server: &mut Server, thread: &str) -> Vec<Value> {
    server.ok("thread/events", json!({"threadId": thread}))["events"].as_array().unwrap().clone()
}

/// A thread of `events` appended in one call to a fresh id, for comparison.
fn fresh_thread(server: &mut Server, id: &str, events: &[Value]) {
    server.ok("thread/open", json!({"threadId": id}));
    server.ok("thread/append", json!({"threadId": id, "events": events}));
}

#[test]
fn tail_gives_the_last_events() {
    let mut server = Server::start(Wire::Ndjson, "memory");
    fresh_thread(&mut server, "t", &sample_events());
    let tail = server.ok("thread/events", json!({"threadId": "t", "tail": 2}));
    assert_eq!(tail, json!({"version": 1, "eventCount": 5, "events": sample_events()[3..]}));
    assert_eq!(server.ok("thread/events", json!({"threadId": "t", "tail": 0}))["events"], json!([]));
    assert_eq!(server.ok("thread/events", json!({"threadId": "t", "tail": 99}))["events"], json!(sample_events()));
    for other in [json!({"offset": 0}), json!({"limit": 1})] {
        let mut params = json!({"threadId": "t", "tail": 1});
        params.as_object_mut().unwrap().extend(other.as_object().unwrap().clone());
        let error = server.err("thread/events", params);
        assert_eq!(error["code"], -32602);
        assert_eq!(
            error["data"],
            json!({"path": "tail", "reason": "not with offset or limit (tail counts from the end)"})
        );
    }
}

#[test]
fn renders_after_a_pop_are_those_of_the_events_left() {
    let mut server = Server::start(Wire::Ndjson, "memory");
    let events: Vec<Value> = sample_events().into_iter().chain((0..4).map(|i| numbered_event(5, i))).collect();
    fresh_thread(&mut server, "t", &events);
    // Render first, so the thread keeps incremental renderers that a pop must not reuse.
    renders(&mut server, "t");
    let mut left = events.len();
    for (round, count) in [1usize, 3, 2, 3].into_iter().enumerate() {
        let popped = server.ok("thread/pop", json!({"threadId": "t", "count": count, "expectedVersion": round + 1}));
        assert_eq!(popped, json!({"events": events[left - count..left], "version": round + 2}));
        left -= count;
        assert_eq!(events_of(&mut server, "t"), events[..left].to_vec());
        let id = format!("fresh-{round}");
        fresh_thread(&mut server, &id, &events[..left]);
        assert_eq!(renders(&mut server, "t"), renders(&mut server, &id), "after popping to {left} events");
    }
    // Appends after pops render as if the thread had always been so.
    server.ok("thread/append", json!({"threadId": "t", "events": events[..2]}));
    fresh_thread(&mut server, "fresh-end", &[&events[..left], &events[..2]].concat());
    assert_eq!(renders(&mut server, "t"), renders(&mut server, "fresh-end"));
    // The default count is one.
    let popped = server.ok("thread/pop", json!({"threadId": "t"}));
    assert_eq!(popped, json!({"events": [events[1]], "version": 7}));
}

#[test]
fn pop_errors_name_what_and_change_nothing() {
    let mut server = Server::start(Wire::Ndjson, "memory");
    fresh_thread(&mut server, "t", &sample_events()[..2]);
    let error = server.err("thread/pop", json!({"threadId": "t", "count": 3}));
    assert_eq!(
        error,
        json!({"code": -32602, "message": "invalid params: count: the thread has 2 events, fewer than 3",
               "data": {"path": "count", "reason": "the thread has 2 events, fewer than 3"}})
    );
    let error = server.err("thread/pop", json!({"threadId": "t", "expectedVersion": 0}));
    assert_eq!(error["code"], -32003);
    assert_eq!(error["data"], json!({"threadId": "t", "currentVersion": 1}));
    assert_eq!(server.err("thread/pop", json!({"threadId": "t", "count": 0}))["data"]["path"], "count");
    assert_eq!(server.err("thread/pop", json!({"threadId": "nope"}))["code"], -32001);
    assert_eq!(server.err("thread/pop", json!({"threadId": "t", "count": -1}))["data"]["path"], "count");
    assert_eq!(events_of(&mut server, "t"), sample_events()[..2].to_vec());
    assert_eq!(server.ok("thread/events", json!({"threadId": "t"}))["version"], 1);
}

#[test]
fn fork_answers_the_new_thread() {
    let mut server = Server::start(Wire::Ndjson, "memory");
    server
        .ok("thread/open", json!({"threadId": "src", "settings": {"instructions": "Be brief."}, "metadata": {"a": 1}}));
    server.ok("thread/append", json!({"threadId": "src", "events": sample_events()[..3]}));
    server.ok("thread/append", json!({"threadId": "src", "events": sample_events()[3..]}));
    let mut fork = server.ok("thread/fork", json!({"threadId": "src", "atVersion": 1, "newThreadId": "branch"}));
    assert!(fork["createdAt"].as_u64().is_some() && fork["createdAt"] == fork["updatedAt"]);
    fork.as_object_mut().unwrap().retain(|k, _| k != "createdAt" && k != "updatedAt");
    assert_eq!(
        fork,
        json!({"threadId": "branch", "version": 1, "eventCount": 3,
               "settings": {"instructions": "Be brief."}, "metadata": {"a": 1}})
    );
    assert_eq!(
        renders(&mut server, "branch")[..],
        {
            fresh_thread(&mut server, "same", &sample_events()[..3]);
            server.ok("thread/open", json!({"threadId": "same", "settings": {"instructions": "Be brief."}}));
            renders(&mut server, "same")
        }[..]
    );
    // A new id when none is given; metadata replaced when given.
    let fork = server.ok("thread/fork", json!({"threadId": "src", "atEvent": 1, "metadata": {"b": 2}}));
    assert!(fork["threadId"].as_str().unwrap().starts_with("t-"), "{fork}");
    assert_eq!((fork["eventCount"].clone(), fork["metadata"].clone()), (json!(1), json!({"b": 2})));
    assert_eq!(server.ok("thread/fork", json!({"threadId": "src", "newThreadId": "whole"}))["eventCount"], 5);

    let exists = server.err("thread/fork", json!({"threadId": "src", "newThreadId": "branch"}));
    assert_eq!(
        exists,
        json!({"code": -32006,
               "message": "thread exists: thread \"branch\" already exists; pass newThreadId to fork under another id",
               "data": {"threadId": "branch"}})
    );
    let both = server.err("thread/fork", json!({"threadId": "src", "atVersion": 1, "atEvent": 1}));
    assert_eq!(both["data"], json!({"path": "atEvent", "reason": "not with atVersion (give one fork point)"}));
    let ahead = server.err("thread/fork", json!({"threadId": "src", "atVersion": 3, "newThreadId": "x"}));
    assert_eq!(ahead["data"], json!({"path": "atVersion", "reason": "the thread is at version 2, before 3"}));
    let bad_id = server.err("thread/fork", json!({"threadId": "src", "newThreadId": "a b"}));
    assert_eq!(bad_id["data"]["path"], "threadId");
    assert_eq!(server.err("thread/fork", json!({"threadId": "nope"}))["code"], -32001);
    let listed = server.ok("thread/list", json!({}))["threads"].as_array().unwrap().len();
    assert_eq!(listed, 5, "src, branch, same, the unnamed fork and whole");
}

/// The schema of the first release, as its files hold it.
const SCHEMA_1: &str = "
    CREATE TABLE threads (
        thread_key  INTEGER PRIMARY KEY AUTOINCREMENT,
        thread_id   TEXT NOT NULL UNIQUE,
        version     INTEGER NOT NULL,
        event_count INTEGER NOT NULL,
        settings    TEXT NOT NULL,
        metadata    TEXT NOT NULL,
        created_at  INTEGER NOT NULL,
        updated_at  INTEGER NOT NULL
    );
    CREATE TABLE events (
        thread_key INTEGER NOT NULL,
        seq        INTEGER NOT NULL,
        body       TEXT NOT NULL,
        PRIMARY KEY (thread_key, seq)
    ) WITHOUT ROWID;
    PRAGMA application_id = 1416320104;
    PRAGMA user_version = 1;";

#[test]
fn a_database_of_schema_1_opens_and_can_pop_and_fork() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(SCHEMA_1).unwrap();
        conn.execute(
            "INSERT INTO threads VALUES (1, 'old', 3, 3, '{}', '{\"k\":1}', 1700000000000, 1700000000001)",
            [],
        )
        .unwrap();
        for (seq, event) in sample_events()[..3].iter().enumerate() {
            conn.execute("INSERT INTO events VALUES (1, ?1, ?2)", rusqlite::params![seq as i64, event.to_string()])
                .unwrap();
        }
    }
    let store = format!("sqlite:{}", path.display());
    let mut server = Server::start(Wire::Ndjson, &store);
    assert_eq!(events_of(&mut server, "old"), sample_events()[..3].to_vec());
    // Versions before the upgrade are unknown; the one it found, and later ones, are known.
    let unknown = server.err("thread/fork", json!({"threadId": "old", "atVersion": 2, "newThreadId": "f"}));
    assert_eq!(
        unknown["data"],
        json!({"path": "atVersion",
               "reason": "version 2 is not recorded (the database was upgraded after it); fork atEvent instead"})
    );
    assert_eq!(server.ok("thread/fork", json!({"threadId": "old", "atEvent": 2, "newThreadId": "f"}))["eventCount"], 2);
    assert_eq!(server.ok("thread/pop", json!({"threadId": "old", "expectedVersion": 3}))["version"], 4);
    assert_eq!(
        server.ok("thread/fork", json!({"threadId": "old", "atVersion": 4, "newThreadId": "g"}))["eventCount"],
        2
    );
    assert!(server.stop().success());

    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    // Migrated all the way: versions (2), blobs (3), the search index (4), its pending list (5).
    assert_eq!(version, 5);
    let mut server = Server::start(Wire::Ndjson, &store);
    assert_eq!(events_of(&mut server, "old"), sample_events()[..2].to_vec());
    assert_eq!(events_of(&mut server, "g"), sample_events()[..2].to_vec());
}

mod model {
    //! Random appends, pops and forks against a model that keeps every version's events, so
    //! `atVersion` is checked against what the thread really held then.
    use crate::support::conformance::{log, numbered};
    use proptest::prelude::*;
    use threadkeeper::store::{ForkPoint, ForkThread, MemoryStore, SqliteStore, Store, StoreError};

    #[derive(Clone, Debug)]
    enum Op {
        Append(u64),
        Pop(u64),
        ForkAtEvent(u64),
        ForkAtVersion(u64),
        ForkWhole,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0u64..4).prop_map(Op::Append),
            2 => (0u64..4).prop_map(Op::Pop),
            1 => (0u64..8).prop_map(Op::ForkAtEvent),
            2 => (0u64..12).prop_map(Op::ForkAtVersion),
            1 => Just(Op::ForkWhole),
        ]
    }

    fn texts(events: &threadkeeper::event_log::EventLog) -> Vec<String> {
        events.iter().map(str::to_owned).collect()
    }

    /// Runs `ops` on `store` and checks every answer against the model.
    async fn check(store: &dyn Store, ops: &[Op]) -> Result<(), TestCaseError> {
        store
            .open(threadkeeper::store::OpenThread { thread_id: "t".into(), now: 1, ..Default::default() })
            .await
            .unwrap();
        // The thread's events after each version, as event texts; version 0 is empty.
        let mut states: Vec<Vec<String>> = vec![vec![]];
        for (n, op) in ops.iter().enumerate() {
            let current = states.last().unwrap().clone();
            let version = states.len() as u64 - 1;
            let fork_id = format!("f{n}");
            let expected_prefix = match *op {
                Op::Append(count) => {
                    let batch: Vec<_> = (0..count).map(|i| numbered(n as u64, i)).collect();
                    let batch = log(&batch);
                    let appended = store.append("t", None, &batch, 1).await.unwrap();
                    states.push([current, texts(&batch)].concat());
                    prop_assert_eq!(appended.version, version + 1);
                    None
                }
                Op::Pop(count) => {
                    match store.pop("t", Some(version), count, 1).await {
                        Ok(popped) => {
                            prop_assert!(
                                count >= 1 && count as usize <= current.len(),
                                "popped {count} of {}",
                                current.len()
                            );
                            let keep = current.len() - count as usize;
                            prop_assert_eq!(texts(&popped.events), current[keep..].to_vec());
                            prop_assert_eq!(popped.version, version + 1);
                            states.push(current[..keep].to_vec());
                        }
                        Err(StoreError::OutOfRange { field: "count", .. }) => {
                            prop_assert!(count == 0 || count as usize > current.len());
                        }
                        Err(e) => return Err(TestCaseError::fail(format!("pop: {e}"))),
                    }
                    None
                }
                Op::ForkWhole => Some((ForkPoint::Whole, Some(current.clone()))),
                Op::ForkAtEvent(at) => {
                    Some((ForkPoint::Events(at), current.get(..at as usize).map(<[String]>::to_vec)))
                }
                Op::ForkAtVersion(at) => {
                    // Possible only while that version's events are still the thread's first ones.
                    let then = states.get(at as usize).filter(|then| current.starts_with(then)).cloned();
                    Some((ForkPoint::Version(at), then))
                }
            };
            if let Some((at, expected)) = expected_prefix {
                let request =
                    ForkThread { source_id: "t".into(), at, thread_id: fork_id.clone(), metadata: None, now: 1 };
                match (store.fork(request).await, expected) {
                    (Ok(record), Some(expected)) => {
                        let (_, events) = store.events_from(&fork_id, 0).await.unwrap();
                        prop_assert_eq!(texts(&events), expected.clone(), "{:?}", at);
                        prop_assert_eq!(
                            (record.version, record.event_count),
                            (u64::from(!expected.is_empty()), expected.len() as u64)
                        );
                    }
                    (Err(StoreError::OutOfRange { .. }), None) => {}
                    (got, expected) => {
                        return Err(TestCaseError::fail(format!("fork {at:?}: got {got:?}, expected {expected:?}")))
                    }
                }
            }
            let (record, events) = store.events_from("t", 0).await.unwrap();
            prop_assert_eq!(texts(&events), states.last().unwrap().clone());
            prop_assert_eq!(record.version, states.len() as u64 - 1);
        }
        Ok(())
    }

    fn run(store: impl FnOnce() -> Box<dyn Store>, ops: &[Op]) -> Result<(), TestCaseError> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let store = store();
        runtime.block_on(check(&*store, ops))
    }

    proptest! {
        #[test]
        fn the_memory_store_keeps_to_the_model(ops in prop::collection::vec(op(), 1..40)) {
            run(|| Box::new(MemoryStore::new(1000)), &ops)?;
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
        #[test]
        fn the_sqlite_store_keeps_to_the_model(ops in prop::collection::vec(op(), 1..30)) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t.db");
            run(|| Box::new(SqliteStore::open(&path).unwrap()), &ops)?;
        }
    }
}

/// Compaction rounds are events too: popping a round's summaries undoes the round, and a fork
/// of a compacted thread shows the same compacted view.
#[test]
fn a_compaction_round_can_be_popped_and_forked() {
    let mut server = Server::start(Wire::Ndjson, "memory");
    let events: Vec<Value> = (0..6).flat_map(|i| [numbered_event(i, 0), numbered_event(i, 1)]).collect();
    fresh_thread(&mut server, "t", &events);
    let before = renders(&mut server, "t");
    let plan = server.ok("thread/planCompaction", json!({"threadId": "t", "keepRecentIterations": 2}));
    let summaries: Vec<Value> = plan["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|it| json!({"iteration": it["iteration"], "summary": format!("did {}", it["iteration"])}))
        .collect();
    assert!(!summaries.is_empty());
    server.ok(
        "thread/compact",
        json!({"threadId": "t", "summaries": summaries, "keepRecentIterations": 2, "expectedVersion": 1}),
    );
    let compacted = renders(&mut server, "t");
    assert_ne!(compacted, before, "the round changes what the model sees");

    let fork = server.ok("thread/fork", json!({"threadId": "t", "newThreadId": "copy"}));
    assert_eq!(fork["threadId"], "copy");
    assert_eq!(renders(&mut server, "copy"), compacted);

    server.ok("thread/pop", json!({"threadId": "t", "count": summaries.len()}));
    assert_eq!(events_of(&mut server, "t"), events);
    assert_eq!(renders(&mut server, "t"), before, "popping the round's summaries undoes it");
    assert_eq!(renders(&mut server, "copy"), compacted, "the fork keeps its own events");
}
