//! What the method modules share: reading params, and the ThreadInfo and one-text results.

use super::errors::invalid_params;
use crate::store::{ThreadRecord, ThreadSettings};
use jsonrpsee::types::{ErrorObjectOwned, Params};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

/// Parses by-name params (absent params read as `{}`), naming the failing field on error.
pub fn parse<T: DeserializeOwned>(params: &Params) -> Result<T, ErrorObjectOwned> {
    let text = params.as_str().unwrap_or("{}");
    if text.trim_start().starts_with('[') {
        return Err(invalid_params("", "params must be an object (by-name), not an array"));
    }
    let mut de = serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let reason = e.inner().to_string();
        // serde_json appends a position that means nothing to the caller; drop it.
        let reason = reason.rfind(" at line ").map_or(reason.as_str(), |i| &reason[..i]);
        let (path, reason) = field_error_path(&path, reason);
        invalid_params(&path, &reason)
    })
}

/// serde reports a missing field at its parent; point at the field itself, as event errors do.
fn field_error_path(parent: &str, reason: &str) -> (String, String) {
    let parent = if parent == "." { "" } else { parent };
    // (Unknown fields are already in the path serde_path_to_error reports.)
    if let Some((field, "")) = reason.strip_prefix("missing field `").and_then(|rest| rest.split_once('`')) {
        let path = if parent.is_empty() { field.to_string() } else { format!("{parent}.{field}") };
        return (path, "missing".to_string());
    }
    (parent.to_string(), reason.to_string())
}

/// The answer of the methods that produce one text (`{"text": ...}`).
#[derive(Serialize)]
pub struct TextResult {
    pub text: String,
}

#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadInfo {
    thread_id: String,
    version: u64,
    event_count: u64,
    settings: ThreadSettings,
    metadata: Map<String, Value>,
    created_at: u64,
    updated_at: u64,
}

impl From<ThreadRecord> for ThreadInfo {
    fn from(r: ThreadRecord) -> Self {
        ThreadInfo {
            thread_id: r.thread_id,
            version: r.version,
            event_count: r.event_count,
            settings: r.settings,
            metadata: r.metadata,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}
