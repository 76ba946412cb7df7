//! Seeds 001 and 002: standard and XML context modes, as pure renderers.

use proptest::prelude::*;
use serde_json::{json, Value};
use threadkeeper::messages::{
    build_messages, context_injection, system_message, xml_messages_from, ContextMode, DanglingToolCalls,
    MessageOptions, MessageType, StandardMessages, StoredMessage,
};
use threadkeeper::{escape_xml, serialize_thread_to_xml, AgentEvent, EscapeMode, XmlOptions, XmlRenderer};

const NASTY: &str = "Add 2+2 & tell me <why> \"now\" 'ok' \u{1b}[31m😀";

fn events(values: Vec<Value>) -> Vec<AgentEvent> {
    AgentEvent::list_from_values(values).unwrap()
}

/// Two iterations with every event type, nasty text and a summary at the end.
fn thread() -> Vec<AgentEvent> {
    events(vec![
        json!({"type":"message","role":"user","content":NASTY,"iteration":0,"timestamp":1}),
        json!({"type":"tool_call","toolName":"calculator","toolCallId":"call_1","args":{"expression":"2+2","precision":1.0},"iteration":1,"timestamp":2}),
        json!({"type":"tool_result","toolCallId":"call_1","result":{"value":4,"unit":null},"iteration":1}),
        json!({"type":"error","error":"timeout\u{7} in <tool>","recoverable":true,"toolCallId":"call_1","iteration":1}),
        json!({"type":"message","role":"assistant","content":"The answer is 4.","iteration":1}),
        json!({"type":"completion","result":"4","verified":false,"iteration":1}),
        json!({"type":"human_input_requested","question":"Continue?","iteration":1}),
        json!({"type":"human_input_received","response":"yes","iteration":2}),
        json!({"type":"message","role":"system","content":"Be terse.","iteration":2}),
        json!({"type":"error","error":"fatal","recoverable":false,"iteration":2}),
        json!({"type":"summary","summarizedIterations":[0],"summary":"User asked.","iteration":2}),
    ])
}

fn standard(thread: &[AgentEvent]) -> Vec<StoredMessage> {
    build_messages(thread, &MessageOptions::default())
}

fn xml_options() -> MessageOptions {
    MessageOptions { context_mode: ContextMode::Xml, ..MessageOptions::default() }
}

fn to_json(messages: &[StoredMessage]) -> String {
    serde_json::to_string_pretty(messages).unwrap()
}

const STANDARD_JSON: &str = r###"[
  {
    "type": "system",
    "data": {
      "content": "## Previous Iteration Summaries\n\n### Iteration(s) 0\nUser asked.\n\n\n\nBe helpful."
    }
  },
  {
    "type": "human",
    "data": {
      "content": "Add 2+2 & tell me <why> \"now\" 'ok' \u001b[31m😀"
    }
  },
  {
    "type": "ai",
    "data": {
      "content": "",
      "tool_calls": [
        {
          "id": "call_1",
          "name": "calculator",
          "args": {
            "expression": "2+2",
            "precision": 1.0
          },
          "type": "tool_call"
        }
      ]
    }
  },
  {
    "type": "tool",
    "data": {
      "content": "{\"value\":4,\"unit\":null}",
      "tool_call_id": "call_1"
    }
  },
  {
    "type": "human",
    "data": {
      "content": "[Error (recoverable)]: timeout\u0007 in <tool>"
    }
  },
  {
    "type": "ai",
    "data": {
      "content": "The answer is 4."
    }
  },
  {
    "type": "human",
    "data": {
      "content": "[Human Response]: yes"
    }
  },
  {
    "type": "human",
    "data": {
      "content": "[System]: Be terse."
    }
  },
  {
    "type": "human",
    "data": {
      "content": "[Error]: fatal"
    }
  }
]"###;

const THREAD_XML: &str = "<thread>
  <event type=\"human\" id=\"0\" iteration=\"0\">Add 2+2 &amp; tell me &lt;why&gt; &quot;now&quot; &apos;ok&apos; \u{FFFD}[31m😀</event>
  <event type=\"tool_input\" id=\"1\" name=\"calculator\" iteration=\"1\">{&quot;expression&quot;:&quot;2+2&quot;,&quot;precision&quot;:1}</event>
  <event type=\"tool_output\" id=\"2\" name=\"calculator\" status=\"success\" iteration=\"1\">{&quot;value&quot;:4,&quot;unit&quot;:null}</event>
  <event type=\"error\" id=\"3\" iteration=\"1\" recoverable=\"true\">timeout\u{FFFD} in &lt;tool&gt;</event>
  <event type=\"ai\" id=\"4\" iteration=\"1\">The answer is 4.</event>
  <event type=\"completion\" id=\"5\" iteration=\"1\">4</event>
  <event type=\"human_input_requested\" id=\"6\" iteration=\"1\">Continue?</event>
  <event type=\"human_input_received\" id=\"7\" iteration=\"2\">yes</event>
  <event type=\"system\" id=\"8\" iteration=\"2\">Be terse.</event>
  <event type=\"error\" id=\"9\" iteration=\"2\" recoverable=\"false\">fatal</event>
  <event type=\"summary\" id=\"10\" iteration=\"2\" summarizedIterations=\"0\">User asked.</event>
</thread>";

// ---- seed 001: standard mode ----

#[test]
fn standard_mode_renders_the_whole_thread_exactly() {
    let options = MessageOptions { instructions: Some("Be helpful.".into()), ..MessageOptions::default() };
    assert_eq!(to_json(&build_messages(&thread(), &options)), STANDARD_JSON);
}

#[test]
fn tool_call_events_become_ai_messages_with_tool_calls() {
    let messages = standard(&thread()[..2]);
    assert_eq!(
        serde_json::to_string(&messages[1]).unwrap(),
        r#"{"type":"ai","data":{"content":"","tool_calls":[{"id":"call_1","name":"calculator","args":{"expression":"2+2","precision":1.0},"type":"tool_call"}]}}"#
    );
}

#[test]
fn tool_result_events_become_tool_messages_with_call_id() {
    let results = [
        json!({"type":"tool_result","toolCallId":"c&<1>","result":"plain \"text\"","iteration":1}),
        json!({"type":"tool_result","toolCallId":"c2","result":[1.5,true,{"k":"v\n"}],"iteration":1}),
        json!({"type":"tool_result","toolCallId":"c3","result":null,"iteration":1}),
        json!({"type":"tool_result","toolCallId":"c4","result":1e21,"iteration":1}),
    ];
    let calls = results
        .iter()
        .map(|r| json!({"type":"tool_call","toolName":"t","toolCallId":r["toolCallId"],"args":{},"iteration":1}));
    let thread = events(calls.zip(results.iter().cloned()).flat_map(|(c, r)| [c, r]).collect());
    let contents: Vec<(String, String)> = standard(&thread)
        .iter()
        .filter(|m| m.message_type == MessageType::Tool)
        .map(|m| (m.data.tool_call_id.clone().unwrap(), m.content_str().unwrap().to_owned()))
        .collect();
    let expected =
        [("c&<1>", "plain \"text\""), ("c2", "[1.5,true,{\"k\":\"v\\n\"}]"), ("c3", "null"), ("c4", "1e+21")];
    assert_eq!(contents, expected.map(|(a, b)| (a.to_owned(), b.to_owned())));
    assert_eq!(standard(&thread).len(), 9, "an opening human message, then each call and its result, adjacent");
}

#[test]
fn error_events_become_human_messages_with_recoverability() {
    let thread = events(vec![
        json!({"type":"error","error":"Tool failed: <x> & 'y'","recoverable":true,"iteration":1}),
        json!({"type":"error","error":"Out of budget 💸","recoverable":false,"iteration":1}),
    ]);
    assert_eq!(
        standard(&thread),
        vec![
            StoredMessage::human("[Error (recoverable)]: Tool failed: <x> & 'y'"),
            StoredMessage::human("[Error]: Out of budget 💸"),
        ]
    );
}

#[test]
fn completion_and_human_input_requested_are_skipped() {
    let thread = events(vec![
        json!({"type":"completion","result":"done","verified":true,"iteration":1}),
        json!({"type":"human_input_requested","question":"Proceed?","format":"yes_no","iteration":1}),
        json!({"type":"approval","decision":"ok","iteration":1}),
    ]);
    assert_eq!(standard(&thread), vec![]);
}

#[test]
fn message_human_input_received_and_summary_handling_is_unchanged() {
    let thread = events(vec![
        json!({"type":"summary","summarizedIterations":[1,2],"summary":"Earlier work.","iteration":3}),
        json!({"type":"message","role":"user","content":"u","iteration":3}),
        json!({"type":"message","role":"assistant","content":"a","iteration":3}),
        json!({"type":"message","role":"system","content":"s","iteration":3}),
        json!({"type":"human_input_received","response":"r","iteration":3}),
    ]);
    assert_eq!(
        standard(&thread),
        vec![
            StoredMessage::system("## Previous Iteration Summaries\n\n### Iteration(s) 1, 2\nEarlier work.\n\n"),
            StoredMessage::human("u"),
            StoredMessage::ai("a"),
            StoredMessage::human("[System]: s"),
            StoredMessage::human("[Human Response]: r"),
        ]
    );
}

#[test]
fn standard_mode_retains_tool_calls_across_iterations() {
    let thread = events(vec![
        json!({"type":"message","role":"user","content":"Search, then summarize.","iteration":0}),
        json!({"type":"tool_call","toolName":"search","toolCallId":"s1","args":{"q":"rust"},"iteration":1}),
        json!({"type":"tool_result","toolCallId":"s1","result":"3 hits","iteration":1}),
        json!({"type":"message","role":"assistant","content":"Found 3.","iteration":1}),
        json!({"type":"tool_call","toolName":"fetch","toolCallId":"f1","args":{"url":"a"},"iteration":2}),
        json!({"type":"tool_result","toolCallId":"f1","result":"page","iteration":2}),
    ]);
    let messages = standard(&thread);
    let shape: Vec<String> = messages
        .iter()
        .map(|m| match m.tool_calls() {
            [] => format!("{}:{}", m.message_type, m.content_text()),
            calls => format!("ai->{}", calls[0].name),
        })
        .collect();
    assert_eq!(
        shape,
        ["human:Search, then summarize.", "ai->search", "tool:3 hits", "ai:Found 3.", "ai->fetch", "tool:page"]
    );
    assert_eq!(messages[2].data.tool_call_id.as_deref(), Some("s1"));
    assert_eq!(messages[5].data.tool_call_id.as_deref(), Some("f1"));
}

#[test]
fn standard_mode_retains_errors_across_iterations() {
    let thread = events(vec![
        json!({"type":"message","role":"user","content":"go","iteration":0}),
        json!({"type":"error","error":"parse failure","recoverable":true,"iteration":1}),
        json!({"type":"message","role":"assistant","content":"retrying","iteration":2}),
    ]);
    assert_eq!(
        standard(&thread),
        vec![
            StoredMessage::human("go"),
            StoredMessage::human("[Error (recoverable)]: parse failure"),
            StoredMessage::ai("retrying"),
        ]
    );
}

#[test]
fn standard_mode_loop_sees_prior_tool_calls() {
    // The loop keeps one builder; at the start of iteration 2 the model gets iteration 1's calls.
    let thread = thread();
    let mut builder = StandardMessages::new();
    builder.extend(&thread[..1]);
    let iteration_1 = builder.to_messages(None, DanglingToolCalls::Repair);
    assert_eq!(iteration_1, vec![StoredMessage::human(NASTY)]);
    builder.extend(&thread[1..7]);
    let iteration_2 = builder.to_messages(None, DanglingToolCalls::Repair);
    assert_eq!(iteration_2.len(), 5);
    assert_eq!(iteration_2[1].tool_calls()[0].id.as_deref(), Some("call_1"));
    assert_eq!(iteration_2[2], StoredMessage::tool("call_1", r#"{"value":4,"unit":null}"#));
    assert_eq!(iteration_2, standard(&thread[..7]));
}

#[test]
fn build_messages_is_a_pure_function_of_the_thread() {
    let thread = thread();
    for options in [MessageOptions::default(), xml_options()] {
        assert_eq!(build_messages(&thread, &options), build_messages(&thread, &options));
    }
}

#[test]
fn parallel_calls_share_one_ai_message_with_or_without_grouping() {
    let thread = events(vec![
        json!({"type":"tool_call","toolName":"a","toolCallId":"1","args":{"x":1},"iteration":1}),
        json!({"type":"tool_call","toolName":"b","toolCallId":"2","args":{},"iteration":1}),
        json!({"type":"tool_result","toolCallId":"1","result":"A","iteration":1}),
        json!({"type":"tool_result","toolCallId":"2","result":"B","iteration":1}),
        json!({"type":"tool_call","toolName":"c","toolCallId":"3","args":{},"iteration":2}),
    ]);
    let grouped = build_messages(&thread, &MessageOptions { group_tool_calls: true, ..MessageOptions::default() });
    assert_eq!(
        serde_json::to_string(&grouped).unwrap(),
        concat!(
            r#"[{"type":"human","data":{"content":"(The conversation so far follows.)"}},"#,
            r#"{"type":"ai","data":{"content":"","tool_calls":["#,
            r#"{"id":"1","name":"a","args":{"x":1},"type":"tool_call"},"#,
            r#"{"id":"2","name":"b","args":{},"type":"tool_call"}]}},"#,
            r#"{"type":"tool","data":{"content":"A","tool_call_id":"1"}},"#,
            r#"{"type":"tool","data":{"content":"B","tool_call_id":"2"}},"#,
            r#"{"type":"ai","data":{"content":"","tool_calls":[{"id":"3","name":"c","args":{},"type":"tool_call"}]}},"#,
            r#"{"type":"tool","data":{"content":"[Tool call not completed]: no result was recorded for this call","tool_call_id":"3","status":"error"}}]"#
        )
    );
    // Calls pending together always share a message (rule 8b), so grouping changes nothing.
    assert_eq!(standard(&thread), grouped);
}

#[test]
fn context_injection_and_system_message_follow_upstream() {
    let thread = thread();
    assert_eq!(context_injection(&thread), "## Previous Iteration Summaries\n\n### Iteration(s) 0\nUser asked.\n\n");
    assert_eq!(system_message(&thread[..10], None), None);
    assert_eq!(system_message(&thread[..10], Some("I")), Some(StoredMessage::system("I")));
}

// ---- seed 002: XML context mode ----

#[test]
fn context_mode_defaults_to_standard() {
    assert_eq!(MessageOptions::default().context_mode, ContextMode::Standard);
    let options: MessageOptions = serde_json::from_str(r#"{"instructions":"x"}"#).unwrap();
    assert_eq!(options.context_mode, ContextMode::Standard);
    assert_eq!(build_messages(&thread(), &options)[1], StoredMessage::human(NASTY));
}

#[test]
fn context_mode_is_standard_or_xml() {
    assert_eq!(serde_json::from_str::<ContextMode>(r#""standard""#).unwrap(), ContextMode::Standard);
    assert_eq!(serde_json::from_str::<ContextMode>(r#""xml""#).unwrap(), ContextMode::Xml);
    assert!(serde_json::from_str::<ContextMode>(r#""XML""#).is_err());
    assert_eq!(serde_json::to_string(&ContextMode::Xml).unwrap(), r#""xml""#);
}

#[test]
fn xml_mode_produces_system_and_single_human_message() {
    let options = MessageOptions { instructions: Some("Be helpful.".into()), ..xml_options() };
    let messages = build_messages(&thread(), &options);
    assert_eq!(
        messages,
        vec![
            StoredMessage::system(
                "## Previous Iteration Summaries\n\n### Iteration(s) 0\nUser asked.\n\n\n\nBe helpful."
            ),
            StoredMessage::human(THREAD_XML),
        ]
    );
    // No summaries and no instructions: the human message alone.
    assert_eq!(build_messages(&thread()[..1], &xml_options()).len(), 1);
}

#[test]
fn xml_mode_human_message_is_the_serialized_thread() {
    let thread = thread();
    let messages = build_messages(&thread, &xml_options());
    let document = serialize_thread_to_xml(&thread, &XmlOptions::default());
    assert_eq!(document, THREAD_XML);
    assert_eq!(messages.last().unwrap().content_str(), Some(document.as_str()));
}

#[test]
fn xml_mode_system_message_matches_standard_mode() {
    let options = MessageOptions { instructions: Some("I".into()), ..MessageOptions::default() };
    let xml = MessageOptions { context_mode: ContextMode::Xml, ..options.clone() };
    assert_eq!(build_messages(&thread(), &options)[0], build_messages(&thread(), &xml)[0]);
}

#[test]
fn xml_mode_appends_response_prefix() {
    let options = MessageOptions { response_prefix: Some("Based on the thread, I will".into()), ..xml_options() };
    let messages = build_messages(&thread()[..1], &options);
    assert_eq!(
        messages,
        vec![StoredMessage::human(
            "<thread>\n  <event type=\"human\" id=\"0\" iteration=\"0\">Add 2+2 &amp; tell me &lt;why&gt; &quot;now&quot; &apos;ok&apos; \u{FFFD}[31m😀</event>\n</thread>\nBased on the thread, I will"
        )]
    );
    // Standard mode has no place for a prefix and ignores it.
    let standard_options = MessageOptions { context_mode: ContextMode::Standard, ..options };
    assert_eq!(build_messages(&thread()[..1], &standard_options), vec![StoredMessage::human(NASTY)]);
}

#[test]
fn xml_mode_respects_escape_option() {
    let options = MessageOptions { escape: EscapeMode::Minimal, ..xml_options() };
    let messages = build_messages(&thread()[1..2], &options);
    assert_eq!(
        messages[0].content_str().unwrap(),
        "<thread>\n  <event type=\"tool_input\" id=\"0\" name=\"calculator\" iteration=\"1\">{\"expression\":\"2+2\",\"precision\":1}</event>\n</thread>"
    );
}

#[test]
fn xml_mode_retains_all_event_types_across_iterations() {
    let messages = build_messages(&thread(), &xml_options());
    let document = messages.last().unwrap().content_str().unwrap();
    for type_name in [
        "human",
        "tool_input",
        "tool_output",
        "error",
        "ai",
        "completion",
        "human_input_requested",
        "human_input_received",
        "system",
        "summary",
    ] {
        assert!(document.contains(&format!("<event type=\"{type_name}\"")), "{type_name}");
    }
    assert!(document.contains("iteration=\"1\"") && document.contains("iteration=\"2\""));
}

#[test]
fn xml_mode_loop_sees_prior_tool_events() {
    // Incremental state (injection + renderer) gives what a fresh render of the prefix gives.
    let thread = thread();
    let mut builder = StandardMessages::new();
    let mut renderer = XmlRenderer::new(EscapeMode::Full);
    for (i, event) in thread.iter().enumerate() {
        builder.push(event);
        renderer.push(event);
        let incremental = xml_messages_from(builder.injection(), &renderer, Some("I"), None);
        let options = MessageOptions { instructions: Some("I".into()), ..xml_options() };
        assert_eq!(incremental, build_messages(&thread[..=i], &options));
    }
    let document = serialize_thread_to_xml(&thread[..3], &XmlOptions::default());
    assert!(document.contains("name=\"calculator\" status=\"success\" iteration=\"1\">{&quot;value&quot;:4"));
}

#[test]
fn both_modes_convey_equivalent_information() {
    let thread = thread();
    let standard = standard(&thread);
    let document = build_messages(&thread, &xml_options()).pop().unwrap().content_str().unwrap().to_owned();
    let standard_text: Vec<String> = standard.iter().map(|m| m.content_text().into_owned()).collect();
    for event in &thread {
        let fields = event.fields();
        let text = |key: &str| fields[key].as_str().unwrap().to_owned();
        // What the event says, as text, and whether standard mode carries it.
        let (payload, in_standard) = match event.event_type() {
            "message" => (text("content"), true),
            "human_input_received" => (text("response"), true),
            "error" => (text("error"), true),
            "tool_result" => (threadkeeper::js_json::to_string(&fields["result"]), true),
            "tool_call" => {
                let args = threadkeeper::js_json::to_string(&fields["args"]);
                let call = standard.iter().flat_map(|m| m.tool_calls()).find(|c| c.id.as_deref() == Some("call_1"));
                assert_eq!(
                    call.map(|c| (c.name.as_str(), Value::Object(c.args.clone()))),
                    Some(("calculator", fields["args"].clone()))
                );
                (args, false)
            }
            // Terminal and control events are XML-only by design; summaries go to the system message.
            "completion" => (text("result"), false),
            "human_input_requested" => (text("question"), false),
            "summary" => (text("summary"), false),
            other => panic!("unexpected {other}"),
        };
        if in_standard {
            assert!(standard_text.iter().any(|t| t.contains(&payload)), "standard lacks {payload:?}");
        }
        assert!(document.contains(&escape_xml(&payload)), "xml lacks {payload:?}");
    }
}

#[test]
fn stored_messages_load_shape_is_minimal() {
    // Loaders need `content`, `tool_calls` entries with `id`/`name`/`args`, and `tool_call_id`.
    let value = serde_json::to_value(standard(&thread())).unwrap();
    for message in value.as_array().unwrap() {
        let data = message["data"].as_object().unwrap();
        let keys: Vec<&str> = data.keys().map(String::as_str).collect();
        let expected: &[&str] = match message["type"].as_str().unwrap() {
            "ai" if data.contains_key("tool_calls") => &["content", "tool_calls"],
            "tool" => &["content", "tool_call_id"],
            _ => &["content"],
        };
        assert_eq!(keys, expected);
    }
}

// ---- incremental == one-shot ----

fn event_strategy() -> impl Strategy<Value = Value> {
    let iteration = 0u8..3;
    prop_oneof![
        (iteration.clone(), "[a-z<&]{0,3}")
            .prop_map(|(i, c)| json!({"type":"message","role":"user","content":c,"iteration":i})),
        (iteration.clone(), "[a-z]{0,3}")
            .prop_map(|(i, c)| json!({"type":"message","role":"assistant","content":c,"iteration":i})),
        (iteration.clone(), 0u8..4).prop_map(|(i, id)| json!({"type":"tool_call","toolName":"t","toolCallId":format!("c{id}"),"args":{"n":id},"iteration":i})),
        (iteration.clone(), 0u8..4).prop_map(|(i, id)| json!({"type":"tool_result","toolCallId":format!("c{id}"),"result":{"n":id},"iteration":i})),
        (iteration.clone(), any::<bool>())
            .prop_map(|(i, r)| json!({"type":"error","error":"e","recoverable":r,"iteration":i})),
        iteration.clone().prop_map(|i| json!({"type":"summary","summarizedIterations":[i],"summary":"s","iteration":i})),
        iteration.clone().prop_map(|i| json!({"type":"completion","result":"r","verified":true,"iteration":i})),
        iteration.prop_map(|i| json!({"type":"plan","steps":[],"iteration":i})),
    ]
}

proptest! {
    #[test]
    fn incremental_equals_one_shot_for_any_split(
        values in prop::collection::vec(event_strategy(), 0..24),
        cuts in prop::collection::vec(0usize..24, 0..4),
        group in any::<bool>(),
    ) {
        let thread = events(values);
        let options = MessageOptions { group_tool_calls: group, instructions: Some("I".into()), ..MessageOptions::default() };
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(thread.len())).collect();
        cuts.sort_unstable();
        cuts.push(thread.len());
        let mut builder = StandardMessages::new();
        let mut start = 0;
        for cut in cuts {
            builder.extend(&thread[start..cut]);
            start = cut;
            // A snapshot at every cut equals a one-shot build of the prefix.
            prop_assert_eq!(builder.to_messages(Some("I"), DanglingToolCalls::Repair), build_messages(&thread[..cut], &options));
        }
    }
}
