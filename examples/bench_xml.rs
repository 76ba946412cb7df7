//! Renders a thread (a JSON array of events) as XML K times and reports the time per render.
//!
//! `bench_xml THREAD.json K [--out FILE]` prints one line:
//! `events=N bytes=B iterations=K ns_per_iter=T min_ns=T0 mb_per_s=M` where T is the median time
//! of one render, T0 the fastest, and M = B / T in MB/s (10^6 bytes of output per second).
//! The median and the minimum keep the figures steady on a machine shared with other work.
//! `--out` writes one rendering, for comparison with another implementation.

use std::hint::black_box;
use std::time::Instant;
use threadkeeper::{serialize_thread_to_xml, AgentEvent, XmlOptions};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: bench_xml THREAD.json ITERATIONS [--out FILE]";
    let path = args.first().expect(usage);
    let iterations: u32 = args.get(1).and_then(|k| k.parse().ok()).expect(usage);
    let out = match args.get(2).map(String::as_str) {
        Some("--out") => Some(args.get(3).expect(usage)),
        Some(_) => panic!("{usage}"),
        None => None,
    };

    let text = std::fs::read_to_string(path).expect("read the thread");
    let values: Vec<serde_json::Value> = serde_json::from_str(&text).expect("a JSON array of events");
    let events = AgentEvent::list_from_values(values).expect("valid events");
    let options = XmlOptions::default();

    let document = serialize_thread_to_xml(&events, &options); // warm-up
    if let Some(out) = out {
        std::fs::write(out, &document).expect("write the document");
    }
    let mut times: Vec<u128> = (0..iterations)
        .map(|_| {
            let start = Instant::now();
            black_box(serialize_thread_to_xml(black_box(&events), &options));
            start.elapsed().as_nanos()
        })
        .collect();
    times.sort_unstable();
    let median = times[times.len() / 2] as f64;
    let mb_per_s = document.len() as f64 / median * 1e3;
    println!(
        "events={} bytes={} iterations={iterations} ns_per_iter={median:.0} min_ns={} mb_per_s={mb_per_s:.1}",
        events.len(),
        document.len(),
        times[0]
    );
}
