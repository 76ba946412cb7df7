//! Store figures: append throughput and render latency per store.
//!
//!   cargo run --release --example store_bench
//!   scripts/with-postgres cargo run --release --example store_bench   # adds PostgreSQL
//!
//! For each store: appends of 1 and of 100 events, one after the other as one client sends
//! them (each acknowledged only when durable), and the XML render of a 10,000-event thread
//! right after a restart (a fresh store and service: the events are read back) and warm
//! (rendered before; a shared store still asks the database for news).

use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};
use threadkeeper::service::{Limits, RenderFormat, RenderOptions, ThreadService};
use threadkeeper::store::{open_store, Store, StoreSpec};

const APPEND_TIME: Duration = Duration::from_secs(3);
const MAX_APPENDS: usize = 20_000;
const THREAD_EVENTS: usize = 10_000;
const WARM_RENDERS: usize = 50;

fn event(n: usize) -> Value {
    match n % 3 {
        0 => json!({"type": "message", "iteration": n / 3, "role": "user",
                    "content": format!("Request {n}: summarize the section about <tags> & entities, briefly please.")}),
        1 => json!({"type": "tool_call", "iteration": n / 3, "toolName": "search", "toolCallId": format!("call-{n}"),
                    "args": {"query": "entities", "limit": 10}}),
        _ => json!({"type": "tool_result", "iteration": n / 3, "toolCallId": format!("call-{}", n - 1),
                    "result": {"hits": ["a", "b", "c"], "took_ms": 12}}),
    }
}

fn service(store: Arc<dyn Store>) -> ThreadService {
    ThreadService::new(store, Limits::default())
}

async fn open(spec: &StoreSpec) -> Arc<dyn Store> {
    open_store(spec, 100_000).await.unwrap_or_else(|e| panic!("cannot open {spec}: {e}"))
}

/// Appends `batch`-event calls for a while; returns (appends/s, events/s).
async fn append_rate(service: &ThreadService, thread: &str, batch: usize) -> (f64, f64) {
    service.open(Some(thread.to_owned()), None, None).await.unwrap();
    let events: Vec<Value> = (0..batch).map(event).collect();
    let start = Instant::now();
    let mut appends = 0;
    while start.elapsed() < APPEND_TIME && appends < MAX_APPENDS {
        let validated = service.validate_events(events.clone()).unwrap();
        service.append(thread, validated, None).await.unwrap();
        appends += 1;
    }
    let seconds = start.elapsed().as_secs_f64();
    (appends as f64 / seconds, (appends * batch) as f64 / seconds)
}

async fn render_ms(service: &ThreadService, thread: &str) -> (f64, usize) {
    let start = Instant::now();
    let rendered = service.render(thread, RenderFormat::Xml, RenderOptions::default(), &Default::default()).await.unwrap();
    let elapsed = start.elapsed().as_secs_f64() * 1000.0;
    let len = match rendered {
        threadkeeper::service::Rendered::Xml { text, .. } => text.len(),
        _ => unreachable!(),
    };
    (elapsed, len)
}

async fn bench(name: &str, spec: StoreSpec) {
    let run = std::process::id();
    let store = open(&spec).await;
    let svc = service(store);
    let (a1, e1) = append_rate(&svc, &format!("bench-1-{run}"), 1).await;
    let (a100, e100) = append_rate(&svc, &format!("bench-100-{run}"), 100).await;

    // A 10k-event thread, written in batches of 1,000.
    let big = format!("bench-10k-{run}");
    svc.open(Some(big.clone()), None, None).await.unwrap();
    for chunk in (0..THREAD_EVENTS).collect::<Vec<_>>().chunks(1000) {
        let events = svc.validate_events(chunk.iter().map(|&n| event(n)).collect()).unwrap();
        svc.append(&big, events, None).await.unwrap();
    }
    let durable = !matches!(spec, StoreSpec::Memory);
    let svc = if durable {
        drop(svc);
        service(open(&spec).await) // "restart": nothing of the thread in memory
    } else {
        svc
    };
    let (cold, bytes) = render_ms(&svc, &big).await;
    let mut warm = Vec::with_capacity(WARM_RENDERS);
    for _ in 0..WARM_RENDERS {
        warm.push(render_ms(&svc, &big).await.0);
    }
    warm.sort_by(f64::total_cmp);
    let warm_median = warm[WARM_RENDERS / 2];
    let cold = if durable { format!("{cold:.1} ms") } else { format!("({cold:.1} ms, first render)") };
    println!(
        "| {name} | {a1:.0} ({e1:.0} events/s) | {a100:.0} ({e100:.0} events/s) | {cold} | {warm_median:.2} ms | {bytes} |"
    );
    for thread in [format!("bench-1-{run}"), format!("bench-100-{run}"), big] {
        let _ = svc.delete(&thread).await;
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        println!("| store | appends/s, 1 event each | appends/s, 100 events each | 10k-event render after restart | warm render (median of {WARM_RENDERS}) | XML bytes |");
        println!("|---|---|---|---|---|---|");
        bench("memory", StoreSpec::Memory).await;
        bench("sqlite", StoreSpec::Sqlite { path: Some(dir.path().join("bench.sqlite3")) }).await;
        match std::env::var("THREADKEEPER_TEST_PG") {
            Ok(url) if !url.is_empty() => bench("postgres", StoreSpec::Postgres { url }).await,
            _ => eprintln!("postgres: skipped (THREADKEEPER_TEST_PG is not set; run under scripts/with-postgres)"),
        }
    });
}
