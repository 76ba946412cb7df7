//! A test client that drives the real binary's `serve` over real pipes, in either framing.
//!
//! Calls: [`Server::call`] gives the whole response, [`Server::ok`] the `result` of a call that
//! must succeed, [`Server::err`] the `error` of a call that must fail. [`Server::request`] only
//! sends; [`Server::response`] then waits for the answer with that id, and [`Server::recv`] reads
//! whatever message comes next.

#[macro_use]
pub mod conformance;
pub mod events;
pub mod golden;
pub mod media;
pub mod postgres;
pub mod search;
pub mod vectors;

use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a test waits for one message before failing.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a test waits for the process to exit before killing it and failing.
pub const EXIT_TIMEOUT: Duration = Duration::from_secs(20);
/// Requests sent by [`Server::send_in_background`] have ids from here on.
pub const BACKGROUND_FIRST_ID: u64 = 1_000_000;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Wire {
    /// `Content-Length` headers, as in LSP.
    Lsp,
    /// One JSON text per line.
    Ndjson,
}

/// The built binary's `serve`, with `--store STORE` when given; store and log settings in the
/// environment are not inherited.
pub fn serve(store: Option<&str>) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_threadkeeper"));
    cmd.arg("serve");
    if let Some(store) = store {
        cmd.arg("--store").arg(store);
    }
    cmd.env_remove("THREADKEEPER_STORE").env_remove("RUST_LOG");
    for otel in [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    ] {
        cmd.env_remove(otel);
    }
    cmd
}

/// How long a command run by [`run_bounded`] may take before it is killed and the test fails.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs the command to its end with empty input; returns its status and stderr.
pub fn run_to_end(cmd: &mut Command) -> (ExitStatus, String) {
    let output = run_bounded(cmd, None);
    (output.status, String::from_utf8_lossy(&output.stderr).into_owned())
}

/// `threadkeeper import --from claude-code FILE` into `store` as thread `bad`, which must be
/// refused (status 2) with nothing stored; its stderr.
pub fn refused_claude_code_import(store: &str, file: &std::path::Path) -> String {
    let (status, stderr) = run_to_end(
        Command::new(env!("CARGO_BIN_EXE_threadkeeper"))
            .args(["import", "--from", "claude-code", "--store", store, "--thread", "bad"])
            .arg(file)
            .env_remove("THREADKEEPER_STORE"),
    );
    assert_eq!(status.code(), Some(2), "{stderr}");
    stderr
}

/// Runs the command with `input` on its stdin (none: empty) and collects its output, as
/// `Command::output` does but within [`RUN_TIMEOUT`]: a command that hangs is killed and the
/// test fails, naming it, instead of waiting forever.
pub fn run_bounded(cmd: &mut Command, input: Option<&[u8]>) -> std::process::Output {
    let stdin = if input.is_some() { Stdio::piped() } else { Stdio::null() };
    let mut child = cmd.stdin(stdin).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    let writer = child.stdin.take().map(|mut pipe| {
        let input = input.unwrap_or_default().to_vec();
        // A command may exit before it reads its input: a closed pipe is not an error here.
        std::thread::spawn(move || drop(pipe.write_all(&input)))
    });
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let status = wait_within(&mut child, RUN_TIMEOUT)
        .unwrap_or_else(|| panic!("{cmd:?} did not finish within {RUN_TIMEOUT:?}; it was killed"));
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    std::process::Output { status, stdout: stdout.join().unwrap(), stderr: stderr.join().unwrap() }
}

/// The peak resident size of a process (`VmHWM` in `/proc/<pid>/status`), in bytes.
pub fn peak_resident_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM in /proc/<pid>/status");
    line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
}

/// The child's exit status, or `None` (the child killed) when it runs longer than `limit`.
pub fn wait_within(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A sender thread started by [`Server::send_in_background`].
pub type Background = std::thread::JoinHandle<(usize, ChildStdin)>;

pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    wire: Wire,
    /// Messages read from stdout by a reader thread, so reads can time out.
    inbox: Receiver<Result<Value, String>>,
    next_id: u64,
    /// Ids of requests sent and not answered yet.
    pending: HashSet<u64>,
    /// Answers read while waiting for another id.
    answers: HashMap<u64, Value>,
    stderr: Arc<Mutex<String>>,
    /// The `initialize` result (`Null` until [`Server::start`] or [`Server::start_command`]).
    pub init: Value,
}

/// What [`Server::recv_timeout`] found.
#[derive(Debug)]
pub enum Received {
    Message(Value),
    /// Nothing arrived in time.
    Timeout,
    /// The server closed its output.
    End,
}

impl Server {
    /// Starts `serve --store STORE` and initializes it.
    pub fn start(wire: Wire, store: &str) -> Server {
        Server::start_command(wire, &mut serve(Some(store)))
    }

    /// Starts the command and initializes the server.
    pub fn start_command(wire: Wire, cmd: &mut Command) -> Server {
        let mut server = Server::spawn(wire, cmd);
        let init = server.ok("initialize", json!({"clientInfo": {"name": "tests"}}));
        assert_eq!(init["protocolVersion"], 1, "{init}");
        server.init = init;
        server
    }

    /// Starts the command without sending anything.
    pub fn spawn(wire: Wire, cmd: &mut Command) -> Server {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn threadkeeper");
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, inbox) = mpsc::channel();
        std::thread::spawn(move || {
            while let Some(message) = read_message(&mut stdout, wire) {
                let bad = message.is_err();
                if tx.send(message).is_err() || bad {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut err_pipe = child.stderr.take().unwrap();
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err_pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Server {
            stdin: child.stdin.take(),
            child,
            wire,
            inbox,
            next_id: 1000,
            pending: HashSet::new(),
            answers: HashMap::new(),
            stderr,
            init: Value::Null,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// What the server wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Sends bytes as they are, without framing.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Frames and sends one message body.
    pub fn send_body(&mut self, body: &[u8]) {
        let frame = frame(self.wire, body);
        self.send_raw(&frame);
    }

    /// Frames and sends one message.
    pub fn send(&mut self, message: &Value) {
        self.send_body(&serde_json::to_vec(message).unwrap());
    }

    /// Sends a request without waiting; returns its id.
    pub fn request(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&with_params(json!({"jsonrpc": "2.0", "id": id, "method": method}), params));
        self.pending.insert(id);
        id
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&with_params(json!({"jsonrpc": "2.0", "method": method}), params));
    }

    /// Sends a request and returns its whole response (`result` or `error`).
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params);
        self.response(id)
    }

    /// The `result` of a call that must succeed.
    pub fn ok(&mut self, method: &str, params: Value) -> Value {
        let response = self.call(method, params.clone());
        match (response.get("result"), response.get("error")) {
            (Some(result), None) => result.clone(),
            _ => panic!("{method} {params} failed: {response}"),
        }
    }

    /// The `error` of a call that must fail.
    pub fn err(&mut self, method: &str, params: Value) -> Value {
        let response = self.call(method, params.clone());
        match (response.get("result"), response.get("error")) {
            (None, Some(error)) => error.clone(),
            _ => panic!("{method} {params} should fail: {response}"),
        }
    }

    /// The whole response to request `id`. Answers to other pending requests that come first
    /// are kept for later; any other message fails the test.
    pub fn response(&mut self, id: u64) -> Value {
        loop {
            if let Some(answer) = self.answers.remove(&id) {
                return answer;
            }
            let answer = match self.next(ANSWER_TIMEOUT) {
                Received::Message(answer) => answer,
                Received::End => panic!("the server ended before answering {id}; stderr:\n{}", self.stderr()),
                Received::Timeout => panic!("no answer to {id} within {ANSWER_TIMEOUT:?}; stderr:\n{}", self.stderr()),
            };
            match answer["id"].as_u64() {
                Some(answer_id) if self.pending.remove(&answer_id) => {
                    if answer_id == id {
                        return answer;
                    }
                    self.answers.insert(answer_id, answer);
                }
                _ => panic!("waiting for the response to {id}, got: {answer}"),
            }
        }
    }

    /// The next message, whatever its id; `None` at end of output. Fails the test when nothing
    /// comes within [`ANSWER_TIMEOUT`].
    pub fn recv(&mut self) -> Option<Value> {
        match self.recv_timeout(ANSWER_TIMEOUT) {
            Received::Message(message) => Some(message),
            Received::End => None,
            Received::Timeout => panic!("no message within {ANSWER_TIMEOUT:?}; stderr:\n{}", self.stderr()),
        }
    }

    /// The next message, whatever its id, waiting at most `timeout`.
    pub fn recv_timeout(&mut self, timeout: Duration) -> Received {
        let received = self.next(timeout);
        if let Received::Message(message) = &received {
            if let Some(id) = message["id"].as_u64() {
                self.pending.remove(&id);
            }
        }
        received
    }

    /// The next message as it comes, without marking its request answered.
    fn next(&mut self, timeout: Duration) -> Received {
        match self.inbox.recv_timeout(timeout) {
            Ok(Ok(message)) => Received::Message(message),
            Ok(Err(bad)) => panic!("bad message from the server: {bad}; stderr:\n{}", self.stderr()),
            Err(RecvTimeoutError::Timeout) => Received::Timeout,
            Err(RecvTimeoutError::Disconnected) => Received::End,
        }
    }

    /// Sends requests from another thread, so that answers can be read while they go out.
    /// Ids start at [`BACKGROUND_FIRST_ID`]; the sender stops quietly when the server goes away.
    /// [`Server::join_background`] gives the input back.
    pub fn send_in_background(&mut self, requests: Vec<(String, Value)>) -> Background {
        let mut stdin = self.stdin.take().expect("stdin open");
        let wire = self.wire;
        std::thread::spawn(move || {
            let mut sent = 0;
            for (id, (method, params)) in (BACKGROUND_FIRST_ID..).zip(requests) {
                let request = with_params(json!({"jsonrpc": "2.0", "id": id, "method": method}), params);
                let frame = frame(wire, &serde_json::to_vec(&request).unwrap());
                if stdin.write_all(&frame).and_then(|_| stdin.flush()).is_err() {
                    break;
                }
                sent += 1;
            }
            (sent, stdin)
        })
    }

    /// Waits for the background sender; returns how many requests it sent. A sender still
    /// writing after [`ANSWER_TIMEOUT`] (the server stopped reading) fails the test: the server
    /// is killed, which ends the sender's write.
    pub fn join_background(&mut self, background: Background) -> usize {
        let deadline = Instant::now() + ANSWER_TIMEOUT;
        while !background.is_finished() {
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the background sender still writes after {ANSWER_TIMEOUT:?}; stderr:\n{}", self.stderr());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let (sent, stdin) = background.join().expect("sender thread");
        self.stdin = Some(stdin);
        sent
    }

    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    /// Waits for the process to exit, killing it and failing if it takes over [`EXIT_TIMEOUT`].
    pub fn wait_for_exit(&mut self) -> ExitStatus {
        match wait_within(&mut self.child, EXIT_TIMEOUT) {
            Some(status) => status,
            None => panic!("server did not exit; stderr:\n{}", self.stderr()),
        }
    }

    /// SIGKILL: no chance to finish anything.
    pub fn kill(&mut self) {
        self.child.kill().expect("kill");
        self.child.wait().unwrap();
    }

    /// `shutdown` then `exit`; returns the exit status.
    pub fn stop(mut self) -> ExitStatus {
        self.ok("shutdown", Value::Null);
        self.send(&json!({"jsonrpc": "2.0", "method": "exit"}));
        self.close_stdin();
        self.wait_for_exit()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The message with `params`, which `Value::Null` leaves out (a present `null` is refused).
fn with_params(mut message: Value, params: Value) -> Value {
    if !params.is_null() {
        message["params"] = params;
    }
    message
}

/// One message body framed for the wire.
fn frame(wire: Wire, body: &[u8]) -> Vec<u8> {
    match wire {
        Wire::Lsp => {
            let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
            frame.extend_from_slice(body);
            frame
        }
        Wire::Ndjson => {
            let mut frame = body.to_vec();
            frame.push(b'\n');
            frame
        }
    }
}

/// Reads one framed message; `None` at end of output, `Err` with the text when it is not JSON.
fn read_message(stdout: &mut BufReader<ChildStdout>, wire: Wire) -> Option<Result<Value, String>> {
    let body = match wire {
        Wire::Lsp => {
            let mut length = None;
            loop {
                let mut line = String::new();
                if stdout.read_line(&mut line).ok()? == 0 {
                    return None;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                let Some((name, value)) = line.split_once(':') else {
                    return Some(Err(format!("not a header line: {line:?}")));
                };
                if !name.eq_ignore_ascii_case("content-length") {
                    return Some(Err(format!("unexpected header {line:?}")));
                }
                length = value.trim().parse::<usize>().ok();
            }
            let Some(length) = length else {
                return Some(Err("no valid Content-Length".to_owned()));
            };
            let mut body = vec![0; length];
            stdout.read_exact(&mut body).ok()?;
            body
        }
        Wire::Ndjson => {
            let mut line = Vec::new();
            if stdout.read_until(b'\n', &mut line).ok()? == 0 {
                return None;
            }
            line
        }
    };
    Some(serde_json::from_slice(&body).map_err(|e| format!("{:?}: {e}", String::from_utf8_lossy(&body))))
}
