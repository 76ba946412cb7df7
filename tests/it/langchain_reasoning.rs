//! Reasoning blocks of LangChain AI messages (`messages/toEvents`): kept as reasoning events,
//! replayed by the provider renders (Anthropic's thinking first in the assistant message,
//! Bedrock's `reasoningContent`), and, with `keepBlockForms`, given back by the `messages`
//! render in the block form they were written in.

use crate::support::{Server, Wire};
use serde_json::{json, Value};

/// A tool-use turn whose AI message holds Anthropic's thinking blocks (one signed with empty
/// text, one redacted) before its text and call.
fn anthropic_turn() -> Value {
    json!([
        {"type": "human", "data": {"content": "Weather in Rome?"}},
        {"type": "ai", "data": {
            "id": "msg_1",
            "content": [
                {"type": "thinking", "thinking": "Think ✓ \"<x>\"\n", "signature": "sig-a"},
                {"type": "thinking", "thinking": "", "signature": "sig-omitted"},
                {"type": "redacted_thinking", "data": "red-a"},
                {"type": "text", "text": "Let me check."},
            ],
            "tool_calls": [{"id": "c1", "name": "weather", "args": {"city": "Rome"}, "type": "tool_call"}],
            "response_metadata": {"model_provider": "anthropic", "model": "claude-sonnet-4-5"},
        }},
        {"type": "tool", "data": {"content": "18 °C", "tool_call_id": "c1"}},
        {"type": "ai", "data": {"content": "18 °C."}},
    ])
}

fn events_of(server: &mut Server, messages: &Value, keep_block_forms: bool) -> Value {
    server.ok("messages/toEvents", json!({"messages": messages, "keepBlockForms": keep_block_forms}))["events"].clone()
}

fn stored(server: &mut Server, thread: &str, events: &Value) {
    server.ok("thread/open", json!({"threadId": thread}));
    server.ok("thread/append", json!({"threadId": thread, "events": events}));
}

#[test]
fn thinking_blocks_become_reasoning_events_before_the_text_and_calls() {
    let mut server = Server::start(Wire::Lsp, "memory");
    let events = events_of(&mut server, &anthropic_turn(), false);
    let kinds: Vec<&str> = events.as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["message", "reasoning", "reasoning", "reasoning", "message", "tool_call", "tool_result", "message"]
    );
    let model = "claude-sonnet-4-5";
    let meta = json!({"response_metadata": {"model_provider": "anthropic", "model": model}});
    assert_eq!(
        events[1],
        json!({"type": "reasoning", "provider": "anthropic", "model": model, "text": "Think ✓ \"<x>\"\n",
            "signature": "sig-a", "iteration": 0, "messageId": "msg_1", "messageFields": meta})
    );
    assert_eq!(events[2]["text"], "");
    assert_eq!(events[2]["signature"], "sig-omitted");
    assert_eq!(events[3]["redactedData"], "red-a");
    assert_eq!(events[3].get("text"), None);
    assert_eq!(events[4]["content"], "Let me check.");
    // Without the option no block form is kept, and the messages render leaves reasoning out
    // (an AI message with an id keeps its text and calls together, as before).
    assert!(!events.to_string().contains("langchainBlock"));
    stored(&mut server, "plain", &events);
    let rendered = server.ok("thread/render", json!({"threadId": "plain", "format": "messages"}));
    assert_eq!(rendered["messages"][1]["data"]["content"], "Let me check.");
    server.stop();
}

#[test]
fn the_anthropic_render_opens_the_assistant_message_with_the_thinking() {
    let mut server = Server::start(Wire::Lsp, "memory");
    let events = events_of(&mut server, &anthropic_turn(), true);
    stored(&mut server, "t", &events);
    let body = server.ok("thread/render", json!({"threadId": "t", "format": "anthropic"}));
    let content = body["body"]["messages"][1]["content"].clone();
    let content = if content.is_null() { body["messages"][1]["content"].clone() } else { content };
    assert_eq!(
        content[0],
        json!({"type": "thinking", "thinking": "Think ✓ \"<x>\"\n", "signature": "sig-a"}),
        "{body}"
    );
    assert_eq!(content[1], json!({"type": "thinking", "thinking": "", "signature": "sig-omitted"}));
    assert_eq!(content[2], json!({"type": "redacted_thinking", "data": "red-a"}));
    assert_eq!(content[3]["type"], "text");
    assert_eq!(content[4]["type"], "tool_use");
    server.stop();
}

#[test]
fn kept_block_forms_come_back_from_the_messages_render() {
    let mut server = Server::start(Wire::Lsp, "memory");
    let messages = anthropic_turn();
    let events = events_of(&mut server, &messages, true);
    stored(&mut server, "t", &events);
    let rendered = server.ok("thread/render", json!({"threadId": "t", "format": "messages"}));
    assert_eq!(rendered["messages"], messages, "{rendered}");
    // The v1 standard block, with no provider named anywhere, still comes back as written.
    let v1 = json!([
        {"type": "human", "data": {"content": "Hi"}},
        {"type": "ai", "data": {"content": [
            {"type": "reasoning", "reasoning": "plain", "id": "r1", "extras": {"note": 1}},
            {"type": "text", "text": "Hello."},
        ]}},
    ]);
    let events = events_of(&mut server, &v1, true);
    assert_eq!(events[1]["type"], "turn_block");
    stored(&mut server, "v1", &events);
    let rendered = server.ok("thread/render", json!({"threadId": "v1", "format": "messages"}));
    assert_eq!(rendered["messages"], v1, "{rendered}");
    server.stop();
}

#[test]
fn bedrock_converse_replays_reasoning_of_provider_bedrock() {
    let mut server = Server::start(Wire::Lsp, "memory");
    let messages = json!([
        {"type": "human", "data": {"content": "Weather?"}},
        {"type": "ai", "data": {
            "content": [
                {"type": "reasoning", "reasoning": "Hmm", "extras": {"signature": "sig-b"}},
                {"type": "redacted_thinking", "data": "red-b"},
            ],
            "tool_calls": [{"id": "c1", "name": "weather", "args": {}, "type": "tool_call"}],
            "response_metadata": {"model_provider": "bedrock_converse", "model_name": "us.anthropic.claude-sonnet-4-5-v1:0"},
        }},
        {"type": "tool", "data": {"content": "sunny", "tool_call_id": "c1"}},
    ]);
    let events = events_of(&mut server, &messages, true);
    assert_eq!(events[1]["provider"], "bedrock");
    assert_eq!(events[2]["provider"], "bedrock");
    stored(&mut server, "b", &events);
    let body = server.ok("thread/render", json!({"threadId": "b", "format": "bedrock-converse"}));
    let text = body.to_string();
    assert!(text.contains(r#"{"reasoningContent":{"reasoningText":{"text":"Hmm","signature":"sig-b"}}}"#), "{text}");
    assert!(text.contains(r#"{"reasoningContent":{"redactedContent":"red-b"}}"#), "{text}");
    // Anthropic's own API does not take Bedrock's signatures.
    let anthropic = server.ok("thread/render", json!({"threadId": "b", "format": "anthropic"})).to_string();
    assert!(!anthropic.contains("sig-b"), "{anthropic}");
    let rendered = server.ok("thread/render", json!({"threadId": "b", "format": "messages"}));
    assert_eq!(rendered["messages"], messages, "{rendered}");
    server.stop();
}
