//! Search as every store must answer it: exactly the events the query language
//! (src/core/search/query.rs) matches, checked against a brute-force reading of the same
//! definition, through appends, pops, forks, compaction (summary appends) and deletes.
//! Ranking may differ between stores (bm25, ts_rank_cd, the memory store's BM25); the hits
//! may not, so hits are compared as sets of (thread, event) pairs.

use super::{append, fork_request, open, stored, Backing, StoredEvent, T0};
use crate::support::search::request;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use threadkeeper::search::{parse_query, searchable_text, words};
use threadkeeper::store::{ForkPoint, SearchRequest, Store};
use threadkeeper::AgentEvent;

type Hits = BTreeSet<(String, u64)>;

fn at(ts: u64, mut v: Value) -> StoredEvent {
    v["iteration"] = json!(1);
    v["timestamp"] = json!(ts);
    stored(v)
}

fn corpus() -> Vec<(&'static str, Vec<StoredEvent>)> {
    vec![
        (
            "search-a",
            vec![
                at(
                    1_000,
                    json!({"type": "message", "role": "user", "content": "Deploy the main branch to staging, please"}),
                ),
                at(
                    2_000,
                    json!({"type": "tool_call", "toolName": "run_shell", "toolCallId": "c1",
                                 "args": {"command": "git push origin main --force"}}),
                ),
                at(
                    3_000,
                    json!({"type": "tool_result", "toolCallId": "c1", "result": "error: failed to push some refs"}),
                ),
                at(
                    4_000,
                    json!({"type": "error", "error": "Deployment FAILED: configuration missing", "recoverable": true}),
                ),
                at(
                    5_000,
                    json!({"type": "message", "role": "assistant", "content": [
                    {"type": "text", "text": "The configuration file Größe.yaml is missing; 東京 region"}]}),
                ),
            ],
        ),
        (
            "search-b",
            vec![
                at(
                    1_500,
                    json!({"type": "human_input_requested", "question": "Deploy to production?", "choices": ["yes", "no"]}),
                ),
                at(2_500, json!({"type": "human_input_received", "response": "yes, deploy main"})),
                at(3_500, json!({"type": "completion", "result": "Deployed main to production", "verified": true})),
                stored(json!({"type": "custom_note", "iteration": 2, "note": "configure the naïve cache"})),
            ],
        ),
        (
            "search-c",
            vec![
                at(1_200, json!({"type": "message", "role": "user", "content": "main: branch main"})),
                at(
                    2_200,
                    json!({"type": "summary", "summarizedIterations": [1], "summary": "The agent configured staging"}),
                ),
            ],
        ),
    ]
}

const QUERIES: &[&str] = &[
    "deploy",
    "DEPLOY main",
    "\"main branch\"",
    "\"branch main\"",
    "config*",
    "deploy* -production",
    "main -\"main branch\"",
    "größe",
    "東京",
    "naïve",
    "git push",
    "yes",
    "staging",
    "\"to production\"",
    "failed",
    "nothing-matches-this",
    "conf* stag*",
    "\"push orig\"*",
];

async fn search(store: &dyn Store, request: SearchRequest) -> Hits {
    let page = store.search(request).await.unwrap_or_else(|e| panic!("search: {e}"));
    page.hits.into_iter().map(|h| (h.thread_id, h.event_index)).collect()
}

/// What the definition says: every event of every thread, matched one by one.
async fn expected(store: &dyn Store, threads: &[&str], request: &SearchRequest) -> Hits {
    let mut hits = Hits::new();
    for &thread in threads {
        let (_, events) = store.events_from(thread, 0).await.unwrap();
        for (i, body) in events.iter().enumerate() {
            let event = AgentEvent::from_value(serde_json::from_str(body).unwrap(), "e").unwrap();
            let ts = event.timestamp().and_then(|n| n.as_f64());
            let in_thread = request.thread_ids.as_ref().is_none_or(|ids| ids.iter().any(|id| id == thread));
            if in_thread
                && request.admits(event.event_type(), ts)
                && request.query.matches(&words(&searchable_text(&event)))
            {
                hits.insert((thread.to_owned(), i as u64));
            }
        }
    }
    hits
}

async fn load(store: &dyn Store) -> Vec<&'static str> {
    let mut ids = Vec::new();
    for (thread, events) in corpus() {
        open(store, thread, T0).await;
        append(store, thread, None, &events).await;
        ids.push(thread);
    }
    ids
}

async fn check_all(store: &dyn Store, threads: &[&str], when: &str) {
    for query in QUERIES {
        let r = request(query);
        let want = expected(store, threads, &r).await;
        assert_eq!(search(store, r).await, want, "{when}: {query}");
    }
}

pub async fn search_finds_exactly_what_the_query_language_defines(b: Backing) {
    let store = &*b.store;
    let threads = load(store).await;
    check_all(store, &threads, "after appends").await;
    // Spot checks that the definition itself says what the docs say.
    let hit = |t: &str, i: u64| (t.to_owned(), i);
    assert_eq!(search(store, request("\"main branch\"")).await, Hits::from([hit("search-a", 0), hit("search-c", 0)]));
    assert_eq!(search(store, request("東京")).await, Hits::from([hit("search-a", 4)]));
    assert_eq!(search(store, request("naïve")).await, Hits::from([hit("search-b", 3)]));
}

pub async fn search_filters_by_thread_type_and_time(b: Backing) {
    let store = &*b.store;
    let threads = load(store).await;
    let variants: Vec<SearchRequest> = vec![
        SearchRequest { thread_ids: Some(vec!["search-b".into(), "nope".into()]), ..request("deploy*") },
        SearchRequest { types: Some(vec!["message".into(), "error".into()]), ..request("config* main deploy*") },
        SearchRequest { types: Some(vec!["message".into()]), ..request("main") },
        SearchRequest { since: Some(2_000.0), until: Some(3_500.0), ..request("main") },
        SearchRequest { since: Some(1_000.0), ..request("configure") },
        SearchRequest { until: Some(1_000.0), ..request("deploy") },
    ];
    for r in variants {
        let want = expected(store, &threads, &r).await;
        assert_eq!(search(store, r.clone()).await, want, "{r:?}");
    }
    // An event without a timestamp is left out once time is asked about.
    let r = SearchRequest { since: Some(0.0), ..request("naïve") };
    assert!(search(store, r).await.is_empty());
}

pub async fn search_follows_pops_forks_compaction_and_deletes(b: Backing) {
    let store = &*b.store;
    let mut threads = load(store).await;
    store.pop("search-a", None, 2, T0).await.unwrap();
    check_all(store, &threads, "after a pop").await;
    store.fork(fork_request("search-a", ForkPoint::Events(2), "search-a-fork")).await.unwrap();
    threads.push("search-a-fork");
    check_all(store, &threads, "after a fork").await;
    let fork_hits = search(store, request("\"git push\"")).await;
    assert!(fork_hits.contains(&("search-a-fork".to_owned(), 1)), "a fork's events are found under the fork");
    // A compaction round is an append of a summary event.
    let summary =
        at(9_000, json!({"type": "summary", "summarizedIterations": [1], "summary": "pushed main, deployment failed"}));
    append(store, "search-a-fork", None, &[summary]).await;
    check_all(store, &threads, "after a compaction round").await;
    store.pop("search-a-fork", None, 3, T0).await.unwrap();
    check_all(store, &threads, "after popping the fork").await;
    assert!(store.delete("search-b").await.unwrap());
    threads.retain(|t| *t != "search-b");
    check_all(store, &threads, "after a delete").await;
    // The same id made again starts with no hits of the old thread.
    open(store, "search-b", T0).await;
    assert!(search(store, request("production")).await.is_empty());
    if let Some(another) = b.another().await {
        check_all(&*another, &threads, "in a fresh instance").await;
    }
}

pub async fn search_pages_cover_every_hit_once_best_first(b: Backing) {
    let store = &*b.store;
    open(store, "paged", T0).await;
    let events: Vec<StoredEvent> = (0..7)
        .map(|i| {
            let text = format!("needle {}", "needle ".repeat(i));
            at(1_000 + i as u64, json!({"type": "message", "role": "user", "content": text}))
        })
        .collect();
    append(store, "paged", None, &events).await;
    let mut seen = Vec::new();
    let mut scores = Vec::new();
    let mut offset = 0;
    loop {
        let page = store.search(SearchRequest { limit: 3, offset, ..request("needle") }).await.unwrap();
        assert!(page.hits.len() <= 3);
        offset += page.hits.len();
        for hit in &page.hits {
            seen.push(hit.event_index);
            scores.push(hit.score);
        }
        if !page.more {
            break;
        }
    }
    seen.sort_unstable();
    assert_eq!(seen, (0..7).collect::<Vec<_>>(), "every hit once");
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "best first: {scores:?}");
}

/// Every hit of `request`, page by page (100 a page), in the order the store ranks them.
async fn all_pages(store: &dyn Store, request: SearchRequest) -> Vec<(String, u64, f64)> {
    let mut hits = Vec::new();
    loop {
        let page = store.search(SearchRequest { limit: 100, offset: hits.len(), ..request.clone() }).await.unwrap();
        hits.extend(page.hits.into_iter().map(|h| (h.thread_id, h.event_index, h.score)));
        if !page.more {
            return hits;
        }
    }
}

/// Matches are ranked in windows of the newest RANK_WINDOW (newest thread first, its last
/// event first), with type filters applied before the windowing: each window holds the same
/// events in every store, best first within it.
pub async fn search_ranks_windows_of_the_newest_matches(b: Backing) {
    use threadkeeper::store::search::RANK_WINDOW;
    let store = &*b.store;
    // 2,600 matches: two full windows and part of a third; every other event a message.
    let sizes = [("w-old", 1_000u64), ("w-mid", 1_000), ("w-new", 600)];
    for (thread, size) in sizes {
        open(store, thread, T0).await;
        let events: Vec<StoredEvent> = (0..size)
            .map(|i| {
                let text = format!(
                    "{}filler words {}",
                    "needle ".repeat(1 + (i % 5) as usize),
                    "pad ".repeat((i % 7) as usize)
                );
                if i % 2 == 0 {
                    at(1_000 + i, json!({"type": "message", "role": "user", "content": text}))
                } else {
                    at(1_000 + i, json!({"type": "error", "error": text, "recoverable": true}))
                }
            })
            .collect();
        append(store, thread, None, &events).await;
    }
    let newest_first = |types: Option<&str>| -> Vec<(String, u64)> {
        let mut all = Vec::new();
        for (thread, size) in sizes.iter().rev() {
            for i in (0..*size).rev() {
                if types.is_none() || i % 2 == 0 {
                    all.push((thread.to_string(), i));
                }
            }
        }
        all
    };
    for types in [None, Some("message")] {
        let r = SearchRequest { types: types.map(|t| vec![t.to_owned()]), ..request("needle") };
        let hits = all_pages(store, r).await;
        let matches = newest_first(types);
        assert_eq!(hits.len(), matches.len(), "{types:?}: every match once");
        for (w, (window, expected)) in hits.chunks(RANK_WINDOW).zip(matches.chunks(RANK_WINDOW)).enumerate() {
            let got: Hits = window.iter().map(|(t, i, _)| (t.clone(), *i)).collect();
            let want: Hits = expected.iter().cloned().collect();
            assert_eq!(got, want, "{types:?}: window {w} holds the newest matches after the ones before");
            assert!(window.windows(2).all(|p| p[0].2 >= p[1].2), "{types:?}: window {w} is best first");
        }
    }
}

/// A search answers for events appended through another instance of the store (another
/// process on the same database) just before, as for its own.
pub async fn another_instance_finds_what_was_just_appended(b: Backing) {
    let Some(another) = b.another().await else { return };
    let store = &*b.store;
    open(store, "fresh", T0).await;
    append(store, "fresh", None, &[at(1_000, json!({"type": "message", "role": "user", "content": "quokka sighted"}))])
        .await;
    let hits = search(&*another, request("quokka")).await;
    assert_eq!(hits, Hits::from([("fresh".to_owned(), 0)]));
    store.pop("fresh", None, 1, T0).await.unwrap();
    assert!(search(&*another, request("quokka")).await.is_empty(), "a popped event is no longer found");
}

pub async fn hostile_queries_never_fail_or_change_the_store(b: Backing) {
    let store = &*b.store;
    load(store).await;
    let hostile = [
        "NEAR(deploy main)",
        "deploy:main",
        "^deploy",
        "deploy AND OR NOT",
        "\"\"\"deploy\"",
        "col:*",
        "{a b}: c",
        "'; DROP TABLE events; --",
        "deploy\0main",
        "a & b | !c <-> d",
        "x:* & y",
        "\\' \\\\ '",
        "(((((",
        "main*",
        "ŉ İ ß ﬃ",
    ];
    for query in hostile {
        if let Ok(parsed) = parse_query(query) {
            store
                .search(SearchRequest { query: parsed, ..request("x") })
                .await
                .unwrap_or_else(|e| panic!("{query:?} fails the store: {e}"));
        }
    }
    let (_, events) = store.events_from("search-a", 0).await.unwrap();
    assert_eq!(events.len(), 5, "searching changes nothing");
}

/// Every thread's record and events, to tell that nothing changed.
async fn snapshot(store: &dyn Store) -> Vec<(String, u64, Vec<String>)> {
    let mut threads = Vec::new();
    for record in store.list().await.unwrap() {
        let (record, events) = store.events_from(&record.thread_id, 0).await.unwrap();
        threads.push((record.thread_id, record.version, events.iter().map(str::to_owned).collect()));
    }
    threads.sort();
    threads
}

/// Hostile query text as `thread/search` receives it (the parse and the store together):
/// each gets hits or a clear refusal naming `query`, never a store failure (-32603 on the
/// wire), and nothing in the store changes.
pub async fn hostile_query_text_gets_hits_or_a_clear_error_and_changes_nothing(b: Backing) {
    use threadkeeper::service::{Limits, SearchOptions, ServiceError, ThreadService};
    let store = &*b.store;
    load(store).await;
    let before = snapshot(store).await;
    let service = ThreadService::new(b.store.clone(), Limits::default());
    // Past the 64 bytes a word is cut to.
    let long_word = "deploy".repeat(40);
    // 32 terms (the most a query may have) of 30 characters and 90 bytes each: 991 characters.
    let wide_word = "東京".repeat(15);
    let many_long_words = vec![wide_word.as_str(); 32].join(" ");
    let hostile: Vec<(String, bool)> = vec![
        // (query, whether it must parse)
        ("x".repeat(100 * 1024), false),
        ("deploy ".repeat(100 * 1024 / 7), false),
        ("\"deploy main".into(), false),
        ("deploy \"main\" \"".into(), false),
        ("\"".into(), false),
        ("*".into(), false),
        ("-deploy".into(), false),
        ("\0".into(), false),
        ("deploy\0main\0".into(), true),
        ("\0deploy".into(), true),
        ("NEAR(deploy, main, 2)".into(), true),
        ("deploy OR main NOT staging AND".into(), true),
        ("{deploy main}: ^push + \"a\"*".into(), true),
        ("\"\"\"\"deploy\"\"\"\"".into(), true),
        ("deploy* ** main*".into(), false),
        ("'); DELETE FROM events; --".into(), true),
        ("deploy & !main | staging <-> push:* @@ to_tsquery('x')".into(), true),
        (long_word.clone(), true),
        (many_long_words, true),
        ("\u{feff}deploy\u{202e}main\u{200b}".into(), true),
        ("\u{1F680} deploy \u{10FFFF}".into(), true),
    ];
    for (query, must_parse) in &hostile {
        let shown: String = query.chars().take(60).collect();
        match service.search(query, SearchOptions::default()).await {
            Ok(_) => {}
            Err(ServiceError::InvalidParams { path, reason }) if !must_parse => {
                assert_eq!(path, "query", "{shown:?}: {reason}");
                assert!(!reason.is_empty());
            }
            Err(e) => panic!("{shown:?}: {e}"),
        }
    }
    // A word past 64 bytes is cut as the events' words are; no event holds this one.
    let cut = service.search(&long_word, SearchOptions::default()).await.unwrap();
    assert!(cut.hits.is_empty(), "{:?}", cut.hits);
    assert_eq!(snapshot(store).await, before, "searching changes nothing");
}
