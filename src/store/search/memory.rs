//! The memory store's index: per thread, each event's words and an inverted index from word
//! to the events holding it. A fork shares its prefix's words (`Arc`) and rebuilds only the
//! postings; a pop takes the popped events off the postings' ends.

use super::{SearchRequest, StoredHit, RANK_WINDOW};
use crate::search::bm25::{score, Corpus};
use crate::search::{Query, SearchableEvent, Term};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One event as the index holds it.
#[derive(Debug)]
pub(crate) struct IndexedEvent {
    words: Vec<String>,
    event_type: String,
    timestamp: Option<f64>,
}

impl IndexedEvent {
    pub(crate) fn of(body: &str) -> Arc<Self> {
        let event = SearchableEvent::of_json(body);
        Arc::new(match event {
            Some(e) => {
                IndexedEvent { words: crate::search::words(&e.text), event_type: e.event_type, timestamp: e.timestamp }
            }
            None => IndexedEvent { words: Vec::new(), event_type: String::new(), timestamp: None },
        })
    }
}

/// One thread's index.
#[derive(Debug, Default)]
pub(crate) struct ThreadIndex {
    events: Vec<Arc<IndexedEvent>>,
    /// Word → positions of the events holding it, ascending.
    postings: BTreeMap<String, Vec<u32>>,
    words: u64,
}

impl ThreadIndex {
    pub(crate) fn push(&mut self, event: Arc<IndexedEvent>) {
        let seq = self.events.len() as u32;
        for word in &event.words {
            let list = self.postings.entry(word.clone()).or_default();
            if list.last() != Some(&seq) {
                list.push(seq);
            }
        }
        self.words += event.words.len() as u64;
        self.events.push(event);
    }

    /// Keeps the first `len` events.
    pub(crate) fn truncate(&mut self, len: usize) {
        while self.events.len() > len {
            let event = self.events.pop().expect("longer than len");
            let seq = self.events.len() as u32;
            self.words -= event.words.len() as u64;
            for word in &event.words {
                if let Some(list) = self.postings.get_mut(word) {
                    if list.last() == Some(&seq) {
                        list.pop();
                    }
                    if list.is_empty() {
                        self.postings.remove(word);
                    }
                }
            }
        }
    }

    /// A new index of the first `len` events (a fork), sharing their words.
    pub(crate) fn prefix(&self, len: usize) -> ThreadIndex {
        let mut index = ThreadIndex::default();
        for event in &self.events[..len.min(self.events.len())] {
            index.push(event.clone());
        }
        index
    }

    /// Events holding the term's first word (a superset of the term's matches), ascending.
    fn candidates(&self, term: &Term) -> Vec<u32> {
        let first = &term.words[0];
        if term.prefix && term.words.len() == 1 {
            let mut seqs: Vec<u32> = self
                .postings
                .range(first.clone()..)
                .take_while(|(word, _)| word.starts_with(first.as_str()))
                .flat_map(|(_, seqs)| seqs.iter().copied())
                .collect();
            seqs.sort_unstable();
            seqs.dedup();
            seqs
        } else {
            self.postings.get(first).cloned().unwrap_or_default()
        }
    }

    /// Events matching the term, ascending.
    fn matching(&self, term: &Term) -> Vec<u32> {
        let exact_by_postings = term.words.len() == 1;
        self.candidates(term)
            .into_iter()
            .filter(|&seq| exact_by_postings || term.first_match(&self.events[seq as usize].words).is_some())
            .collect()
    }
}

/// A thread's index with what a search reports of it.
pub(crate) struct Searched<'a> {
    pub thread_id: &'a str,
    /// Creation order, for ties.
    pub serial: u64,
    pub index: &'a ThreadIndex,
    /// The event's JSON at a position.
    pub body: &'a dyn Fn(usize) -> String,
}

/// All hits of `request` over `threads` (every thread of the store, for the statistics),
/// ranked in windows of the newest matches ([`RANK_WINDOW`]), the page's worth; and whether
/// more follow.
pub(crate) fn search(threads: &[Searched<'_>], request: &SearchRequest) -> (Vec<StoredHit>, bool) {
    let query: &Query = &request.query;
    let required: Vec<&Term> = query.required().collect();
    let per_thread: Vec<Vec<Vec<u32>>> =
        threads.iter().map(|t| required.iter().map(|term| t.index.matching(term)).collect()).collect();
    let events: u64 = threads.iter().map(|t| t.index.events.len() as u64).sum();
    let words: u64 = threads.iter().map(|t| t.index.words).sum();
    let corpus = Corpus { events, average_words: words as f64 / events.max(1) as f64 };
    let documents_with: Vec<u64> =
        (0..required.len()).map(|k| per_thread.iter().map(|lists| lists[k].len() as u64).sum()).collect();
    let mut ranked: Vec<(f64, u64, u32, usize)> = Vec::new();
    for (t, (thread, lists)) in threads.iter().zip(&per_thread).enumerate() {
        if request.thread_ids.as_ref().is_some_and(|ids| !ids.iter().any(|id| id == thread.thread_id)) {
            continue;
        }
        let mut lists = lists.iter();
        let Some(first) = lists.next() else { continue };
        let mut seqs = first.clone();
        for list in lists {
            seqs.retain(|seq| list.binary_search(seq).is_ok());
        }
        for seq in seqs {
            let event = &thread.index.events[seq as usize];
            if query.excluded().any(|term| term.first_match(&event.words).is_some())
                || !request.admits(&event.event_type, event.timestamp)
            {
                continue;
            }
            let relevance = score(query, &event.words, &corpus, &documents_with);
            ranked.push((relevance, thread.serial, seq, t));
        }
    }
    // Windows of the newest matches first (see RANK_WINDOW), then relevance within each.
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)));
    let window = |newest_first: usize| newest_first / RANK_WINDOW;
    let mut ranked: Vec<(usize, (f64, u64, u32, usize))> =
        ranked.into_iter().enumerate().map(|(i, hit)| (window(i), hit)).collect();
    ranked.sort_by(|(wa, a), (wb, b)| wa.cmp(wb).then(b.0.total_cmp(&a.0)).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let more = ranked.len() > request.offset + request.limit;
    let hits = ranked
        .into_iter()
        .skip(request.offset)
        .take(request.limit)
        .map(|(_, (relevance, _, seq, t))| StoredHit {
            thread_id: threads[t].thread_id.to_owned(),
            event_index: seq as u64,
            score: relevance,
            body: (threads[t].body)(seq as usize),
        })
        .collect();
    (hits, more)
}
