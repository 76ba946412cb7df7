//! `thread/search` at scale: a SQLite store of generated agent runs (10,000 threads of 100
//! events by default), then, in one run:
//!
//! - query latency, p50 and p99, over a fixed set of queries (common and rare words, phrases,
//!   prefixes, exclusions) asked of the real server (`target/release/threadkeeper serve --store
//!   sqlite:…`, NDJSON over pipes, `thread/search` with `limit: 20`);
//! - append throughput with and without the index, on the same events, a thread per append
//!   and an agent step per append, and the rate at which the pending events are indexed
//!   afterwards (see [`append_rates`]);
//! - the index's size against the size of the text it indexes;
//! - the anchor: the same threads as JSON Lines files (one event a line) and `rg` running the
//!   same queries over the directory, timed per query (skipped when `rg` is not installed).
//!
//! The store is built by appending to the store directly (one append of a whole thread per
//! transaction), not through the server, then its pending events are indexed. Run with `bench/search [THREADS] [EVENTS_PER_THREAD]`.
//! Files go to `target/bench-search/` and are removed at the end (`KEEP=1` keeps them).

#[path = "support/thread_gen.rs"]
mod thread_gen;

#[path = "support/search_text.rs"]
mod search_text;

#[path = "support/pipe_server.rs"]
mod pipe_server;

use pipe_server::Server;
use rusqlite::Connection;
use serde_json::json;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use threadkeeper::event_log::{EventLog, EventLogBuilder};
use threadkeeper::store::{OpenThread, SqliteStore, Store};

/// Threads appended in each measurement of the append rate (the first ones of the corpus),
/// a thread per append.
const RATE_SAMPLE_THREADS: usize = 1_000;
/// Threads appended as an agent loop does, a step's few events per append (each one a
/// transaction and an fsync, so fewer threads).
const LOOP_SAMPLE_THREADS: usize = 100;
/// Events per append in the agent-loop measurement.
const EVENTS_PER_STEP: usize = 4;
/// Timed rounds over the query set (after one untimed warm-up round).
const QUERY_ROUNDS: usize = 10;
/// Timed `rg` runs per query (the median is reported).
const RG_ROUNDS: usize = 3;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let threads: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let per_thread: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(100);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let work = root.join("target/bench-search");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(work.join("jsonl")).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();

    println!("search bench: {threads} threads × {per_thread} events; load {}", load_average());
    let started = Instant::now();
    let corpus = search_text::Corpus::new();
    let generated = Instant::now();
    let thread_events: Vec<Vec<String>> = (0..threads).map(|t| corpus.thread(per_thread, t as u64)).collect();
    let events: usize = thread_events.iter().map(Vec::len).sum();
    let json_bytes: usize = thread_events.iter().flatten().map(String::len).sum();
    println!("generated {events} events ({} MB of JSON) in {:.1} s", json_bytes >> 20, secs(generated.elapsed()));

    // The store the queries run on, built with its index as the server keeps it.
    let db = work.join("threads.db");
    let store = SqliteStore::open(&db).unwrap();
    let built = Instant::now();
    runtime.block_on(append_all(&store, &thread_events, per_thread));
    let build_time = built.elapsed();
    let indexing = Instant::now();
    let indexed = runtime.block_on(store.index_pending()).unwrap();
    let index_time = indexing.elapsed();
    drop(store);
    println!(
        "built the store in {:.1} s ({:.0} events/s), then indexed its {indexed} pending events in {:.1} s ({:.0} events/s)",
        secs(build_time),
        rate(events, build_time),
        secs(index_time),
        rate(indexed as usize, index_time)
    );
    for (t, lines) in thread_events.iter().enumerate() {
        std::fs::write(work.join(format!("jsonl/t{t:05}.jsonl")), lines.join("\n") + "\n").unwrap();
    }

    let sizes = index_sizes(&db, &thread_events);
    let rates = [
        append_rates(&runtime, &work, &thread_events[..RATE_SAMPLE_THREADS.min(threads)], per_thread),
        append_rates(&runtime, &work, &thread_events[..LOOP_SAMPLE_THREADS.min(threads)], EVENTS_PER_STEP),
    ];
    let queries = corpus.queries(&search_text::trace_id(threads as u64 / 2, 0));
    let latencies = query_latencies(root, &db, &queries);
    let rg = rg_times(&work.join("jsonl"), &queries);

    report(events, &sizes, &rates, &queries, &latencies, rg.as_deref());
    println!("\ntotal {:.0} s; load {}", secs(started.elapsed()), load_average());
    if std::env::var_os("KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&work);
    }
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn rate(events: usize, d: Duration) -> f64 {
    events as f64 / d.as_secs_f64()
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn event_log(lines: &[String]) -> EventLog {
    let mut builder = EventLogBuilder::new();
    for line in lines {
        builder.push_validated(line);
    }
    builder.finish()
}

/// Opens each thread and appends its events `per_append` at a time (each append one
/// transaction and one fsync).
async fn append_all(store: &SqliteStore, threads: &[Vec<String>], per_append: usize) {
    for (t, lines) in threads.iter().enumerate() {
        let thread_id = format!("t{t:05}");
        store.open(OpenThread { thread_id: thread_id.clone(), now: 1, ..OpenThread::default() }).await.unwrap();
        for (i, step) in lines.chunks(per_append).enumerate() {
            store.append(&thread_id, Some(i as u64), &event_log(step), 2).await.unwrap();
        }
    }
}

struct Sizes {
    /// The searched text of every event (what is indexed), bytes.
    text: u64,
    /// The FTS5 table's pages (all its shadow tables), bytes.
    index: u64,
    /// The events table's pages, bytes.
    events: u64,
    file: u64,
}

fn index_sizes(db: &Path, threads: &[Vec<String>]) -> Sizes {
    let text = threads
        .iter()
        .flatten()
        .filter_map(|line| threadkeeper::search::SearchableEvent::of_json(line))
        .map(|e| e.text.len() as u64)
        .sum();
    let conn = Connection::open(db).unwrap();
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(())).unwrap();
    let pages = |like: &str| -> u64 {
        conn.query_row("SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name LIKE ?1", [like], |r| r.get::<_, i64>(0))
            .unwrap() as u64
    };
    Sizes { text, index: pages("search_index%"), events: pages("events%"), file: std::fs::metadata(db).unwrap().len() }
}

struct Rates {
    events: usize,
    per_append: usize,
    /// The appends into a store as it is: their events left pending for the index.
    with_index: Duration,
    /// Indexing those events afterwards, as the store does in a pause (one transaction).
    catch_up: Duration,
    /// The same appends into a store with no search index at all (its FTS5 table and the
    /// partial index of pending threads dropped).
    without_index: Duration,
}

/// Append rates on the same events with and without the index, `per_append` events an
/// append. Best of two rounds each, interleaved, so a burst of load on the machine does not
/// favour one side.
fn append_rates(runtime: &tokio::runtime::Runtime, work: &Path, sample: &[Vec<String>], per_append: usize) -> Rates {
    let events = sample.iter().map(Vec::len).sum();
    let mut best = [Duration::MAX; 3];
    for round in 0..2 {
        for (slot, without) in [(0, false), (2, true)] {
            let db = work.join(format!("rate-{round}-{slot}.db"));
            drop(SqliteStore::open(&db).unwrap());
            if without {
                remove_index(&db);
            }
            let store = SqliteStore::open(&db).unwrap();
            let started = Instant::now();
            runtime.block_on(append_all(&store, sample, per_append));
            best[slot] = best[slot].min(started.elapsed());
            if !without {
                let started = Instant::now();
                runtime.block_on(store.index_pending()).unwrap();
                best[1] = best[1].min(started.elapsed());
            }
            drop(store);
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
            }
        }
    }
    Rates { events, per_append, with_index: best[0], catch_up: best[1], without_index: best[2] }
}

fn remove_index(db: &Path) {
    let conn = Connection::open(db).unwrap();
    conn.execute_batch("DROP TABLE search_index; DROP INDEX threads_pending_index;").unwrap();
}

struct Latencies {
    /// Per query, every timed round.
    per_query: Vec<Vec<Duration>>,
    /// Hits on the first page, per query.
    hits: Vec<usize>,
}

fn query_latencies(root: &Path, db: &Path, queries: &[search_text::BenchQuery]) -> Latencies {
    let mut server = Server::start(
        &root.join("target/release/threadkeeper").display().to_string(),
        &format!("sqlite:{}", db.display()),
        "search-bench",
    );
    let mut search = |q: &str| server.call("thread/search", json!({"query": q, "limit": 20}));
    let hits = queries.iter().map(|q| search(&q.query)["hits"].as_array().unwrap().len()).collect();
    let mut per_query = vec![Vec::new(); queries.len()];
    for _ in 0..QUERY_ROUNDS {
        for (i, q) in queries.iter().enumerate() {
            let started = Instant::now();
            std::hint::black_box(search(&q.query));
            per_query[i].push(started.elapsed());
        }
    }
    Latencies { per_query, hits }
}

/// Per query, the median of `rg -c` over the JSON Lines directory, and the events it counted;
/// `None` when `rg` is not installed.
fn rg_times(dir: &Path, queries: &[search_text::BenchQuery]) -> Option<Vec<(Duration, u64)>> {
    if Command::new("rg").arg("--version").output().is_err() {
        println!(
            "\nrg (ripgrep) is not installed: the anchor is skipped (apt-get install ripgrep, brew install ripgrep \
             or cargo install ripgrep)"
        );
        return None;
    }
    let mut out = Vec::new();
    for q in queries {
        let mut times = Vec::new();
        let mut count = 0;
        for _ in 0..RG_ROUNDS {
            let started = Instant::now();
            let output = Command::new("rg").args(&q.rg_args).arg(dir).output().unwrap();
            times.push(started.elapsed());
            count = String::from_utf8_lossy(&output.stdout)
                .lines()
                .filter_map(|l| l.rsplit(':').next()?.parse::<u64>().ok())
                .sum();
        }
        times.sort();
        out.push((times[times.len() / 2], count));
    }
    Some(out)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn report(
    events: usize,
    sizes: &Sizes,
    rates: &[Rates],
    queries: &[search_text::BenchQuery],
    latencies: &Latencies,
    rg: Option<&[(Duration, u64)]>,
) {
    let mut all: Vec<Duration> = latencies.per_query.iter().flatten().copied().collect();
    all.sort();
    let (p50, p99) = (percentile(&all, 50.0), percentile(&all, 99.0));
    println!("\n| query | kind | page hits | search median ms | rg -c median ms | rg events | rg / search |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    let mut ratios = Vec::new();
    for (i, q) in queries.iter().enumerate() {
        let mut mine = latencies.per_query[i].clone();
        mine.sort();
        let median = percentile(&mine, 50.0);
        let (rg_ms, rg_events, ratio) = match rg {
            Some(rg) => {
                let ratio = rg[i].0.as_secs_f64() / median.as_secs_f64();
                ratios.push(ratio);
                (format!("{:.0}", ms(rg[i].0)), rg[i].1.to_string(), format!("{ratio:.0}×"))
            }
            None => ("—".into(), "—".into(), "—".into()),
        };
        println!(
            "| `{}` | {} | {} | {:.1} | {rg_ms} | {rg_events} | {ratio} |",
            q.query.replace('|', "\\|"),
            q.kind,
            latencies.hits[i],
            ms(median)
        );
    }
    println!(
        "\nthread/search over {events} events, {} queries × {QUERY_ROUNDS} rounds: p50 {:.1} ms, p99 {:.1} ms",
        queries.len(),
        ms(p50),
        ms(p99)
    );
    if !ratios.is_empty() {
        ratios.sort_by(f64::total_cmp);
        println!(
            "rg over the same events as JSON Lines: {:.0}× to {:.0}× the search's median time (median {:.0}×)",
            ratios[0],
            ratios[ratios.len() - 1],
            ratios[ratios.len() / 2]
        );
    }
    let mb = |b: u64| b as f64 / (1 << 20) as f64;
    println!(
        "index {:.0} MB for {:.0} MB of searched text ({:.2}×); events table {:.0} MB; file {:.0} MB",
        mb(sizes.index),
        mb(sizes.text),
        sizes.index as f64 / sizes.text as f64,
        mb(sizes.events),
        mb(sizes.file)
    );
    for r in rates {
        println!(
            "appends ({} events, {} an append): with the index {:.0} events/s, without it {:.0} events/s \
             (with / without {:.2}); indexing them afterwards {:.0} events/s",
            r.events,
            r.per_append,
            rate(r.events, r.with_index),
            rate(r.events, r.without_index),
            r.without_index.as_secs_f64() / r.with_index.as_secs_f64(),
            rate(r.events, r.catch_up),
        );
    }
}
