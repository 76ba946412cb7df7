//! A long agent run and its turn document, shared by the turn-document benchmark and the big
//! document tests (included with `#[path]`): user turns, calls with arguments, results,
//! assistant text, repeated.

use serde_json::{json, Map, Value};
use threadkeeper::turns::{self, Format, Options};
use threadkeeper::AgentEvent;

/// Event `i` of the run.
pub fn event(i: usize) -> Value {
    let text = format!("step {i}: {}", "the quick brown fox jumps over the lazy dog; ".repeat(5));
    let iteration = i / 4;
    match i % 4 {
        0 => json!({"type": "message", "role": "user", "content": text, "iteration": iteration}),
        1 => {
            json!({"type": "tool_call", "toolName": "search", "toolCallId": format!("c{i}"), "args": {"q": text, "n": i}, "iteration": iteration})
        }
        2 => {
            json!({"type": "tool_result", "toolCallId": format!("c{}", i - 1), "result": {"hits": [text]}, "iteration": iteration})
        }
        _ => {
            json!({"type": "message", "role": "assistant", "content": text, "iteration": iteration, "timestamp": 1_700_000_000_000u64 + i as u64})
        }
    }
}

/// The turn document of the run's first `count` events in `format`, as export writes it.
pub fn document(count: usize, format: Format) -> String {
    let events: Vec<AgentEvent> = (0..count).map(|i| AgentEvent::from_value(event(i), "e").unwrap()).collect();
    let turn = turns::thread_to_turn("big", &events, None, &Map::new());
    match format {
        Format::Yaml => turns::to_yaml(&turn, &Options::default()).unwrap(),
        Format::Json => turns::to_json(&turn, &Options::default()).unwrap(),
    }
}
