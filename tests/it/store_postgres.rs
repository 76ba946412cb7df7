//! The PostgreSQL store against a real server: several `threadkeeper` processes share threads.
//!
//! Needs `THREADKEEPER_TEST_PG` (a connection URL); `scripts/with-postgres cargo test --test it
//! store_postgres` provides one. Without it every test that needs the server fails and says
//! how to run it; `THREADKEEPER_SKIP_PG=1` skips them explicitly, each saying so.

use crate::support::events::numbered_event;
use crate::support::postgres::{admin, database_url, ScratchDatabase};
use crate::support::{run_to_end, serve, Server, Wire};
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};
use std::io::Write;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use threadkeeper::event_log::{EventLog, EventLogBuilder};
use threadkeeper::store::{OpenThread, PostgresStore, Store};
use threadkeeper::AgentEvent;

/// Thread ids unique to this run, since the database outlives it.
fn unique(name: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    format!("{name}-{}-{nanos}", std::process::id())
}

fn event(value: Value) -> String {
    serde_json::to_string(AgentEvent::from_value(value, "event").unwrap().fields()).unwrap()
}

/// The events as the log a store appends.
fn log(events: &[String]) -> EventLog {
    let mut builder = EventLogBuilder::new();
    for json in events {
        builder.push_validated(json);
    }
    builder.finish()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap()
}

#[test]
fn catching_up_with_another_server_is_one_query() {
    let Some(url) = database_url("catching_up_with_another_server_is_one_query") else { return };
    runtime().block_on(async {
        let here = PostgresStore::connect(&url).await.unwrap();
        let there = PostgresStore::connect(&url).await.unwrap();
        let id = unique("catch-up");
        here.open(OpenThread { thread_id: id.clone(), now: 1, ..Default::default() }).await.unwrap();
        here.append(&id, None, &log(&[event(numbered_event(0, 0)), event(numbered_event(0, 1))]), 2).await.unwrap();

        // Nothing new: one statement, no events.
        let before = here.statements_sent();
        let (record, events) = here.events_from(&id, 2).await.unwrap();
        assert_eq!(here.statements_sent() - before, 1);
        assert_eq!((record.version, record.event_count, events.len()), (1, 2, 0));

        // The other server appends; catching up returns just its events, in one statement.
        there.append(&id, Some(1), &log(&[event(numbered_event(1, 0))]), 3).await.unwrap();
        let before = here.statements_sent();
        let (record, events) = here.events_from(&id, 2).await.unwrap();
        assert_eq!(here.statements_sent() - before, 1);
        assert_eq!((record.version, record.event_count, record.updated_at), (2, 3, 3));
        assert_eq!(events, log(&[event(numbered_event(1, 0))]));

        // An append is one statement too.
        let before = here.statements_sent();
        here.append(&id, Some(2), &log(&[event(numbered_event(2, 0))]), 4).await.unwrap();
        assert_eq!(here.statements_sent() - before, 1);
        assert!(here.delete(&id).await.unwrap());
    });
}

#[test]
fn two_servers_share_a_thread_and_see_each_others_appends() {
    let Some(url) = database_url("two_servers_share_a_thread_and_see_each_others_appends") else { return };
    let id = unique("shared");
    let mut a = Server::start(Wire::Ndjson, &url);
    let mut b = Server::start(Wire::Ndjson, &url);
    assert_eq!(a.init["capabilities"]["store"], json!({"kind": "postgres"}));

    a.ok("thread/open", json!({"threadId": id, "settings": {"responsePrefix": "<r>"}, "metadata": {"by": "a"}}));
    b.ok("thread/render", json!({"threadId": id, "format": "xml"})); // B holds the thread in memory now
    a.ok("thread/append", json!({"threadId": id, "events": [numbered_event(0, 0), numbered_event(0, 1)]}));
    a.ok("thread/append", json!({"threadId": id, "events": [numbered_event(1, 0)], "expectedVersion": 1}));

    // B renders what A appended without being told.
    let from_a = a.ok("thread/render", json!({"threadId": id, "format": "xml"}));
    let from_b = b.ok("thread/render", json!({"threadId": id, "format": "xml"}));
    assert_eq!(from_b, from_a);
    assert_eq!(from_b["version"], 2);
    assert!(from_b["text"].as_str().unwrap().contains(">1.0</event>"), "{from_b}");
    assert!(from_b["text"].as_str().unwrap().ends_with("<r>"), "{from_b}");
    let events_b = b.ok("thread/events", json!({"threadId": id}));
    assert_eq!(events_b["events"], json!([numbered_event(0, 0), numbered_event(0, 1), numbered_event(1, 0)]));

    // B appends without knowing the version A left: it goes after A's events.
    let appended = b.ok("thread/append", json!({"threadId": id, "events": [numbered_event(2, 0)]}));
    assert_eq!(appended, json!({"threadId": id, "version": 3, "eventCount": 4}));
    assert_eq!(a.ok("thread/events", json!({"threadId": id}))["eventCount"], 4);

    // Settings changed through B reach A.
    b.ok("thread/open", json!({"threadId": id, "settings": {"responsePrefix": "<s>"}}));
    let text = a.ok("thread/render", json!({"threadId": id, "format": "xml"}))["text"].as_str().unwrap().to_owned();
    assert!(text.ends_with("<s>"), "{text}");

    // Deleted through A: gone for B too, and a new thread of that id starts empty on both.
    assert_eq!(a.ok("thread/delete", json!({"threadId": id}))["deleted"], true);
    assert_eq!(b.err("thread/events", json!({"threadId": id}))["code"], -32001);
    a.ok("thread/open", json!({"threadId": id}));
    a.ok("thread/append", json!({"threadId": id, "events": [numbered_event(7, 0)]}));
    assert_eq!(b.ok("thread/events", json!({"threadId": id}))["events"], json!([numbered_event(7, 0)]));
    a.ok("thread/delete", json!({"threadId": id}));
    assert!(a.stop().success());
    assert!(b.stop().success());
}

/// Appends `count` batches of `batch` events tagged `tag` from one server, all sent at once.
fn append_stream(server: &mut Server, id: &str, tag: u64, count: u64, batch: u64) -> Vec<Value> {
    let requests = (0..count)
        .map(|n| {
            let events: Vec<Value> = (0..batch).map(|i| numbered_event(tag * 1000 + n, i)).collect();
            ("thread/append".to_owned(), json!({"threadId": id, "events": events}))
        })
        .collect();
    let writer = server.send_in_background(requests);
    let answers = (0..count).map(|_| server.recv().expect("answer")).collect();
    assert_eq!(server.join_background(writer) as u64, count);
    answers
}

#[test]
fn concurrent_appends_without_expected_version_all_land_once() {
    let Some(url) = database_url("concurrent_appends_without_expected_version_all_land_once") else { return };
    const PER_SERVER: u64 = 150;
    const BATCH: u64 = 3;
    let id = unique("race");
    let mut a = Server::start(Wire::Ndjson, &url);
    let mut b = Server::start(Wire::Ndjson, &url);
    a.ok("thread/open", json!({"threadId": id}));
    b.ok("thread/events", json!({"threadId": id}));

    let id_a = id.clone();
    let id_b = id.clone();
    let (answers_a, answers_b) = std::thread::scope(|s| {
        let ta = s.spawn(|| append_stream(&mut a, &id_a, 1, PER_SERVER, BATCH));
        let tb = s.spawn(|| append_stream(&mut b, &id_b, 2, PER_SERVER, BATCH));
        (ta.join().unwrap(), tb.join().unwrap())
    });

    let mut versions = BTreeSet::new();
    for answer in answers_a.iter().chain(&answers_b) {
        let version = answer["result"]["version"].as_u64().unwrap_or_else(|| panic!("append failed: {answer}"));
        assert!(versions.insert(version), "version {version} acknowledged twice");
    }
    assert_eq!(versions, (1..=2 * PER_SERVER).collect::<BTreeSet<_>>());

    // Every batch exactly once, whole, in its server's order.
    let stored = a.ok("thread/events", json!({"threadId": id}));
    assert_eq!(stored["version"], 2 * PER_SERVER);
    let events = stored["events"].as_array().unwrap();
    assert_eq!(events.len() as u64, 2 * PER_SERVER * BATCH);
    let mut next_of: HashMap<u64, u64> = HashMap::from([(1, 0), (2, 0)]);
    for chunk in events.chunks(BATCH as usize) {
        let batch = chunk[0]["iteration"].as_u64().unwrap();
        let (tag, n) = (batch / 1000, batch % 1000);
        for (i, event) in chunk.iter().enumerate() {
            assert_eq!(event, &numbered_event(batch, i as u64), "batch {batch} is not whole");
        }
        let next = next_of.get_mut(&tag).unwrap();
        assert_eq!(n, *next, "server {tag}'s batches out of order");
        *next += 1;
    }
    assert_eq!(next_of, HashMap::from([(1, PER_SERVER), (2, PER_SERVER)]));
    let switches =
        events.chunks(BATCH as usize).map(|c| c[0]["iteration"].as_u64().unwrap() / 1000).collect::<Vec<_>>();
    let switches = switches.windows(2).filter(|w| w[0] != w[1]).count();
    eprintln!("the servers' appends interleaved {switches} times");
    assert!(switches > 1, "the appends did not run concurrently; the test proved nothing");

    // Both servers render the same document.
    let xml_a = a.ok("thread/render", json!({"threadId": id, "format": "xml"}));
    let xml_b = b.ok("thread/render", json!({"threadId": id, "format": "xml"}));
    assert_eq!(xml_a, xml_b);
    assert_eq!(xml_a["version"], 2 * PER_SERVER);
    a.ok("thread/delete", json!({"threadId": id}));
    assert!(a.stop().success());
    assert!(b.stop().success());
}

#[test]
fn concurrent_appends_with_expected_version_conflict_in_the_database() {
    let Some(url) = database_url("concurrent_appends_with_expected_version_conflict_in_the_database") else { return };
    const ROUNDS: u64 = 25;
    let id = unique("cas");
    let mut a = Server::start(Wire::Ndjson, &url);
    let mut b = Server::start(Wire::Ndjson, &url);
    a.ok("thread/open", json!({"threadId": id}));

    for round in 0..ROUNDS {
        // Both try to be the append after version `round`; exactly one may win.
        let ra = a.request(
            "thread/append",
            json!({"threadId": id, "events": [numbered_event(1000 + round, 0)], "expectedVersion": round}),
        );
        let rb = b.request(
            "thread/append",
            json!({"threadId": id, "events": [numbered_event(2000 + round, 0)], "expectedVersion": round}),
        );
        let (answer_a, answer_b) = (a.response(ra), b.response(rb));
        let (winner, loser) = match (answer_a.get("result"), answer_b.get("result")) {
            (Some(_), None) => (&answer_a, &answer_b),
            (None, Some(_)) => (&answer_b, &answer_a),
            _ => panic!("round {round}: exactly one must win: {answer_a} {answer_b}"),
        };
        assert_eq!(winner["result"]["version"], round + 1);
        assert_eq!(loser["error"]["code"], -32003, "{loser}");
        assert_eq!(loser["error"]["data"], json!({"threadId": id, "currentVersion": round + 1}));
    }

    let stored = b.ok("thread/events", json!({"threadId": id}));
    assert_eq!(stored["version"], ROUNDS);
    let events = stored["events"].as_array().unwrap();
    assert_eq!(events.len() as u64, ROUNDS, "a losing append left events behind");
    for (round, event) in events.iter().enumerate() {
        let iteration = event["iteration"].as_u64().unwrap();
        assert_eq!(iteration % 1000, round as u64);
    }
    assert_eq!(
        a.ok("thread/render", json!({"threadId": id, "format": "xml"})),
        b.ok("thread/render", json!({"threadId": id, "format": "xml"}))
    );
    a.ok("thread/delete", json!({"threadId": id}));
    assert!(a.stop().success());
    assert!(b.stop().success());
}

/// A TCP relay to the database that can be cut and restored, to play "database gone".
struct Relay {
    port: u16,
    up: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl Relay {
    fn start(target: (String, u16)) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let up = Arc::new(AtomicBool::new(true));
        let open = Arc::new(Mutex::new(Vec::new()));
        let (up2, open2) = (up.clone(), open.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { break };
                if !up2.load(Ordering::SeqCst) {
                    drop(client); // refused while down
                    continue;
                }
                let Ok(server) = TcpStream::connect((target.0.as_str(), target.1)) else { continue };
                {
                    let mut open = open2.lock().unwrap();
                    open.push(client.try_clone().unwrap());
                    open.push(server.try_clone().unwrap());
                }
                for (mut from, mut to) in [(client.try_clone().unwrap(), server.try_clone().unwrap()), (server, client)]
                {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.flush();
                        let _ = to.shutdown(Shutdown::Both);
                        let _ = from.shutdown(Shutdown::Both);
                    });
                }
            }
        });
        Relay { port, up, open }
    }

    fn cut(&self) {
        self.up.store(false, Ordering::SeqCst);
        for stream in self.open.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }

    fn restore(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

#[test]
fn a_database_outage_answers_32005_and_the_pool_reconnects() {
    let Some(url) = database_url("a_database_outage_answers_32005_and_the_pool_reconnects") else { return };
    let config: tokio_postgres::Config = url.parse().unwrap();
    let host = match &config.get_hosts()[0] {
        tokio_postgres::config::Host::Tcp(host) => host.clone(),
        #[allow(unreachable_patterns)]
        _ => panic!("THREADKEEPER_TEST_PG must name a TCP host"),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let relay = Relay::start((host, port));
    let user = config.get_user().unwrap_or("postgres");
    let password = config.get_password().map(|p| format!(":{}", String::from_utf8_lossy(p))).unwrap_or_default();
    let dbname = config.get_dbname().unwrap_or(user);
    let relayed = format!("postgres://{user}{password}@127.0.0.1:{}/{dbname}", relay.port);

    let id = unique("outage");
    let mut server = Server::start(Wire::Ndjson, &relayed);
    server.ok("thread/open", json!({"threadId": id}));
    server.ok("thread/append", json!({"threadId": id, "events": [numbered_event(0, 0)]}));

    relay.cut();
    for _ in 0..3 {
        let error = server.err("thread/append", json!({"threadId": id, "events": [numbered_event(1, 0)]}));
        assert_eq!(error["code"], -32005, "{error}");
        assert!(error["message"].as_str().unwrap().starts_with("store failed: PostgreSQL: "), "{error}");
    }
    // Requests that need no database are still answered.
    assert_eq!(server.ok("xml/escape", json!({"text": "<"})), json!({"text": "&lt;"}));

    relay.restore();
    let ok = server.ok("thread/append", json!({"threadId": id, "events": [numbered_event(2, 0)]}));
    assert_eq!(ok, json!({"threadId": id, "version": 2, "eventCount": 2}));
    let stored = server.ok("thread/events", json!({"threadId": id}));
    assert_eq!(stored["events"], json!([numbered_event(0, 0), numbered_event(2, 0)]));
    server.ok("thread/delete", json!({"threadId": id}));
    assert!(server.stop().success());
}

#[test]
fn a_database_with_a_newer_schema_is_refused() {
    let Some(url) = database_url("a_database_with_a_newer_schema_is_refused") else { return };
    let rt = runtime();
    let scratch = rt.block_on(ScratchDatabase::create(&url));
    let scratch_url = scratch.url.clone();
    rt.block_on(admin(&scratch_url, "CREATE TABLE threadkeeper_schema (singleton boolean PRIMARY KEY DEFAULT true, version bigint NOT NULL); INSERT INTO threadkeeper_schema VALUES (true, 99)"));

    let (status, stderr) = run_to_end(&mut serve(Some(&scratch_url)));
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "the PostgreSQL database has threadkeeper schema version 99, newer than the 6 this threadkeeper \
             understands; refusing to use it (use a newer threadkeeper)"
        ),
        "{stderr}"
    );
    // Nothing was created next to the newer schema.
    let tables = rt.block_on(async {
        let (client, connection) = tokio_postgres::connect(&scratch_url, tokio_postgres::NoTls).await.unwrap();
        tokio::spawn(connection);
        let row =
            client.query_one("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'threadkeeper%'", &[]).await.unwrap();
        row.get::<_, i64>(0)
    });
    assert_eq!(tables, 1);
}

#[test]
fn an_unreachable_database_fails_fast_with_status_2() {
    // Needs no database: a port nothing listens on.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let url = format!("postgres://nobody@127.0.0.1:{port}/none");
    let (status, stderr) = run_to_end(&mut serve(Some(&url)));
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.starts_with(&format!("threadkeeper: cannot open the store {url}: PostgreSQL: ")), "{stderr}");
    assert!(stderr.contains("Connection refused"), "{stderr}");
}

/// Several writers per server, one call in flight each, appending tagged events to their own
/// threads until `stop`; the tags each writer had acknowledged, in order, and how many appends
/// failed.
fn write_until(
    server: &mut Server,
    threads: &[String],
    stop: &AtomicBool,
    fault_over: &AtomicBool,
) -> (Vec<Vec<u64>>, usize) {
    let mut acknowledged = vec![Vec::new(); threads.len()];
    let mut failed = 0;
    let mut after_fault = vec![0usize; threads.len()];
    let mut next_tag = vec![0u64; threads.len()];
    let mut in_flight = HashMap::new();
    let send = |server: &mut Server, w: usize, tag: u64| {
        server.request("thread/append", json!({"threadId": threads[w], "events": [numbered_event(tag, 0)]}))
    };
    for (w, next) in next_tag.iter_mut().enumerate() {
        in_flight.insert(send(server, w, 0), (w, 0));
        *next = 1;
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !in_flight.is_empty() {
        let answer = server.recv().expect("the server answers");
        let (w, tag) = in_flight.remove(&answer["id"].as_u64().unwrap()).expect("an answer to a request");
        match (answer.get("result"), answer.get("error")) {
            (Some(_), None) => {
                acknowledged[w].push(tag);
                if fault_over.load(Ordering::SeqCst) {
                    after_fault[w] += 1;
                }
            }
            // While the database is away; the append may or may not have committed.
            (None, Some(error)) => {
                assert_eq!(error["code"], -32005, "{answer}");
                failed += 1;
            }
            _ => panic!("{answer}"),
        }
        // Each writer goes on until the run stops and it has appended again after the fault.
        let done = stop.load(Ordering::SeqCst) && after_fault[w] >= 20;
        assert!(std::time::Instant::now() < deadline, "the servers did not recover: {after_fault:?}");
        if !done {
            in_flight.insert(send(server, w, next_tag[w]), (w, next_tag[w]));
            next_tag[w] += 1;
        }
    }
    (acknowledged, failed)
}

/// Two servers with three writers each append, each writer to a thread of its own, while
/// `fault` runs and after it: the fault must fail some appends (or the test proves nothing),
/// every acknowledged append is stored, and nothing twice (each thread holds its writer's
/// tags in order, one event per append).
fn appends_survive(url: &str, prefix: &str, fault: impl FnOnce()) {
    const SERVERS: usize = 2;
    const WRITERS: usize = 3;
    let mut servers: Vec<Server> = (0..SERVERS).map(|_| Server::start(Wire::Ndjson, url)).collect();
    let threads: Vec<Vec<String>> =
        (0..SERVERS).map(|s| (0..WRITERS).map(|w| format!("{prefix}-{s}-{w}")).collect()).collect();
    for (server, ids) in servers.iter_mut().zip(&threads) {
        for id in ids {
            server.ok("thread/open", json!({"threadId": id}));
        }
    }
    let stop = AtomicBool::new(false);
    let fault_over = AtomicBool::new(false);
    let outcomes = std::thread::scope(|s| {
        let writers: Vec<_> = servers
            .iter_mut()
            .zip(&threads)
            .map(|(server, ids)| s.spawn(|| write_until(server, ids, &stop, &fault_over)))
            .collect();
        fault();
        fault_over.store(true, Ordering::SeqCst);
        stop.store(true, Ordering::SeqCst);
        writers.into_iter().map(|w| w.join().unwrap()).collect::<Vec<_>>()
    });
    let failed: usize = outcomes.iter().map(|(_, failed)| failed).sum();
    assert!(failed > 0, "no append met the fault: the test proved nothing");
    for ((server, ids), (acknowledged, _)) in servers.iter_mut().zip(&threads).zip(&outcomes) {
        for (id, acknowledged) in ids.iter().zip(acknowledged) {
            let stored = server.ok("thread/events", json!({"threadId": id}));
            let tags: Vec<u64> =
                stored["events"].as_array().unwrap().iter().map(|e| e["iteration"].as_u64().unwrap()).collect();
            assert!(tags.windows(2).all(|p| p[0] < p[1]), "{id}: {tags:?}");
            assert_eq!(stored["version"], tags.len(), "{id}");
            let stored: BTreeSet<u64> = tags.into_iter().collect();
            for tag in acknowledged {
                assert!(stored.contains(tag), "{id}: acknowledged append {tag} is missing");
            }
        }
    }
    for server in servers {
        assert!(server.stop().success());
    }
}

#[test]
fn the_database_dropping_every_connection_mid_run_loses_no_acknowledged_append_and_doubles_none() {
    let Some(url) =
        database_url("the_database_dropping_every_connection_mid_run_loses_no_acknowledged_append_and_doubles_none")
    else {
        return;
    };
    let rt = runtime();
    let scratch = rt.block_on(ScratchDatabase::create(&url));
    let name = scratch.url.rsplit('/').next().unwrap().to_owned();
    appends_survive(&scratch.url, "dropped", || {
        // As a restart looks to its clients: every connection drops, new ones are refused for a
        // while, then the database is back. Twice.
        std::thread::sleep(std::time::Duration::from_millis(500));
        for _ in 0..2 {
            rt.block_on(admin(
                &url,
                &format!(
                    "ALTER DATABASE {name} ALLOW_CONNECTIONS false;
                     SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                     WHERE datname = '{name}' AND pid <> pg_backend_pid()"
                ),
            ));
            std::thread::sleep(std::time::Duration::from_millis(800));
            rt.block_on(admin(&url, &format!("ALTER DATABASE {name} ALLOW_CONNECTIONS true")));
            std::thread::sleep(std::time::Duration::from_millis(300));
        }
    });
}

/// A PostgreSQL server of one test's own (`scripts/with-postgres`), which it may restart without
/// breaking the connections of the tests running beside it. Stopped when dropped.
struct OwnPostgres {
    child: std::process::Child,
    url: String,
    restart: String,
}

impl OwnPostgres {
    fn start() -> OwnPostgres {
        use std::io::BufRead;
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/with-postgres");
        let mut child = std::process::Command::new(script)
            .args(["sh", "-c", r#"printf '%s %s\n' "$THREADKEEPER_TEST_PG" "$THREADKEEPER_TEST_PG_RESTART"; read _"#])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("start scripts/with-postgres");
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let (url, restart) = line.trim().split_once(' ').expect("the server's URL and restart program");
        OwnPostgres { url: url.to_owned(), restart: restart.to_owned(), child }
    }

    fn restart(&self) {
        let status = std::process::Command::new(&self.restart).status().expect("run the restart program");
        assert!(status.success(), "PostgreSQL did not restart");
    }
}

impl Drop for OwnPostgres {
    fn drop(&mut self) {
        drop(self.child.stdin.take()); // ends `read`, so the script stops the server
        let _ = self.child.wait();
    }
}
#[test]
fn postgresql_restarted_mid_run_loses_no_acknowledged_append_and_doubles_none() {
    if database_url("postgresql_restarted_mid_run_loses_no_acknowledged_append_and_doubles_none").is_none() {
        return;
    }
    let postgres = OwnPostgres::start();
    appends_survive(&postgres.url, "restarted", || {
        // The server itself goes down (fast shutdown: every session ends, in-flight
        // transactions roll back) and comes back, twice, while the writers append.
        for _ in 0..2 {
            std::thread::sleep(std::time::Duration::from_millis(500));
            postgres.restart();
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    });
}

#[test]
fn pool_and_commit_slot_flags_out_of_range_are_usage_errors() {
    // Needs no database: the flags are checked before the store is opened.
    for (flag, value) in [
        ("--pg-pool-size", "0"),
        ("--pg-pool-size", "1001"),
        ("--pg-commit-slots", "0"),
        ("--pg-commit-slots", "x"),
        ("--pg-commit-hold", "100001"),
        ("--pg-commit-hold", "x"),
    ] {
        let (status, stderr) = run_to_end(serve(Some("memory")).args([flag, value]));
        assert_eq!(status.code(), Some(2), "{flag} {value}: {stderr}");
        assert!(stderr.contains(flag), "{flag} {value}: {stderr}");
    }
}

/// A database a threadkeeper of schema 3 made gains the blob tables when a newer server
/// connects, and its threads stay as they were.
#[test]
fn a_database_of_schema_3_gains_the_blob_tables_and_keeps_its_threads() {
    use crate::support::conformance::image;
    use threadkeeper::store::AppendBlobs;
    let Some(url) = database_url("a_database_of_schema_3_gains_the_blob_tables_and_keeps_its_threads") else {
        return;
    };
    let rt = runtime();
    let scratch = rt.block_on(ScratchDatabase::create(&url));
    let open = OpenThread { thread_id: "t".into(), now: 1, ..Default::default() };
    rt.block_on(async {
        let store = PostgresStore::connect(&scratch.url).await.unwrap();
        store.open(open).await.unwrap();
        store.append("t", None, &log(&[event(numbered_event(0, 0))]), 2).await.unwrap();
    });
    // The database as a threadkeeper of schema 3 left it.
    rt.block_on(admin(
        &scratch.url,
        "DROP TABLE threadkeeper_blob_names; DROP TABLE threadkeeper_blobs;
         DROP TABLE threadkeeper_event_search; ALTER TABLE threadkeeper_threads DROP COLUMN indexed_count;
         UPDATE threadkeeper_schema SET version = 3",
    ));
    rt.block_on(async {
        let store = PostgresStore::connect(&scratch.url).await.unwrap();
        let (record, events) = store.events_from("t", 0).await.unwrap();
        assert_eq!((record.version, events.len()), (1, 1));
        let blob = image(1, 1_000);
        let blobs = AppendBlobs { new: vec![blob.clone()], named: vec![blob.info.id.clone()] };
        store.append_with_blobs("t", Some(1), &log(&[event(numbered_event(1, 0))]), &blobs, 3).await.unwrap();
        assert_eq!(store.blob(&blob.info.id).await.unwrap(), Some(blob));
        let (client, connection) = tokio_postgres::connect(&scratch.url, tokio_postgres::NoTls).await.unwrap();
        tokio::spawn(connection);
        let version: i64 = client.query_one("SELECT version FROM threadkeeper_schema", &[]).await.unwrap().get(0);
        assert_eq!(version, 6);
    });
    drop(rt);
    drop(scratch);
}

/// The free after a delete is its own statement: a transaction that names the blob before it
/// runs (here one held open by hand, as an append of another server is between its check and
/// its commit) makes it wait, and once that commits the free keeps the blob.
#[test]
fn a_free_gives_way_to_a_name_added_meanwhile() {
    use crate::support::conformance::image;
    use threadkeeper::store::AppendBlobs;
    let Some(url) = database_url("a_free_gives_way_to_a_name_added_meanwhile") else { return };
    let rt = runtime();
    let scratch = rt.block_on(ScratchDatabase::create(&url));
    rt.block_on(async {
        let store = Arc::new(PostgresStore::connect(&scratch.url).await.unwrap());
        for thread in ["a", "b"] {
            store.open(OpenThread { thread_id: thread.into(), now: 1, ..Default::default() }).await.unwrap();
        }
        let blob = image(1, 5_000);
        let blobs = AppendBlobs { new: vec![blob.clone()], named: vec![blob.info.id.clone()] };
        store.append_with_blobs("a", None, &log(&[event(numbered_event(0, 0))]), &blobs, 2).await.unwrap();

        let (mut client, connection) = tokio_postgres::connect(&scratch.url, tokio_postgres::NoTls).await.unwrap();
        tokio::spawn(connection);
        let naming = client.transaction().await.unwrap();
        naming
            .execute(
                "INSERT INTO threadkeeper_blob_names (thread_key, blob)
                 SELECT thread_key, $1 FROM threadkeeper_threads WHERE thread_id = 'b'",
                &[&blob.info.id.as_str()],
            )
            .await
            .unwrap();
        let delete = tokio::spawn({
            let store = store.clone();
            async move { store.delete("a").await.unwrap() }
        });
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert!(!delete.is_finished(), "the free waits for the transaction naming the blob");
        naming.commit().await.unwrap();
        assert!(delete.await.unwrap());
        assert_eq!(store.blob(&blob.info.id).await.unwrap(), Some(blob.clone()), "b names it: kept");
        assert!(store.delete("b").await.unwrap());
        assert_eq!(store.blob(&blob.info.id).await.unwrap(), None, "the last name is gone: freed");
    });
    drop(rt);
    drop(scratch);
}

#[test]
fn blobs_survive_a_restart_and_go_with_the_last_thread() {
    let Some(url) = database_url("blobs_survive_a_restart_and_go_with_the_last_thread") else { return };
    crate::support::media::blobs_survive_a_restart_and_go_with_the_last_thread(&url, &unique("media"));
}
