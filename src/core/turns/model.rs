//! The turn document model: a [`Turn`] is an ordered list of [`Block`]s plus free-form maps.

use serde_json::{Map, Value};

/// The document format version this crate reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// Metadata key that keeps the original name of a kind this version does not know.
pub const KIND_RAW_KEY: &str = "serde.kind_raw";

/// What a block holds. Written as one of seven fixed strings, never as a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockKind {
    User,
    LlmText,
    ToolCall,
    ToolUse,
    System,
    Reasoning,
    /// Anything else; an unknown kind read from a file keeps its name in
    /// `metadata["serde.kind_raw"]`.
    Other,
}

impl BlockKind {
    /// All kinds, in the order the format lists them.
    pub const ALL: [BlockKind; 7] = [
        BlockKind::User,
        BlockKind::LlmText,
        BlockKind::ToolCall,
        BlockKind::ToolUse,
        BlockKind::System,
        BlockKind::Reasoning,
        BlockKind::Other,
    ];

    /// The kind's name in documents.
    pub fn as_str(self) -> &'static str {
        match self {
            BlockKind::User => "user",
            BlockKind::LlmText => "llm_text",
            BlockKind::ToolCall => "tool_call",
            BlockKind::ToolUse => "tool_use",
            BlockKind::System => "system",
            BlockKind::Reasoning => "reasoning",
            BlockKind::Other => "other",
        }
    }

    /// The kind with this exact name, if it is one of the seven.
    pub fn from_name(name: &str) -> Option<BlockKind> {
        BlockKind::ALL.into_iter().find(|k| k.as_str() == name)
    }
}

/// One block of a turn. Empty strings stand for absent optional fields.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub id: String,
    pub turn_id: String,
    pub kind: BlockKind,
    pub role: String,
    pub payload: Map<String, Value>,
    pub metadata: Map<String, Value>,
}

impl Block {
    /// A block of `kind` with no role, payload or metadata.
    pub fn new(kind: BlockKind) -> Self {
        Block {
            id: String::new(),
            turn_id: String::new(),
            kind,
            role: String::new(),
            payload: Map::new(),
            metadata: Map::new(),
        }
    }

    /// The kind's name as written: the original name of an unknown kind, else the kind's own.
    pub fn kind_name(&self) -> &str {
        self.unknown_kind_name().unwrap_or(self.kind.as_str())
    }

    /// The original name of an unknown kind: set only on `other` blocks whose
    /// `serde.kind_raw` is a non-empty string that is not one of the seven names (writing
    /// it back under any of those would change the block's kind).
    pub(crate) fn unknown_kind_name(&self) -> Option<&str> {
        if self.kind != BlockKind::Other {
            return None;
        }
        match self.metadata.get(KIND_RAW_KEY) {
            Some(Value::String(raw)) if !raw.is_empty() && BlockKind::from_name(raw).is_none() => Some(raw),
            _ => None,
        }
    }
}

/// One turn: the blocks of an exchange, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Turn {
    /// The document format version; [`FORMAT_VERSION`] for every turn this crate reads.
    pub version: u32,
    pub id: String,
    pub run_id: String,
    pub blocks: Vec<Block>,
    pub metadata: Map<String, Value>,
    pub data: Map<String, Value>,
}

impl Default for Turn {
    fn default() -> Self {
        Turn {
            version: FORMAT_VERSION,
            id: String::new(),
            run_id: String::new(),
            blocks: Vec::new(),
            metadata: Map::new(),
            data: Map::new(),
        }
    }
}

impl Turn {
    /// An empty turn with this id.
    pub fn new(id: impl Into<String>) -> Self {
        Turn { id: id.into(), ..Turn::default() }
    }
}

/// The shapes a turn file comes in.
#[derive(Clone, Debug, PartialEq)]
pub enum TurnDocument {
    /// `{version, id, run_id, blocks, metadata, data}`.
    Turn(Turn),
    /// `{version, turns: [turn, ...]}`: the version sits at the suite root.
    Suite(Vec<Turn>),
    /// `{version, turn: {...}, followups: [block, ...]}`: a test fixture, the blocks expected
    /// to follow the turn.
    Fixture { turn: Turn, followups: Vec<Block> },
}

/// Applies the defaults loading applies and the key order saving gives, so that
/// `normalize(t)` equals `t` saved and loaded again: `llm_text` blocks without a role get
/// `assistant`, and the top-level keys of every payload, metadata and data map are sorted.
/// Values inside those maps (tool arguments, results) keep their order.
pub fn normalize(turn: &mut Turn) {
    for block in &mut turn.blocks {
        normalize_block(block);
    }
    sort_keys(&mut turn.metadata);
    sort_keys(&mut turn.data);
}

pub(crate) fn normalize_block(block: &mut Block) {
    if block.kind == BlockKind::LlmText && block.role.is_empty() {
        block.role = "assistant".to_string();
    }
    sort_keys(&mut block.payload);
    sort_keys(&mut block.metadata);
}

/// Sorts a map's own keys (not those of nested objects).
pub(crate) fn sort_keys(map: &mut Map<String, Value>) {
    let mut entries: Vec<(String, Value)> = std::mem::take(map).into_iter().collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    map.extend(entries);
}
