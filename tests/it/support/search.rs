//! Search helpers shared by the store and server tests.

use super::Server;
use serde_json::json;
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
    let answer = server.ok("thread/search", json!({"query": query, "limit": 100}));
    let mut hits: Vec<(String, u64)> = answer["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["threadId"].as_str().unwrap().to_owned(), h["eventIndex"].as_u64().unwrap()))
        .collect();
    hits.sort();
    hits
}
