//! The blob rules (src/store/blobs/mod.rs) as every store must keep them.

use super::{all_events, fork_request, open, pop, record, stored, Backing, StoredEvent, T0};
use bytes::Bytes;
use serde_json::json;
use threadkeeper::media::{Blob, BlobId, BlobInfo};
use threadkeeper::store::{AppendBlobs, Appended, ForkPoint, Store, StoreError};

/// A blob of `size` bytes that no compressor shrinks (as a PNG's are), differing by `seed`.
pub fn image(seed: u64, size: usize) -> Blob {
    let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    while bytes.len() < size {
        // xorshift64*: cheap bytes that look random.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        bytes.extend_from_slice(&state.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
    }
    bytes.truncate(size);
    let info = BlobInfo {
        id: BlobId::of(&bytes),
        media_type: "image/png".into(),
        size: size as u64,
        dimensions: Some((1280, 800)),
    };
    Blob { info, bytes: Bytes::from(bytes) }
}

/// A user message showing the blob, as the service stores one.
fn showing(blob: &BlobInfo) -> StoredEvent {
    stored(json!({"type": "message", "iteration": 1, "role": "user", "content": [
        {"type": "image", "blob": blob.id.as_str(), "mediaType": blob.media_type, "size": blob.size,
         "width": 1280, "height": 800},
    ]}))
}

/// Appends one event showing `blob`, its bytes coming along when `with_bytes`.
async fn append_showing(
    store: &dyn Store,
    thread_id: &str,
    blob: &Blob,
    with_bytes: bool,
) -> Result<Appended, StoreError> {
    let blobs = AppendBlobs {
        new: if with_bytes { vec![blob.clone()] } else { Vec::new() },
        named: vec![blob.info.id.clone()],
    };
    store.append_with_blobs(thread_id, None, &super::log(&[showing(&blob.info)]), &blobs, T0).await
}

async fn held(store: &dyn Store, blob: &Blob) -> bool {
    match store.blob(&blob.info.id).await.unwrap_or_else(|e| panic!("blob: {e}")) {
        Some(found) => {
            assert_eq!(found, *blob, "a held blob comes back as it went in");
            true
        }
        None => false,
    }
}

pub async fn a_blob_put_twice_is_kept_once(b: Backing) {
    let store = &*b.store;
    let blob = image(1, 3_000);
    assert_eq!(store.blob_info(&blob.info.id).await.unwrap(), None);
    store.put_blob(&blob).await.unwrap();
    // The same bytes again, said to be something else: the first stays.
    let mut again = blob.clone();
    again.info.media_type = "application/octet-stream".into();
    again.info.dimensions = None;
    store.put_blob(&again).await.unwrap();
    assert!(held(store, &blob).await);
    assert_eq!(store.blob_info(&blob.info.id).await.unwrap(), Some(blob.info.clone()));
    // A blob put and never named is kept, whatever happens to threads.
    open(store, "t", T0).await;
    assert!(store.delete("t").await.unwrap());
    assert!(held(store, &blob).await);
    let unknown = image(2, 10);
    assert_eq!(store.blob(&unknown.info.id).await.unwrap(), None);
}

pub async fn an_append_naming_a_missing_blob_changes_nothing(b: Backing) {
    let store = &*b.store;
    let (held_one, arriving, missing) = (image(1, 2_000), image(2, 2_000), image(3, 2_000));
    store.put_blob(&held_one).await.unwrap();
    open(store, "t", T0).await;
    append_showing(store, "t", &held_one, false).await.unwrap();
    let before = all_events(store, "t").await;
    let blobs = AppendBlobs {
        new: vec![arriving.clone()],
        named: vec![held_one.info.id.clone(), arriving.info.id.clone(), missing.info.id.clone()],
    };
    let events = super::log(&[showing(&held_one.info), showing(&arriving.info), showing(&missing.info)]);
    let refused = store.append_with_blobs("t", None, &events, &blobs, T0 + 1).await;
    assert_eq!(refused, Err(StoreError::BlobMissing { blob: missing.info.id.to_string() }));
    assert_eq!(all_events(store, "t").await, before, "the thread is as it was");
    assert!(!held(store, &arriving).await, "the append's new blob was not kept");
    // A version conflict comes before the blobs are looked at, as for any append.
    let conflict = store.append_with_blobs("t", Some(0), &events, &blobs, T0 + 1).await;
    assert_eq!(conflict, Err(StoreError::VersionConflict { thread_id: "t".into(), current_version: 1 }));
    let nowhere = append_showing(store, "nowhere", &held_one, false).await;
    assert_eq!(nowhere, Err(StoreError::NotFound { thread_id: "nowhere".into() }));
}

pub async fn new_blobs_are_kept_with_their_append(b: Backing) {
    let store = &*b.store;
    let blob = image(1, 40_000);
    open(store, "t", T0).await;
    let appended = append_showing(store, "t", &blob, true).await.unwrap();
    assert_eq!((appended.version, appended.event_count), (1, 1));
    assert!(held(store, &blob).await);
    assert_eq!(store.blob_info(&blob.info.id).await.unwrap(), Some(blob.info.clone()));
    assert_eq!(all_events(store, "t").await.1, vec![showing(&blob.info).json().to_owned()]);
    // Another thread names it by id alone, and the same bytes again change nothing.
    open(store, "u", T0).await;
    append_showing(store, "u", &blob, false).await.unwrap();
    append_showing(store, "u", &blob, true).await.unwrap();
    assert!(held(store, &blob).await);
}

pub async fn blobs_outlive_the_instance(b: Backing) {
    let blob = image(1, 20_000);
    open(&*b.store, "t", T0).await;
    append_showing(&*b.store, "t", &blob, true).await.unwrap();
    let Some(fresh) = b.another().await else {
        eprintln!("{}: no storage outside the instance; blobs live as long as it", b.name);
        return;
    };
    assert!(held(&*fresh, &blob).await);
    // The fresh instance knows who names it: deleting the thread there frees it.
    assert!(fresh.delete("t").await.unwrap());
    assert!(!held(&*fresh, &blob).await);
    assert!(!held(&*b.store, &blob).await);
}

pub async fn a_fork_shares_its_sources_blobs(b: Backing) {
    let store = &*b.store;
    let (early, late) = (image(1, 5_000), image(2, 5_000));
    open(store, "source", T0).await;
    append_showing(store, "source", &early, true).await.unwrap();
    append_showing(store, "source", &late, true).await.unwrap();
    // A fork of the first event alone still names both: a thread names what it ever named.
    store.fork(fork_request("source", ForkPoint::Events(1), "fork")).await.unwrap();
    assert!(store.delete("source").await.unwrap());
    assert!(held(store, &early).await && held(store, &late).await, "the fork names both");
    assert!(store.delete("fork").await.unwrap());
    assert!(!held(store, &early).await && !held(store, &late).await, "the last thread naming them is gone");
}

pub async fn deleting_the_last_naming_thread_frees_a_blob(b: Backing) {
    let store = &*b.store;
    let (shared, own) = (image(1, 5_000), image(2, 5_000));
    for thread in ["a", "b"] {
        open(store, thread, T0).await;
        append_showing(store, thread, &shared, true).await.unwrap();
    }
    append_showing(store, "a", &own, true).await.unwrap();
    assert!(store.delete("a").await.unwrap());
    assert!(!held(store, &own).await, "only a named it");
    assert!(held(store, &shared).await, "b still names it");
    assert!(store.delete("b").await.unwrap());
    assert!(!held(store, &shared).await);
    // A freed blob comes back with the next append that brings its bytes.
    open(store, "c", T0).await;
    assert!(matches!(append_showing(store, "c", &shared, false).await, Err(StoreError::BlobMissing { .. })));
    append_showing(store, "c", &shared, true).await.unwrap();
    assert!(held(store, &shared).await);
}

pub async fn a_pop_does_not_free_a_blob(b: Backing) {
    let store = &*b.store;
    let blob = image(1, 5_000);
    open(store, "t", T0).await;
    append_showing(store, "t", &blob, true).await.unwrap();
    let (popped, version, count) = pop(store, "t", None, 1, T0 + 1).await;
    assert_eq!((popped.len(), version, count), (1, 2, 0));
    assert!(held(store, &blob).await, "the thread still names it until deleted");
    assert!(store.delete("t").await.unwrap());
    assert!(!held(store, &blob).await);
}

/// What a store may spend per reference to a blob it holds, beyond the bytes once: the event
/// naming it, its version row, and the pages they share (measured: see docs/stores.md).
pub const BYTES_PER_REFERENCE: u64 = 512;

pub async fn a_screenshot_named_a_hundred_times_is_stored_once(b: Backing) {
    const SIZE: usize = 250_000;
    const REFERENCES: u64 = 100;
    let store = &*b.store;
    let screenshot = image(7, SIZE);
    let threads = ["s0", "s1", "s2"];
    for thread in threads {
        open(store, thread, T0).await;
    }
    // Every table and index gets its first pages before the measure, so that it sees what the
    // references cost, not what a store's first blob costs once.
    open(store, "warm-up", T0).await;
    append_showing(store, "warm-up", &image(8, 3_000), true).await.unwrap();
    let before = b.size().await;
    for i in 0..REFERENCES {
        // Each turn brings the screenshot's bytes again, as a host that sends it every turn.
        append_showing(store, threads[i as usize % 3], &screenshot, true).await.unwrap();
    }
    let after = b.size().await;
    assert!(held(store, &screenshot).await);
    for thread in threads {
        assert_eq!(record(store, thread).await.unwrap().event_count, if thread == "s0" { 34 } else { 33 });
    }
    let (Some(before), Some(after)) = (before, after) else {
        eprintln!("{}: no storage to measure; the blob is held once by construction", b.name);
        return;
    };
    let growth = after - before;
    eprintln!(
        "{}: {REFERENCES} references to a {SIZE}-byte blob grew the store by {growth} bytes: the blob and {} per reference",
        b.name,
        (growth as i64 - SIZE as i64) / REFERENCES as i64
    );
    assert!(growth >= SIZE as u64, "{}: the blob's bytes are stored ({growth} bytes grown)", b.name);
    // Pages hold a little less than their size of a blob's bytes (PostgreSQL's TOAST: four
    // chunks of 1,996 bytes to an 8 KiB page), so the blob once may take up to 1/16 more.
    let once = SIZE as u64 + SIZE as u64 / 16;
    assert!(
        growth <= once + REFERENCES * BYTES_PER_REFERENCE,
        "{}: grew by {growth} bytes, more than the blob once ({once} with its pages) and \
         {BYTES_PER_REFERENCE} per reference",
        b.name
    );
}

/// One writer deletes the last thread naming a blob while another appends naming it: either
/// the append wins (and the blob stays) or it is refused as missing; never is a blob that a
/// remaining thread names freed.
pub async fn deletes_racing_appends_never_free_a_named_blob(b: Backing) {
    let (one, two) = b.two_writers().await;
    const ROUNDS: u64 = 20;
    let mut kept = 0;
    for round in 0..ROUNDS {
        let blob = image(100 + round, 3_000);
        let (doomed, survivor) = (format!("doomed{round}"), format!("survivor{round}"));
        open(&*one, &doomed, T0).await;
        open(&*two, &survivor, T0).await;
        append_showing(&*one, &doomed, &blob, true).await.unwrap();
        // Each round gives the delete a different head start, so that the append lands before
        // it, between it and the free, and after the free.
        // (Yields for the stores in this process, milliseconds for a database's round trips.)
        let (yields, millis) = ((round % 5) * 20, round / 5 % 4);
        let deleter = {
            let (one, doomed) = (one.clone(), doomed.clone());
            tokio::spawn(async move { one.delete(&doomed).await.unwrap() })
        };
        for _ in 0..yields {
            tokio::task::yield_now().await;
        }
        if millis > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(millis)).await;
        }
        let appended = append_showing(&*two, &survivor, &blob, false).await;
        assert!(deleter.await.unwrap());
        match appended {
            Ok(_) => {
                kept += 1;
                assert!(held(&*one, &blob).await, "round {round}: {survivor} names the blob");
                assert!(held(&*two, &blob).await, "round {round}: {survivor} names the blob");
            }
            Err(StoreError::BlobMissing { .. }) => {
                assert_eq!(record(&*two, &survivor).await.unwrap().event_count, 0, "round {round}");
            }
            Err(e) => panic!("round {round}: {e}"),
        }
    }
    eprintln!("{}: the append named the blob first in {kept} of {ROUNDS} rounds", b.name);
    // Every blob a remaining thread shows is held, on either instance.
    for store in [&one, &two] {
        for thread in store.list().await.unwrap() {
            let events = all_events(&**store, &thread.thread_id).await.1;
            for round in 0..ROUNDS {
                let blob = image(100 + round, 3_000);
                if events.iter().any(|e| e.contains(blob.info.id.hex())) {
                    assert!(held(&**store, &blob).await, "{} shows a freed blob", thread.thread_id);
                }
            }
        }
    }
}
