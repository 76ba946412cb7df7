//! Writes a generated, realistic thread of N events as a JSON array to stdout.
//!
//! `cargo run --release --example gen_thread -- 10000 [SEED] > thread.json`

#[path = "../benches/support/thread_gen.rs"]
mod thread_gen;

use std::io::Write as _;

fn main() {
    let mut args = std::env::args().skip(1);
    let usage = "usage: gen_thread EVENTS [SEED]";
    let events: usize = args.next().and_then(|n| n.parse().ok()).expect(usage);
    let seed: u64 = args.next().map_or(42, |s| s.parse().expect(usage));
    let thread = serde_json::Value::Array(thread_gen::generate_thread(events, seed));
    let mut stdout = std::io::stdout().lock();
    serde_json::to_writer(&mut stdout, &thread).expect("write to stdout");
    stdout.write_all(b"\n").expect("write to stdout");
}
