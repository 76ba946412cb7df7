//! A whole thread as one turn document and back (`thread/export`, `thread/import`).
//!
//! Events map to blocks one to one ([`super::events`]). What a turn holds besides its blocks
//! needs a home in the thread, so that exporting an imported document gives the same document
//! back (up to the normalization reading applies: sorted map keys, defaults filled):
//!
//! - the turn's metadata keys [`SETTINGS_KEY`] and [`METADATA_KEY`] are the thread's settings and
//!   metadata themselves;
//! - everything else — `run_id`, the other metadata keys, `data`, and which blocks came without
//!   `threadkeeper.*` marks — is kept in the thread's metadata under [`TURN_KEY`]:
//!   `{run_id?, metadata?, data?, unmarked_blocks?: [[start, end], ...]}`, written only when
//!   there is something to keep, and moved back into the turn on export.
//!
//! Why `unmarked_blocks`: a block from another tool (a geppetto file's plain `user` block, say)
//! becomes the event it describes, with iteration 0; exporting that event would add
//! `threadkeeper.iteration@v1: 0` to the block's metadata. The ranges (block positions,
//! end excluded) say which exported blocks to give back without it. Threads are append-only,
//! so positions stay valid; the mark is left in place whenever leaving it out would change
//! what the block reads back as.
//!
//! The turn's `id` is not kept: an export's id is the thread's id (which an import without
//! `threadId` took from the document).

use super::error::TurnError;
use super::events::{block_event, event_to_block, ITERATION_KEY};
use super::model::{Block, Turn};
use crate::event::AgentEvent;
use serde_json::{Map, Value};

/// Turn metadata key: the thread's settings.
pub const SETTINGS_KEY: &str = "threadkeeper.settings@v1";
/// Turn metadata key: the thread's metadata.
pub const METADATA_KEY: &str = "threadkeeper.metadata@v1";
/// Thread metadata key: the imported turn's own fields (see the module docs).
pub const TURN_KEY: &str = "threadkeeper.turn@v1";

const MARK_PREFIX: &str = "threadkeeper.";

/// A turn document taken apart into what a thread holds.
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadParts {
    pub events: Vec<AgentEvent>,
    /// The value of [`SETTINGS_KEY`], when the turn has one (checked by the caller).
    pub settings: Option<Value>,
    /// The thread's metadata: [`METADATA_KEY`]'s object plus the [`TURN_KEY`] record; `None`
    /// when the turn has neither.
    pub metadata: Option<Map<String, Value>>,
}

/// The thread a turn describes. Fails, naming the field relative to the turn, on a block that
/// does not convert or on a malformed [`METADATA_KEY`].
pub fn turn_to_thread(turn: &Turn) -> Result<ThreadParts, TurnError> {
    let mut events = Vec::with_capacity(turn.blocks.len());
    let ThreadFields { settings, metadata } = turn_to_thread_each(turn.clone(), |event| {
        events.push(event);
        Ok::<_, TurnError>(())
    })?;
    Ok(ThreadParts { events, settings, metadata })
}

/// What a thread holds from a turn besides its events.
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadFields {
    /// The value of [`SETTINGS_KEY`], when the turn has one (checked by the caller).
    pub settings: Option<Value>,
    /// As [`ThreadParts::metadata`].
    pub metadata: Option<Map<String, Value>>,
}

/// [`turn_to_thread`] handing each event to `each` as it is made, in order, instead of
/// collecting them. The turn is taken apart as it goes, each block dropped once its event is
/// made, so a big document's blocks and events are never all held at once (an import's peak).
/// Stops at the first error, `each`'s own included.
pub fn turn_to_thread_each<E: From<TurnError>>(
    mut turn: Turn,
    mut each: impl FnMut(AgentEvent) -> Result<(), E>,
) -> Result<ThreadFields, E> {
    let blocks = std::mem::take(&mut turn.blocks);
    let mut unmarked = UnmarkedRanges::default();
    for (i, block) in blocks.into_iter().enumerate() {
        let event = block_event(i, &block)?;
        unmarked.note(i, &block, &event);
        drop(block);
        each(event)?;
    }
    let mut metadata = match turn.metadata.shift_remove(METADATA_KEY) {
        None => None,
        Some(Value::Object(map)) => Some(map),
        Some(_) => return Err(TurnError::invalid(format!("metadata.{METADATA_KEY}"), "must be an object").into()),
    };
    let settings = turn.metadata.shift_remove(SETTINGS_KEY);
    if let Some(record) = turn_record(&turn, unmarked.0) {
        let metadata = metadata.get_or_insert_with(Map::new);
        if metadata.contains_key(TURN_KEY) {
            let reason = "is reserved for the turn's own fields (run_id, metadata, data)";
            return Err(TurnError::invalid(format!("metadata.{METADATA_KEY}.{TURN_KEY}"), reason).into());
        }
        metadata.insert(TURN_KEY.into(), Value::Object(record));
    }
    Ok(ThreadFields { settings, metadata })
}

/// The thread as one turn: its id, one block per event, `settings` (when given) and the
/// thread's metadata under their keys, and the turn fields an import kept put back.
pub fn thread_to_turn(
    thread_id: &str,
    events: &[AgentEvent],
    settings: Option<Value>,
    metadata: &Map<String, Value>,
) -> Turn {
    let mut turn = Turn::new(thread_id);
    turn.blocks = events.iter().map(event_to_block).collect();
    let mut metadata = metadata.clone();
    let record = match metadata.get(TURN_KEY).and_then(TurnRecord::read) {
        Some(record) => {
            metadata.shift_remove(TURN_KEY);
            record
        }
        None => TurnRecord::default(),
    };
    if let Some(settings) = settings {
        turn.metadata.insert(SETTINGS_KEY.into(), settings);
    }
    if !metadata.is_empty() {
        turn.metadata.insert(METADATA_KEY.into(), Value::Object(metadata));
    }
    turn.run_id = record.run_id;
    turn.metadata.extend(record.metadata);
    turn.data = record.data;
    for (start, end) in record.unmarked_blocks {
        for block in turn.blocks.iter_mut().take(end).skip(start) {
            unmark(block);
        }
    }
    turn
}

/// What [`TURN_KEY`] holds, read back.
#[derive(Default)]
struct TurnRecord {
    run_id: String,
    metadata: Map<String, Value>,
    data: Map<String, Value>,
    unmarked_blocks: Vec<(usize, usize)>,
}

impl TurnRecord {
    /// The record, if `value` is one this module wrote (anything else stays plain metadata).
    fn read(value: &Value) -> Option<TurnRecord> {
        let mut record = TurnRecord::default();
        for (key, value) in value.as_object()? {
            match (key.as_str(), value) {
                ("run_id", Value::String(s)) => record.run_id = s.clone(),
                ("metadata", Value::Object(m)) => record.metadata = m.clone(),
                ("data", Value::Object(m)) => record.data = m.clone(),
                ("unmarked_blocks", Value::Array(ranges)) => {
                    for range in ranges {
                        let pair = range.as_array().filter(|p| p.len() == 2)?;
                        let bound = |v: &Value| v.as_u64().and_then(|n| usize::try_from(n).ok());
                        record.unmarked_blocks.push((bound(&pair[0])?, bound(&pair[1])?));
                    }
                }
                _ => return None,
            }
        }
        Some(record)
    }
}

/// The [`TURN_KEY`] record for a turn being imported (its blocks taken out, and the settings
/// and thread metadata keys), with the blocks' `ranges` without marks, if it has anything to keep.
fn turn_record(turn: &Turn, ranges: Vec<(usize, usize)>) -> Option<Map<String, Value>> {
    let mut record = Map::new();
    if !turn.run_id.is_empty() {
        record.insert("run_id".into(), Value::String(turn.run_id.clone()));
    }
    if !turn.metadata.is_empty() {
        record.insert("metadata".into(), Value::Object(turn.metadata.clone()));
    }
    if !turn.data.is_empty() {
        record.insert("data".into(), Value::Object(turn.data.clone()));
    }
    if !ranges.is_empty() {
        let ranges = ranges.into_iter().map(|(start, end)| Value::from(vec![start, end])).collect();
        record.insert("unmarked_blocks".into(), Value::Array(ranges));
    }
    (!record.is_empty()).then_some(record)
}

/// Positions (as `[start, end)` ranges) of blocks that export with an iteration mark they did
/// not have, and read back the same without it.
#[derive(Default)]
struct UnmarkedRanges(Vec<(usize, usize)>);

impl UnmarkedRanges {
    /// Notes block `i`, which became `event`.
    fn note(&mut self, i: usize, block: &Block, event: &AgentEvent) {
        if block.metadata.contains_key(ITERATION_KEY) {
            return;
        }
        let mut exported = event_to_block(event);
        if !unmark(&mut exported) {
            return;
        }
        match self.0.last_mut() {
            Some((_, end)) if *end == i => *end = i + 1,
            _ => self.0.push((i, i + 1)),
        }
    }
}

/// Drops a block's iteration mark when it is its only `threadkeeper.*` key and says 0: such a
/// block reads back as the same event without it. Returns whether it did.
fn unmark(block: &mut Block) -> bool {
    let only_mark = block.metadata.keys().filter(|k| k.starts_with(MARK_PREFIX)).count() == 1;
    let zero = block.metadata.get(ITERATION_KEY).and_then(Value::as_u64) == Some(0);
    if only_mark && zero {
        block.metadata.shift_remove(ITERATION_KEY);
        return true;
    }
    false
}
