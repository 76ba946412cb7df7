//! `threadkeeper view --serve` over real HTTP on loopback: the token and `Host` rules, refusals
//! that hold nothing of the store, no CORS header, a live feed carrying an append made by a
//! separate `serve` process on the same SQLite file, and a clean exit on SIGTERM. Also the
//! stores' change signals the feeds wait on.

use crate::support::{Server, Wire, EXIT_TIMEOUT};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use threadkeeper::event_log::EventLog;
use threadkeeper::store::{MemoryStore, OpenThread, SqliteStore, Store};

const BIN: &str = env!("CARGO_BIN_EXE_threadkeeper");
/// Text that only the thread holds: no refusal may contain it.
const SECRET: &str = "secret-payload-7f3a";
/// A failing test gives up waiting after this long (no assertion is timed).
const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// A running `view --serve` and where it listens.
pub(crate) struct Viewer {
    child: Child,
    /// `127.0.0.1:PORT`
    pub(crate) authority: String,
    pub(crate) token: String,
}

impl Viewer {
    pub(crate) fn start(store: &str) -> Viewer {
        let mut child = Command::new(BIN)
            .args(["view", "--serve", "--store", store, "--port", "0"])
            .env_remove("THREADKEEPER_STORE")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let url = line.trim_end();
        let rest = url.strip_prefix("http://").unwrap_or_else(|| panic!("a URL on the first line: {url:?}"));
        let (authority, query) = rest.split_once("/?token=").unwrap();
        assert!(authority.starts_with("127.0.0.1:"), "loopback by default: {url}");
        assert!(query.len() >= 32, "a long token: {url}");
        Viewer { child, authority: authority.to_owned(), token: query.to_owned() }
    }

    fn get(&self, target: &str) -> Response {
        self.get_as(target, &self.authority)
    }

    fn get_as(&self, target: &str, host: &str) -> Response {
        let mut stream = self.connect();
        write!(stream, "GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").unwrap();
        let mut raw = String::new();
        stream.read_to_string(&mut raw).unwrap();
        Response::parse(&raw)
    }

    pub(crate) fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(&self.authority).unwrap();
        stream.set_read_timeout(Some(READ_TIMEOUT)).unwrap();
        stream
    }

    pub(crate) fn terminate(mut self) -> ExitStatus {
        assert_eq!(unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) }, 0);
        let deadline = Instant::now() + EXIT_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() > deadline {
                self.child.kill().unwrap();
                panic!("view --serve did not exit after SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Viewer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Response {
    status: u16,
    /// Lower-cased names.
    headers: Vec<(String, String)>,
    body: String,
}

impl Response {
    fn parse(raw: &str) -> Response {
        let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((raw, ""));
        let mut lines = head.lines();
        let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
            .collect();
        Response { status, headers, body: body.to_owned() }
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// A SQLite store holding thread `run-1` with the secret in it; the server that wrote it stays
/// up to append more.
fn stored_thread(dir: &tempfile::TempDir) -> (String, Server) {
    let store = format!("sqlite:{}", dir.path().join("threads.db").display());
    let mut writer = Server::start(Wire::Ndjson, &store);
    writer.ok("thread/open", json!({"threadId": "run-1"}));
    writer.ok(
        "thread/append",
        json!({"threadId": "run-1", "events": [
            {"type": "message", "role": "user", "content": SECRET, "iteration": 0},
            {"type": "tool_call", "toolName": "search", "toolCallId": "c1", "args": {"q": SECRET}, "iteration": 0},
        ]}),
    );
    (store, writer)
}

#[test]
fn without_the_token_or_from_a_foreign_host_nothing_is_served() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _writer) = stored_thread(&dir);
    let viewer = Viewer::start(&store);
    let token = viewer.token.clone();
    let port = viewer.authority.split_once(':').unwrap().1.to_owned();
    let targets = ["/", "/feed", "/thread/run-1", "/thread/run-1/feed", "/thread/run-1/model", "/nowhere"];
    for target in targets {
        let sep = if target.contains('?') { '&' } else { '?' };
        let cases = [
            (target.to_owned(), viewer.authority.clone(), 401),
            (format!("{target}{sep}token="), viewer.authority.clone(), 403),
            (format!("{target}{sep}token={}x", token), viewer.authority.clone(), 403),
            (format!("{target}{sep}token={}", &token[..token.len() - 1]), viewer.authority.clone(), 403),
            (format!("{target}{sep}token={token}"), format!("evil.example:{port}"), 403),
            (format!("{target}{sep}token={token}"), "127.0.0.1".to_owned(), 403),
            (format!("http://evil.example:{port}{target}{sep}token={token}"), viewer.authority.clone(), 403),
        ];
        for (request, host, status) in cases {
            let response = viewer.get_as(&request, &host);
            assert_eq!(response.status, status, "GET {request} Host {host}: {}", response.body);
            assert!(!response.body.contains(SECRET) && !response.body.contains("run-1"), "{}", response.body);
            assert!(response.body.len() < 100, "a one-line refusal: {}", response.body);
            assert_eq!(response.header("access-control-allow-origin"), None);
        }
    }
    // A request without any Host header is refused too.
    let mut stream = viewer.connect();
    write!(stream, "GET /?token={token} HTTP/1.0\r\n\r\n").unwrap();
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    let response = Response::parse(&raw);
    assert_eq!(response.status, 403);
    assert!(!response.body.contains("run-1"));
}

#[test]
fn with_the_token_the_list_page_and_model_are_served_without_cors() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _writer) = stored_thread(&dir);
    let viewer = Viewer::start(&store);
    let token = viewer.token.clone();

    let list = viewer.get(&format!("/?token={token}"));
    assert_eq!(list.status, 200, "{}", list.body);
    assert!(list.body.contains("\"id\":\"run-1\""), "{}", list.body);
    assert!(list.header("content-security-policy").unwrap().contains("connect-src 'self'"));

    let page = viewer.get(&format!("/thread/run-1?token={token}"));
    assert_eq!(page.status, 200);
    assert!(page.header("content-type").unwrap().starts_with("text/html"));
    assert!(page.body.contains(SECRET));
    assert!(page.body.contains(&format!("\"feed\":\"/thread/run-1/feed?token={token}\"")));
    // Thread text only as JSON data: the page's own two scripts, nothing from the thread.
    assert_eq!(page.body.matches("<script").count(), 2);

    // `localhost` names this server too.
    let port = viewer.authority.split_once(':').unwrap().1;
    assert_eq!(viewer.get_as(&format!("/thread/run-1?token={token}"), &format!("localhost:{port}")).status, 200);

    let model = viewer.get(&format!("/thread/run-1/model?token={token}"));
    assert_eq!(model.status, 200);
    let model: Value = serde_json::from_str(&model.body).unwrap();
    assert!(model["xml"].as_str().unwrap().starts_with("<thread>"));
    assert_eq!(model["messages"][0]["data"]["content"], SECRET);

    assert_eq!(viewer.get(&format!("/thread/nope?token={token}")).status, 404);
    for response in [list, page] {
        assert_eq!(response.header("access-control-allow-origin"), None);
        assert_eq!(response.header("referrer-policy"), Some("no-referrer"));
    }
    let status = viewer.terminate();
    assert_eq!(status.code(), Some(0), "{status:?}");
}

/// Reads server-sent events until one's data contains `needle`; returns that data.
pub(crate) fn read_event_with(reader: &mut impl BufRead, needle: &str) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "the feed ended before {needle:?}");
        if let Some(data) = line.strip_prefix("data: ") {
            if data.contains(needle) {
                return data.trim_end().to_owned();
            }
        }
    }
}

#[test]
fn the_feed_delivers_an_append_made_by_another_process_then_sigterm_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let (store, mut writer) = stored_thread(&dir);
    let viewer = Viewer::start(&store);
    let token = viewer.token.clone();

    let mut stream = viewer.connect();
    write!(stream, "GET /thread/run-1/feed?token={token}&from=2 HTTP/1.1\r\nHost: {}\r\n\r\n", viewer.authority)
        .unwrap();
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    let mut list = viewer.connect();
    write!(list, "GET /feed?token={token} HTTP/1.1\r\nHost: {}\r\n\r\n", viewer.authority).unwrap();
    let mut list = BufReader::new(list);
    read_event_with(&mut list, "\"eventCount\":2");

    writer.ok(
        "thread/append",
        json!({"threadId": "run-1", "events": [
            {"type": "tool_result", "toolCallId": "c1", "result": "live-result-91", "iteration": 0},
        ]}),
    );
    let data = read_event_with(&mut reader, "live-result-91");
    let update: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(update["type"], "append");
    assert_eq!(update["from"], 2);
    assert_eq!(update["events"].as_array().unwrap().len(), 1);
    // The call shown earlier is answered now.
    assert_eq!(update["links"]["calls"], json!([{"call": 1, "status": "answered", "by": 2}]));
    // The list follows too, with the last event in a line.
    let row = read_event_with(&mut list, "\"eventCount\":3");
    assert!(row.contains("tool_result: live-result-91"), "{row}");

    // A pop takes back an event the page shows: the feed tells it to start anew.
    writer.ok("thread/pop", json!({"threadId": "run-1", "count": 2}));
    read_event_with(&mut reader, "\"type\":\"reset\"");

    let status = viewer.terminate();
    assert_eq!(status.code(), Some(0), "{status:?}");
}

#[test]
fn a_bad_token_or_serve_options_without_serve_are_refused() {
    let output = Command::new(BIN)
        .args(["view", "--serve", "--store", "memory", "--token", "a b<"])
        .env_remove("THREADKEEPER_STORE")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--token"));
    for args in [&["--port", "0"][..], &["--host", "0.0.0.0", "examples/thread.json"], &["--open", "--thread", "t"]] {
        let output = Command::new(BIN).arg("view").args(args).env_remove("THREADKEEPER_STORE").output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?} go only with --serve");
        assert!(output.stdout.is_empty());
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap()
}

fn one_event() -> EventLog {
    let mut log = threadkeeper::event_log::EventLogBuilder::new();
    log.push_validated(r#"{"type":"message","role":"user","content":"x","iteration":0}"#);
    log.finish()
}

#[test]
fn the_memory_store_signals_its_own_changes() {
    runtime().block_on(async {
        let store = MemoryStore::new(10);
        let mut signal = store.watch_changes().await.unwrap();
        store.open(OpenThread { thread_id: "a".into(), ..Default::default() }).await.unwrap();
        tokio::time::timeout(READ_TIMEOUT, signal.changed()).await.unwrap().unwrap();
        signal.mark_unchanged();
        assert!(store.append("nope", None, &one_event(), 1).await.is_err());
        assert!(!signal.has_changed().unwrap(), "a failed append changes nothing");
        store.append("a", None, &one_event(), 1).await.unwrap();
        tokio::time::timeout(READ_TIMEOUT, signal.changed()).await.unwrap().unwrap();
    });
}

#[test]
fn the_sqlite_store_signals_commits_of_other_processes() {
    let dir = tempfile::tempdir().unwrap();
    let (store_spec, mut writer) = stored_thread(&dir);
    let path = store_spec.strip_prefix("sqlite:").unwrap().to_owned();
    runtime().block_on(async move {
        let store: Arc<dyn Store> = Arc::new(SqliteStore::open(std::path::Path::new(&path)).unwrap());
        let mut signal = store.watch_changes().await.unwrap();
        signal.mark_unchanged();
        let append = tokio::task::spawn_blocking(move || {
            writer.ok(
                "thread/append",
                json!({"threadId": "run-1", "events": [{"type": "message", "role": "assistant", "content": "y", "iteration": 1}]}),
            );
            writer
        });
        tokio::time::timeout(READ_TIMEOUT, signal.changed()).await.unwrap().unwrap();
        let _writer = append.await.unwrap();
        assert_eq!(store.record("run-1").await.unwrap().unwrap().event_count, 3);
    });
}

#[test]
fn the_postgres_store_signals_changes_of_other_servers() {
    use crate::support::postgres::database_url;
    use threadkeeper::store::PostgresStore;
    let Some(url) = database_url("the_postgres_store_signals_changes_of_other_servers") else { return };
    runtime().block_on(async {
        let here = PostgresStore::connect(&url).await.unwrap();
        let there = PostgresStore::connect(&url).await.unwrap();
        let mut signal = here.watch_changes().await.unwrap();
        // The first signal says the watch listens.
        tokio::time::timeout(READ_TIMEOUT, signal.changed()).await.unwrap().unwrap();
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        let id = format!("watched-{}-{nanos}", std::process::id());
        there.open(OpenThread { thread_id: id.clone(), now: 1, ..Default::default() }).await.unwrap();
        signal.mark_unchanged();
        let before = there.statements_sent();
        there.append(&id, None, &one_event(), 2).await.unwrap();
        assert_eq!(there.statements_sent() - before, 1, "the notify rides in the append's statement");
        tokio::time::timeout(READ_TIMEOUT, signal.changed()).await.unwrap().unwrap();
        signal.mark_unchanged();
        there.pop(&id, None, 1, 3).await.unwrap();
        tokio::time::timeout(READ_TIMEOUT, signal.changed()).await.unwrap().unwrap();
        signal.mark_unchanged();
        assert!(there.delete(&id).await.unwrap());
        tokio::time::timeout(READ_TIMEOUT, signal.changed()).await.unwrap().unwrap();
    });
}

#[test]
fn a_postgres_feed_shows_another_servers_append_within_2_s() {
    use crate::support::postgres::{database_url, ScratchDatabase};
    let Some(url) = database_url("a_postgres_feed_shows_another_servers_append_within_2_s") else { return };
    let scratch = runtime().block_on(ScratchDatabase::create(&url));
    let mut writer = Server::start(Wire::Ndjson, &scratch.url);
    writer.ok("thread/open", json!({"threadId": "run-1"}));
    writer.ok(
        "thread/append",
        json!({"threadId": "run-1", "events": [{"type": "message", "role": "user", "content": "hi", "iteration": 0}]}),
    );
    let viewer = Viewer::start(&scratch.url);
    let mut stream = viewer.connect();
    write!(
        stream,
        "GET /thread/run-1/feed?token={}&from=1 HTTP/1.1\r\nHost: {}\r\n\r\n",
        viewer.token, viewer.authority
    )
    .unwrap();
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    // Every third append waits a moment, so some land between the watch's heartbeats.
    for n in 1..=6 {
        if n % 3 == 0 {
            std::thread::sleep(Duration::from_millis(700));
        }
        let content = format!("live-{n}");
        writer.ok(
            "thread/append",
            json!({"threadId": "run-1", "events": [{"type": "message", "role": "assistant", "content": content, "iteration": n}]}),
        );
        let appended = Instant::now();
        read_event_with(&mut reader, &format!("\"live-{n}\""));
        assert!(appended.elapsed() < Duration::from_secs(2), "append {n} showed after {:?}", appended.elapsed());
    }
    let status = viewer.terminate();
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert!(writer.stop().success());
}
