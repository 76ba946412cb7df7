//! Model input providers can cache, through the protocol: Anthropic breakpoints
//! (`options.cacheControl`), a budget that keeps its cut (`options.budget.dropTo`), and
//! renders that extend the previous one — checked by replaying Anthropic's documented
//! caching rules on a 300-step coding-agent run.

use crate::support::golden::Goldens;
use crate::support::{Server, Wire};
use serde_json::{json, Value};

#[path = "../../benches/support/prompt_cache.rs"]
#[allow(dead_code)]
pub(crate) mod prompt_cache;
use prompt_cache::{anthropic_blocks, AnthropicCache, ANTHROPIC_READ, ANTHROPIC_WRITE};
use prompt_cache::{openai_blocks, OpenAiBreakpointCache, OpenAiCache, OPENAI_READ, OPENAI_WRITE};

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

/// Runs 300 steps on thread `thread`, rendering each `(format, options)` after each step;
/// returns every render result, by render.
fn run_renders(server: &mut Server, thread: &str, renders: &[(&str, Value)]) -> Vec<Vec<Value>> {
    open(server, thread);
    server.ok("thread/append", json!({"threadId": thread, "events": first_events()}));
    let mut results = vec![Vec::new(); renders.len()];
    for i in 1..=300 {
        server.ok("thread/append", json!({"threadId": thread, "events": step(i)}));
        for ((format, options), results) in renders.iter().zip(&mut results) {
            let params = json!({"threadId": thread, "format": format, "options": options});
            results.push(server.ok("thread/render", params));
        }
    }
    results
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
        (json!({"format": "ai-sdk", "options": {"cacheControl": "auto"}}), "options.cacheControl"),
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

/// The `<thread>` document of an Anthropic XML-mode request: its one user turn's blocks joined.
fn joined_document(request: &Value) -> String {
    let content = request["messages"][0]["content"].as_array().unwrap();
    content.iter().map(|block| block["text"].as_str().unwrap()).collect()
}

#[test]
fn xml_context_mode_goes_out_in_blocks_that_anthropic_reads_from_the_cache() {
    let mut server = Server::start(Wire::Ndjson, "memory");
    let options = json!({"cacheControl": "auto", "contextMode": "xml"});
    let results = run_renders(&mut server, "run", &[("anthropic", options), ("xml", json!({}))]);
    let (requests, documents) = (&results[0], &results[1]);
    let mut cache = AnthropicCache::default();
    let mut most_blocks = 0;
    for (request, document) in requests.iter().zip(documents) {
        let request = body(request);
        assert!(breakpoints(&request) <= 4, "{} breakpoints", breakpoints(&request));
        assert_eq!(request["messages"].as_array().unwrap().len(), 1);
        assert_eq!(joined_document(&request), document["text"].as_str().unwrap());
        most_blocks = most_blocks.max(request["messages"][0]["content"].as_array().unwrap().len());
        cache.send(&request);
    }
    // 300 iterations: at most 3 groups per power of four below 300, the newest, the close.
    assert!(most_blocks <= 3 * 5 + 2, "{most_blocks} blocks");
    let total = cache.total;
    assert!(total.read_share() >= 0.95, "read {:.3} of the input", total.read_share());
    let cost = total.relative_cost(ANTHROPIC_READ, ANTHROPIC_WRITE);
    assert!(cost <= 0.15, "cost {cost:.3}× uncached");
    let last = body(requests.last().unwrap());
    assert_eq!(last["system"][0]["cache_control"], json!({"type": "ephemeral"}));
    let blocks = last["messages"][0]["content"].as_array().unwrap();
    assert_eq!(blocks.last().unwrap()["text"], "</thread>");
    assert!(blocks.last().unwrap().get("cache_control").is_none(), "the closing tag moves with every append");
}

#[test]
fn xml_context_mode_under_a_kept_cut_is_cached_between_cuts() {
    let mut server = Server::start(Wire::Ndjson, "memory");
    let budget = json!({"maxTokens": 30000, "dropTo": 18000});
    let options = json!({"cacheControl": "auto", "contextMode": "xml", "budget": budget});
    let results = run_renders(&mut server, "run", &[("anthropic", options)]);
    let mut cache = AnthropicCache::default();
    for result in &results[0] {
        assert!(result["tokens"].as_u64().unwrap() <= 30000);
        let request = body(result);
        assert!(breakpoints(&request) <= 4);
        let document = joined_document(&request);
        assert!(document.starts_with("<thread>\n  <event ") && document.ends_with("</thread>"), "{document}");
        cache.send(&request);
    }
    let total = cache.total;
    assert!(total.read_share() >= 0.80, "read {:.3} of the input", total.read_share());
    let cost = total.relative_cost(ANTHROPIC_READ, ANTHROPIC_WRITE);
    assert!(cost <= 0.30, "cost {cost:.3}× uncached");
}

/// The explicit breakpoints of an OpenAI request, as (role, block) pairs.
fn explicit_breakpoints(request: &Value) -> Vec<(String, Value)> {
    openai_blocks(request).into_iter().filter(|b| b.breakpoint).map(|b| (b.role, b.block)).collect()
}

/// Replays `requests` under GPT-5.6's rules, checking each request's breakpoints and key.
fn replay_gpt_5_6(requests: &[Value], key: &str) -> prompt_cache::Usage {
    let mut cache = OpenAiBreakpointCache::default();
    for request in requests {
        let marks = explicit_breakpoints(request);
        assert!(!marks.is_empty() && marks.len() <= 3, "{} explicit breakpoints", marks.len());
        for (role, block) in &marks {
            assert_ne!(role, "assistant");
            assert!(!block["text"].as_str().unwrap().is_empty(), "a breakpoint on an empty block");
        }
        assert_eq!(request["prompt_cache_key"], key);
        assert_eq!(request["prompt_cache_options"], json!({"mode": "implicit"}));
        cache.send(request);
    }
    cache.total
}

#[test]
fn openai_auto_caching_reads_almost_everything_under_gpt_5_6_rules() {
    let mut server = Server::start(Wire::Ndjson, "memory");
    let auto = json!({"cacheControl": "auto"});
    let renders = [
        ("openai-chat", auto.clone()),
        ("openai-responses", auto.clone()),
        ("openai-chat", json!({"cacheControl": "auto", "contextMode": "xml"})),
        ("openai-responses", json!({"cacheControl": "auto", "contextMode": "xml"})),
    ];
    let results = run_renders(&mut server, "run", &renders);
    let key = results[0][0]["prompt_cache_key"].as_str().unwrap().to_owned();
    assert!(key.starts_with("tk-") && !key.contains("run"), "{key}");
    for (at, (format, options)) in renders.iter().enumerate() {
        let requests: Vec<Value> = results[at].iter().map(body).collect();
        let total = replay_gpt_5_6(&requests, &key);
        assert!(total.read_share() >= 0.90, "{format} {options}: read {:.3} of the input", total.read_share());
        let cost = total.relative_cost(OPENAI_READ, OPENAI_WRITE);
        assert!(cost <= 0.20, "{format} {options}: cost {cost:.3}× uncached");
    }
    // The system prompt is the first block marked; Responses moves it out of `instructions`.
    let last_responses = body(results[1].last().unwrap());
    assert!(last_responses.get("instructions").is_none());
    assert_eq!(last_responses["input"][0]["role"], "system");
    assert_eq!(explicit_breakpoints(&last_responses)[0].1["text"], instructions());
    // XML mode: the user message's parts join to the document.
    let xml = body(results[2].last().unwrap());
    let parts = xml["messages"][1]["content"].as_array().unwrap();
    let document: String = parts.iter().map(|p| p["text"].as_str().unwrap()).collect();
    assert!(document.starts_with("<thread>\n") && document.ends_with("</thread>"));
    assert!(parts.len() > 2);

    // Another thread has another key; the same thread keeps its own.
    open(&mut server, "other");
    server.ok("thread/append", json!({"threadId": "other", "events": first_events()}));
    for format in ["openai-chat", "openai-responses"] {
        let other = server.ok("thread/render", json!({"threadId": "other", "format": format, "options": auto}));
        assert!(other["prompt_cache_key"].as_str().unwrap() != key);
        let same = server.ok("thread/render", json!({"threadId": "run", "format": format, "options": auto}));
        assert_eq!(same["prompt_cache_key"], key);
    }
}

#[test]
fn openai_caching_under_a_kept_cut_costs_at_most_three_tenths() {
    let mut server = Server::start(Wire::Ndjson, "memory");
    let options = json!({"cacheControl": "auto", "budget": {"maxTokens": 30000, "dropTo": 18000}});
    let renders = [("openai-chat", options.clone()), ("openai-responses", options)];
    let results = run_renders(&mut server, "run", &renders);
    let key = results[0][0]["prompt_cache_key"].as_str().unwrap().to_owned();
    for (at, (format, _)) in renders.iter().enumerate() {
        let requests: Vec<Value> = results[at].iter().map(body).collect();
        let total = replay_gpt_5_6(&requests, &key);
        let cost = total.relative_cost(OPENAI_READ, OPENAI_WRITE);
        assert!(cost <= 0.30, "{format}: cost {cost:.3}× uncached");
    }
}

#[test]
fn openai_cache_options_override_key_breakpoints_and_ttl() {
    let mut server = Server::start(Wire::Lsp, "memory");
    open(&mut server, "t");
    let mut events = first_events();
    (1..=3).for_each(|i| events.extend(step(i)));
    server.ok("thread/append", json!({"threadId": "t", "events": events}));
    let render = |server: &mut Server, format: &str, options: Value| {
        server.ok("thread/render", json!({"threadId": "t", "format": format, "options": options}))
    };
    for format in ["openai-chat", "openai-responses"] {
        // Without the option, or with "none": today's bytes.
        let plain = render(&mut server, format, json!({}));
        assert_eq!(render(&mut server, format, json!({"cacheControl": "none"})), plain);
        assert!(!plain.to_string().contains("prompt_cache"), "{plain}");

        let given = render(&mut server, format, json!({"cacheControl": {"key": "tenant-7/run", "ttl": "30m"}}));
        assert_eq!(given["prompt_cache_key"], "tenant-7/run");
        assert_eq!(given["prompt_cache_options"], json!({"mode": "implicit", "ttl": "30m"}));
        assert!(!given.to_string().contains("prompt_cache_retention"));

        let explicit = render(&mut server, format, json!({"cacheControl": {"breakpoints": "explicit"}}));
        assert_eq!(explicit["prompt_cache_options"], json!({"mode": "explicit"}));
        assert_eq!(explicit_breakpoints(&explicit).len(), 2);

        // Implicit only: today's messages, with the key and options.
        let implicit = body(&render(&mut server, format, json!({"cacheControl": {"breakpoints": "implicit"}})));
        assert_eq!(implicit["prompt_cache_options"], json!({"mode": "implicit"}));
        let mut stripped = implicit.clone();
        stripped.as_object_mut().unwrap().remove("prompt_cache_key");
        stripped.as_object_mut().unwrap().remove("prompt_cache_options");
        assert_eq!(stripped, body(&plain));

        // None: the key alone, for models before GPT-5.6.
        let none = body(&render(&mut server, format, json!({"cacheControl": {"breakpoints": "none"}})));
        assert!(none.get("prompt_cache_options").is_none() && none["prompt_cache_key"].is_string(), "{none}");
    }
    let refused = [
        (json!({"format": "openai-chat", "options": {"cacheControl": "always"}}), "options.cacheControl"),
        (json!({"format": "openai-chat", "options": {"cacheControl": {"ttl": "5m"}}}), "options.cacheControl.ttl"),
        (json!({"format": "openai-responses", "options": {"cacheControl": {"key": ""}}}), "options.cacheControl.key"),
        (
            json!({"format": "openai-chat", "options": {"cacheControl": {"key": "k".repeat(65)}}}),
            "options.cacheControl.key",
        ),
        (json!({"format": "openai-chat", "options": {"cacheControl": {"key": 7}}}), "options.cacheControl.key"),
        (
            json!({"format": "openai-chat", "options": {"cacheControl": {"breakpoints": "all"}}}),
            "options.cacheControl.breakpoints",
        ),
        (
            json!({"format": "openai-responses", "options": {"cacheControl": {"breakpoints": "none", "ttl": "30m"}}}),
            "options.cacheControl.ttl",
        ),
        (
            json!({"format": "openai-chat", "options": {"cacheControl": {"prompt_cache_retention": "24h"}}}),
            "options.cacheControl.prompt_cache_retention",
        ),
        (json!({"format": "anthropic", "options": {"cacheControl": {"key": "k"}}}), "options.cacheControl.key"),
        (json!({"format": "messages", "options": {"cacheControl": "auto"}}), "options.cacheControl"),
    ];
    for (mut params, path) in refused {
        params["threadId"] = json!("t");
        let error = server.err("thread/render", params.clone());
        assert_eq!(error["code"], -32602, "{params}: {error}");
        assert!(error["message"].as_str().unwrap().contains(path), "{params}: {error}");
    }
}

#[test]
fn openai_automatic_caching_is_unchanged_by_the_key() {
    // Models before GPT-5.6 cache the longest repeated prefix: the key and options add nothing
    // a prefix could differ by.
    let mut server = Server::start(Wire::Ndjson, "memory");
    open(&mut server, "t");
    server.ok("thread/append", json!({"threadId": "t", "events": first_events()}));
    let mut cache = OpenAiCache::default();
    for i in 1..=20 {
        server.ok("thread/append", json!({"threadId": "t", "events": step(i)}));
        let options = json!({"cacheControl": {"breakpoints": "none"}});
        let request = server.ok("thread/render", json!({"threadId": "t", "format": "openai-chat", "options": options}));
        cache.send(&request["messages"]);
    }
    assert!(cache.total.read_share() >= 0.8, "read {:.3}", cache.total.read_share());
}

/// The cached request forms of `tests/golden/caching/steps.events.json`, byte for byte:
/// `steps.FORM.MODE.json` (`UPDATE_GOLDEN=1` rewrites them; review every changed byte), each
/// valid against `protocol/schema/providers.json`.
#[test]
fn cached_request_goldens() {
    use threadkeeper::messages::{ContextMode, MessageOptions};
    use threadkeeper::providers::anthropic::CacheControl as AnthropicCache;
    use threadkeeper::providers::openai_cache::{Breakpoints, CacheControl, CacheKey, Caching};
    use threadkeeper::providers::{render_request_with, ProviderOptions};
    use threadkeeper::{AgentEvent, Provider};

    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/caching");
    let case: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("steps.events.json")).unwrap()).unwrap();
    let base: MessageOptions = serde_json::from_value(case["options"].clone()).unwrap();
    let events = AgentEvent::list_from_values(case["events"].as_array().unwrap().clone()).unwrap();
    let openai = |breakpoints| ProviderOptions {
        openai_cache: CacheControl::On(Caching { key: Some(CacheKey::new("steps").unwrap()), breakpoints, ttl: None }),
        ..Default::default()
    };
    let anthropic = ProviderOptions { cache_control: AnthropicCache::Auto { ttl: None }, ..Default::default() };
    let forms = [
        (Provider::Anthropic, "anthropic", anthropic, "anthropic"),
        (Provider::OpenAiChat, "openai-chat", openai(Breakpoints::Auto), "openaiChat"),
        (Provider::OpenAiResponses, "openai-responses", openai(Breakpoints::Auto), "openaiResponses"),
        (Provider::OpenAiChat, "openai-chat-implicit", openai(Breakpoints::Implicit), "openaiChat"),
    ];
    let mut goldens = Goldens::new();
    for (provider, form, provider_options, definition) in forms {
        let validator = crate::schemas::validator(&format!("providers.json#/$defs/{definition}"));
        for (mode, mode_name) in [(ContextMode::Standard, "standard"), (ContextMode::Xml, "xml")] {
            let options = MessageOptions { context_mode: mode, ..base.clone() };
            let text = render_request_with(&events, &options, provider, &provider_options, true) + "\n";
            let body: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(crate::schemas::errors(&validator, &body), Vec::<String>::new(), "{form} {mode_name}");
            goldens.check(&dir.join(format!("steps.{form}.{mode_name}.json")), &text);
        }
    }
    goldens.finish();
}

/// `threadkeeper render` with the caching flags, on a thread file read from stdin.
fn cli_render(args: &[&str]) -> std::process::Output {
    let mut events = first_events();
    (1..=3).for_each(|i| events.extend(step(i)));
    // A refused command may exit before it reads its input: run_bounded lets the write fail then.
    let input = Value::Array(events).to_string();
    let mut render = std::process::Command::new(env!("CARGO_BIN_EXE_threadkeeper"));
    crate::support::run_bounded(render.arg("render").args(args).arg("-"), Some(input.as_bytes()))
}

#[test]
fn the_cli_takes_the_openai_cache_flags_and_refuses_the_wrong_ones() {
    let auto = cli_render(&["--format", "openai-chat", "--instructions", "Be brief.", "--cache-control", "auto"]);
    assert!(auto.status.success(), "{}", String::from_utf8_lossy(&auto.stderr));
    let request: Value = serde_json::from_slice(&auto.stdout).unwrap();
    // A file has no thread id: its first event's hash stands for it, the same at every render.
    let key = request["prompt_cache_key"].as_str().unwrap().to_owned();
    assert!(key.starts_with("tk-"), "{key}");
    let again: Value =
        serde_json::from_slice(&cli_render(&["--format", "openai-chat", "--cache-control", "auto"]).stdout).unwrap();
    assert_eq!(again["prompt_cache_key"], key.as_str());
    assert_eq!(explicit_breakpoints(&request).len(), 2);

    let given = cli_render(&[
        "--format",
        "openai-responses",
        "--context-mode",
        "xml",
        "--cache-key",
        "tenant-7",
        "--cache-breakpoints",
        "explicit",
        "--cache-ttl",
        "30m",
    ]);
    let request: Value = serde_json::from_slice(&given.stdout).unwrap();
    assert_eq!(request["prompt_cache_key"], "tenant-7");
    assert_eq!(request["prompt_cache_options"], json!({"mode": "explicit", "ttl": "30m"}));
    assert!(request["input"][0]["content"].as_array().unwrap().len() > 2, "{request}");

    let plain = cli_render(&["--format", "openai-chat"]);
    assert_eq!(cli_render(&["--format", "openai-chat", "--cache-control", "none"]).stdout, plain.stdout);
    for wrong in [
        &["--format", "openai-chat", "--cache-ttl", "5m"][..],
        &["--format", "anthropic", "--cache-key", "k"],
        &["--format", "messages", "--cache-control", "auto"],
        &["--format", "openai-chat", "--cache-key", ""],
        &["--format", "openai-chat", "--cache-breakpoints", "none", "--cache-ttl", "30m"],
        &["--format", "openai-chat", "--cache-control", "none", "--cache-key", "k"],
    ] {
        let refused = cli_render(wrong);
        assert_eq!(refused.status.code(), Some(2), "{wrong:?}");
        assert!(refused.stdout.is_empty() && !refused.stderr.is_empty(), "{wrong:?}");
    }
}
