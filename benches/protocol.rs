//! Whole-process benchmarks of the sidecar over real pipes (run: `cargo bench --bench protocol`).
//!
//! 1. Round trip of a small request (p50, p99) against a bare echo peer over the same framing.
//! 2. Agent loop: 1,000 steps, each appends 4 events and renders the thread as XML; against the
//!    Node reference serializer re-rendering the whole thread in-process each step.
//! 3. Memory: resident size of 1,000 threads of 100 events against their raw JSON size.
//! 4. Memory of one big thread (`cargo bench --bench protocol -- big_thread`): 1M small events
//!    appended in batches of 50k, resident size after each render format and after
//!    `thread/close`, against the raw JSON size (`THREADKEEPER_BENCH_EVENTS` changes the count).
//! 5. Throughput: small requests pipelined from this process (a writer thread sends, the main
//!    thread reads), requests per second (`cargo bench --bench protocol -- throughput`).
//! 6. Decoding: one 48 MiB frame in each framing, in process (`cargo bench --bench protocol -- decoding`).

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_threadkeeper");

struct Peer {
    child: Child,
    /// Taken by a writer thread when requests are pipelined.
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Peer {
    fn spawn(mut command: Command) -> Peer {
        let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Peer { child, stdin: Some(stdin), stdout }
    }

    fn server() -> Peer {
        // THREADKEEPER_BENCH_BIN measures another build against the same anchors.
        let mut command = Command::new(std::env::var("THREADKEEPER_BENCH_BIN").unwrap_or_else(|_| BIN.to_owned()));
        command.args(["serve", "--store", "memory"]);
        let mut peer = Peer::spawn(command);
        peer.call(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize"}));
        peer
    }

    fn echo() -> Peer {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command.arg("--echo-peer");
        Peer::spawn(command)
    }

    /// The echo peer, polling its input for 50 µs after each answer as the server does.
    fn polling_echo() -> Peer {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command.arg("--echo-peer-polling");
        Peer::spawn(command)
    }

    fn send_body(&mut self, body: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin not taken");
        write!(stdin, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
        stdin.write_all(body).unwrap();
        stdin.flush().unwrap();
    }

    fn recv_body(&mut self) -> Vec<u8> {
        read_frame(&mut self.stdout).expect("a response")
    }

    fn call(&mut self, request: &Value) -> Value {
        self.send_body(&serde_json::to_vec(request).unwrap());
        serde_json::from_slice(&self.recv_body()).unwrap()
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_frame(reader: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((_, value)) = line.split_once(':') {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(body)
}

/// The floor: a peer that answers each frame with the same bytes.
fn echo_peer(polling: bool) {
    let stdin = std::io::stdin();
    let mut reader: Box<dyn BufRead> =
        if polling { Box::new(std::io::BufReader::new(PollingStdin::new())) } else { Box::new(stdin.lock()) };
    let mut stdout = std::io::stdout().lock();
    while let Some(body) = read_frame(&mut reader) {
        write!(stdout, "Content-Length: {}\r\n\r\n", body.len()).unwrap();
        stdout.write_all(&body).unwrap();
        stdout.flush().unwrap();
    }
}

/// Non-blocking stdin that, when no input is ready, polls it for 50 µs before sleeping in
/// poll(2): the same input polling the server does, so the two floors compare like for like.
struct PollingStdin;

impl PollingStdin {
    fn new() -> Self {
        // SAFETY: fcntl on this process's own stdin, with flags it just read.
        unsafe {
            let flags = libc::fcntl(0, libc::F_GETFL);
            libc::fcntl(0, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
        PollingStdin
    }
}

impl std::io::Read for PollingStdin {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let until = Instant::now() + Duration::from_micros(50);
        loop {
            // SAFETY: reads into `buf`, which is valid for its length.
            let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
            if n >= 0 {
                return Ok(n as usize);
            }
            let error = std::io::Error::last_os_error();
            if error.kind() != std::io::ErrorKind::WouldBlock {
                return Err(error);
            }
            if Instant::now() >= until {
                let mut fd = libc::pollfd { fd: 0, events: libc::POLLIN, revents: 0 };
                // SAFETY: one valid pollfd.
                unsafe { libc::poll(&mut fd, 1, -1) };
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

fn round_trip() {
    const CALLS: usize = 5_000;
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "xml/escape", "params": {"text": "a < b & \"c\""}});
    let body = serde_json::to_vec(&request).unwrap();
    let peers = [
        ("threadkeeper xml/escape", Peer::server()),
        ("echo peer (floor)", Peer::echo()),
        ("echo peer polling its input as the server does", Peer::polling_echo()),
    ];
    for (name, mut peer) in peers {
        for _ in 0..200 {
            peer.send_body(&body);
            peer.recv_body();
        }
        let mut times = Vec::with_capacity(CALLS);
        for _ in 0..CALLS {
            let start = Instant::now();
            peer.send_body(&body);
            peer.recv_body();
            times.push(start.elapsed());
        }
        times.sort();
        println!(
            "round trip, {name}: p50 {}, p99 {} ({CALLS} calls)",
            us(percentile(&times, 0.5)),
            us(percentile(&times, 0.99))
        );
    }
}

fn throughput() {
    const CALLS: usize = 200_000;
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "xml/escape", "params": {"text": "a < b & \"c\""}});
    let body = serde_json::to_vec(&request).unwrap();
    for (name, mut peer) in [("threadkeeper xml/escape", Peer::server()), ("echo peer (floor)", Peer::echo())] {
        let mut stdin = peer.stdin.take().expect("stdin");
        let frames: Vec<u8> = {
            let mut one = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
            one.extend_from_slice(&body);
            one.repeat(CALLS)
        };
        let start = Instant::now();
        let writer = std::thread::spawn(move || {
            for chunk in frames.chunks(64 * 1024) {
                stdin.write_all(chunk).unwrap();
            }
            stdin.flush().unwrap();
            stdin
        });
        count_frames(peer.stdout.get_mut(), CALLS);
        let elapsed = start.elapsed();
        peer.stdin = Some(writer.join().unwrap());
        println!(
            "throughput, {name}: {CALLS} pipelined requests in {:.3} s, {:.0} requests/s",
            elapsed.as_secs_f64(),
            CALLS as f64 / elapsed.as_secs_f64()
        );
    }
}

/// Reads until `n` LSP frames have arrived, in big reads, so the reading side costs far less
/// than the peer it measures.
fn count_frames(reader: &mut impl std::io::Read, n: usize) {
    let mut buf = vec![0u8; 1 << 20];
    let (mut filled, mut start, mut seen) = (0usize, 0usize, 0usize);
    while seen < n {
        // Frames in the buffer: "Content-Length: N\r\n\r\n" then N bytes.
        while let Some(header_end) = find(&buf[start..filled], b"\r\n\r\n") {
            let header = std::str::from_utf8(&buf[start..start + header_end]).unwrap();
            let length: usize = header.rsplit(':').next().unwrap().trim().parse().unwrap();
            let end = start + header_end + 4 + length;
            if end > filled {
                break;
            }
            start = end;
            seen += 1;
        }
        if seen == n {
            break;
        }
        buf.copy_within(start..filled, 0);
        filled -= start;
        start = 0;
        let read = reader.read(&mut buf[filled..]).unwrap();
        assert!(read > 0, "the peer ended after {seen} of {n} answers");
        filled += read;
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The events of one agent-loop step: a tool call, its result, an assistant reply, a user turn.
fn step_events(step: usize) -> Vec<Value> {
    let call_id = format!("call_{step}");
    vec![
        json!({"type": "tool_call", "toolName": "search", "toolCallId": call_id, "args": {"query": format!("step {step} query"), "limit": 5}, "iteration": step, "timestamp": 1763769600000u64 + step as u64}),
        json!({"type": "tool_result", "toolCallId": call_id, "result": format!("result {step}: {}", "lorem ipsum <dolor> & sit amet ".repeat(12)), "iteration": step, "timestamp": 1763769600001u64 + step as u64}),
        json!({"type": "message", "role": "assistant", "content": format!("Step {step}: I found \"something\" worth checking."), "iteration": step, "timestamp": 1763769600002u64 + step as u64}),
        json!({"type": "message", "role": "user", "content": "Go on, and mind the 'edge cases'.", "iteration": step, "timestamp": 1763769600003u64 + step as u64}),
    ]
}

const STEPS: usize = 1_000;

/// How a host drives each agent-loop step.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// Append, then render the whole document: two round trips.
    Whole,
    /// Append, then render only the new lines (`options.fromEvent`): two round trips.
    Delta,
    /// Append and delta render in one JSON-RPC batch: one round trip (the thread's lane keeps
    /// them in order).
    BatchedDelta,
}

/// One agent loop over the sidecar; delta modes keep the document here.
fn agent_loop_over_sidecar(mode: Mode) -> Duration {
    let delta = mode != Mode::Whole;
    let mut peer = Peer::server();
    peer.call(&json!({"jsonrpc": "2.0", "id": 1, "method": "thread/open", "params": {"threadId": "loop"}}));
    let mut per_step = Vec::with_capacity(STEPS);
    let mut lines = String::new();
    let mut known = 0u64;
    let mut document_len = 0;
    let start = Instant::now();
    for step in 0..STEPS {
        let t = Instant::now();
        let append = json!({"jsonrpc": "2.0", "id": 2, "method": "thread/append", "params": {"threadId": "loop", "events": step_events(step)}});
        let delta_render = json!({"jsonrpc": "2.0", "id": 3, "method": "thread/render", "params": {"threadId": "loop", "format": "xml", "options": {"fromEvent": known}}});
        if mode == Mode::BatchedDelta {
            let answers = peer.call(&json!([append, delta_render]));
            let result = &answers[1]["result"];
            lines.push_str(result["lines"].as_str().unwrap());
            known = result["eventCount"].as_u64().unwrap();
            let document = format!("<thread>\n{lines}{}", result["tail"].as_str().unwrap());
            document_len = document.len();
        } else if delta {
            peer.call(&append);
            let r = peer.call(&delta_render);
            let result = &r["result"];
            lines.push_str(result["lines"].as_str().unwrap());
            known = result["eventCount"].as_u64().unwrap();
            // What a host hands its model each step: the whole document, assembled locally.
            let document = format!("<thread>\n{lines}{}", result["tail"].as_str().unwrap());
            document_len = document.len();
        } else {
            peer.call(&append);
            let r = peer.call(&json!({"jsonrpc": "2.0", "id": 3, "method": "thread/render", "params": {"threadId": "loop", "format": "xml"}}));
            document_len = r["result"]["text"].as_str().unwrap().len();
        }
        per_step.push(t.elapsed());
    }
    let total = start.elapsed();
    let first: Duration = per_step[..100].iter().sum::<Duration>() / 100;
    let last: Duration = per_step[STEPS - 100..].iter().sum::<Duration>() / 100;
    println!(
        "agent loop, threadkeeper ({}): {STEPS} steps in {:.3} s, {} per step; steps 1-100 {} avg, steps 901-1000 {} avg; final document {} kB",
        match mode {
            Mode::Whole => "whole document each step",
            Mode::Delta => "XML deltas, fromEvent",
            Mode::BatchedDelta => "append + XML delta in one batch",
        },
        total.as_secs_f64(),
        us(total / STEPS as u32),
        us(first),
        us(last),
        document_len / 1024
    );
    total
}

/// The server's own cost of the loop: every step's batch written at once (the delta offsets
/// are known ahead: 4 events a step), so no step waits for a round trip.
fn agent_loop_pipelined() {
    let mut peer = Peer::server();
    peer.call(&json!({"jsonrpc": "2.0", "id": 1, "method": "thread/open", "params": {"threadId": "loop"}}));
    let frames: Vec<Vec<u8>> = (0..STEPS)
        .map(|step| {
            let batch = json!([
                {"jsonrpc": "2.0", "id": 2, "method": "thread/append", "params": {"threadId": "loop", "events": step_events(step)}},
                {"jsonrpc": "2.0", "id": 3, "method": "thread/render", "params": {"threadId": "loop", "format": "xml", "options": {"fromEvent": step * 4}}},
            ]);
            let body = serde_json::to_vec(&batch).unwrap();
            let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
            frame.extend_from_slice(&body);
            frame
        })
        .collect();
    let start = Instant::now();
    let mut stdin = peer.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        for frame in frames {
            stdin.write_all(&frame).unwrap();
        }
        stdin.flush().unwrap();
        stdin
    });
    let mut lines = 0;
    for _ in 0..STEPS {
        let answers: Value = serde_json::from_slice(&peer.recv_body()).unwrap();
        lines += answers[1]["result"]["lines"].as_str().unwrap().lines().count();
    }
    let total = start.elapsed();
    let _ = writer.join();
    assert_eq!(lines, STEPS * 4);
    println!(
        "agent loop, threadkeeper (all {STEPS} batches pipelined: the server's own cost): {:.3} s, {} per step",
        total.as_secs_f64(),
        us(total / STEPS as u32)
    );
}

fn agent_loop() {
    let whole = agent_loop_over_sidecar(Mode::Whole);
    let delta = agent_loop_over_sidecar(Mode::Delta);
    let batched = agent_loop_over_sidecar(Mode::BatchedDelta);
    agent_loop_pipelined();
    let events: Vec<Value> = (0..STEPS).flat_map(step_events).collect();
    let path = std::env::temp_dir().join("threadkeeper-agent-loop-events.json");
    std::fs::write(&path, serde_json::to_vec(&events).unwrap()).unwrap();
    let node = Command::new("node").arg("bench/agent-loop-reference.mjs").arg(&path).output();
    match node {
        Ok(out) if out.status.success() => {
            let report = String::from_utf8_lossy(&out.stdout);
            print!("agent loop, {report}");
            if let Some(ms) = report
                .split("total_ms=")
                .nth(1)
                .and_then(|s| s.split_whitespace().next())
                .and_then(|s| s.parse::<f64>().ok())
            {
                let node = ms / 1e3;
                println!(
                    "agent loop, ratio vs Node reference: {:.1}x (whole document each step), {:.1}x (XML deltas), {:.1}x (append + delta in one batch)",
                    node / whole.as_secs_f64(),
                    node / delta.as_secs_f64(),
                    node / batched.as_secs_f64()
                );
            }
        }
        Ok(out) => println!("agent loop, Node reference failed: {}", String::from_utf8_lossy(&out.stderr)),
        Err(e) => println!("agent loop, Node reference not run ({e})"),
    }
}

fn rss_kib(pid: u32) -> u64 {
    status_kib(pid, "VmRSS:")
}

/// A size line of `/proc/PID/status` (`VmRSS:`, `VmHWM:` for the peak), in KiB.
fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn memory() {
    const THREADS: usize = 1_000;
    const EVENTS: usize = 100;
    let mut peer = Peer::server();
    let baseline = rss_kib(peer.pid());
    let mut raw = 0usize;
    for t in 0..THREADS {
        let id = format!("m{t}");
        peer.call(&json!({"jsonrpc": "2.0", "id": 1, "method": "thread/open", "params": {"threadId": id}}));
        let events: Vec<Value> = (0..EVENTS / 4).flat_map(step_events).collect();
        raw += events.iter().map(|e| serde_json::to_string(e).unwrap().len()).sum::<usize>();
        peer.call(&json!({"jsonrpc": "2.0", "id": 2, "method": "thread/append", "params": {"threadId": id, "events": events}}));
        // Render once, as a host would, so the kept rendering counts too.
        peer.call(
            &json!({"jsonrpc": "2.0", "id": 3, "method": "thread/render", "params": {"threadId": id, "format": "xml"}}),
        );
    }
    let after = rss_kib(peer.pid());
    println!(
        "memory: {THREADS} threads x {EVENTS} events: raw JSON {:.1} MiB, resident {:.1} MiB after (baseline {:.1} MiB), {:.2}x the raw size",
        raw as f64 / 1048576.0,
        after as f64 / 1024.0,
        baseline as f64 / 1024.0,
        (after - baseline) as f64 * 1024.0 / raw as f64
    );
}

/// Small events of one agent step, about 100 bytes of compact JSON each: a user turn, a call,
/// its result, an assistant reply.
fn small_events(step: usize) -> [Value; 4] {
    let id = format!("c{step}");
    [
        json!({"type": "message", "role": "user", "content": format!("Check item {step}."), "iteration": step}),
        json!({"type": "tool_call", "toolName": "lookup", "toolCallId": id, "args": {"item": step}, "iteration": step}),
        json!({"type": "tool_result", "toolCallId": id, "result": format!("item {step}: in stock"), "iteration": step}),
        json!({"type": "message", "role": "assistant", "content": format!("Item {step} is in stock."), "iteration": step}),
    ]
}

/// One thread of many small events: resident size after appending, after one render in each
/// format (each answer read whole, then dropped), and after `thread/close`.
fn big_thread() {
    const BATCH: usize = 50_000;
    let events: usize =
        std::env::var("THREADKEEPER_BENCH_EVENTS").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000);
    let mut peer = Peer::server();
    let mib = |kib: u64| kib as f64 / 1024.0;
    let baseline = rss_kib(peer.pid());
    peer.call(&json!({"jsonrpc": "2.0", "id": 1, "method": "thread/open", "params": {"threadId": "big"}}));
    let mut raw = 0usize;
    let mut step = 0;
    let mut appended = 0;
    while appended < events {
        let mut batch = Vec::with_capacity(BATCH);
        while batch.len() < BATCH.min(events - appended) {
            batch.extend(small_events(step));
            step += 1;
        }
        batch.truncate(events - appended);
        appended += batch.len();
        raw += batch.iter().map(|e| serde_json::to_string(e).unwrap().len()).sum::<usize>();
        let answer = peer.call(&json!({"jsonrpc": "2.0", "id": 2, "method": "thread/append", "params": {"threadId": "big", "events": batch}}));
        assert!(answer.get("result").is_some(), "append failed: {answer}");
    }
    let report = |what: &str, kib: u64| {
        println!(
            "big thread, {events} events (raw JSON {:.1} MiB): {what}: resident {:.1} MiB = {:.2}x the raw JSON (baseline {:.1} MiB)",
            raw as f64 / 1048576.0,
            mib(kib),
            kib as f64 * 1024.0 / raw as f64,
            mib(baseline)
        );
    };
    report("after appending", rss_kib(peer.pid()));
    for format in ["xml", "messages", "openai-chat", "openai-responses", "anthropic"] {
        // Resets the peak (VmHWM) so that each render's own peak shows.
        let _ = std::fs::write(format!("/proc/{}/clear_refs", peer.pid()), "5");
        let start = Instant::now();
        let answer = peer.call(&json!({"jsonrpc": "2.0", "id": 3, "method": "thread/render", "params": {"threadId": "big", "format": format}}));
        assert!(answer.get("result").is_some(), "render failed: {answer}");
        let took = start.elapsed();
        drop(answer);
        report(&format!("peak while rendering {format}"), status_kib(peer.pid(), "VmHWM:"));
        report(&format!("after rendering {format} ({:.2} s)", took.as_secs_f64()), rss_kib(peer.pid()));
    }
    peer.call(&json!({"jsonrpc": "2.0", "id": 4, "method": "thread/close", "params": {"threadId": "big"}}));
    report("after thread/close", rss_kib(peer.pid()));
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--echo-peer") {
        return echo_peer(false);
    }
    if args.iter().any(|a| a == "--echo-peer-polling") {
        return echo_peer(true);
    }
    // `cargo test --benches` runs benches once in test mode; skip the long measurement then.
    if !args.iter().any(|a| a == "--bench") {
        println!("protocol benches: run with `cargo bench --bench protocol`");
        return;
    }
    // `cargo bench --bench protocol -- decoding` runs only the benches named.
    let named: Vec<&str> = args[1..].iter().map(String::as_str).filter(|a| !a.starts_with("--")).collect();
    let wanted = |name: &str| named.is_empty() || named.contains(&name);
    if wanted("round_trip") {
        round_trip();
    }
    if wanted("agent_loop") {
        agent_loop();
    }
    if wanted("memory") {
        memory();
    }
    if wanted("throughput") {
        throughput();
    }
    if wanted("big_thread") {
        big_thread();
    }
    if wanted("decoding") {
        frame_decoding();
    }
}

/// Size of the message decoded by [`frame_decoding`].
const DECODED_FRAME_BYTES: usize = 48 << 20;

/// Decoding one 48 MiB message in each framing, in process, fed in 64 KiB reads as the stdin
/// thread feeds the server. Linear decoding makes both framings cost about one pass over the
/// bytes; the earlier NDJSON decoder searched the whole line again on every read.
fn frame_decoding() {
    use bytes::BytesMut;
    use threadkeeper::server::framing::{Frame, FrameCodec, Framing};
    use tokio_util::codec::{Decoder, Encoder};

    // Text like an agent's tool output: words, punctuation, escapes, many 'c's (the byte the
    // LSP decoder's header search looks at), no raw line feed.
    let line = r#"Compiling crate core v1.2 (cached); cost 12 ms \"ok\" <tag a='1'> & more;\n"#;
    let text = line.repeat(DECODED_FRAME_BYTES / line.len());
    let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"xml/escape","params":{{"text":"{text}"}}}}"#);
    let mut medians = Vec::new();
    for framing in [Framing::Ndjson, Framing::Lsp] {
        let mut stream = BytesMut::new();
        FrameCodec::with_framing(framing, usize::MAX).encode(body.as_bytes(), &mut stream).unwrap();
        let mut times = Vec::new();
        for _ in 0..7 {
            let start = Instant::now();
            let mut codec = FrameCodec::new(64 << 20);
            let mut buf = BytesMut::new();
            let mut decoded = 0;
            for read in stream.chunks(64 * 1024) {
                buf.extend_from_slice(read);
                while let Some(frame) = codec.decode(&mut buf).unwrap() {
                    let Frame::Message(message) = frame else { panic!("{frame:?}") };
                    decoded += message.len();
                }
            }
            assert_eq!(decoded, body.len());
            times.push(start.elapsed());
        }
        times.sort();
        let median = times[times.len() / 2];
        let mb_per_s = body.len() as f64 / 1e6 / median.as_secs_f64();
        println!(
            "decoding a {} MiB frame, {framing:?}: median {:.1} ms ({mb_per_s:.0} MB/s), fastest {:.1} ms",
            body.len() >> 20,
            median.as_secs_f64() * 1e3,
            times[0].as_secs_f64() * 1e3
        );
        medians.push(median);
    }
    println!("decoding, LSP / NDJSON median time: {:.2}", medians[1].as_secs_f64() / medians[0].as_secs_f64());
}
