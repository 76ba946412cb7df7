//! The inverses of the renders: `messages/toEvents` (stored messages → events) and
//! `responses/toEvents` (OpenAI Responses items → events).
//!
//! Properties: rendering the events of a rendering gives that rendering again (a fixed point,
//! for every generated thread); threads already in seed 001's form come back exactly, less the
//! listed losses; Responses items in the projection's form come back as the same items.

use crate::strategies::json_map;
use crate::support::{Server, Wire};
use proptest::prelude::*;
use serde_json::{json, Map, Value};
use threadkeeper::convert::{messages_to_events, responses_to_events, EventStamp};
use threadkeeper::messages::{build_messages, MessageOptions, StoredMessage};
use threadkeeper::{render_request, AgentEvent, Provider};

fn events(values: Value) -> Vec<AgentEvent> {
    AgentEvent::list_from_values(serde_json::from_value(values).unwrap()).unwrap()
}

fn messages(values: Value) -> Vec<StoredMessage> {
    serde_json::from_value(values).unwrap()
}

fn to_values(events: &[AgentEvent]) -> Value {
    Value::Array(events.iter().map(AgentEvent::to_value).collect())
}

fn stamp() -> EventStamp {
    EventStamp::default()
}

fn from_messages(values: Value) -> Value {
    to_values(&messages_to_events(&messages(values), &stamp()).unwrap())
}

fn from_items(items: Value) -> Value {
    to_values(&responses_to_events(items.as_array().unwrap(), &stamp()).unwrap())
}

/// The standard-mode rendering with default options, as JSON.
fn render_messages(events: &[AgentEvent]) -> Vec<StoredMessage> {
    build_messages(events, &MessageOptions::default())
}

/// The `input` items of the `openai-responses` projection.
fn render_items(events: &[AgentEvent]) -> Value {
    let request: Value =
        serde_json::from_str(&render_request(events, &MessageOptions::default(), Provider::OpenAiResponses, false))
            .unwrap();
    request["input"].clone()
}

// ---- messages/toEvents, message by message ----

/// Every kind of message, and the exact events (bytes) it becomes.
#[test]
fn each_message_becomes_the_events_it_was_rendered_from() {
    let input = json!([
        {"type":"system","data":{"content":"Be brief."}},
        {"type":"human","data":{"content":"Hi & <bye>","id":"m1"}},
        {"type":"human","data":{"content":"[System]: note"}},
        {"type":"human","data":{"content":"[Human Response]: yes"}},
        {"type":"human","data":{"content":"[Error (recoverable)]: slow"}},
        {"type":"human","data":{"content":"[Error]: down"}},
        {"type":"human","data":{"content":"[Error (non-recoverable)]: gone"}},
        {"type":"human","data":{"content":"[Tool Result for c9]: late"}},
        {"type":"ai","data":{"content":"Checking.","id":"m2","tool_calls":[
            {"id":"c1","name":"search","args":{"q":"x"},"type":"tool_call"},
            {"id":"c2","name":"fetch","args":{},"type":"tool_call"}]}},
        {"type":"tool","data":{"content":"found","tool_call_id":"c1"}},
        {"type":"tool","data":{"content":"[Error (non-recoverable)]: 404","tool_call_id":"c2","status":"error"}},
        {"type":"ai","data":{"content":"","tool_calls":[{"id":"c3","name":"calc","args":{"e":"1+1"},"type":"tool_call"}]}},
        {"type":"tool","data":{"content":[{"type":"text","text":"2"}],"tool_call_id":"c3"}},
        {"type":"ai","data":{"content":[{"type":"text","text":"Two"},{"type":"image_url","image_url":"https://x.test/u.png"},"."]}}
    ]);
    let expected = r#"[{"type":"message","role":"system","content":"Be brief.","iteration":0},{"type":"message","role":"user","content":"Hi & <bye>","iteration":0,"messageId":"m1"},{"type":"message","role":"system","content":"note","iteration":0},{"type":"human_input_received","response":"yes","iteration":0},{"type":"error","error":"slow","recoverable":true,"iteration":0},{"type":"error","error":"down","recoverable":false,"iteration":0},{"type":"error","error":"gone","recoverable":false,"iteration":0},{"type":"tool_result","toolCallId":"c9","result":"late","iteration":0},{"type":"message","role":"assistant","content":"Checking.","iteration":0,"messageId":"m2"},{"type":"tool_call","toolName":"search","toolCallId":"c1","args":{"q":"x"},"iteration":0,"messageId":"m2"},{"type":"tool_call","toolName":"fetch","toolCallId":"c2","args":{},"iteration":0,"messageId":"m2"},{"type":"tool_result","toolCallId":"c1","result":"found","iteration":0},{"type":"error","error":"404","recoverable":false,"toolCallId":"c2","iteration":0},{"type":"tool_call","toolName":"calc","toolCallId":"c3","args":{"e":"1+1"},"iteration":0},{"type":"tool_result","toolCallId":"c3","result":[{"type":"text","text":"2"}],"iteration":0},{"type":"message","role":"assistant","content":[{"type":"text","text":"Two"},{"type":"image","url":"https://x.test/u.png"},{"type":"text","text":"."}],"iteration":0}]"#;
    assert_eq!(from_messages(input).to_string(), expected);
}

#[test]
fn iteration_and_timestamp_are_stamped_on_every_event() {
    let stamp = EventStamp { iteration: 7.into(), timestamp: Some(1_700_000_000_000u64.into()) };
    let events = messages_to_events(&messages(json!([{"type":"human","data":{"content":"hi"}}])), &stamp).unwrap();
    assert_eq!(
        events[0].to_value().to_string(),
        r#"{"type":"message","role":"user","content":"hi","iteration":7,"timestamp":1700000000000}"#
    );
}

#[test]
fn a_tool_error_without_a_label_is_recoverable_and_keeps_its_text() {
    let events = from_messages(json!([
        {"type":"ai","data":{"content":"","tool_calls":[{"id":"c1","name":"t","args":{},"type":"tool_call"}]}},
        {"type":"tool","data":{"content":"boom","tool_call_id":"c1","status":"error"}}
    ]));
    assert_eq!(events[1], json!({"type":"error","error":"boom","recoverable":true,"toolCallId":"c1","iteration":0}));
}

#[test]
fn what_the_renderer_made_up_is_left_out() {
    // The opening message before an assistant turn, and the answer of a call never answered.
    let rendered = render_messages(&events(json!([
        {"type":"tool_call","toolName":"t","toolCallId":"c1","args":{},"iteration":0}
    ])));
    assert_eq!(rendered[0].content_str(), Some("(The conversation so far follows.)"));
    assert!(rendered[2].content_str().unwrap().starts_with("[Tool call not completed]: "));
    let back = messages_to_events(&rendered, &stamp()).unwrap();
    assert_eq!(
        to_values(&back),
        json!([{"type":"tool_call","toolName":"t","toolCallId":"c1","args":{},"iteration":0}])
    );
    // The same text before a human message was the user's own.
    let own = from_messages(json!([
        {"type":"human","data":{"content":"(The conversation so far follows.)"}},
        {"type":"human","data":{"content":"hi"}}
    ]));
    assert_eq!(own.as_array().unwrap().len(), 2);
}

#[test]
fn a_call_left_unanswered_by_a_question_gives_the_question_back() {
    let thread = events(json!([
        {"type":"message","role":"user","content":"go","iteration":0},
        {"type":"tool_call","toolName":"t","toolCallId":"c1","args":{},"iteration":0},
        {"type":"human_input_requested","question":"Which one?","iteration":0},
        {"type":"tool_call","toolName":"t","toolCallId":"c2","args":{},"iteration":0},
        {"type":"message","role":"system","content":"later","iteration":0}
    ]));
    let rendered = render_messages(&thread);
    let back = messages_to_events(&rendered, &stamp()).unwrap();
    let types: Vec<&str> = back.iter().map(AgentEvent::event_type).collect();
    assert_eq!(types, ["message", "tool_call", "human_input_requested", "tool_call", "message"]);
    assert_eq!(back[2].fields()["question"], "Which one?");
    assert_eq!(render_messages(&back), rendered);
}

/// Rendering the events of the thread's rendering gives the same messages and items.
fn assert_fixed_point(values: Value) {
    let thread = events(values);
    let rendered = conversation(&thread);
    let back = messages_to_events(&rendered, &stamp()).unwrap();
    assert_eq!(render_messages(&back), rendered, "messages, from {}", to_values(&back));
    let items = render_items(&thread);
    let back = responses_to_events(items.as_array().unwrap(), &stamp()).unwrap();
    assert_eq!(render_items(&back), items, "items, from {}", to_values(&back));
}

fn call(id: &str) -> Value {
    json!({"type":"tool_call","toolName":"t","toolCallId":id,"args":{},"iteration":0})
}

fn asked(question: &str) -> Value {
    json!({"type":"human_input_requested","question":question,"iteration":0})
}

fn answered(response: &str) -> Value {
    json!({"type":"human_input_received","response":response,"iteration":0})
}

fn crash() -> Value {
    json!({"type":"error","error":"crash","recoverable":false,"iteration":0})
}

/// Where the question goes decides which calls it reaches and which call a later human answer
/// finds waiting; each of these placed it wrongly once.
#[test]
fn questions_come_back_where_they_reach_the_same_calls() {
    let ok = json!({"type":"message","role":"assistant","content":"ok","iteration":0});
    let result = |id: &str| json!({"type":"tool_result","toolCallId":id,"result":"r","iteration":0});
    // Asked after the group, past what waited for it.
    assert_fixed_point(json!([call("c0"), asked("why?"), ok]));
    // The human answer went to the later call; the next answer found none waiting.
    assert_fixed_point(json!([call("c0"), call("c0"), asked("why?"), crash(), answered("a"), answered("b")]));
    assert_fixed_point(json!([call("c1"), call("c2"), asked("why?"), result("c2"), answered("a")]));
    // An answer given before the question stays text.
    assert_fixed_point(json!([call("c1"), answered("early"), asked("why?")]));
    // A call made after the question was not reached by it; two questions, two groups of calls.
    assert_fixed_point(json!([call("c1"), asked("why?"), call("c2")]));
    assert_fixed_point(json!([call("c1"), asked("why?"), call("c2"), asked("which?"), call("c3"), crash()]));
    assert_fixed_point(json!([call("c1"), call("c0"), asked("why?"), call("c3"), result("c0"), answered("a")]));
    // A question that reached no call moved the answer to a later call.
    let failed = json!({"type":"error","error":"failed","recoverable":false,"toolCallId":"c9","iteration":0});
    assert_fixed_point(json!([
        call("c0"),
        asked("why?"),
        call("c1"),
        call("c2"),
        failed,
        asked("why?"),
        answered("a"),
        answered("b")
    ]));
}

#[test]
fn bad_messages_are_refused_naming_the_message_and_field() {
    let error = |values: Value| messages_to_events(&messages(values), &stamp()).unwrap_err().to_string();
    assert_eq!(
        error(json!([{"type":"human","data":{"content":"a"}},{"type":"chat","data":{"content":"b"}}])),
        "messages[1].type: expected system, human, ai or tool, found chat"
    );
    assert_eq!(error(json!([{"type":"tool","data":{"content":"x"}}])), "messages[0].data.tool_call_id: missing");
    assert_eq!(
        error(json!([{"type":"ai","data":{"content":"","tool_calls":[{"name":"t","args":{}}]}}])),
        "messages[0].data.tool_calls[0].id: missing"
    );
}

// ---- responses/toEvents, item by item ----

#[test]
fn each_item_becomes_the_events_it_was_projected_from() {
    let items = json!([
        {"role":"developer","content":"Rules."},
        {"type":"message","role":"system","content":"More rules."},
        {"type":"message","role":"user","content":[{"type":"input_text","text":"Hi"},{"type":"input_image","image_url":"https://x.test/u.png"}]},
        {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"think"}],"encrypted_content":"enc"},
        {"type":"message","role":"assistant","id":"msg_1","content":[{"type":"output_text","text":"Sure."}]},
        {"type":"function_call","call_id":"c1","name":"a","arguments":"{\"x\":1}"},
        {"type":"function_call","call_id":"c2","name":"b","arguments":"not json"},
        {"type":"function_call_output","call_id":"c1","output":"ok"},
        {"type":"function_call_output","call_id":"c2","output":"[Error (recoverable)]: bad"}
    ]);
    let expected = r#"[{"type":"message","role":"system","content":"Rules.","iteration":0},{"type":"message","role":"system","content":"More rules.","iteration":0},{"type":"message","role":"user","content":[{"type":"text","text":"Hi"},{"type":"image","url":"https://x.test/u.png"}],"iteration":0},{"type":"turn_block","block":{"kind":"reasoning","payload":{"encrypted_content":"enc","item_id":"rs_1","summary":[{"type":"summary_text","text":"think"}]}},"iteration":0},{"type":"message","role":"assistant","content":"Sure.","iteration":0,"messageId":"msg_1"},{"type":"tool_call","toolName":"a","toolCallId":"c1","args":{"x":1},"iteration":0},{"type":"tool_call","toolName":"b","toolCallId":"c2","args":{"input":"not json"},"iteration":0},{"type":"tool_result","toolCallId":"c1","result":"ok","iteration":0},{"type":"error","error":"bad","recoverable":true,"toolCallId":"c2","iteration":0}]"#;
    assert_eq!(from_items(items).to_string(), expected);
}

#[test]
fn bad_items_are_refused_naming_the_item_and_field() {
    let error = |items: Value| responses_to_events(items.as_array().unwrap(), &stamp()).unwrap_err().to_string();
    assert_eq!(
        error(json!([{"type":"message","role":"user","content":"a"},{"type":"web_search_call","id":"w"}])),
        "items[1].type: unsupported item type \"web_search_call\": expected message, function_call, function_call_output or reasoning"
    );
    assert_eq!(error(json!([{"type":"function_call","name":"t","arguments":"{}"}])), "items[0].call_id: missing");
    assert_eq!(error(json!([{"type":"message","role":"tool","content":"x"}])).split(':').next(), Some("items[0].role"));
    assert_eq!(
        error(json!([{"type":"message","role":"user","content":5}])).split(':').next(),
        Some("items[0].content")
    );
    assert_eq!(error(json!(["x"])), "items[0]: expected an object, found string");
    assert_eq!(error(json!([{"type":"reasoning","summary":[]}])), "items[0].id: missing");
}

// ---- over the protocol ----

#[test]
fn both_methods_answer_over_the_protocol() {
    let mut server = Server::start(Wire::Lsp, "memory");
    let result = server
        .ok("messages/toEvents", json!({"messages":[{"type":"human","data":{"content":"[System]: s"}}],"iteration":2}));
    assert_eq!(result, json!({"events":[{"type":"message","role":"system","content":"s","iteration":2}]}));
    let result = server.ok(
        "responses/toEvents",
        json!({"items":[{"type":"function_call_output","call_id":"c","output":"r"}],"timestamp":5}),
    );
    assert_eq!(
        result,
        json!({"events":[{"type":"tool_result","toolCallId":"c","result":"r","iteration":0,"timestamp":5}]})
    );
    let error = server.err("responses/toEvents", json!({"items":[{"type":"image"}]}));
    assert_eq!(error["code"], -32602);
    assert_eq!(error["data"]["path"], "items[0].type");
    let error = server.err("messages/toEvents", json!({"messages":[{"type":"tool","data":{"content":""}}]}));
    assert_eq!(error["data"]["path"], "messages[0].data.tool_call_id");
    server.stop();
}

/// `messageId` is stored with the event and comes back as the LangChain message's `id`; the XML
/// and the provider projections leave it out.
#[test]
fn message_ids_are_stored_and_come_back_in_messages() {
    let mut server = Server::start(Wire::Lsp, "memory");
    let converted = server.ok(
        "messages/toEvents",
        json!({"messages":[{"type":"human","data":{"content":"hi","id":"m1"}},{"type":"ai","data":{"content":"yo","id":"m2"}}]}),
    );
    server.ok("thread/open", json!({"threadId":"ids"}));
    server.ok("thread/append", json!({"threadId":"ids","events":converted["events"]}));
    let stored = server.ok("thread/events", json!({"threadId":"ids"}));
    assert_eq!(stored["events"], converted["events"]);
    assert_eq!(stored["events"][1]["messageId"], "m2");
    for format in ["xml", "openai-chat", "openai-responses", "anthropic"] {
        let rendered = server.ok("thread/render", json!({"threadId":"ids","format":format}));
        assert!(!rendered.to_string().contains("m2"), "{format}: {rendered}");
    }
    let plain = server.ok("thread/render", json!({"threadId":"ids","format":"messages"}));
    assert_eq!(
        plain["messages"],
        json!([{"type":"human","data":{"content":"hi","id":"m1"}},{"type":"ai","data":{"content":"yo","id":"m2"}}])
    );
    server.stop();
}

/// LangChain messages with ids come back as they went in: an AI message with text and calls
/// stays one message, tool messages keep their ids and error status.
#[test]
fn messages_with_ids_round_trip_exactly() {
    let mut server = Server::start(Wire::Lsp, "memory");
    let messages = json!([
        {"type":"human","data":{"content":"weather in Lyon & Paris?","id":"h1"}},
        {"type":"ai","data":{"content":"Checking both.","tool_calls":[
            {"id":"c1","name":"weather","args":{"city":"Lyon"}},
            {"id":"c2","name":"weather","args":{"city":"Paris"}}],"id":"a1"}},
        {"type":"tool","data":{"content":"12°C","tool_call_id":"c1","id":"t1"}},
        {"type":"tool","data":{"content":"[Error (recoverable)]: timeout","tool_call_id":"c2","status":"error","id":"t2"}},
        {"type":"ai","data":{"content":"Lyon is at 12°C; Paris timed out.","id":"a2"}}
    ]);
    let converted = server.ok("messages/toEvents", json!({"messages": messages}));
    server.ok("thread/open", json!({"threadId":"rt"}));
    server.ok("thread/append", json!({"threadId":"rt","events":converted["events"]}));
    let rendered = server.ok("thread/render", json!({"threadId":"rt","format":"messages"}));
    let normalized: Vec<Value> = rendered["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let mut m = m.clone();
            // Rendered calls carry LangChain's `type: "tool_call"`; the input had none.
            for call in m["data"].get_mut("tool_calls").and_then(Value::as_array_mut).into_iter().flatten() {
                call.as_object_mut().unwrap().remove("type");
            }
            m
        })
        .collect();
    assert_eq!(Value::Array(normalized), messages);
    server.stop();
}

// ---- generated threads ----

/// Texts that say nothing special, and texts shaped like what the renderer writes.
fn text() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["", "  ", "ok", "& < > \" '", "é🎉", "x_2", "[System]: s", "]: "]).prop_map(str::to_owned)
}

fn event_strategy(with_reasoning: bool) -> impl Strategy<Value = Value> {
    let long = "l".repeat(45);
    let id = prop::sample::select(vec!["c0".to_owned(), "c1".into(), "c2".into(), "a b".into(), "".into(), long]);
    let question = prop::sample::select(vec!["why?", "which?", ""]);
    let result = prop_oneof![
        text().prop_map(Value::String),
        json_map(prop::sample::select(vec!["k", "v"]).prop_map(str::to_owned), Just(json!(1.5)), 3)
            .prop_map(Value::Object),
    ];
    let iteration = 0u8..3;
    let reasoning = iteration.clone().prop_map(|i| {
        json!({"type":"turn_block","block":{"kind":"reasoning","payload":{"encrypted_content":"e","item_id":"rs","summary":"s"}},"iteration":i})
    });
    let events = prop_oneof![
        (text(), prop::sample::select(vec!["user", "assistant", "system"]), iteration.clone())
            .prop_map(|(t, r, i)| json!({"type":"message","role":r,"content":t,"iteration":i})),
        (id.clone(), iteration.clone(), any::<u8>()).prop_map(
            |(id, i, n)| json!({"type":"tool_call","toolName":"t","toolCallId":id,"args":{"n":n},"iteration":i})
        ),
        (id.clone(), result, iteration.clone())
            .prop_map(|(id, r, i)| json!({"type":"tool_result","toolCallId":id,"result":r,"iteration":i})),
        (id, iteration.clone(), any::<bool>()).prop_map(
            |(id, i, r)| json!({"type":"error","error":"failed","recoverable":r,"toolCallId":id,"iteration":i})
        ),
        (iteration.clone(), any::<bool>())
            .prop_map(|(i, r)| json!({"type":"error","error":"crash","recoverable":r,"iteration":i})),
        (question, iteration.clone())
            .prop_map(|(q, i)| json!({"type":"human_input_requested","question":q,"iteration":i})),
        (text(), iteration.clone())
            .prop_map(|(t, i)| json!({"type":"human_input_received","response":t,"iteration":i})),
        iteration
            .clone()
            .prop_map(|i| json!({"type":"summary","summarizedIterations":[i],"summary":"s","iteration":i})),
        iteration.clone().prop_map(|i| json!({"type":"completion","result":"r","verified":true,"iteration":i})),
        iteration.prop_map(|i| json!({"type":"approval","decision":"yes","iteration":i})),
    ];
    if with_reasoning {
        prop_oneof![9 => events, 1 => reasoning].boxed()
    } else {
        events.boxed()
    }
}

/// Any stored messages this method takes, shaped like what renders and LangChain users write:
/// every label, repair text, content blocks, statuses, reused ids.
fn any_message() -> impl Strategy<Value = Value> {
    let id = prop::sample::select(vec!["c0", "c1", "c2", ""]);
    let text = prop::sample::select(vec![
        "ok",
        "",
        "[System]: s",
        "[Human Response]: h",
        "[Error (recoverable)]: e",
        "[Error]: e",
        "[Error (non-recoverable)]: e",
        "[Tool Result for c1]: r",
        "[Tool call not completed]: no result was recorded for this call",
        "[Tool call not completed]: the run stopped to ask for human input: why?",
        "[Tool call not completed]: the run reported an error: e",
        "(The conversation so far follows.)",
    ]);
    let content = prop_oneof![
        4 => text.clone().prop_map(Value::from),
        1 => text.clone().prop_map(|t| json!([{"type":"text","text":t}, {"type":"image_url","image_url":"https://x.test/u.png"}])),
    ];
    let call =
        (id.clone(), any::<u8>()).prop_map(|(id, n)| json!({"id":id,"name":"t","args":{"n":n},"type":"tool_call"}));
    prop_oneof![
        (prop::sample::select(vec!["system", "human"]), content.clone())
            .prop_map(|(kind, c)| json!({"type":kind,"data":{"content":c}})),
        (content.clone(), prop::collection::vec(call, 0..3)).prop_map(|(c, calls)| {
            let mut data = json!({"content":c,"id":"m"});
            if !calls.is_empty() {
                data["tool_calls"] = Value::Array(calls);
            }
            json!({"type":"ai","data":data})
        }),
        (id, content, any::<bool>()).prop_map(|(id, c, error)| {
            let mut data = json!({"content":c,"tool_call_id":id});
            if error {
                data["status"] = json!("error");
            }
            json!({"type":"tool","data":data})
        }),
    ]
}

/// A conversation seed 001 already renders validly: calls answered right away, ids unique,
/// nothing blank, no text shaped like a label.
fn seed_form_thread() -> impl Strategy<Value = Vec<Value>> {
    let plain = prop::sample::select(vec!["ok", "& < > \" '", "é🎉", "x_2", " padded "]);
    let args = json_map(prop::sample::select(vec!["a", "b"]).prop_map(str::to_owned), Just(json!({"n": [1, null]})), 3);
    let step = prop_oneof![
        (plain.clone(), prop::sample::select(vec!["user", "assistant", "system"]))
            .prop_map(|(t, r)| vec![json!({"type":"message","role":r,"content":t})]),
        plain.clone().prop_map(|t| vec![json!({"type":"human_input_received","response":t})]),
        (plain.clone(), any::<bool>()).prop_map(|(t, r)| vec![json!({"type":"error","error":t,"recoverable":r})]),
        (args, plain).prop_map(|(args, t)| vec![
            json!({"type":"tool_call","toolName":"t","toolCallId":"ID","args":args}),
            json!({"type":"tool_result","toolCallId":"ID","result":t}),
        ]),
    ];
    (prop::collection::vec(step, 0..12), 0u8..3).prop_map(|(steps, iteration)| {
        let mut out = Vec::new();
        for (n, step) in steps.into_iter().enumerate() {
            for mut event in step {
                let fields = event.as_object_mut().unwrap();
                if fields.get("toolCallId").is_some() {
                    fields.insert("toolCallId".into(), json!(format!("call_{n}")));
                }
                fields.insert("iteration".into(), json!(iteration));
                fields.insert("timestamp".into(), json!(1000 + n));
                out.push(event);
            }
        }
        out
    })
}

/// An event as `messages/toEvents` gives it back: iteration 0, no timestamp.
fn without_losses(mut event: Value) -> Value {
    let fields: &mut Map<String, Value> = event.as_object_mut().unwrap();
    fields.shift_remove("timestamp");
    fields.insert("iteration".into(), json!(0));
    event
}

/// The rendering without its system message: that one comes from settings and summaries.
fn conversation(events: &[AgentEvent]) -> Vec<StoredMessage> {
    let mut messages = render_messages(events);
    if messages.first().is_some_and(|m| m.message_type == threadkeeper::messages::MessageType::System) {
        messages.remove(0);
    }
    messages
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// events → messages → events → messages gives the same messages.
    #[test]
    fn rendering_the_events_of_a_rendering_gives_it_back(values in prop::collection::vec(event_strategy(false), 0..30)) {
        let thread = events(Value::Array(values));
        let rendered = conversation(&thread);
        let back = messages_to_events(&rendered, &stamp()).unwrap();
        prop_assert_eq!(render_messages(&back), rendered);
    }

    /// A thread in seed 001's form comes back exactly, but for its iterations and timestamps.
    #[test]
    fn seed_form_threads_come_back_exactly(values in seed_form_thread()) {
        let thread = events(Value::Array(values.clone()));
        let back = messages_to_events(&render_messages(&thread), &stamp()).unwrap();
        let expected: Vec<Value> = values.into_iter().map(without_losses).collect();
        prop_assert_eq!(to_values(&back), Value::Array(expected));
    }

    /// The same through the Responses items: events → items → events, exact but for the stamps.
    #[test]
    fn seed_form_threads_come_back_exactly_through_items(values in seed_form_thread()) {
        let thread = events(Value::Array(values.clone()));
        let items = render_items(&thread);
        let back = responses_to_events(items.as_array().unwrap(), &stamp()).unwrap();
        let expected: Vec<Value> = values.into_iter().map(without_losses).collect();
        prop_assert_eq!(to_values(&back), Value::Array(expected));
    }

    /// Items in the projection's form → events → the same items.
    #[test]
    fn projected_items_come_back_as_the_same_items(values in prop::collection::vec(event_strategy(true), 0..30)) {
        let items = render_items(&events(Value::Array(values)));
        let back = responses_to_events(items.as_array().unwrap(), &stamp()).unwrap();
        prop_assert_eq!(render_items(&back), items);
    }

    /// Whatever messages come in, their events render to messages whose events render the
    /// same: one conversion reaches the fixed point.
    #[test]
    fn one_conversion_reaches_the_fixed_point(values in prop::collection::vec(any_message(), 0..16)) {
        let first = render_messages(&messages_to_events(&messages(Value::Array(values)), &stamp()).unwrap());
        let again = render_messages(&messages_to_events(&first, &stamp()).unwrap());
        prop_assert_eq!(again, first);
    }

    /// Any JSON as items is converted or refused with a path, never a panic.
    #[test]
    fn any_items_convert_or_are_refused_with_a_path(
        items in prop::collection::vec(crate::strategies::json_value(item_key, 3, 12, 4), 0..6),
    ) {
        if let Err(error) = responses_to_events(&items, &stamp()) {
            prop_assert!(error.path.starts_with("items["), "{error}");
        }
    }
}

/// Keys and strings that make JSON look like items now and then.
fn item_key() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "type",
        "role",
        "content",
        "message",
        "user",
        "assistant",
        "function_call",
        "function_call_output",
        "reasoning",
        "call_id",
        "name",
        "arguments",
        "output",
        "id",
        "summary",
        "{}",
    ])
    .prop_map(str::to_owned)
}

// ---- what a LangChain message carries besides its text: name and the other data keys ----

/// A message's `name` and its `data` keys that carry something (`additional_kwargs`,
/// `response_metadata`, `usage_metadata`, `artifact`, ...) are kept on its events as
/// `messageName` and `messageFields`, and the `messages` render gives them back; keys at their
/// loader default (`{}`, `[]`, `null`, `false`) are not kept, so such messages convert as before.
#[test]
fn names_and_data_fields_are_kept_and_come_back() {
    let input = json!([
        {"type":"human","data":{"content":"hi","id":"h1","name":"ann","additional_kwargs":{"k":1},"response_metadata":{},"example":false}},
        {"type":"ai","data":{"content":"Looking.","id":"a1","name":"bot","tool_calls":[{"id":"c1","name":"search","args":{"q":"x"},"type":"tool_call"}],
            "invalid_tool_calls":[],"additional_kwargs":{"refusal":null},"response_metadata":{"model_name":"m","finish_reason":"tool_calls"},
            "usage_metadata":{"input_tokens":3,"output_tokens":2,"total_tokens":5}}},
        {"type":"tool","data":{"content":"found","tool_call_id":"c1","name":"search","id":"t1","artifact":{"raw":[1]},"status":"success"}},
        {"type":"ai","data":{"content":"Done.","response_metadata":{"finish_reason":"stop"}}}
    ]);
    let events = messages_to_events(&messages(input), &stamp()).unwrap();
    let values = to_values(&events);
    assert_eq!(values[0]["messageName"], "ann");
    assert_eq!(values[0]["messageFields"], json!({"additional_kwargs":{"k":1}}));
    assert_eq!(values[2]["messageFields"], values[1]["messageFields"], "every event of a message keeps the same");
    assert_eq!(values[3]["messageName"], "search");
    assert_eq!(values[3]["messageFields"], json!({"artifact":{"raw":[1]}}));
    let rendered = serde_json::to_value(render_messages(&events)).unwrap();
    assert_eq!(
        rendered,
        json!([
            {"type":"human","data":{"content":"hi","id":"h1","name":"ann","additional_kwargs":{"k":1}}},
            {"type":"ai","data":{"content":"Looking.","tool_calls":[{"id":"c1","name":"search","args":{"q":"x"},"type":"tool_call"}],"id":"a1","name":"bot",
                "additional_kwargs":{"refusal":null},"response_metadata":{"model_name":"m","finish_reason":"tool_calls"},
                "usage_metadata":{"input_tokens":3,"output_tokens":2,"total_tokens":5}}},
            {"type":"tool","data":{"content":"found","tool_call_id":"c1","id":"t1","name":"search","artifact":{"raw":[1]}}},
            {"type":"ai","data":{"content":"Done.","response_metadata":{"finish_reason":"stop"}}}
        ])
    );
    // Messages without such keys convert to the same bytes as before.
    let plain = from_messages(
        json!([{"type":"human","data":{"content":"hi","name":null,"additional_kwargs":{},"response_metadata":{}}}]),
    );
    assert_eq!(plain, json!([{"type":"message","role":"user","content":"hi","iteration":0}]));
}

/// The XML document and the provider projections render a thread with names and fields exactly
/// as the same thread without them.
#[test]
fn names_and_data_fields_leave_xml_and_provider_renders_alone() {
    let with = messages_to_events(
        &messages(json!([
            {"type":"human","data":{"content":"hi","name":"ann","additional_kwargs":{"k":1}}},
            {"type":"ai","data":{"content":"","name":"bot","usage_metadata":{"input_tokens":1,"output_tokens":1,"total_tokens":2},
                "tool_calls":[{"id":"c1","name":"search","args":{},"type":"tool_call"}]}},
            {"type":"tool","data":{"content":"r","tool_call_id":"c1","name":"search","response_metadata":{"x":1}}}
        ])),
        &stamp(),
    )
    .unwrap();
    let without: Vec<AgentEvent> = with
        .iter()
        .map(|event| {
            let mut fields = event.fields().clone();
            fields.remove("messageName");
            fields.remove("messageFields");
            AgentEvent::from_map(fields, "event").unwrap()
        })
        .collect();
    assert_ne!(to_values(&with), to_values(&without));
    for provider in Provider::ALL {
        let render = |events: &[AgentEvent]| render_request(events, &MessageOptions::default(), provider, false);
        assert_eq!(render(&with), render(&without), "{}", provider.name());
    }
    let xml = |events: &[AgentEvent]| threadkeeper::serialize_thread_to_xml(events, &Default::default());
    assert_eq!(xml(&with), xml(&without));
}

// ---- Responses items kept on their events (`keepItems`) and read back (`responses/fromEvents`) ----

/// Every item kind the Agents SDK stores: multi-part messages, parallel calls, outputs,
/// reasoning with encrypted content; with ids and fields the conversion itself does not keep.
fn agent_items() -> Value {
    json!([
        {"role":"user","content":"Weather in Lyon and Paris?"},
        {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"two cities"}],"encrypted_content":"gAAAA-secret"},
        {"type":"function_call","id":"fc_1","call_id":"c1","name":"weather","arguments":"{\"city\":\"Lyon\"}","status":"completed"},
        {"type":"function_call","id":"fc_2","call_id":"c2","name":"weather","arguments":"{\"city\":\"Paris\"}","status":"completed"},
        {"type":"function_call_output","call_id":"c1","output":"sunny"},
        {"type":"function_call_output","call_id":"c2","output":"rain"},
        {"type":"message","id":"msg_1","role":"assistant","status":"completed",
         "content":[{"type":"output_text","text":"Lyon: sunny. ","annotations":[]},{"type":"output_text","text":"Paris: rain.","annotations":[]}]},
        {"type":"message","role":"user","content":[{"type":"input_text","text":"And "},{"type":"input_text","text":"tomorrow?"}]}
    ])
}

fn kept_events(items: &Value) -> Vec<AgentEvent> {
    threadkeeper::convert::responses_to_events_keeping_items(items.as_array().unwrap(), &stamp()).unwrap()
}

fn items_back(events: &[AgentEvent]) -> Value {
    Value::Array(threadkeeper::convert::responses_from_events(events).unwrap())
}

/// One event per item, each keeping its item verbatim (a reasoning one is its item); read back, the items are the ones given;
/// every render but for the kept field is the render of the same items converted as before.
#[test]
fn kept_items_come_back_verbatim_and_renders_do_not_change() {
    let items = agent_items();
    let kept = kept_events(&items);
    let plain = responses_to_events(items.as_array().unwrap(), &stamp()).unwrap();
    assert_eq!(kept.len(), items.as_array().unwrap().len());
    for (event, item) in kept.iter().zip(items.as_array().unwrap()) {
        // A reasoning event describes its item whole, and keeps no copy of it.
        let expected = (item["type"] != "reasoning").then_some(item);
        assert_eq!(event.fields().get("responsesItem"), expected);
    }
    assert_eq!(items_back(&kept), items);
    for provider in Provider::ALL {
        let render = |events: &[AgentEvent]| render_request(events, &MessageOptions::default(), provider, false);
        assert_eq!(render(&kept), render(&plain), "{}", provider.name());
    }
    assert_eq!(render_messages(&kept), render_messages(&plain));
    let xml = |events: &[AgentEvent]| threadkeeper::serialize_thread_to_xml(events, &Default::default());
    assert_eq!(xml(&kept), xml(&plain));
}

/// Removing the last event removes the last item, and only it: what a session's `pop_item`
/// needs. The reasoning item stays when the reply after it goes.
#[test]
fn each_prefix_of_the_events_gives_the_same_prefix_of_the_items() {
    let items = agent_items();
    let kept = kept_events(&items);
    for end in 0..=kept.len() {
        assert_eq!(items_back(&kept[..end]), Value::Array(items.as_array().unwrap()[..end].to_vec()), "{end} events");
    }
}

/// Items the conversion makes no event of — an output the render would have made up, the opening
/// message, an item of a type it does not read, a reasoning item without an id — are kept by `responses_item` events in place, which the messages and provider
/// renders pass over; a question a not-completed output gives back keeps `null`.
#[test]
fn items_that_make_no_event_are_kept_in_their_place() {
    let items = json!([
        {"role":"user","content":"(The conversation so far follows.)"},
        {"type":"function_call","call_id":"c1","name":"t","arguments":"{}"},
        {"type":"function_call_output","call_id":"c1","output":"[Tool call not completed]: gave up"},
        {"type":"function_call","call_id":"c2","name":"t","arguments":"{}"},
        {"type":"function_call_output","call_id":"c2","output":"[Tool call not completed]: the run stopped to ask for human input: Which?"}
    ]);
    let kept = kept_events(&items);
    let plain = responses_to_events(items.as_array().unwrap(), &stamp()).unwrap();
    let hosted = json!([{"type":"web_search_call","id":"ws_1","status":"completed"}]);
    assert_eq!(
        to_values(&kept_events(&hosted)),
        json!([{"type":"responses_item","iteration":0,"responsesItem":hosted[0]}])
    );
    let types: Vec<&str> = kept.iter().map(AgentEvent::event_type).collect();
    assert_eq!(
        types,
        ["responses_item", "tool_call", "responses_item", "tool_call", "responses_item", "human_input_requested"]
    );
    assert_eq!(kept[5].fields()["responsesItem"], Value::Null);
    assert_eq!(items_back(&kept), items);
    for provider in Provider::ALL {
        let render = |events: &[AgentEvent]| render_request(events, &MessageOptions::default(), provider, false);
        assert_eq!(render(&kept), render(&plain), "{}", provider.name());
    }
    assert_eq!(render_messages(&kept), render_messages(&plain));
}

/// Events that kept no item (an earlier version's, or appended otherwise) read as the
/// `openai-responses` projection renders them, run by run, summaries first as a system message.
#[test]
fn events_without_kept_items_read_as_the_projection() {
    let old = events(json!([
        {"type":"summary","summarizedIterations":[0],"summary":"Earlier.","iteration":1},
        {"type":"message","role":"user","content":"q","iteration":1},
        {"type":"tool_call","toolName":"t","toolCallId":"c1","args":{},"iteration":1}
    ]));
    let mut expected = vec![
        json!({"type":"message","role":"system","content":"## Previous Iteration Summaries\n\n### Iteration(s) 0\nEarlier.\n\n"}),
    ];
    expected.extend(render_items(&old).as_array().unwrap().iter().cloned());
    assert_eq!(items_back(&old), Value::Array(expected.clone()));
    let mut mixed = old.clone();
    mixed.extend(kept_events(&json!([{"role":"user","content":"new"}])));
    expected.push(json!({"role":"user","content":"new"}));
    assert_eq!(items_back(&mixed), Value::Array(expected));
}

#[test]
fn kept_items_over_the_protocol() {
    let mut server = Server::start(Wire::Lsp, "memory");
    let items = agent_items();
    let converted = server.ok("responses/toEvents", json!({"items":items,"keepItems":true,"iteration":3}));
    assert_eq!(converted["events"][0]["iteration"], 3);
    let back = server.ok("responses/fromEvents", json!({"events":converted["events"]}));
    assert_eq!(back, json!({"items":items}));
    let plain = server.ok("responses/toEvents", json!({"items":items}));
    assert!(!plain.to_string().contains("responsesItem"), "the default keeps today's events");
    let error = server.err(
        "responses/fromEvents",
        json!({"events":[{"type":"message","role":"user","content":"x","iteration":0,"responsesItem":"x"}]}),
    );
    assert_eq!(error["code"], -32602);
    assert_eq!(error["data"]["path"], "events[0].responsesItem");
    let error = server.err("responses/fromEvents", json!({"events":[{"type":"message","iteration":0}]}));
    assert_eq!(error["data"]["path"], "events[0].role");
    let error = server.err("responses/toEvents", json!({"items":[],"keepItems":"yes"}));
    assert_eq!(error["code"], -32602);
    server.stop();
}
