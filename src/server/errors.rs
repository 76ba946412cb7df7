//! The protocol's error codes and the `error` objects that carry them.

use crate::service::ServiceError;
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
    let message =
        if path.is_empty() { format!("invalid params: {reason}") } else { format!("invalid params: {path}: {reason}") };
    ErrorObjectOwned::owned(INVALID_PARAMS, message, Some(json!({ "path": path, "reason": reason })))
}

pub fn limit_exceeded(limit: &str, value: u64, max: u64) -> ErrorObjectOwned {
    ErrorObjectOwned::owned(
        LIMIT_EXCEEDED,
        format!("limit exceeded: {limit} is {max}, got {value}"),
        Some(json!({ "limit": limit, "value": value, "max": max })),
    )
}

pub fn from_service(error: ServiceError) -> ErrorObjectOwned {
    match error {
        ServiceError::NotFound { thread_id } => ErrorObjectOwned::owned(
            THREAD_NOT_FOUND,
            format!("thread {thread_id:?} not found"),
            Some(json!({ "threadId": thread_id })),
        ),
        ServiceError::VersionConflict { thread_id, current_version } => ErrorObjectOwned::owned(
            VERSION_CONFLICT,
            format!("version conflict: thread {thread_id:?} is at version {current_version}"),
            Some(json!({ "threadId": thread_id, "currentVersion": current_version })),
        ),
        ServiceError::ThreadExists { thread_id } => ErrorObjectOwned::owned(
            THREAD_EXISTS,
            format!("thread exists: thread {thread_id:?} already exists; pass threadId to import under another id"),
            Some(json!({ "threadId": thread_id })),
        ),
        ServiceError::Limit { limit, value, max } => limit_exceeded(limit, value, max),
        ServiceError::InvalidParams { path, reason } => invalid_params(&path, &reason),
        ServiceError::Store(reason) => {
            ErrorObjectOwned::owned(STORE_FAILED, format!("store failed: {reason}"), None::<()>)
        }
        ServiceError::Cancelled => ErrorObjectOwned::owned(CANCELLED, "request cancelled", None::<()>),
        ServiceError::Internal(reason) => {
            ErrorObjectOwned::owned(INTERNAL_ERROR, format!("internal error: {reason}"), None::<()>)
        }
    }
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
