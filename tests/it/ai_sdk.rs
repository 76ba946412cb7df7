//! The Vercel AI SDK form: the `ai-sdk` projection and its inverse, `aiSdk/toEvents`.
//!
//! Properties: the messages `generateText`'s loop produces come back equal through events
//! (`render(toEvents(messages)) = messages`); every generated thread renders as valid model
//! messages (the schema, calls answered by the next message, unique ids, a user message first)
//! and its rendering is a fixed point of `render ∘ toEvents`. The TypeScript client's suite runs
//! the SDK's own loop against the server.

use crate::support::{Server, Wire};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::path::Path;
use threadkeeper::convert::{ai_sdk_to_events, EventStamp};
use threadkeeper::messages::{ContextMode, DanglingToolCalls, MessageOptions};
use threadkeeper::{render_request, AgentEvent, Provider};

fn to_events(messages: &Value) -> Vec<AgentEvent> {
    ai_sdk_to_events(messages.as_array().unwrap(), &EventStamp::default()).unwrap()
}

fn render(events: &[AgentEvent], options: &MessageOptions) -> Value {
    serde_json::from_str(&render_request(events, options, Provider::AiSdk, false)).unwrap()
}

fn messages_of(events: &[AgentEvent]) -> Value {
    render(events, &MessageOptions::default())["messages"].clone()
}

fn event_values(events: &[AgentEvent]) -> Value {
    Value::Array(events.iter().map(AgentEvent::to_value).collect())
}

/// A turn as `generateText` writes it (`[user, ...result.responseMessages]`): reasoning, text
/// and two parallel calls in one step, a JSON result and a thrown tool's `error-text`, a text
/// result, then the answer.
fn sdk_turn() -> Value {
    json!([
        {"role": "user", "content": "Weather in Zürich, clean *.tmp, greet Zoë ✓"},
        {"role": "assistant", "content": [
            {"type": "reasoning", "text": "Two lookups at once."},
            {"type": "text", "text": "Checking Zürich and cleaning up…"},
            {"type": "tool-call", "toolCallId": "call_w1", "toolName": "weather", "input": {"city": "Zürich"}},
            {"type": "tool-call", "toolCallId": "call_d1", "toolName": "delete_files", "input": {"glob": "*.tmp"}}
        ]},
        {"role": "tool", "content": [
            {"type": "tool-result", "toolCallId": "call_w1", "toolName": "weather", "output": {"type": "json", "value": {"city": "Zürich", "tempC": 18}}},
            {"type": "tool-result", "toolCallId": "call_d1", "toolName": "delete_files", "output": {"type": "error-text", "value": "Error: permission denied: *.tmp"}}
        ]},
        {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "call_g1", "toolName": "greet", "input": {"name": "Zoë"}}]},
        {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "call_g1", "toolName": "greet", "output": {"type": "text", "value": "こんにちは, Zoë!"}}]},
        {"role": "assistant", "content": [{"type": "text", "text": "18 °C in Zürich; *.tmp stays."}]}
    ])
}

#[test]
fn a_generate_text_turn_becomes_these_events_and_renders_back_equal() {
    let turn = sdk_turn();
    let events = to_values_stamped(&turn, 3);
    assert_eq!(
        events,
        json!([
            {"type":"message","role":"user","content":"Weather in Zürich, clean *.tmp, greet Zoë ✓","aiSdk":{"message":{}},"iteration":3},
            {"type":"turn_block","block":{"kind":"reasoning","payload":{"text":"Two lookups at once."},"aiSdk":{"message":{}}},"iteration":3},
            {"type":"message","role":"assistant","content":"Checking Zürich and cleaning up…","aiSdk":{},"iteration":3},
            {"type":"tool_call","toolName":"weather","toolCallId":"call_w1","args":{"city":"Zürich"},"aiSdk":{},"iteration":3},
            {"type":"tool_call","toolName":"delete_files","toolCallId":"call_d1","args":{"glob":"*.tmp"},"aiSdk":{},"iteration":3},
            {"type":"tool_result","toolCallId":"call_w1","result":{"city":"Zürich","tempC":18},"aiSdk":{"message":{},"output":"json"},"iteration":3},
            {"type":"error","error":"Error: permission denied: *.tmp","recoverable":true,"toolCallId":"call_d1","aiSdk":{"output":"error-text"},"iteration":3},
            {"type":"tool_call","toolName":"greet","toolCallId":"call_g1","args":{"name":"Zoë"},"aiSdk":{"message":{}},"iteration":3},
            {"type":"tool_result","toolCallId":"call_g1","result":"こんにちは, Zoë!","aiSdk":{"message":{}},"iteration":3},
            {"type":"message","role":"assistant","content":"18 °C in Zürich; *.tmp stays.","aiSdk":{"message":{}},"iteration":3}
        ])
    );
    assert_eq!(messages_of(&to_events(&turn)), turn);
}

fn to_values_stamped(messages: &Value, iteration: u64) -> Value {
    let stamp = EventStamp { iteration: iteration.into(), timestamp: None };
    event_values(&ai_sdk_to_events(messages.as_array().unwrap(), &stamp).unwrap())
}

#[test]
fn what_events_have_no_field_for_comes_back() {
    let messages = json!([
        {"role": "system", "content": "Be brief.", "providerOptions": {"anthropic": {"cacheControl": {"type": "ephemeral"}}}},
        {"role": "user", "content": [{"type": "text", "text": "First, "}, {"type": "text", "text": "then second.", "providerOptions": {"x": {"y": 1}}}]},
        {"role": "user", "content": "A second user message."},
        {"role": "assistant", "content": [
            {"type": "reasoning", "text": "hmm", "providerOptions": {"anthropic": {"signature": "sig"}}},
            {"type": "tool-call", "toolCallId": "a", "toolName": "lookup", "input": "raw text input"},
            {"type": "tool-call", "toolCallId": "b", "toolName": "lookup", "input": {"q": 1}, "providerOptions": {"openai": {"itemId": "fc_1"}}},
            {"type": "tool-call", "toolCallId": "c", "toolName": "lookup", "input": {}, "providerExecuted": false},
            {"type": "tool-call", "toolCallId": "d", "toolName": "lookup", "input": [1, 2]},
            {"type": "tool-call", "toolCallId": "e", "toolName": "lookup", "input": {}}
        ]},
        {"role": "tool", "content": [
            {"type": "tool-result", "toolCallId": "a", "toolName": "lookup", "output": {"type": "json", "value": "42"}},
            {"type": "tool-result", "toolCallId": "b", "toolName": "lookup", "output": {"type": "error-json", "value": {"code": 7}}},
            {"type": "tool-result", "toolCallId": "c", "toolName": "lookup", "output": {"type": "execution-denied"}},
            {"type": "tool-result", "toolCallId": "d", "toolName": "renamed", "output": {"type": "execution-denied", "reason": "not now"}, "providerOptions": {"p": {}}}
        ]},
        {"role": "tool", "content": [
            {"type": "tool-result", "toolCallId": "e", "toolName": "lookup", "output": {"type": "content", "value": [{"type": "text", "text": "t"}], "providerOptions": {"o": {"k": true}}}}
        ]},
        {"role": "assistant", "content": "Done.", "providerOptions": {"openai": {"phase": "final"}}}
    ]);
    let events = to_events(&messages);
    assert_eq!(messages_of(&events), messages);
    // The events themselves say what happened, for the XML and every other form.
    let xml = threadkeeper::xml::serialize_thread_to_xml(&events, &Default::default());
    assert!(xml.contains(r#"iteration="0" recoverable="true">{&quot;code&quot;:7}</event>"#), "{xml}");
    assert!(xml.contains(">not now</event>"), "{xml}");
}

#[test]
fn a_thread_that_opens_with_the_assistant_reads_back_without_the_opening_message() {
    let response_only = json!([
        {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "c1", "toolName": "t", "input": {}}]},
        {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c1", "toolName": "t", "output": {"type": "text", "value": "ok"}}]}
    ]);
    let rendered = messages_of(&to_events(&response_only));
    assert_eq!(rendered[0], json!({"role": "user", "content": "(The conversation so far follows.)"}));
    assert_eq!(rendered.as_array().unwrap()[1..], response_only.as_array().unwrap()[..]);
    assert_eq!(messages_of(&to_events(&rendered)), rendered);
}

#[test]
fn parts_events_cannot_hold_are_refused_naming_them() {
    let cases = [
        (
            json!([{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image"}]}]),
            "messages[0].content[1].image",
            "expected base64, a data URL or a URL",
        ),
        (
            json!([{"role": "assistant", "content": [{"type": "tool-result", "toolCallId": "c", "toolName": "t", "output": {"type": "text", "value": "x"}}]}]),
            "messages[0].content[0].type",
            "unsupported part type \"tool-result\" in a assistant message: expected text, reasoning or tool-call",
        ),
        (
            json!([{"role": "tool", "content": [{"type": "tool-approval-response", "approvalId": "a", "approved": true}]}]),
            "messages[0].content[0].type",
            "unsupported part type \"tool-approval-response\" in a tool message: expected tool-result",
        ),
        (
            json!([{"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c", "toolName": "t", "output": {"type": "magic"}}]}]),
            "messages[0].content[0].output.type",
            "unsupported output type \"magic\": expected text, json, content, error-text, error-json or execution-denied",
        ),
        (
            json!([{"role": "assistant", "content": [{"type": "tool-call", "toolName": "t", "input": {}}]}]),
            "messages[0].content[0].toolCallId",
            "missing",
        ),
        (json!([{"role": "system", "content": []}]), "messages[0].content", "expected a string, found array"),
        (json!([{"role": "developer", "content": "x"}]), "messages[0].role", "expected system, user, assistant or tool, found \"developer\""),
        (json!([{"role": "tool", "content": "x"}]), "messages[0].content", "expected a list of parts, found string"),
    ];
    for (messages, path, reason) in cases {
        let error = ai_sdk_to_events(messages.as_array().unwrap(), &EventStamp::default()).unwrap_err();
        assert_eq!((error.path.as_str(), error.reason.as_str()), (path, reason), "{messages}");
    }
}

#[test]
fn the_method_and_the_render_over_the_protocol() {
    let mut server = Server::start(Wire::Lsp, "memory");
    let turn = sdk_turn();
    let events = server.ok("aiSdk/toEvents", json!({"messages": turn, "iteration": 1}));
    server.ok("thread/open", json!({"threadId": "t"}));
    server.ok("thread/append", json!({"threadId": "t", "events": events["events"]}));
    let rendered = server
        .ok("thread/render", json!({"threadId": "t", "format": "ai-sdk", "options": {"instructions": "Be brief."}}));
    assert_eq!(rendered["format"], "ai-sdk");
    assert_eq!(rendered["contextMode"], "standard");
    assert_eq!(rendered["instructions"], "Be brief.");
    assert_eq!(rendered["messages"], turn);
    let error = server.err("aiSdk/toEvents", json!({"messages": [{"role": "user", "content": [{"type": "file"}]}]}));
    assert_eq!(error["code"], -32602);
    assert_eq!(error["data"]["path"], "messages[0].content[0].data");
}

/// The worked example of `protocol/providers/ai-sdk.md` is what the code renders.
#[test]
fn the_page_shows_what_the_code_renders() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let events: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(root.join("examples/provider-thread.json")).unwrap()).unwrap();
    let events = AgentEvent::list_from_values(events).unwrap();
    let options = MessageOptions { instructions: Some("Be brief.".into()), ..MessageOptions::default() };
    let page = std::fs::read_to_string(root.join("protocol/providers/ai-sdk.md")).unwrap();
    let shown = page.split("```json\n").nth(1).and_then(|rest| rest.split("```").next()).unwrap();
    assert_eq!(shown, render_request(&events, &options, Provider::AiSdk, true) + "\n");
}

/// What the SDK and the providers behind it need of the messages, beyond the schema: a user
/// message first, every call answered by the tool message right after its assistant message,
/// no result without its call, unique call ids, no blank text.
fn check(request: &Value) -> Result<(), String> {
    let messages = request["messages"].as_array().ok_or("no messages")?;
    if let Some(first) = messages.first() {
        if first["role"] != "user" {
            return Err(format!("opens with {}", first["role"]));
        }
    }
    let mut ids = HashSet::new();
    let mut open: Vec<String> = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().ok_or("no role")?;
        let parts: Vec<Value> = match &message["content"] {
            Value::String(text) => vec![json!({"type": "text", "text": text})],
            Value::Array(parts) => parts.clone(),
            other => return Err(format!("messages[{i}].content is {other}")),
        };
        if role != "tool" && !open.is_empty() {
            return Err(format!("messages[{i}]: calls {open:?} unanswered"));
        }
        for part in &parts {
            match part["type"].as_str() {
                Some("text") if part["text"].as_str().is_none_or(|t| t.trim().is_empty()) => {
                    return Err(format!("messages[{i}]: blank text"))
                }
                Some("tool-call") => {
                    let id = part["toolCallId"].as_str().unwrap().to_owned();
                    if !ids.insert(id.clone()) {
                        return Err(format!("messages[{i}]: id {id} used twice"));
                    }
                    open.push(id);
                }
                Some("tool-result") => {
                    let id = part["toolCallId"].as_str().unwrap();
                    let at = open.iter().position(|o| o == id).ok_or(format!("messages[{i}]: orphan result {id}"))?;
                    open.remove(at);
                }
                _ => {}
            }
        }
    }
    if !open.is_empty() {
        return Err(format!("calls {open:?} unanswered at the end"));
    }
    Ok(())
}

pub(crate) fn schema_errors(request: &Value) -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol/schema");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("ai-sdk.json")).unwrap()).unwrap();
    let mut root = schema.clone();
    root["$ref"] = json!("#/$defs/request");
    let validator = jsonschema::draft202012::new(&root).unwrap();
    validator.iter_errors(request).map(|e| format!("{}: {e}", e.instance_path())).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_thread_renders_valid_model_messages_that_read_back_to_themselves(
        values in prop::collection::vec(crate::providers::event_strategy(), 0..30),
        drop in any::<bool>(),
        xml in any::<bool>(),
    ) {
        let events = AgentEvent::list_from_values(values).unwrap();
        let options = MessageOptions {
            context_mode: if xml { ContextMode::Xml } else { ContextMode::Standard },
            dangling_tool_calls: if drop { DanglingToolCalls::Drop } else { DanglingToolCalls::Repair },
            ..MessageOptions::default()
        };
        let rendered = render(&events, &options);
        prop_assert_eq!(schema_errors(&rendered), Vec::<String>::new(), "{:#}", rendered);
        prop_assert!(check(&rendered).is_ok(), "{:?}\n{:#}", check(&rendered), rendered);
        let again = to_events(&rendered["messages"]);
        prop_assert_eq!(&messages_of(&again), &rendered["messages"]);
    }
}
