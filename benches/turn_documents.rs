//! What reading a turn document of up to `maxDocumentBytes` (16 MiB held: its value as compact
//! JSON) holds, in YAML and in JSON: the document of a long agent run (user turn, tool call,
//! tool result, assistant reply, repeated) written as `thread/export` writes it, then read back
//! to its events. Reports the reader's peak over the text it reads (`VmHWM` of this process,
//! reset before each read, less the resident size before it) and the time taken.
//!
//! `cargo bench --bench turn_documents` (`THREADKEEPER_BENCH_BYTES=4194304` for smaller documents)

#[path = "support/long_run.rs"]
mod long_run;

use long_run::document;
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
        drop((turn, events, text));
    }
}
