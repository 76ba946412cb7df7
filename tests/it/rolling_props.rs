//! Rolling compaction's invariants over random runs and random rounds, through the protocol:
//! a summarize round keeps the system message and every earlier summary as the request's
//! unchanged prefix in every message form, a merge puts its summary first, the XML document
//! always parses with the live summaries at its front, and no event ever leaves the log.

use crate::support::{Server, Wire};
use proptest::prelude::*;
use serde_json::{json, Value};

/// Text with the strings that break renderers: markup, quotes, control characters, emoji.
fn nasty_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{1,40}",
        Just("a & b < c > d \" e ' f".to_owned()),
        Just("ctrl \u{1}\u{8}\u{b} end".to_owned()),
        Just("emoji 🦀🧵 and 𝒳".to_owned()),
        "[a-z]{200,400}",
    ]
}

/// One step of a run: optional assistant text, then calls answered by results or errors (the
/// last call, sometimes, only in the next step).
#[derive(Clone, Debug)]
struct Step {
    text: Option<String>,
    calls: Vec<(String, bool)>,
    answer_late: bool,
}

fn step_strategy() -> impl Strategy<Value = Step> {
    (proptest::option::of(nasty_text()), prop::collection::vec((nasty_text(), any::<bool>()), 0..3), any::<bool>())
        .prop_map(|(text, calls, answer_late)| Step { text, calls, answer_late })
}

/// What to do after a step: nothing, a summarize round (if one is planned), or a merge of the
/// oldest live summaries.
#[derive(Clone, Copy, Debug)]
enum Round {
    None,
    Summarize { keep_share: u8 },
    Merge,
}

fn round_strategy() -> impl Strategy<Value = Round> {
    prop_oneof![
        3 => Just(Round::None),
        3 => (10u8..90).prop_map(|keep_share| Round::Summarize { keep_share }),
        1 => Just(Round::Merge),
    ]
}

/// The events of step `i`, with a late answer of the previous step's last call first.
fn events_of(i: u64, step: &Step, late: &mut Option<String>) -> Vec<Value> {
    let mut events = Vec::new();
    if let Some(id) = late.take() {
        events.push(json!({"type": "tool_result", "toolCallId": id, "result": "late answer", "iteration": i}));
    }
    if i == 0 {
        events.push(json!({"type": "message", "role": "user", "content": "Begin <now> & \"then\"", "iteration": 0}));
    }
    if let Some(text) = &step.text {
        events.push(json!({"type": "message", "role": "assistant", "content": text, "iteration": i}));
    }
    for (k, (text, ok)) in step.calls.iter().enumerate() {
        let id = format!("c{i}_{k}");
        events.push(
            json!({"type": "tool_call", "toolName": "tool", "toolCallId": id, "args": {"q": text}, "iteration": i}),
        );
        if step.answer_late && k + 1 == step.calls.len() {
            *late = Some(id);
        } else if *ok {
            events.push(json!({"type": "tool_result", "toolCallId": id, "result": text, "iteration": i}));
        } else {
            events.push(json!({"type": "error", "error": text, "recoverable": true, "toolCallId": id, "iteration": i}));
        }
    }
    events
}

const FORMS: [&str; 4] = ["messages", "openai-chat", "openai-responses", "anthropic"];

/// The items a form's request is a list of (the system message included where it is one).
fn items(form: &str, rendered: &Value) -> Vec<Value> {
    let list = match form {
        "openai-responses" => &rendered["input"],
        _ => &rendered["messages"],
    };
    list.as_array().cloned().unwrap_or_default()
}

/// The request's stable prefix after `live` summaries: the system message (where it is an
/// item) and the summaries' items; for Anthropic the system field and the summaries' blocks.
fn prefix(form: &str, rendered: &Value, live: usize) -> Value {
    match form {
        "anthropic" => {
            let blocks = rendered["messages"][0]["content"].as_array().cloned().unwrap_or_default();
            json!({"system": rendered["system"], "blocks": blocks.into_iter().take(live).collect::<Vec<_>>()})
        }
        "openai-responses" => {
            json!({"instructions": rendered["instructions"], "items": items(form, rendered).into_iter().take(live).collect::<Vec<_>>()})
        }
        _ => json!(items(form, rendered).into_iter().take(live + 1).collect::<Vec<_>>()),
    }
}

fn render(server: &mut Server, format: &str) -> Value {
    server.ok("thread/render", json!({"threadId": "p", "format": format}))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn rounds_keep_their_prefix_and_the_log(
        run in prop::collection::vec((step_strategy(), round_strategy()), 2..16),
    ) {
        let mut server = Server::start(Wire::Ndjson, "memory");
        server.ok("thread/open", json!({"threadId": "p", "settings": {"instructions": "Rules & <tools>."}}));
        let (mut late, mut appended, mut rounds) = (None, 0usize, 0usize);
        // The live summaries' rounds, oldest first, as the protocol says they stand.
        let mut live: Vec<u64> = Vec::new();
        for (i, (step, round)) in run.iter().enumerate() {
            let events = events_of(i as u64, step, &mut late);
            appended += events.len();
            if !events.is_empty() {
                server.ok("thread/append", json!({"threadId": "p", "events": events}));
            }
            let before: Vec<Value> = FORMS.iter().map(|form| render(&mut server, form)).collect();
            match *round {
                Round::None => continue,
                Round::Summarize { keep_share } => {
                    let tokens = server.ok("thread/tokens", json!({"threadId": "p"}))["tokens"].as_u64().unwrap();
                    let max = tokens.saturating_sub(1);
                    let plan = server.ok("thread/planCompaction", json!({"threadId": "p", "strategy": "rolling",
                        "maxTokens": max, "compactTo": max * u64::from(keep_share) / 100, "summaryTokens": 1_000_000}));
                    let Some(step) = plan.get("step") else { continue };
                    prop_assert_eq!(&step["kind"], "summarize");
                    let done = server.ok("thread/compact", json!({"threadId": "p", "strategy": "rolling", "step": step,
                        "summary": format!("summary {i}: & <b> \u{1} 🦀")}));
                    live.push(done["round"].as_u64().unwrap());
                    rounds += 1;
                    // Everything before the new summary is as it was.
                    for (form, was) in FORMS.iter().zip(&before) {
                        let now = render(&mut server, form);
                        prop_assert_eq!(prefix(form, &now, live.len() - 1), prefix(form, was, live.len() - 1), "{}", form);
                    }
                }
                Round::Merge => {
                    if live.len() < 2 {
                        continue;
                    }
                    let merged: Vec<u64> = live[..2].to_vec();
                    let done = server.ok("thread/compact", json!({"threadId": "p", "strategy": "rolling",
                        "step": {"kind": "merge", "rounds": merged}, "summary": format!("merged at {i}")}));
                    live.splice(..2, [done["round"].as_u64().unwrap()]);
                    rounds += 1;
                    let messages = render(&mut server, "messages");
                    let first = messages["messages"][1]["data"]["content"].as_str().unwrap().to_owned();
                    prop_assert!(first.starts_with("[Summary of iterations 0 to ") && first.ends_with(&format!("merged at {i}")), "{}", first);
                }
            }
            // The XML document parses, the live summaries first and nothing of them elsewhere.
            let xml = render(&mut server, "xml")["text"].as_str().unwrap().to_owned();
            let parsed = server.ok("xml/parseThread", json!({"text": xml}))["events"].clone();
            let parsed = parsed.as_array().unwrap();
            let summaries = parsed.iter().take_while(|e| e["type"] == "summary").count();
            prop_assert_eq!(summaries, live.len());
            prop_assert_eq!(parsed.iter().filter(|e| e["type"] == "summary").count(), live.len());
            let system = render(&mut server, "openai-chat")["messages"][0]["content"].clone();
            prop_assert_eq!(system, json!("Rules & <tools>."), "summaries never enter the system message");
        }
        let logged = server.ok("thread/events", json!({"threadId": "p"}))["eventCount"].as_u64().unwrap() as usize;
        prop_assert_eq!(logged, appended + rounds);
    }
}
