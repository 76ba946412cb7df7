//! The protocol's error codes and the `error` objects that carry them.

use crate::service::{ServiceError, NOT_IMPORTABLE};
use crate::turns::TurnError;
use jsonrpsee::types::ErrorObjectOwned;
use serde_json::json;

pub const PARSE_ERROR: i32 = -32700;
pub const INVALID_REQUEST: i32 = -32600;
pub const METHOD_NOT_FOUND: i32 = -32601;
pub const INVALID_PARAMS: i32 = -32602;
pub const INTERNAL_ERROR: i32 = -32603;
pub const NOT_INITIALIZED: i32 = -32002;
pub const CANCELLED: i32 = -32800;
pub const THREAD_NOT_FOUND: i32 = -32001;
pub const VERSION_CONFLICT: i32 = -32003;
pub const LIMIT_EXCEEDED: i32 = -32004;
pub const STORE_FAILED: i32 = -32005;
pub const THREAD_EXISTS: i32 = -32006;

pub fn invalid_params(path: &str, reason: &str) -> ErrorObjectOwned {
    from_service(ServiceError::InvalidParams { path: path.to_owned(), reason: reason.to_owned() })
}

pub fn limit_exceeded(limit: &'static str, value: u64, max: u64) -> ErrorObjectOwned {
    from_service(ServiceError::Limit { limit, value, max })
}

/// The protocol error of a service error: its code and data; the message is the error's own.
pub fn from_service(error: ServiceError) -> ErrorObjectOwned {
    let error = match error {
        ServiceError::Document { field, error } => return document_error(field, error),
        other => other,
    };
    let message = error.to_string();
    let (code, data) = match error {
        ServiceError::NotFound { thread_id } => (THREAD_NOT_FOUND, Some(json!({ "threadId": thread_id }))),
        ServiceError::VersionConflict { thread_id, current_version } => {
            (VERSION_CONFLICT, Some(json!({ "threadId": thread_id, "currentVersion": current_version })))
        }
        ServiceError::ThreadExists { thread_id, .. } => (THREAD_EXISTS, Some(json!({ "threadId": thread_id }))),
        ServiceError::Limit { limit, value, max } => {
            (LIMIT_EXCEEDED, Some(json!({ "limit": limit, "value": value, "max": max })))
        }
        ServiceError::InvalidParams { path, reason } => {
            (INVALID_PARAMS, Some(json!({ "path": path, "reason": reason })))
        }
        ServiceError::Store(_) => (STORE_FAILED, None),
        ServiceError::Cancelled => (CANCELLED, None),
        ServiceError::Internal(_) => (INTERNAL_ERROR, None),
        ServiceError::Document { .. } => unreachable!("handled above"),
    };
    ErrorObjectOwned::owned(code, message, data)
}

/// A complete error response carrying an error object built above.
pub fn response_with(id: &str, error: &ErrorObjectOwned) -> String {
    let error = serde_json::to_string(error).expect("error objects serialize");
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#)
}

/// A complete error response for an id given as raw JSON text (`null` when unknown).
pub fn response(id: &str, code: i32, message: &str, data: Option<serde_json::Value>) -> String {
    let mut error = json!({ "code": code, "message": message });
    if let Some(data) = data {
        error["data"] = data;
    }
    format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#)
}

/// A turn-document error as a protocol error; `field` names the params field holding the text.
pub fn document_error(field: &str, error: TurnError) -> ErrorObjectOwned {
    match error {
        TurnError::Limit { limit, max, value } => document_limit(field, limit, value, max),
        TurnError::Invalid { path, reason } if !path.is_empty() => invalid_params(&format!("{field}.{path}"), &reason),
        other => invalid_params(field, &other.to_string()),
    }
}

/// A document over one of the document limits: -32004 under the protocol's camelCase limit
/// name, with a message that says what about the document is too large.
fn document_limit(field: &str, limit: &str, value: usize, max: usize) -> ErrorObjectOwned {
    let (name, what) = match limit {
        "max_input_bytes" => ("maxDocumentBytes", "the document is too long"),
        "max_yaml_input_bytes" => ("maxDocumentYamlBytes", "the YAML document is too long"),
        "max_depth" => ("maxDocumentDepth", "the document nests too deeply"),
        "max_values" => ("maxDocumentValues", "the document has too many values"),
        "max_string_bytes" => ("maxDocumentStringBytes", "the document's strings are too long"),
        "max_expansion" => ("maxDocumentExpansion", "the document's YAML aliases expand to too much"),
        other => (other, "the document is too large"),
    };
    let message = if field == NOT_IMPORTABLE {
        format!("limit exceeded: the thread's document would not import back: {what}: {name} is {max}, got {value}")
    } else {
        format!("limit exceeded: {field}: {what}: {name} is {max}, got {value}")
    };
    ErrorObjectOwned::owned(LIMIT_EXCEEDED, message, Some(json!({ "limit": name, "value": value, "max": max })))
}
