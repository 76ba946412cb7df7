//! A real `threadkeeper serve` driven over NDJSON pipes, one call at a time: what the
//! whole-process benches measure through.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

pub struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    /// Starts `binary serve --store STORE` and initializes it, naming the bench as its client.
    pub fn start(binary: &str, store: &str, client: &str) -> Server {
        let mut child = Command::new(binary)
            .args(["serve", "--store", store])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {binary}: {e} (cargo build --release first)"));
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut server = Server { child, stdin, stdout, next_id: 0 };
        server.call("initialize", json!({"clientInfo": {"name": client}}));
        server
    }

    /// The result of one call; a JSON-RPC error stops the bench, naming the method.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let request = json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        writeln!(self.stdin, "{request}").unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        let mut answer: Value = serde_json::from_str(&line).unwrap();
        match answer.get_mut("result") {
            Some(result) => result.take(),
            None => panic!("{method}: {answer}"),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
