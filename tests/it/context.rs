//! Context management against an oracle: upstream's summarization rewrite, restated here on
//! plain JSON values, and threadkeeper's compacted view must render identically in every
//! format after every round, while `thread/events` keeps every original event.

use crate::support::{Server, Wire};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;

const INSTRUCTION: &str = "Summarize the following agent iteration events in 2-3 sentences. Focus on what tools were \
called, what was accomplished, and any errors:";

/// deep-factor-agent's `ContextManager`, restated: the list it holds and its rewrite.
struct Oracle {
    events: Vec<Value>,
}

impl Oracle {
    /// `estimateThreadTokens`: `ceil(len(JSON.stringify(event)) / 3.5)` summed. The tests'
    /// events are ASCII with integer numbers, so serde's compact JSON is `JSON.stringify`'s.
    fn tokens(&self) -> u64 {
        self.events.iter().map(|e| (serde_json::to_string(e).unwrap().len() as f64 / 3.5).ceil() as u64).sum()
    }

    /// The iterations `summarize` would send to its model, with the prompts, and the cutoff.
    fn plan(&self, keep_recent: i64) -> Option<(i64, Vec<(i64, String)>)> {
        let mut by_iteration: BTreeMap<i64, Vec<&Value>> = BTreeMap::new();
        for event in &self.events {
            by_iteration.entry(event["iteration"].as_i64().unwrap()).or_default().push(event);
        }
        let max = *by_iteration.keys().last()?;
        let cutoff = max - keep_recent;
        let old: Vec<i64> = by_iteration.keys().copied().filter(|&i| i <= cutoff).collect();
        if old.is_empty() {
            return None;
        }
        let planned = old
            .into_iter()
            .filter(|i| {
                let events = &by_iteration[i];
                !(events.len() == 1 && events[0]["type"] == "summary")
            })
            .map(|i| {
                let lines: Vec<String> = by_iteration[&i].iter().map(|e| serde_json::to_string(e).unwrap()).collect();
                (i, format!("{INSTRUCTION}\n\n{}", lines.join("\n")))
            })
            .collect();
        Some((cutoff, planned))
    }

    /// `thread.events = [...newSummaries, ...events.filter(e => e.iteration > cutoff || e.type === "summary")]`.
    fn rewrite(&mut self, cutoff: i64, summaries: Vec<Value>) {
        let kept =
            self.events.drain(..).filter(|e| e["iteration"].as_i64().unwrap() > cutoff || e["type"] == "summary");
        self.events = summaries.into_iter().chain(kept).collect();
    }
}

/// One step of a generated agent run: what happens in an iteration.
#[derive(Clone, Debug)]
enum Step {
    Ask(String),
    Answer(String),
    /// A tool call answered in the same iteration, or (when `later`) in the next one.
    Tool {
        name: String,
        later: bool,
    },
    Error,
    /// A summary the host appends itself: upstream keeps it as any event.
    HostSummary,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        "[a-z ]{0,30}".prop_map(Step::Ask),
        "[a-z <&>]{0,30}".prop_map(Step::Answer),
        ("[a-z_]{1,8}", any::<bool>()).prop_map(|(name, later)| Step::Tool { name, later }),
        Just(Step::Error),
        Just(Step::HostSummary),
    ]
}

/// Turns steps into events of consecutive iterations, starting at `first`.
fn events_of(iterations: &[Vec<Step>], first: i64, calls: &mut u64) -> Vec<Value> {
    let mut events = Vec::new();
    let mut carried: Vec<Value> = Vec::new();
    for (n, steps) in iterations.iter().enumerate() {
        let iteration = first + n as i64;
        for mut result in carried.drain(..) {
            result["iteration"] = json!(iteration);
            events.push(result);
        }
        for step in steps {
            match step {
                Step::Ask(text) => {
                    events.push(json!({"type": "message", "role": "user", "content": text, "iteration": iteration}))
                }
                Step::Answer(text) => events
                    .push(json!({"type": "message", "role": "assistant", "content": text, "iteration": iteration})),
                Step::Tool { name, later } => {
                    *calls += 1;
                    let id = format!("call_{calls}");
                    events.push(json!({"type": "tool_call", "toolName": name, "toolCallId": id,
                        "args": {"q": name}, "iteration": iteration, "timestamp": 1700000000000u64}));
                    let result = json!({"type": "tool_result", "toolCallId": id, "result": format!("ran {name}"),
                        "iteration": iteration});
                    if *later {
                        carried.push(result);
                    } else {
                        events.push(result);
                    }
                }
                Step::Error => {
                    events.push(json!({"type": "error", "error": "boom", "recoverable": true, "iteration": iteration}))
                }
                Step::HostSummary => events.push(json!({"type": "summary", "summarizedIterations": [iteration],
                    "summary": "the host's own", "iteration": iteration})),
            }
        }
    }
    let last = first + iterations.len() as i64 - 1;
    for mut result in carried {
        result["iteration"] = json!(last);
        events.push(result);
    }
    events
}

/// Every rendering a thread answers, without the version (the two threads' versions differ).
fn renders(server: &mut Server, thread_id: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for mode in ["standard", "xml"] {
        for format in ["xml", "messages", "text", "openai-chat", "openai-responses", "anthropic"] {
            let options = json!({"contextMode": mode, "instructions": "Be brief.", "responsePrefix": "ai:"});
            let mut rendered =
                server.ok("thread/render", json!({"threadId": thread_id, "format": format, "options": options}));
            rendered.as_object_mut().unwrap().remove("version");
            out.push(rendered);
        }
    }
    out
}

/// Drives `rounds` (events to append, then a compaction round) through threadkeeper and the
/// oracle side by side, checking after each round.
fn run_rounds(server: &mut Server, thread_id: &str, rounds: &[Vec<Vec<Step>>], keep_recent: i64) {
    server.ok("thread/open", json!({"threadId": thread_id}));
    let mut oracle = Oracle { events: Vec::new() };
    let mut log: Vec<Value> = Vec::new();
    let (mut next_iteration, mut calls) = (0, 0);
    for (r, iterations) in rounds.iter().enumerate() {
        let events = events_of(iterations, next_iteration, &mut calls);
        next_iteration += iterations.len() as i64;
        if !events.is_empty() {
            server.ok("thread/append", json!({"threadId": thread_id, "events": events}));
        }
        oracle.events.extend(events.iter().cloned());
        log.extend(events);

        let plan = server.ok(
            "thread/planCompaction",
            json!({"threadId": thread_id, "keepRecentIterations": keep_recent,
            "maxContextTokens": 10}),
        );
        assert_eq!(plan["tokens"], oracle.tokens(), "round {r}: upstream's estimate");
        assert_eq!(plan["needed"], oracle.tokens() > 10);
        let expected = oracle.plan(keep_recent);
        let planned: Vec<(i64, String)> = expected.as_ref().map(|p| p.1.clone()).unwrap_or_default();
        let got: Vec<(i64, String)> = plan["iterations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| (i["iteration"].as_i64().unwrap(), i["prompt"].as_str().unwrap().to_owned()))
            .collect();
        assert_eq!(got, planned, "round {r}: the summarizer prompts");

        let summaries: Vec<Value> =
            planned.iter().map(|(i, _)| json!({"iteration": i, "summary": format!("round {r} did {i}")})).collect();
        let before = log.len();
        server.ok(
            "thread/compact",
            json!({"threadId": thread_id, "summaries": summaries,
            "keepRecentIterations": keep_recent}),
        );
        let stored = server.ok("thread/events", json!({"threadId": thread_id}))["events"].as_array().unwrap().clone();
        let appended = stored[before..].to_vec();
        assert_eq!(appended.len(), planned.len(), "round {r}: one summary per planned iteration, in one append");
        if let Some((cutoff, _)) = expected {
            let upstream_summaries = appended
                .iter()
                .zip(&planned)
                .map(|(event, (i, _))| {
                    json!({"type": "summary", "summarizedIterations": [i], "summary": format!("round {r} did {i}"),
                        "timestamp": event["timestamp"], "iteration": i})
                })
                .collect();
            oracle.rewrite(cutoff, upstream_summaries);
        }
        log.extend(appended);
        assert_eq!(stored.len(), log.len(), "round {r}: the log keeps every event");
        for (got, sent) in stored.iter().zip(&log) {
            assert_eq!(got, sent, "round {r}: thread/events returns the original events");
        }

        // The oracle's list, held by a thread of its own, renders as upstream's thread would.
        let oracle_id = format!("{thread_id}-oracle-{r}");
        server.ok("thread/open", json!({"threadId": oracle_id}));
        if !oracle.events.is_empty() {
            server.ok("thread/append", json!({"threadId": oracle_id, "events": oracle.events}));
        }
        assert_eq!(renders(server, thread_id), renders(server, &oracle_id), "round {r}: renders");
        let plan_after = server.ok("thread/planCompaction", json!({"threadId": thread_id}));
        assert_eq!(plan_after["tokens"], oracle.tokens(), "round {r}: the estimate after the round");
        server.ok("thread/delete", json!({"threadId": oracle_id}));
    }
}

fn agent_run() -> Vec<Vec<Vec<Step>>> {
    let iteration = |steps: Vec<Step>| steps;
    let tool = |name: &str, later| Step::Tool { name: name.into(), later };
    vec![
        vec![
            iteration(vec![Step::Ask("find the config".into()), tool("search", false)]),
            iteration(vec![tool("read_file", true)]),
            iteration(vec![Step::Answer("found <it> & read it".into()), Step::Error]),
            iteration(vec![tool("grep", false), tool("grep", false)]),
            iteration(vec![Step::Answer("done".into())]),
        ],
        vec![iteration(vec![Step::Ask("now fix it".into()), tool("edit", false)]), iteration(vec![Step::HostSummary])],
        vec![],
        vec![
            iteration(vec![tool("test", true)]),
            iteration(vec![Step::Answer("tests pass".into())]),
            iteration(vec![]),
            iteration(vec![Step::Ask("thanks".into())]),
        ],
    ]
}

#[test]
fn a_hand_written_run_matches_upstream_round_after_round() {
    let mut server = Server::start(Wire::Ndjson, "memory");
    run_rounds(&mut server, "run", &agent_run(), 3);
    run_rounds(&mut server, "run-keep-1", &agent_run(), 1);
}

#[test]
fn a_durable_store_rebuilds_the_view_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("threads.db").display());
    let mut server = Server::start(Wire::Ndjson, &store);
    run_rounds(&mut server, "run", &agent_run(), 2);
    let before = renders(&mut server, "run");
    let plan = server.ok("thread/planCompaction", json!({"threadId": "run", "keepRecentIterations": 2}));
    server.stop();
    let mut server = Server::start(Wire::Ndjson, &store);
    assert_eq!(renders(&mut server, "run"), before);
    assert_eq!(server.ok("thread/planCompaction", json!({"threadId": "run", "keepRecentIterations": 2})), plan);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn generated_runs_match_upstream_round_after_round(
        rounds in prop::collection::vec(
            prop::collection::vec(prop::collection::vec(step(), 0..4), 0..5), 1..5),
        keep_recent in 0i64..4,
    ) {
        let mut server = Server::start(Wire::Ndjson, "memory");
        run_rounds(&mut server, "gen", &rounds, keep_recent);
    }
}

#[test]
fn compact_takes_exactly_the_planned_iterations() {
    let mut s = Server::start(Wire::Ndjson, "memory");
    s.ok("thread/open", json!({"threadId": "t"}));
    let events: Vec<Value> = (0..5).map(|i| crate::support::events::user("hi", i)).collect();
    s.ok("thread/append", json!({"threadId": "t", "events": events}));
    let missing = s.err("thread/compact", json!({"threadId": "t", "summaries": [{"iteration": 0, "summary": "a"}]}));
    assert_eq!(missing["code"], -32602);
    assert_eq!(missing["data"]["path"], "summaries");
    let extra = s.err(
        "thread/compact",
        json!({"threadId": "t", "summaries": [
        {"iteration": 0, "summary": "a"}, {"iteration": 1, "summary": "b"}, {"iteration": 2, "summary": "c"}]}),
    );
    assert_eq!(extra["data"]["path"], "summaries[2].iteration");
    let stale = s.err(
        "thread/compact",
        json!({"threadId": "t", "expectedVersion": 7, "summaries": [
        {"iteration": 0, "summary": "a"}, {"iteration": 1, "summary": "b"}]}),
    );
    assert_eq!(stale["code"], -32003, "{stale}");
    assert_eq!(s.ok("thread/events", json!({"threadId": "t"}))["version"], 1, "nothing was appended");
    let done = s.ok(
        "thread/compact",
        json!({"threadId": "t", "expectedVersion": 1, "summaries": [
        {"iteration": 1, "summary": "b"}, {"iteration": 0, "summary": "a"}]}),
    );
    assert_eq!(done, json!({"threadId": "t", "version": 2, "eventCount": 7}));
    let events = s.ok("thread/events", json!({"threadId": "t", "offset": 5}))["events"].clone();
    assert_eq!(events[0]["summary"], "a", "summaries in iteration order, as upstream makes them");
    assert_eq!(events[0]["compaction"], json!({"round": 1, "cutoff": 1}));
    // Nothing left to summarize: nothing is appended.
    let again = s.ok("thread/compact", json!({"threadId": "t", "summaries": []}));
    assert_eq!(again["version"], 2);
}

#[test]
fn tokens_count_the_rendering() {
    let mut s = Server::start(Wire::Ndjson, "memory");
    s.ok("thread/open", json!({"threadId": "t"}));
    let events = json!([
        {"type": "message", "role": "user", "content": "héllo 😀", "iteration": 1},
        {"type": "message", "role": "assistant", "content": "hello world", "iteration": 2},
    ]);
    s.ok("thread/append", json!({"threadId": "t", "events": events}));
    let xml = s.ok("thread/render", json!({"threadId": "t", "format": "xml"}))["text"].as_str().unwrap().to_owned();
    let utf16 = xml.encode_utf16().count() as u64;
    let counted = s.ok("thread/tokens", json!({"threadId": "t", "format": "xml"}));
    assert_eq!(counted["tokens"], (2 * utf16).div_ceil(7));
    assert_eq!(counted["tokenizer"], "estimate");
    let line_1 = "  <event type=\"human\" id=\"0\" iteration=\"1\">héllo 😀</event>\n";
    assert_eq!(
        counted["byIteration"][0],
        json!({"iteration": 1, "tokens": (2 * line_1.encode_utf16().count() as u64).div_ceil(7)})
    );
    assert_eq!(counted["byIteration"].as_array().unwrap().len(), 2);
    let messages = s.ok("thread/render", json!({"threadId": "t", "format": "messages"}));
    let json_text = serde_json::to_string(&messages["messages"]).unwrap();
    let counted = s.ok("thread/tokens", json!({"threadId": "t"}));
    assert_eq!(counted["tokens"], (2 * json_text.encode_utf16().count() as u64).div_ceil(7));
    let bpe = s.ok("thread/tokens", json!({"threadId": "t", "format": "text", "tokenizer": "o200k_base"}));
    assert_eq!(bpe["tokenizer"], "o200k_base");
    assert!(bpe["tokens"].as_u64().unwrap() > 0);
    let bad = s.err("thread/tokens", json!({"threadId": "t", "tokenizer": "p50k"}));
    assert_eq!(bad["data"]["path"], "tokenizer");
}

#[test]
fn a_budget_drops_the_oldest_iterations_whole() {
    let mut s = Server::start(Wire::Ndjson, "memory");
    s.ok("thread/open", json!({"threadId": "t", "settings": {"instructions": "Be brief."}}));
    let events = json!([
        {"type": "message", "role": "user", "content": "x".repeat(700), "iteration": 1},
        {"type": "tool_call", "toolName": "t", "toolCallId": "c1", "args": {}, "iteration": 2},
        {"type": "tool_result", "toolCallId": "c1", "result": "y".repeat(700), "iteration": 3},
        {"type": "message", "role": "user", "content": "last", "iteration": 4},
    ]);
    s.ok("thread/append", json!({"threadId": "t", "events": events}));
    let all = s.ok(
        "thread/render",
        json!({"threadId": "t", "format": "messages", "options": {"budget": {"maxTokens": 100000}}}),
    );
    assert_eq!(all["dropped"], json!({"iterations": []}));
    assert_eq!(all["messages"], s.ok("thread/render", json!({"threadId": "t", "format": "messages"}))["messages"]);
    let fit = s
        .ok("thread/render", json!({"threadId": "t", "format": "messages", "options": {"budget": {"maxTokens": 250}}}));
    // Iteration 1 alone would do, but the call of iteration 2 goes only with its result.
    assert_eq!(fit["dropped"], json!({"iterations": [1, 2, 3]}), "{fit}");
    let counted = s.ok("thread/tokens", json!({"threadId": "t"}))["tokens"].as_u64().unwrap();
    assert!(fit["tokens"].as_u64().unwrap() <= 250 && counted > 250);
    assert_eq!(fit["messages"].as_array().unwrap().len(), 2, "the system message and the last question");
    let too_small =
        s.err("thread/render", json!({"threadId": "t", "format": "xml", "options": {"budget": {"maxTokens": 5}}}));
    assert_eq!(too_small["code"], -32004);
    assert_eq!(too_small["data"]["max"], 5);
    assert!(too_small["data"]["value"].as_u64().unwrap() > 5);
}

/// OpenAI's tokenizers as `tiktoken-rs` counts them: an implementation independent of the
/// server's.
fn tiktoken(tokenizer: &str, text: &str) -> u64 {
    let bpe = match tokenizer {
        "o200k_base" => tiktoken_rs::o200k_base_singleton(),
        _ => tiktoken_rs::cl100k_base_singleton(),
    };
    bpe.encode_ordinary(text).len() as u64
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    /// XML counts add up kept per-line counts; whatever the content, they must equal a count
    /// of the whole document, after every append.
    #[test]
    fn kept_line_counts_add_up_to_the_documents_count(
        batches in prop::collection::vec(prop::collection::vec(("\\PC{0,40}|[ \\n\\t<>&a-z0-9'\"]{0,40}", 0i64..4), 1..4), 1..4),
        prefix in prop::option::of("[ \\na-z:]{0,6}"),
    ) {
        let mut s = Server::start(Wire::Ndjson, "memory");
        s.ok("thread/open", json!({"threadId": "t", "settings": {"responsePrefix": prefix}}));
        for batch in batches {
            let events: Vec<Value> = batch
                .iter()
                .map(|(content, iteration)| json!({"type": "message", "role": "user", "content": content, "iteration": iteration}))
                .collect();
            s.ok("thread/append", json!({"threadId": "t", "events": events}));
            for tokenizer in ["o200k_base", "cl100k_base", "estimate"] {
                for escape in ["full", "minimal"] {
                    let options = json!({"escape": escape});
                    let xml = s.ok("thread/render", json!({"threadId": "t", "format": "xml", "options": options}));
                    let text = xml["text"].as_str().unwrap();
                    let expected = match tokenizer {
                        "estimate" => (2 * text.encode_utf16().count() as u64).div_ceil(7),
                        _ => tiktoken(tokenizer, text),
                    };
                    let counted = s.ok("thread/tokens", json!({"threadId": "t", "format": "xml", "options": options,
                        "tokenizer": tokenizer}));
                    prop_assert_eq!(&counted["tokens"], &json!(expected), "{} {}: {:?}", tokenizer, escape, text);
                }
            }
            let messages = s.ok("thread/render", json!({"threadId": "t", "format": "messages"}));
            let json_text = serde_json::to_string(&messages["messages"]).unwrap();
            let counted = s.ok("thread/tokens", json!({"threadId": "t", "tokenizer": "cl100k_base"}));
            prop_assert_eq!(&counted["tokens"], &json!(tiktoken("cl100k_base", &json_text)));
        }
    }
}

#[test]
fn an_exported_and_imported_thread_keeps_its_rounds() {
    let mut s = Server::start(Wire::Ndjson, "memory");
    run_rounds(&mut s, "run", &agent_run(), 2);
    let text = s.ok("thread/export", json!({"threadId": "run", "format": "json"}))["text"].clone();
    s.ok("thread/import", json!({"text": text, "format": "json", "threadId": "copy"}));
    let events = |s: &mut Server, id: &str| s.ok("thread/events", json!({"threadId": id}))["events"].clone();
    assert_eq!(events(&mut s, "copy"), events(&mut s, "run"));
    assert_eq!(renders(&mut s, "copy"), renders(&mut s, "run"));
}
