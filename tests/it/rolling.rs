//! Rolling compaction through the protocol (`strategy: "rolling"`): rounds that summarize the
//! oldest iterations into messages after the instructions, merges that keep the summaries in
//! their room, a view that is a function of the log, and long runs that stay inside the
//! window and the cache — checked by replaying the providers' caching rules.

use crate::support::{Server, Wire};
use serde_json::{json, Value};

// The one copy of the replayed caching rules, compiled once in this test crate.
use crate::caching::prompt_cache;
#[path = "../../benches/support/rolling_host.rs"]
mod rolling_host;

use prompt_cache::{AnthropicCache, OpenAiCache, ANTHROPIC_READ, ANTHROPIC_WRITE, OPENAI_READ};
use rolling_host::{compact_until_fits, request_tokens, scripted_summary, Rounds};

const INSTRUCTIONS: &str = "You are a careful coding agent. Read before you edit; keep changes small & tested.";

/// Step `i` of a coding run: an assistant note, a call and its ~1.6 kB result (nasty strings
/// included), and every 7th step an error answering a second call.
fn step_events(i: u64) -> Vec<Value> {
    let body: String =
        (0..30).map(|line| format!("fn item_{i}_{line}() -> u32 {{ {line} }} // <ok> & \"done\" 🦀\n")).collect();
    let mut events = vec![
        json!({"type": "message", "role": "assistant", "content": format!("Step {i}: reading the next file."), "iteration": i}),
        json!({"type": "tool_call", "toolName": "read_file", "toolCallId": format!("call_{i}"), "args": {"path": format!("src/file_{i}.rs")}, "iteration": i}),
        json!({"type": "tool_result", "toolCallId": format!("call_{i}"), "result": body, "iteration": i}),
    ];
    if i.is_multiple_of(7) {
        events.push(json!({"type": "tool_call", "toolName": "run_tests", "toolCallId": format!("test_{i}"), "args": {}, "iteration": i}));
        events.push(json!({"type": "error", "error": "exit code 101 'quoted'", "recoverable": true, "toolCallId": format!("test_{i}"), "iteration": i}));
    }
    events
}

fn first_events() -> Vec<Value> {
    vec![json!({"type": "message", "role": "user", "content": "Refactor the crate — carefully.", "iteration": 0})]
}

fn started(thread: &str, steps: u64) -> Server {
    let mut server = Server::start(Wire::Lsp, "memory");
    server.ok("thread/open", json!({"threadId": thread, "settings": {"instructions": INSTRUCTIONS}}));
    let mut events = first_events();
    (1..=steps).for_each(|i| events.extend(step_events(i)));
    server.ok("thread/append", json!({"threadId": thread, "events": events}));
    server
}

fn plan_params(max_tokens: u64, compact_to: u64) -> Value {
    json!({"strategy": "rolling", "maxTokens": max_tokens, "compactTo": compact_to, "tokenizer": "o200k_base",
        "format": "anthropic", "options": {"cacheControl": "auto"}})
}

fn plan(server: &mut Server, thread: &str, max_tokens: u64, compact_to: u64) -> Value {
    let mut params = plan_params(max_tokens, compact_to);
    params["threadId"] = json!(thread);
    server.ok("thread/planCompaction", params)
}

fn render(server: &mut Server, thread: &str, format: &str, options: Value) -> Value {
    server.ok("thread/render", json!({"threadId": thread, "format": format, "options": options}))
}

/// Every format's rendering, without the version (a round moves it on).
fn every_format(server: &mut Server, thread: &str) -> Vec<Value> {
    let mut renders: Vec<Value> =
        ["xml", "messages", "text", "openai-chat", "openai-responses", "anthropic", "ai-sdk", "pydantic-ai"]
            .into_iter()
            .map(|format| render(server, thread, format, json!({})))
            .collect();
    renders.push(render(server, thread, "messages", json!({"contextMode": "xml"})));
    renders.push(render(server, thread, "anthropic", json!({"cacheControl": "auto"})));
    for render in &mut renders {
        render.as_object_mut().unwrap().remove("version");
    }
    renders
}

#[test]
fn a_round_summarizes_the_oldest_iterations_into_a_message_after_the_instructions() {
    let mut server = started("t", 12);
    let planned = plan(&mut server, "t", 4000, 2500);
    assert_eq!(planned["needed"], true, "{planned}");
    let step = &planned["step"];
    assert_eq!(step["kind"], "summarize");
    let [first, last] = [step["iterations"][0].as_u64().unwrap(), step["iterations"][1].as_u64().unwrap()];
    assert_eq!(first, 0, "a round starts at the oldest iteration");
    assert!(last < 12, "never the newest");
    let prompt = step["prompt"].as_str().unwrap();
    assert!(prompt.contains(&format!("Summarize iterations 0 to {last}")), "{prompt}");
    assert!(prompt.contains("<event type=\"human\" id=\"0\" iteration=\"0\">Refactor the crate — carefully.</event>"));
    assert!(prompt.contains(&format!("src/file_{last}.rs")) && !prompt.contains(&format!("src/file_{}.rs", last + 1)));

    let summary = "Read files 1 to N & fixed <two> bugs.";
    let done =
        server.ok("thread/compact", json!({"threadId": "t", "strategy": "rolling", "step": step, "summary": summary}));
    assert_eq!(done["round"], 1);
    assert_eq!(done["version"], 2);

    // The summary is the first message after the instructions, in every format.
    let messages = render(&mut server, "t", "messages", json!({}))["messages"].clone();
    assert_eq!(messages[0]["data"]["content"], INSTRUCTIONS, "the system message holds the instructions alone");
    assert_eq!(messages[1]["type"], "human");
    let label = format!("[Summary of iterations 0 to {last}]: {summary}");
    assert_eq!(messages[1]["data"]["content"], label);
    let anthropic = render(&mut server, "t", "anthropic", json!({"cacheControl": "auto"}));
    assert_eq!(anthropic["system"][0]["text"], INSTRUCTIONS);
    assert_eq!(anthropic["messages"][0]["content"][0]["text"], label);
    // The summaries end on a breakpoint of their own: the next round reads them from the cache.
    assert_eq!(anthropic["messages"][0]["content"][0]["cache_control"], json!({"type": "ephemeral"}));
    assert!(anthropic.to_string().matches("cache_control").count() <= 4);
    let plain = render(&mut server, "t", "anthropic", json!({}));
    assert!(!plain.to_string().contains("cache_control"), "no breakpoint without the option");
    // So do they on OpenAI's explicit breakpoints (at most 3: the system prompt, the summaries, the end).
    let chat = render(&mut server, "t", "openai-chat", json!({"cacheControl": "auto"}));
    assert_eq!(chat["messages"][1]["content"][0]["text"], label);
    assert_eq!(chat["messages"][1]["content"][0]["prompt_cache_breakpoint"], json!({"mode": "explicit"}), "{chat}");
    assert_eq!(chat.to_string().matches("prompt_cache_breakpoint").count(), 3);
    let responses = render(&mut server, "t", "openai-responses", json!({"cacheControl": "auto"}));
    assert_eq!(
        responses["input"][1]["content"][0]["prompt_cache_breakpoint"],
        json!({"mode": "explicit"}),
        "{responses}"
    );
    assert_eq!(responses.to_string().matches("prompt_cache_breakpoint").count(), 3);
    let chat = render(&mut server, "t", "openai-chat", json!({}));
    assert_eq!(chat["messages"][1], json!({"role": "user", "content": label}));
    let responses = render(&mut server, "t", "openai-responses", json!({}));
    assert_eq!(responses["instructions"], INSTRUCTIONS);
    assert_eq!(responses["input"][0]["content"], label);
    let xml = render(&mut server, "t", "xml", json!({}))["text"].as_str().unwrap().to_owned();
    let first_line = xml.lines().nth(1).unwrap();
    assert_eq!(
        first_line,
        format!(
            "  <event type=\"summary\" id=\"0\" iteration=\"{last}\" summarizedIterations=\"0,{last}\">Read files 1 to N &amp; fixed &lt;two&gt; bugs.</event>"
        )
    );
    assert!(!xml.contains("src/file_1.rs") && xml.contains(&format!("src/file_{}.rs", last + 1)));
    let xml_mode = render(&mut server, "t", "messages", json!({"contextMode": "xml"}))["messages"].clone();
    assert_eq!(xml_mode[0]["data"]["content"], INSTRUCTIONS, "not in the system message in XML mode either");
    for format in ["ai-sdk", "pydantic-ai", "text"] {
        let rendered = render(&mut server, "t", format, json!({})).to_string();
        assert_eq!(rendered.matches("[Summary of iterations").count(), 1, "{format}: {rendered}");
    }

    // Nothing left the log; the round is one marked event at its end.
    let events = server.ok("thread/events", json!({"threadId": "t"}))["events"].clone();
    let appended = 1 + (1..=12).map(|i| step_events(i).len()).sum::<usize>();
    assert_eq!(events.as_array().unwrap().len(), appended + 1);
    let round = events.as_array().unwrap().last().unwrap();
    assert_eq!(round["compaction"], json!({"strategy": "rolling", "round": 1, "iterations": [0, last]}));
    assert_eq!(round["summarizedIterations"], json!([0, last]));

    // Planned again, the view fits.
    let again = plan(&mut server, "t", 4000, 2500);
    assert_eq!(again["needed"], false, "{again}");
    assert!(again["tokens"].as_u64().unwrap() <= 4000);
    assert!(again.get("step").is_none());
}

#[test]
fn the_view_is_a_function_of_the_log_and_a_pop_undoes_a_round() {
    let mut server = started("t", 20);
    let before = every_format(&mut server, "t");
    let mut rounds = Rounds::default();
    let mut summarize = |step: &Value| scripted_summary(step, 300);
    compact_until_fits(&mut |m, p| server.ok(m, p), "t", &plan_params(4000, 2500), &mut summarize, &mut rounds);
    // More steps and more rounds, long enough summaries that one of them is a merge.
    let mut events = Vec::new();
    (21..=40).for_each(|i| events.extend(step_events(i)));
    for chunk in events.chunks(4) {
        server.ok("thread/append", json!({"threadId": "t", "events": chunk}));
        let params = json!({"strategy": "rolling", "maxTokens": 4000, "compactTo": 2500, "summaryTokens": 700,
            "tokenizer": "o200k_base", "format": "openai-chat"});
        compact_until_fits(&mut |m, p| server.ok(m, p), "t", &params, &mut summarize, &mut rounds);
    }
    assert!(rounds.summarize >= 3 && rounds.merge >= 1, "{rounds:?}");
    let after = every_format(&mut server, "t");

    // A fresh server given the stored events renders the same bytes.
    let log = server.ok("thread/events", json!({"threadId": "t"}))["events"].clone();
    let mut fresh = Server::start(Wire::Ndjson, "memory");
    fresh.ok("thread/open", json!({"threadId": "t", "settings": {"instructions": INSTRUCTIONS}}));
    fresh.ok("thread/append", json!({"threadId": "t", "events": log}));
    assert_eq!(every_format(&mut fresh, "t"), after);

    // Export and import keep it.
    let exported = server.ok("thread/export", json!({"threadId": "t", "format": "json"}));
    fresh.ok("thread/import", json!({"threadId": "imported", "format": "json", "text": exported["text"]}));
    let imported = fresh.ok("thread/events", json!({"threadId": "imported"}))["events"].clone();
    assert_eq!(imported, log);

    // Popping every round's event (and what came after) gives back the renders before them.
    let appended_first = 1 + (1..=20).map(|i| step_events(i).len()).sum::<usize>();
    let count = log.as_array().unwrap().len() - appended_first;
    server.ok("thread/pop", json!({"threadId": "t", "count": count}));
    assert_eq!(every_format(&mut server, "t"), before);
}

#[test]
fn merges_keep_the_summaries_within_their_room() {
    let mut server = started("t", 4);
    let params = json!({"strategy": "rolling", "maxTokens": 3000, "compactTo": 2000, "summaryTokens": 600,
        "tokenizer": "o200k_base", "format": "messages"});
    let mut rounds = Rounds::default();
    let mut summarize = |step: &Value| scripted_summary(step, 150);
    for i in 5..=60 {
        server.ok("thread/append", json!({"threadId": "t", "events": step_events(i)}));
        let planned = compact_until_fits(&mut |m, p| server.ok(m, p), "t", &params, &mut summarize, &mut rounds);
        assert_eq!(planned["needed"], false, "step {i}: {planned}");
        assert!(planned["tokens"].as_u64().unwrap() <= 3000, "step {i}: {planned}");
        // After a round the summaries may pass their room by one summary; the next round merges.
        assert!(planned["summaryTokens"].as_u64().unwrap() <= 600 + 250, "step {i}: {planned}");
    }
    assert!(rounds.merge >= 2, "{rounds:?}");
    // A merged summary sits where the merged ones were: first after the instructions.
    let messages = render(&mut server, "t", "messages", json!({}))["messages"].clone();
    let first = messages[1]["data"]["content"].as_str().unwrap();
    assert!(first.starts_with("[Summary of iterations 0 to ") && first.contains("Summary of rounds"), "{first}");
}

#[test]
fn refusals_say_what_is_wrong_and_where_and_change_nothing() {
    let mut server = started("t", 12);
    let planned = plan(&mut server, "t", 4000, 2500);
    let step = planned["step"].clone();
    let last = step["iterations"][1].as_u64().unwrap();
    let refused = [
        ("thread/planCompaction", json!({"strategy": "rolling", "maxTokens": 100, "compactTo": 200}), "compactTo"),
        ("thread/planCompaction", json!({"strategy": "rolling", "compactTo": 200}), "maxTokens"),
        ("thread/planCompaction", json!({"strategy": "sliding", "maxTokens": 100}), "strategy"),
        (
            "thread/planCompaction",
            json!({"strategy": "rolling", "maxTokens": 9, "compactTo": 5, "keepRecentIterations": 2}),
            "keepRecentIterations",
        ),
        (
            "thread/planCompaction",
            json!({"strategy": "rolling", "maxTokens": 9, "compactTo": 5, "tokenizer": "gpt2"}),
            "tokenizer",
        ),
        (
            "thread/planCompaction",
            json!({"strategy": "rolling", "maxTokens": 9, "compactTo": 5, "options": {"budget": {"maxTokens": 5}}}),
            "options.budget",
        ),
        ("thread/compact", json!({"strategy": "rolling", "step": step, "summary": ""}), "summary"),
        ("thread/compact", json!({"strategy": "rolling", "step": step, "summary": " \n "}), "summary"),
        (
            "thread/compact",
            json!({"strategy": "rolling", "step": {"kind": "summarize", "iterations": [1, last]}, "summary": "s"}),
            "step.iterations",
        ),
        (
            "thread/compact",
            json!({"strategy": "rolling", "step": {"kind": "summarize", "iterations": [0, 12]}, "summary": "s"}),
            "step.iterations",
        ),
        (
            "thread/compact",
            json!({"strategy": "rolling", "step": {"kind": "summarize", "iterations": [3, 1]}, "summary": "s"}),
            "step.iterations",
        ),
        (
            "thread/compact",
            json!({"strategy": "rolling", "step": {"kind": "summarize"}, "summary": "s"}),
            "step.iterations",
        ),
        (
            "thread/compact",
            json!({"strategy": "rolling", "step": {"kind": "merge", "rounds": [1, 2]}, "summary": "s"}),
            "step.rounds[0]",
        ),
        (
            "thread/compact",
            json!({"strategy": "rolling", "step": {"kind": "fold", "rounds": [1]}, "summary": "s"}),
            "step.kind",
        ),
        (
            "thread/compact",
            json!({"strategy": "rolling", "step": step, "summary": "s", "expectedVersion": 7}),
            "step.version",
        ),
        ("thread/compact", json!({"strategy": "rolling", "summaries": [], "summary": "s"}), "summaries"),
    ];
    for (method, mut params, path) in refused {
        params["threadId"] = json!("t");
        let error = server.err(method, params.clone());
        assert_eq!(error["code"], -32602, "{params}: {error}");
        assert_eq!(error["data"]["path"], path, "{params}: {error}");
    }
    // A round planned on an earlier version is a conflict, and nothing is appended.
    server.ok("thread/append", json!({"threadId": "t", "events": step_events(13)}));
    let error =
        server.err("thread/compact", json!({"threadId": "t", "strategy": "rolling", "step": step, "summary": "s"}));
    assert_eq!(error["code"], -32003, "{error}");
    let info = server.ok("thread/events", json!({"threadId": "t"}));
    assert_eq!(info["version"], 2, "only the append moved the version: {info}");
    assert!(!info.to_string().contains("\"rolling\""));
    // The upstream strategy is still the default, and named explicitly it is the same.
    let upstream = server.ok("thread/planCompaction", json!({"threadId": "t", "keepRecentIterations": 2}));
    let named =
        server.ok("thread/planCompaction", json!({"threadId": "t", "strategy": "upstream", "keepRecentIterations": 2}));
    assert_eq!(upstream, named);
    let planned_iterations = upstream["iterations"].as_array().unwrap().len();
    assert_eq!(planned_iterations, 12, "upstream plans iterations 0 to 11 of 0 to 13");
}

/// What a long run through the protocol costs and peaks at, under rolling compaction.
struct LongRun {
    anthropic: prompt_cache::Usage,
    openai: prompt_cache::Usage,
    rounds: Rounds,
    events: usize,
    appended: usize,
    peak_summary_tokens: u64,
}

/// `steps` steps, a compaction check after each (measured as the Anthropic request, in
/// `o200k_base`), then both providers' requests, replayed under their caching rules.
fn long_run(steps: u64, summary_words: usize) -> LongRun {
    let mut server = Server::start(Wire::Lsp, "memory");
    server.ok("thread/open", json!({"threadId": "run", "settings": {"instructions": INSTRUCTIONS.repeat(30)}}));
    server.ok("thread/append", json!({"threadId": "run", "events": first_events()}));
    let (mut anthropic, mut openai) = (AnthropicCache::default(), OpenAiCache::default());
    let mut rounds = Rounds::default();
    let mut appended = 1;
    let mut peak_summary_tokens = 0;
    let mut peaks = (0u64, 0u64);
    let mut summarize = |step: &Value| scripted_summary(step, summary_words);
    for i in 1..=steps {
        let events = step_events(i);
        appended += events.len();
        server.ok("thread/append", json!({"threadId": "run", "events": events}));
        let planned = compact_until_fits(
            &mut |m, p| server.ok(m, p),
            "run",
            &plan_params(30_000, 18_000),
            &mut summarize,
            &mut rounds,
        );
        assert_eq!(planned["needed"], false, "step {i}: {planned}");
        peak_summary_tokens = peak_summary_tokens.max(planned["summaryTokens"].as_u64().unwrap());
        let request = render(&mut server, "run", "anthropic", json!({"cacheControl": "auto"}));
        let mut body = request.clone();
        for key in ["format", "version", "contextMode"] {
            body.as_object_mut().unwrap().remove(key);
        }
        anthropic.send(&body);
        peaks.0 = peaks.0.max(request_tokens(&request));
        let chat = render(&mut server, "run", "openai-chat", json!({}));
        openai.send(&chat["messages"]);
        peaks.1 = peaks.1.max(request_tokens(&chat));
    }
    // Peak context in the bound's own measure: the request body's tokens.
    let (mut anthropic, mut openai) = (anthropic.total, openai.total);
    (anthropic.peak, openai.peak) = peaks;
    let events = server.ok("thread/events", json!({"threadId": "run"}))["events"].as_array().unwrap().len();
    LongRun { anthropic, openai, rounds, events, appended, peak_summary_tokens }
}

fn assert_bounded_and_cheap(run: &LongRun) {
    assert!(run.anthropic.peak <= 30_000, "Anthropic peak {}", run.anthropic.peak);
    assert!(run.openai.peak <= 30_000, "OpenAI peak {}", run.openai.peak);
    let anthropic = run.anthropic.relative_cost(ANTHROPIC_READ, ANTHROPIC_WRITE);
    let openai = run.openai.relative_cost(OPENAI_READ, 0.0);
    eprintln!(
        "rolling: Anthropic {anthropic:.3}× (read {:.1}%), OpenAI {openai:.3}× (read {:.1}%), peaks {} / {}, {:?}",
        run.anthropic.read_share() * 100.0,
        run.openai.read_share() * 100.0,
        run.anthropic.peak,
        run.openai.peak,
        run.rounds
    );
    assert!(anthropic <= 0.25, "Anthropic cost {anthropic:.3}× uncached ({:?})", run.rounds);
    assert!(openai <= 0.25, "OpenAI cost {openai:.3}× uncached ({:?})", run.rounds);
    assert!(run.anthropic.max_breakpoints <= 4);
    // Every appended event is still in the log, with one event per round.
    assert_eq!(run.events, run.appended + run.rounds.calls() as usize);
}

#[test]
fn six_hundred_steps_with_fixed_summaries_stay_in_the_window_and_the_cache() {
    let run = long_run(600, 60);
    assert_bounded_and_cheap(&run);
    assert!(run.rounds.summarize >= 10 && run.rounds.merge == 0, "{:?}", run.rounds);
}

#[test]
fn six_hundred_steps_with_long_summaries_merge_and_stay_in_the_window_and_the_cache() {
    let run = long_run(600, 1200);
    assert_bounded_and_cheap(&run);
    assert!(run.rounds.merge >= 2, "{:?}", run.rounds);
    // The room is maxTokens / 4; between rounds the summaries pass it by at most one summary.
    assert!(run.peak_summary_tokens <= 7_500 + 1_500, "summaries peaked at {}", run.peak_summary_tokens);
}
