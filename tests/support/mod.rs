//! A test client that speaks to the real binary over real pipes.
#![allow(dead_code)]

pub mod vectors;

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_threadkeeper");

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Wire {
    Lsp,
    Ndjson,
}

pub struct Server {
    pub child: Child,
    stdin: Option<ChildStdin>,
    /// Messages read from stdout by a reader thread, so reads can time out.
    inbox: Receiver<Value>,
    wire: Wire,
    next_id: u64,
}

impl Server {
    pub fn spawn(wire: Wire, args: &[&str]) -> Server {
        let mut child = Command::new(BIN)
            .arg("serve")
            .args(["--store", "memory"])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn threadkeeper");
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, inbox) = mpsc::channel();
        std::thread::spawn(move || {
            while let Some(message) = read_message(&mut stdout, wire) {
                if tx.send(message).is_err() {
                    break;
                }
            }
        });
        Server { child, stdin, inbox, wire, next_id: 1000 }
    }

    /// Spawns and initializes.
    pub fn start(wire: Wire) -> Server {
        Self::start_with(wire, &[])
    }

    pub fn start_with(wire: Wire, args: &[&str]) -> Server {
        let mut server = Self::spawn(wire, args);
        let init = server.call("initialize", json!({"clientInfo": {"name": "tests"}}));
        assert_eq!(init["result"]["protocolVersion"], 1, "{init}");
        server
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Frames and sends one message body.
    pub fn send(&mut self, message: &Value) {
        let body = serde_json::to_vec(message).unwrap();
        self.send_body(&body);
    }

    pub fn send_body(&mut self, body: &[u8]) {
        match self.wire {
            Wire::Lsp => {
                let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
                frame.extend_from_slice(body);
                self.send_raw(&frame);
            }
            Wire::Ndjson => {
                let mut frame = body.to_vec();
                frame.push(b'\n');
                self.send_raw(&frame);
            }
        }
    }

    /// Reads one framed message; `None` at end of output.
    pub fn recv(&mut self) -> Option<Value> {
        self.inbox.recv().ok()
    }

    /// Reads one framed message, waiting at most `timeout`.
    pub fn recv_timeout(&mut self, timeout: Duration) -> Received {
        match self.inbox.recv_timeout(timeout) {
            Ok(message) => Received::Message(message),
            Err(RecvTimeoutError::Timeout) => Received::Timeout,
            Err(RecvTimeoutError::Disconnected) => Received::End,
        }
    }

    pub fn request(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and returns its response (responses to it must come in order here).
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params);
        let response = self.recv().expect("a response");
        assert_eq!(response["id"], id, "response to another request: {response}");
        response
    }

    /// The `result` of a call that must succeed.
    pub fn ok(&mut self, method: &str, params: Value) -> Value {
        let response = self.call(method, params);
        assert!(response.get("error").is_none(), "{method} failed: {response}");
        response["result"].clone()
    }

    /// The `error` of a call that must fail.
    pub fn err(&mut self, method: &str, params: Value) -> Value {
        let response = self.call(method, params);
        assert!(response.get("result").is_none(), "{method} should fail: {response}");
        response["error"].clone()
    }

    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    /// Waits for the process to exit (bounded), killing it if it does not.
    pub fn wait(&mut self) -> ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("server did not exit");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
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

/// Reads one framed message; `None` at end of output.
fn read_message(stdout: &mut BufReader<ChildStdout>, wire: Wire) -> Option<Value> {
    match wire {
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
                let (name, value) = line.split_once(':').expect("header line");
                assert!(name.eq_ignore_ascii_case("content-length"), "unexpected header {line:?}");
                length = Some(value.trim().parse::<usize>().unwrap());
            }
            let mut body = vec![0; length.expect("Content-Length")];
            stdout.read_exact(&mut body).unwrap();
            Some(serde_json::from_slice(&body).unwrap())
        }
        Wire::Ndjson => {
            let mut line = String::new();
            if stdout.read_line(&mut line).ok()? == 0 {
                return None;
            }
            Some(serde_json::from_str(&line).unwrap())
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn user(content: &str, iteration: u64) -> Value {
    json!({"type": "message", "role": "user", "content": content, "iteration": iteration})
}
