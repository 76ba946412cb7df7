//! The first request on a fresh fork of a long thread builds the fork's state from the shared
//! events. That build runs off the reader in every store: a request sent meanwhile is answered
//! first, and a cancel for the first request is answered `-32800` before a build of the same
//! size finishes. Asserted by the order of the answers, never by time.

use crate::support::events::user;
use crate::support::postgres::database_url;
use crate::support::{Server, Wire};
use serde_json::{json, Value};

/// Long enough that building its state takes far longer than answering a small request.
const EVENTS: usize = 200_000;
const EVENTS_PER_APPEND: usize = 50_000;

/// A server on `store` holding thread `{prefix}big` of [`EVENTS`] events.
fn server_with_a_long_thread(wire: Wire, store: &str, prefix: &str) -> Server {
    let mut s = Server::start(wire, store);
    let big = format!("{prefix}big");
    s.ok("thread/open", json!({"threadId": big}));
    for batch in 0..EVENTS / EVENTS_PER_APPEND {
        let events: Vec<Value> =
            (0..EVENTS_PER_APPEND).map(|i| user(&format!("message {batch}-{i}"), (i / 100) as u64)).collect();
        s.ok("thread/append", json!({"threadId": big, "events": events}));
    }
    s
}

fn fork(s: &mut Server, prefix: &str, name: &str) -> String {
    let id = format!("{prefix}{name}");
    let info = s.ok("thread/fork", json!({"threadId": format!("{prefix}big"), "newThreadId": id}));
    assert_eq!(info["eventCount"], EVENTS as u64, "{info}");
    id
}

/// The ids of the next `n` answers, in the order they arrived, and the answers by id.
fn answers(s: &mut Server, n: usize) -> (Vec<u64>, std::collections::HashMap<u64, Value>) {
    let mut order = Vec::new();
    let mut by_id = std::collections::HashMap::new();
    for _ in 0..n {
        let answer = s.recv().expect("an answer");
        let id = answer["id"].as_u64().unwrap_or_else(|| panic!("an answer to a request: {answer}"));
        order.push(id);
        by_id.insert(id, answer);
    }
    (order, by_id)
}

fn first_request_on_a_fresh_fork_holds_nothing_up(wire: Wire, store: &str, prefix: &str) {
    let mut s = server_with_a_long_thread(wire, store, prefix);

    // A request sent right after the fork's first request is answered before it.
    let fresh = fork(&mut s, prefix, "fresh");
    let first = s.request("thread/events", json!({"threadId": fresh, "tail": 1}));
    let other = s.request("xml/escape", json!({"text": "a<b"}));
    let (order, by_id) = answers(&mut s, 2);
    assert_eq!(order, [other, first], "the request sent meanwhile waited for the fork's first load");
    assert_eq!(by_id[&first]["result"]["eventCount"], EVENTS as u64, "{}", by_id[&first]);
    assert_eq!(by_id[&other]["result"]["text"], "a&lt;b");

    // Two fresh forks: the first request on each builds the same state. The second one's
    // cancel is answered before the first one's build is done.
    let kept = fork(&mut s, prefix, "kept");
    let dropped = fork(&mut s, prefix, "dropped");
    let finishing = s.request("thread/events", json!({"threadId": kept, "tail": 1}));
    let cancelled = s.request("thread/events", json!({"threadId": dropped, "tail": 1}));
    s.notify("$/cancelRequest", json!({"id": cancelled}));
    let (order, by_id) = answers(&mut s, 2);
    assert_eq!(order, [cancelled, finishing], "the cancel waited for the fork's first load");
    assert_eq!(by_id[&cancelled]["error"]["code"], -32800, "{}", by_id[&cancelled]);
    assert_eq!(by_id[&finishing]["result"]["eventCount"], EVENTS as u64, "{}", by_id[&finishing]);

    // The cancelled load kept nothing half-built: the fork reads whole, and takes appends.
    let tail = s.ok("thread/events", json!({"threadId": dropped, "tail": 1}));
    assert_eq!((tail["version"].clone(), tail["eventCount"].clone()), (json!(1), json!(EVENTS)));
    let appended = s.ok("thread/append", json!({"threadId": dropped, "events": [user("after", 9_999)]}));
    assert_eq!(appended["eventCount"], EVENTS as u64 + 1);
    s.stop();
}

#[test]
fn a_fresh_fork_holds_nothing_up_in_memory_over_ndjson() {
    first_request_on_a_fresh_fork_holds_nothing_up(Wire::Ndjson, "memory", "");
}

#[test]
fn a_fresh_fork_holds_nothing_up_in_memory_over_lsp() {
    first_request_on_a_fresh_fork_holds_nothing_up(Wire::Lsp, "memory", "");
}

#[test]
fn a_fresh_fork_holds_nothing_up_in_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("threads.db").display());
    first_request_on_a_fresh_fork_holds_nothing_up(Wire::Ndjson, &store, "");
}

#[test]
fn a_fresh_fork_holds_nothing_up_in_postgres() {
    let Some(url) = database_url("a_fresh_fork_holds_nothing_up_in_postgres") else { return };
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let prefix = format!("fresh-fork-{}-{nanos}-", std::process::id());
    first_request_on_a_fresh_fork_holds_nothing_up(Wire::Ndjson, &url, &prefix);
}
