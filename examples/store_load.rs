//! Writers appending through several `threadkeeper serve` processes on one store: the driver of
//! `bench/store-load`.
//!
//!   cargo run --release --example store_load -- BINARY STORE WRITERS SERVERS SLICES SECONDS FLOOR_CMD [SERVE_ARG...]
//!
//! Starts SERVERS processes (`BINARY serve --store STORE SERVE_ARG...`) and WRITERS writers,
//! spread over them in turn. Each writer opens a thread of its own and appends one ~200-byte
//! event per `thread/append`, with one call in flight (it waits for each answer, as an agent
//! loop does). One thread per server drives that server's writers, as a host's event loop
//! drives its agent loops: an answer read sends its writer's next call. Each slice also
//! measures the same appends without the sidecar: through the store library in this process,
//! and as the bare statement an append runs, from plain connections; and the floor's own
//! INSERT sent from those connections (what this Rust client costs against pgbench's). After a warm-up of one second, it alternates SLICES times between the floor and
//! the writers: FLOOR_CMD (a shell command, e.g. pgbench with the same number of clients for
//! SECONDS, that prints `tps = N`) runs while the writers pause, then the writers append for
//! SECONDS while their answers are counted. Alternating in short slices keeps both measured
//! under the same load of the machine. Prints `appends_per_s=N floor_per_s=N` (means over the
//! slices), then what an append costs whatever the load: the database's transactions and
//! write-ahead log bytes per append and per floor row (from `pg_stat_database` and
//! `pg_current_wal_lsn()`), and the servers' CPU time per append; and the search index's
//! catch-up, run alone whenever a column's appends stop (events per second, WAL bytes per
//! event). Any failed append stops it with status 1.

use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};
use threadkeeper::event_log::{EventLog, EventLogBuilder};
use threadkeeper::store::{OpenThread, PostgresOptions, PostgresStore, Store};
use threadkeeper::AgentEvent;

const WARM_UP: Duration = Duration::from_secs(1);

/// One server process and the writers it serves, driven by one thread as a host's event loop
/// drives its agent loops: each answer read lets its writer send its next call at once.
struct ServerProcess {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl ServerProcess {
    fn start(binary: &str, store: &str, serve_args: &[String]) -> ServerProcess {
        let mut child = Command::new(binary)
            .args(["serve", "--store", store])
            .args(serve_args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {binary}: {e}"));
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let stdin = child.stdin.take().unwrap();
        ServerProcess { child, stdin, stdout }
    }

    fn send(&mut self, id: u64, method: &str, params: &Value) {
        let mut line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).expect("the server reads");
    }

    /// The next answer: its id, or the end of the run when it is an error.
    fn answer(&mut self, line: &mut String) -> u64 {
        line.clear();
        self.stdout.read_line(line).expect("the server answers");
        let answer: Value = serde_json::from_str(line).expect("an answer is JSON");
        if answer.get("result").is_none() {
            eprintln!("store_load: a call failed: {answer}");
            std::process::exit(1);
        }
        answer["id"].as_u64().expect("an answer carries its id")
    }

    fn call(&mut self, id: u64, method: &str, params: Value) {
        self.send(id, method, &params);
        let mut line = String::new();
        assert_eq!(self.answer(&mut line), id, "one call at a time");
    }
}

/// An event whose compact JSON is about 200 bytes.
fn event(n: u64) -> Value {
    json!({"type": "message", "iteration": n, "role": "assistant",
           "content": format!("Step {n:>8}: read the section, found the three entities the user asked about, and wrote them to the notes for the next step.")})
}

/// The same appends made in this process through the store library (`PostgresStore`, one per
/// server, each with its own pool and group commit), with no process and no transport between
/// the writers and the store: what the sidecar's own hop costs is the gap between the two.
struct InProcess {
    runtime: tokio::runtime::Runtime,
    writers: Vec<(Arc<PostgresStore>, String)>,
}

impl InProcess {
    fn connect(url: &str, count: u64, servers: usize, run: &str) -> InProcess {
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
        let writers = runtime.block_on(async {
            let mut stores = Vec::new();
            for _ in 0..servers {
                let store = PostgresStore::connect_with(url, PostgresOptions::default()).await.expect("connect");
                stores.push(Arc::new(store));
            }
            let mut writers = Vec::new();
            for w in 0..count {
                let store = stores[w as usize % servers].clone();
                let thread_id = format!("store-load-{run}-in-process-{w}");
                let now = 1;
                store.open(OpenThread { thread_id: thread_id.clone(), now, ..Default::default() }).await.expect("open");
                writers.push((store, thread_id));
            }
            writers
        });
        InProcess { runtime, writers }
    }

    /// Appends per second for `seconds`, one append in flight per writer.
    fn slice(&self, seconds: f64, first: u64) -> f64 {
        per_second(&self.runtime, &self.writers, seconds, first, |(store, thread_id), n| async move {
            store.append(&thread_id, None, &event_log(n), 2).await.expect("an in-process append");
        })
    }
}

/// What [`Direct`] sends.
#[derive(Clone, Copy, PartialEq)]
enum Direct {
    /// The statement an append runs, for a thread of each connection's own.
    Append,
    /// The floor's one-row INSERT (into `floor_rows`, which the bench makes).
    FloorInsert,
}

/// The database's side alone: plain connections, one per writer, each sending one statement
/// at a time as its own transaction, with no server, no pool and no group commit. The append
/// statement's ratio to the floor is what a versioned append costs the database over a
/// one-row insert; the floor's INSERT sent this way is what this Rust client costs against
/// pgbench's.
struct DirectWriters {
    runtime: tokio::runtime::Runtime,
    kind: Direct,
    writers: Vec<(Arc<tokio_postgres::Client>, tokio_postgres::Statement, String)>,
}

impl DirectWriters {
    fn connect(url: &str, count: u64, run: &str, kind: Direct) -> DirectWriters {
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
        let writers = runtime.block_on(async {
            let store = PostgresStore::connect(url).await.expect("connect");
            let mut writers = Vec::new();
            for w in 0..count {
                let thread_id = format!("store-load-{run}-statement-{w}");
                let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("connect");
                tokio::spawn(connection);
                let sql = match kind {
                    Direct::Append => {
                        let open = OpenThread { thread_id: thread_id.clone(), now: 1, ..Default::default() };
                        store.open(open).await.expect("open");
                        PostgresStore::append_statement()
                    }
                    Direct::FloorInsert => "INSERT INTO floor_rows (body) VALUES ($1)",
                };
                let statement = client.prepare(sql).await.expect("prepare");
                writers.push((Arc::new(client), statement, thread_id));
            }
            writers
        });
        DirectWriters { runtime, kind, writers }
    }

    /// Statements per second for `seconds`, one in flight per writer.
    fn slice(&self, seconds: f64, first: u64) -> f64 {
        let kind = self.kind;
        per_second(&self.runtime, &self.writers, seconds, first, move |(client, statement, thread_id), n| async move {
            if kind == Direct::Append {
                let bodies = vec![serde_json::to_string(&event(n)).unwrap()];
                let params: [&(dyn tokio_postgres::types::ToSql + Sync); 6] =
                    [&thread_id, &None::<i64>, &1i64, &2i64, &bodies, &false];
                let appended = client.query_one(&statement, &params).await.expect("the append statement");
                assert!(appended.get::<_, bool>(0), "appended");
            } else {
                client.execute(&statement, &[&"x".repeat(200)]).await.expect("the floor's insert");
            }
        })
    }
}

/// Runs a loop per writer on `runtime` for `seconds`, each awaiting `step(writer, n)` for
/// n = `first`, `first` + 1, … one at a time; the steps per second of all of them.
fn per_second<W, F, S>(runtime: &tokio::runtime::Runtime, writers: &[W], seconds: f64, first: u64, step: F) -> f64
where
    W: Clone + Send + 'static,
    F: Fn(W, u64) -> S + Clone + Send + 'static,
    S: std::future::Future<Output = ()> + Send,
{
    let until = Instant::now() + Duration::from_secs_f64(seconds);
    let start = Instant::now();
    let steps: u64 = runtime.block_on(async {
        let tasks: Vec<_> = writers
            .iter()
            .map(|writer| {
                let (writer, step) = (writer.clone(), step.clone());
                tokio::spawn(async move {
                    let mut n = first;
                    while Instant::now() < until {
                        step(writer.clone(), n).await;
                        n += 1;
                    }
                    n - first
                })
            })
            .collect();
        let mut total = 0;
        for task in tasks {
            total += task.await.unwrap();
        }
        total
    });
    steps as f64 / start.elapsed().as_secs_f64()
}

/// [`event`] as the log a store appends.
fn event_log(n: u64) -> EventLog {
    let fields = AgentEvent::from_value(event(n), "event").expect("a valid event");
    let mut builder = EventLogBuilder::new();
    builder.push_validated(&serde_json::to_string(fields.fields()).unwrap());
    builder.finish()
}

/// Whether the writers may send; they wait (between calls) while it is false.
struct Gate {
    open: Mutex<bool>,
    changed: Condvar,
}

impl Gate {
    fn set(&self, open: bool) {
        *self.open.lock().unwrap() = open;
        self.changed.notify_all();
    }

    fn is_open(&self) -> bool {
        *self.open.lock().unwrap()
    }

    fn wait_open(&self) {
        let mut open = self.open.lock().unwrap();
        while !*open {
            open = self.changed.wait(open).unwrap();
        }
    }
}

/// The database's transaction ids and write-ahead log position.
struct DbCounters {
    runtime: tokio::runtime::Runtime,
    client: tokio_postgres::Client,
}

impl DbCounters {
    fn connect(url: &str) -> DbCounters {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let client = runtime.block_on(async {
            let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.expect("connect");
            tokio::spawn(connection);
            client
        });
        DbCounters { runtime, client }
    }

    /// (transaction ids assigned, WAL bytes written) so far: every transaction that writes takes
    /// one id, so the difference counts them exactly, at once.
    fn read(&self) -> (i64, i64) {
        self.runtime.block_on(async {
            let row = self
                .client
                .query_one(
                    "SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint,
                            (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint",
                    &[],
                )
                .await
                .unwrap();
            (row.get(0), row.get(1))
        })
    }
}

/// The search index's catch-up (`PostgresStore::index_pending`), run by the driver whenever the
/// appends of a column stop, so that indexing what they left pending (which a server does in
/// the pauses between writes) never overlaps another column's measurement, and measured alone:
/// events indexed, its time, the database's write-ahead log.
struct CatchUp {
    store: PostgresStore,
    events: u64,
    seconds: f64,
    wal: i64,
}

impl CatchUp {
    fn connect(counters: &DbCounters, url: &str) -> CatchUp {
        let store = counters.runtime.block_on(PostgresStore::connect(url)).expect("connect");
        CatchUp { store, events: 0, seconds: 0.0, wal: 0 }
    }

    fn run(&mut self, counters: &DbCounters) {
        let (_, w0) = counters.read();
        let start = Instant::now();
        self.events += counters.runtime.block_on(self.store.index_pending()).expect("the index's catch-up");
        self.seconds += start.elapsed().as_secs_f64();
        self.wal += counters.read().1 - w0;
    }
}

/// CPU time (user + system) a process has used, in clock ticks, from `/proc`.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
    fields.get(11).and_then(|u| u.parse::<u64>().ok()).unwrap_or(0)
        + fields.get(12).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0)
}

/// Runs the floor command for one slice; its `tps = N`.
fn floor_slice(command: &str) -> f64 {
    let output = Command::new("sh").args(["-c", command]).stderr(Stdio::inherit()).output().expect("run the floor");
    assert!(output.status.success(), "the floor command failed: {command}");
    let text = String::from_utf8_lossy(&output.stdout);
    text.lines()
        .find_map(|line| line.strip_prefix("tps = "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no `tps = N` in the floor's output: {text}"))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 7 {
        eprintln!("usage: store_load BINARY STORE WRITERS SERVERS SLICES SECONDS FLOOR_CMD [SERVE_ARG...]");
        std::process::exit(64);
    }
    let (binary, store) = (&args[0], &args[1]);
    let writers: u64 = args[2].parse().expect("WRITERS is a number");
    let servers: usize = args[3].parse().expect("SERVERS is a number");
    let slices: usize = args[4].parse().expect("SLICES is a number");
    let seconds: f64 = args[5].parse().expect("SECONDS is a number");
    let floor_command = &args[6];
    let serve_args = &args[7..];
    assert!(servers >= 1 && writers >= 1 && slices >= 1, "at least one writer, server and slice");

    let mut processes: Vec<ServerProcess> =
        (0..servers).map(|_| ServerProcess::start(binary, store, serve_args)).collect();
    let started = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let run = format!("{}-{}", std::process::id(), started.as_nanos());
    let thread_id = |w: u64| format!("store-load-{run}-{w}");
    for (i, server) in processes.iter_mut().enumerate() {
        server.call(u64::MAX, "initialize", json!({"clientInfo": {"name": "store_load"}}));
        for w in (0..writers).filter(|w| *w as usize % servers == i) {
            server.call(w, "thread/open", json!({"threadId": thread_id(w)}));
        }
    }
    let pids: Vec<u32> = processes.iter().map(|p| p.child.id()).collect();
    let gate = Arc::new(Gate { open: Mutex::new(true), changed: Condvar::new() });
    let stop = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(AtomicU64::new(0));
    let busy = Arc::new(AtomicU64::new(0));
    let loops: Vec<_> = processes
        .into_iter()
        .enumerate()
        .map(|(i, mut server)| {
            let mine: Vec<(u64, String)> =
                (0..writers).filter(|w| *w as usize % servers == i).map(|w| (w, thread_id(w))).collect();
            let (gate, stop, answered, busy) = (gate.clone(), stop.clone(), answered.clone(), busy.clone());
            std::thread::spawn(move || {
                let mut step: HashMap<u64, u64> = mine.iter().map(|(w, _)| (*w, 0)).collect();
                let thread_of: HashMap<u64, &str> = mine.iter().map(|(w, id)| (*w, id.as_str())).collect();
                let mut idle: Vec<u64> = mine.iter().map(|(w, _)| *w).collect();
                let mut line = String::new();
                loop {
                    // Every idle writer calls again, while the gate is open.
                    if gate.is_open() && !stop.load(Ordering::Relaxed) {
                        for w in idle.drain(..) {
                            busy.fetch_add(1, Ordering::SeqCst);
                            let n = step[&w];
                            server.send(w, "thread/append", &json!({"threadId": thread_of[&w], "events": [event(n)]}));
                            step.insert(w, n + 1);
                        }
                    }
                    if idle.len() == mine.len() {
                        if stop.load(Ordering::Relaxed) {
                            return server;
                        }
                        gate.wait_open();
                        continue;
                    }
                    let w = server.answer(&mut line);
                    idle.push(w);
                    answered.fetch_add(1, Ordering::SeqCst);
                    busy.fetch_sub(1, Ordering::SeqCst);
                }
            })
        })
        .collect();
    let counters = DbCounters::connect(store);
    let mut catch_up = CatchUp::connect(&counters, store);
    let in_process = InProcess::connect(store, writers, servers, &run);
    let statement_alone = DirectWriters::connect(store, writers, &run, Direct::Append);
    let insert_alone = DirectWriters::connect(store, writers, &run, Direct::FloorInsert);
    let (mut library, mut statement, mut insert) = (0f64, 0f64, 0f64);
    std::thread::sleep(WARM_UP);
    let (mut appends, mut appending, mut floor) = (0u64, 0f64, 0f64);
    let (mut our_xacts, mut our_wal, mut floor_xacts, mut floor_wal) = (0i64, 0i64, 0i64, 0i64);
    let mut cpu = 0u64;
    for slice in 0..slices {
        // Pause the writers; calls in flight finish before the floor starts.
        gate.set(false);
        while busy.load(Ordering::SeqCst) > 0 {
            std::thread::sleep(Duration::from_millis(5));
        }
        catch_up.run(&counters);
        let (x0, w0) = counters.read();
        floor += floor_slice(floor_command);
        let (x1, w1) = counters.read();
        (floor_xacts, floor_wal) = (floor_xacts + x1 - x0, floor_wal + w1 - w0);
        library += in_process.slice(seconds, slice as u64 * 10_000_000);
        catch_up.run(&counters);
        statement += statement_alone.slice(seconds, slice as u64 * 10_000_000);
        catch_up.run(&counters);
        insert += insert_alone.slice(seconds, 0);
        let (x1, w1) = counters.read();
        let cpu_before: u64 = pids.iter().map(|pid| cpu_ticks(*pid)).sum();
        let before = answered.load(Ordering::SeqCst);
        let start = Instant::now();
        gate.set(true);
        std::thread::sleep(Duration::from_secs_f64(seconds));
        gate.set(false);
        while busy.load(Ordering::SeqCst) > 0 {
            std::thread::sleep(Duration::from_millis(5));
        }
        appends += answered.load(Ordering::SeqCst) - before;
        appending += start.elapsed().as_secs_f64();
        cpu += pids.iter().map(|pid| cpu_ticks(*pid)).sum::<u64>() - cpu_before;
        let (x2, w2) = counters.read();
        // The floor's own rows aside, counted above; the reads themselves take no id.
        (our_xacts, our_wal) = (our_xacts + x2 - x1, our_wal + w2 - w1);
    }
    catch_up.run(&counters);
    stop.store(true, Ordering::SeqCst);
    gate.set(true);
    for event_loop in loops {
        let mut server = event_loop.join().unwrap();
        drop(server.stdin);
        let _ = server.child.wait();
    }
    let floor_rows = (floor / slices as f64 * seconds * slices as f64).max(1.0);
    let ticks_per_s = 100.0; // USER_HZ on Linux
    println!(
        "appends_per_s={:.0} floor_per_s={:.0} in_process_per_s={:.0} statement_per_s={:.0} rust_insert_per_s={:.0} appends={appends} seconds={appending:.2} \
         xacts_per_append={:.3} wal_bytes_per_append={:.0} floor_xacts_per_row={:.3} floor_wal_bytes_per_row={:.0} \
         server_cpu_us_per_append={:.0} catch_up_events={} catch_up_events_per_s={:.0} catch_up_wal_bytes_per_event={:.0}",
        appends as f64 / appending,
        floor / slices as f64,
        library / slices as f64,
        statement / slices as f64,
        insert / slices as f64,
        our_xacts as f64 / appends.max(1) as f64,
        our_wal as f64 / appends.max(1) as f64,
        floor_xacts as f64 / floor_rows,
        floor_wal as f64 / floor_rows,
        cpu as f64 / ticks_per_s * 1e6 / appends.max(1) as f64,
        catch_up.events,
        catch_up.events as f64 / catch_up.seconds.max(1e-9),
        catch_up.wal as f64 / catch_up.events.max(1) as f64,
    );
}
