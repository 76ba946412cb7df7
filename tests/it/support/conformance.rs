//! One conformance suite for every `Store`, at the trait level.
//!
//! Each check is an async fn over a [`Backing`]: the store under test and, for a store whose
//! threads live outside the instance, a way to open another instance on the same storage
//! (the same SQLite file, the same PostgreSQL database). [`conformance_suite!`] makes one
//! `#[test]` per check for a backend. Where a backend cannot do something (the memory store
//! has no storage outside its instance) the check asserts that it cannot, and says so on
//! stderr; nothing is skipped silently.
//!
//! Include with `#[macro_use] #[path = "support/conformance.rs"] mod conformance;` at the
//! crate root (the macro refers to `crate::support::conformance`).

mod blobs;
mod search;

pub use blobs::*;
pub use search::*;

use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};
use std::any::Any;
use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Arc;
use threadkeeper::event_log::{EventLog, EventLogBuilder};
use threadkeeper::service::{Limits, ServiceError, ThreadService};
use threadkeeper::store::{
    Appended, ForkPoint, ForkThread, MemoryStore, OpenThread, Store, StoreError, StoreKind, ThreadRecord,
    ThreadSettings,
};
use threadkeeper::AgentEvent;

/// Opens another instance of the store on the same storage.
pub type OpenAnother = Arc<dyn Fn() -> BoxFuture<'static, Arc<dyn Store>> + Send + Sync>;

/// How many bytes the store's storage takes now (the database file, the tables).
pub type MeasureSize = Arc<dyn Fn() -> BoxFuture<'static, u64> + Send + Sync>;

/// A store under test and what it lives on.
#[derive(Clone)]
pub struct Backing {
    pub name: &'static str,
    pub store: Arc<dyn Store>,
    /// `None` when the threads live in the instance only.
    another: Option<OpenAnother>,
    /// `None` when there is no storage to measure.
    size: Option<MeasureSize>,
    /// Whatever must outlive the store (a temporary directory, a scratch database).
    _keep: Arc<dyn Any + Send + Sync>,
}

impl Backing {
    pub fn new(
        name: &'static str,
        store: Arc<dyn Store>,
        another: Option<OpenAnother>,
        keep: impl Any + Send + Sync,
    ) -> Self {
        Backing { name, store, another, size: None, _keep: Arc::new(keep) }
    }

    /// The backing, with a way to measure its storage.
    pub fn measured_by(self, size: MeasureSize) -> Self {
        Backing { size: Some(size), ..self }
    }

    /// The storage's size now, or `None` for a store without storage to measure.
    pub async fn size(&self) -> Option<u64> {
        match &self.size {
            Some(measure) => Some(measure().await),
            None => None,
        }
    }

    /// The memory store: no storage outside the instance.
    pub fn memory() -> Self {
        Backing::new("memory", Arc::new(MemoryStore::new(10_000)), None, ())
    }

    /// Another instance on the same storage, or `None` for a store without one.
    pub async fn another(&self) -> Option<Arc<dyn Store>> {
        match &self.another {
            Some(open) => Some(open().await),
            None => None,
        }
    }

    /// Two writers for the concurrency checks: two instances on one storage, or (memory) the
    /// one instance twice.
    async fn two_writers(&self) -> (Arc<dyn Store>, Arc<dyn Store>) {
        match self.another().await {
            Some(other) => (self.store.clone(), other),
            None => {
                eprintln!("{}: no storage outside the instance; both writers share the one instance", self.name);
                (self.store.clone(), self.store.clone())
            }
        }
    }
}

/// Builds a runtime, sets the backing up for `test` (`None`: skipped, and the setup said why)
/// and runs `check` on it.
pub fn run<S, SF, C, CF>(test: &'static str, setup: S, check: C)
where
    S: FnOnce(&'static str) -> SF,
    SF: Future<Output = Option<Backing>>,
    C: FnOnce(Backing) -> CF,
    CF: Future<Output = ()>,
{
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let kept = runtime.block_on(async {
        let backing = setup(test).await?;
        check(backing.clone()).await;
        Some(backing)
    });
    // Dropped after the runtime is gone from this thread: scratch databases are dropped here.
    drop(runtime);
    drop(kept);
}

/// One `#[test]` per check, each setting up a fresh backing with `$setup`, an async fn
/// `(&'static str) -> Option<Backing>` given the test's name.
macro_rules! conformance_suite {
    ($setup:path) => {
        conformance_suite!(@tests $setup;
            kind_and_flags_say_what_the_store_is,
            a_new_thread_starts_empty_at_version_zero,
            missing_threads_are_not_found,
            appends_count_versions_and_events,
            an_empty_append_moves_the_version_only,
            expected_version_conflicts_change_nothing,
            open_replaces_settings_and_metadata_whole,
            events_come_back_byte_for_byte,
            events_from_reads_any_suffix,
            big_events_and_big_batches,
            delete_removes_everything_and_the_id_starts_over,
            list_is_oldest_first_and_matches_records,
            many_threads_keep_their_own_events,
            a_fresh_instance_sees_the_same_threads,
            concurrent_appends_all_land_once_whole,
            concurrent_expected_version_appends_have_one_winner,
            concurrent_opens_make_one_thread,
            delete_racing_appends_leaves_nothing_behind,
            the_service_evicts_and_reloads_threads_unchanged,
            pop_removes_the_last_events_and_moves_the_version_on,
            pop_conflicts_as_appends_do_and_changes_nothing,
            fork_holds_the_prefix_it_names,
            a_fork_and_its_source_change_independently,
            pops_and_forks_survive_a_fresh_instance,
            concurrent_pops_and_appends_all_land_once,
            a_service_notices_pops_by_another_instance,
            a_blob_put_twice_is_kept_once,
            an_append_naming_a_missing_blob_changes_nothing,
            new_blobs_are_kept_with_their_append,
            blobs_outlive_the_instance,
            a_fork_shares_its_sources_blobs,
            deleting_the_last_naming_thread_frees_a_blob,
            a_pop_does_not_free_a_blob,
            a_screenshot_named_a_hundred_times_is_stored_once,
            deletes_racing_appends_never_free_a_named_blob,
            search_finds_exactly_what_the_query_language_defines,
            search_filters_by_thread_type_and_time,
            search_follows_pops_forks_compaction_and_deletes,
            search_pages_cover_every_hit_once_best_first,
            search_ranks_windows_of_the_newest_matches,
            another_instance_finds_what_was_just_appended,
            hostile_queries_never_fail_or_change_the_store,
            hostile_query_text_gets_hits_or_a_clear_error_and_changes_nothing,
        );
    };
    (@tests $setup:path; $($check:ident),* $(,)?) => {
        $(
            #[test]
            fn $check() {
                crate::support::conformance::run(stringify!($check), $setup, crate::support::conformance::$check);
            }
        )*
    };
}

// ---- helpers ----

/// Milliseconds since the epoch, for `now`: fixed values, so records compare exactly.
const T0: u64 = 1_700_000_000_000;

/// An event as these tests write it: its compact JSON, parsed back on demand.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredEvent(String);

impl StoredEvent {
    pub fn json(&self) -> &str {
        &self.0
    }

    pub fn parse(&self) -> AgentEvent {
        AgentEvent::from_value(serde_json::from_str(&self.0).expect("JSON"), "event").expect("a valid event")
    }
}

pub fn stored(value: Value) -> StoredEvent {
    let event = AgentEvent::from_value(value, "event").expect("a valid event");
    StoredEvent(serde_json::to_string(event.fields()).expect("serializes"))
}

/// The events as the log a store appends.
pub fn log(events: &[StoredEvent]) -> EventLog {
    let mut builder = EventLogBuilder::new();
    for event in events {
        builder.push_validated(event.json());
    }
    builder.finish()
}

/// Events given as JSON values (each validated) as the log a store appends.
pub fn log_of(values: &[Value]) -> EventLog {
    log(&values.iter().cloned().map(stored).collect::<Vec<_>>())
}

/// A log's events as these tests hold them.
pub fn owned(log: &EventLog) -> Vec<StoredEvent> {
    log.iter().map(|json| StoredEvent(json.to_owned())).collect()
}

/// An event that names its batch and position, so order and completeness can be checked.
pub fn numbered(batch: u64, index: u64) -> StoredEvent {
    stored(json!({"type": "message", "iteration": batch, "role": "user", "content": format!("{batch}.{index}")}))
}

fn batch(tag: u64, size: u64) -> Vec<StoredEvent> {
    (0..size).map(|i| numbered(tag, i)).collect()
}

/// The events' stored JSON texts: equal texts mean equal bytes, key order included.
fn texts(events: &(impl Texts + ?Sized)) -> Vec<String> {
    events.texts()
}

/// Events as these tests hold them, or as a store returns them.
trait Texts {
    fn texts(&self) -> Vec<String>;
}

impl Texts for [StoredEvent] {
    fn texts(&self) -> Vec<String> {
        self.iter().map(|e| e.json().to_owned()).collect()
    }
}

impl Texts for Vec<StoredEvent> {
    fn texts(&self) -> Vec<String> {
        self.as_slice().texts()
    }
}

impl Texts for EventLog {
    fn texts(&self) -> Vec<String> {
        self.iter().map(str::to_owned).collect()
    }
}

fn open_request(thread_id: &str, now: u64) -> OpenThread {
    OpenThread { thread_id: thread_id.to_owned(), now, ..Default::default() }
}

async fn open(store: &dyn Store, thread_id: &str, now: u64) -> ThreadRecord {
    store.open(open_request(thread_id, now)).await.unwrap_or_else(|e| panic!("open {thread_id}: {e}"))
}

async fn append(store: &dyn Store, thread_id: &str, expected: Option<u64>, events: &[StoredEvent]) -> Appended {
    append_at(store, thread_id, expected, events, T0).await
}

async fn append_at(
    store: &dyn Store,
    thread_id: &str,
    expected: Option<u64>,
    events: &[StoredEvent],
    now: u64,
) -> Appended {
    store.append(thread_id, expected, &log(events), now).await.unwrap_or_else(|e| panic!("append to {thread_id}: {e}"))
}

async fn all_events(store: &dyn Store, thread_id: &str) -> (ThreadRecord, Vec<String>) {
    let (record, events) = store.events_from(thread_id, 0).await.unwrap_or_else(|e| panic!("{thread_id}: {e}"));
    (record, texts(&events))
}

async fn record(store: &dyn Store, thread_id: &str) -> Option<ThreadRecord> {
    store.record(thread_id).await.unwrap_or_else(|e| panic!("record {thread_id}: {e}"))
}

async fn list(store: &dyn Store) -> Vec<ThreadRecord> {
    store.list().await.unwrap_or_else(|e| panic!("list: {e}"))
}

fn ids(records: &[ThreadRecord]) -> Vec<&str> {
    records.iter().map(|r| r.thread_id.as_str()).collect()
}

fn map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn not_found(thread_id: &str) -> StoreError {
    StoreError::NotFound { thread_id: thread_id.to_owned() }
}

fn conflict(thread_id: &str, current_version: u64) -> StoreError {
    StoreError::VersionConflict { thread_id: thread_id.to_owned(), current_version }
}

/// Strings that break naive storage: control characters, quotes, SQL, markup, every plane.
pub fn nasty_strings() -> Vec<String> {
    [
        "",
        " ",
        "\u{0}",
        "a\u{0}b",
        "\u{1}\u{8}\u{b}\u{c}\u{1f}\u{7f}",
        "line\r\nbreak\ttab",
        "\"quoted\" 'single' `back`",
        "back\\slash \\u0000 \\n",
        "'; DROP TABLE threads; --",
        "$1 ?1 %s {} {{}}",
        "<![CDATA[ ]]> </thread> &amp; &",
        "ünïcödé — ✓",
        "日本語のテキスト",
        "🦀 👩‍👩‍👧 🏳️‍🌈",
        "\u{2028}\u{2029}\u{85}",
        "\u{feff}bom",
        "\u{202e}right-to-left",
        "\u{fffd}\u{fffe}\u{ffff}",
        "\u{10ffff}",
        "e\u{301}",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

// ---- the checks ----

pub async fn kind_and_flags_say_what_the_store_is(b: Backing) {
    let store = &b.store;
    match b.another().await {
        Some(other) => {
            assert_ne!(store.kind(), StoreKind::Memory, "{}", b.name);
            assert!(
                store.is_durable() && store.is_shared(),
                "{}: a store with outside storage is durable and shared",
                b.name
            );
            assert_eq!(other.kind(), store.kind());
        }
        None => {
            assert_eq!(store.kind(), StoreKind::Memory, "{}", b.name);
            assert!(!store.is_durable() && !store.is_shared(), "{}", b.name);
            eprintln!("{}: not durable and not shared (threads live in the instance only)", b.name);
        }
    }
}

pub async fn a_new_thread_starts_empty_at_version_zero(b: Backing) {
    let store = &*b.store;
    let opened = open(store, "fresh", T0).await;
    let expected = ThreadRecord {
        thread_id: "fresh".into(),
        version: 0,
        event_count: 0,
        settings: ThreadSettings::default(),
        metadata: Map::new(),
        created_at: T0,
        updated_at: T0,
    };
    assert_eq!(opened, expected);
    assert_eq!(record(store, "fresh").await, Some(expected.clone()));
    assert_eq!(all_events(store, "fresh").await, (expected.clone(), vec![]));
    assert_eq!(list(store).await, vec![expected]);
}

pub async fn missing_threads_are_not_found(b: Backing) {
    let store = &*b.store;
    open(store, "present", T0).await;
    assert_eq!(record(store, "absent").await, None);
    assert_eq!(store.events_from("absent", 0).await.unwrap_err(), not_found("absent"));
    assert_eq!(store.append("absent", None, &log(&batch(0, 1)), T0).await.unwrap_err(), not_found("absent"));
    // Not found wins over a version check.
    assert_eq!(store.append("absent", Some(0), &EventLog::new(), T0).await.unwrap_err(), not_found("absent"));
    assert!(!store.delete("absent").await.unwrap());
    // Ids differ by case and by a trailing space: they are other threads.
    assert_eq!(record(store, "Present").await, None);
    assert_eq!(record(store, "present ").await, None);
    assert_eq!(ids(&list(store).await), ["present"], "a failed call made a thread");
}

pub async fn appends_count_versions_and_events(b: Backing) {
    let store = &*b.store;
    open(store, "t", T0).await;
    let first = append_at(store, "t", None, &batch(1, 2), T0 + 1).await;
    assert_eq!(first, Appended { version: 1, event_count: 2, updated_at: T0 + 1 });
    let second = append_at(store, "t", None, &batch(2, 3), T0 + 2).await;
    assert_eq!(second, Appended { version: 2, event_count: 5, updated_at: T0 + 2 });
    let third = append_at(store, "t", Some(2), &batch(3, 1), T0 + 3).await;
    assert_eq!(third, Appended { version: 3, event_count: 6, updated_at: T0 + 3 });

    let (rec, events) = all_events(store, "t").await;
    assert_eq!((rec.version, rec.event_count, rec.created_at, rec.updated_at), (3, 6, T0, T0 + 3));
    let expected: Vec<_> = [batch(1, 2), batch(2, 3), batch(3, 1)].concat();
    assert_eq!(events, texts(&expected), "events in append order");
    assert_eq!(record(store, "t").await, Some(rec));
}

pub async fn an_empty_append_moves_the_version_only(b: Backing) {
    let store = &*b.store;
    open(store, "t", T0).await;
    append(store, "t", None, &batch(0, 2)).await;
    let empty = append_at(store, "t", Some(1), &[], T0 + 5).await;
    assert_eq!(empty, Appended { version: 2, event_count: 2, updated_at: T0 + 5 });
    let again = append_at(store, "t", None, &[], T0 + 6).await;
    assert_eq!(again, Appended { version: 3, event_count: 2, updated_at: T0 + 6 });
    let (rec, events) = all_events(store, "t").await;
    assert_eq!((rec.version, rec.event_count, rec.updated_at), (3, 2, T0 + 6));
    assert_eq!(events, texts(&batch(0, 2)));
    // Events appended after empty appends come right after the earlier events.
    assert_eq!(append(store, "t", Some(3), &batch(1, 1)).await.event_count, 3);
    assert_eq!(all_events(store, "t").await.1, texts(&[batch(0, 2), batch(1, 1)].concat()));
}

pub async fn expected_version_conflicts_change_nothing(b: Backing) {
    let store = &*b.store;
    open(store, "t", T0).await;
    assert_eq!(append(store, "t", Some(0), &batch(0, 1)).await.version, 1);
    let before = all_events(store, "t").await;
    for stale in [0, 2, 7, u64::MAX, i64::MAX as u64, (i64::MAX as u64) + 1] {
        assert_eq!(
            store.append("t", Some(stale), &log(&batch(9, 3)), T0 + 100).await.unwrap_err(),
            conflict("t", 1),
            "expectedVersion {stale}"
        );
        assert_eq!(store.append("t", Some(stale), &EventLog::new(), T0 + 100).await.unwrap_err(), conflict("t", 1));
    }
    assert_eq!(all_events(store, "t").await, before, "a conflict changed the thread");
    assert_eq!(
        append(store, "t", Some(1), &batch(1, 1)).await,
        Appended { version: 2, event_count: 2, updated_at: T0 }
    );
}

pub async fn open_replaces_settings_and_metadata_whole(b: Backing) {
    let store = &*b.store;
    let settings = ThreadSettings {
        context_mode: Some(threadkeeper::messages::ContextMode::Xml),
        instructions: Some("Be brief.\n\u{0}ünï".into()),
        response_prefix: Some("<answer>".into()),
    };
    let metadata = map(json!({"zeta": 1, "alpha": {"y": true, "x": null}, "": [1.5, "é"]}));
    let opened = store
        .open(OpenThread {
            thread_id: "t".into(),
            settings: Some(settings.clone()),
            metadata: Some(metadata.clone()),
            now: T0,
        })
        .await
        .unwrap();
    assert_eq!((opened.settings.clone(), opened.metadata.clone()), (settings.clone(), metadata.clone()));
    append(store, "t", None, &batch(0, 2)).await;

    // None keeps what is stored; only updated_at moves.
    let kept = open(store, "t", T0 + 1).await;
    assert_eq!((kept.settings.clone(), kept.metadata.clone()), (settings.clone(), metadata.clone()));
    assert_eq!((kept.version, kept.event_count, kept.created_at, kept.updated_at), (1, 2, T0, T0 + 1));
    let text = serde_json::to_string(&kept.metadata).unwrap();
    assert_eq!(text, r#"{"zeta":1,"alpha":{"y":true,"x":null},"":[1.5,"é"]}"#, "metadata keeps its key order");

    // Some replaces the whole value: no merging with what was there.
    let new_metadata = map(json!({"only": "this"}));
    let replaced = store
        .open(OpenThread { thread_id: "t".into(), settings: None, metadata: Some(new_metadata.clone()), now: T0 + 2 })
        .await
        .unwrap();
    assert_eq!((replaced.settings.clone(), replaced.metadata.clone()), (settings.clone(), new_metadata.clone()));
    let cleared = store
        .open(OpenThread {
            thread_id: "t".into(),
            settings: Some(ThreadSettings::default()),
            metadata: Some(Map::new()),
            now: T0 + 3,
        })
        .await
        .unwrap();
    assert_eq!((cleared.settings.clone(), cleared.metadata.clone()), (ThreadSettings::default(), Map::new()));
    assert_eq!((cleared.version, cleared.event_count, cleared.created_at, cleared.updated_at), (1, 2, T0, T0 + 3));
    assert_eq!(record(store, "t").await, Some(cleared.clone()));
    assert_eq!(all_events(store, "t").await, (cleared, texts(&batch(0, 2))), "open changed the events");
}

pub async fn events_come_back_byte_for_byte(b: Backing) {
    let store = &*b.store;
    let samples: Vec<Value> = serde_json::from_str(
        r#"[
        {"type":"message","iteration":1,"role":"user","content":"Find the <config> & read it","timestamp":1700000000000},
        {"iteration":1,"type":"tool_call","toolName":"read_file","toolCallId":"c1","args":{"z":1,"a":"x"},"extra":{"b":2,"a":1}},
        {"type":"tool_result","iteration":1,"toolCallId":"c1","result":{"ok":true,"lines":["a","b"]}},
        {"type":"future_kind","iteration":3,"payload":[1,2.5,null],"zeta":"kept"},
        {"type":"message","iteration":0,"role":"assistant","content":"n",
         "numbers":[0,-0.0,0.1,1e308,1.5e-300,-1.7976931348623157e308,18446744073709551615,-9223372036854775808,5e-324],
         "deep":[[[[[[[[[[{"a":[[[[[]]]]]}]]]]]]]]]],"empty":{},"list":[]}
    ]"#,
    )
    .unwrap();
    let mut events: Vec<StoredEvent> = samples.into_iter().map(stored).collect();
    for (i, nasty) in nasty_strings().into_iter().enumerate() {
        let mut fields = Map::new();
        // Nasty keys too, in an order no sorting would produce.
        fields.insert(format!("{nasty}key"), json!(nasty));
        fields.insert("type".into(), json!("message"));
        fields.insert("role".into(), json!("user"));
        fields.insert("iteration".into(), json!(i));
        fields.insert("content".into(), json!(nasty));
        events.push(stored(Value::Object(fields)));
    }
    open(store, "bytes", T0).await;
    append(store, "bytes", None, &events[..3]).await;
    append(store, "bytes", None, &events[3..]).await;
    let (_, back) = all_events(store, "bytes").await;
    assert_eq!(back, texts(&events));
    // What comes back parses to the same events, so renderers see what was sent.
    let (_, parsed) = store.events_from("bytes", 0).await.unwrap();
    let parsed = owned(&parsed);
    for (sent, got) in events.iter().zip(&parsed) {
        assert_eq!(sent.parse(), got.parse());
    }
}

pub async fn events_from_reads_any_suffix(b: Backing) {
    let store = &*b.store;
    open(store, "t", T0).await;
    let all: Vec<_> = [batch(0, 3), batch(1, 2)].concat();
    append(store, "t", None, &all[..3]).await;
    append(store, "t", None, &all[3..]).await;
    for from in 0..=5u64 {
        let (rec, events) = store.events_from("t", from).await.unwrap();
        let events = owned(&events);
        assert_eq!((rec.version, rec.event_count), (2, 5), "from {from}");
        assert_eq!(texts(&events), texts(&all[from as usize..]), "from {from}");
    }
    for past_the_end in [6, 1_000, i64::MAX as u64, u64::MAX] {
        let (rec, events) = store.events_from("t", past_the_end).await.unwrap();
        let events = owned(&events);
        assert_eq!((rec.event_count, events.len()), (5, 0), "from {past_the_end}");
    }
}

pub async fn big_events_and_big_batches(b: Backing) {
    let store = &*b.store;
    // The service's per-event limit is 4 MiB of compact JSON.
    let limits = Limits::default();
    let filler = "x\u{e9}\u{1f980}".repeat((limits.max_event_bytes - 200) / 7);
    let big = stored(json!({"type": "message", "iteration": 1, "role": "user", "content": filler}));
    assert!(big.json().len() > (4 << 20) - 400 && big.json().len() <= limits.max_event_bytes);
    let many = batch(7, 20_000);
    open(store, "big", T0).await;
    append(store, "big", None, &[big.clone(), big.clone()]).await;
    let appended = append(store, "big", Some(1), &many).await;
    assert_eq!((appended.version, appended.event_count), (2, 20_002));
    let (rec, events) = store.events_from("big", 0).await.unwrap();
    let events = owned(&events);
    assert_eq!(rec.event_count, 20_002);
    assert!(events[0].json() == big.json() && events[1].json() == big.json(), "the big events changed");
    assert_eq!(texts(&events[2..]), texts(&many));
    let (_, tail) = store.events_from("big", 20_001).await.unwrap();
    let tail = owned(&tail);
    assert_eq!(texts(&tail), texts(&many[19_999..]));
}

pub async fn delete_removes_everything_and_the_id_starts_over(b: Backing) {
    let store = &*b.store;
    for id in ["keep", "gone"] {
        store
            .open(OpenThread {
                thread_id: id.into(),
                settings: Some(ThreadSettings { instructions: Some("old".into()), ..Default::default() }),
                metadata: Some(map(json!({"old": true}))),
                now: T0,
            })
            .await
            .unwrap();
        append(store, id, None, &batch(1, 3)).await;
        append(store, id, None, &batch(2, 2)).await;
    }
    let keep_before = all_events(store, "keep").await;
    assert!(store.delete("gone").await.unwrap());
    assert_eq!(record(store, "gone").await, None);
    assert_eq!(store.events_from("gone", 0).await.unwrap_err(), not_found("gone"));
    assert_eq!(store.append("gone", None, &log(&batch(3, 1)), T0).await.unwrap_err(), not_found("gone"));
    assert!(!store.delete("gone").await.unwrap(), "deleted twice");
    assert_eq!(ids(&list(store).await), ["keep"]);
    assert_eq!(all_events(store, "keep").await, keep_before, "deleting one thread touched another");

    // The id starts over: nothing of the old thread comes back.
    let reborn = open(store, "gone", T0 + 10).await;
    assert_eq!(
        (reborn.version, reborn.event_count, reborn.created_at, reborn.settings.clone(), reborn.metadata.clone()),
        (0, 0, T0 + 10, ThreadSettings::default(), Map::new())
    );
    assert_eq!(all_events(store, "gone").await.1, Vec::<String>::new());
    assert_eq!(
        append(store, "gone", Some(0), &batch(4, 1)).await,
        Appended { version: 1, event_count: 1, updated_at: T0 }
    );
    assert_eq!(all_events(store, "gone").await.1, texts(&batch(4, 1)));
    assert_eq!(ids(&list(store).await), ["keep", "gone"], "a thread made again is the newest");
}

pub async fn list_is_oldest_first_and_matches_records(b: Backing) {
    let store = &*b.store;
    assert_eq!(list(store).await, vec![]);
    // Creation order, not id order, and not creation time (`now` may go backwards).
    for (i, id) in ["m", "z", "a", "b"].iter().enumerate() {
        open(store, id, T0 - i as u64).await;
    }
    append(store, "a", None, &batch(0, 1)).await;
    open(store, "m", T0 + 50).await; // touching a thread does not move it
    assert!(store.delete("z").await.unwrap());
    let records = list(store).await;
    assert_eq!(ids(&records), ["m", "a", "b"]);
    for listed in &records {
        assert_eq!(Some(listed.clone()), record(store, &listed.thread_id).await);
    }
}

pub async fn many_threads_keep_their_own_events(b: Backing) {
    const THREADS: u64 = 120;
    let store = &*b.store;
    let id = |n: u64| format!("thread-{n:03}");
    for n in 0..THREADS {
        open(store, &id(n), T0 + n).await;
    }
    // Round-robin appends, so the threads' rows interleave in storage.
    for round in 0..3u64 {
        for n in 0..THREADS {
            append(store, &id(n), Some(round), &batch(n * 10 + round, round + 1)).await;
        }
    }
    let records = list(store).await;
    assert_eq!(records.len() as u64, THREADS);
    for (n, rec) in (0..THREADS).zip(&records) {
        assert_eq!(rec.thread_id, id(n));
        assert_eq!((rec.version, rec.event_count, rec.created_at), (3, 6, T0 + n));
        let expected: Vec<_> = (0..3).flat_map(|round| batch(n * 10 + round, round + 1)).collect();
        assert_eq!(all_events(store, &id(n)).await.1, texts(&expected), "{}", id(n));
    }
    // A long id (the service allows 128 characters).
    let long = "L".repeat(128);
    open(store, &long, T0).await;
    append(store, &long, None, &batch(1, 1)).await;
    assert_eq!(record(store, &long).await.unwrap().event_count, 1);
}

pub async fn a_fresh_instance_sees_the_same_threads(b: Backing) {
    let store = &*b.store;
    let settings = ThreadSettings { instructions: Some("Be brief.".into()), ..Default::default() };
    store
        .open(OpenThread {
            thread_id: "kept".into(),
            settings: Some(settings),
            metadata: Some(map(json!({"zeta": 1, "alpha": {"y": true, "x": null}}))),
            now: T0,
        })
        .await
        .unwrap();
    let nasty: Vec<_> = nasty_strings()
        .into_iter()
        .map(|s| stored(json!({"z": s, "type": "message", "iteration": 1, "role": "user", "content": s})))
        .collect();
    append_at(store, "kept", None, &nasty, T0 + 1).await;
    append_at(store, "kept", Some(1), &[], T0 + 2).await;
    append_at(store, "kept", Some(2), &batch(3, 2), T0 + 3).await;
    open(store, "deleted", T0).await;
    append(store, "deleted", None, &batch(1, 1)).await;
    assert!(store.delete("deleted").await.unwrap());
    open(store, "empty", T0 + 4).await;

    let Some(fresh) = b.another().await else {
        // Nothing outside the instance: a second one starts empty, which is the contract.
        let second = MemoryStore::new(10);
        assert_eq!(second.list().await.unwrap(), vec![]);
        assert_eq!(second.record("kept").await.unwrap(), None);
        eprintln!("{}: threads live in the instance only; a fresh instance sees none of them (checked)", b.name);
        return;
    };
    assert_eq!(list(&*fresh).await, list(store).await);
    for id in ["kept", "empty"] {
        assert_eq!(all_events(&*fresh, id).await, all_events(store, id).await, "{id}");
    }
    let (rec, events) = all_events(&*fresh, "kept").await;
    assert_eq!((rec.version, rec.event_count, rec.created_at, rec.updated_at), (3, nasty.len() as u64 + 2, T0, T0 + 3));
    assert_eq!(events, texts(&[nasty, batch(3, 2)].concat()), "byte for byte, key order included");
    assert_eq!(
        serde_json::to_string(&rec.metadata).unwrap(),
        r#"{"zeta":1,"alpha":{"y":true,"x":null}}"#,
        "metadata keeps its key order"
    );
    assert_eq!(record(&*fresh, "deleted").await, None);

    // The fresh instance goes on from the stored version, and each sees the other's appends.
    assert_eq!(fresh.append("kept", Some(2), &EventLog::new(), T0).await.unwrap_err(), conflict("kept", 3));
    append(&*fresh, "kept", Some(3), &batch(4, 1)).await;
    assert_eq!(store.append("kept", Some(3), &EventLog::new(), T0).await.unwrap_err(), conflict("kept", 4));
    let (rec, events) = store.events_from("kept", rec.event_count).await.unwrap();
    let events = owned(&events);
    assert_eq!((rec.version, texts(&events)), (4, texts(&batch(4, 1))));
}

pub async fn concurrent_appends_all_land_once_whole(b: Backing) {
    const PER_WRITER: u64 = 100;
    const BATCH: u64 = 3;
    let (one, two) = b.two_writers().await;
    open(&*one, "race", T0).await;
    let writer = |store: Arc<dyn Store>, tag: u64| {
        tokio::spawn(async move {
            let mut versions = Vec::new();
            for n in 0..PER_WRITER {
                let appended = store.append("race", None, &log(&batch(tag * 1000 + n, BATCH)), T0).await;
                versions.push(appended.unwrap_or_else(|e| panic!("writer {tag}, append {n}: {e}")).version);
            }
            versions
        })
    };
    let (first, second) = tokio::join!(writer(one.clone(), 1), writer(two.clone(), 2));
    let (first, second) = (first.unwrap(), second.unwrap());
    let mut acknowledged = BTreeSet::new();
    for version in first.iter().chain(&second) {
        assert!(acknowledged.insert(*version), "version {version} acknowledged twice");
    }
    assert_eq!(acknowledged, (1..=2 * PER_WRITER).collect(), "every append got its own version");
    for versions in [&first, &second] {
        assert!(versions.windows(2).all(|w| w[0] < w[1]), "one writer's appends went back in time: {versions:?}");
    }

    // Every batch once, whole, in its writer's order; both instances agree.
    let (rec, events) = one.events_from("race", 0).await.unwrap();
    let events = owned(&events);
    assert_eq!((rec.version, rec.event_count), (2 * PER_WRITER, 2 * PER_WRITER * BATCH));
    assert_eq!(texts(&events), texts(&two.events_from("race", 0).await.unwrap().1));
    let mut next = [0u64, 0];
    let mut switches = 0;
    let mut last_tag = 0;
    for chunk in events.chunks(BATCH as usize) {
        let iteration = chunk[0].parse().iteration().as_u64().unwrap();
        let (tag, n) = (iteration / 1000, iteration % 1000);
        assert_eq!(texts(chunk), texts(&batch(iteration, BATCH)), "batch {iteration} is not whole");
        assert_eq!(n, next[tag as usize - 1], "writer {tag}'s batches out of order");
        next[tag as usize - 1] += 1;
        switches += usize::from(last_tag != 0 && last_tag != tag);
        last_tag = tag;
    }
    assert_eq!(next, [PER_WRITER, PER_WRITER]);
    eprintln!("{}: the writers' appends interleaved {switches} times", b.name);
}

pub async fn concurrent_expected_version_appends_have_one_winner(b: Backing) {
    const ROUNDS: u64 = 30;
    let (one, two) = b.two_writers().await;
    open(&*one, "cas", T0).await;
    for round in 0..ROUNDS {
        let (a, c) = tokio::join!(
            one.append("cas", Some(round), &log(&[numbered(1000 + round, 0)]), T0),
            two.append("cas", Some(round), &log(&[numbered(2000 + round, 0), numbered(2000 + round, 1)]), T0),
        );
        let winner = match (&a, &c) {
            (Ok(won), Err(lost)) | (Err(lost), Ok(won)) => {
                assert_eq!(won.version, round + 1, "round {round}");
                assert_eq!(lost, &conflict("cas", round + 1), "round {round}");
                if a.is_ok() {
                    1000
                } else {
                    2000
                }
            }
            _ => panic!("round {round}: exactly one append may win: {a:?} {c:?}"),
        };
        let (rec, events) = two.events_from("cas", 0).await.unwrap();
        let events = owned(&events);
        assert_eq!(rec.version, round + 1);
        let last = events.last().unwrap().parse();
        assert_eq!(last.iteration().as_u64(), Some(winner + round), "round {round}: the loser's events landed");
    }
    let (rec, events) = one.events_from("cas", 0).await.unwrap();
    let events = owned(&events);
    assert_eq!(rec.event_count, events.len() as u64);
    assert_eq!(rec.version, ROUNDS);
}

pub async fn concurrent_opens_make_one_thread(b: Backing) {
    let (one, two) = b.two_writers().await;
    for n in 0..20u64 {
        let id = format!("opened-{n}");
        let (x, y) = tokio::join!(one.open(open_request(&id, T0 + n)), two.open(open_request(&id, T0 + n)));
        let (x, y) = (x.unwrap(), y.unwrap());
        assert_eq!((x.version, x.created_at), (0, T0 + n));
        assert_eq!(x, y, "{id}");
    }
    let records = list(&*one).await;
    let expected: Vec<String> = (0..20).map(|n| format!("opened-{n}")).collect();
    assert_eq!(ids(&records), expected.iter().map(String::as_str).collect::<Vec<_>>());
}

pub async fn delete_racing_appends_leaves_nothing_behind(b: Backing) {
    let (one, two) = b.two_writers().await;
    for round in 0..5u64 {
        open(&*one, "doomed", T0).await;
        append(&*one, "doomed", None, &batch(0, 2)).await;
        let appender = {
            let one = one.clone();
            tokio::spawn(async move {
                let mut acknowledged = 0u64;
                for n in 1.. {
                    match one.append("doomed", None, &log(&batch(n, 2)), T0).await {
                        Ok(appended) => acknowledged = appended.version,
                        Err(StoreError::NotFound { .. }) => return acknowledged,
                        Err(e) => panic!("append {n}: {e}"),
                    }
                    if n >= 10_000 {
                        panic!("the thread was never deleted");
                    }
                }
                unreachable!()
            })
        };
        // Let some appends land first.
        while record(&*two, "doomed").await.is_none_or(|r| r.version < 3 + round) {
            tokio::task::yield_now().await;
        }
        assert!(two.delete("doomed").await.unwrap());
        let acknowledged = appender.await.unwrap();
        assert!(acknowledged >= 3 + round);
        assert_eq!(record(&*one, "doomed").await, None);
        assert!(!two.delete("doomed").await.unwrap());
        // Nothing of the deleted thread, nor of appends racing the delete, shows in a new one.
        let reborn = open(&*two, "doomed", T0 + 1).await;
        assert_eq!((reborn.version, reborn.event_count), (0, 0), "round {round}");
        assert_eq!(all_events(&*one, "doomed").await.1, Vec::<String>::new(), "round {round}");
        assert_eq!(append(&*one, "doomed", Some(0), &batch(99, 1)).await.event_count, 1);
        assert_eq!(all_events(&*two, "doomed").await.1, texts(&batch(99, 1)), "round {round}");
        assert!(one.delete("doomed").await.unwrap());
    }
}

pub async fn the_service_evicts_and_reloads_threads_unchanged(b: Backing) {
    const THREADS: usize = 6;
    let limits = Limits { max_threads_in_memory: 2, ..Limits::default() };
    let sample: Vec<Value> = nasty_strings()
        .into_iter()
        .enumerate()
        .map(|(i, s)| json!({"type": "message", "iteration": i, "role": "user", "content": s, "z": 1}))
        .collect();
    if !b.store.is_durable() {
        // The memory store cannot evict (evicting would lose the thread): it refuses more.
        let service = ThreadService::new(Arc::new(MemoryStore::new(2)), limits);
        for id in ["one", "two"] {
            service.open(Some(id.into()), None, None).await.unwrap();
        }
        let refused = service.open(Some("three".into()), None, None).await.unwrap_err();
        assert_eq!(refused, ServiceError::Limit { limit: "maxThreadsInMemory", value: 3, max: 2 });
        assert_eq!(service.list().await.unwrap().len(), 2);
        eprintln!("{}: no eviction; the store refuses threads past its limit (checked)", b.name);
        return;
    }
    let service = ThreadService::new(b.store.clone(), limits);
    let id = |n: usize| format!("lru-{n}");
    let mut first_seen = Vec::new();
    for n in 0..THREADS {
        service.open(Some(id(n)), None, Some(map(json!({"n": n})))).await.unwrap();
        let events = service.validate_events(sample.clone()).unwrap();
        service.append(&id(n), events, Some(0)).await.unwrap();
        first_seen.push(service.snapshot(&id(n)).await.unwrap());
    }
    // Only two fit in memory: every other thread was evicted and comes back from the store.
    for (n, (rec, events)) in first_seen.iter().enumerate() {
        let (again, again_events) = service.snapshot(&id(n)).await.unwrap();
        assert_eq!(&again, rec, "{} after eviction", id(n));
        assert_eq!(texts(&again_events), texts(events), "{} after eviction", id(n));
        let more = service.validate_events(sample[..1].to_vec()).unwrap();
        let appended = service.append(&id(n), more, Some(1)).await.unwrap();
        assert_eq!((appended.version, appended.event_count), (2, sample.len() as u64 + 1), "{}", id(n));
    }
}

// ---- undo and branch ----

async fn pop(
    store: &dyn Store,
    thread_id: &str,
    expected: Option<u64>,
    count: u64,
    now: u64,
) -> (Vec<String>, u64, u64) {
    let popped = store.pop(thread_id, expected, count, now).await.unwrap_or_else(|e| panic!("pop {thread_id}: {e}"));
    assert_eq!(popped.updated_at, now);
    (texts(&popped.events), popped.version, popped.event_count)
}

fn fork_request(source: &str, at: ForkPoint, thread_id: &str) -> ForkThread {
    ForkThread { source_id: source.into(), at, thread_id: thread_id.into(), metadata: None, now: T0 + 500 }
}

fn out_of_range(field: &'static str, reason: &str) -> StoreError {
    StoreError::OutOfRange { field, reason: reason.into() }
}

pub async fn pop_removes_the_last_events_and_moves_the_version_on(b: Backing) {
    let store = &*b.store;
    open(store, "t", T0).await;
    append(store, "t", None, &batch(1, 3)).await;
    append(store, "t", None, &batch(2, 2)).await;
    // The removed events come back in thread order; the version moves on, the count back.
    assert_eq!(
        pop(store, "t", None, 3, T0 + 7).await,
        (texts(&[batch(1, 3)[2..].to_vec(), batch(2, 2)].concat()), 3, 2)
    );
    let (rec, events) = all_events(store, "t").await;
    assert_eq!((rec.version, rec.event_count, rec.updated_at), (3, 2, T0 + 7));
    assert_eq!(events, texts(&batch(1, 2)));
    // The default of one, and appends after a pop land right after what is left.
    assert_eq!(pop(store, "t", Some(3), 1, T0 + 8).await, (texts(&batch(1, 2)[1..]), 4, 1));
    assert_eq!(
        append(store, "t", Some(4), &batch(3, 2)).await,
        Appended { version: 5, event_count: 3, updated_at: T0 }
    );
    assert_eq!(all_events(store, "t").await.1, texts(&[batch(1, 1), batch(3, 2)].concat()));
    // Every event may go.
    assert_eq!(pop(store, "t", None, 3, T0 + 9).await.2, 0);
    assert_eq!(all_events(store, "t").await.1, Vec::<String>::new());

    // Numbers that do not fit change nothing.
    let before = all_events(store, "t").await;
    assert_eq!(
        store.pop("t", None, 1, T0).await.unwrap_err(),
        out_of_range("count", "the thread has 0 events, fewer than 1")
    );
    append(store, "t", None, &batch(4, 2)).await;
    let before_after_append = all_events(store, "t").await;
    assert_ne!(before, before_after_append);
    assert_eq!(
        store.pop("t", None, 3, T0).await.unwrap_err(),
        out_of_range("count", "the thread has 2 events, fewer than 3")
    );
    assert_eq!(store.pop("t", None, 0, T0).await.unwrap_err(), out_of_range("count", "must be at least 1"));
    assert_eq!(
        store.pop("t", None, u64::MAX, T0).await.unwrap_err().to_string(),
        "count: the thread has 2 events, fewer than 18446744073709551615"
    );
    assert_eq!(all_events(store, "t").await, before_after_append, "a refused pop changed the thread");
    assert_eq!(store.pop("absent", None, 1, T0).await.unwrap_err(), not_found("absent"));
    assert_eq!(store.pop("absent", Some(0), 1, T0).await.unwrap_err(), not_found("absent"));
}

pub async fn pop_conflicts_as_appends_do_and_changes_nothing(b: Backing) {
    let store = &*b.store;
    open(store, "t", T0).await;
    append(store, "t", None, &batch(1, 4)).await;
    pop(store, "t", Some(1), 1, T0).await;
    let before = all_events(store, "t").await;
    for stale in [0, 1, 3, u64::MAX] {
        assert_eq!(
            store.pop("t", Some(stale), 1, T0 + 1).await.unwrap_err(),
            conflict("t", 2),
            "expectedVersion {stale}"
        );
        // A conflict wins over a count that does not fit.
        assert_eq!(store.pop("t", Some(stale), 99, T0 + 1).await.unwrap_err(), conflict("t", 2));
    }
    assert_eq!(all_events(store, "t").await, before, "a conflict changed the thread");
    // Appends expecting the version before the pop conflict too: the pop was a change.
    assert_eq!(store.append("t", Some(1), &log(&batch(9, 1)), T0).await.unwrap_err(), conflict("t", 2));
    assert_eq!(pop(store, "t", Some(2), 2, T0 + 2).await.1, 3);
}

pub async fn fork_holds_the_prefix_it_names(b: Backing) {
    let store = &*b.store;
    let settings = ThreadSettings { instructions: Some("Be brief.".into()), ..Default::default() };
    let metadata = map(json!({"zeta": 1, "alpha": true}));
    store
        .open(OpenThread {
            thread_id: "src".into(),
            settings: Some(settings.clone()),
            metadata: Some(metadata.clone()),
            now: T0,
        })
        .await
        .unwrap();
    append(store, "src", None, &batch(1, 2)).await; // v1: 2 events
    append(store, "src", None, &batch(2, 3)).await; // v2: 5
    pop(store, "src", None, 2, T0).await; // v3: 3
    append(store, "src", None, &batch(4, 1)).await; // v4: 4
    let all = all_events(store, "src").await.1;

    let whole = store.fork(fork_request("src", ForkPoint::Whole, "whole")).await.unwrap();
    let expected = ThreadRecord {
        thread_id: "whole".into(),
        version: 1,
        event_count: 4,
        settings: settings.clone(),
        metadata: metadata.clone(),
        created_at: T0 + 500,
        updated_at: T0 + 500,
    };
    assert_eq!(whole, expected);
    assert_eq!(all_events(store, "whole").await, (expected, all.clone()));

    for (at, id, count) in [
        (ForkPoint::Events(2), "e2", 2),
        (ForkPoint::Events(0), "e0", 0),
        (ForkPoint::Events(4), "e4", 4),
        (ForkPoint::Version(0), "v0", 0),
        (ForkPoint::Version(1), "v1", 2),
        (ForkPoint::Version(3), "v3", 3),
        (ForkPoint::Version(4), "v4", 4),
    ] {
        let forked = store.fork(fork_request("src", at, id)).await.unwrap_or_else(|e| panic!("{at:?}: {e}"));
        assert_eq!((forked.version, forked.event_count), (u64::from(count > 0), count as u64), "{at:?}");
        assert_eq!(all_events(store, id).await.1, all[..count].to_vec(), "{at:?}");
    }
    // Metadata given replaces the source's.
    let mut request = fork_request("src", ForkPoint::Events(1), "own-metadata");
    request.metadata = Some(map(json!({"branch": "b"})));
    let forked = store.fork(request).await.unwrap();
    assert_eq!((forked.metadata, forked.settings), (map(json!({"branch": "b"})), settings));

    let before = list(store).await;
    let refused = [
        (ForkPoint::Events(5), "atEvent", "the thread has 4 events, fewer than 5"),
        (ForkPoint::Version(5), "atVersion", "the thread is at version 4, before 5"),
        (ForkPoint::Version(2), "atVersion", "events of version 2 were popped since, so its events are gone"),
    ];
    for (at, field, reason) in refused {
        assert_eq!(store.fork(fork_request("src", at, "new")).await.unwrap_err(), out_of_range(field, reason));
    }
    assert_eq!(
        store.fork(fork_request("src", ForkPoint::Whole, "e2")).await.unwrap_err(),
        StoreError::Exists { thread_id: "e2".into() }
    );
    assert_eq!(
        store.fork(fork_request("src", ForkPoint::Whole, "src")).await.unwrap_err(),
        StoreError::Exists { thread_id: "src".into() }
    );
    assert_eq!(store.fork(fork_request("absent", ForkPoint::Whole, "new")).await.unwrap_err(), not_found("absent"));
    assert_eq!(list(store).await, before, "a refused fork made or changed a thread");
    assert_eq!(all_events(store, "e2").await.1, all[..2].to_vec());
}

pub async fn a_fork_and_its_source_change_independently(b: Backing) {
    let store = &*b.store;
    open(store, "src", T0).await;
    append(store, "src", None, &batch(1, 3)).await;
    store.fork(fork_request("src", ForkPoint::Events(2), "branch")).await.unwrap();
    // Each side goes its own way: pops and appends on one never show on the other.
    append(store, "branch", Some(1), &batch(2, 2)).await;
    pop(store, "src", Some(1), 3, T0).await;
    append(store, "src", Some(2), &batch(3, 1)).await;
    pop(store, "branch", Some(2), 1, T0).await;
    assert_eq!(all_events(store, "src").await.1, texts(&batch(3, 1)));
    assert_eq!(all_events(store, "branch").await.1, texts(&[batch(1, 2), batch(2, 1)].concat()));
    // A fork of a fork, at a version of the fork.
    store.fork(fork_request("branch", ForkPoint::Version(1), "twig")).await.unwrap();
    assert_eq!(all_events(store, "twig").await.1, texts(&batch(1, 2)));
    // Deleting the source leaves its forks whole.
    assert!(store.delete("src").await.unwrap());
    assert_eq!(all_events(store, "branch").await.1, texts(&[batch(1, 2), batch(2, 1)].concat()));
    assert_eq!(ids(&list(store).await), ["branch", "twig"]);
}

pub async fn pops_and_forks_survive_a_fresh_instance(b: Backing) {
    let store = &*b.store;
    open(store, "t", T0).await;
    append(store, "t", None, &batch(1, 3)).await;
    pop(store, "t", None, 1, T0 + 1).await;
    append(store, "t", None, &batch(2, 2)).await;
    store.fork(fork_request("t", ForkPoint::Version(2), "f")).await.unwrap();
    let Some(fresh) = b.another().await else {
        eprintln!("{}: threads live in the instance only; nothing to reload (checked elsewhere)", b.name);
        return;
    };
    assert_eq!(list(&*fresh).await, list(store).await);
    for id in ["t", "f"] {
        assert_eq!(all_events(&*fresh, id).await, all_events(store, id).await, "{id}");
    }
    // The version log came back too: forks at versions, and pops noticed.
    fresh.fork(fork_request("t", ForkPoint::Version(3), "g")).await.unwrap();
    assert_eq!(all_events(&*fresh, "g").await.1, texts(&[batch(1, 2), batch(2, 2)].concat()));
    assert_eq!(
        fresh.fork(fork_request("t", ForkPoint::Version(1), "h")).await.unwrap_err(),
        out_of_range("atVersion", "events of version 1 were popped since, so its events are gone")
    );
    assert!(fresh.rewound_since("t", 1, 3).await.unwrap());
    assert!(!fresh.rewound_since("t", 2, 2).await.unwrap());
    assert!(!fresh.rewound_since("t", 0, 2).await.unwrap());
    assert_eq!(pop(&*fresh, "t", Some(3), 4, T0 + 2).await.1, 4);
    assert_eq!(store.append("t", Some(3), &EventLog::new(), T0).await.unwrap_err(), conflict("t", 4));
    assert_eq!(all_events(store, "t").await.1, Vec::<String>::new());
}

pub async fn concurrent_pops_and_appends_all_land_once(b: Backing) {
    const ROUNDS: u64 = 40;
    let (one, two) = b.two_writers().await;
    open(&*one, "race", T0).await;
    append(&*one, "race", None, &batch(0, 2 * ROUNDS)).await;
    // Without expectedVersion every change lands, each once.
    let appender = {
        let one = one.clone();
        tokio::spawn(async move {
            for n in 1..=ROUNDS {
                one.append("race", None, &log(&batch(n, 2)), T0).await.unwrap_or_else(|e| panic!("append {n}: {e}"));
            }
        })
    };
    let popper = {
        let two = two.clone();
        tokio::spawn(async move {
            let mut removed = 0;
            for n in 1..=ROUNDS {
                let popped = two.pop("race", None, 1, T0).await.unwrap_or_else(|e| panic!("pop {n}: {e}"));
                assert_eq!(popped.events.len(), 1);
                removed += 1;
            }
            removed
        })
    };
    appender.await.unwrap();
    let removed = popper.await.unwrap();
    let (rec, events) = one.events_from("race", 0).await.unwrap();
    let events = owned(&events);
    assert_eq!((rec.version, rec.event_count), (1 + 2 * ROUNDS, 2 * ROUNDS + 2 * ROUNDS - removed));
    assert_eq!(events.len() as u64, rec.event_count);
    assert_eq!(texts(&events), texts(&two.events_from("race", 0).await.unwrap().1));
    // With expectedVersion a pop and an append racing for one version have one winner.
    for round in 0..ROUNDS {
        let version = one.record("race").await.unwrap().unwrap().version;
        let (a, p) = tokio::join!(
            one.append("race", Some(version), &log(&batch(500 + round, 1)), T0),
            two.pop("race", Some(version), 1, T0),
        );
        match (&a, &p) {
            (Ok(won), Err(lost)) => assert_eq!((won.version, lost), (version + 1, &conflict("race", version + 1))),
            (Err(lost), Ok(won)) => assert_eq!((won.version, lost), (version + 1, &conflict("race", version + 1))),
            _ => panic!("round {round}: exactly one change may win: {a:?} {p:?}"),
        }
    }
    let (rec, events) = two.events_from("race", 0).await.unwrap();
    let events = owned(&events);
    assert_eq!((rec.version, rec.event_count), (1 + 3 * ROUNDS, events.len() as u64));
}

pub async fn a_service_notices_pops_by_another_instance(b: Backing) {
    let (one, two) = b.two_writers().await;
    let (writer, reader) = (ThreadService::new(one, Limits::default()), ThreadService::new(two, Limits::default()));
    let events = |tag: u64| {
        let values = (0..3)
            .map(|i| json!({"type": "message", "iteration": tag, "role": "user", "content": format!("{tag}.{i}")}));
        values.collect::<Vec<_>>()
    };
    writer.open(Some("shared".into()), None, None).await.unwrap();
    writer.append("shared", writer.validate_events(events(1)).unwrap(), None).await.unwrap();
    assert_eq!(reader.snapshot("shared").await.unwrap().1.len(), 3);
    // Pop two and append two: the count is back where the reader saw it, the events are not.
    let (popped, record) = writer.pop("shared", 2, Some(1)).await.unwrap();
    assert_eq!((popped.len(), record.version, record.event_count), (2, 2, 1));
    writer.append("shared", writer.validate_events(events(2)[..2].to_vec()).unwrap(), Some(2)).await.unwrap();
    if b.store.is_shared() {
        // The reader appends without reading first: its append lands after the writer's
        // changes, and what it holds afterwards is the store's thread, not its own stale one.
        let appended = reader.append("shared", reader.validate_events(events(3)[..1].to_vec()).unwrap(), None).await;
        assert_eq!(appended.map(|r| (r.version, r.event_count)), Ok((4, 4)));
        let (wrec, wevents) = writer.snapshot("shared").await.unwrap();
        let (rrec, revents) = reader.snapshot("shared").await.unwrap();
        assert_eq!((rrec, texts(&revents)), (wrec, texts(&wevents)), "the reader caught up past a pop");
        // And the same for a reader that pops.
        writer.pop("shared", 1, None).await.unwrap();
        writer.append("shared", writer.validate_events(events(4)[..1].to_vec()).unwrap(), None).await.unwrap();
        let (popped, _) = reader.pop("shared", 1, None).await.unwrap();
        assert_eq!(texts(&popped), texts(&writer.validate_events(events(4)[..1].to_vec()).unwrap().stored));
        let (wrec, wevents) = writer.snapshot("shared").await.unwrap();
        let (rrec, revents) = reader.snapshot("shared").await.unwrap();
        assert_eq!((rrec, texts(&revents)), (wrec, texts(&wevents)), "the reader's pop");
    } else {
        eprintln!("{}: one instance, one service state; nothing to catch up", b.name);
    }
    let (_, wevents) = writer.snapshot("shared").await.unwrap();
    let n = wevents.len();
    assert_eq!(texts(&wevents)[n - 2..], texts(&writer.events_tail("shared", 2).await.unwrap().events)[..]);
}
