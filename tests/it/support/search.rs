//! Search helpers shared by the store and server tests.

use super::events::user;
use super::Server;
use serde_json::{json, Value};
use threadkeeper::search::parse_query;
use threadkeeper::store::SearchRequest;

/// A request for the first 100 hits of `query`, without filters.
pub fn request(query: &str) -> SearchRequest {
    SearchRequest {
        query: parse_query(query).unwrap(),
        limit: 100,
        offset: 0,
        thread_ids: None,
        types: None,
        since: None,
        until: None,
    }
}

/// The first 100 hits of `query` through a server's `thread/search`, as (thread, index), sorted.
pub fn hits(server: &mut Server, query: &str) -> Vec<(String, u64)> {
    hit_pairs(&server.ok("thread/search", json!({"query": query, "limit": 100})))
}

/// A search result's hits (`thread/search`, or the MCP tool's) as (thread, index), sorted.
pub fn hit_pairs(result: &Value) -> Vec<(String, u64)> {
    let mut hits: Vec<(String, u64)> = result["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["threadId"].as_str().unwrap().to_owned(), h["eventIndex"].as_u64().unwrap()))
        .collect();
    hits.sort();
    hits
}

/// A user message that every search for "quokka" finds, numbered.
pub fn quokka(iteration: u64) -> Value {
    user(&format!("a quokka, {iteration}"), iteration)
}
