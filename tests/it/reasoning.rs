//! Reasoning given back to the provider that produced it, and the `gemini` and
//! `bedrock-converse` formats: goldens for every provider fixture, each format's sequencing
//! rules on every fixture thread, and the replay rules (protocol/providers/reasoning.md).
//!
//! Golden files: `tests/golden/providers/NAME.gemini.json` and `NAME.bedrock-converse.json`.
//! `UPDATE_GOLDEN=1 cargo test --test it reasoning::new_format_goldens` rewrites them.

use crate::providers::{all_fixtures, check_anthropic, fixtures, host_session_fixtures, variants};
use crate::schemas::{errors, validator};
use crate::support::golden::Goldens;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::fs;
use std::path::Path;
use threadkeeper::messages::{ContextMode, DanglingToolCalls, MessageOptions};
use threadkeeper::providers::bedrock_converse::CacheControl as BedrockCache;
use threadkeeper::providers::gemini::{Options as GeminiOptions, Placeholder};
use threadkeeper::providers::reasoning::{ModelFamily, ReasoningReplay, Replay};
use threadkeeper::providers::{render_request_with, ProviderOptions};
use threadkeeper::{AgentEvent, Provider};

const NEW_FORMS: [(&str, Provider, &str); 2] =
    [("gemini", Provider::Gemini, "gemini"), ("bedrock-converse", Provider::BedrockConverse, "bedrockConverse")];

fn render(events: &[AgentEvent], provider: Provider, options: &ProviderOptions) -> Value {
    render_with(events, &MessageOptions::default(), provider, options)
}

fn render_with(events: &[AgentEvent], base: &MessageOptions, provider: Provider, options: &ProviderOptions) -> Value {
    serde_json::from_str(&render_request_with(events, base, provider, options, false)).unwrap()
}

fn golden_events(name: &str) -> Vec<AgentEvent> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/golden/providers/{name}.events.json"));
    let case: Value = serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap();
    AgentEvent::list_from_values(case["events"].as_array().unwrap().clone()).unwrap()
}

fn str_of<'a>(v: &'a Value, key: &str) -> Result<&'a str, String> {
    v.get(key).and_then(Value::as_str).ok_or_else(|| format!("{key} is not a string in {v}"))
}

// ---- sequencing rules ----

/// Gemini: contents alternate from user; thoughts lead their model content; every call is
/// answered by the next user content's leading responses, in call order; with a placeholder,
/// the first call of each step of the current turn is signed.
fn check_gemini(body: &Value, placeholder: bool) -> Result<(), String> {
    let contents = body["contents"].as_array().ok_or("contents is not a list")?;
    let mut ids = HashSet::new();
    let mut to_answer: Vec<String> = Vec::new();
    let is_user_text = |c: &Value| {
        c["role"] == "user" && c["parts"].as_array().unwrap().iter().any(|p| p.get("functionResponse").is_none())
    };
    let turn_start = contents.iter().rposition(is_user_text).map_or(0, |at| at + 1);
    for (i, content) in contents.iter().enumerate() {
        let role = str_of(content, "role")?;
        if role != if i % 2 == 0 { "user" } else { "model" } {
            return Err(format!("contents[{i}]: role {role}, contents must alternate from user"));
        }
        let parts = content["parts"].as_array().filter(|p| !p.is_empty()).ok_or(format!("contents[{i}]: no parts"))?;
        let mut answered = Vec::new();
        let mut calls = Vec::new();
        for (p, part) in parts.iter().enumerate() {
            let set = ["text", "functionCall", "functionResponse"].iter().filter(|k| part.get(**k).is_some()).count();
            if set != 1 {
                return Err(format!("contents[{i}].parts[{p}]: {set} of text, functionCall, functionResponse"));
            }
            if part.get("thought").is_some()
                && (role != "model" || parts[..p].iter().any(|e| e.get("thought").is_none()))
            {
                return Err(format!("contents[{i}].parts[{p}]: a thought not leading a model content"));
            }
            if let Some(text) = part.get("text") {
                if part.get("thought").is_none() && text.as_str().unwrap().trim().is_empty() {
                    return Err(format!("contents[{i}].parts[{p}]: blank text"));
                }
            }
            if let Some(call) = part.get("functionCall") {
                let id = str_of(call, "id")?;
                if role != "model" || !ids.insert(id.to_owned()) {
                    return Err(format!("contents[{i}]: call {id:?} misplaced or reused"));
                }
                let first = calls.is_empty();
                calls.push(id.to_owned());
                if placeholder && first && i >= turn_start && part.get("thoughtSignature").is_none() {
                    return Err(format!("contents[{i}]: the step's first call {id:?} is unsigned"));
                }
            }
            if let Some(response) = part.get("functionResponse") {
                if role != "user" || p != answered.len() || !response["response"].is_object() {
                    return Err(format!("contents[{i}].parts[{p}]: a response out of place"));
                }
                answered.push(str_of(response, "id")?.to_owned());
            }
        }
        if role == "user" {
            let expected = std::mem::take(&mut to_answer);
            if answered != expected {
                return Err(format!("contents[{i}]: responses {answered:?}, the calls were {expected:?}"));
            }
        } else {
            to_answer = calls;
        }
    }
    match to_answer.first() {
        Some(id) => Err(format!("call {id:?} is never answered")),
        None => Ok(()),
    }
}

/// Bedrock: messages alternate from user; reasoning leads its assistant message; every toolUse
/// is answered by the next user message; at most four cache points, never after reasoning.
fn check_bedrock(body: &Value) -> Result<(), String> {
    let messages = body["messages"].as_array().ok_or("messages is not a list")?;
    let mut cache_points = body
        .get("system")
        .map_or(0, |s| s.as_array().unwrap().iter().filter(|b| b.get("cachePoint").is_some()).count());
    let mut ids = HashSet::new();
    let mut to_answer: Vec<String> = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        let role = str_of(message, "role")?;
        if role != if i % 2 == 0 { "user" } else { "assistant" } {
            return Err(format!("messages[{i}]: role {role}, messages must alternate from user"));
        }
        let blocks = message["content"].as_array().filter(|b| !b.is_empty()).ok_or(format!("messages[{i}]: empty"))?;
        let mut answered = Vec::new();
        let mut calls = Vec::new();
        for (b, block) in blocks.iter().enumerate() {
            let kind = block.as_object().unwrap().keys().next().unwrap().as_str();
            match (role, kind) {
                (_, "text") if str_of(block, "text")?.trim().is_empty() => {
                    return Err(format!("messages[{i}]: blank text"))
                }
                (_, "text") => {}
                (_, "cachePoint") => {
                    cache_points += 1;
                    if b == 0 || blocks[b - 1].get("reasoningContent").is_some() {
                        return Err(format!("messages[{i}]: a cache point after reasoning or first"));
                    }
                }
                ("assistant", "reasoningContent") => {
                    if blocks[..b].iter().any(|e| e.get("reasoningContent").is_none()) {
                        return Err(format!("messages[{i}]: reasoning after other content"));
                    }
                }
                ("assistant", "toolUse") => {
                    let id = str_of(&block["toolUse"], "toolUseId")?;
                    if !ids.insert(id.to_owned()) {
                        return Err(format!("messages[{i}]: toolUseId {id:?} reused"));
                    }
                    calls.push(id.to_owned());
                }
                ("user", "toolResult") => answered.push(str_of(&block["toolResult"], "toolUseId")?.to_owned()),
                (role, kind) => return Err(format!("messages[{i}]: {kind} in a {role} message")),
            }
        }
        if role == "user" {
            let mut expected = std::mem::take(&mut to_answer);
            expected.sort();
            answered.sort();
            if answered != expected {
                return Err(format!("messages[{i}]: results {answered:?}, the calls were {expected:?}"));
            }
        } else {
            to_answer = calls;
        }
    }
    if cache_points > 4 {
        return Err(format!("{cache_points} cache points"));
    }
    match to_answer.first() {
        Some(id) => Err(format!("toolUse {id:?} is never answered")),
        None => Ok(()),
    }
}

// ---- goldens and every fixture ----

#[test]
fn new_format_goldens() {
    let mut goldens = Goldens::new();
    for fixture in fixtures("providers") {
        for (form, provider, _) in NEW_FORMS {
            let rendered = render_with(&fixture.events, &fixture.options, provider, &ProviderOptions::default());
            goldens.check_json(&fixture.dir.join(format!("{}.{form}.json", fixture.name)), &rendered);
        }
    }
    goldens.finish();
}

#[test]
fn new_format_goldens_are_valid_against_their_schemas() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/providers");
    let mut checked = 0;
    for (form, _, definition) in NEW_FORMS {
        let validator = validator(&format!("providers.json#/$defs/{definition}"));
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.to_str().unwrap().ends_with(&format!(".{form}.json")) {
                let body: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
                assert_eq!(errors(&validator, &body), Vec::<String>::new(), "{}", path.display());
                checked += 1;
            }
        }
    }
    assert!(checked >= 30, "only {checked} goldens");
    // The schemas refuse what the providers refuse.
    let gemini = validator("providers.json#/$defs/gemini");
    let both =
        json!({"contents": [{"role": "model", "parts": [{"text": "a", "functionCall": {"name": "f", "args": {}}}]}]});
    assert!(!errors(&gemini, &both).is_empty());
    let bedrock = validator("providers.json#/$defs/bedrockConverse");
    let unsigned = json!({"messages": [{"role": "assistant", "content": [{"reasoningContent": {"reasoningText": {"text": "t"}}}]}]});
    assert!(!errors(&bedrock, &unsigned).is_empty());
}

#[test]
fn every_fixture_renders_valid_gemini_and_bedrock() {
    let mut failures = Vec::new();
    for fixture in all_fixtures().into_iter().chain(host_session_fixtures()) {
        for options in variants(&fixture.options) {
            for cache in [BedrockCache::None, BedrockCache::Auto] {
                let provider_options = ProviderOptions { bedrock_cache: cache, ..ProviderOptions::default() };
                let gemini = render_with(&fixture.events, &options, Provider::Gemini, &provider_options);
                let bedrock = render_with(&fixture.events, &options, Provider::BedrockConverse, &provider_options);
                for (form, result) in
                    [("gemini", check_gemini(&gemini, true)), ("bedrock-converse", check_bedrock(&bedrock))]
                {
                    if let Err(e) = result {
                        failures.push(format!("{} {form} {:?} {cache:?}: {e}", fixture.name, options.context_mode));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---- replay by provider ----

/// The reasoning events of `provider` in `events`, as their blocks are expected, grouped by the
/// assistant message they open (a new group after each tool result or user message).
fn expected_thinking(events: &[AgentEvent], provider: &str) -> Vec<Vec<Value>> {
    let mut groups: Vec<Vec<Value>> = vec![Vec::new()];
    for event in events {
        let f = event.fields();
        match event.event_type() {
            "reasoning" if f["provider"] == provider => {
                groups.last_mut().unwrap().push(match f.get("redactedData") {
                    Some(data) => json!({"type": "redacted_thinking", "data": data}),
                    None => json!({"type": "thinking", "thinking": f["text"], "signature": f["signature"]}),
                });
            }
            "tool_result" | "message" if !groups.last().unwrap().is_empty() => groups.push(Vec::new()),
            _ => {}
        }
    }
    groups.retain(|g| !g.is_empty());
    groups
}

fn leading_thinking(body: &Value) -> Vec<Vec<Value>> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| {
            let blocks = m["content"].as_array().unwrap();
            blocks.iter().take_while(|b| b["type"].as_str().unwrap().ends_with("thinking")).cloned().collect()
        })
        .filter(|g: &Vec<Value>| !g.is_empty())
        .collect()
}

#[test]
fn anthropic_assistant_turns_open_with_their_thinking_unmodified_and_in_order() {
    let events = golden_events("thinking_tool_loop");
    let body = render(&events, Provider::Anthropic, &ProviderOptions::default());
    check_anthropic(&body).unwrap();
    assert_eq!(errors(&validator("providers.json#/$defs/anthropic"), &body), Vec::<String>::new());
    let expected = expected_thinking(&events, "anthropic");
    assert_eq!(expected.len(), 3, "three steps with thinking");
    assert_eq!(leading_thinking(&body), expected);
    // Every assistant turn opens with its thinking; the empty signed block is there.
    let assistant: Vec<&Value> =
        body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "assistant").collect();
    assert!(assistant.iter().all(|m| m["content"][0]["type"].as_str().unwrap().ends_with("thinking")));
    assert!(expected[1].contains(&json!({"type": "thinking", "thinking": "", "signature": "EqQBCkYIBxgCKkBsig3"})));
    // Gemini's and OpenAI's reasoning in the same thread is absent.
    let text = body.to_string();
    assert!(
        !text.contains("CiQBGeminiSigAAA") && !text.contains("gAAAAABopenai") && !text.contains("A Gemini thought")
    );
}

#[test]
fn anthropic_breakpoints_never_land_on_thinking() {
    let events = golden_events("thinking_tool_loop");
    for ttl in [None, Some(threadkeeper::providers::anthropic::CacheTtl::OneHour)] {
        let options = ProviderOptions {
            cache_control: threadkeeper::providers::anthropic::CacheControl::Auto { ttl },
            ..ProviderOptions::default()
        };
        let body = render(&events, Provider::Anthropic, &options);
        check_anthropic(&body).unwrap();
        assert_eq!(leading_thinking(&body), expected_thinking(&events, "anthropic"));
        assert!(body.to_string().contains("cache_control"));
    }
}

#[test]
fn openai_responses_replays_only_openai_reasoning_before_its_item() {
    let events = golden_events("thinking_tool_loop");
    let body = render(&events, Provider::OpenAiResponses, &ProviderOptions::default());
    let reasoning: Vec<&Value> =
        body["input"].as_array().unwrap().iter().filter(|i| i["type"] == "reasoning").collect();
    assert_eq!(
        reasoning,
        vec![
            &json!({"type": "reasoning", "id": "rs_01", "summary": [{"type": "summary_text", "text": "Compare."}], "encrypted_content": "gAAAAABopenai"})
        ]
    );
    let items = body["input"].as_array().unwrap();
    let at = items.iter().position(|i| i["type"] == "reasoning").unwrap();
    assert_eq!(items[at + 1]["role"], "assistant", "paired with the item after it");
}

#[test]
fn reasoning_none_renders_the_thread_without_its_reasoning() {
    let none = ProviderOptions {
        replay: Replay { reasoning: ReasoningReplay::None, ..Replay::default() },
        ..ProviderOptions::default()
    };
    let ai_sdk_reasoning = crate::providers::thread(json!([
        {"type": "message", "role": "user", "content": "Go", "iteration": 0},
        {"type": "turn_block", "block": {"kind": "reasoning", "payload": {"text": "Unsigned thoughts."}}, "iteration": 0},
        {"type": "message", "role": "assistant", "content": "Done.", "iteration": 0},
    ]));
    let threads =
        ["thinking_tool_loop", "bedrock_thinking_tool_loop", "gemini_parallel_calls", "reasoning_and_odd_ids"]
            .map(|name| (name, golden_events(name)));
    for (name, events) in threads.into_iter().chain([("ai_sdk_reasoning", ai_sdk_reasoning)]) {
        let without: Vec<AgentEvent> = events
            .iter()
            .filter(|e| e.event_type() != "reasoning" && e.event_type() != "turn_block")
            .cloned()
            .collect();
        for provider in Provider::ALL {
            assert_eq!(render(&events, provider, &none), render(&without, provider, &none), "{name} {provider:?}");
        }
    }
}

#[test]
fn a_render_for_another_model_family_leaves_the_reasoning_out() {
    let events = golden_events("thinking_tool_loop");
    let for_model = |model: &str| ProviderOptions {
        replay: Replay { model: ModelFamily::of(model), ..Replay::default() },
        ..ProviderOptions::default()
    };
    let opus = render(&events, Provider::Anthropic, &for_model("claude-opus-4-7"));
    assert_eq!(leading_thinking(&opus), expected_thinking(&events, "anthropic"));
    let other = render(&events, Provider::Anthropic, &for_model("some-unknown-model"));
    assert_eq!(leading_thinking(&other), expected_thinking(&events, "anthropic"), "an unknown family filters nothing");
    let gemini = render(&events, Provider::Anthropic, &for_model("gemini-3-pro-preview"));
    assert!(leading_thinking(&gemini).is_empty());
}

#[test]
fn claude_code_thinking_blocks_replay_as_anthropic_reasoning() {
    let events = crate::providers::thread(json!([
        {"type": "message", "role": "user", "content": "Fix it", "iteration": 0},
        {"type": "turn_block", "block": {"kind": "reasoning", "payload": {"text": "Look first.", "signature": "sigCC"}}, "iteration": 0},
        {"type": "tool_call", "toolName": "Read", "toolCallId": "toolu_9", "args": {"path": "a.rs"}, "iteration": 0},
        {"type": "tool_result", "toolCallId": "toolu_9", "result": "fn main() {}", "iteration": 0},
    ]));
    let body = render(&events, Provider::Anthropic, &ProviderOptions::default());
    assert_eq!(
        body["messages"][1]["content"][0],
        json!({"type": "thinking", "thinking": "Look first.", "signature": "sigCC"})
    );
    let gemini = render(&events, Provider::Gemini, &ProviderOptions::default());
    assert!(!gemini.to_string().contains("sigCC"));
}

// ---- gemini ----

#[test]
fn gemini_steps_keep_their_signatures_and_group_responses_in_call_order() {
    let events = golden_events("gemini_parallel_calls");
    let body = render(
        &events,
        Provider::Gemini,
        &ProviderOptions { gemini: GeminiOptions { placeholder: Placeholder::None }, ..ProviderOptions::default() },
    );
    check_gemini(&body, false).unwrap();
    let contents = body["contents"].as_array().unwrap();
    let steps: Vec<&Value> =
        contents.iter().filter(|c| c["role"] == "model" && c.to_string().contains("functionCall")).collect();
    assert_eq!(steps.len(), 3);
    for (step, signature) in steps.iter().zip(["CiQBjz1rX0sig1AA", "CiQBjz1rX0sig2AA", "CiQBjz1rX0sig3AA"]) {
        let first_call = step["parts"].as_array().unwrap().iter().find(|p| p.get("functionCall").is_some()).unwrap();
        assert_eq!(first_call["thoughtSignature"], signature);
    }
    // Results came back out of order in steps 1 and 3; the responses follow the calls.
    assert_eq!(contents[2]["parts"][0]["functionResponse"]["id"], "fc_1");
    assert_eq!(contents[6]["parts"][0]["functionResponse"]["id"], "fc_5");
    // The final text part keeps its signature; Claude's reasoning is absent.
    assert_eq!(contents.last().unwrap()["parts"][0]["thoughtSignature"], "CiQBjz1rX0sig4AA");
    assert!(!body.to_string().contains("EqQBClaude"));
}

#[test]
fn gemini_signs_unsigned_first_calls_of_the_current_turn_only() {
    let events = crate::providers::thread(json!([
        {"type": "message", "role": "user", "content": "Earlier question", "iteration": 0},
        {"type": "tool_call", "toolName": "a", "toolCallId": "c1", "args": {}, "iteration": 0},
        {"type": "tool_result", "toolCallId": "c1", "result": "ok", "iteration": 0},
        {"type": "message", "role": "assistant", "content": "Done.", "iteration": 0},
        {"type": "message", "role": "user", "content": "Now this", "iteration": 1},
        {"type": "tool_call", "toolName": "b", "toolCallId": "c2", "args": {}, "iteration": 1},
        {"type": "tool_call", "toolName": "b", "toolCallId": "c3", "args": {}, "iteration": 1},
        {"type": "tool_result", "toolCallId": "c2", "result": "ok", "iteration": 1},
        {"type": "tool_result", "toolCallId": "c3", "result": "ok", "iteration": 1},
        {"type": "tool_call", "toolName": "b", "toolCallId": "c4", "args": {}, "thoughtSignature": "own", "iteration": 2},
        {"type": "tool_result", "toolCallId": "c4", "result": "ok", "iteration": 2},
    ]));
    let signatures = |placeholder| {
        let options = ProviderOptions { gemini: GeminiOptions { placeholder }, ..ProviderOptions::default() };
        let body = render(&events, Provider::Gemini, &options);
        check_gemini(&body, placeholder != Placeholder::None).unwrap();
        let mut out = Vec::new();
        for content in body["contents"].as_array().unwrap() {
            for part in content["parts"].as_array().unwrap().iter().filter(|p| p.get("functionCall").is_some()) {
                out.push(part.get("thoughtSignature").and_then(Value::as_str).map(str::to_owned));
            }
        }
        out
    };
    let skip = Some("skip_thought_signature_validator".to_owned());
    assert_eq!(signatures(Placeholder::SkipValidator), vec![None, skip, None, Some("own".into())]);
    let other = Some("context_engineering_is_the_way_to_go".to_owned());
    assert_eq!(signatures(Placeholder::ContextEngineering), vec![None, other, None, Some("own".into())]);
    assert_eq!(signatures(Placeholder::None), vec![None, None, None, Some("own".into())]);
}

// ---- bedrock-converse ----

#[test]
fn bedrock_alternates_roles_and_replays_its_signed_reasoning() {
    let events = golden_events("bedrock_thinking_tool_loop");
    let body = render(&events, Provider::BedrockConverse, &ProviderOptions::default());
    check_bedrock(&body).unwrap();
    let leading: Vec<Vec<Value>> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| {
            m["content"]
                .as_array()
                .unwrap()
                .iter()
                .take_while(|b| b.get("reasoningContent").is_some())
                .cloned()
                .collect()
        })
        .collect();
    let expected: Vec<Vec<Value>> = expected_thinking(&events, "bedrock")
        .into_iter()
        .map(|group| {
            group
                .into_iter()
                .map(|block| match block["type"].as_str().unwrap() {
                    "redacted_thinking" => json!({"reasoningContent": {"redactedContent": block["data"]}}),
                    _ => json!({"reasoningContent": {"reasoningText": {"text": block["thinking"], "signature": block["signature"]}}}),
                })
                .collect()
        })
        .collect();
    assert_eq!(leading, expected);
    // Anthropic's own reasoning does not go to Bedrock, nor Bedrock's to Anthropic.
    let anthropic_thread = golden_events("thinking_tool_loop");
    let body = render(&anthropic_thread, Provider::BedrockConverse, &ProviderOptions::default());
    assert!(!body.to_string().contains("reasoningContent"));
    assert!(leading_thinking(&render(&events, Provider::Anthropic, &ProviderOptions::default())).is_empty());
}

#[test]
fn bedrock_cache_points_follow_the_anthropic_breakpoints() {
    let events = golden_events("bedrock_thinking_tool_loop");
    let base = MessageOptions { instructions: Some("Be brief.".into()), ..MessageOptions::default() };
    let options = ProviderOptions { bedrock_cache: BedrockCache::Auto, ..ProviderOptions::default() };
    let body = render_with(&events, &base, Provider::BedrockConverse, &options);
    check_bedrock(&body).unwrap();
    assert_eq!(body["system"], json!([{"text": "Be brief."}, {"cachePoint": {"type": "default"}}]));
    // The anthropic render of the same thread marks the same blocks.
    let anthropic_options = ProviderOptions {
        cache_control: threadkeeper::providers::anthropic::CacheControl::Auto { ttl: None },
        ..ProviderOptions::default()
    };
    let plain: Vec<AgentEvent> = events.iter().filter(|e| e.event_type() != "reasoning").cloned().collect();
    let anthropic = render_with(&plain, &base, Provider::Anthropic, &anthropic_options);
    let bedrock = render_with(&plain, &base, Provider::BedrockConverse, &options);
    let marked_anthropic: Vec<(usize, usize)> = positions(&anthropic, |b| b.get("cache_control").is_some());
    let mut marked_bedrock = Vec::new();
    for (m, message) in bedrock["messages"].as_array().unwrap().iter().enumerate() {
        let mut b = 0;
        for block in message["content"].as_array().unwrap() {
            if block.get("cachePoint").is_some() {
                marked_bedrock.push((m, b - 1));
            } else {
                b += 1;
            }
        }
    }
    assert_eq!(marked_bedrock, marked_anthropic);
    let none = render_with(&events, &base, Provider::BedrockConverse, &ProviderOptions::default());
    assert!(!none.to_string().contains("cachePoint"));
}

fn positions(body: &Value, marked: impl Fn(&Value) -> bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (m, message) in body["messages"].as_array().unwrap().iter().enumerate() {
        for (b, block) in message["content"].as_array().unwrap().iter().enumerate() {
            if marked(block) {
                out.push((m, b));
            }
        }
    }
    out
}

#[test]
fn xml_context_mode_is_one_user_content_in_both_formats() {
    let events = golden_events("gemini_parallel_calls");
    let options = MessageOptions {
        context_mode: ContextMode::Xml,
        instructions: Some("Be brief.".into()),
        ..MessageOptions::default()
    };
    let gemini = render_with(&events, &options, Provider::Gemini, &ProviderOptions::default());
    assert_eq!(gemini["contents"].as_array().unwrap().len(), 1);
    assert!(gemini["contents"][0]["parts"][0]["text"].as_str().unwrap().starts_with("<thread>"));
    assert_eq!(gemini["systemInstruction"], json!({"parts": [{"text": "Be brief."}]}));
    let cached = ProviderOptions { bedrock_cache: BedrockCache::Auto, ..ProviderOptions::default() };
    let bedrock = render_with(&events, &options, Provider::BedrockConverse, &cached);
    check_bedrock(&bedrock).unwrap();
    assert_eq!(bedrock["messages"].as_array().unwrap().len(), 1);
    let _ = DanglingToolCalls::Repair;
}

// ---- back to events ----

#[test]
fn a_gemini_body_read_back_renders_as_itself() {
    for name in ["gemini_parallel_calls", "thinking_tool_loop"] {
        let body = render(&golden_events(name), Provider::Gemini, &ProviderOptions::default());
        let stamp = threadkeeper::convert::EventStamp::default();
        let events = threadkeeper::convert::gemini_to_events(body["contents"].as_array().unwrap(), &stamp).unwrap();
        let without_system = render(&events, Provider::Gemini, &ProviderOptions::default());
        let mut expected = body.clone();
        expected.as_object_mut().unwrap().remove("systemInstruction");
        assert_eq!(without_system, expected, "{name}");
    }
    // Signatures stay on the parts that carried them.
    let body = render(&golden_events("gemini_parallel_calls"), Provider::Gemini, &ProviderOptions::default());
    let stamp = threadkeeper::convert::EventStamp::default();
    let events = threadkeeper::convert::gemini_to_events(body["contents"].as_array().unwrap(), &stamp).unwrap();
    let signed: Vec<(&str, &str)> =
        events.iter().filter_map(|e| Some((e.event_type(), e.fields().get("thoughtSignature")?.as_str()?))).collect();
    assert_eq!(
        signed,
        vec![
            ("tool_call", "CiQBjz1rX0sig1AA"),
            ("tool_call", "CiQBjz1rX0sig2AA"),
            ("tool_call", "CiQBjz1rX0sig3AA"),
            ("message", "CiQBjz1rX0sig4AA")
        ]
    );
}

#[test]
fn gemini_calls_without_ids_are_answered_by_name_in_order() {
    let contents = json!([
        {"role": "user", "parts": [{"text": "Go"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {"n": 1}}}, {"functionCall": {"name": "f", "args": {"n": 2}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {"output": "one"}}}, {"functionResponse": {"name": "f", "response": {"error": "[Error (recoverable)]: two failed"}}}]},
    ]);
    let stamp = threadkeeper::convert::EventStamp::default();
    let events = threadkeeper::convert::gemini_to_events(contents.as_array().unwrap(), &stamp).unwrap();
    let values: Vec<Value> = events.into_iter().map(AgentEvent::into_value).collect();
    assert_eq!(values[3], json!({"type": "tool_result", "toolCallId": "f_1_0", "result": "one", "iteration": 0}));
    assert_eq!(
        values[4],
        json!({"type": "error", "error": "two failed", "recoverable": true, "toolCallId": "f_1_1", "iteration": 0})
    );
    let bad = json!([{"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": "AA=="}}]}]);
    let err = threadkeeper::convert::gemini_to_events(bad.as_array().unwrap(), &stamp).unwrap_err();
    assert_eq!(err.path, "contents[0].parts[0]");
}

#[test]
fn a_bedrock_body_read_back_renders_as_itself() {
    for name in ["bedrock_thinking_tool_loop", "parallel_calls_one_errors", "results_in_other_order"] {
        let body = render(&golden_events(name), Provider::BedrockConverse, &ProviderOptions::default());
        let stamp = threadkeeper::convert::EventStamp::default();
        let events =
            threadkeeper::convert::bedrock_converse_to_events(body["messages"].as_array().unwrap(), &stamp).unwrap();
        let mut expected = body.clone();
        expected.as_object_mut().unwrap().remove("system");
        assert_eq!(render(&events, Provider::BedrockConverse, &ProviderOptions::default()), expected, "{name}");
    }
}
