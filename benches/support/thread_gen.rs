//! A deterministic generator of realistic agent threads, shared by the render benchmark and the
//! `gen_thread` example (included with `#[path]`, so there is one generator and no feature flag).
//!
//! A run looks like a coding agent's: a user prompt, then iterations of an optional assistant
//! message and one to three tool calls with JSON args, each answered by a 200 B–2 kB text output
//! (code, logs, listings), sometimes an error instead; now and then a human-input round trip; a
//! summary every 25 iterations; a completion at the end.
//!
//! The threads are ones the seed's reference serializer renders correctly (string results only,
//! no characters XML forbids, unique tool call ids, results after their calls), so both
//! implementations can be compared byte for byte.

use serde_json::{json, Map, Value};

/// `events` events of a generated thread, the same for the same `seed`.
pub fn generate_thread(events: usize, seed: u64) -> Vec<Value> {
    let mut gen = Gen { rng: Rng(seed), out: Vec::with_capacity(events), iteration: 0, calls: 0 };
    gen.push(|rng| json!({"type": "message", "role": "user", "content": rng.prose(120, 400)}));
    while gen.out.len() < events.saturating_sub(1) {
        gen.iteration();
    }
    gen.out.truncate(events.saturating_sub(1));
    if events > 0 {
        gen.push(|rng| json!({"type": "completion", "result": rng.prose(60, 300), "verified": true}));
    }
    gen.out.truncate(events);
    gen.out
}

struct Gen {
    rng: Rng,
    out: Vec<Value>,
    iteration: u64,
    calls: u64,
}

impl Gen {
    /// Appends `event` with the current iteration and a timestamp.
    fn push(&mut self, event: impl FnOnce(&mut Rng) -> Value) {
        let mut event = event(&mut self.rng);
        let fields = event.as_object_mut().expect("events are objects");
        fields.insert("iteration".into(), self.iteration.into());
        fields.insert("timestamp".into(), (1_732_240_000_000 + self.out.len() as u64 * 1_350).into());
        self.out.push(event);
    }

    fn iteration(&mut self) {
        self.iteration += 1;
        let it = self.iteration;
        if self.rng.chance(50) {
            self.push(|rng| json!({"type": "message", "role": "assistant", "content": rng.prose(40, 600)}));
        }
        let calls: Vec<(String, String)> = (0..self.rng.range(1, 3))
            .map(|_| {
                self.calls += 1;
                (
                    format!("call_{:06}", self.calls),
                    TOOLS[self.rng.range(0, TOOLS.len() as u64 - 1) as usize].to_owned(),
                )
            })
            .collect();
        for (id, name) in &calls {
            self.push(|rng| json!({"type": "tool_call", "toolName": name, "toolCallId": id, "args": rng.args(name)}));
        }
        for (id, _) in &calls {
            if self.rng.chance(5) {
                self.push(|rng| {
                    let error = format!("Tool failed: {} (exit code {})", rng.prose(20, 80), rng.range(1, 127));
                    json!({"type": "error", "error": error, "recoverable": rng.chance(80), "toolCallId": id})
                });
            } else {
                self.push(|rng| json!({"type": "tool_result", "toolCallId": id, "result": rng.tool_output(200, 2000)}));
            }
        }
        if self.rng.chance(2) {
            self.push(
                |rng| json!({"type": "human_input_requested", "question": rng.prose(30, 120), "urgency": "medium"}),
            );
            self.push(|rng| json!({"type": "human_input_received", "response": rng.prose(5, 80)}));
        }
        if it.is_multiple_of(25) {
            let summarized: Vec<u64> = (it - 24..=it - 5).collect();
            self.push(
                |rng| json!({"type": "summary", "summarizedIterations": summarized, "summary": rng.prose(300, 900)}),
            );
        }
    }
}

const TOOLS: &[&str] = &["read_file", "grep", "run_tests", "edit_file", "search_docs"];

const WORDS: &[&str] = &[
    "the",
    "thread",
    "event",
    "renderer",
    "returns",
    "a",
    "value",
    "when",
    "and",
    "of",
    "to",
    "in",
    "error",
    "file",
    "test",
    "passes",
    "fails",
    "because",
    "config",
    "parser",
    "tool",
    "result",
    "we",
    "should",
    "check",
    "first",
    "then",
    "update",
    "module",
    "function",
    "call",
    "it's",
    "\"quoted\"",
    "x < y",
    "a & b",
    "é",
    "—",
    "→",
    "async",
    "buffer",
    "index",
    "line",
    "column",
    "cache",
    "request",
    "response",
    "timeout",
    "retry",
    "latency",
];

const CODE: &[&str] = &[
    "fn render(events: &[Event]) -> String {",
    "    let mut out = String::with_capacity(events.len() * 64);",
    "    if a < b && b > c { return Err(Error::Range); }",
    "    for (i, e) in events.iter().enumerate() { push(&mut out, i, e); }",
    "}",
    "#[derive(Debug, Clone, PartialEq)]",
    "pub struct Config { name: String, retries: u32 }",
    "    println!(\"{} items in '{}'\", n, name);",
    "test xml::tests::escapes_the_five_specials ... ok",
    "warning: unused variable: `x` --> src/lib.rs:42:9",
    "error[E0308]: mismatched types: expected `&str`, found `String`",
    "2024-11-22T01:47:03.120Z INFO request id=7f3a latency_ms=12 status=200",
    "drwxr-xr-x  5 dev dev  4096 Nov 22 01:47 src",
    "<div class=\"note\">Use &amp; for ampersands</div>",
];

/// splitmix64: small, fast, and good enough to vary text.
struct Rng(u64);

impl Rng {
    fn args(&mut self, tool: &str) -> Value {
        let mut args = Map::new();
        let path = self.path();
        match tool {
            "read_file" => {
                args.insert("path".into(), path.into());
                args.insert("offset".into(), self.range(0, 400).into());
                args.insert("limit".into(), 200.into());
            }
            "grep" => {
                args.insert("pattern".into(), format!("fn {}\\(", self.word()).into());
                args.insert("path".into(), path.into());
                args.insert("flags".into(), json!(["-n", "--max-count=50"]));
            }
            "run_tests" => {
                args.insert("command".into(), "cargo test --lib -- --nocapture".into());
                args.insert("timeoutMs".into(), 120_000.into());
                args.insert("env".into(), json!({"RUST_LOG": "debug", "CI": "1"}));
            }
            "edit_file" => {
                args.insert("path".into(), path.into());
                args.insert("old".into(), self.code_line().into());
                args.insert("new".into(), self.code_line().into());
            }
            _ => {
                args.insert("query".into(), self.prose(10, 60).into());
                args.insert("topK".into(), 5.into());
                args.insert("threshold".into(), 0.75.into());
            }
        }
        Value::Object(args)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn word(&mut self) -> &'static str {
        WORDS[self.range(0, WORDS.len() as u64 - 1) as usize]
    }

    fn code_line(&mut self) -> &'static str {
        CODE[self.range(0, CODE.len() as u64 - 1) as usize]
    }

    fn path(&mut self) -> String {
        format!("src/{}/{}.rs", self.word().replace(|c: char| !c.is_ascii_alphanumeric(), "x"), self.word().len())
    }

    /// Sentences of between `min` and `max` bytes (roughly).
    fn prose(&mut self, min: u64, max: u64) -> String {
        let target = self.range(min, max) as usize;
        let mut text = String::with_capacity(target + 16);
        while text.len() < target {
            if !text.is_empty() {
                text.push(if self.chance(8) { '\n' } else { ' ' });
            }
            text.push_str(self.word());
        }
        text.push('.');
        text
    }

    /// Tool output: lines of code, logs and listings, `min`–`max` bytes.
    fn tool_output(&mut self, min: u64, max: u64) -> String {
        let target = self.range(min, max) as usize;
        let mut text = String::with_capacity(target + 80);
        while text.len() < target {
            text.push_str(self.code_line());
            text.push('\n');
        }
        text
    }
}
