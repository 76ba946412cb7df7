//! `/search?q=…`: the store's search (`thread/search`) for the thread list's search box, as
//! JSON. A malformed query answers 400 with the service's own one-line reason, never a 500.

use super::respond::{json, json_status};
use crate::service::{SearchOptions, ServiceError, ThreadService};
use axum::http::StatusCode;
use axum::response::Response;
use serde::Deserialize;

/// Hits the search box lists.
const HITS: usize = 50;

#[derive(Deserialize)]
pub struct SearchQuery {
    #[serde(default)]
    q: String,
}

/// `{"hits": […]}` as `thread/search` gives them, or `{"error": "query: …"}`.
pub async fn search_response(service: &ThreadService, query: SearchQuery) -> Response {
    let options = SearchOptions { limit: Some(HITS), ..SearchOptions::default() };
    match service.search(&query.q, options).await {
        Ok(results) => json(serde_json::json!({ "hits": results.hits }).to_string()),
        Err(ServiceError::InvalidParams { path, reason }) => json_status(
            StatusCode::BAD_REQUEST,
            serde_json::json!({ "error": format!("{path}: {reason}") }).to_string(),
        ),
        Err(e) => {
            tracing::warn!(error = %e, "live search failed");
            json_status(StatusCode::SERVICE_UNAVAILABLE, serde_json::json!({ "error": e.to_string() }).to_string())
        }
    }
}
