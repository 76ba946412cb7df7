//! Writing turn documents, deterministically and without touching the input.
//!
//! The output is the normalized turn (see [`normalize`](super::normalize)): an `llm_text` block
//! without a role is written with `role: assistant`, as loading would read it.
//!
//! Field order is fixed (turn: `version, id, run_id, blocks, metadata, data`; block: `id,
//! turn_id, kind, role, payload, metadata`). Empty strings and empty `metadata`/`data` maps are
//! left out; `version`, `blocks`, `kind` and `payload` are always written. The top-level keys of
//! `payload`, `metadata` and `data` are written sorted; values inside them (tool arguments,
//! results) keep their own order, because that order is data (it decides the bytes of
//! `JSON.stringify(args)` when a thread is rendered).
//!
//! JSON is pretty-printed with two-space indentation and ends with a newline.

use super::error::TurnError;
use super::model::{Block, BlockKind, Turn, TurnDocument, FORMAT_VERSION, KIND_RAW_KEY};
use super::parse::Format;
use super::redact::redact_encrypted_content;
use serde::ser::{Error as _, SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

/// Payload key holding provider reasoning ciphertext.
pub const ENCRYPTED_CONTENT_KEY: &str = "encrypted_content";

/// How to write a document.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct Options {
    /// Replace every payload `encrypted_content` string by a placeholder of the same shape
    /// (see [`redact_encrypted_content`]) and note `redacted: true` in the turn's metadata.
    pub redact_encrypted_content: bool,
    /// Leave the turn's `data` map out.
    pub omit_data: bool,
}

/// A single turn as YAML.
pub fn to_yaml(turn: &Turn, options: &Options) -> Result<String, TurnError> {
    write_document_ref(DocumentRef::Turn(turn), Format::Yaml, options)
}

/// A single turn as JSON.
pub fn to_json(turn: &Turn, options: &Options) -> Result<String, TurnError> {
    write_document_ref(DocumentRef::Turn(turn), Format::Json, options)
}

/// A single turn as a JSON value (the form [`to_json`] prints).
pub fn to_value(turn: &Turn, options: &Options) -> Result<Value, TurnError> {
    check_version(turn)?;
    serde_json::to_value(TurnOut { turn, options, with_version: true })
        .map_err(|e| TurnError::invalid("", e.to_string()))
}

/// Any document shape as YAML.
pub fn to_yaml_document(document: &TurnDocument, options: &Options) -> Result<String, TurnError> {
    write_document(document, Format::Yaml, options)
}

/// Any document shape as JSON.
pub fn to_json_document(document: &TurnDocument, options: &Options) -> Result<String, TurnError> {
    write_document(document, Format::Json, options)
}

/// Any document shape in `format`. A suite or fixture carries `version` at its root only.
pub fn write_document(document: &TurnDocument, format: Format, options: &Options) -> Result<String, TurnError> {
    let document = match document {
        TurnDocument::Turn(turn) => DocumentRef::Turn(turn),
        TurnDocument::Suite(turns) => DocumentRef::Suite(turns),
        TurnDocument::Fixture { turn, followups } => DocumentRef::Fixture(turn, followups),
    };
    write_document_ref(document, format, options)
}

#[derive(Clone, Copy)]
enum DocumentRef<'a> {
    Turn(&'a Turn),
    Suite(&'a [Turn]),
    Fixture(&'a Turn, &'a [Block]),
}

fn write_document_ref(document: DocumentRef<'_>, format: Format, options: &Options) -> Result<String, TurnError> {
    match document {
        DocumentRef::Turn(turn) | DocumentRef::Fixture(turn, _) => check_version(turn)?,
        DocumentRef::Suite(turns) => turns.iter().try_for_each(check_version)?,
    }
    let out = DocumentOut { document, options };
    let text = match format {
        Format::Yaml => serde_yaml::to_string(&out).map_err(|e| e.to_string()),
        Format::Json => serde_json::to_string_pretty(&out).map(|s| s + "\n").map_err(|e| e.to_string()),
    };
    text.map_err(|reason| TurnError::invalid("", reason))
}

/// Refuses to write a version no reader of this format accepts.
fn check_version(turn: &Turn) -> Result<(), TurnError> {
    if turn.version != FORMAT_VERSION {
        return Err(TurnError::UnsupportedVersion { found: turn.version.to_string(), supported: FORMAT_VERSION });
    }
    Ok(())
}

struct DocumentOut<'a> {
    document: DocumentRef<'a>,
    options: &'a Options,
}

impl Serialize for DocumentOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let options = self.options;
        match self.document {
            DocumentRef::Turn(turn) => TurnOut { turn, options, with_version: true }.serialize(s),
            DocumentRef::Suite(turns) => {
                let mut map = s.serialize_map(None)?;
                map.serialize_entry("version", &FORMAT_VERSION)?;
                map.serialize_entry(
                    "turns",
                    &SeqOut(turns.iter().map(|turn| TurnOut { turn, options, with_version: false })),
                )?;
                map.end()
            }
            DocumentRef::Fixture(turn, followups) => {
                let mut map = s.serialize_map(None)?;
                map.serialize_entry("version", &FORMAT_VERSION)?;
                map.serialize_entry("turn", &TurnOut { turn, options, with_version: false })?;
                map.serialize_entry("followups", &SeqOut(followups.iter().map(|block| BlockOut { block, options })))?;
                map.end()
            }
        }
    }
}

struct TurnOut<'a> {
    turn: &'a Turn,
    options: &'a Options,
    with_version: bool,
}

impl Serialize for TurnOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let turn = self.turn;
        let mut map = s.serialize_map(None)?;
        if self.with_version {
            map.serialize_entry("version", &turn.version)?;
        }
        if !turn.id.is_empty() {
            map.serialize_entry("id", &turn.id)?;
        }
        if !turn.run_id.is_empty() {
            map.serialize_entry("run_id", &turn.run_id)?;
        }
        let options = self.options;
        map.serialize_entry("blocks", &SeqOut(turn.blocks.iter().map(|block| BlockOut { block, options })))?;
        let redacted = options.redact_encrypted_content && turn.blocks.iter().any(has_encrypted_content);
        let mut metadata = SortedMap::new(&turn.metadata);
        if redacted {
            metadata.set("redacted", Value::Bool(true));
        }
        if !metadata.is_empty() {
            map.serialize_entry("metadata", &metadata)?;
        }
        if !options.omit_data && !turn.data.is_empty() {
            map.serialize_entry("data", &SortedMap::new(&turn.data))?;
        }
        map.end()
    }
}

fn has_encrypted_content(block: &Block) -> bool {
    matches!(block.payload.get(ENCRYPTED_CONTENT_KEY), Some(Value::String(_)))
}

struct BlockOut<'a> {
    block: &'a Block,
    options: &'a Options,
}

impl Serialize for BlockOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let block = self.block;
        let mut map = s.serialize_map(None)?;
        if !block.id.is_empty() {
            map.serialize_entry("id", &block.id)?;
        }
        if !block.turn_id.is_empty() {
            map.serialize_entry("turn_id", &block.turn_id)?;
        }
        // An unknown kind goes back under its own name; the name then need not be repeated
        // in the metadata (reading puts it back).
        let unknown_kind = block.unknown_kind_name();
        map.serialize_entry("kind", unknown_kind.unwrap_or(block.kind.as_str()))?;
        // Written as loading would read it: an llm_text block without a role is the assistant's.
        if block.kind == BlockKind::LlmText && block.role.is_empty() {
            map.serialize_entry("role", "assistant")?;
        } else if !block.role.is_empty() {
            map.serialize_entry("role", &block.role)?;
        }
        let mut payload = SortedMap::new(&block.payload);
        if self.options.redact_encrypted_content {
            if let Some(Value::String(secret)) = block.payload.get(ENCRYPTED_CONTENT_KEY) {
                payload.set(ENCRYPTED_CONTENT_KEY, Value::String(redact_encrypted_content(secret)));
            }
        }
        map.serialize_entry("payload", &payload)?;
        let mut metadata = SortedMap::new(&block.metadata);
        if unknown_kind.is_some() {
            metadata.remove(KIND_RAW_KEY);
        }
        if !metadata.is_empty() {
            map.serialize_entry("metadata", &metadata)?;
        }
        map.end()
    }
}

/// A sequence written from an iterator of serializable items.
struct SeqOut<I>(I);

impl<I, T> Serialize for SeqOut<I>
where
    I: Iterator<Item = T> + Clone,
    T: Serialize,
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        for item in self.0.clone() {
            seq.serialize_element(&item)?;
        }
        seq.end()
    }
}

/// A map written with its keys sorted, with some entries replaced or removed on the way out.
struct SortedMap<'a> {
    entries: Vec<(&'a str, std::borrow::Cow<'a, Value>)>,
}

impl<'a> SortedMap<'a> {
    fn new(map: &'a Map<String, Value>) -> Self {
        let mut entries: Vec<_> = map.iter().map(|(k, v)| (k.as_str(), std::borrow::Cow::Borrowed(v))).collect();
        entries.sort_by(|a, b| a.0.cmp(b.0));
        SortedMap { entries }
    }

    fn set(&mut self, key: &'a str, value: Value) {
        match self.entries.binary_search_by(|(k, _)| (*k).cmp(key)) {
            Ok(i) => self.entries[i].1 = std::borrow::Cow::Owned(value),
            Err(i) => self.entries.insert(i, (key, std::borrow::Cow::Owned(value))),
        }
    }

    fn remove(&mut self, key: &str) {
        self.entries.retain(|(k, _)| *k != key);
    }

    fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl Serialize for SortedMap<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.entries.len()))?;
        for (key, value) in &self.entries {
            map.serialize_entry(key, value.as_ref())?;
        }
        map.end()
    }
}

/// The canonical form, as [`to_value`] with default options; a version other than
/// [`FORMAT_VERSION`] is an error.
impl Serialize for Turn {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        check_version(self).map_err(S::Error::custom)?;
        TurnOut { turn: self, options: &Options::default(), with_version: true }.serialize(s)
    }
}

/// The canonical form of a block, as it appears in a turn written with default options.
impl Serialize for Block {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        BlockOut { block: self, options: &Options::default() }.serialize(s)
    }
}

/// Reads a turn as [`turn_from_value`](super::turn_from_value) does; warnings are dropped.
impl<'de> serde::Deserialize<'de> for Turn {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        super::read::turn_from_value(value).map(|(turn, _)| turn).map_err(serde::de::Error::custom)
    }
}

impl Serialize for super::model::BlockKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}
