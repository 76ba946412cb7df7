//! A thread's events as compact JSON text, held in a few large shared chunks.
//!
//! One allocation per event (a box for its text, an `Arc` around it, a pointer in each list
//! holding it) cost about as much memory again as the text itself. An [`EventLog`] instead
//! keeps the text of many events in one chunk with a 4-byte end offset per event; a log is a
//! list of ranges over such chunks. Chunks are immutable and shared (`Arc`), so a slice, a
//! fork, a page of `thread/events` and the in-memory store's copy of a thread all point at the
//! same bytes, and truncating or slicing a log copies nothing.
//!
//! Appends add a chunk per batch. Small neighbouring chunks are merged as they come, like the
//! digits of a binary counter (a range merges with the one before it when that one is no
//! larger), up to [`MERGE_UP_TO_BYTES`]: an agent appending a few events per step ends up with
//! chunks of that size, each byte copied a handful of times, and a log of `n` bytes holds about
//! `n / MERGE_UP_TO_BYTES` ranges plus a few.

use crate::event::{AgentEvent, EventError};
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

/// Neighbouring ranges whose text together stays within this many bytes are merged.
pub const MERGE_UP_TO_BYTES: usize = 64 << 10;

/// Immutable text of consecutive events: event `i` is `text[ends[i - 1]..ends[i]]`.
struct Chunk {
    text: Box<str>,
    ends: Box<[u32]>,
}

impl Chunk {
    fn start_of(&self, index: usize) -> usize {
        if index == 0 {
            0
        } else {
            self.ends[index - 1] as usize
        }
    }

    fn event(&self, index: usize) -> &str {
        &self.text[self.start_of(index)..self.ends[index] as usize]
    }

    /// The bytes of events `range`.
    fn bytes(&self, range: &Range<u32>) -> usize {
        if range.is_empty() {
            0
        } else {
            self.ends[range.end as usize - 1] as usize - self.start_of(range.start as usize)
        }
    }
}

/// Some consecutive events of one chunk.
#[derive(Clone)]
struct Piece {
    chunk: Arc<Chunk>,
    events: Range<u32>,
    /// Position in the log of this piece's first event.
    first: usize,
}

impl Piece {
    fn len(&self) -> usize {
        self.events.len()
    }

    fn bytes(&self) -> usize {
        self.chunk.bytes(&self.events)
    }
}

/// Events (their compact JSON, validated before they got here) in order; cloning and slicing
/// share the text.
#[derive(Clone, Default)]
pub struct EventLog {
    pieces: Vec<Piece>,
    len: usize,
    bytes: usize,
}

impl EventLog {
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of the events' JSON text.
    pub fn json_bytes(&self) -> usize {
        self.bytes
    }

    /// The JSON text of event `index`.
    pub fn get(&self, index: usize) -> Option<&str> {
        if index >= self.len {
            return None;
        }
        let at = self.pieces.partition_point(|p| p.first + p.len() <= index);
        let piece = &self.pieces[at];
        Some(piece.chunk.event(piece.events.start as usize + (index - piece.first)))
    }

    /// Event `index` parsed again; the text was validated on its way in, so this cannot fail.
    pub fn parse(&self, index: usize) -> Option<AgentEvent> {
        self.get(index).map(parse_validated)
    }

    /// Every event, parsed again.
    pub fn parse_all(&self) -> Vec<AgentEvent> {
        self.iter().map(parse_validated).collect()
    }

    /// Every event's JSON text, in order.
    pub fn iter(&self) -> Iter<'_> {
        Iter { pieces: self.pieces.iter(), current: None, remaining: self.len }
    }

    /// Events `range` (clamped to the log), sharing the text.
    pub fn slice(&self, range: Range<usize>) -> EventLog {
        let end = range.end.min(self.len);
        let start = range.start.min(end);
        let mut out = EventLog::new();
        let first = self.pieces.partition_point(|p| p.first + p.len() <= start);
        for piece in &self.pieces[first..] {
            if piece.first >= end {
                break;
            }
            let from = start.saturating_sub(piece.first);
            let to = (end - piece.first).min(piece.len());
            out.push_piece(piece.chunk.clone(), piece.events.start + from as u32..piece.events.start + to as u32);
        }
        out
    }

    /// The events at `positions` (each below `len`), in that order, sharing the text; runs of
    /// consecutive positions become one range.
    pub fn gather(&self, positions: impl IntoIterator<Item = usize>) -> EventLog {
        let mut out = EventLog::new();
        for at in positions {
            let piece = &self.pieces[self.pieces.partition_point(|p| p.first + p.len() <= at)];
            let index = piece.events.start + (at - piece.first) as u32;
            match out.pieces.last_mut() {
                Some(last) if Arc::ptr_eq(&last.chunk, &piece.chunk) && last.events.end == index => {
                    last.events.end += 1;
                    out.len += 1;
                    out.bytes += piece.chunk.event(index as usize).len();
                }
                _ => out.push_piece(piece.chunk.clone(), index..index + 1),
            }
        }
        out
    }

    /// Appends `other`'s events, sharing its text, and merges small ranges at the end.
    pub fn extend(&mut self, other: &EventLog) {
        for piece in &other.pieces {
            self.push_piece(piece.chunk.clone(), piece.events.clone());
            self.merge_tail();
        }
    }

    /// Keeps the first `len` events.
    pub fn truncate(&mut self, len: usize) {
        if len < self.len {
            *self = self.slice(0..len);
        }
    }

    /// Removes the events from `at` on and returns them.
    pub fn split_off(&mut self, at: usize) -> EventLog {
        let tail = self.slice(at..self.len);
        self.truncate(at);
        tail
    }

    /// Number of chunk ranges the log is made of (for tests and measurements).
    pub fn ranges(&self) -> usize {
        self.pieces.len()
    }

    fn push_piece(&mut self, chunk: Arc<Chunk>, events: Range<u32>) {
        if events.is_empty() {
            return;
        }
        let piece = Piece { chunk, events, first: self.len };
        self.len += piece.len();
        self.bytes += piece.bytes();
        self.pieces.push(piece);
    }

    /// Merges the last two ranges into one new chunk while the one before is no larger than
    /// the last and both fit in [`MERGE_UP_TO_BYTES`].
    fn merge_tail(&mut self) {
        while let [.., before, last] = self.pieces.as_slice() {
            let (a, b) = (before.bytes(), last.bytes());
            if a > b || a + b > MERGE_UP_TO_BYTES {
                break;
            }
            let mut builder = EventLogBuilder::with_capacity(before.len() + last.len(), a + b);
            for piece in [before, last] {
                for index in piece.events.clone() {
                    builder.push_validated(piece.chunk.event(index as usize));
                }
            }
            let merged = builder.finish_chunk();
            let first = before.first;
            self.pieces.truncate(self.pieces.len() - 2);
            let count = merged.ends.len() as u32;
            self.pieces.push(Piece { chunk: Arc::new(merged), events: 0..count, first });
        }
    }
}

/// Parses text that was validated as an event when it entered a log.
pub(crate) fn parse_validated(json: &str) -> AgentEvent {
    let fields = serde_json::from_str(json).expect("logged events are JSON objects");
    AgentEvent::from_validated_fields(fields)
}

impl fmt::Debug for EventLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq for EventLog {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

/// Written as a JSON array of the events, their text as it is.
impl serde::Serialize for EventLog {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = serializer.serialize_seq(Some(self.len))?;
        for json in self.iter() {
            // Valid JSON by construction, so this borrowed raw value never fails.
            let raw: &serde_json::value::RawValue =
                serde_json::from_str(json).map_err(|e| serde::ser::Error::custom(e.to_string()))?;
            seq.serialize_element(raw)?;
        }
        seq.end()
    }
}

/// The JSON text of a log's events, in order.
pub struct Iter<'a> {
    pieces: std::slice::Iter<'a, Piece>,
    current: Option<(&'a Chunk, Range<u32>)>,
    remaining: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        loop {
            if let Some((chunk, events)) = &mut self.current {
                if let Some(index) = events.next() {
                    self.remaining -= 1;
                    return Some(chunk.event(index as usize));
                }
            }
            let piece = self.pieces.next()?;
            self.current = Some((&piece.chunk, piece.events.clone()));
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Iter<'_> {}

/// Builds a log of new events: their text goes into one chunk.
#[derive(Default)]
pub struct EventLogBuilder {
    /// UTF-8 by construction (JSON text and `&str`s only), checked once when the chunk is made.
    text: Vec<u8>,
    ends: Vec<u32>,
}

impl EventLogBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_capacity(events: usize, bytes: usize) -> Self {
        EventLogBuilder { text: Vec::with_capacity(bytes), ends: Vec::with_capacity(events) }
    }

    /// Adds the compact JSON of an event the caller has validated.
    pub fn push_validated(&mut self, json: &str) {
        self.text.extend_from_slice(json.as_bytes());
        self.end_event();
    }

    /// Validates `json` as an event (`path` names it in errors) and adds it as it is.
    pub fn push_checked(&mut self, json: &str, path: &str) -> Result<(), EventError> {
        let invalid = |e: serde_json::Error| EventError { path: path.to_string(), reason: format!("not JSON: {e}") };
        AgentEvent::from_value(serde_json::from_str(json).map_err(invalid)?, path)?;
        self.push_validated(json);
        Ok(())
    }

    /// Adds an event as its compact JSON.
    pub fn push_event(&mut self, event: &AgentEvent) {
        self.push_serialized(event.fields());
    }

    /// Adds an event given as a JSON value (the caller validates it, or drops the builder);
    /// returns the bytes of its compact JSON.
    pub fn push_value(&mut self, value: &serde_json::Value) -> usize {
        self.push_serialized(value)
    }

    fn push_serialized(&mut self, value: &impl serde::Serialize) -> usize {
        let start = self.text.len();
        // Writing JSON values into memory cannot fail.
        serde_json::to_writer(&mut self.text, value).expect("a JSON value always serializes");
        self.end_event();
        self.text.len() - start
    }

    fn end_event(&mut self) {
        // A chunk is at most one batch, and a batch is bounded by the request size limit
        // (far below 4 GiB); the check keeps that an invariant rather than an assumption.
        let end = u32::try_from(self.text.len()).expect("a chunk of events stays under 4 GiB");
        self.ends.push(end);
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn finish_chunk(self) -> Chunk {
        let text = String::from_utf8(self.text).expect("JSON text and &str are UTF-8");
        Chunk { text: text.into_boxed_str(), ends: self.ends.into_boxed_slice() }
    }

    pub fn finish(self) -> EventLog {
        let mut log = EventLog::new();
        let count = self.ends.len() as u32;
        log.push_piece(Arc::new(self.finish_chunk()), 0..count);
        log
    }
}

impl From<&[AgentEvent]> for EventLog {
    fn from(events: &[AgentEvent]) -> Self {
        let mut builder = EventLogBuilder::new();
        for event in events {
            builder.push_event(event);
        }
        builder.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn event(i: usize, pad: usize) -> String {
        format!(r#"{{"type":"message","role":"user","content":"{}","iteration":{i}}}"#, "x".repeat(pad))
    }

    fn batch(range: Range<usize>, pad: usize) -> EventLog {
        let mut builder = EventLogBuilder::new();
        for i in range {
            builder.push_validated(&event(i, pad));
        }
        builder.finish()
    }

    #[test]
    fn small_appends_merge_into_few_ranges_and_keep_every_event() {
        let mut log = EventLog::new();
        for i in 0..10_000 {
            log.extend(&batch(i..i + 1, 10));
        }
        assert_eq!(log.len(), 10_000);
        let expected: Vec<String> = (0..10_000).map(|i| event(i, 10)).collect();
        assert!(log.iter().eq(expected.iter().map(String::as_str)));
        assert_eq!(log.json_bytes(), expected.iter().map(String::len).sum::<usize>());
        // About 700 KB of text: ~11 full chunks plus the binary counter's partial ones.
        assert!(log.ranges() <= log.json_bytes() / (MERGE_UP_TO_BYTES / 2) + 16, "{} ranges", log.ranges());
    }

    #[test]
    fn big_batches_stay_one_range_each() {
        let mut log = EventLog::new();
        log.extend(&batch(0..2_000, 100));
        log.extend(&batch(2_000..4_000, 100));
        assert_eq!(log.ranges(), 2);
        assert_eq!(log.get(3_999), Some(event(3_999, 100).as_str()));
    }

    #[test]
    fn slices_gathers_and_truncation_share_text_and_keep_positions() {
        let mut log = EventLog::new();
        for i in (0..300).step_by(3) {
            log.extend(&batch(i..i + 3, 5));
        }
        let slice = log.slice(10..20);
        assert!(slice.iter().eq((10..20).map(|i| event(i, 5)).collect::<Vec<_>>().iter().map(String::as_str)));
        let gathered = log.gather([5, 6, 7, 100, 2]);
        assert_eq!(gathered.get(3), Some(event(100, 5).as_str()));
        assert_eq!(gathered.len(), 5);
        let mut cut = log.clone();
        let tail = cut.split_off(290);
        assert_eq!((cut.len(), tail.len()), (290, 10));
        assert_eq!(tail.get(0), Some(event(290, 5).as_str()));
        assert_eq!(log.len(), 300, "the original is untouched");
        assert_eq!(log.get(300), None);
    }

    #[test]
    fn serializes_as_a_json_array_of_the_texts() {
        let log = batch(0..2, 1);
        assert_eq!(serde_json::to_string(&log).unwrap(), format!("[{},{}]", event(0, 1), event(1, 1)));
    }

    proptest! {
        /// Any sequence of appends, truncations and slices reads back exactly what a plain
        /// vector of the same texts would hold.
        #[test]
        fn behaves_like_a_vector(ops in proptest::collection::vec((0usize..3, 0usize..40, 0usize..300), 1..60)) {
            let mut log = EventLog::new();
            let mut model: Vec<String> = Vec::new();
            let mut next = 0;
            for (op, n, pad) in ops {
                match op {
                    0 | 1 => {
                        log.extend(&batch(next..next + n, pad));
                        model.extend((next..next + n).map(|i| event(i, pad)));
                        next += n;
                    }
                    _ => {
                        let keep = model.len().saturating_sub(n);
                        log.truncate(keep);
                        model.truncate(keep);
                    }
                }
                prop_assert_eq!(log.len(), model.len());
                prop_assert_eq!(log.json_bytes(), model.iter().map(String::len).sum::<usize>());
                prop_assert!(log.iter().eq(model.iter().map(String::as_str)));
                for (i, text) in model.iter().enumerate().step_by(7) {
                    prop_assert_eq!(log.get(i), Some(text.as_str()));
                }
                let (a, b) = (model.len() / 3, model.len() / 2);
                prop_assert!(log.slice(a..b).iter().eq(model[a..b].iter().map(String::as_str)));
            }
        }
    }
}
