//! Turn documents (seed 004): a turn — an ordered list of blocks — as YAML or JSON, and the
//! lossless mapping between a thread's events and a turn.
//!
//! # Format
//!
//! ```yaml
//! version: 1
//! id: turn_001
//! run_id: run_abc
//! blocks:
//! - kind: user
//!   role: user
//!   payload:
//!     text: Say hi.
//! metadata:
//!   geppetto.session_id@v1: s1
//! ```
//!
//! Keys are snake_case; `kind` is one of `user`, `llm_text`, `tool_call`, `tool_use`,
//! `system`, `reasoning`, `other`. JSON uses the same fields.
//!
//! Reading ([`from_yaml`], [`from_json`], [`read_document`]) is permissive: `version` absent
//! means 1 and any other version is refused; an unknown kind reads as `other` with its name in
//! `metadata["serde.kind_raw"]` (and is written back under that name); `llm_text` without a
//! role gets `assistant`; a missing payload is `{}`; unknown fields are ignored and reported
//! as warnings; metadata keys such as `geppetto.session_id@v1` pass through untouched. Three
//! shapes are read: a single turn, a suite `{version, turns: [...]}` and a fixture
//! `{version, turn, followups: [blocks]}` ([`TurnDocument`]); [`from_yaml`] returns a single
//! turn (a fixture's turn) and refuses a suite. Hostile text is refused within [`Limits`]. YAML
//! is read one parser event at a time, so a document holds about as much in YAML as in JSON.
//!
//! Writing ([`to_yaml`], [`to_json`], [`write_document`]) never changes its input and is
//! deterministic, so a file this crate wrote loads and saves byte for byte. Fields come in a
//! fixed order (turn: `version, id, run_id, blocks, metadata, data`; block: `id, turn_id, kind,
//! role, payload, metadata`); empty strings and empty `metadata`/`data` are left out, `version`,
//! `blocks`, `kind` and `payload` are always written; the top-level keys of `payload`,
//! `metadata` and `data` are sorted, while values inside them (tool arguments, results) keep
//! their order, which is data. JSON is pretty-printed with two-space indentation and a final
//! newline. [`Options`] can redact `encrypted_content` and leave out `data`.
//!
//! [`validate`] lists every rule a turn breaks; [`events_to_turn`] and [`turn_to_events`] map
//! threads to turns and back without loss (the mapping table is in [`events`]);
//! [`turn_to_thread`] and [`thread_to_turn`] add what a turn holds besides its blocks
//! ([`thread`]).

mod budget;
mod error;
pub mod events;
mod model;
mod parse;
mod read;
mod redact;
pub mod thread;
mod validate;
mod write;
mod yaml_scan;
mod yaml_stream;

pub use budget::Limits;
pub use error::TurnError;
pub use events::{event_to_block, events_to_turn, turn_to_events};
pub use model::{normalize, Block, BlockKind, Turn, TurnDocument, FORMAT_VERSION, KIND_RAW_KEY};
pub use parse::{parse_value, Format, Measure};
pub use read::{
    document_from_value, from_json, from_json_document, from_yaml, from_yaml_document, read_document, turn_from_value,
    Warnings,
};
pub use redact::redact_encrypted_content;
pub use thread::{thread_to_turn, turn_to_thread, turn_to_thread_each, ThreadFields, ThreadParts};
pub use validate::{validate, Problem};
pub use write::{
    to_json, to_json_document, to_value, to_yaml, to_yaml_document, write_document, Options, ENCRYPTED_CONTENT_KEY,
};
