//! Reading turn documents: text → JSON value (within limits) → model, with warnings.
//!
//! Reading is permissive where the format says so: unknown kinds become `other` (keeping their
//! name), `llm_text` without a role gets `assistant`, a missing payload is `{}`, unknown fields
//! are ignored with a warning. Wrong types are errors naming the field.

use super::budget::Limits;
use super::error::TurnError;
use super::model::{Block, BlockKind, Turn, TurnDocument, FORMAT_VERSION, KIND_RAW_KEY};
use super::parse::{parse_value, Format};
use crate::event::json_type;
use serde_json::{Map, Value};

/// Warnings about a document that was read anyway, e.g. `blocks[1].colour: unknown field ignored`.
pub type Warnings = Vec<String>;

/// Reads a single turn from YAML. The fixture shape `{version, turn, followups}` is accepted
/// too (its turn is returned, with a warning when followups are dropped); a suite is refused —
/// read suites with [`from_yaml_document`].
pub fn from_yaml(text: &str) -> Result<(Turn, Warnings), TurnError> {
    read_turn_text(text, Format::Yaml)
}

/// [`from_yaml`] for JSON text.
pub fn from_json(text: &str) -> Result<(Turn, Warnings), TurnError> {
    read_turn_text(text, Format::Json)
}

/// Reads any of the three document shapes from YAML.
pub fn from_yaml_document(text: &str) -> Result<(TurnDocument, Warnings), TurnError> {
    read_document(text, Format::Yaml, &Limits::default())
}

/// Reads any of the three document shapes from JSON.
pub fn from_json_document(text: &str) -> Result<(TurnDocument, Warnings), TurnError> {
    read_document(text, Format::Json, &Limits::default())
}

/// Reads any document shape from text in `format`, within `limits`.
pub fn read_document(text: &str, format: Format, limits: &Limits) -> Result<(TurnDocument, Warnings), TurnError> {
    document_from_value(parse_value(text, format, limits)?)
}

/// Reads a single turn (or a fixture's turn) from an already parsed JSON value.
pub fn turn_from_value(value: Value) -> Result<(Turn, Warnings), TurnError> {
    let (document, mut warnings) = document_from_value(value)?;
    match document {
        TurnDocument::Turn(turn) => Ok((turn, warnings)),
        TurnDocument::Fixture { turn, followups } => {
            if !followups.is_empty() {
                warnings.push(format!(
                    "followups: {} block(s) not part of the turn were dropped; read the whole fixture as a document",
                    followups.len()
                ));
            }
            Ok((turn, warnings))
        }
        TurnDocument::Suite(turns) => Err(TurnError::invalid(
            "turns",
            format!("this is a suite of {} turn(s), not a single turn; read it as a document", turns.len()),
        )),
    }
}

/// Reads any document shape from an already parsed JSON value: a root with `turns` is a
/// suite, a root with `turn` is a fixture, anything else a single turn.
pub fn document_from_value(value: Value) -> Result<(TurnDocument, Warnings), TurnError> {
    let Value::Object(root) = value else {
        return Err(TurnError::invalid(
            "",
            format!("expected a mapping at the document root, found {}", json_type(&value)),
        ));
    };
    let mut reader = Reader { warnings: Vec::new() };
    let document = if root.contains_key("turns") {
        reader.suite(root)?
    } else if root.contains_key("turn") {
        reader.fixture(root)?
    } else {
        TurnDocument::Turn(reader.turn(root, "", None)?)
    };
    Ok((document, reader.warnings))
}

fn read_turn_text(text: &str, format: Format) -> Result<(Turn, Warnings), TurnError> {
    turn_from_value(parse_value(text, format, &Limits::default())?)
}

struct Reader {
    warnings: Warnings,
}

impl Reader {
    fn suite(&mut self, mut root: Map<String, Value>) -> Result<TurnDocument, TurnError> {
        let version = read_version(root.shift_remove("version"), "version")?;
        let turns = take_list(&mut root, "turns", "turns")?;
        self.warn_unknown(&root, "");
        let turns = turns
            .into_iter()
            .enumerate()
            .map(|(i, value)| {
                let path = format!("turns[{i}]");
                let map = expect_map(value, &path)?;
                self.turn(map, &format!("{path}."), Some(version))
            })
            .collect::<Result<_, _>>()?;
        Ok(TurnDocument::Suite(turns))
    }

    fn fixture(&mut self, mut root: Map<String, Value>) -> Result<TurnDocument, TurnError> {
        let version = read_version(root.shift_remove("version"), "version")?;
        let turn = expect_map(root.shift_remove("turn").unwrap_or(Value::Null), "turn")?;
        let turn = self.turn(turn, "turn.", Some(version))?;
        let followups = take_list(&mut root, "followups", "followups")?
            .into_iter()
            .enumerate()
            .map(|(i, value)| self.block(value, &format!("followups[{i}]")))
            .collect::<Result<_, _>>()?;
        self.warn_unknown(&root, "");
        Ok(TurnDocument::Fixture { turn, followups })
    }

    /// Reads a turn mapping; `prefix` is its path with a trailing dot (empty at the root).
    /// `outer_version` is the suite's or fixture's version, which the turn inherits.
    fn turn(
        &mut self,
        mut map: Map<String, Value>,
        prefix: &str,
        outer_version: Option<u32>,
    ) -> Result<Turn, TurnError> {
        let version = match map.shift_remove("version") {
            Some(v) => read_version(Some(v), &format!("{prefix}version"))?,
            None => outer_version.unwrap_or(FORMAT_VERSION),
        };
        let id = self.string(map.shift_remove("id"), &format!("{prefix}id"))?;
        let run_id = self.string(map.shift_remove("run_id"), &format!("{prefix}run_id"))?;
        let blocks = take_list(&mut map, "blocks", &format!("{prefix}blocks"))?
            .into_iter()
            .enumerate()
            .map(|(i, value)| self.block(value, &format!("{prefix}blocks[{i}]")))
            .collect::<Result<_, _>>()?;
        let metadata = take_map(&mut map, "metadata", &format!("{prefix}metadata"))?;
        let data = take_map(&mut map, "data", &format!("{prefix}data"))?;
        self.warn_unknown(&map, prefix);
        Ok(Turn { version, id, run_id, blocks, metadata, data })
    }

    fn block(&mut self, value: Value, path: &str) -> Result<Block, TurnError> {
        let mut map = expect_map(value, path)?;
        let id = self.string(map.shift_remove("id"), &format!("{path}.id"))?;
        let turn_id = self.string(map.shift_remove("turn_id"), &format!("{path}.turn_id"))?;
        let kind_name = self.string(map.shift_remove("kind"), &format!("{path}.kind"))?;
        let role = self.string(map.shift_remove("role"), &format!("{path}.role"))?;
        let payload = take_map(&mut map, "payload", &format!("{path}.payload"))?;
        let mut metadata = take_map(&mut map, "metadata", &format!("{path}.metadata"))?;
        self.warn_unknown(&map, &format!("{path}."));

        let kind = match BlockKind::from_name(&kind_name) {
            Some(kind) => kind,
            None if kind_name.is_empty() => {
                self.warnings.push(format!("{path}.kind: missing, read as other"));
                BlockKind::Other
            }
            None => {
                // The written kind wins over a stale serde.kind_raw.
                let raw = Value::String(kind_name);
                if let Some(old) = metadata.insert(KIND_RAW_KEY.to_string(), raw.clone()) {
                    if old != raw {
                        self.warnings
                            .push(format!("{path}.metadata.{KIND_RAW_KEY}: replaced by the block's kind {raw}"));
                    }
                }
                BlockKind::Other
            }
        };
        let mut block = Block { id, turn_id, kind, role, payload, metadata };
        if block.kind == BlockKind::LlmText && block.role.is_empty() {
            block.role = "assistant".to_string();
        }
        Ok(block)
    }

    /// An optional string field; absent and null read as empty. Numbers and booleans are
    /// taken as their text (YAML writers leave `id: 123` unquoted), with a warning.
    fn string(&mut self, value: Option<Value>, path: &str) -> Result<String, TurnError> {
        match value {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(s)) => Ok(s),
            Some(v @ (Value::Number(_) | Value::Bool(_))) => {
                let text = v.to_string();
                self.warnings.push(format!("{path}: {} {text} read as the string {text:?}", json_type(&v)));
                Ok(text)
            }
            Some(v) => Err(TurnError::invalid(path, format!("expected a string, found {}", json_type(&v)))),
        }
    }

    fn warn_unknown(&mut self, rest: &Map<String, Value>, prefix: &str) {
        for key in rest.keys() {
            self.warnings.push(format!("{prefix}{key}: unknown field ignored"));
        }
    }
}

/// The format version; absent means 1, anything but 1 is refused.
fn read_version(value: Option<Value>, path: &str) -> Result<u32, TurnError> {
    match value {
        None | Some(Value::Null) => Ok(FORMAT_VERSION),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(v) if v == u64::from(FORMAT_VERSION) => Ok(FORMAT_VERSION),
            _ => Err(TurnError::UnsupportedVersion { found: n.to_string(), supported: FORMAT_VERSION }),
        },
        Some(v) => Err(TurnError::invalid(path, format!("expected an integer, found {}", json_type(&v)))),
    }
}

fn expect_map(value: Value, path: &str) -> Result<Map<String, Value>, TurnError> {
    match value {
        Value::Object(map) => Ok(map),
        other => Err(TurnError::invalid(path, format!("expected a mapping, found {}", json_type(&other)))),
    }
}

/// An optional mapping field; absent and null read as empty.
fn take_map(map: &mut Map<String, Value>, key: &str, path: &str) -> Result<Map<String, Value>, TurnError> {
    match map.shift_remove(key) {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(v) => expect_map(v, path),
    }
}

/// An optional sequence field; absent and null read as empty.
fn take_list(map: &mut Map<String, Value>, key: &str, path: &str) -> Result<Vec<Value>, TurnError> {
    match map.shift_remove(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items),
        Some(v) => Err(TurnError::invalid(path, format!("expected a sequence, found {}", json_type(&v)))),
    }
}
