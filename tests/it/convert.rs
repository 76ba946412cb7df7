//! Seed 003: stateless conversions for CLI providers.

use serde_json::{json, Value};
use threadkeeper::convert::{messages_to_prompt, messages_to_xml, parse_tool_calls, ParsedToolCall, ParsedToolCalls};
use threadkeeper::messages::{build_messages, ContextMode, MessageOptions, StoredMessage, ToolCall};
use threadkeeper::AgentEvent;

fn messages(value: Value) -> Vec<StoredMessage> {
    serde_json::from_value(value).unwrap()
}

fn args(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().cloned().unwrap()
}

fn ai_with_call(text: &str, id: &str, name: &str, call_args: Value) -> StoredMessage {
    let mut message = StoredMessage::ai(text);
    message.data.tool_calls = Some(vec![ToolCall::new(id, name, args(call_args))]);
    message
}

// ---- messages_to_xml ----

#[test]
fn messages_to_xml_serializes_system_human_ai_and_tool() {
    let list = vec![
        StoredMessage::system("You are helpful"),
        StoredMessage::human("Hello"),
        ai_with_call("I'll help", "tc_1", "calc", json!({"x": 1, "y": [1.0, "two"]})),
        StoredMessage::tool("tc_1", "42"),
        StoredMessage::ai("Done."),
    ];
    assert_eq!(
        messages_to_xml(&list),
        "<thread>
  <event type=\"system\" id=\"0\" iteration=\"0\">You are helpful</event>
  <event type=\"human\" id=\"1\" iteration=\"0\">Hello</event>
  <event type=\"ai\" id=\"2\" iteration=\"0\">I&apos;ll help</event>
  <event type=\"tool_input\" id=\"3\" name=\"calc\" call_id=\"tc_1\" iteration=\"0\">{&quot;x&quot;:1,&quot;y&quot;:[1,&quot;two&quot;]}</event>
  <event type=\"tool_output\" id=\"4\" name=\"calc\" call_id=\"tc_1\" status=\"success\" iteration=\"0\">42</event>
  <event type=\"ai\" id=\"5\" iteration=\"0\">Done.</event>
</thread>"
    );
}

#[test]
fn messages_to_xml_of_nothing_is_the_empty_thread() {
    assert_eq!(messages_to_xml(&[]), "<thread>\n</thread>");
}

#[test]
fn messages_to_xml_resolves_tool_names_from_ai_tool_calls() {
    let list = messages(json!([
        {"type": "tool", "data": {"content": "early", "tool_call_id": "tc_2"}},
        {"type": "ai", "data": {"content": "", "tool_calls": [
            {"id": "tc_2", "name": "search", "args": {"q": "test"}, "type": "tool_call"},
            {"id": null, "name": "anon", "args": {}}
        ]}},
        {"type": "tool", "data": {"content": "results", "tool_call_id": "tc_2"}},
        {"type": "tool", "data": {"content": "nothing", "tool_call_id": ""}}
    ]));
    assert_eq!(
        messages_to_xml(&list),
        "<thread>
  <event type=\"tool_output\" id=\"0\" name=\"search\" call_id=\"tc_2\" status=\"success\" iteration=\"0\">early</event>
  <event type=\"tool_input\" id=\"1\" name=\"search\" call_id=\"tc_2\" iteration=\"0\">{&quot;q&quot;:&quot;test&quot;}</event>
  <event type=\"tool_input\" id=\"2\" name=\"anon\" call_id=\"\" iteration=\"0\">{}</event>
  <event type=\"tool_output\" id=\"3\" name=\"search\" call_id=\"tc_2\" status=\"success\" iteration=\"0\">results</event>
  <event type=\"tool_output\" id=\"4\" name=\"unknown\" call_id=\"\" status=\"success\" iteration=\"0\">nothing</event>
</thread>"
    );
}

#[test]
fn messages_to_xml_falls_back_to_unknown_tool_name() {
    let list = vec![StoredMessage::tool("orphan_id", "result")];
    assert_eq!(
        messages_to_xml(&list),
        "<thread>\n  <event type=\"tool_output\" id=\"0\" name=\"unknown\" call_id=\"orphan_id\" status=\"success\" iteration=\"0\">result</event>\n</thread>"
    );
}

#[test]
fn messages_to_xml_escapes_text_attributes_and_forbidden_characters() {
    let list = vec![
        StoredMessage::human("What is <b>\"1 & 2\"</b>? 'q' \u{0}\u{1b}[0m 😀\ttab\r\nline"),
        ai_with_call("", "id\"<&>", "na'me", json!({"k": "<v & \"w\">\u{1}"})),
    ];
    assert_eq!(
        messages_to_xml(&list),
        "<thread>
  <event type=\"human\" id=\"0\" iteration=\"0\">What is &lt;b&gt;&quot;1 &amp; 2&quot;&lt;/b&gt;? &apos;q&apos; \u{FFFD}\u{FFFD}[0m 😀\ttab\r\nline</event>
  <event type=\"tool_input\" id=\"1\" name=\"na&apos;me\" call_id=\"id&quot;&lt;&amp;&gt;\" iteration=\"0\">{&quot;k&quot;:&quot;&lt;v &amp; \\&quot;w\\&quot;&gt;\\u0001&quot;}</event>
</thread>"
    );
}

#[test]
fn messages_to_xml_skips_ai_event_without_text_and_encodes_block_content() {
    let list = messages(json!([
        {"type": "ai", "data": {"content": ""}},
        {"type": "ai", "data": {"content": [{"type": "text", "text": "hi <there>"}]}},
        {"type": "generic", "data": {"content": "g", "role": "narrator"}}
    ]));
    assert_eq!(
        messages_to_xml(&list),
        "<thread>
  <event type=\"ai\" id=\"0\" iteration=\"0\">[{&quot;type&quot;:&quot;text&quot;,&quot;text&quot;:&quot;hi &lt;there&gt;&quot;}]</event>
  <event type=\"generic\" id=\"1\" iteration=\"0\">g</event>
</thread>"
    );
}

fn events(values: Vec<Value>) -> Vec<AgentEvent> {
    AgentEvent::list_from_values(values).unwrap()
}

/// What XML context mode sends: optional system message, then the thread document.
fn xml_mode(instructions: Option<&str>, prefix: Option<&str>) -> Vec<StoredMessage> {
    let thread = events(vec![
        json!({"type":"message","role":"user","content":"Hi & <bye>","iteration":0}),
        json!({"type":"tool_call","toolName":"calc","toolCallId":"c1","args":{"e":"1+1"},"iteration":1}),
        json!({"type":"tool_result","toolCallId":"c1","result":"2\nlines","iteration":1}),
    ]);
    let options = MessageOptions {
        context_mode: ContextMode::Xml,
        instructions: instructions.map(String::from),
        response_prefix: prefix.map(String::from),
        ..MessageOptions::default()
    };
    build_messages(&thread, &options)
}

const THREAD_LINES: [&str; 3] = [
    "<event type=\"human\" id=\"N\" iteration=\"0\">Hi &amp; &lt;bye&gt;</event>",
    "<event type=\"tool_input\" id=\"N\" name=\"calc\" iteration=\"1\">{&quot;e&quot;:&quot;1+1&quot;}</event>",
    "<event type=\"tool_output\" id=\"N\" name=\"calc\" status=\"success\" iteration=\"1\">2\nlines</event>",
];

fn lines(first_id: usize) -> String {
    THREAD_LINES
        .iter()
        .enumerate()
        .map(|(i, l)| format!("  {}\n", l.replace("id=\"N\"", &format!("id=\"{}\"", first_id + i))))
        .collect()
}

#[test]
fn messages_to_xml_passes_a_lone_thread_through_byte_for_byte() {
    let list = xml_mode(None, Some("Based on the above, I will"));
    assert_eq!(list.len(), 1);
    let content = list[0].content_str().unwrap();
    assert_eq!(content, format!("<thread>\n{}</thread>\nBased on the above, I will", lines(0)));
    assert_eq!(messages_to_xml(&list), content);
    // Leading whitespace and odd ids survive too: the content is returned as is.
    let odd = " \n<thread>\n  <event type=\"human\" id=\"7\" iteration=\"3\">x</event>\n</thread>";
    assert_eq!(messages_to_xml(&[StoredMessage::human(odd)]), odd);
}

#[test]
fn messages_to_xml_splices_a_thread_after_a_system_message() {
    let list = xml_mode(Some("Be brief."), None);
    assert_eq!(list.len(), 2);
    assert_eq!(
        messages_to_xml(&list),
        format!("<thread>\n  <event type=\"system\" id=\"0\" iteration=\"0\">Be brief.</event>\n{}</thread>", lines(1))
    );
}

#[test]
fn messages_to_xml_keeps_the_response_prefix_of_a_final_spliced_thread() {
    let list = xml_mode(Some("Be brief."), Some("Answer:"));
    assert_eq!(
        messages_to_xml(&list),
        format!(
            "<thread>\n  <event type=\"system\" id=\"0\" iteration=\"0\">Be brief.</event>\n{}</thread>\nAnswer:",
            lines(1)
        )
    );
}

#[test]
fn messages_to_xml_splices_a_thread_between_other_messages() {
    let mut list = xml_mode(Some("S"), Some("Answer:"));
    list.insert(1, StoredMessage::human("before"));
    list.push(StoredMessage::ai("after"));
    assert_eq!(
        messages_to_xml(&list),
        format!(
            "<thread>
  <event type=\"system\" id=\"0\" iteration=\"0\">S</event>
  <event type=\"human\" id=\"1\" iteration=\"0\">before</event>
{}  <event type=\"human\" id=\"5\" iteration=\"0\">Answer:</event>
  <event type=\"ai\" id=\"6\" iteration=\"0\">after</event>
</thread>",
            lines(2)
        )
    );
}

#[test]
fn messages_to_xml_escapes_a_malformed_thread_as_a_human_event() {
    let broken = "<thread>\n  <event type=\"human\" id=\"0\" iteration=\"0\">never closed";
    let expected = "<thread>\n  <event type=\"human\" id=\"0\" iteration=\"0\">&lt;thread&gt;\n  &lt;event type=&quot;human&quot; id=&quot;0&quot; iteration=&quot;0&quot;&gt;never closed</event>\n</thread>";
    assert_eq!(messages_to_xml(&[StoredMessage::human(broken)]), expected);
    // Only human messages are treated as pre-serialized threads.
    let system = "<thread>\n</thread>";
    assert_eq!(
        messages_to_xml(&[StoredMessage::system(system)]),
        "<thread>\n  <event type=\"system\" id=\"0\" iteration=\"0\">&lt;thread&gt;\n&lt;/thread&gt;</event>\n</thread>"
    );
}

// ---- messages_to_prompt ----

#[test]
fn messages_to_prompt_separates_messages_with_blank_lines() {
    let list = vec![StoredMessage::human("First"), StoredMessage::human("Second")];
    assert_eq!(messages_to_prompt(&list), "[User]\nFirst\n\n[User]\nSecond");
}

#[test]
fn messages_to_prompt_labels_every_type_and_encodes_non_string_content() {
    let list = messages(json!([
        {"type": "system", "data": {"content": "You are helpful"}},
        {"type": "human", "data": {"content": "Hello & <hi> \"q\" 😀\u{1}"}},
        {"type": "ai", "data": {"content": "", "tool_calls": [{"id": "c", "name": "t", "args": {}}]}},
        {"type": "ai", "data": {"content": [{"type": "text", "text": "Hi\nthere"}]}},
        {"type": "tool", "data": {"content": "result", "tool_call_id": "c"}},
        {"type": "function", "data": {"content": "f", "name": "fn"}}
    ]));
    assert_eq!(
        messages_to_prompt(&list),
        "[System]\nYou are helpful\n\n[User]\nHello & <hi> \"q\" 😀\u{1}\n\n[Assistant]\n\n\n[Assistant]\n[{\"type\":\"text\",\"text\":\"Hi\\nthere\"}]\n\n[Tool Result]\nresult\n\n[function]\nf"
    );
    assert_eq!(messages_to_prompt(&[]), "");
}

// ---- parse_tool_calls ----

fn call(id: &str, name: &str, call_args: Value) -> ParsedToolCall {
    ParsedToolCall { id: id.into(), name: name.into(), args: args(call_args) }
}

#[test]
fn parse_tool_calls_reads_the_first_json_fence() {
    let text = "Some text\n\n```json\n{\"tool_calls\": [{\"name\": \"calc\", \"args\": {\"x\": 1}, \"id\": \"c1\"}]}\n```\n\nMore text";
    assert_eq!(
        parse_tool_calls(text),
        ParsedToolCalls {
            tool_calls: vec![call("c1", "calc", json!({"x": 1}))],
            content: "Some text\n\nMore text".into()
        }
    );
}

#[test]
fn parse_tool_calls_of_plain_text_has_no_calls() {
    assert_eq!(
        parse_tool_calls("  Just plain text\n"),
        ParsedToolCalls { tool_calls: vec![], content: "Just plain text".into() }
    );
    assert_eq!(parse_tool_calls(""), ParsedToolCalls::default());
}

#[test]
fn parse_tool_calls_keeps_invalid_json_as_content() {
    let text = "```json\n{ invalid json }\n```";
    assert_eq!(parse_tool_calls(text), ParsedToolCalls { tool_calls: vec![], content: text.into() });
}

#[test]
fn parse_tool_calls_without_a_tool_calls_array_keeps_the_text() {
    for text in [
        "```json\n{\"calls\": []}\n```",
        "```json\n{\"tool_calls\": {}}\n```",
        "```json\n{\"tool_calls\": []}\n```",
        "```json\n[{\"name\": \"a\"}]\n```",
        "```json\nnull\n```",
        "```\n{\"tool_calls\": [{\"name\": \"a\"}]}\n```",
    ] {
        assert_eq!(parse_tool_calls(text), ParsedToolCalls { tool_calls: vec![], content: text.into() }, "{text}");
    }
}

#[test]
fn parse_tool_calls_assigns_default_ids_and_args() {
    let text = "```json\n{\"tool_calls\": [{\"name\": \"t\"}, {\"name\": \"u\", \"args\": null, \"id\": null}, {\"name\": \"v\", \"id\": \"mine\", \"args\": {\"b\": 2, \"a\": 1}}]}\n```";
    assert_eq!(
        parse_tool_calls(text),
        ParsedToolCalls {
            tool_calls: vec![
                call("call_0", "t", json!({})),
                call("call_1", "u", json!({})),
                call("mine", "v", json!({"b": 2, "a": 1}))
            ],
            content: String::new(),
        }
    );
}

#[test]
fn parse_tool_calls_reads_each_entry_on_its_own() {
    // Seed 003 maps every entry: one odd entry costs only itself, and `index` keeps counting.
    let entries = r#"[{"name": "a", "id": 7}, {"args": {}}, {"name": 5}, null, {"name": "b", "args": "x=1"},
        {"name": "c", "args": [1, {"k": null}], "id": 0.1}, {"name": "d", "id": -0.0, "args": 2}]"#;
    let text = format!("Doing it.\n```json\n{{\"tool_calls\": {entries}}}\n```");
    assert_eq!(
        parse_tool_calls(&text),
        ParsedToolCalls {
            tool_calls: vec![
                call("7", "a", json!({})),
                call("call_4", "b", json!({"input": "x=1"})),
                call("0.1", "c", json!({"input": [1, {"k": null}]})),
                call("0", "d", json!({"input": 2})),
            ],
            content: "Doing it.".into(),
        }
    );
}

#[test]
fn parse_tool_calls_without_any_entry_that_is_a_call_leaves_the_text() {
    for entries in [r#"[{"args": {}}]"#, r#"[{"name": 5}]"#, r#"[null, "x", 3]"#] {
        let text = format!("Doing it.\n```json\n{{\"tool_calls\": {entries}}}\n```");
        assert_eq!(parse_tool_calls(&text), ParsedToolCalls { tool_calls: vec![], content: text.clone() }, "{entries}");
    }
}

#[test]
fn parse_tool_calls_uses_only_the_first_fence() {
    let text = "A\n```json\n{\"tool_calls\": [{\"name\": \"first\"}]}\n```\nB\n```json\n{\"tool_calls\": [{\"name\": \"second\"}]}\n```";
    assert_eq!(
        parse_tool_calls(text),
        ParsedToolCalls {
            tool_calls: vec![call("call_0", "first", json!({}))],
            content: "A\n\nB\n```json\n{\"tool_calls\": [{\"name\": \"second\"}]}\n```".into(),
        }
    );
}

#[test]
fn parse_tool_calls_handles_nasty_strings_and_unicode_whitespace() {
    let text = "\u{FEFF}\u{A0}Calling 😀 & <x>\n```json \u{3000}\n{\"tool_calls\":[{\"name\":\"say\",\"args\":{\"t\":\"\\\"'<&>\\u0007😀\"}}]} \n```\u{2028}";
    assert_eq!(
        parse_tool_calls(text),
        ParsedToolCalls {
            tool_calls: vec![call("call_0", "say", json!({"t": "\"'<&>\u{7}😀"}))],
            content: "Calling 😀 & <x>".into(),
        }
    );
}

#[test]
fn parsed_tool_calls_serialize_in_camel_case() {
    let parsed = parse_tool_calls(
        "ok\n```json\n{\"tool_calls\":[{\"name\":\"n\",\"args\":{\"z\":1,\"a\":[]},\"id\":\"i\"}]}\n```",
    );
    assert_eq!(
        serde_json::to_string(&parsed).unwrap(),
        r#"{"toolCalls":[{"id":"i","name":"n","args":{"z":1,"a":[]}}],"content":"ok"}"#
    );
}
