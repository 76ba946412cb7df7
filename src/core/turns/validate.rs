//! Validation of a turn against the format's role and payload rules.
//!
//! Reading never fails on these rules; validation lists every problem with its path. The
//! "must" rules always apply; `strict` adds the "should" rules.
//!
//! Always: `version` is 1; `system` blocks have role `system`, `user` blocks role `user`;
//! an `llm_text` role, when set, is `assistant`; reserved payload keys have their types
//! (`text`, `id`, `name`, `encrypted_content`, `item_id` strings; `images` an array).
//!
//! Strict: `tool_call` has `id`, `name`, `args`; `tool_use` has `id`, `result`; `llm_text` has
//! a role; `reasoning`, `tool_call` and `tool_use` have no role; no kind is unknown.

use super::model::{Block, BlockKind, Turn, FORMAT_VERSION};
use crate::event::json_type;

/// One rule a turn breaks, e.g. `{path: "blocks[2].payload.id", message: "missing"}`.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

/// Every problem of `turn`, in document order; empty when the turn is valid.
pub fn validate(turn: &Turn, strict: bool) -> Vec<Problem> {
    let mut problems = Vec::new();
    if turn.version != FORMAT_VERSION {
        problems.push(Problem {
            path: "version".into(),
            message: format!("unsupported version {}: expected {FORMAT_VERSION}", turn.version),
        });
    }
    for (i, block) in turn.blocks.iter().enumerate() {
        BlockCheck { block, path: format!("blocks[{i}]"), problems: &mut problems }.run(strict);
    }
    problems
}

/// Payload keys whose type the format fixes, and that type.
const RESERVED_TYPES: [(&str, &str); 6] = [
    ("text", "string"),
    ("id", "string"),
    ("name", "string"),
    ("encrypted_content", "string"),
    ("item_id", "string"),
    ("images", "array"),
];

struct BlockCheck<'a> {
    block: &'a Block,
    path: String,
    problems: &'a mut Vec<Problem>,
}

impl BlockCheck<'_> {
    fn run(mut self, strict: bool) {
        let block = self.block;
        let kind = block.kind;
        match kind {
            BlockKind::System => self.role_must_be("system"),
            BlockKind::User => self.role_must_be("user"),
            BlockKind::LlmText if !block.role.is_empty() => self.role_must_be("assistant"),
            BlockKind::LlmText if strict => self.problem("role", "missing: should be \"assistant\"".into()),
            BlockKind::Reasoning | BlockKind::ToolCall | BlockKind::ToolUse if strict && !block.role.is_empty() => {
                self.problem("role", format!("should be empty: a {} block has no role", kind.as_str()));
            }
            BlockKind::Other if strict => {
                if let Some(raw) = block.unknown_kind_name() {
                    self.problem("kind", format!("unknown kind {raw:?}"));
                }
            }
            _ => {}
        }
        for (key, expected) in RESERVED_TYPES {
            if let Some(value) = block.payload.get(key) {
                if json_type(value) != expected {
                    self.problem(
                        &format!("payload.{key}"),
                        format!("expected {}, found {}", article(expected), json_type(value)),
                    );
                }
            }
        }
        if strict {
            let required: &[&str] = match kind {
                BlockKind::ToolCall => &["id", "name", "args"],
                BlockKind::ToolUse => &["id", "result"],
                _ => &[],
            };
            for key in required {
                if !block.payload.contains_key(*key) {
                    self.problem(&format!("payload.{key}"), "missing".into());
                }
            }
        }
    }

    fn role_must_be(&mut self, expected: &str) {
        let role = &self.block.role;
        if role != expected {
            let found = if role.is_empty() { "missing".to_string() } else { format!("found {role:?}") };
            let message = format!("must be {expected:?} for a {} block, {found}", self.block.kind.as_str());
            self.problem("role", message);
        }
    }

    fn problem(&mut self, field: &str, message: String) {
        self.problems.push(Problem { path: format!("{}.{field}", self.path), message });
    }
}

fn article(type_name: &str) -> String {
    match type_name {
        "array" | "object" => format!("an {type_name}"),
        other => format!("a {other}"),
    }
}
