//! The transport against a hostile client: real bytes over real pipes to the real binary.
//! Malformed frames, frames in the wrong framing, over-limit frames, a client that stops
//! reading, stop signals.

use crate::support::{serve, Server, Wire};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// A server whose frame limit is small enough to pass cheaply.
fn small_frames(wire: Wire) -> Server {
    Server::start_command(wire, serve(Some("memory")).args(["--max-frame-bytes", "1024"]))
}

fn escape_request(id: u64, text: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": "xml/escape", "params": {"text": text}})).unwrap()
}

fn lsp_frame(declared: usize, body: &[u8]) -> Vec<u8> {
    let mut frame = format!("Content-Length: {declared}\r\n\r\n").into_bytes();
    frame.extend_from_slice(body);
    frame
}

fn escaped(id: u64, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"text": text}})
}

fn assert_parse_error(message: &Value, words: &str) {
    assert_eq!(message["id"], Value::Null, "{message}");
    assert_eq!(message["error"]["code"], -32700, "{message}");
    let text = message["error"]["message"].as_str().unwrap();
    assert!(text.contains(words), "{text:?} should say {words:?}");
}

#[test]
fn a_content_length_up_to_a_header_too_long_loses_no_request() {
    let mut s = Server::start(Wire::Lsp, "memory");
    for extra in 1..=13 {
        let first = escape_request(1, "<");
        let next = escape_request(2, "&");
        let mut bytes = lsp_frame(first.len() + extra, &first);
        bytes.extend(lsp_frame(next.len(), &next));
        s.send_raw(&bytes);
        let mut answers = [s.recv().unwrap(), s.recv().unwrap()];
        answers.sort_by_key(|a| a["id"].as_u64());
        assert_eq!(answers, [escaped(1, "&lt;"), escaped(2, "&amp;")], "{extra} bytes too long");
    }
}

#[test]
fn a_header_without_body_and_a_missing_blank_line_do_not_take_the_next_request() {
    let mut s = Server::start(Wire::Lsp, "memory");
    let next = escape_request(3, "<");
    // A header with no body.
    s.send_raw(b"Content-Length: 60\r\n\r\n");
    s.send_raw(&lsp_frame(next.len(), &next));
    assert_parse_error(&s.recv().unwrap(), "followed by another header");
    assert_eq!(s.recv().unwrap(), escaped(3, "&lt;"));
    // No blank line after the header.
    let lost = escape_request(4, "x");
    s.send_raw(format!("Content-Length: {}\r\n", lost.len()).as_bytes());
    s.send_raw(&lost);
    s.send_raw(&lsp_frame(next.len(), &next));
    assert_parse_error(&s.recv().unwrap(), "not ended by a blank line");
    assert_eq!(s.recv().unwrap(), escaped(3, "&lt;"));
}

#[test]
fn an_over_limit_length_is_answered_with_its_id_before_the_rest_of_its_body_arrives() {
    let mut s = small_frames(Wire::Lsp);
    let declared = 5_000_000;
    let start = br#"{"jsonrpc":"2.0","id":"big-one","method":"xml/escape","params":{"text":""#;
    s.send_raw(format!("Content-Length: {declared}\r\n\r\n").as_bytes());
    s.send_raw(start);
    let answer = s.recv().unwrap();
    assert_eq!(answer["id"], "big-one", "the request's id, read from the body's first bytes: {answer}");
    assert_eq!(answer["error"]["code"], -32004);
    assert_eq!(answer["error"]["data"], json!({"limit": "maxFrameBytes", "value": declared, "max": 1024}));
    // The body streams in and is dropped; the next request is served.
    let chunk = vec![b'a'; 64 * 1024];
    let mut sent = start.len();
    while sent < declared {
        let n = chunk.len().min(declared - sent);
        s.send_raw(&chunk[..n]);
        sent += n;
    }
    assert_eq!(s.ok("xml/escape", json!({"text": "<"}))["text"], "&lt;");
}

#[test]
fn an_over_limit_length_that_lies_does_not_swallow_the_stream() {
    let mut s = small_frames(Wire::Lsp);
    s.send_raw(b"Content-Length: 60000000\r\n\r\n{}");
    // The next frame's header shows where the short body ended.
    let next = escape_request(5, "'");
    s.send_raw(&lsp_frame(next.len(), &next));
    let refused = s.recv().unwrap();
    assert_eq!((refused["id"].clone(), refused["error"]["code"].clone()), (Value::Null, json!(-32004)), "{refused}");
    assert_eq!(s.recv().unwrap(), escaped(5, "&apos;"));
}

#[test]
fn an_over_limit_length_without_an_id_in_its_first_4_kib_is_answered_with_id_null() {
    let mut s = small_frames(Wire::Lsp);
    let declared = 200_000;
    s.send_raw(format!("Content-Length: {declared}\r\n\r\n").as_bytes());
    let mut body = br#"{"jsonrpc":"2.0","method":"xml/escape","params":{"text":""#.to_vec();
    body.resize(declared - 4, b'a');
    body.extend_from_slice(br#""},"id":7}"#.get(..4).unwrap());
    s.send_raw(&body);
    let answer = s.recv().unwrap();
    assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (Value::Null, json!(-32004)), "{answer}");
    assert_eq!(s.ok("xml/escape", json!({"text": "<"}))["text"], "&lt;");
}

#[test]
fn jsonrpc_is_compared_by_its_value_however_it_is_escaped() {
    for wire in [Wire::Lsp, Wire::Ndjson] {
        let mut s = Server::start(wire, "memory");
        s.send_body(br#"{"jsonrpc":"2\u002e0","id":1,"method":"xml/escape","params":{"text":"<"}}"#);
        assert_eq!(s.recv().unwrap(), escaped(1, "&lt;"));
        s.send_body(br#"[{"jsonrpc":"\u0032.0","id":2,"method":"xml/escape","params":{"text":"&"}}]"#);
        assert_eq!(s.recv().unwrap(), json!([escaped(2, "&amp;")]));
        s.send_body(br#"{"jsonrpc":"2\u002e1","id":3,"method":"xml/escape","params":{"text":"<"}}"#);
        let refused = s.recv().unwrap();
        assert_eq!((refused["id"].clone(), refused["error"]["code"].clone()), (json!(3), json!(-32600)), "{refused}");
    }
}

/// A server over NDJSON whose answers are read as bytes (a parser would decode the ids).
struct RawNdjson {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl RawNdjson {
    fn start() -> RawNdjson {
        use std::process::Stdio;
        let mut child = crate::support::serve(Some("memory"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        RawNdjson { child, stdin, stdout }
    }

    fn send(&mut self, line: &str) {
        use std::io::Write;
        self.stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn line(&mut self) -> String {
        use std::io::BufRead;
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        line.trim_end().to_owned()
    }
}

impl Drop for RawNdjson {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn an_id_with_a_lone_surrogate_comes_back_byte_for_byte() {
    let mut s = RawNdjson::start();
    s.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize"}"#);
    assert!(s.line().contains(r#""id":0,"result""#));
    // A lone surrogate in an id, in a batch entry's id, and a valid pair: each comes back as sent.
    for (request, id) in [
        (r#"{"jsonrpc":"2.0","id":"\ud800","method":"xml/escape","params":{"text":"<"}}"#, r#""\ud800""#),
        (r#"[{"jsonrpc":"2.0","id":"a\uDBFFb","method":"xml/escape","params":{"text":"x"}}]"#, r#""a\uDBFFb""#),
        (r#"{"jsonrpc":"2.0","id":"\ud83d\ude00","method":"xml/escape","params":{"text":"x"}}"#, r#""\ud83d\ude00""#),
        (r#"{"jsonrpc":"2.0","id":"\udc00","method":"no/such"}"#, r#""\udc00""#),
    ] {
        s.send(request);
        let answer = s.line();
        assert!(answer.contains(&format!(r#""id":{id},"#)), "{request} was answered {answer}");
    }
    // A lone surrogate in the params is still read as U+FFFD.
    s.send(r#"{"jsonrpc":"2.0","id":"\udfff","method":"xml/escape","params":{"text":"\udfff"}}"#);
    assert_eq!(s.line(), "{\"jsonrpc\":\"2.0\",\"id\":\"\\udfff\",\"result\":{\"text\":\"\u{fffd}\"}}");
}

#[test]
fn a_cancel_names_a_request_by_its_id_as_sent() {
    let mut s = RawNdjson::start();
    s.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize"}"#);
    s.line();
    s.send(r#"{"jsonrpc":"2.0","id":1,"method":"thread/open","params":{"threadId":"long"}}"#);
    s.line();
    let events: Vec<String> = (0..50_000)
        .map(|i| format!(r#"{{"type":"message","role":"user","content":"m{i}","iteration":{}}}"#, i / 100))
        .collect();
    for id in 2..4 {
        s.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"thread/append","params":{{"threadId":"long","events":[{}]}}}}"#,
            events.join(",")
        ));
        assert!(s.line().contains(r#""result""#));
    }
    // The first render of a long thread runs off the reader until its cancel arrives.
    s.send(
        r#"{"jsonrpc":"2.0","id":"\ud800","method":"thread/render","params":{"threadId":"long","format":"anthropic"}}"#,
    );
    s.send(r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"\ud800"}}"#);
    let answer = s.line();
    assert!(answer.starts_with(r#"{"jsonrpc":"2.0","id":"\ud800","error":{"code":-32800"#), "{answer}");
}

#[test]
fn an_over_limit_ndjson_line_is_refused_before_it_ends() {
    let mut s = small_frames(Wire::Ndjson);
    s.send_raw(br#"{"jsonrpc":"2.0","id":6,"method":"xml/escape","params":{"text":""#);
    s.send_raw(&vec![b'a'; 4096]);
    let answer = s.recv().unwrap();
    assert_eq!(answer["id"], 6, "{answer}");
    assert_eq!(answer["error"]["code"], -32004);
    assert_eq!(answer["error"]["data"]["limit"], "maxFrameBytes");
    assert_eq!(answer["error"]["data"]["max"], 1024);
    s.send_raw(&vec![b'a'; 100_000]);
    s.send_raw(b"\"}}\n");
    assert_eq!(s.ok("xml/escape", json!({"text": "&"}))["text"], "&amp;");
}

#[test]
fn a_message_in_the_other_framing_is_answered_and_the_connection_goes_on() {
    let mut s = Server::start(Wire::Lsp, "memory");
    let mut line = escape_request(7, "<");
    line.push(b'\n');
    s.send_raw(&line);
    assert_parse_error(&s.recv().unwrap(), "this connection uses LSP framing");
    assert_eq!(s.ok("xml/escape", json!({"text": "<"}))["text"], "&lt;");

    let mut s = Server::start(Wire::Ndjson, "memory");
    let body = escape_request(8, "<");
    s.send_raw(&lsp_frame(body.len(), &body));
    s.send_raw(b"\n");
    assert_parse_error(&s.recv().unwrap(), "this connection uses NDJSON framing");
    // The body that followed the header ends the line and is served as its own message.
    assert_eq!(s.recv().unwrap(), escaped(8, "&lt;"));
    assert_eq!(s.ok("xml/escape", json!({"text": "<"}))["text"], "&lt;");
}

#[test]
fn a_byte_order_mark_before_the_first_message_is_whitespace() {
    let mut s = Server::spawn(Wire::Ndjson, &mut serve(Some("memory")));
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize"})).unwrap());
    bytes.push(b'\n');
    s.send_raw(&bytes);
    let answer = s.recv().unwrap();
    assert_eq!(answer["result"]["protocolVersion"], 1, "{answer}");
}

#[test]
fn params_null_is_invalid_params() {
    let mut s = Server::start(Wire::Ndjson, "memory");
    s.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"xml/escape\",\"params\":null}\n");
    let answer = s.recv().unwrap();
    assert_eq!(answer["id"], 9, "{answer}");
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert_eq!(answer["error"]["data"]["path"], "", "{answer}");
}

/// Answers bigger than the write batch (1 MiB) are written uncopied, header and body apart:
/// they must come out framed exactly like small ones, in both framings, in order.
#[test]
fn a_large_answer_is_framed_like_a_small_one_between_others() {
    for wire in [Wire::Lsp, Wire::Ndjson] {
        let mut s = Server::start(wire, "memory");
        let big = "<tag attr=\"&\">\u{1f980}\n".repeat(100_000); // 2.1 MB; escaped about 3.3 MB
        let requests = [(1, "a < b"), (2, big.as_str()), (3, "c > d")];
        let mut bytes = Vec::new();
        for (id, text) in requests {
            let body = escape_request(id, text);
            match wire {
                Wire::Lsp => bytes.extend(lsp_frame(body.len(), &body)),
                Wire::Ndjson => bytes.extend(body.into_iter().chain([b'\n'])),
            }
        }
        s.send_raw(&bytes);
        // Requests run concurrently, so answers may come in any order; each must be whole.
        let mut answers: Vec<Value> = (0..3).map(|_| s.recv().unwrap()).collect();
        answers.sort_by_key(|answer| answer["id"].as_u64());
        for ((id, text), answer) in requests.into_iter().zip(answers) {
            let expected = escaped(id, &threadkeeper::xml::escape_xml(text));
            assert!(answer == expected, "{wire:?}: answer {id} differs ({} bytes)", answer.to_string().len());
        }
    }
}

/// Resident and peak resident size of a process, in bytes.
fn memory_of(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        let line = status.lines().find(|l| l.starts_with(name)).unwrap();
        line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// CPU time a process has used, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line; the name and state are 2 and 3.
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// Waits until the process has used no CPU for a while: it is blocked, waiting.
fn wait_until_idle(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(120);
    let (mut last, mut quiet) = (cpu_ticks(pid), 0);
    while quiet < 5 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        let now = cpu_ticks(pid);
        quiet = if now == last { quiet + 1 } else { 0 };
        last = now;
    }
}

/// A client that reads the server's output only when it chooses to (the [`Server`] harness
/// reads it all the time).
struct LazyReader {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl LazyReader {
    fn start() -> LazyReader {
        use std::process::Stdio;
        let mut child = serve(Some("memory")).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let stdin = child.stdin.take();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        LazyReader { child, stdin, stdout }
    }

    fn send(&mut self, message: &Value) {
        use std::io::Write;
        let body = serde_json::to_vec(message).unwrap();
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(&lsp_frame(body.len(), &body)).unwrap();
        stdin.flush().unwrap();
    }

    fn recv(&mut self) -> Value {
        use std::io::{BufRead, Read};
        let mut length = None;
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "output ended");
            match line.trim_end().split_once(':') {
                Some((_, value)) => length = value.trim().parse::<usize>().ok(),
                None => break,
            }
        }
        let mut body = vec![0; length.expect("a Content-Length")];
        self.stdout.read_exact(&mut body).unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let answer = self.recv();
        assert!(answer.get("result").is_some(), "{answer}");
        answer
    }
}

impl Drop for LazyReader {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The bound documented in protocol/README.md ("Backpressure") for answers of 1 MiB, with room
/// for the process itself.
const RSS_BOUND: u64 = 128 << 20;

#[cfg(target_os = "linux")]
#[test]
fn a_client_that_does_not_read_stops_the_server_reading_instead_of_growing_it() {
    use std::io::Write;
    let mut client = LazyReader::start();
    client.call(1, "initialize", json!({}));
    client.call(2, "thread/open", json!({"threadId": "big"}));
    let content = "a".repeat(1 << 20);
    let event = json!({"type": "message", "role": "user", "content": content, "iteration": 0});
    client.call(3, "thread/append", json!({"threadId": "big", "events": [event]}));
    // 150 requests whose answers are 1 MiB each: 150 MiB the client does not read for now. The
    // requests are sent from another thread, which blocks when the server stops reading them.
    let renders = 150u64;
    let mut stdin = client.stdin.take().unwrap();
    let sender = std::thread::spawn(move || {
        for id in 0..renders {
            let request = json!({"jsonrpc": "2.0", "id": 100 + id, "method": "thread/render",
                                 "params": {"threadId": "big", "format": "xml"}});
            let body = serde_json::to_vec(&request).unwrap();
            stdin.write_all(&lsp_frame(body.len(), &body)).unwrap();
        }
        stdin.flush().unwrap();
        stdin
    });
    let pid = client.child.id();
    wait_until_idle(pid);
    let (stalled_rss, _) = memory_of(pid);
    assert!(stalled_rss < RSS_BOUND, "resident size {} MiB with answers unread", stalled_rss >> 20);

    // Now the client reads: every answer arrives.
    let mut ids = Vec::new();
    for _ in 0..renders {
        let answer = client.recv();
        let text = answer["result"]["text"].as_str().unwrap_or_else(|| panic!("{answer}"));
        assert!(text.len() > 1 << 20);
        ids.push(answer["id"].as_u64().unwrap());
    }
    ids.sort_unstable();
    assert_eq!(ids, (100..100 + renders).collect::<Vec<_>>());
    let stdin = sender.join().unwrap();
    // Read while the server still runs: closing its input ends it.
    let (_, peak) = memory_of(pid);
    assert!(peak < RSS_BOUND, "peak resident size {} MiB", peak >> 20);
    drop(stdin);
    assert_eq!(client.child.wait().unwrap().code(), Some(1), "end of input without shutdown");
}

#[cfg(unix)]
fn stop_with_signal(signal: libc::c_int) {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("threads.db").display());
    let mut s = Server::start(Wire::Lsp, &store);
    s.ok("thread/open", json!({"threadId": "run"}));
    let appends = 50;
    let ids: Vec<u64> = (0..appends)
        .map(|i| {
            let event = json!({"type": "message", "role": "user", "content": format!("step {i}"), "iteration": i});
            s.request("thread/append", json!({"threadId": "run", "events": [event]}))
        })
        .collect();
    // Answered by the reader itself once it has read it, so every append before it has been read.
    s.ok("xml/escape", json!({"text": "read"}));
    assert_eq!(unsafe { libc::kill(s.pid() as libc::pid_t, signal) }, 0);
    for id in ids {
        let answer = s.response(id);
        assert!(answer.get("result").is_some(), "{answer}");
    }
    let status = s.wait_for_exit();
    assert_eq!(status.code(), Some(0), "{status:?}; stderr:\n{}", s.stderr());

    // Everything answered is in the store.
    let mut again = Server::start(Wire::Lsp, &store);
    let info = again.ok("thread/open", json!({"threadId": "run"}));
    assert_eq!(info["eventCount"], appends, "{info}");
}

#[cfg(unix)]
#[test]
fn sigterm_finishes_what_was_read_answers_it_and_exits_zero() {
    stop_with_signal(libc::SIGTERM);
}

#[cfg(unix)]
#[test]
fn sigint_finishes_what_was_read_answers_it_and_exits_zero() {
    stop_with_signal(libc::SIGINT);
}

/// Whatever stdin is — a pipe (the usual case, read through the reactor), a socket pair (what
/// Node's libuv hands a child), one socket as both stdin and stdout, or a plain file — every
/// request is answered.
#[cfg(unix)]
mod stdin_kinds {
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;
    use std::process::{Command, Stdio};

    const REQUESTS: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}\n\
        {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"xml/escape\",\"params\":{\"text\":\"<&>\"}}\n\
        {\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"shutdown\"}\n{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}\n";

    fn server(stdin: Stdio, stdout: Stdio) -> std::process::Child {
        Command::new(env!("CARGO_BIN_EXE_threadkeeper"))
            .args(["serve", "--store", "memory"])
            .stdin(stdin)
            .stdout(stdout)
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }

    fn check_answers(output: &[u8]) {
        let text = String::from_utf8_lossy(output);
        let answers: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(answers.len(), 3, "{text}");
        assert_eq!(answers[1]["result"]["text"], "&lt;&amp;&gt;");
    }

    #[test]
    fn a_socket_pair() {
        let (mut host_in, child_in) = UnixStream::pair().unwrap();
        let (mut host_out, child_out) = UnixStream::pair().unwrap();
        let mut child = server(
            Stdio::from(std::os::fd::OwnedFd::from(child_in)),
            Stdio::from(std::os::fd::OwnedFd::from(child_out)),
        );
        host_in.write_all(REQUESTS).unwrap();
        let mut output = Vec::new();
        host_out.read_to_end(&mut output).unwrap();
        assert!(child.wait().unwrap().success());
        check_answers(&output);
    }

    #[test]
    fn one_socket_as_stdin_and_stdout() {
        let (mut host, child_end) = UnixStream::pair().unwrap();
        let fd = std::os::fd::OwnedFd::from(child_end);
        let mut child = server(Stdio::from(fd.try_clone().unwrap()), Stdio::from(fd));
        host.write_all(REQUESTS).unwrap();
        let mut output = Vec::new();
        host.read_to_end(&mut output).unwrap();
        assert!(child.wait().unwrap().success());
        check_answers(&output);
    }

    #[test]
    fn a_plain_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("requests.ndjson");
        std::fs::write(&path, REQUESTS).unwrap();
        let child = server(Stdio::from(std::fs::File::open(&path).unwrap()), Stdio::piped());
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success());
        check_answers(&output.stdout);
    }
}

/// Each answer leaves in one write, header and body together, so a host is woken once per
/// answer (a line-buffered stdout wrote an LSP header, then its body at the flush). Stdout is a
/// datagram socket here: it keeps each write a message of its own.
#[cfg(unix)]
#[test]
fn an_answer_leaves_in_one_write_header_and_body_together() {
    use std::io::Write;
    use std::os::unix::net::UnixDatagram;
    use std::process::{Command, Stdio};
    let (host_out, child_out) = UnixDatagram::pair().unwrap();
    host_out.set_read_timeout(Some(crate::support::ANSWER_TIMEOUT)).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_threadkeeper"))
        .args(["serve", "--store", "memory"])
        .stdin(Stdio::piped())
        .stdout(Stdio::from(std::os::fd::OwnedFd::from(child_out)))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}});
    let requests = [serde_json::to_vec(&initialize).unwrap(), escape_request(2, "a < b")];
    for (request, id) in requests.iter().zip(1..) {
        stdin.write_all(&lsp_frame(request.len(), request)).unwrap();
        let mut datagram = vec![0u8; 64 * 1024];
        let n = host_out.recv(&mut datagram).expect("an answer");
        let text = std::str::from_utf8(&datagram[..n]).unwrap();
        let (header, body) = text.split_once("\r\n\r\n").unwrap_or_else(|| panic!("one write held only {text:?}"));
        assert_eq!(header, format!("Content-Length: {}", body.len()), "one write held {text:?}");
        assert_eq!(serde_json::from_str::<Value>(body).unwrap()["id"], id);
    }
    drop(stdin);
    assert!(child.wait().unwrap().code().is_some());
}
