//! The `pydantic-ai` render and its inverse, `pydanticAi/toEvents`.
//!
//! Properties: Pydantic AI's own messages (examples/pydantic-ai-messages.json, dumped by
//! `ModelMessagesTypeAdapter`) come back equal through events, in one append or several and
//! through the server; any thread renders as alternating requests and responses whose calls are
//! answered in the request right after them; bad input is refused naming where.

use crate::support::{Server, Wire};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::HashSet;
use threadkeeper::convert::{pydantic_ai_to_events, EventStamp};
use threadkeeper::messages::{ContextMode, DanglingToolCalls, MessageOptions};
use threadkeeper::{render_request, AgentEvent, Provider};

fn fixture() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/pydantic-ai-messages.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn to_events(messages: &Value) -> Vec<AgentEvent> {
    pydantic_ai_to_events(messages.as_array().unwrap(), &EventStamp::default()).unwrap()
}

fn render(events: &[AgentEvent], options: &MessageOptions) -> Value {
    serde_json::from_str(&render_request(events, options, Provider::PydanticAi, false)).unwrap()
}

#[test]
fn pydantic_ai_messages_come_back_equal_through_events() {
    let messages = fixture();
    let events = to_events(&messages);
    assert_eq!(render(&events, &MessageOptions::default())["messages"], messages);
    // Key order too: the parts read as Pydantic AI writes them.
    assert_eq!(render(&events, &MessageOptions::default())["messages"].to_string(), messages.to_string());
}

#[test]
fn messages_appended_in_several_calls_come_back_equal() {
    let messages = fixture();
    let all = messages.as_array().unwrap();
    for cut in 1..all.len() {
        let mut events = to_events(&Value::Array(all[..cut].to_vec()));
        events.extend(to_events(&Value::Array(all[cut..].to_vec())));
        assert_eq!(render(&events, &MessageOptions::default())["messages"], messages, "cut at {cut}");
    }
}

#[test]
fn events_say_what_happened_and_keep_the_rest() {
    let events = to_events(&fixture());
    let summary: Vec<String> = events
        .iter()
        .map(|e| {
            let f = e.fields();
            let s = |k: &str| f.get(k).map(|v| v.to_string()).unwrap_or_default();
            format!("{} {}{}{}{}", e.event_type(), s("role"), s("toolName"), s("error"), s("content"))
        })
        .collect();
    assert_eq!(
        summary,
        [
            r#"message "system""You are a weather bot.""#,
            r#"message "user""Weather in Zürich and Paris?""#,
            r#"message "assistant""Let me look.""#,
            r#"tool_call "weather""#,
            r#"tool_call "weather""#,
            r#"tool_call "flaky""#,
            "tool_result ",
            "tool_result ",
            r#"error "try n=2""#,
            r#"tool_call "flaky""#,
            r#"error "n must be odd""#,
            r#"message "assistant""Both sunny ☀""#,
            r#"error "[{\"type\":\"missing\",\"loc\":[\"x\"],\"msg\":\"Field required\",\"input\":{}}]""#,
            r#"message "assistant""{\"x\": 1}""#,
        ]
    );
    let first = events[0].fields();
    assert_eq!(first["messageId"], "run-1:0.0");
    assert_eq!(first["pydanticAi"]["lead"][0]["message"]["instructions"], "Be brief.");
    // The thinking part has no event: it is kept before the text that follows it.
    assert_eq!(events[2].fields()["pydanticAi"]["lead"][1]["part"]["part_kind"], "thinking");
    // Arguments given as JSON text are parsed for the event and kept as written.
    assert_eq!(events[4].fields()["args"], json!({"city": "Paris"}));
    assert_eq!(events[4].fields()["pydanticAi"]["part"]["args"], r#"{"city":"Paris"}"#);
    assert_eq!(events[8].fields()["toolCallId"], format!("call_{}", "x".repeat(50)));
}

#[test]
fn the_other_forms_render_the_same_events_validly() {
    let events = to_events(&fixture());
    let chat: Value =
        serde_json::from_str(&render_request(&events, &MessageOptions::default(), Provider::OpenAiChat, false))
            .unwrap();
    let roles: Vec<&str> = chat["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        [
            "user",
            "user",
            "assistant",
            "assistant",
            "tool",
            "tool",
            "tool",
            "assistant",
            "tool",
            "assistant",
            "user",
            "assistant"
        ]
    );
    assert_eq!(chat["messages"][0]["content"], "[System]: You are a weather bot.");
    assert_eq!(chat["messages"][6]["content"], "[Error (recoverable)]: try n=2");
    assert!(!chat.to_string().contains("pydanticAi") && !chat.to_string().contains("run-1"));
}

#[test]
fn render_options_and_dangling_calls_apply() {
    let messages = fixture();
    let all = messages.as_array().unwrap();
    // The run stopped after the model's calls: they are answered as interrupted.
    let events = to_events(&Value::Array(all[..2].to_vec()));
    let options = MessageOptions { instructions: Some("Answer in French.".into()), ..MessageOptions::default() };
    let rendered = render(&events, &options)["messages"].clone();
    assert_eq!(rendered[0]["parts"][0], json!({"content": "Answer in French.", "part_kind": "system-prompt"}));
    assert_eq!(rendered[0]["parts"].as_array().unwrap()[1..], all[0]["parts"].as_array().unwrap()[..]);
    assert_eq!(rendered[1], all[1]);
    let answers = rendered[2]["parts"].as_array().unwrap();
    assert_eq!(answers.len(), 3);
    assert!(answers.iter().all(|p| p["part_kind"] == "tool-return" && p["outcome"] == "interrupted"));
    assert_eq!(answers[2]["tool_name"], "flaky");
    let dropped = MessageOptions { dangling_tool_calls: DanglingToolCalls::Drop, ..MessageOptions::default() };
    let rendered = render(&events, &dropped)["messages"].clone();
    assert_eq!(rendered.as_array().unwrap().len(), 2);
    assert_eq!(rendered[1]["parts"].as_array().unwrap().len(), 2, "thinking and text stay, the calls go");
    // XML context mode: one request holding the document.
    let xml = MessageOptions { context_mode: ContextMode::Xml, ..MessageOptions::default() };
    let rendered = render(&events, &xml)["messages"].clone();
    assert_eq!(rendered.as_array().unwrap().len(), 1);
    assert!(rendered[0]["parts"][0]["content"].as_str().unwrap().starts_with("<thread>"));
}

#[test]
fn a_thread_without_kept_fields_renders_as_plain_parts() {
    let events = AgentEvent::list_from_values(
        serde_json::from_value(json!([
            {"type":"message","role":"assistant","content":"Hello.","iteration":0},
            {"type":"tool_call","toolName":"calc","toolCallId":"c1","args":{"e":"1+1"},"iteration":0},
            {"type":"error","error":"bad","recoverable":true,"toolCallId":"c1","iteration":0},
            {"type":"tool_call","toolName":"calc","toolCallId":"c2","args":{},"iteration":1},
            {"type":"tool_result","toolCallId":"c2","result":{"v":2},"iteration":1},
            {"type":"message","role":"user","content":"Thanks","iteration":2}
        ]))
        .unwrap(),
    )
    .unwrap();
    let options = MessageOptions { instructions: Some("Be brief.".into()), ..MessageOptions::default() };
    assert_eq!(
        render(&events, &options),
        json!({"messages": [
            {"parts": [{"content": "Be brief.", "part_kind": "system-prompt"},
                       {"content": "(The conversation so far follows.)", "part_kind": "user-prompt"}], "kind": "request"},
            {"parts": [{"content": "Hello.", "part_kind": "text"},
                       {"tool_name": "calc", "args": {"e": "1+1"}, "tool_call_id": "c1", "part_kind": "tool-call"}], "kind": "response"},
            {"parts": [{"tool_name": "calc", "content": "[Error (recoverable)]: bad", "tool_call_id": "c1", "outcome": "failed", "part_kind": "tool-return"}], "kind": "request"},
            {"parts": [{"tool_name": "calc", "args": {}, "tool_call_id": "c2", "part_kind": "tool-call"}], "kind": "response"},
            {"parts": [{"tool_name": "calc", "content": "{\"v\":2}", "tool_call_id": "c2", "part_kind": "tool-return"},
                       {"content": "Thanks", "part_kind": "user-prompt"}], "kind": "request"}
        ]})
    );
}

#[test]
fn bad_input_is_refused_naming_where() {
    let err = |messages: Value| {
        pydantic_ai_to_events(messages.as_array().unwrap(), &EventStamp::default()).unwrap_err().to_string()
    };
    assert_eq!(err(json!([5])), "messages[0]: expected an object, found number");
    assert_eq!(err(json!([{"parts": []}])), "messages[0].kind: missing");
    assert_eq!(
        err(json!([{"kind": "note", "parts": []}])),
        r#"messages[0].kind: expected "request" or "response", found "note""#
    );
    assert_eq!(err(json!([{"kind": "request"}])), "messages[0].parts: missing");
    assert_eq!(
        err(json!([{"kind": "request", "parts": [{"content": "x"}]}])),
        "messages[0].parts[0].part_kind: missing"
    );
    assert_eq!(
        err(json!([{"kind": "response", "parts": [{"part_kind": "tool-call", "tool_name": "a", "args": {}}]}])),
        "messages[0].parts[0].tool_call_id: missing"
    );
    assert_eq!(
        err(
            json!([{"kind": "request", "parts": [{"part_kind": "tool-return", "tool_name": "a", "tool_call_id": "c"}]}])
        ),
        "messages[0].parts[0].content: missing"
    );
}

#[test]
fn the_server_keeps_and_renders_the_messages() {
    let messages = fixture();
    let mut server = Server::start(Wire::Lsp, "memory");
    let converted = server.ok("pydanticAi/toEvents", json!({"messages": messages, "iteration": 3}));
    assert!(converted["events"].as_array().unwrap().iter().all(|e| e["iteration"] == 3));
    server.ok("thread/open", json!({"threadId": "pyd"}));
    server.ok("thread/append", json!({"threadId": "pyd", "events": converted["events"]}));
    let rendered = server.ok("thread/render", json!({"threadId": "pyd", "format": "pydantic-ai"}));
    assert_eq!(rendered["format"], "pydantic-ai");
    assert_eq!(rendered["contextMode"], "standard");
    assert_eq!(rendered["messages"], messages);
    // A second render reads the kept fields again (the renderers kept between renders hold none).
    let again = server.ok("thread/render", json!({"threadId": "pyd", "format": "pydantic-ai"}));
    assert_eq!(again["messages"], messages);
    let xml = server.ok("thread/render", json!({"threadId": "pyd", "format": "xml"}));
    let text = xml["text"].as_str().unwrap();
    assert_eq!(text.matches("type=\"tool_input\"").count(), 4, "{text}");
    assert!(text.contains("try n=2") && text.contains("n must be odd"), "{text}");
    assert!(!text.contains("pydanticAi") && !text.contains("run-1"), "{text}");
    server.stop();
}

fn event_strategy() -> impl Strategy<Value = Value> {
    let id = prop::sample::select(vec!["c1", "c2", "c3"]);
    prop_oneof![
        Just(json!({"type":"message","role":"user","content":"q","iteration":0})),
        Just(json!({"type":"message","role":"assistant","content":"a","iteration":0})),
        Just(json!({"type":"message","role":"system","content":"s","iteration":0})),
        Just(json!({"type":"message","role":"assistant","content":" ","iteration":0})),
        id.clone().prop_map(|id| json!({"type":"tool_call","toolName":"t","toolCallId":id,"args":{},"iteration":0})),
        id.clone().prop_map(|id| json!({"type":"tool_result","toolCallId":id,"result":{"n":1},"iteration":0})),
        (id, any::<bool>())
            .prop_map(|(id, r)| json!({"type":"error","error":"e","recoverable":r,"toolCallId":id,"iteration":0})),
        Just(json!({"type":"human_input_requested","question":"why?","iteration":0})),
        Just(json!({"type":"summary","summarizedIterations":[0],"summary":"s","iteration":0})),
    ]
}

/// Requests and responses alternate, the first is a request, every call is answered by the
/// request right after its response, and every answer's call came just before.
fn check_valid(messages: &Value) -> Result<(), String> {
    let messages = messages.as_array().unwrap();
    let mut expected_kind = "request";
    let mut open: HashSet<String> = HashSet::new();
    for (i, message) in messages.iter().enumerate() {
        if message["kind"] != expected_kind {
            return Err(format!("message {i} is not a {expected_kind}"));
        }
        let parts = message["parts"].as_array().unwrap();
        if parts.is_empty() {
            return Err(format!("message {i} has no parts"));
        }
        let mut answered = HashSet::new();
        for part in parts {
            let kind = part["part_kind"].as_str().unwrap();
            let allowed: &[&str] = if expected_kind == "request" {
                &["system-prompt", "user-prompt", "tool-return"]
            } else {
                &["text", "tool-call"]
            };
            if !allowed.contains(&kind) {
                return Err(format!("message {i} has a {kind} part"));
            }
            if kind == "tool-return" {
                let id = part["tool_call_id"].as_str().unwrap().to_owned();
                if !open.contains(&id) {
                    return Err(format!("message {i} answers {id}, which is not open"));
                }
                answered.insert(id);
            }
        }
        if answered != open {
            return Err(format!("message {i} leaves calls unanswered: {open:?} vs {answered:?}"));
        }
        open = parts
            .iter()
            .filter(|p| p["part_kind"] == "tool-call")
            .map(|p| p["tool_call_id"].as_str().unwrap().to_owned())
            .collect();
        expected_kind = if expected_kind == "request" { "response" } else { "request" };
    }
    if !open.is_empty() {
        return Err("the last calls are unanswered".into());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_thread_renders_as_a_valid_history(values in prop::collection::vec(event_strategy(), 0..25), instructions in any::<bool>()) {
        let events = AgentEvent::list_from_values(values).unwrap();
        let options = MessageOptions { instructions: instructions.then(|| "I".to_owned()), ..MessageOptions::default() };
        let rendered = render(&events, &options);
        prop_assert!(check_valid(&rendered["messages"]).is_ok(), "{:?}\n{rendered:#}", check_valid(&rendered["messages"]));
        // And back: the events of that history render it again.
        let again = render(&to_events(&rendered["messages"]), &MessageOptions::default());
        prop_assert_eq!(&again, &rendered);
    }
}

/// The worked example of `protocol/providers/pydantic-ai.md` is what the code renders.
#[test]
fn the_provider_page_shows_what_the_code_renders() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let events: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("examples/provider-thread.json")).unwrap()).unwrap();
    let events = AgentEvent::list_from_values(serde_json::from_value(events).unwrap()).unwrap();
    let options = MessageOptions { instructions: Some("Be brief.".into()), ..MessageOptions::default() };
    let page = std::fs::read_to_string(root.join("protocol/providers/pydantic-ai.md")).unwrap();
    let shown = page.split("```json\n").nth(1).and_then(|rest| rest.split("```").next()).unwrap();
    assert_eq!(shown, render_request(&events, &options, Provider::PydanticAi, true) + "\n");
}

/// Parts that land as human messages (a retry prompt without a tool, a return whose call is not
/// open), list contents, a message with no part of its own and a trailing one come back too.
#[test]
fn unusual_histories_come_back_equal() {
    let messages = json!([
        {"parts": [{"content": ["Look: ", {"kind": "image-url", "url": "https://x/y.png"}, {"content": "and this", "kind": "text-content"}], "part_kind": "user-prompt"}], "kind": "request"},
        {"parts": [], "kind": "response", "model_name": "m"},
        {"parts": [{"content": "Please retry", "tool_name": null, "tool_call_id": "r9", "part_kind": "retry-prompt"},
                   {"tool_name": "late", "content": {"n": 1.0}, "tool_call_id": "zz", "part_kind": "tool-return"},
                   {"tool_name": "late", "content": "boom", "tool_call_id": "zz2", "outcome": "failed", "part_kind": "tool-return"}], "kind": "request"},
        {"parts": [{"content": "  ", "part_kind": "text"}, {"content": "Done.", "part_kind": "text"}], "kind": "response"},
        {"parts": [{"content": "hmm", "signature": null, "part_kind": "thinking"}], "kind": "response"}
    ]);
    let events = to_events(&messages);
    let types: Vec<&str> = events.iter().map(AgentEvent::event_type).collect();
    assert_eq!(types, ["message", "error", "tool_result", "error", "message"]);
    // A list holding media is content parts, each item's shape kept beside them.
    assert_eq!(
        events[0].fields()["content"],
        json!([{"type": "text", "text": "Look: "}, {"type": "image", "url": "https://x/y.png"}, {"type": "text", "text": "and this"}])
    );
    assert_eq!(render(&events, &MessageOptions::default())["messages"], messages);
    // What the other forms show of it.
    let chat: Value =
        serde_json::from_str(&render_request(&events, &MessageOptions::default(), Provider::OpenAiChat, false))
            .unwrap();
    let texts: Vec<&str> =
        chat["messages"].as_array().unwrap().iter().skip(1).map(|m| m["content"].as_str().unwrap()).collect();
    assert_eq!(
        chat["messages"][0]["content"][1],
        json!({"type": "image_url", "image_url": {"url": "https://x/y.png"}})
    );
    assert_eq!(
        texts,
        [
            "[Error (recoverable)]: Please retry",
            "[Tool Result for zz]: {\"n\":1}",
            "[Error (recoverable)]: boom",
            "Done."
        ]
    );
}
