//! Signed reasoning through the framework adapters (`aiSdk/toEvents`, `pydanticAi/toEvents`):
//! kept as reasoning events, replayed by the provider renders (Anthropic's thinking first in
//! the assistant message, Gemini's signature on the first function call, Bedrock's
//! `reasoningContent`), and given back equal by the `ai-sdk` and `pydantic-ai` renders.
//!
//! Golden files: `tests/golden/providers/NAME.ai-sdk.json` and `NAME.pydantic-ai.json` for the
//! reasoning fixtures (threads no adapter wrote). `UPDATE_GOLDEN=1 cargo test --test it
//! adapter_reasoning::goldens` rewrites them.

use crate::support::golden::Goldens;
use serde_json::{json, Value};
use std::fs;
use std::path::Path;
use threadkeeper::convert::{ai_sdk_to_events, pydantic_ai_to_events, EventStamp};
use threadkeeper::messages::MessageOptions;
use threadkeeper::{render_request, AgentEvent, Provider};

fn render(events: &[AgentEvent], provider: Provider) -> Value {
    serde_json::from_str(&render_request(events, &MessageOptions::default(), provider, false)).unwrap()
}

fn ai_sdk_events(messages: &Value) -> Vec<AgentEvent> {
    ai_sdk_to_events(messages.as_array().unwrap(), &EventStamp::default()).unwrap()
}

fn pydantic_events(messages: &Value) -> Vec<AgentEvent> {
    pydantic_ai_to_events(messages.as_array().unwrap(), &EventStamp::default()).unwrap()
}

/// A step as `generateText` writes it: the user's question, the assistant's `parts`, the result.
fn ai_sdk_turn(parts: Value) -> Value {
    json!([
        {"role": "user", "content": "Weather in Rome?"},
        {"role": "assistant", "content": parts},
        {"role": "tool", "content": [
            {"type": "tool-result", "toolCallId": "c1", "toolName": "weather", "output": {"type": "json", "value": {"c": 18}}},
        ]},
        {"role": "assistant", "content": [{"type": "text", "text": "18 °C."}]},
    ])
}

fn call(provider_options: Option<Value>) -> Value {
    let mut part = json!({"type": "tool-call", "toolCallId": "c1", "toolName": "weather", "input": {"city": "Rome"}});
    if let Some(options) = provider_options {
        part["providerOptions"] = options;
    }
    part
}

#[test]
fn ai_sdk_anthropic_thinking_is_replayed_first_and_given_back() {
    let messages = ai_sdk_turn(json!([
        {"type": "reasoning", "text": "Think ✓", "providerOptions": {"anthropic": {"signature": "sig-a"}}},
        {"type": "reasoning", "text": "", "providerOptions": {"anthropic": {"redactedData": "red-a"}}},
        call(None),
    ]));
    let events = ai_sdk_events(&messages);
    let reasoning: Vec<Value> = events.iter().map(AgentEvent::to_value).filter(|e| e["type"] == "reasoning").collect();
    assert_eq!(reasoning[0]["provider"], "anthropic");
    assert_eq!(reasoning[0]["signature"], "sig-a");
    assert_eq!(reasoning[1]["redactedData"], "red-a");
    assert_eq!(render(&events, Provider::AiSdk)["messages"], messages);
    let body = render(&events, Provider::Anthropic);
    assert_eq!(
        body["messages"][1]["content"][0],
        json!({"type": "thinking", "thinking": "Think ✓", "signature": "sig-a"})
    );
    assert_eq!(body["messages"][1]["content"][1], json!({"type": "redacted_thinking", "data": "red-a"}));
    // Another provider's render leaves it out.
    assert!(!render(&events, Provider::Gemini).to_string().contains("sig-a"));
}

#[test]
fn ai_sdk_gemini_signatures_stay_on_their_parts() {
    let messages = ai_sdk_turn(json!([
        {"type": "reasoning", "text": "Plan", "providerOptions": {"google": {"thoughtSignature": "ts-r"}}},
        {"type": "text", "text": "Looking.", "providerOptions": {"google": {"thoughtSignature": "ts-t"}}},
        call(Some(json!({"google": {"thoughtSignature": "ts-c"}}))),
    ]));
    let events = ai_sdk_events(&messages);
    assert_eq!(render(&events, Provider::AiSdk)["messages"], messages);
    let parts = render(&events, Provider::Gemini)["contents"][1]["parts"].clone();
    assert_eq!(parts[0], json!({"text": "Plan", "thought": true, "thoughtSignature": "ts-r"}));
    assert_eq!(parts[1]["thoughtSignature"], "ts-t");
    assert_eq!(parts[2]["functionCall"]["name"], "weather");
    assert_eq!(parts[2]["thoughtSignature"], "ts-c");
}

#[test]
fn ai_sdk_bedrock_reasoning_is_replayed_as_reasoning_content() {
    for key in ["bedrock", "amazonBedrock"] {
        let messages = ai_sdk_turn(json!([
            {"type": "reasoning", "text": "Hmm", "providerOptions": {key: {"signature": "sig-b"}}},
            {"type": "reasoning", "text": "", "providerOptions": {key: {"redactedData": "red-b"}}},
            call(None),
        ]));
        let events = ai_sdk_events(&messages);
        assert_eq!(render(&events, Provider::AiSdk)["messages"], messages, "{key}");
        let content = render(&events, Provider::BedrockConverse)["messages"][1]["content"].clone();
        assert_eq!(content[0], json!({"reasoningContent": {"reasoningText": {"text": "Hmm", "signature": "sig-b"}}}));
        assert_eq!(content[1], json!({"reasoningContent": {"redactedContent": "red-b"}}));
    }
}

/// A Pydantic AI run (as `ModelMessagesTypeAdapter` dumps it) whose response opens with `thinking`.
fn pydantic_run(thinking: Value) -> Value {
    json!([
        {"parts": [{"content": "Weather in Rome?", "timestamp": "2026-01-01T00:00:00Z", "part_kind": "user-prompt"}],
         "instructions": null, "kind": "request"},
        {"parts": [thinking, {"tool_name": "weather", "args": {"city": "Rome"}, "tool_call_id": "c1", "id": null, "provider_details": null, "part_kind": "tool-call"}],
         "model_name": "m", "timestamp": "2026-01-01T00:00:01Z", "kind": "response"},
        {"parts": [{"tool_name": "weather", "content": "18 °C", "tool_call_id": "c1", "metadata": null, "timestamp": "2026-01-01T00:00:02Z", "part_kind": "tool-return"}],
         "instructions": null, "kind": "request"},
        {"parts": [{"content": "18 °C.", "id": null, "provider_details": null, "part_kind": "text"}],
         "model_name": "m", "timestamp": "2026-01-01T00:00:03Z", "kind": "response"},
    ])
}

fn thinking(provider: &str, id: Option<&str>) -> Value {
    json!({"content": "Erst nachdenken ✓", "id": id, "signature": format!("sig-{provider}"), "provider_name": provider, "provider_details": null, "part_kind": "thinking"})
}

#[test]
fn pydantic_ai_thinking_is_replayed_for_its_provider_and_given_back() {
    let anthropic = pydantic_run(thinking("anthropic", None));
    let events = pydantic_events(&anthropic);
    assert_eq!(render(&events, Provider::PydanticAi)["messages"], anthropic);
    assert_eq!(
        render(&events, Provider::Anthropic)["messages"][1]["content"][0],
        json!({"type": "thinking", "thinking": "Erst nachdenken ✓", "signature": "sig-anthropic"})
    );

    let bedrock = pydantic_run(thinking("bedrock", None));
    let events = pydantic_events(&bedrock);
    assert_eq!(render(&events, Provider::PydanticAi)["messages"], bedrock);
    assert_eq!(
        render(&events, Provider::BedrockConverse)["messages"][1]["content"][0],
        json!({"reasoningContent": {"reasoningText": {"text": "Erst nachdenken ✓", "signature": "sig-bedrock"}}})
    );

    // Pydantic AI's Gemini signature signs the part after the thinking: the first call.
    let google = pydantic_run(thinking("google-gla", None));
    let events = pydantic_events(&google);
    assert_eq!(render(&events, Provider::PydanticAi)["messages"], google);
    let parts = render(&events, Provider::Gemini)["contents"][1]["parts"].clone();
    assert_eq!(parts[0], json!({"text": "Erst nachdenken ✓", "thought": true}));
    assert_eq!(parts[1]["thoughtSignature"], "sig-google-gla");

    // Redacted thinking is Anthropic's redacted block.
    let redacted = pydantic_run(
        json!({"content": "", "id": "redacted_thinking", "signature": "red", "provider_name": "anthropic", "provider_details": null, "part_kind": "thinking"}),
    );
    let events = pydantic_events(&redacted);
    assert_eq!(render(&events, Provider::PydanticAi)["messages"], redacted);
    assert_eq!(
        render(&events, Provider::Anthropic)["messages"][1]["content"][0],
        json!({"type": "redacted_thinking", "data": "red"})
    );
}

#[test]
fn pydantic_ai_thinking_of_no_known_provider_stays_kept_as_before() {
    let run = pydantic_run(
        json!({"content": "hm", "id": null, "signature": null, "provider_name": null, "provider_details": null, "part_kind": "thinking"}),
    );
    let events = pydantic_events(&run);
    assert!(events.iter().all(|e| e.event_type() != "reasoning"));
    assert_eq!(render(&events, Provider::PydanticAi)["messages"], run);
}

/// Threads no adapter wrote (the reasoning fixtures) render their reasoning events in each
/// framework's own form: the ai-sdk part's `providerOptions`, pydantic-ai's `thinking` part.
#[test]
fn goldens() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/providers");
    let mut goldens = Goldens::new();
    for name in ["thinking_tool_loop", "gemini_parallel_calls", "bedrock_thinking_tool_loop"] {
        let case: Value =
            serde_json::from_str(&fs::read_to_string(dir.join(format!("{name}.events.json"))).unwrap()).unwrap();
        let events = AgentEvent::list_from_values(case["events"].as_array().unwrap().clone()).unwrap();
        for (form, provider) in [("ai-sdk", Provider::AiSdk), ("pydantic-ai", Provider::PydanticAi)] {
            goldens.check_json(&dir.join(format!("{name}.{form}.json")), &render(&events, provider));
        }
    }
    goldens.finish();
}
