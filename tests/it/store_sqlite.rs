//! The SQLite store through real server processes: resume, crash safety, refusal of
//! databases it must not touch, start-up failures and failures while serving.

use crate::support::events::{numbered_event, sample_events};
use crate::support::search::{hits, quokka};
use crate::support::{run_to_end, serve, Server, Wire};
use serde_json::{json, Value};
use std::path::Path;

fn sqlite(path: &Path) -> String {
    format!("sqlite:{}", path.display())
}

/// Everything a client can see of a thread.
fn snapshot(server: &mut Server, thread: &str) -> Vec<String> {
    let mut seen = vec![server.ok("thread/events", json!({"threadId": thread})).to_string()];
    for (format, options) in [
        ("xml", json!({})),
        ("messages", json!({})),
        ("text", json!({})),
        ("messages", json!({"contextMode": "xml"})),
        ("xml", json!({"escape": "minimal"})),
    ] {
        let rendered = server.ok("thread/render", json!({"threadId": thread, "format": format, "options": options}));
        seen.push(rendered.to_string());
    }
    seen
}

fn thread_info(server: &mut Server, thread: &str) -> Value {
    let list = server.ok("thread/list", json!({}));
    list["threads"].as_array().unwrap().iter().find(|t| t["threadId"] == thread).cloned().unwrap_or(Value::Null)
}

#[test]
fn a_thread_resumes_in_a_fresh_process() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite(&dir.path().join("threads.db"));
    let events = sample_events();

    let mut first = Server::start(Wire::Ndjson, &store);
    let opened = first.ok(
        "thread/open",
        json!({"threadId": "resume-1", "settings": {"instructions": "Be brief.", "responsePrefix": "<answer>"},
               "metadata": {"zeta": 1, "alpha": {"y": true, "x": null}}}),
    );
    assert_eq!(opened["version"], 0);
    first.ok("thread/append", json!({"threadId": "resume-1", "events": events[..2]}));
    first.ok("thread/append", json!({"threadId": "resume-1", "events": events[2..4], "expectedVersion": 1}));
    let last = first.ok("thread/append", json!({"threadId": "resume-1", "events": events[4..]}));
    assert_eq!(last, json!({"threadId": "resume-1", "version": 3, "eventCount": 5}));
    let before = snapshot(&mut first, "resume-1");
    let info_before = thread_info(&mut first, "resume-1");
    // close frees memory only: the thread comes back from the file in the same process.
    assert_eq!(
        first.ok("thread/close", json!({"threadId": "resume-1"})),
        json!({"threadId": "resume-1", "closed": true})
    );
    assert_eq!(snapshot(&mut first, "resume-1"), before);
    assert!(first.stop().success());

    let mut second = Server::start(Wire::Ndjson, &store);
    assert_eq!(thread_info(&mut second, "resume-1"), info_before);
    assert_eq!(
        info_before["metadata"].to_string(),
        r#"{"zeta":1,"alpha":{"y":true,"x":null}}"#,
        "metadata keeps its key order"
    );
    assert_eq!(info_before["settings"], json!({"instructions": "Be brief.", "responsePrefix": "<answer>"}));
    let after = snapshot(&mut second, "resume-1");
    assert_eq!(after, before);
    // The events come back as sent, key order and unknown fields included.
    let stored = second.ok("thread/events", json!({"threadId": "resume-1"}));
    assert_eq!(stored["events"].to_string(), Value::Array(events).to_string());
    assert!(before[1].contains("&lt;config&gt;"), "{}", before[1]);

    // The version goes on from where it was, and conflicts are still detected.
    let conflict = second.err("thread/append", json!({"threadId": "resume-1", "events": [], "expectedVersion": 1}));
    assert_eq!(conflict["code"], -32003);
    assert_eq!(conflict["data"], json!({"threadId": "resume-1", "currentVersion": 3}));
    let next = second
        .ok("thread/append", json!({"threadId": "resume-1", "events": [numbered_event(9, 0)], "expectedVersion": 3}));
    assert_eq!(next, json!({"threadId": "resume-1", "version": 4, "eventCount": 6}));
    assert!(second.stop().success());
}

#[test]
fn list_and_delete_act_on_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite(&dir.path().join("threads.db"));
    let mut first = Server::start(Wire::Ndjson, &store);
    for id in ["b-thread", "a-thread", "c-thread"] {
        first.ok("thread/open", json!({"threadId": id}));
        first.ok("thread/append", json!({"threadId": id, "events": [numbered_event(1, 0)]}));
    }
    assert!(first.stop().success());

    let mut second = Server::start(Wire::Ndjson, &store);
    let ids = |server: &mut Server| -> Vec<String> {
        let list = server.ok("thread/list", json!({}));
        list["threads"].as_array().unwrap().iter().map(|t| t["threadId"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(ids(&mut second), ["b-thread", "a-thread", "c-thread"], "oldest first");
    assert_eq!(
        second.ok("thread/delete", json!({"threadId": "a-thread"})),
        json!({"threadId": "a-thread", "deleted": true})
    );
    assert_eq!(
        second.ok("thread/delete", json!({"threadId": "a-thread"})),
        json!({"threadId": "a-thread", "deleted": false})
    );
    assert!(second.stop().success());

    let mut third = Server::start(Wire::Ndjson, &store);
    assert_eq!(ids(&mut third), ["b-thread", "c-thread"]);
    assert_eq!(third.err("thread/render", json!({"threadId": "a-thread", "format": "xml"}))["code"], -32001);
    // A deleted id starts over as a new, empty thread.
    assert_eq!(third.ok("thread/open", json!({"threadId": "a-thread"}))["eventCount"], 0);
    assert!(third.stop().success());
}

#[test]
fn sigkill_mid_stream_keeps_every_acknowledged_append_and_no_partial_one() {
    const BATCH: u64 = 5;
    const APPENDS: u64 = 3000;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("threads.db");
    let mut server = Server::start(Wire::Ndjson, &sqlite(&path));
    server.ok("thread/open", json!({"threadId": "crash"}));

    // Requests go out from another thread while answers are read here.
    let requests = (0..APPENDS)
        .map(|b| {
            let events: Vec<Value> = (0..BATCH).map(|i| numbered_event(b, i)).collect();
            ("thread/append".to_owned(), json!({"threadId": "crash", "events": events}))
        })
        .collect();
    let writer = server.send_in_background(requests);
    let mut acknowledged = 0u64;
    let mut answers = 0;
    while answers < 40 {
        let answer = server.recv().expect("server alive");
        let version = answer["result"]["version"].as_u64().unwrap_or_else(|| panic!("{answer}"));
        acknowledged = acknowledged.max(version);
        answers += 1;
    }
    server.kill();
    // Answers already written before the kill are acknowledged too.
    while let Some(answer) = server.recv() {
        if let Some(version) = answer["result"]["version"].as_u64() {
            acknowledged = acknowledged.max(version);
        }
    }
    let sent = server.join_background(writer) as u64;

    let mut restarted = Server::start(Wire::Ndjson, &sqlite(&path));
    let stored = restarted.ok("thread/events", json!({"threadId": "crash"}));
    let version = stored["version"].as_u64().unwrap();
    let count = stored["eventCount"].as_u64().unwrap();
    eprintln!("{sent} appends sent, {acknowledged} acknowledged, {version} survived the kill");
    assert!(version >= acknowledged, "lost acknowledged appends: {version} < {acknowledged}");
    assert!(version < APPENDS, "the kill came after the last append; the test proved nothing");
    assert_eq!(count, version * BATCH, "a partial append survived");
    let events = stored["events"].as_array().unwrap();
    assert_eq!(events.len() as u64, count);
    for (n, event) in events.iter().enumerate() {
        let n = n as u64;
        assert_eq!(event, &numbered_event(n / BATCH, n % BATCH), "event {n}");
    }
    // The server goes on from there.
    let next = restarted.ok("thread/append", json!({"threadId": "crash", "events": [], "expectedVersion": version}));
    assert_eq!(next["version"].as_u64(), Some(version + 1));
    assert!(restarted.stop().success());

    // The file itself is sound.
    let conn = rusqlite::Connection::open(&path).unwrap();
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok");
    let rows: i64 = conn.query_row("SELECT count(*) FROM events", [], |r| r.get(0)).unwrap();
    assert_eq!(rows as u64, count);
}

#[test]
fn a_database_from_a_newer_version_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("threads.db");
    let mut server = Server::start(Wire::Ndjson, &sqlite(&path));
    server.ok("thread/open", json!({"threadId": "t"}));
    assert!(server.stop().success());
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
    }
    let bytes = std::fs::read(&path).unwrap();

    let (status, stderr) = run_to_end(&mut serve(Some(&sqlite(&path))));
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        format!(
            "threadkeeper: cannot open the store {}: database {} has schema version 99, newer than the 5 this \
             threadkeeper understands; refusing to open it (use a newer threadkeeper)",
            sqlite(&path),
            path.display()
        )
    );
    assert!(std::fs::read(&path).unwrap() == bytes, "the database was changed");
}

#[test]
fn a_database_of_another_program_is_refused_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me');").unwrap();
    }
    let bytes = std::fs::read(&path).unwrap();
    let (status, stderr) = run_to_end(&mut serve(Some(&sqlite(&path))));
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("{} is not a threadkeeper database (it holds other data)", path.display())),
        "{stderr}"
    );
    assert!(std::fs::read(&path).unwrap() == bytes, "the database was changed");
}

#[test]
fn a_store_that_cannot_be_opened_fails_fast_with_status_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let path = file.join("threads.db");
    let (status, stderr) = run_to_end(&mut serve(Some(&sqlite(&path))));
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        format!(
            "threadkeeper: cannot open the store {}: cannot open sqlite database {}: Not a directory (os error 20)",
            sqlite(&path),
            path.display()
        )
    );
}

#[cfg(unix)]
#[test]
fn permission_denied_fails_fast_with_status_2() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o500)).unwrap();
    // Root ignores permissions; then there is nothing to test.
    if std::fs::write(locked.join("probe"), "x").is_ok() {
        eprintln!("SKIPPED permission_denied_fails_fast_with_status_2: running as a user that ignores file permissions (root)");
        return;
    }
    let path = locked.join("threads.db");
    let (status, stderr) = run_to_end(&mut serve(Some(&sqlite(&path))));
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("Permission denied"), "{stderr}");
}

#[cfg(unix)]
#[test]
fn the_default_store_is_sqlite_in_a_private_data_directory() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("data").join("tk");
    let mut cmd = serve(None);
    cmd.env("THREADKEEPER_DATA_DIR", &data_dir);
    let mut server = Server::start_command(Wire::Ndjson, &mut cmd);
    server.ok("thread/open", json!({"threadId": "default-1"}));
    assert!(server.stop().success());
    assert_eq!(std::fs::metadata(&data_dir).unwrap().permissions().mode() & 0o777, 0o700);
    assert!(data_dir.join("threads.sqlite3").is_file());

    // Without THREADKEEPER_DATA_DIR: $XDG_DATA_HOME/threadkeeper.
    let xdg = dir.path().join("xdg");
    let mut cmd = serve(None);
    cmd.env_remove("THREADKEEPER_DATA_DIR").env("XDG_DATA_HOME", &xdg);
    let server = Server::start_command(Wire::Ndjson, &mut cmd);
    assert_eq!(server.init["capabilities"]["store"], json!({"kind": "sqlite"}));
    assert!(server.stop().success());
    assert_eq!(std::fs::metadata(xdg.join("threadkeeper")).unwrap().permissions().mode() & 0o777, 0o700);
    assert!(xdg.join("threadkeeper").join("threads.sqlite3").is_file());

    // THREADKEEPER_STORE chooses the store when --store is absent.
    let mut cmd = serve(None);
    cmd.env("THREADKEEPER_STORE", "memory").env("THREADKEEPER_DATA_DIR", dir.path().join("unused"));
    let server = Server::start_command(Wire::Ndjson, &mut cmd);
    assert_eq!(server.init["capabilities"]["store"], json!({"kind": "memory"}));
    assert!(server.stop().success());
    assert!(!dir.path().join("unused").exists());
}

/// Starts the server with writes to files beyond `limit` bytes failing, as on a full disk,
/// until [`set_file_size_limit`] lifts it.
#[cfg(target_os = "linux")]
fn set_file_size_limit(pid: u32, limit: Option<u64>) {
    let value = limit.unwrap_or(libc::RLIM_INFINITY);
    let new = libc::rlimit { rlim_cur: value, rlim_max: libc::RLIM_INFINITY };
    // SAFETY: plain system call on a child process we own, with valid pointers.
    let rc = unsafe { libc::prlimit(pid as libc::pid_t, libc::RLIMIT_FSIZE, &new, std::ptr::null_mut()) };
    assert_eq!(rc, 0, "prlimit: {}", std::io::Error::last_os_error());
}

#[cfg(target_os = "linux")]
#[test]
fn a_failing_disk_answers_32005_and_the_server_recovers() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("threads.db");
    let mut cmd = serve(Some(&sqlite(&path)));
    // Writing past the file size limit must fail with EFBIG instead of killing the process.
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    let mut server = Server::start_command(Wire::Ndjson, &mut cmd);
    server.ok("thread/open", json!({"threadId": "disk"}));
    server.ok("thread/append", json!({"threadId": "disk", "events": [numbered_event(0, 0)]}));
    let before = server.ok("thread/render", json!({"threadId": "disk", "format": "xml"}));

    // No file may grow or be written past its first byte now.
    set_file_size_limit(server.pid(), Some(1));
    let big: Vec<Value> = (0..50).map(|i| numbered_event(1, i)).collect();
    for _ in 0..3 {
        let error = server.err("thread/append", json!({"threadId": "disk", "events": big}));
        assert_eq!(error["code"], -32005, "{error}");
        let message = error["message"].as_str().unwrap();
        assert!(message.starts_with(&format!("store failed: sqlite database {}: ", path.display())), "{message}");
        eprintln!("{message}");
    }
    // Other requests are still answered meanwhile.
    assert_eq!(server.ok("thread/render", json!({"threadId": "disk", "format": "xml"})), before);
    assert_eq!(server.ok("thread/events", json!({"threadId": "disk"}))["eventCount"], 1);
    assert_eq!(server.ok("xml/escape", json!({"text": "<"})), json!({"text": "&lt;"}));

    // The disk has room again: appends go through, and nothing of the failed ones shows.
    set_file_size_limit(server.pid(), None);
    let ok = server.ok("thread/append", json!({"threadId": "disk", "events": [numbered_event(2, 0)]}));
    assert_eq!(ok, json!({"threadId": "disk", "version": 2, "eventCount": 2}));
    assert!(server.stop().success());

    let mut restarted = Server::start(Wire::Ndjson, &sqlite(&path));
    let stored = restarted.ok("thread/events", json!({"threadId": "disk"}));
    assert_eq!(stored["events"], json!([numbered_event(0, 0), numbered_event(2, 0)]));
    assert!(restarted.stop().success());
}

#[test]
fn a_database_file_that_goes_away_answers_32005_until_it_is_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("threads.db");
    let away = dir.path().join("threads.db.away");
    let mut server = Server::start(Wire::Ndjson, &sqlite(&path));
    server.ok("thread/open", json!({"threadId": "moved"}));
    server.ok("thread/append", json!({"threadId": "moved", "events": [numbered_event(0, 0)]}));

    std::fs::rename(&path, &away).unwrap();
    for _ in 0..2 {
        let error = server.err("thread/append", json!({"threadId": "moved", "events": [numbered_event(1, 0)]}));
        assert_eq!(error["code"], -32005, "{error}");
        assert_eq!(
            error["message"],
            format!(
                "store failed: sqlite database {} is missing (moved or deleted while the server runs); put it back",
                path.display()
            )
        );
    }
    // Requests that need no database are still answered.
    assert_eq!(server.ok("xml/escape", json!({"text": "&"})), json!({"text": "&amp;"}));
    assert!(!path.exists(), "a vanished database must not be replaced by an empty one");

    std::fs::rename(&away, &path).unwrap();
    let ok = server.ok("thread/append", json!({"threadId": "moved", "events": [numbered_event(2, 0)]}));
    assert_eq!(ok, json!({"threadId": "moved", "version": 2, "eventCount": 2}));
    assert!(server.stop().success());

    let mut restarted = Server::start(Wire::Ndjson, &sqlite(&path));
    let stored = restarted.ok("thread/events", json!({"threadId": "moved"}));
    assert_eq!(stored["events"], json!([numbered_event(0, 0), numbered_event(2, 0)]));
    assert!(restarted.stop().success());
}

#[test]
fn two_processes_share_one_file() {
    const PER_SERVER: u64 = 60;
    let dir = tempfile::tempdir().unwrap();
    let store = sqlite(&dir.path().join("threads.db"));
    let mut a = Server::start(Wire::Ndjson, &store);
    let mut b = Server::start(Wire::Ndjson, &store);
    a.ok("thread/open", json!({"threadId": "both"}));
    assert_eq!(b.ok("thread/events", json!({"threadId": "both"}))["eventCount"], 0);
    a.ok("thread/append", json!({"threadId": "both", "events": [numbered_event(0, 0)]}));
    // B holds the thread in memory and still sees A's append.
    assert_eq!(b.ok("thread/events", json!({"threadId": "both"}))["events"], json!([numbered_event(0, 0)]));
    let conflict = b.err("thread/append", json!({"threadId": "both", "events": [], "expectedVersion": 0}));
    assert_eq!(conflict["data"], json!({"threadId": "both", "currentVersion": 1}));

    // Both append at once, without expectedVersion: every append lands once, whole.
    let stream = |tag: u64| -> Vec<(String, Value)> {
        (0..PER_SERVER)
            .map(|n| ("thread/append".to_owned(), json!({"threadId": "both", "events": [numbered_event(tag * 1000 + n, 0), numbered_event(tag * 1000 + n, 1)]})))
            .collect()
    };
    let (wa, wb) = (a.send_in_background(stream(1)), b.send_in_background(stream(2)));
    let mut versions = std::collections::BTreeSet::new();
    for server in [&mut a, &mut b] {
        for _ in 0..PER_SERVER {
            let answer = server.recv().unwrap();
            assert!(versions.insert(answer["result"]["version"].as_u64().unwrap_or_else(|| panic!("{answer}"))));
        }
    }
    a.join_background(wa);
    b.join_background(wb);
    assert_eq!(versions, (2..=2 * PER_SERVER + 1).collect());
    let events_a = a.ok("thread/events", json!({"threadId": "both"}));
    assert_eq!(events_a, b.ok("thread/events", json!({"threadId": "both"})));
    let events = events_a["events"].as_array().unwrap();
    assert_eq!(events.len() as u64, 1 + 4 * PER_SERVER);
    for pair in events[1..].chunks(2) {
        assert_eq!(pair[0]["iteration"], pair[1]["iteration"], "an append was split");
    }
    assert_eq!(
        a.ok("thread/render", json!({"threadId": "both", "format": "xml"})),
        b.ok("thread/render", json!({"threadId": "both", "format": "xml"}))
    );
    assert!(a.stop().success());
    assert!(b.stop().success());
}

#[test]
fn threads_evicted_from_memory_reload_from_the_file_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = serve(Some(&sqlite(&dir.path().join("threads.db"))));
    cmd.args(["--max-threads-in-memory", "2"]);
    let mut server = Server::start_command(Wire::Ndjson, &mut cmd);
    let events = sample_events();
    let threads: Vec<String> = (0..6).map(|i| format!("lru-{i}")).collect();
    let mut first_seen = Vec::new();
    for (i, thread) in threads.iter().enumerate() {
        server.ok("thread/open", json!({"threadId": thread, "metadata": {"n": i}}));
        server.ok("thread/append", json!({"threadId": thread, "events": events}));
        first_seen.push(snapshot(&mut server, thread));
    }
    // Only two fit in memory; every other one was evicted and must come back whole, and
    // appends to an evicted thread continue its version count.
    for (i, thread) in threads.iter().enumerate() {
        assert_eq!(snapshot(&mut server, thread), first_seen[i], "{thread} after eviction");
        let appended =
            server.ok("thread/append", json!({"threadId": thread, "events": events[..1], "expectedVersion": 1}));
        assert_eq!(appended["version"], 2, "{thread}: {appended}");
    }
    assert_eq!(server.ok("thread/list", json!({}))["threads"].as_array().unwrap().len(), threads.len());
}

#[test]
fn a_database_of_schema_2_gains_the_blob_tables_and_keeps_its_threads() {
    use crate::support::conformance::{image, log, numbered};
    use threadkeeper::store::{AppendBlobs, OpenThread, SqliteStore, Store};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("threads.db");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let open = OpenThread { thread_id: "t".into(), now: 1, ..Default::default() };
    {
        let store = SqliteStore::open(&path).unwrap();
        runtime.block_on(store.open(open.clone())).unwrap();
        runtime.block_on(store.append("t", None, &log(&[numbered(0, 0)]), 2)).unwrap();
    }
    {
        // The file as a threadkeeper of schema 2 left it (no blob tables, no search index).
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "DROP TABLE blob_names; DROP TABLE blobs; DROP TABLE search_index;
             DROP INDEX threads_pending_index; ALTER TABLE threads DROP COLUMN indexed_count;
             PRAGMA user_version = 2;",
        )
        .unwrap();
    }
    let store = SqliteStore::open(&path).unwrap();
    let version: i64 =
        rusqlite::Connection::open(&path).unwrap().query_row("PRAGMA user_version", [], |r| r.get(0)).unwrap();
    assert_eq!(version, 5);
    let (record, events) = runtime.block_on(store.events_from("t", 0)).unwrap();
    assert_eq!((record.version, events.len()), (1, 1));
    let blob = image(1, 1_000);
    let blobs = AppendBlobs { new: vec![blob.clone()], named: vec![blob.info.id.clone()] };
    runtime.block_on(store.append_with_blobs("t", Some(1), &log(&[numbered(1, 0)]), &blobs, 3)).unwrap();
    assert_eq!(runtime.block_on(store.blob(&blob.info.id)).unwrap(), Some(blob));
}

#[test]
fn blobs_survive_a_restart_and_go_with_the_last_thread() {
    let dir = tempfile::tempdir().unwrap();
    crate::support::media::blobs_survive_a_restart_and_go_with_the_last_thread(&sqlite(&dir.path().join("t.db")), "t");
}

/// Events whose words the search index does not hold yet (see `pending_index`).
fn pending_events(path: &Path) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row("SELECT coalesce(sum(event_count - indexed_count), 0) FROM threads", [], |r| r.get(0)).unwrap()
}

/// Waits (up to 10 s) for the server to have indexed everything while idle.
fn wait_until_indexed(path: &Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while pending_events(path) > 0 {
        assert!(std::time::Instant::now() < deadline, "still {} events pending after 10 s idle", pending_events(path));
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn the_search_index_catches_up_while_the_server_is_idle() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("threads.db");
    let mut server = Server::start(Wire::Ndjson, &sqlite(&path));
    server.ok("thread/open", json!({"threadId": "idle"}));
    for n in 0..20 {
        server.ok("thread/append", json!({"threadId": "idle", "events": [quokka(n), quokka(n)]}));
    }
    server.ok("thread/fork", json!({"threadId": "idle", "newThreadId": "idle-fork"}));
    wait_until_indexed(&path);
    let found = hits(&mut server, "quokka");
    assert_eq!(found.len(), 80, "the thread's 40 events and the fork's 40");
    server.ok("thread/pop", json!({"threadId": "idle", "count": 10}));
    assert_eq!(hits(&mut server, "quokka").len(), 70, "popped events are no longer found");
    assert!(server.stop().success());
}

#[test]
fn events_left_pending_by_a_stopped_process_are_found_by_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("threads.db");
    let mut first = Server::start(Wire::Ndjson, &sqlite(&path));
    first.ok("thread/open", json!({"threadId": "left"}));
    first.ok("thread/append", json!({"threadId": "left", "events": [quokka(1), quokka(2)]}));
    assert!(first.stop().success());
    // As a process killed before its pause would leave the file: nothing of it indexed.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("DELETE FROM search_index; UPDATE threads SET indexed_count = 0;").unwrap();
    drop(conn);
    assert_eq!(pending_events(&path), 2);
    let mut next = Server::start(Wire::Ndjson, &sqlite(&path));
    assert_eq!(hits(&mut next, "quokka"), [("left".to_owned(), 0), ("left".to_owned(), 1)]);
    assert_eq!(pending_events(&path), 0, "the search indexed what it found pending");
    assert!(next.stop().success());
}
