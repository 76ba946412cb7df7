//! The host's side of rolling compaction, shared by the context-cost benchmark and the tests
//! (included with `#[path]`): after each step, plan; while a round is needed, call the
//! summarizer with the planned step's prompt, record the round, and plan again.

use serde_json::{json, Value};

/// The rounds a run made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rounds {
    pub summarize: u64,
    pub merge: u64,
}

impl Rounds {
    pub fn calls(&self) -> u64 {
        self.summarize + self.merge
    }
}

/// The most rounds one step may need before the host gives up on it (a summary longer than
/// the room it is given can never fit; a real host would then shorten it or stop).
const MAX_ROUNDS_PER_STEP: usize = 8;

/// Compacts `thread` until its rendering fits: `plan` is `thread/planCompaction`'s params
/// without `threadId`; `summarize(step)` is the summarizer's answer to a planned step. Answers
/// the last plan (with `needed: false` unless the thread cannot be brought within the budget).
pub fn compact_until_fits(
    call: &mut dyn FnMut(&str, Value) -> Value,
    thread: &str,
    plan: &Value,
    summarize: &mut dyn FnMut(&Value) -> String,
    rounds: &mut Rounds,
) -> Value {
    let mut params = plan.clone();
    params["threadId"] = json!(thread);
    let mut planned = call("thread/planCompaction", params.clone());
    for _ in 0..MAX_ROUNDS_PER_STEP {
        if planned["needed"] != true {
            break;
        }
        let Some(step) = planned.get("step").cloned() else { break };
        let summary = summarize(&step);
        call("thread/compact", json!({"threadId": thread, "strategy": "rolling", "step": step, "summary": summary}));
        match step["kind"].as_str() {
            Some("merge") => rounds.merge += 1,
            _ => rounds.summarize += 1,
        }
        planned = call("thread/planCompaction", params.clone());
    }
    planned
}

/// The `o200k_base` tokens of a render's request body (the result without `format`, `version`,
/// `contextMode`, `dropped` and `tokens`), as `thread/tokens` and a budget count them: the
/// measure a context bound is stated in.
pub fn request_tokens(result: &Value) -> u64 {
    let mut body = result.clone();
    if let Some(fields) = body.as_object_mut() {
        for key in ["format", "version", "contextMode", "dropped", "tokens"] {
            fields.remove(key);
        }
    }
    bpe_openai::o200k_base().count(&body.to_string()) as u64
}

/// A scripted summarizer: about `words` words naming what the step covers, the same for the
/// same step, so runs are reproducible.
pub fn scripted_summary(step: &Value, words: usize) -> String {
    let covers = match step["kind"].as_str() {
        Some("merge") => format!("rounds {}", step["rounds"]),
        _ => format!("iterations {}", step["iterations"]),
    };
    let mut text = format!("Summary of {covers}:");
    const VOCABULARY: [&str; 12] = [
        "read",
        "edited",
        "tested",
        "src/lib.rs",
        "the parser",
        "fixed",
        "a failing case",
        "then",
        "ran",
        "cargo",
        "and",
        "kept",
    ];
    for i in 0..words {
        text.push(' ');
        text.push_str(VOCABULARY[(i * 7 + words) % VOCABULARY.len()]);
    }
    text.push('.');
    text
}
