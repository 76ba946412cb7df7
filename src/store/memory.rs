//! The in-memory store: threads live as long as the process, or until closed.

use super::blobs::{AppendBlobs, MemoryBlobs};
use super::changes::{bump, ChangeSignal};
use super::history::{check_expected_version, check_pop, fork_version, prefix_len, VersionLog};
use super::search::memory::{IndexedEvent, Searched, ThreadIndex};
use super::search::{SearchPage, SearchRequest};
use super::{Appended, ForkThread, OpenThread, Popped, Store, StoreError, StoreKind, StoreResult, ThreadRecord};
use crate::event_log::EventLog;
use crate::media::{Blob, BlobId, BlobInfo};
use futures_util::future::{BoxFuture, FutureExt};
use std::collections::HashMap;
use std::sync::Mutex;
use tokio::sync::watch;

struct Entry {
    record: ThreadRecord,
    events: EventLog,
    /// The event count after each version, indexed by version (the version log).
    counts: Vec<u64>,
    /// Creation order, for `list`.
    serial: u64,
    /// The search index of `events`, built on the first search and changed with them from
    /// then on: a memory store that is never searched spends nothing on it.
    index: Option<ThreadIndex>,
}

/// Versions after `v` (indices past it) and the count at `v`, as the fork rules read them.
struct Counts<'a>(&'a [u64]);

impl VersionLog for Counts<'_> {
    fn count_at(&self, version: u64) -> StoreResult<Option<u64>> {
        Ok(self.0.get(version as usize).copied())
    }
    fn lowest_count_after(&self, version: u64) -> StoreResult<Option<u64>> {
        Ok(self.0.iter().skip(version as usize + 1).min().copied())
    }
}

/// Threads in a `HashMap`, bounded by a thread count.
pub struct MemoryStore {
    max_threads: u64,
    inner: Mutex<Inner>,
    /// Moves on after every change, for `watch_changes`.
    changes: watch::Sender<u64>,
}

#[derive(Default)]
struct Inner {
    threads: HashMap<String, Entry>,
    next_serial: u64,
    blobs: MemoryBlobs,
}

impl MemoryStore {
    pub fn new(max_threads: u64) -> Self {
        MemoryStore { max_threads, inner: Mutex::new(Inner::default()), changes: watch::Sender::new(0) }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Inner) -> T) -> T {
        // A panic while holding the lock cannot leave a half-applied change (every change is a
        // single insert or push), so a poisoned lock is still consistent.
        let mut guard = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut guard)
    }

    /// `result`, after signalling the change it reports (nothing changed on an error).
    fn changed<T, E>(&self, result: Result<T, E>) -> Result<T, E> {
        if result.is_ok() {
            bump(&self.changes);
        }
        result
    }
}

impl Store for MemoryStore {
    fn kind(&self) -> StoreKind {
        StoreKind::Memory
    }

    fn open(&self, request: OpenThread) -> BoxFuture<'_, StoreResult<ThreadRecord>> {
        let result = self.with(|inner| {
            if let Some(entry) = inner.threads.get_mut(&request.thread_id) {
                if let Some(settings) = request.settings {
                    entry.record.settings = settings;
                }
                if let Some(metadata) = request.metadata {
                    entry.record.metadata = metadata;
                }
                entry.record.updated_at = request.now;
                return Ok(entry.record.clone());
            }
            if inner.threads.len() as u64 >= self.max_threads {
                return Err(StoreError::Full { limit: self.max_threads });
            }
            let record = ThreadRecord {
                thread_id: request.thread_id.clone(),
                version: 0,
                event_count: 0,
                settings: request.settings.unwrap_or_default(),
                metadata: request.metadata.unwrap_or_default(),
                created_at: request.now,
                updated_at: request.now,
            };
            let serial = inner.next_serial;
            inner.next_serial += 1;
            let entry = Entry { record: record.clone(), events: EventLog::new(), counts: vec![0], serial, index: None };
            inner.threads.insert(request.thread_id, entry);
            Ok(record)
        });
        let result = self.changed(result);
        async move { result }.boxed()
    }

    fn record(&self, thread_id: &str) -> BoxFuture<'_, StoreResult<Option<ThreadRecord>>> {
        let result = self.with(|inner| inner.threads.get(thread_id).map(|e| e.record.clone()));
        async move { Ok(result) }.boxed()
    }

    fn events_from(&self, thread_id: &str, from: u64) -> BoxFuture<'_, StoreResult<(ThreadRecord, EventLog)>> {
        let result = self.with(|inner| match inner.threads.get(thread_id) {
            Some(entry) => {
                let from = (from as usize).min(entry.events.len());
                Ok((entry.record.clone(), entry.events.slice(from..entry.events.len())))
            }
            None => Err(StoreError::NotFound { thread_id: thread_id.to_owned() }),
        });
        async move { result }.boxed()
    }

    fn append(
        &self,
        thread_id: &str,
        expected_version: Option<u64>,
        events: &EventLog,
        now: u64,
    ) -> BoxFuture<'_, StoreResult<Appended>> {
        self.append_with_blobs(thread_id, expected_version, events, &AppendBlobs::default(), now)
    }

    fn append_with_blobs(
        &self,
        thread_id: &str,
        expected_version: Option<u64>,
        events: &EventLog,
        blobs: &AppendBlobs,
        now: u64,
    ) -> BoxFuture<'_, StoreResult<Appended>> {
        let result = self.with(|inner| {
            let Some(entry) = inner.threads.get_mut(thread_id) else {
                return Err(StoreError::NotFound { thread_id: thread_id.to_owned() });
            };
            check_expected_version(thread_id, expected_version, entry.record.version)?;
            inner.blobs.check(blobs)?;
            let entry = inner.threads.get_mut(thread_id).expect("found above");
            entry.events.extend(events);
            if let Some(index) = &mut entry.index {
                for body in events.iter() {
                    index.push(IndexedEvent::of(body));
                }
            }
            entry.record.version += 1;
            entry.record.event_count = entry.events.len() as u64;
            entry.record.updated_at = now;
            entry.counts.push(entry.record.event_count);
            let appended =
                Appended { version: entry.record.version, event_count: entry.record.event_count, updated_at: now };
            inner.blobs.record(thread_id, blobs);
            Ok(appended)
        });
        let result = self.changed(result);
        async move { result }.boxed()
    }

    fn pop(
        &self,
        thread_id: &str,
        expected_version: Option<u64>,
        count: u64,
        now: u64,
    ) -> BoxFuture<'_, StoreResult<Popped>> {
        let result = self.with(|inner| {
            let Some(entry) = inner.threads.get_mut(thread_id) else {
                return Err(StoreError::NotFound { thread_id: thread_id.to_owned() });
            };
            check_expected_version(thread_id, expected_version, entry.record.version)?;
            check_pop(count, entry.events.len() as u64)?;
            let events = entry.events.split_off(entry.events.len() - count as usize);
            if let Some(index) = &mut entry.index {
                index.truncate(entry.events.len());
            }
            entry.record.version += 1;
            entry.record.event_count = entry.events.len() as u64;
            entry.record.updated_at = now;
            entry.counts.push(entry.record.event_count);
            let record = &entry.record;
            Ok(Popped { events, version: record.version, event_count: record.event_count, updated_at: now })
        });
        let result = self.changed(result);
        async move { result }.boxed()
    }

    fn fork(&self, request: ForkThread) -> BoxFuture<'_, StoreResult<ThreadRecord>> {
        let result = self.with(|inner| {
            let Some(source) = inner.threads.get(&request.source_id) else {
                return Err(StoreError::NotFound { thread_id: request.source_id.clone() });
            };
            let prefix =
                prefix_len(request.at, source.record.version, source.events.len() as u64, &Counts(&source.counts))?;
            if inner.threads.contains_key(&request.thread_id) {
                return Err(StoreError::Exists { thread_id: request.thread_id.clone() });
            }
            if inner.threads.len() as u64 >= self.max_threads {
                return Err(StoreError::Full { limit: self.max_threads });
            }
            let version = fork_version(prefix);
            let record = ThreadRecord {
                thread_id: request.thread_id.clone(),
                version,
                event_count: prefix,
                settings: source.record.settings.clone(),
                metadata: request.metadata.unwrap_or_else(|| source.record.metadata.clone()),
                created_at: request.now,
                updated_at: request.now,
            };
            // The events' text is shared, not copied.
            let events = source.events.slice(0..prefix as usize);
            let counts = if version == 0 { vec![0] } else { vec![0, prefix] };
            let serial = inner.next_serial;
            inner.next_serial += 1;
            let index = source.index.as_ref().map(|index| index.prefix(prefix as usize));
            inner.blobs.fork(&request.source_id, &request.thread_id);
            let entry = Entry { record: record.clone(), events, counts, serial, index };
            inner.threads.insert(request.thread_id, entry);
            Ok(record)
        });
        let result = self.changed(result);
        async move { result }.boxed()
    }

    fn rewound_since(&self, thread_id: &str, version: u64, event_count: u64) -> BoxFuture<'_, StoreResult<bool>> {
        let result = self.with(|inner| match inner.threads.get(thread_id) {
            Some(entry) => Ok(Counts(&entry.counts).lowest_count_after(version)?.is_some_and(|c| c < event_count)),
            None => Err(StoreError::NotFound { thread_id: thread_id.to_owned() }),
        });
        async move { result }.boxed()
    }

    fn search(&self, request: SearchRequest) -> BoxFuture<'_, StoreResult<SearchPage>> {
        let (hits, more) = self.with(|inner| {
            for entry in inner.threads.values_mut().filter(|entry| entry.index.is_none()) {
                let mut index = ThreadIndex::default();
                for body in entry.events.iter() {
                    index.push(IndexedEvent::of(body));
                }
                entry.index = Some(index);
            }
            let mut entries: Vec<(&String, &Entry)> = inner.threads.iter().collect();
            entries.sort_by_key(|(_, e)| e.serial);
            let bodies: Vec<Box<dyn Fn(usize) -> String + '_>> = entries
                .iter()
                .map(|(_, e)| {
                    let events = &e.events;
                    Box::new(move |i: usize| events.get(i).unwrap_or_default().to_owned())
                        as Box<dyn Fn(usize) -> String>
                })
                .collect();
            let threads: Vec<Searched<'_>> = entries
                .iter()
                .zip(&bodies)
                .map(|((id, e), body)| Searched {
                    thread_id: id,
                    serial: e.serial,
                    index: e.index.as_ref().expect("built above"),
                    body: &**body,
                })
                .collect();
            super::search::memory::search(&threads, &request)
        });
        async move { Ok(SearchPage { hits, more }) }.boxed()
    }

    fn shared_events(&self, thread_id: &str) -> Option<EventLog> {
        self.with(|inner| inner.threads.get(thread_id).map(|entry| entry.events.clone()))
    }

    fn list(&self) -> BoxFuture<'_, StoreResult<Vec<ThreadRecord>>> {
        let mut entries: Vec<(u64, ThreadRecord)> =
            self.with(|inner| inner.threads.values().map(|e| (e.serial, e.record.clone())).collect());
        entries.sort_by_key(|(serial, _)| *serial);
        let records = entries.into_iter().map(|(_, r)| r).collect();
        async move { Ok(records) }.boxed()
    }

    fn delete(&self, thread_id: &str) -> BoxFuture<'_, StoreResult<bool>> {
        let removed = self.with(|inner| {
            let removed = inner.threads.remove(thread_id).is_some();
            inner.blobs.delete_thread(thread_id);
            removed
        });
        if removed {
            bump(&self.changes);
        }
        async move { Ok(removed) }.boxed()
    }

    fn put_blob(&self, blob: &Blob) -> BoxFuture<'_, StoreResult<()>> {
        self.with(|inner| inner.blobs.put(blob));
        async move { Ok(()) }.boxed()
    }

    fn blob(&self, id: &BlobId) -> BoxFuture<'_, StoreResult<Option<Blob>>> {
        let blob = self.with(|inner| inner.blobs.get(id));
        async move { Ok(blob) }.boxed()
    }

    fn blob_info(&self, id: &BlobId) -> BoxFuture<'_, StoreResult<Option<BlobInfo>>> {
        let info = self.with(|inner| inner.blobs.info(id));
        async move { Ok(info) }.boxed()
    }

    fn watch_changes(&self) -> BoxFuture<'_, StoreResult<ChangeSignal>> {
        let signal = self.changes.subscribe();
        async move { Ok(signal) }.boxed()
    }
}
