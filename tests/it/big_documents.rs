//! A turn document as big as `maxDocumentBytes` (16 MiB) in YAML and in JSON: whatever
//! `thread/export` writes, `thread/import` reads back as the very same events, over the real
//! protocol.

use crate::support::{Server, Wire};
use serde_json::{json, Map, Value};
use threadkeeper::turns::{self, Format, Options};
use threadkeeper::AgentEvent;

const MAX_DOCUMENT_BYTES: usize = 16 << 20;

/// Event `i` of a long run: user turns, calls with arguments, results, assistant text.
fn event(i: usize) -> Value {
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

/// The larger of the thread's YAML and JSON documents, as export writes them.
fn document_bytes(count: usize) -> (usize, usize) {
    let events: Vec<AgentEvent> = (0..count).map(|i| AgentEvent::from_value(event(i), "e").unwrap()).collect();
    let turn = turns::thread_to_turn("big", &events, None, &Map::new());
    let yaml = turns::to_yaml(&turn, &Options::default()).unwrap().len();
    let json = turns::to_json(&turn, &Options::default()).unwrap().len();
    (yaml, json)
}

#[test]
fn a_16_mib_thread_exports_and_imports_back_the_same_in_yaml_and_json() {
    let sample = 1000;
    let (yaml, json) = document_bytes(sample);
    let mut server = Server::start(Wire::Ndjson, "memory");
    for (format, sample_bytes) in [(Format::Yaml, yaml), (Format::Json, json)] {
        let name = serde_json::to_value(format).unwrap();
        let name = name.as_str().unwrap();
        // As many events as fit this form's document under the limit (later events' numbers
        // are longer: 3% is left for them).
        let count = MAX_DOCUMENT_BYTES / 100 * 97 * sample / sample_bytes;
        let events: Vec<Value> = (0..count).map(event).collect();
        let thread = format!("big-{name}");
        server.ok("thread/open", json!({"threadId": thread}));
        for chunk in events.chunks(40_000) {
            server.ok("thread/append", json!({"threadId": thread, "events": chunk}));
        }
        let text = server.ok("thread/export", json!({"threadId": thread, "format": name}))["text"].take();
        let size = text.as_str().unwrap().len();
        assert!(size > 15 << 20 && size <= MAX_DOCUMENT_BYTES, "{name}: {size} bytes");
        let copy = format!("copy-{name}");
        server.ok("thread/import", json!({"text": text, "format": name, "threadId": copy}));
        let original = server.ok("thread/events", json!({"threadId": thread}))["events"].take();
        let imported = server.ok("thread/events", json!({"threadId": copy}))["events"].take();
        assert_eq!(original.as_array().map(Vec::len), Some(count));
        assert!(imported == original, "{name}: the events differ");
        server.ok("thread/delete", json!({"threadId": thread}));
        server.ok("thread/delete", json!({"threadId": copy}));
    }
    server.stop();
}
