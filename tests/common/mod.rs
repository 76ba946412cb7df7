//! A `threadkeeper serve` process driven over NDJSON JSON-RPC on its stdin/stdout.
#![allow(dead_code)] // each test binary uses a different part

use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a test waits for one answer before failing.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);

pub type Background = std::thread::JoinHandle<(usize, ChildStdin)>;

pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
    /// Answers read while waiting for another id.
    answers: HashMap<u64, Value>,
    stderr: Arc<Mutex<String>>,
    /// The `initialize` result.
    pub init: Value,
}

/// The command for the built binary, `serve` with the given store, no inherited store settings.
pub fn command(store: Option<&str>) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_threadkeeper"));
    cmd.arg("serve");
    if let Some(store) = store {
        cmd.arg("--store").arg(store);
    }
    cmd.env_remove("THREADKEEPER_STORE").env_remove("RUST_LOG");
    cmd
}

impl Server {
    /// Starts the server with `--store STORE` and initializes it.
    pub fn start(store: &str) -> Server {
        Server::spawn(command(Some(store)))
    }

    /// Starts the command and initializes the server.
    pub fn spawn(mut cmd: Command) -> Server {
        let mut server = Server::spawn_raw(&mut cmd);
        let init = server.call("initialize", json!({"clientInfo": {"name": "tests"}}));
        assert_eq!(init["protocolVersion"], 1, "{init}");
        server.init = init;
        server
    }

    /// Starts the command without sending anything.
    pub fn spawn_raw(cmd: &mut Command) -> Server {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn threadkeeper");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
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
            lines,
            next_id: 1,
            answers: HashMap::new(),
            stderr,
            init: Value::Null,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Sends a request without waiting; returns its id.
    pub fn send(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").expect("write request");
        stdin.flush().unwrap();
        id
    }

    /// Sends requests from another thread, so that answers can be read while they go out.
    /// Ids start at 1_000_000; the writer stops quietly when the server goes away.
    /// [`Server::join_background`] gives the input back.
    pub fn send_in_background(&mut self, requests: Vec<(String, Value)>) -> Background {
        let mut stdin = self.stdin.take().expect("stdin open");
        std::thread::spawn(move || {
            let mut sent = 0;
            for (i, (method, params)) in requests.into_iter().enumerate() {
                let line = json!({"jsonrpc": "2.0", "id": 1_000_000 + i, "method": method, "params": params});
                if writeln!(stdin, "{line}").and_then(|_| stdin.flush()).is_err() {
                    break;
                }
                sent += 1;
            }
            (sent, stdin)
        })
    }

    /// Waits for the background sender; returns how many requests it sent.
    pub fn join_background(&mut self, background: Background) -> usize {
        let (sent, stdin) = background.join().expect("sender thread");
        self.stdin = Some(stdin);
        sent
    }

    /// The next answer the server writes, whatever its id; `None` at end of output.
    pub fn next_answer(&mut self, timeout: Duration) -> Option<Value> {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("bad answer {line:?}: {e}"))),
            Err(RecvTimeoutError::Disconnected) => None,
            Err(RecvTimeoutError::Timeout) => panic!("no answer within {timeout:?}; stderr:\n{}", self.stderr()),
        }
    }

    /// The whole response to request `id` (`result` or `error`).
    pub fn wait(&mut self, id: u64) -> Value {
        loop {
            if let Some(answer) = self.answers.remove(&id) {
                return answer;
            }
            let Some(answer) = self.next_answer(ANSWER_TIMEOUT) else {
                panic!("the server ended before answering {id}; stderr:\n{}", self.stderr());
            };
            let answer_id = answer["id"].as_u64().unwrap_or_else(|| panic!("answer without id: {answer}"));
            self.answers.insert(answer_id, answer);
        }
    }

    /// Sends and waits for the whole response.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params);
        self.wait(id)
    }

    /// Sends and returns the result; panics on an error response.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params.clone());
        match response.get("result") {
            Some(result) => result.clone(),
            None => panic!("{method} {params} failed: {response}"),
        }
    }

    /// Sends and returns the error object; panics on success.
    pub fn call_err(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params.clone());
        match response.get("error") {
            Some(error) => error.clone(),
            None => panic!("{method} {params} succeeded: {response}"),
        }
    }

    /// SIGKILL: no chance to finish anything.
    pub fn kill(&mut self) {
        self.child.kill().expect("kill");
        self.child.wait().unwrap();
    }

    /// `shutdown` then `exit`; returns the exit status.
    pub fn stop(mut self) -> ExitStatus {
        self.call("shutdown", Value::Null);
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"exit"}}"#).unwrap();
        drop(self.stdin.take());
        self.child.wait().unwrap()
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

/// Runs the command to its end with empty input; returns its status and stderr.
pub fn run_to_end(cmd: &mut Command) -> (ExitStatus, String) {
    let output = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).output().unwrap();
    (output.status, String::from_utf8_lossy(&output.stderr).into_owned())
}

/// A small event of each kind, with key orders and extra fields a store must keep.
pub fn sample_events() -> Vec<Value> {
    serde_json::from_str(
        r#"[
        {"type":"message","iteration":1,"role":"user","content":"Find the <config> & read it","timestamp":1700000000000},
        {"iteration":1,"type":"tool_call","toolName":"read_file","toolCallId":"c1","args":{"z":1,"a":"x"},"extra":{"b":2,"a":1}},
        {"type":"tool_result","iteration":1,"toolCallId":"c1","result":{"ok":true,"lines":["a","b"]}},
        {"type":"message","iteration":2,"role":"assistant","content":"Done — ünïcödé ✓"},
        {"type":"future_kind","iteration":3,"payload":[1,2.5,null],"zeta":"kept"}
    ]"#,
    )
    .unwrap()
}

/// An event that names its batch and position, so order and completeness can be checked.
pub fn numbered_event(batch: u64, index: u64) -> Value {
    json!({"type": "message", "iteration": batch, "role": "user", "content": format!("{batch}.{index}")})
}
