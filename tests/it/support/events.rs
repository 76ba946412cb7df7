//! Events for tests to send.

use serde_json::{json, Value};

pub fn user(content: &str, iteration: u64) -> Value {
    json!({"type": "message", "role": "user", "content": content, "iteration": iteration})
}

/// A small event of each kind, with key orders and extra fields a store must keep.
pub fn sample_events() -> Vec<Value> {
    serde_json::from_str(
        r#"[
        {"type":"message","iteration":1,"role":"user","content":"Find the <config> & read it","timestamp":1700000000000},
        {"iteration":1,"type":"tool_call","toolName":"read_file","toolCallId":"c1","args":{"z":1,"a":"x"},"extra":{"b":2,"a":1}},
        {"type":"tool_result","iteration":1,"toolCallId":"c1","result":{"ok":true,"lines":["a","b"]}},
        {"type":"message","iteration":2,"role":"assistant","content":"Done — ünïcödé ✓"},
        {"type":"future_kind","iteration":3,"payload":[1,2.5,null],"zeta":"kept"}
    ]"#,
    )
    .unwrap()
}

/// An event that names its batch and position, so order and completeness can be checked.
pub fn numbered_event(batch: u64, index: u64) -> Value {
    json!({"type": "message", "iteration": batch, "role": "user", "content": format!("{batch}.{index}")})
}
