//! What reading a turn document of up to `maxDocumentBytes` (16 MiB held: its value as compact
//! JSON) holds, in YAML and in JSON: the document of a long agent run (user turn, tool call,
//! tool result, assistant reply, repeated) written as `thread/export` writes it, then read back
//! to its events. Reports the reader's peak over the text it reads (`VmHWM` of this process,
//! reset before each read, less the resident size before it) and the time taken.
//!
//! Then the whole server: the same document sent to a fresh `threadkeeper serve --store memory`
//! as `thread/import`, and the server process's own peak (`VmHWM` in `/proc/<pid>/status`) over
//! the text: the request's frame, the text, what the reader builds, the stored events and the
//! thread's state. `THREADKEEPER_BENCH_BEFORE=<another build>` measures that build too, in the
//! same run.
//!
//! `cargo bench --bench turn_documents` (`THREADKEEPER_BENCH_BYTES=4194304` for smaller documents)

#[path = "support/long_run.rs"]
mod long_run;

use long_run::document;
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Instant;
use threadkeeper::turns::{self, Format, Limits, TurnDocument};

/// A size line of `/proc/self/status` (`VmRSS:`, `VmHWM:`), in KiB.
fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// What a document holds: its value as compact JSON (what `maxDocumentBytes` measures).
fn held_bytes(text: &str, format: Format) -> usize {
    let value = turns::parse_value(text, format, &Limits { max_input_bytes: usize::MAX, ..Limits::default() }).unwrap();
    serde_json::to_string(&value).unwrap().len()
}

fn main() {
    let limit: usize = std::env::var("THREADKEEPER_BENCH_BYTES").ok().and_then(|v| v.parse().ok()).unwrap_or(16 << 20);
    for format in [Format::Yaml, Format::Json] {
        // As many events as a document holding up to the limit has (the same in either form).
        let mut count = limit / 100 * 97 * 1000 / held_bytes(&document(1000, format), format);
        let mut text = document(count, format);
        while held_bytes(&text, format) > limit {
            count = count * 99 / 100;
            text = document(count, format);
        }
        let held_mib = held_bytes(&text, format) as f64 / (1 << 20) as f64;
        let text_mib = text.len() as f64 / (1 << 20) as f64;
        // Memory freed by the writer goes back first, so the reader cannot reuse it unseen.
        // SAFETY: malloc_trim only returns free memory to the system.
        unsafe { libc::malloc_trim(0) };
        let before = status_kib("VmRSS:");
        let _ = std::fs::write("/proc/self/clear_refs", "5");
        let start = Instant::now();
        let (document, _) = turns::read_document(&text, format, &Limits::default()).unwrap();
        let TurnDocument::Turn(turn) = document else { panic!("one turn") };
        let events = turns::turn_to_events(&turn).unwrap();
        let elapsed = start.elapsed();
        let peak = status_kib("VmHWM:").saturating_sub(before);
        assert_eq!(events.len(), count);
        let peak_mib = peak as f64 / 1024.0;
        println!(
            "{format:?}: {count} blocks, {held_mib:.2} MiB held, {text_mib:.2} MiB of text; read to events in {:.2} s; reader's peak {peak_mib:.1} MiB over the text = {:.1}x the text",
            elapsed.as_secs_f64(),
            peak_mib / text_mib
        );
        drop((turn, events));
        let mut builds = vec![("", env!("CARGO_BIN_EXE_threadkeeper").to_owned())];
        if let Ok(before) = std::env::var("THREADKEEPER_BENCH_BEFORE") {
            builds.insert(0, ("before: ", before));
        }
        for (label, binary) in builds {
            let start = Instant::now();
            let peak = server_import_peak(&binary, &text, format) as f64 / (1 << 20) as f64;
            println!(
                "  {label}the whole server importing it: peak {peak:.1} MiB = {:.2}x the text, {:.2} s ({binary})",
                peak / text_mib,
                start.elapsed().as_secs_f64()
            );
        }
    }
}

/// The peak resident size (bytes) of a fresh server that imported `text`, and did nothing else.
fn server_import_peak(binary: &str, text: &str, format: Format) -> u64 {
    let mut server = Command::new(binary)
        .args(["serve", "--store", "memory"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the server");
    let mut input = server.stdin.take().unwrap();
    let mut output = BufReader::new(server.stdout.take().unwrap());
    let import = json!({"jsonrpc": "2.0", "id": 2, "method": "thread/import",
        "params": {"text": text, "format": format, "threadId": "big"}});
    for message in [json!({"jsonrpc": "2.0", "id": 1, "method": "initialize"}), import] {
        let mut line = serde_json::to_vec(&message).unwrap();
        line.push(b'\n');
        input.write_all(&line).unwrap();
        let mut answer = String::new();
        output.read_line(&mut answer).unwrap();
        assert!(answer.contains("\"result\""), "{}", &answer[..answer.len().min(500)]);
    }
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.id())).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let peak_kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    let _ = server.kill();
    let _ = server.wait();
    peak_kib * 1024
}
