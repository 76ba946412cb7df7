//! Reading a framework's JSON input field by field, with `-32602`-ready errors that name the
//! place (`messages[2].content[0].toolCallId: missing`). Shared by the inverses.

use crate::event::{json_type, EventError};
use serde_json::{Map, Value};

pub(super) fn object<'a>(value: &'a Value, path: &str) -> Result<&'a Map<String, Value>, EventError> {
    value.as_object().ok_or_else(|| fault(path, format!("expected an object, found {}", json_type(value))))
}

pub(super) fn string<'a>(fields: &'a Map<String, Value>, key: &str, path: &str) -> Result<&'a str, EventError> {
    match fields.get(key) {
        Some(Value::String(text)) => Ok(text),
        None => Err(fault(&format!("{path}.{key}"), "missing")),
        Some(other) => Err(fault(&format!("{path}.{key}"), format!("expected a string, found {}", json_type(other)))),
    }
}

pub(super) fn fault(path: &str, reason: impl Into<String>) -> EventError {
    EventError { path: path.to_owned(), reason: reason.into() }
}
