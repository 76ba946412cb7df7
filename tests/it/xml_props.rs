//! Properties of the thread XML over arbitrary threads: well-formed, one `<event>` per event with
//! ids 0..n, read back by `parse_thread_xml` (modulo U+FFFD for characters XML forbids) — unknown
//! types named like the XML's own types and tool results' timing attributes included — and the
//! same bytes whether rendered at once or pushed in chunks.

use proptest::prelude::*;
use quick_xml::events::Event;
use quick_xml::Reader;
use serde_json::{Map, Value};
use threadkeeper::js_json;
use threadkeeper::xml::type_names::unknown_type_attribute;
use threadkeeper::xml::{escape_into, is_forbidden_char};
use threadkeeper::{
    parse_thread_document, parse_thread_xml, serialize_thread_to_xml, AgentEvent, EscapeMode, EventKind, Role,
    XmlOptions, XmlRenderer,
};

/// Unknown types that collide with the XML's own names or with the prefix that marks them; the
/// serializer must write them so that they read back as themselves.
const TRICKY_UNKNOWN_TYPES: &[&str] =
    &["human", "ai", "system", "tool_input", "tool_output", "custom:", "custom:human", "custom:custom:x", "custom"];

fn arb_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => proptest::char::range('a', 'z'),
        3 => proptest::sample::select(vec![
            '&', '<', '>', '"', '\'', ' ', '\t', '\n', '\r', '\0', '\u{1}', '\u{8}', '\u{B}', '\u{C}', '\u{1B}',
            '\u{1F}', '\u{7F}', '\u{85}', '\u{2028}', '\u{FFFD}', '\u{FFFE}', '\u{FFFF}', ']', ';', '#', '\\', 'é',
            '中', '😀',
        ]),
        1 => any::<char>(),
    ]
}

fn arb_string() -> impl Strategy<Value = String> {
    proptest::collection::vec(arb_char(), 0..24).prop_map(|chars| chars.into_iter().collect())
}

fn arb_json() -> impl Strategy<Value = Value> {
    crate::strategies::json_value(arb_string, 3, 24, 4)
}

fn arb_object() -> impl Strategy<Value = Map<String, Value>> {
    crate::strategies::json_map(arb_string(), arb_json(), 4)
}

fn arb_event() -> impl Strategy<Value = AgentEvent> {
    // A few tool names and ids, so that results often find their calls and ids repeat.
    let name =
        || prop_oneof![proptest::sample::select(vec!["read", "grep", "unknown"]).prop_map(String::from), arb_string()];
    let id = || proptest::sample::select(vec!["c0", "c1", "c2", "c3"]).prop_map(String::from);
    let body = prop_oneof![
        (proptest::sample::select(vec!["user", "assistant", "system"]), arb_string())
            .prop_map(|(role, content)| serde_json::json!({"type": "message", "role": role, "content": content})),
        (name(), id(), arb_object()).prop_map(
            |(n, i, args)| serde_json::json!({"type": "tool_call", "toolName": n, "toolCallId": i, "args": args})
        ),
        (id(), arb_json(), proptest::option::of(arb_timing()), proptest::option::of(arb_timing())).prop_map(
            |(i, result, duration, group)| {
                let mut event = serde_json::json!({"type": "tool_result", "toolCallId": i, "result": result});
                if let Some(duration) = duration {
                    event["durationMs"] = duration;
                }
                if let Some(group) = group {
                    event["parallelGroup"] = group;
                }
                event
            }
        ),
        (arb_string(), any::<bool>()).prop_map(
            |(error, recoverable)| serde_json::json!({"type": "error", "error": error, "recoverable": recoverable})
        ),
        arb_string()
            .prop_map(|q| serde_json::json!({"type": "human_input_requested", "question": q, "choices": ["a"]})),
        arb_string().prop_map(|r| serde_json::json!({"type": "human_input_received", "response": r})),
        (arb_string(), any::<bool>()).prop_map(
            |(result, verified)| serde_json::json!({"type": "completion", "result": result, "verified": verified})
        ),
        (proptest::collection::vec(crate::strategies::number(), 0..4), arb_string()).prop_map(
            |(its, summary)| serde_json::json!({"type": "summary", "summarizedIterations": its, "summary": summary})
        ),
        (
            prop_oneof![
                3 => arb_string(),
                1 => proptest::sample::select(TRICKY_UNKNOWN_TYPES).prop_map(String::from),
                1 => arb_string().prop_map(|t| format!("custom:{t}")),
            ]
            .prop_filter("not a known type", |t| !crate::strategies::KNOWN_EVENT_TYPES.contains(&t.as_str())),
            arb_object()
        )
            .prop_map(|(t, rest)| {
                let mut fields = Map::from_iter([("type".to_owned(), Value::String(t))]);
                fields.extend(
                    rest.into_iter().filter(|(k, _)| !matches!(k.as_str(), "type" | "iteration" | "timestamp")),
                );
                Value::Object(fields)
            }),
    ];
    (body, crate::strategies::number(), proptest::option::of(any::<u32>())).prop_map(
        |(mut body, iteration, timestamp)| {
            let fields = body.as_object_mut().unwrap();
            fields.insert("iteration".into(), Value::Number(iteration));
            if let Some(t) = timestamp {
                fields.insert("timestamp".into(), t.into());
            }
            AgentEvent::from_value(body, "event").unwrap()
        },
    )
}

/// Values upstream's `durationMs` / `parallelGroup` take (numbers, strings), and a few it does
/// not (they write no attribute).
fn arb_timing() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => crate::strategies::number().prop_map(Value::Number),
        3 => arb_string().prop_map(Value::String),
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::Bool),
        1 => arb_json(),
    ]
}

fn arb_thread() -> impl Strategy<Value = Vec<AgentEvent>> {
    proptest::collection::vec(arb_event(), 0..16)
}

fn arb_options() -> impl Strategy<Value = XmlOptions> {
    let escape = prop_oneof![Just(EscapeMode::Full), Just(EscapeMode::Minimal)];
    (proptest::option::of(arb_string()), escape)
        .prop_map(|(response_prefix, escape)| XmlOptions { response_prefix, escape })
}

fn replace_forbidden(text: &str) -> String {
    text.chars().map(|c| if is_forbidden_char(c) { '\u{FFFD}' } else { c }).collect()
}

/// The XML type and body text the serializer is meant to write for an event, before escaping.
fn expected_type_and_body(event: &AgentEvent) -> (String, String) {
    let (xml_type, body) = match event.kind() {
        EventKind::Message { role, content } => {
            let t = match role {
                Role::User => "human",
                Role::Assistant => "ai",
                Role::System => "system",
            };
            (t.to_owned(), content.text().into_owned())
        }
        EventKind::ToolCall { args, .. } => {
            let mut json = String::new();
            js_json::write_object(&mut json, args);
            ("tool_input".into(), json)
        }
        EventKind::ToolResult { result: Some(Value::String(text)), .. } => ("tool_output".into(), text.clone()),
        EventKind::ToolResult { result, content, .. } => {
            ("tool_output".into(), js_json::to_string(&threadkeeper::event::tool_result_value(result, content)))
        }
        EventKind::Error { error, .. } => ("error".into(), error.to_owned()),
        EventKind::HumanInputRequested { question } => ("human_input_requested".into(), question.to_owned()),
        EventKind::HumanInputReceived { response } => ("human_input_received".into(), response.to_owned()),
        EventKind::Completion { result, .. } => ("completion".into(), result.to_owned()),
        EventKind::Summary { summary, .. } => ("summary".into(), summary.to_owned()),
        EventKind::Unknown { .. } | EventKind::Reasoning { .. } => {
            (unknown_type_attribute(event.event_type()).into_owned(), js_json::to_string(&Value::Object(rest(event))))
        }
    };
    (replace_forbidden(&xml_type), replace_forbidden(&body))
}

/// The fields of an event other than `type`, `iteration` and `timestamp`.
fn rest(event: &AgentEvent) -> Map<String, Value> {
    event
        .fields()
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "type" | "iteration" | "timestamp"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The `duration_ms` and `parallel_group` texts a tool result is meant to render (upstream
/// writes any non-null duration and any truthy group; here only numbers and strings have a
/// faithful attribute form), before escaping.
fn timing_attributes(event: &AgentEvent) -> (Option<String>, Option<String>) {
    let text = |key: &str, truthy_only: bool| match event.fields().get(key)? {
        Value::Number(n) if !(truthy_only && n.as_f64() == Some(0.0)) => {
            Some(replace_forbidden(&js_json::number_to_string(n)))
        }
        Value::String(s) if !(truthy_only && s.is_empty()) => Some(replace_forbidden(s)),
        _ => None,
    };
    (text("durationMs", false), text("parallelGroup", true))
}

/// Escaping character by character, as the seed's `escapeXml` defines it.
fn escape_by_definition(text: &str, mode: EscapeMode) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if mode == EscapeMode::Full => out.push_str("&quot;"),
            '\'' if mode == EscapeMode::Full => out.push_str("&apos;"),
            c if is_forbidden_char(c) => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

fn config() -> ProptestConfig {
    ProptestConfig { cases: 96, ..ProptestConfig::default() }
}

proptest! {
    #![proptest_config(config())]

    /// Texts long enough to cross the escaper's 16-byte scan and its padded last bytes, with
    /// runs of specials and clean text, appended after text already in the buffer.
    #[test]
    fn escaping_matches_the_definition(
        pieces in proptest::collection::vec(
            prop_oneof![arb_string(), "[a-z ]{0,40}", Just("\u{FFFE}\u{FFFF}&<>\"'".to_owned())],
            0..24,
        ),
        before in "[a-z]{0,3}",
        full in any::<bool>(),
    ) {
        let text = pieces.concat();
        let mode = if full { EscapeMode::Full } else { EscapeMode::Minimal };
        let mut out = before.clone();
        escape_into(&mut out, &text, mode);
        prop_assert_eq!(out, format!("{before}{}", escape_by_definition(&text, mode)));
    }

    #[test]
    fn documents_are_well_formed_with_one_event_per_element_and_ids_0_to_n(events in arb_thread(), options in arb_options()) {
        let document = serialize_thread_to_xml(&events, &options);
        let end = document.find("\n</thread>").unwrap() + "\n</thread>".len();
        let xml = &document[..end];
        prop_assert!(!xml.chars().any(is_forbidden_char));
        let mut reader = Reader::from_str(xml);
        let mut ids = Vec::new();
        let mut types = Vec::new();
        loop {
            match reader.read_event() {
                Ok(Event::Start(tag)) if tag.name().as_ref() == "event" => {
                    for attribute in tag.attributes() {
                        let attribute = attribute.unwrap();
                        let value = attribute.normalized_value(quick_xml::XmlVersion::Implicit1_0).unwrap().into_owned();
                        match attribute.key.as_ref() {
                            "id" => ids.push(value),
                            "type" => types.push(value),
                            _ => {}
                        }
                    }
                }
                Ok(Event::Eof) => break,
                Ok(_) => {}
                Err(e) => prop_assert!(false, "{e} at {}", reader.error_position()),
            }
        }
        let expected_ids: Vec<String> = (0..events.len()).map(|i| i.to_string()).collect();
        prop_assert_eq!(ids, expected_ids);
        // A standard reader turns \r\n, \r, \n and \t in attribute values into one space each.
        let expected_types: Vec<String> = events
            .iter()
            .map(|e| expected_type_and_body(e).0.replace("\r\n", " ").replace(['\t', '\n', '\r'], " "))
            .collect();
        prop_assert_eq!(types, expected_types);
        prop_assert_eq!(&document[end..], options.response_prefix.filter(|p| !p.is_empty()).map(|p| format!("\n{p}")).unwrap_or_default());
    }

    #[test]
    fn parsing_recovers_types_iterations_and_bodies(events in arb_thread(), options in arb_options()) {
        let document = serialize_thread_to_xml(&events, &options);
        let parsed = parse_thread_xml(&document).unwrap();
        prop_assert_eq!(parsed.len(), events.len());
        for (original, back) in events.iter().zip(&parsed) {
            let (xml_type, body) = expected_type_and_body(original);
            prop_assert_eq!(expected_type_and_body(back), (xml_type, body.clone()));
            prop_assert_eq!(js_json::number_to_string(back.iteration()), js_json::number_to_string(original.iteration()));
            let expected_event_type = if let EventKind::Unknown { type_name } = original.kind() {
                replace_forbidden(type_name)
            } else {
                original.event_type().to_owned()
            };
            prop_assert_eq!(back.event_type(), expected_event_type);
            match (original.kind(), back.kind()) {
                (EventKind::ToolResult { .. }, EventKind::ToolResult { result, .. }) => {
                    prop_assert_eq!(result, Some(&Value::String(body)));
                    prop_assert_eq!(timing_attributes(back), timing_attributes(original));
                }
                (EventKind::Error { recoverable: a, .. }, EventKind::Error { recoverable: b, .. }) => prop_assert_eq!(a, b),
                (EventKind::Summary { summarized_iterations: a, .. }, EventKind::Summary { summarized_iterations: b, .. }) => {
                    let js = |items: &[Value]| items.iter().map(js_json::to_string).collect::<Vec<_>>();
                    prop_assert_eq!(js(a), js(b));
                }
                _ => {}
            }
        }
    }

    #[test]
    fn render_parse_render_gives_the_same_bytes(events in arb_thread(), options in arb_options()) {
        let document = serialize_thread_to_xml(&events, &options);
        let parsed = parse_thread_document(&document).unwrap();
        let again = XmlOptions { response_prefix: parsed.response_prefix, escape: options.escape };
        prop_assert_eq!(serialize_thread_to_xml(&parsed.events, &again), document);
    }

    #[test]
    fn incremental_rendering_equals_one_shot(
        events in arb_thread(),
        cuts in proptest::collection::vec(any::<proptest::sample::Index>(), 0..6),
        options in arb_options(),
    ) {
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c.index(events.len() + 1)).collect();
        cuts.push(events.len());
        cuts.sort_unstable();
        let mut renderer = XmlRenderer::new(options.escape);
        let mut done = 0;
        for cut in cuts {
            renderer.extend(&events[done..cut]);
            done = cut;
            let at_once = XmlOptions { response_prefix: options.response_prefix.clone(), escape: options.escape };
            prop_assert_eq!(
                renderer.document(options.response_prefix.as_deref()),
                serialize_thread_to_xml(&events[..done], &at_once)
            );
        }
        prop_assert_eq!(renderer.len(), events.len());
    }

    #[test]
    fn rendering_into_a_used_buffer_equals_one_shot(
        events in arb_thread(),
        earlier in arb_thread(),
        options in arb_options(),
    ) {
        let mut out = String::new();
        XmlRenderer::render_document_into(&earlier, &XmlOptions::default(), &mut out);
        XmlRenderer::render_document_into(&events, &options, &mut out);
        prop_assert_eq!(out, serialize_thread_to_xml(&events, &options));
    }
}
