//! Model input providers can cache, through the protocol: Anthropic breakpoints
//! (`options.cacheControl`), a budget that keeps its cut (`options.budget.dropTo`), and
//! renders that extend the previous one — checked by replaying Anthropic's documented
//! caching rules on a 300-step coding-agent run.

use crate::support::{Server, Wire};
use serde_json::{json, Value};

#[path = "../../benches/support/prompt_cache.rs"]
#[allow(dead_code)]
mod prompt_cache;
use prompt_cache::{anthropic_blocks, AnthropicCache, ANTHROPIC_READ, ANTHROPIC_WRITE};

/// About 3 kB of instructions, as a coding agent's.
fn instructions() -> String {
    (0..40).map(|i| format!("Rule {i}: read files before editing them; keep changes small & tested.\n")).collect()
}

/// Step `i` of the run: an assistant note, a `read_file` call and its ~1.5 kB result.
fn step(i: u64) -> Vec<Value> {
    let body: String =
        (0..30).map(|line| format!("fn item_{i}_{line}() -> u32 {{ {line} }} // <ok> & \"done\"\n")).collect();
    vec![
        json!({"type": "message", "role": "assistant", "content": format!("Step {i}: reading the next file."), "iteration": i}),
        json!({"type": "tool_call", "toolName": "read_file", "toolCallId": format!("call_{i}"), "args": {"path": format!("src/file_{i}.rs")}, "iteration": i}),
        json!({"type": "tool_result", "toolCallId": format!("call_{i}"), "result": body, "iteration": i}),
    ]
}

fn first_events() -> Vec<Value> {
    vec![json!({"type": "message", "role": "user", "content": "Refactor the crate 🦀 — carefully.", "iteration": 0})]
}

fn open(server: &mut Server, thread: &str) {
    server.ok("thread/open", json!({"threadId": thread, "settings": {"instructions": instructions()}}));
}

/// The request body of a render result (without format, version, contextMode and budget fields).
fn body(result: &Value) -> Value {
    let mut body = result.clone();
    for key in ["format", "version", "contextMode", "dropped", "tokens"] {
        body.as_object_mut().unwrap().remove(key);
    }
    body
}

fn breakpoints(request: &Value) -> usize {
    request.to_string().matches("\"cache_control\"").count()
}

/// The request's blocks as a cache compares them (role, block without `cache_control`).
fn blocks(request: &Value) -> Vec<(String, Value)> {
    anthropic_blocks(request).into_iter().map(|b| (b.role, b.block)).collect()
}

/// Runs 300 steps, rendering after each; returns every request and every render result.
fn run(options: Value) -> (Vec<Value>, Vec<Value>) {
    let mut server = Server::start(Wire::Lsp, "memory");
    open(&mut server, "run");
    server.ok("thread/append", json!({"threadId": "run", "events": first_events()}));
    let (mut requests, mut results) = (Vec::new(), Vec::new());
    for i in 1..=300 {
        server.ok("thread/append", json!({"threadId": "run", "events": step(i)}));
        let result = server.ok("thread/render", json!({"threadId": "run", "format": "anthropic", "options": options}));
        requests.push(body(&result));
        results.push(result);
    }
    (requests, results)
}

#[test]
fn auto_breakpoints_read_almost_everything_from_the_cache() {
    let (requests, _) = run(json!({"cacheControl": "auto"}));
    let mut cache = AnthropicCache::default();
    for request in &requests {
        assert!(breakpoints(request) <= 4, "{} breakpoints", breakpoints(request));
        cache.send(request);
    }
    let total = cache.total;
    assert!(total.read_share() >= 0.95, "read {:.3} of the input", total.read_share());
    let cost = total.relative_cost(ANTHROPIC_READ, ANTHROPIC_WRITE);
    assert!(cost <= 0.15, "cost {cost:.3}× uncached");
    // Every request extends the previous one, block for block.
    for pair in requests.windows(2) {
        let (before, after) = (blocks(&pair[0]), blocks(&pair[1]));
        assert_eq!(after[..before.len()], before[..]);
    }
    let system = &requests[0]["system"];
    assert_eq!(system[0]["cache_control"], json!({"type": "ephemeral"}), "{system}");
    assert_eq!(system[0]["text"], instructions());
}

#[test]
fn a_budget_that_keeps_its_cut_is_cached_between_cuts() {
    let budget = json!({"maxTokens": 30000, "dropTo": 18000});
    let options = json!({"cacheControl": "auto", "budget": budget});
    let (requests, results) = run(options.clone());
    let mut cache = AnthropicCache::default();
    let mut cuts = 0;
    for (at, request) in requests.iter().enumerate() {
        assert!(results[at]["tokens"].as_u64().unwrap() <= 30000, "step {at}: {}", results[at]["tokens"]);
        assert!(breakpoints(request) <= 4);
        cache.send(request);
        if at > 0 {
            let (before, after) = (blocks(&requests[at - 1]), blocks(request));
            let dropped_before = results[at - 1]["dropped"]["iterations"].as_array().unwrap().len();
            let dropped_now = results[at]["dropped"]["iterations"].as_array().unwrap().len();
            if dropped_now == dropped_before {
                assert!(after.len() > before.len() && after[..before.len()] == before[..], "step {at} does not extend");
            } else {
                assert!(dropped_now > dropped_before, "step {at}: the cut moved back");
                cuts += 1;
            }
        }
    }
    assert!(cuts >= 2, "only {cuts} cuts: the run should cross its budget several times");
    let total = cache.total;
    assert!(total.read_share() >= 0.80, "read {:.3} of the input", total.read_share());
    let cost = total.relative_cost(ANTHROPIC_READ, ANTHROPIC_WRITE);
    assert!(cost <= 0.30, "cost {cost:.3}× uncached");

    // A fresh server given the whole thread at once renders the last request byte for byte.
    let mut fresh = Server::start(Wire::Ndjson, "memory");
    open(&mut fresh, "run");
    let mut events = first_events();
    (1..=300).for_each(|i| events.extend(step(i)));
    fresh.ok("thread/append", json!({"threadId": "run", "events": events}));
    let last = fresh.ok("thread/render", json!({"threadId": "run", "format": "anthropic", "options": options}));
    let expected = results.last().unwrap();
    for key in ["system", "messages", "dropped", "tokens"] {
        assert!(last[key] == expected[key], "a fresh server renders another {key}");
    }
}

#[test]
fn without_the_option_no_breakpoint_appears() {
    let mut server = Server::start(Wire::Lsp, "memory");
    open(&mut server, "t");
    let mut events = first_events();
    (1..=30).for_each(|i| events.extend(step(i)));
    server.ok("thread/append", json!({"threadId": "t", "events": events}));
    for options in [json!({}), json!({"cacheControl": "none"}), json!({"budget": {"maxTokens": 5000, "dropTo": 3000}})]
    {
        let result = server.ok("thread/render", json!({"threadId": "t", "format": "anthropic", "options": options}));
        assert!(!result.to_string().contains("cache_control"), "{options}");
        assert!(result["system"].is_string(), "{options}");
    }
}

#[test]
fn ttl_marks_every_breakpoint_and_bad_options_are_refused_where_they_are() {
    let mut server = Server::start(Wire::Lsp, "memory");
    open(&mut server, "t");
    let mut events = first_events();
    (1..=3).for_each(|i| events.extend(step(i)));
    server.ok("thread/append", json!({"threadId": "t", "events": events}));
    let result = server.ok(
        "thread/render",
        json!({"threadId": "t", "format": "anthropic", "options": {"cacheControl": {"ttl": "1h"}}}),
    );
    let text = result.to_string();
    let marks = text.matches("cache_control").count();
    assert!(
        marks >= 2 && text.matches(r#""cache_control":{"type":"ephemeral","ttl":"1h"}"#).count() == marks,
        "{text}"
    );
    let refused = [
        (json!({"format": "openai-chat", "options": {"cacheControl": "auto"}}), "options.cacheControl"),
        (json!({"format": "xml", "options": {"cacheControl": "none"}}), "options.cacheControl"),
        (json!({"format": "anthropic", "options": {"cacheControl": "always"}}), "options.cacheControl"),
        (json!({"format": "anthropic", "options": {"cacheControl": {"ttl": "10m"}}}), "options.cacheControl.ttl"),
        (json!({"format": "anthropic", "options": {"cacheControl": {"ttl": "5m", "x": 1}}}), "options.cacheControl.x"),
        (
            json!({"format": "anthropic", "options": {"budget": {"maxTokens": 10, "dropTo": 11}}}),
            "options.budget.dropTo",
        ),
    ];
    for (mut params, path) in refused {
        params["threadId"] = json!("t");
        let error = server.err("thread/render", params.clone());
        assert_eq!(error["code"], -32602, "{params}: {error}");
        assert!(error["message"].as_str().unwrap().contains(path), "{params}: {error}");
    }
}

#[test]
fn empty_tool_results_never_carry_a_breakpoint() {
    let mut server = Server::start(Wire::Lsp, "memory");
    server.ok("thread/open", json!({"threadId": "t"}));
    let events = json!([
        {"type": "message", "role": "user", "content": "go", "iteration": 0},
        {"type": "tool_call", "toolName": "touch", "toolCallId": "a", "args": {}, "iteration": 1},
        {"type": "tool_result", "toolCallId": "a", "result": "", "iteration": 1},
    ]);
    server.ok("thread/append", json!({"threadId": "t", "events": events}));
    let result = server
        .ok("thread/render", json!({"threadId": "t", "format": "anthropic", "options": {"cacheControl": "auto"}}));
    let messages = result["messages"].as_array().unwrap();
    let last = messages.last().unwrap()["content"].as_array().unwrap();
    assert!(last[0].get("content").is_none() && last[0].get("cache_control").is_none(), "{result}");
    // The one breakpoint is on the call, the last block with content; it looks back to the start.
    assert_eq!(messages[1]["content"][0]["cache_control"], json!({"type": "ephemeral"}), "{result}");
    assert_eq!(result.to_string().matches("cache_control").count(), 1, "{result}");
    assert!(result.get("system").is_none());
}

/// A step of many blocks (15 parallel calls: 31 blocks, more than the API looks back), ending
/// with an assistant note, as the TypeScript suite's wide steps do.
fn wide_step(i: u64, calls: u64) -> Vec<Value> {
    let mut events = Vec::new();
    for k in 0..calls {
        events.push(json!({"type": "tool_call", "toolName": "read", "toolCallId": format!("s{i}_{k}"), "args": {"k": k}, "iteration": i}));
    }
    for k in 0..calls {
        let result = format!("file {k} of step {i}: {}", "x".repeat(600));
        events
            .push(json!({"type": "tool_result", "toolCallId": format!("s{i}_{k}"), "result": result, "iteration": i}));
    }
    events.push(
        json!({"type": "message", "role": "assistant", "content": format!("Read {calls} files."), "iteration": i}),
    );
    events
}

#[test]
fn every_step_reads_the_whole_previous_request_however_many_blocks_it_adds() {
    let mut server = Server::start(Wire::Ndjson, "memory");
    open(&mut server, "t");
    server.ok("thread/append", json!({"threadId": "t", "events": first_events()}));
    let mut cache = AnthropicCache::default();
    let render =
        |server: &mut Server| {
            body(&server.ok(
                "thread/render",
                json!({"threadId": "t", "format": "anthropic", "options": {"cacheControl": "auto"}}),
            ))
        };
    let mut previous = render(&mut server);
    cache.send(&previous);
    for i in 1..=16 {
        server.ok("thread/append", json!({"threadId": "t", "events": wide_step(i, if i % 4 == 0 { 15 } else { 1 })}));
        let request = render(&mut server);
        let usage = cache.send(&request);
        let before = AnthropicCache::default().send(&previous).input;
        assert!(breakpoints(&request) <= 4);
        if before >= prompt_cache::MIN_CACHED_TOKENS {
            assert_eq!(usage.read, before, "step {i} does not read the whole previous request");
        }
        previous = request;
    }
}
