//! Replays every file of `protocol/vectors/` against the real binary, once over LSP framing and
//! once over NDJSON: each file on a fresh server, its exchanges in order, every response read
//! before the next request is sent.

use crate::support::vectors::{any_pointers, load_all, mismatches, Send, Vector};
use crate::support::{serve, Received, Server, Wire};
use serde_json::{json, Value};
use std::time::Duration;

/// How long a response may take before the exchange fails.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(20);
/// How long the server may take to answer nothing more and exit once its input is closed.
const EXIT_TIMEOUT: Duration = Duration::from_secs(20);

/// The only files that do not begin with `initialize` (they show what happens before it).
const WITHOUT_INITIALIZE: [&str; 1] = ["lifecycle-not-initialized.json"];

/// Replays one file over one framing; returns its failures.
fn replay(vector: &Vector, wire: Wire) -> Vec<String> {
    let mut server = Server::spawn(wire, serve(Some("memory")).args(&vector.args));
    let mut failures = Vec::new();
    let at = |i: usize| format!("{} [{wire:?}] exchange {i} ({})", vector.file, vector.exchanges[i].label());
    for (i, exchange) in vector.exchanges.iter().enumerate() {
        match &exchange.send {
            Send::Json(value) => server.send(value),
            Send::Text(text) => server.send_body(text.as_bytes()),
        }
        if exchange.response.is_null() {
            continue;
        }
        match server.recv_timeout(RESPONSE_TIMEOUT) {
            Received::Message(actual) => {
                for m in mismatches(&exchange.response, &actual) {
                    failures.push(format!("{}: {m}\n    got: {actual}", at(i)));
                }
                check_server_version(exchange.request().as_ref(), &actual, &mut failures, &at(i));
            }
            Received::Timeout => failures.push(format!("{}: no response within {RESPONSE_TIMEOUT:?}", at(i))),
            Received::End => failures.push(format!("{}: the server ended instead of answering", at(i))),
        }
        if !failures.is_empty() {
            // Later exchanges depend on this one; their failures would only be noise.
            return failures;
        }
    }
    server.close_stdin();
    loop {
        match server.recv_timeout(EXIT_TIMEOUT) {
            Received::Message(extra) => {
                failures.push(format!("{} [{wire:?}]: unexpected message {extra}", vector.file))
            }
            Received::Timeout => {
                failures.push(format!("{} [{wire:?}]: output not closed after end of input", vector.file));
                return failures;
            }
            Received::End => break,
        }
    }
    let status = server.wait_for_exit();
    if let Some(code) = vector.exit_code {
        if status.code() != Some(code) {
            failures.push(format!("{} [{wire:?}]: exit status {status}, expected {code}", vector.file));
        }
    }
    failures
}

/// Vectors match `serverInfo.version` with `"<any>"`; the binary must still report its own.
fn check_server_version(request: Option<&Value>, actual: &Value, failures: &mut Vec<String>, at: &str) {
    let is_initialize = request.and_then(|r| r.get("method")).is_some_and(|m| m == "initialize");
    if let Some(version) = actual.pointer("/result/serverInfo/version").filter(|_| is_initialize) {
        if version != env!("CARGO_PKG_VERSION") {
            failures.push(format!("{at}: serverInfo.version {version}, expected {}", env!("CARGO_PKG_VERSION")));
        }
    }
}

#[test]
fn every_vector_replays_over_both_framings() {
    let vectors = load_all();
    assert!(vectors.len() >= 10, "only {} vector files", vectors.len());
    let failures: Vec<String> = std::thread::scope(|scope| {
        let runs: Vec<_> = vectors
            .iter()
            .flat_map(|v| [Wire::Lsp, Wire::Ndjson].map(|wire| (v, wire)))
            .map(|(v, wire)| scope.spawn(move || replay(v, wire)))
            .collect();
        runs.into_iter().flat_map(|run| run.join().expect("replay thread")).collect()
    });
    assert!(failures.is_empty(), "{} vector failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn vector_files_follow_the_conventions() {
    let mut problems = Vec::new();
    for vector in load_all() {
        let first = vector.exchanges[0].request();
        let starts_with_initialize = first.as_ref().and_then(|r| r.get("method")).is_some_and(|m| m == "initialize");
        if starts_with_initialize == WITHOUT_INITIALIZE.contains(&vector.file.as_str()) {
            problems.push(format!(
                "{}: the first exchange must be initialize (except in {WITHOUT_INITIALIZE:?})",
                vector.file
            ));
        }
        if vector.description.trim().is_empty() {
            problems.push(format!("{}: empty description", vector.file));
        }
        let mut ids = std::collections::HashSet::new();
        for (i, exchange) in vector.exchanges.iter().enumerate() {
            let requests = match exchange.request() {
                Some(Value::Array(items)) => items,
                Some(one) => vec![one],
                None => Vec::new(),
            };
            for id in requests.iter().filter_map(|r| r.get("id")).filter(|id| id.is_string() || id.is_number()) {
                if !ids.insert(id.to_string()) {
                    problems.push(format!("{} exchange {i}: id {id} is used twice in the file", vector.file));
                }
            }
            // "<any>" stands only for what differs from run to run.
            for pointer in any_pointers(&exchange.response) {
                let last = pointer.rsplit('/').next().unwrap_or_default();
                let allowed = matches!(last, "createdAt" | "updatedAt" | "threadId" | "timestamp")
                    || pointer.ends_with("/result/serverInfo/version")
                    // thread/view's page: its bytes are pinned by the golden test instead.
                    || pointer == "/result/html";
                if !allowed {
                    problems.push(format!("{} exchange {i}: \"<any>\" at {pointer}", vector.file));
                }
            }
            if let Some(Value::Object(request)) = exchange.request() {
                let expects_answer = request.contains_key("id");
                if expects_answer && exchange.response.is_null() {
                    problems.push(format!("{} exchange {i}: a request with an id must expect a response", vector.file));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_matcher_reports_pointers_and_accepts_any() {
    let expected = json!({"a": "<any>", "b": [1, {"c": 2}], "result": {"events": [{"type": "x", "iteration": 0}]}});
    let same = json!({"a": {"x": 1}, "b": [1.0, {"c": 2}], "result": {"events": [{"type": "x", "iteration": 0}]}});
    assert_eq!(mismatches(&expected, &same), Vec::<String>::new());
    let different = json!({"b": [1, {"c": 3}], "d": 0, "result": {"events": [{"iteration": 0, "type": "x"}]}});
    assert_eq!(
        mismatches(&expected, &different),
        vec![
            "/a: missing".to_string(),
            "/b/1/c: expected 2, got 3".to_string(),
            "/result/events/0: key order [\"iteration\", \"type\"], expected [\"type\", \"iteration\"]".to_string(),
            "/d: unexpected, got 0".to_string(),
        ]
    );
    // Key order does not count outside events.
    assert_eq!(mismatches(&json!({"x": 1, "y": 2}), &json!({"y": 2, "x": 1})), Vec::<String>::new());
    assert_eq!(mismatches(&json!([1]), &json!([1, 2])), vec!["/: expected 1 items, got 2: [1,2]".to_string()]);
    assert_eq!(mismatches(&json!(18446744073709551615u64), &json!(18446744073709551614u64)).len(), 1);
    assert_eq!(mismatches(&Value::Null, &json!(false)), vec!["/: expected null, got false".to_string()]);
}
