//! `threadkeeper mcp` through the real binary over pipes: version negotiation, the tools and
//! their errors, token-bounded paging of a 10,000-event thread, resources, and imports kept
//! inside the allowed directories. Threads are made by `serve` in a SQLite file first. Every
//! read of the child's output is bounded ([`crate::support::ANSWER_TIMEOUT`]).

use crate::support::events::{numbered_event, sample_events, user};
use crate::support::search::hit_pairs;
use crate::support::{serve, Received, Server, Wire};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The newest protocol version with an `initialize` handshake.
const HANDSHAKE_VERSION: &str = "2025-11-25";
/// The current (stateless) revision: no handshake, version and capabilities in each `_meta`.
const STATELESS_VERSION: &str = "2026-07-28";
const FIXTURE: &str = "tests/fixtures/host-sessions/claude-code/agent-history-real-2.1.152.jsonl";

fn sqlite(path: &Path) -> String {
    format!("sqlite:{}", path.display())
}

/// `threadkeeper mcp --store STORE [--allow-import DIR]…`, no settings from the environment.
fn mcp_command(store: &str, allow: &[&Path]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_threadkeeper"));
    cmd.arg("mcp").arg("--store").arg(store);
    for dir in allow {
        cmd.arg("--allow-import").arg(dir);
    }
    cmd.env_remove("THREADKEEPER_STORE").env_remove("RUST_LOG");
    cmd
}

/// Starts the MCP server and completes the handshake at `version`; returns it and the result.
fn start_at(store: &str, allow: &[&Path], version: &str) -> (Server, Value) {
    let mut server = Server::spawn(Wire::Ndjson, &mut mcp_command(store, allow));
    let init = server.ok(
        "initialize",
        json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "tests", "version": "0"}}),
    );
    server.notify("notifications/initialized", Value::Null);
    (server, init)
}

fn start(store: &str, allow: &[&Path]) -> Server {
    start_at(store, allow, HANDSHAKE_VERSION).0
}

/// Ends the session as MCP does over stdio: the client closes its end.
fn finish(mut server: Server) {
    server.close_stdin();
    let status = server.wait_for_exit();
    assert!(status.success(), "exit {status:?}; stderr:\n{}", server.stderr());
}

/// A tools/call result (tool errors included).
fn call_tool(server: &mut Server, name: &str, arguments: Value) -> Value {
    server.ok("tools/call", json!({"name": name, "arguments": arguments}))
}

/// The structured content of a tool call that must succeed; checks the text rendering is there.
fn tool_ok(server: &mut Server, name: &str, arguments: Value) -> Value {
    let result = call_tool(server, name, arguments.clone());
    assert_ne!(result["isError"], true, "{name} {arguments}: {result}");
    assert!(result["content"][0]["text"].as_str().is_some_and(|t| !t.is_empty()), "{result}");
    result["structuredContent"].clone()
}

/// The message of a tool call that must fail as a tool error.
fn tool_err(server: &mut Server, name: &str, arguments: Value) -> String {
    let result = call_tool(server, name, arguments.clone());
    assert_eq!(result["isError"], true, "{name} {arguments} should fail: {result}");
    result["content"][0]["text"].as_str().unwrap().to_owned()
}

/// A SQLite store holding `threads` (id → events), written through `serve`.
fn prepare_store(dir: &Path, threads: &[(&str, Vec<Value>)]) -> String {
    let store = sqlite(&dir.join("threads.db"));
    let mut writer = Server::start_command(Wire::Ndjson, &mut serve(Some(&store)));
    for (thread, events) in threads {
        writer.ok("thread/open", json!({"threadId": thread}));
        for chunk in events.chunks(5000) {
            writer.ok("thread/append", json!({"threadId": thread, "events": chunk}));
        }
    }
    assert!(writer.stop().success());
    store
}

fn tiktoken_o200k(text: &str) -> u64 {
    tiktoken_rs::o200k_base_singleton().encode_ordinary(text).len() as u64
}

#[test]
fn initialize_answers_the_version_asked_or_one_it_supports() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite(&dir.path().join("threads.db"));
    for asked in [HANDSHAKE_VERSION, "2025-06-18", "2025-03-26", "2024-11-05"] {
        let (server, init) = start_at(&store, &[], asked);
        assert_eq!(init["protocolVersion"], asked, "{init}");
        assert_eq!(init["serverInfo"]["name"], "threadkeeper");
        assert!(init["capabilities"]["tools"].is_object() && init["capabilities"]["resources"].is_object(), "{init}");
        finish(server);
    }
    // An older version than any it knows, and the stateless revision (which has no
    // handshake): answered with the newest version that has one; the client decides.
    for asked in ["2024-01-01", STATELESS_VERSION] {
        let (mut server, init) = start_at(&store, &[], asked);
        assert_eq!(init["protocolVersion"], HANDSHAKE_VERSION, "{asked}: {init}");
        assert!(server.ok("tools/list", json!({}))["tools"].is_array());
        finish(server);
    }
}

#[test]
fn the_stateless_revision_is_served_without_a_handshake() {
    let dir = tempfile::tempdir().unwrap();
    let store = prepare_store(dir.path(), &[("t", sample_events())]);
    let mut server = Server::spawn(Wire::Ndjson, &mut mcp_command(&store, &[]));
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": STATELESS_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let discovered = server.ok("server/discover", json!({"_meta": meta}));
    let versions = discovered["supportedVersions"].as_array().unwrap();
    assert!(
        versions.contains(&json!(STATELESS_VERSION)) && versions.contains(&json!(HANDSHAKE_VERSION)),
        "{discovered}"
    );
    let read = server.ok("tools/call", json!({"_meta": meta, "name": "read_thread", "arguments": {"threadId": "t"}}));
    assert_eq!(read["structuredContent"]["eventCount"], 5, "{read}");
    finish(server);
}

#[test]
fn tools_have_schemas_and_import_is_listed_only_when_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite(&dir.path().join("threads.db"));
    let names = |server: &mut Server| -> BTreeSet<String> {
        let tools = server.ok("tools/list", json!({}))["tools"].as_array().unwrap().clone();
        for tool in &tools {
            assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
            assert_eq!(tool["outputSchema"]["type"], "object", "{tool}");
        }
        tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
    };

    let mut plain = start(&store, &[]);
    let listed = names(&mut plain);
    assert_eq!(
        listed,
        ["get_event", "list_threads", "read_thread", "search_threads"].map(String::from).into(),
        "{listed:?}"
    );
    let refused = tool_err(&mut plain, "import_session", json!({"path": "/x", "format": "codex"}));
    assert!(refused.contains("--allow-import"), "{refused}");
    let malformed = tool_err(&mut plain, "search_threads", json!({"query": "\"unbalanced"}));
    assert!(malformed.contains("query"), "{malformed}");
    finish(plain);

    let mut importing = start(&store, &[dir.path()]);
    assert!(names(&mut importing).contains("import_session"));
    finish(importing);
}

#[test]
fn list_threads_pages_newest_first_with_titles() {
    let dir = tempfile::tempdir().unwrap();
    let threads: Vec<(String, Vec<Value>)> = (0..7)
        .map(|i| {
            let first = if i == 3 { "  a title\nthat is long ".repeat(10) } else { format!("question {i}") };
            (
                format!("t{i}"),
                vec![json!({"type": "message", "role": "system", "content": "sys", "iteration": 0}), user(&first, 1)],
            )
        })
        .collect();
    let refs: Vec<(&str, Vec<Value>)> = threads.iter().map(|(id, events)| (id.as_str(), events.clone())).collect();
    let store = prepare_store(dir.path(), &refs);
    let mut server = start(&store, &[]);

    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut args = json!({"limit": 3});
        if let Some(cursor) = &cursor {
            args["cursor"] = json!(cursor);
        }
        let page = tool_ok(&mut server, "list_threads", args);
        let threads = page["threads"].as_array().unwrap();
        assert!(threads.len() <= 3);
        seen.extend(threads.iter().cloned());
        pages += 1;
        match page["nextCursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    let ids: BTreeSet<&str> = seen.iter().map(|t| t["threadId"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 7, "every thread once: {seen:?}");
    let order: Vec<(u64, &str)> =
        seen.iter().map(|t| (t["updatedAt"].as_u64().unwrap(), t["threadId"].as_str().unwrap())).collect();
    let mut expected = order.clone();
    expected.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    assert_eq!(order, expected, "newest first");
    for thread in &seen {
        assert_eq!(thread["eventCount"], 2);
        assert!(thread["version"].as_u64().unwrap() >= 1 && thread["createdAt"].is_u64());
        let title = thread["title"].as_str().unwrap();
        if thread["threadId"] == "t3" {
            assert_eq!(title.chars().count(), 80, "{title}");
            assert!(title.starts_with("a title that is long a title") && title.ends_with('…'), "{title}");
        } else {
            assert_eq!(title, format!("question {}", &thread["threadId"].as_str().unwrap()[1..]));
        }
    }
    assert!(tool_err(&mut server, "list_threads", json!({"cursor": "garbage"})).contains("cursor"));
    assert!(tool_err(&mut server, "list_threads", json!({"limit": 0})).contains("limit"));
    assert!(tool_err(&mut server, "list_threads", json!({"limit": 201})).contains("limit"));
    assert!(tool_err(&mut server, "list_threads", json!({"limmit": 2})).contains("limmit"));
    finish(server);
}

#[test]
fn a_10000_event_thread_is_read_in_pages_that_fit_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let mut events: Vec<Value> = (0..10_000).map(|i| numbered_event(i / 100, i)).collect();
    // One event far bigger than a page: cut with a marker, never skipped.
    events[5000] = user(&"a long line of tool output ".repeat(2000), 50);
    let store = prepare_store(dir.path(), &[("big", events)]);
    let mut server = start(&store, &[]);

    let max_tokens = 2000;
    let mut covered = Vec::new();
    let mut from = 0u64;
    let mut pages = 0;
    let mut cut = Vec::new();
    loop {
        let page =
            tool_ok(&mut server, "read_thread", json!({"threadId": "big", "fromEvent": from, "maxTokens": max_tokens}));
        pages += 1;
        assert!(pages < 1000, "paging does not end");
        let text = page["text"].as_str().unwrap();
        let tokens = tiktoken_o200k(text);
        assert!(tokens <= max_tokens, "page from {from}: {tokens} tokens");
        assert_eq!(page["tokens"], tokens);
        assert_eq!((page["fromEvent"].as_u64(), page["eventCount"].as_u64()), (Some(from), Some(10_000)));
        for line in text.lines().filter(|l| l.starts_with('#')) {
            let index: u64 = line[1..line.find(' ').unwrap()].parse().unwrap();
            covered.push(index);
        }
        if let Some(event) = page["cutEvent"].as_u64() {
            cut.push(event);
            assert!(text.contains("cut to fit"), "{text}");
        }
        match page["nextEvent"].as_u64() {
            Some(next) => {
                assert_eq!(page["truncated"], true);
                assert!(next > from);
                from = next;
            }
            None => break,
        }
    }
    assert_eq!(covered, (0..10_000).collect::<Vec<u64>>(), "every event once, in order");
    assert_eq!(cut, vec![5000]);
    assert!(pages > 10, "{pages} pages");

    // XML pages: the <event> lines, within budget too.
    let xml = tool_ok(
        &mut server,
        "read_thread",
        json!({"threadId": "big", "format": "xml", "fromEvent": 9990, "maxTokens": 500}),
    );
    let text = xml["text"].as_str().unwrap();
    assert!(text.lines().all(|l| l.trim_start().starts_with("<event ")) && tiktoken_o200k(text) <= 500, "{text}");
    assert_eq!(text.lines().count() as u64, xml["nextEvent"].as_u64().unwrap_or(10_000) - 9990);

    assert!(
        tool_err(&mut server, "read_thread", json!({"threadId": "big", "fromEvent": 10_001})).contains("past the end")
    );
    assert!(tool_err(&mut server, "read_thread", json!({"threadId": "big", "maxTokens": 40_000})).contains("maxTokens"));
    assert!(tool_err(&mut server, "read_thread", json!({"threadId": "nope"})).contains("no thread \"nope\""));
    assert!(tool_err(&mut server, "read_thread", json!({"threadId": "big", "format": "html"})).contains("format"));
    assert!(tool_err(&mut server, "read_thread", json!({})).contains("threadId"));
    finish(server);
}

#[test]
fn get_event_gives_the_event_as_stored() {
    let dir = tempfile::tempdir().unwrap();
    let events = sample_events();
    let store = prepare_store(dir.path(), &[("t", events.clone())]);
    let mut server = start(&store, &[]);
    for (index, expected) in events.iter().enumerate() {
        let got = tool_ok(&mut server, "get_event", json!({"threadId": "t", "eventIndex": index}));
        assert_eq!(&got["event"], expected);
        // Key order kept, as stored.
        assert_eq!(got["event"].to_string(), expected.to_string());
    }
    assert!(tool_err(&mut server, "get_event", json!({"threadId": "t", "eventIndex": 5})).contains("past the end"));
    assert!(tool_err(&mut server, "get_event", json!({"threadId": "missing", "eventIndex": 0})).contains("no thread"));
    assert!(tool_err(&mut server, "get_event", json!({"threadId": "t", "eventIndex": -1})).contains("eventIndex"));
    // An unknown tool is the caller's protocol error, and the server goes on.
    let unknown = server.err("tools/call", json!({"name": "drop_tables", "arguments": {}}));
    assert!(unknown["message"].as_str().unwrap().contains("drop_tables"), "{unknown}");
    finish(server);
}

#[test]
fn a_garbage_line_does_not_end_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let store = prepare_store(dir.path(), &[("t", sample_events())]);
    let mut server = start(&store, &[]);
    server.send_raw(b"this is not json\n{\"jsonrpc\":\"2.0\",\"id\":\n");
    // Whatever the SDK answers to garbage (a parse error, or nothing), the next request works.
    let id =
        server.request("tools/call", json!({"name": "get_event", "arguments": {"threadId": "t", "eventIndex": 0}}));
    loop {
        match server.recv_timeout(Duration::from_secs(30)) {
            Received::Message(message) if message["id"] == id => {
                assert_eq!(message["result"]["structuredContent"]["event"], sample_events()[0]);
                break;
            }
            Received::Message(other) => assert!(other.get("error").is_some(), "unexpected {other}"),
            Received::Timeout => panic!("no answer after garbage; stderr:\n{}", server.stderr()),
            Received::End => panic!("the server ended after garbage; stderr:\n{}", server.stderr()),
        }
    }
    finish(server);
}

#[test]
fn each_thread_is_a_resource_listed_in_pages() {
    let dir = tempfile::tempdir().unwrap();
    let threads: Vec<(String, Vec<Value>)> =
        (0..55).map(|i| (format!("r{i:02}"), vec![user(&format!("hello {i}"), 1)])).collect();
    let refs: Vec<(&str, Vec<Value>)> = threads.iter().map(|(id, events)| (id.as_str(), events.clone())).collect();
    let store = prepare_store(dir.path(), &refs);
    let mut server = start(&store, &[]);

    let first = server.ok("resources/list", json!({}));
    let first_page = first["resources"].as_array().unwrap();
    assert_eq!(first_page.len(), 50);
    let cursor = first["nextCursor"].as_str().expect("a second page").to_owned();
    let second = server.ok("resources/list", json!({"cursor": cursor}));
    assert!(second.get("nextCursor").is_none(), "{second}");
    let all: BTreeSet<String> = first_page
        .iter()
        .chain(second["resources"].as_array().unwrap())
        .map(|r| {
            assert_eq!(r["mimeType"], "text/plain");
            assert_eq!(r["uri"], format!("thread://{}", r["name"].as_str().unwrap()));
            r["uri"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(all.len(), 55);

    let read = server.ok("resources/read", json!({"uri": "thread://r07"}));
    let contents = &read["contents"][0];
    assert_eq!((contents["uri"].as_str(), contents["mimeType"].as_str()), (Some("thread://r07"), Some("text/plain")));
    let text = contents["text"].as_str().unwrap();
    assert!(text.starts_with("#0 [user] hello 7\n") && text.contains("end of thread"), "{text}");

    let templates = server.ok("resources/templates/list", json!({}));
    assert_eq!(templates["resourceTemplates"][0]["uriTemplate"], "thread://{threadId}");
    let missing = server.err("resources/read", json!({"uri": "thread://nope"}));
    assert!(missing["message"].as_str().unwrap().contains("nope"), "{missing}");
    server.err("resources/read", json!({"uri": "file:///etc/passwd"}));
    finish(server);
}

/// A directory allowed for imports holding the fixture, a file outside it, and links.
struct ImportDirs {
    _root: tempfile::TempDir,
    store: String,
    allowed: PathBuf,
    outside: PathBuf,
}

fn import_dirs() -> ImportDirs {
    let root = tempfile::tempdir().unwrap();
    let allowed = root.path().join("sessions");
    let outside = root.path().join("elsewhere");
    std::fs::create_dir_all(allowed.join("project")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::copy(FIXTURE, allowed.join("project/session.jsonl")).unwrap();
    std::fs::copy(FIXTURE, outside.join("secret.jsonl")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside.join("secret.jsonl"), allowed.join("project/escape.jsonl")).unwrap();
    let store = sqlite(&root.path().join("threads.db"));
    ImportDirs { _root: root, store, allowed, outside }
}

#[test]
fn import_session_reads_only_inside_the_allowed_directories() {
    let dirs = import_dirs();
    let mut server = start(&dirs.store, &[&dirs.allowed]);
    let path = |p: PathBuf| p.to_str().unwrap().to_owned();

    let outside = tool_err(
        &mut server,
        "import_session",
        json!({"path": path(dirs.outside.join("secret.jsonl")), "format": "claude-code"}),
    );
    assert!(outside.contains("outside the directories"), "{outside}");
    #[cfg(unix)]
    {
        let escape = tool_err(
            &mut server,
            "import_session",
            json!({"path": path(dirs.allowed.join("project/escape.jsonl")), "format": "claude-code"}),
        );
        assert!(escape.contains("outside the directories"), "{escape}");
    }
    let dotdot = tool_err(
        &mut server,
        "import_session",
        json!({"path": path(dirs.allowed.join("project/../../elsewhere/secret.jsonl")), "format": "claude-code"}),
    );
    assert!(dotdot.contains(".."), "{dotdot}");
    let relative =
        tool_err(&mut server, "import_session", json!({"path": "project/session.jsonl", "format": "claude-code"}));
    assert!(relative.contains("absolute"), "{relative}");
    let bad_format = tool_err(
        &mut server,
        "import_session",
        json!({"path": path(dirs.allowed.join("project/session.jsonl")), "format": "cursor"}),
    );
    assert!(bad_format.contains("format"), "{bad_format}");
    // Nothing was imported by the refusals.
    assert_eq!(tool_ok(&mut server, "list_threads", json!({}))["threads"], json!([]));

    let imported = tool_ok(
        &mut server,
        "import_session",
        json!({"path": path(dirs.allowed.join("project/session.jsonl")), "format": "claude-code", "threadId": "imported"}),
    );
    assert_eq!(imported["threadId"], "imported");
    let events = imported["eventCount"].as_u64().unwrap();
    assert!(events > 0, "{imported}");
    let page = tool_ok(&mut server, "read_thread", json!({"threadId": "imported"}));
    assert_eq!(page["eventCount"], events);
    // Importing again under the same id is refused, not merged.
    tool_err(
        &mut server,
        "import_session",
        json!({"path": path(dirs.allowed.join("project/session.jsonl")), "format": "claude-code", "threadId": "imported"}),
    );
    finish(server);
}

#[test]
fn an_allowed_directory_that_does_not_exist_stops_the_server_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite(&dir.path().join("threads.db"));
    let missing = dir.path().join("missing");
    let output = mcp_command(&store, &[&missing]).stdin(std::process::Stdio::null()).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty(), "stdout carries MCP messages only");
    assert!(String::from_utf8_lossy(&output.stderr).contains("--allow-import"));
}

#[test]
fn search_threads_finds_events_across_threads_and_pages() {
    let dir = tempfile::tempdir().unwrap();
    let message = |i: usize, text: &str| json!({"type": "message", "role": "user", "content": text, "iteration": i});
    let store = prepare_store(
        dir.path(),
        &[
            ("alpha", vec![message(0, "we decided to ship on Friday"), message(1, "nothing here")]),
            ("beta", vec![message(0, "the Friday release notes"), message(1, "ship it")]),
        ],
    );
    let mut server = start(&store, &[]);
    let found = tool_ok(&mut server, "search_threads", json!({"query": "friday"}));
    assert_eq!(hit_pairs(&found), vec![("alpha".to_owned(), 0), ("beta".to_owned(), 0)]);
    assert!(found["hits"][0]["snippet"].as_str().unwrap().contains("«"), "{found}");
    let first = tool_ok(&mut server, "search_threads", json!({"query": "ship", "limit": 1}));
    let cursor = first["nextCursor"].as_str().expect("a second page").to_owned();
    let second = tool_ok(&mut server, "search_threads", json!({"query": "ship", "limit": 1, "cursor": cursor}));
    assert_eq!(second["hits"].as_array().unwrap().len(), 1);
    assert_ne!(first["hits"][0], second["hits"][0]);
    finish(server);
}
