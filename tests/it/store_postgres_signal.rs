//! The PostgreSQL store's group commit and change signal against a real server: appends
//! waiting together share one statement and keep their own answers; appends notify only while
//! a watcher's lease is live.
//!
//! Each test has a scratch database of its own, so watchers of other tests do not count.
//! Needs `THREADKEEPER_TEST_PG` (see `store_postgres`).

use crate::support::conformance::log_of;
use crate::support::events::numbered_event;
use crate::support::postgres::{admin, database_url, runtime, ScratchDatabase};
use futures_util::StreamExt;
use std::time::{Duration, Instant};
use threadkeeper::event_log::EventLog;
use threadkeeper::store::{OpenThread, PostgresOptions, PostgresStore, Store, StoreError};
use tokio::sync::mpsc;
use tokio_postgres::AsyncMessage;

/// A failing test gives up waiting after this long (only the 2 s bound is asserted).
const GIVE_UP: Duration = Duration::from_secs(30);
/// Longer than the store's notification interval, so a coalesced notification would be out.
const PAST_THE_INTERVAL: Duration = Duration::from_millis(1200);

/// A plain connection `LISTEN`ing on the store's channel: the payloads it receives.
async fn listen(url: &str) -> (tokio_postgres::Client, mpsc::UnboundedReceiver<String>) {
    let (client, mut connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.unwrap();
    let (sender, payloads) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(Ok(message)) = messages.next().await {
            if let AsyncMessage::Notification(n) = message {
                let _ = sender.send(n.payload().to_owned());
            }
        }
    });
    client.batch_execute("LISTEN threadkeeper_changes").await.unwrap();
    (client, payloads)
}

/// Whether any notification came before a marker sent now: notifications arrive in commit
/// order, so everything committed before the marker comes first.
async fn notified_before_marker(url: &str, payloads: &mut mpsc::UnboundedReceiver<String>) -> Vec<String> {
    admin(url, "NOTIFY threadkeeper_changes, 'marker'").await;
    let mut before = Vec::new();
    loop {
        let payload = tokio::time::timeout(GIVE_UP, payloads.recv()).await.expect("the marker arrives").unwrap();
        if payload == "marker" {
            return before;
        }
        before.push(payload);
    }
}

#[test]
fn appends_and_pops_notify_only_while_a_watcher_holds_a_live_lease() {
    let Some(url) = database_url("appends_and_pops_notify_only_while_a_watcher_holds_a_live_lease") else { return };
    let rt = runtime();
    let scratch = rt.block_on(ScratchDatabase::create(&url));
    rt.block_on(async {
        let here = PostgresStore::connect(&scratch.url).await.unwrap();
        let (_listener, mut payloads) = listen(&scratch.url).await;
        here.open(OpenThread { thread_id: "t".into(), now: 1, ..Default::default() }).await.unwrap();

        // Nobody watches: appends and pops send nothing, not even coalesced later.
        for n in 0..20 {
            here.append("t", None, &log_of(&[numbered_event(n, 0)]), 2).await.unwrap();
        }
        here.pop("t", None, 1, 3).await.unwrap();
        tokio::time::sleep(PAST_THE_INTERVAL).await;
        assert_eq!(notified_before_marker(&scratch.url, &mut payloads).await, Vec::<String>::new());

        // A watcher left behind by a process that died without a word: its lease has run out.
        admin(
            &scratch.url,
            "INSERT INTO threadkeeper_watchers (watcher_id, lease_until) VALUES ('dead', now() - interval '1 second')",
        )
        .await;
        here.append("t", None, &log_of(&[numbered_event(30, 0)]), 4).await.unwrap();
        tokio::time::sleep(PAST_THE_INTERVAL).await;
        assert_eq!(notified_before_marker(&scratch.url, &mut payloads).await, Vec::<String>::new());

        // Another server watches: an append here reaches the channel within 2 s.
        let there = PostgresStore::connect(&scratch.url).await.unwrap();
        let mut signal = there.watch_changes().await.unwrap();
        tokio::time::timeout(GIVE_UP, signal.changed()).await.unwrap().unwrap(); // registered
        let appended = Instant::now();
        here.append("t", None, &log_of(&[numbered_event(31, 0)]), 5).await.unwrap();
        let payload = tokio::time::timeout(GIVE_UP, payloads.recv()).await.unwrap().unwrap();
        assert_eq!(payload, "");
        assert!(appended.elapsed() < Duration::from_secs(2), "notified after {:?}", appended.elapsed());
        // Appends in a burst are coalesced: a few notifications a second, not one per append.
        let burst = Instant::now();
        for n in 0..40 {
            here.append("t", None, &log_of(&[numbered_event(40 + n, 0)]), 6).await.unwrap();
        }
        let burst_took = burst.elapsed();
        tokio::time::sleep(PAST_THE_INTERVAL).await;
        let sent = notified_before_marker(&scratch.url, &mut payloads).await.len();
        let most = 2 + 2 * (burst_took + PAST_THE_INTERVAL).as_millis() as usize / 250;
        assert!((1..=most).contains(&sent), "{sent} notifications for 40 appends in {burst_took:?}");

        // The watcher stops: it leaves at once, and appends go quiet again.
        drop(signal);
        let left = Instant::now();
        while watchers(&scratch.url).await > 0 {
            assert!(left.elapsed() < GIVE_UP, "the watcher's lease stayed");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        tokio::time::sleep(PAST_THE_INTERVAL).await;
        let _ = notified_before_marker(&scratch.url, &mut payloads).await;
        here.append("t", None, &log_of(&[numbered_event(90, 0)]), 7).await.unwrap();
        tokio::time::sleep(PAST_THE_INTERVAL).await;
        assert_eq!(notified_before_marker(&scratch.url, &mut payloads).await, Vec::<String>::new());
    });
    drop(rt);
}

/// Live leases, the dead one inserted by hand aside.
async fn watchers(url: &str) -> i64 {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.unwrap();
    tokio::spawn(connection);
    client.query_one("SELECT count(*) FROM threadkeeper_watchers WHERE lease_until > now()", &[]).await.unwrap().get(0)
}

#[test]
fn appends_waiting_together_share_one_statement_and_keep_their_own_answers() {
    let Some(url) = database_url("appends_waiting_together_share_one_statement_and_keep_their_own_answers") else {
        return;
    };
    // One thread: every append below is queued before the committer runs, so the batches are
    // exactly as described.
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let scratch = rt.block_on(ScratchDatabase::create(&url));
    rt.block_on(async {
        let store = PostgresStore::connect(&scratch.url).await.unwrap();
        for i in 0..30 {
            store.open(OpenThread { thread_id: format!("t{i}"), now: 1, ..Default::default() }).await.unwrap();
        }
        store.append("t1", None, &log_of(&[numbered_event(0, 0)]), 2).await.unwrap();

        let before = store.statements_sent();
        let mut appends = Vec::new();
        for i in 0..30 {
            // t1 is at version 1: expecting 0 there is a conflict.
            let expected = if i == 1 { Some(0) } else { None };
            let events = log_of(&[numbered_event(i, 0), numbered_event(i, 1)]);
            appends.push((format!("t{i}"), expected, events));
        }
        appends.push(("missing".to_owned(), None, log_of(&[numbered_event(99, 0)])));
        // A second append to t0 waits for the next statement, after the first.
        appends.push(("t0".to_owned(), Some(1), log_of(&[numbered_event(100, 0)])));
        let results = futures_util::future::join_all(
            appends.iter().map(|(id, expected, events)| store.append(id, *expected, events, 3)),
        )
        .await;
        assert_eq!(store.statements_sent() - before, 2, "31 appends in one round trip, t0's second in another");

        for (i, result) in results.iter().enumerate().take(30) {
            match i {
                1 => assert_eq!(
                    result.as_ref().unwrap_err(),
                    &StoreError::VersionConflict { thread_id: "t1".into(), current_version: 1 }
                ),
                _ => {
                    let appended = result.as_ref().unwrap();
                    assert_eq!((appended.version, appended.event_count), (1, 2), "t{i}");
                }
            }
        }
        assert_eq!(results[30].as_ref().unwrap_err(), &StoreError::NotFound { thread_id: "missing".into() });
        let t0 = results[31].as_ref().unwrap();
        assert_eq!((t0.version, t0.event_count), (2, 3));

        // What was stored: each thread its own events, whole; the conflict left nothing.
        let (record, events) = store.events_from("t0", 0).await.unwrap();
        assert_eq!((record.version, record.event_count), (2, 3));
        assert_eq!(events, log_of(&[numbered_event(0, 0), numbered_event(0, 1), numbered_event(100, 0)]));
        let (record, events) = store.events_from("t1", 0).await.unwrap();
        assert_eq!((record.version, events), (1, log_of(&[numbered_event(0, 0)])));
        for i in 2..30 {
            let (record, events) = store.events_from(&format!("t{i}"), 0).await.unwrap();
            assert_eq!((record.version, record.updated_at), (1, 3));
            assert_eq!(events, log_of(&[numbered_event(i, 0), numbered_event(i, 1)]));
        }
        assert!(store.record("missing").await.unwrap().is_none());
    });
    drop(rt);
}

#[test]
fn an_append_the_database_refuses_fails_alone_and_the_others_of_its_statement_commit() {
    let Some(url) = database_url("an_append_the_database_refuses_fails_alone_and_the_others_of_its_statement_commit")
    else {
        return;
    };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let scratch = rt.block_on(ScratchDatabase::create(&url));
    rt.block_on(async {
        let store = PostgresStore::connect(&scratch.url).await.unwrap();
        // The database refuses one event (as it may refuse anything: a full disk, a constraint).
        admin(
            &scratch.url,
            "CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN IF NEW.body LIKE '%poison%' THEN RAISE EXCEPTION 'poisoned event'; END IF; RETURN NEW; END $$;
             CREATE TRIGGER refuse_poison BEFORE INSERT ON threadkeeper_events
             FOR EACH ROW EXECUTE FUNCTION refuse_poison()",
        )
        .await;
        for i in 0..5 {
            store.open(OpenThread { thread_id: format!("t{i}"), now: 1, ..Default::default() }).await.unwrap();
        }
        let logs: Vec<EventLog> = (0..5u64)
            .map(|i| {
                let content = if i == 2 { "poison".to_owned() } else { format!("fine {i}") };
                log_of(&[serde_json::json!({"type": "message", "role": "user", "content": content, "iteration": i})])
            })
            .collect();
        let before = store.statements_sent();
        let results = futures_util::future::join_all(
            logs.iter().enumerate().map(|(i, events)| store.append(&format!("t{i}"), None, events, 2)),
        )
        .await;
        // One transaction for all five, refused whole; then each alone.
        assert_eq!(store.statements_sent() - before, 6);
        for (i, result) in results.iter().enumerate() {
            if i == 2 {
                let error = result.as_ref().unwrap_err().to_string();
                assert!(error.contains("poisoned event"), "{error}");
            } else {
                assert_eq!(result.as_ref().map(|a| a.version), Ok(1), "t{i}");
                assert_eq!(store.events_from(&format!("t{i}"), 0).await.unwrap().1, logs[i]);
            }
        }
        let (record, events) = store.events_from("t2", 0).await.unwrap();
        assert_eq!((record.version, events.len()), (0, 0));
    });
    drop(rt);
}

/// Loops each appending to a thread of its own, one append in flight, loop `w` calling again
/// `w * gap` after each answer (a host's loops do not all turn around equally fast).
async fn loops(store: &PostgresStore, prefix: &str, writers: usize, appends: u64, gap: Duration) {
    let runs = (0..writers).map(|w| async move {
        let thread_id = format!("{prefix}{w}");
        store.open(OpenThread { thread_id: thread_id.clone(), now: 1, ..Default::default() }).await.unwrap();
        for n in 0..appends {
            let appended = store.append(&thread_id, None, &log_of(&[numbered_event(n, 0)]), 2).await.unwrap();
            assert_eq!((appended.version, appended.event_count), (n + 1, n + 1), "{thread_id}");
            tokio::time::sleep(gap * w as u32).await;
        }
    });
    futures_util::future::join_all(runs).await;
}

#[test]
fn loops_that_call_again_soon_are_held_to_commit_together() {
    let Some(url) = database_url("loops_that_call_again_soon_are_held_to_commit_together") else {
        return;
    };
    const WRITERS: usize = 4;
    const APPENDS: u64 = 40;
    const GAP: Duration = Duration::from_millis(3);
    let rt = runtime();
    let scratch = rt.block_on(ScratchDatabase::create(&url));
    rt.block_on(async {
        let round_trips = |hold| {
            let url = scratch.url.clone();
            async move {
                let options = PostgresOptions { commit_hold: hold, ..PostgresOptions::default() };
                let store = PostgresStore::connect_with(&url, options).await.unwrap();
                let prefix = format!("hold{}ms-", hold.as_millis());
                let before = store.statements_sent();
                loops(&store, &prefix, WRITERS, APPENDS, GAP).await;
                // The opens are one round trip each.
                store.statements_sent() - before - WRITERS as u64
            }
        };
        // Sent as they come, the loops' appends (3 ms apart) mostly go out one by one.
        let alone = round_trips(Duration::ZERO).await;
        assert!(alone > APPENDS * 5 / 2, "no hold: {alone} round trips for 160 appends");
        // Held (for at most 50 ms), they go out together once each loop's pace is known (from
        // its second append on): one round trip a round on a quiet machine, a few more on a
        // loaded one, where a loop is now and then later than its pace allows for.
        let held = round_trips(Duration::from_millis(50)).await;
        assert!(held <= APPENDS * 2, "hold: {held} round trips for 160 appends");
        // A loop slower than the hold is not waited for: as many round trips as without one.
        let slow = round_trips(Duration::from_millis(1)).await;
        assert!(slow > APPENDS * 5 / 2, "a hold shorter than the loops' pace: {slow} round trips for 160 appends");
        // A lone loop is never held, however long the hold: 40 appends in far less than one hold.
        let options = PostgresOptions { commit_hold: Duration::from_secs(30), ..PostgresOptions::default() };
        let store = PostgresStore::connect_with(&scratch.url, options).await.unwrap();
        let started = Instant::now();
        loops(&store, "lone", 1, APPENDS, Duration::ZERO).await;
        assert!(started.elapsed() < Duration::from_secs(30), "a lone loop waited for nobody");
    });
    drop(rt);
}
