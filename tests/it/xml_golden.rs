//! Golden files for the thread XML (seed 000 + rendering decisions 1–7), and one test per
//! acceptance criterion of seed 000.
//!
//! Each case is `tests/golden/xml/NAME.events.json` (`{"options": XmlOptions, "events": [...]}`)
//! and `NAME.xml`, the exact expected bytes. `UPDATE_GOLDEN=1 cargo test --test it xml_golden`
//! rewrites the `.xml` files; review every changed byte before committing: the goldens are the spec.

use quick_xml::events::Event;
use quick_xml::Reader;
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use threadkeeper::{
    escape_xml, parse_thread_document, serialize_thread_to_xml, AgentEvent, EscapeMode, XmlOptions, XmlRenderer,
};

const CASES: &[&str] = &[
    "dangling_tool_results",
    "empty_thread",
    "every_event_type",
    "extra_unknown_fields",
    "long_body",
    "nasty_strings",
    "nasty_strings_minimal_escape",
    "non_string_tool_results",
    "numbers_in_args",
    "parallel_tool_calls",
    "repeated_tool_call_id",
    "response_prefix",
    "response_prefix_empty",
    "seed_000_example",
    "tool_result_timing",
    "unknown_event_types",
    "unknown_types_named_like_xml_types",
];

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/xml")
}

struct Case {
    name: String,
    options: XmlOptions,
    events: Vec<AgentEvent>,
    expected: String,
}

fn load(name: &str) -> Case {
    let input_path = golden_dir().join(format!("{name}.events.json"));
    let input: Value = serde_json::from_str(&fs::read_to_string(&input_path).unwrap()).unwrap();
    let options: XmlOptions = serde_json::from_value(input["options"].clone()).unwrap();
    let events = AgentEvent::list_from_values(input["events"].as_array().unwrap().clone()).unwrap();
    let expected = fs::read_to_string(golden_dir().join(format!("{name}.xml"))).unwrap_or_default();
    Case { name: name.to_owned(), options, events, expected }
}

fn cases() -> Vec<Case> {
    CASES.iter().map(|name| load(name)).collect()
}

fn render(events: &Value) -> String {
    let events = AgentEvent::list_from_values(events.as_array().unwrap().clone()).unwrap();
    serialize_thread_to_xml(&events, &XmlOptions::default())
}

/// The part of a rendered document before the response prefix.
fn without_prefix(document: &str) -> &str {
    let end = document.find("\n</thread>").map_or("<thread>\n</thread>".len(), |i| i + "\n</thread>".len());
    &document[..end]
}

#[test]
fn goldens_match() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut mismatches = Vec::new();
    for case in cases() {
        let actual = serialize_thread_to_xml(&case.events, &case.options);
        if update {
            fs::write(golden_dir().join(format!("{}.xml", case.name)), &actual).unwrap();
        } else if actual != case.expected {
            let at = actual.bytes().zip(case.expected.bytes()).take_while(|(a, b)| a == b).count();
            mismatches.push(format!("{}: first difference at byte {at}", case.name));
        }
    }
    assert!(mismatches.is_empty(), "golden mismatches (UPDATE_GOLDEN=1 rewrites):\n{}", mismatches.join("\n"));
}

#[test]
fn golden_directory_holds_exactly_the_listed_cases() {
    let mut found: Vec<String> =
        fs::read_dir(golden_dir()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    found.sort();
    let mut expected: Vec<String> =
        CASES.iter().flat_map(|name| [format!("{name}.events.json"), format!("{name}.xml")]).collect();
    expected.sort();
    assert_eq!(found, expected);
}

#[test]
fn goldens_read_back_to_the_same_document() {
    for case in cases() {
        let doc = parse_thread_document(&case.expected).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        assert_eq!(doc.events.len(), case.events.len(), "{}", case.name);
        let options = XmlOptions { response_prefix: doc.response_prefix, escape: case.options.escape };
        assert_eq!(serialize_thread_to_xml(&doc.events, &options), case.expected, "{}", case.name);
    }
}

#[test]
fn incremental_rendering_matches_the_goldens() {
    for case in cases() {
        let mut renderer = XmlRenderer::new(case.options.escape);
        for event in &case.events {
            renderer.push(event);
        }
        assert_eq!(renderer.document(case.options.response_prefix.as_deref()), case.expected, "{}", case.name);
    }
}

/// Acceptance: "Output is valid XML (parseable by a standard XML parser)". quick-xml checks the
/// grammar and tag nesting; it does not check characters, so that is checked here too.
#[test]
fn output_is_valid_xml() {
    for case in cases() {
        let document = without_prefix(&case.expected);
        let bad = document.chars().find(
            |&c| matches!(c, '\u{0}'..='\u{8}' | '\u{B}' | '\u{C}' | '\u{E}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}'),
        );
        assert_eq!(bad, None, "{}: character XML 1.0 forbids", case.name);
        let mut reader = Reader::from_str(document);
        let (mut depth, mut events, mut roots) = (0, 0, 0);
        loop {
            match reader.read_event().unwrap_or_else(|e| panic!("{}: {e}", case.name)) {
                Event::Start(tag) => {
                    match (depth, tag.name().as_ref()) {
                        (0, "thread") => roots += 1,
                        (1, "event") => events += 1,
                        (d, name) => panic!("{}: <{name}> at depth {d}", case.name),
                    }
                    for attribute in tag.attributes() {
                        attribute.unwrap_or_else(|e| panic!("{}: {e}", case.name));
                    }
                    depth += 1;
                }
                Event::End(_) => depth -= 1,
                Event::Text(text) => assert!(depth == 2 || text.trim().is_empty(), "{}: stray text", case.name),
                Event::GeneralRef(reference) => {
                    assert_eq!(depth, 2, "{}", case.name);
                    let known = reference.is_char_ref() || ["lt", "gt", "amp", "quot", "apos"].contains(&&*reference);
                    assert!(known, "{}: &{};", case.name, &*reference);
                }
                Event::Eof => break,
                other => panic!("{}: unexpected {other:?}", case.name),
            }
        }
        assert_eq!((roots, events, depth), (1, case.events.len(), 0), "{}", case.name);
    }
}

/// The example document of seed 000, copied from the seed. Its JSON body has bare quotes, which
/// is the `minimal` escape mode (rendering decision 6).
#[test]
fn seed_000_example_is_reproduced_byte_for_byte() {
    let seed_example = r#"<thread>
  <event type="human" id="0" iteration="0">What is 2+2?</event>
  <event type="tool_input" id="1" name="calculator" iteration="1">{"expression":"2+2"}</event>
  <event type="tool_output" id="2" name="calculator" status="success" iteration="1">4</event>
  <event type="ai" id="3" iteration="1">The answer is 4.</event>
  <event type="completion" id="4" iteration="1">The answer is 4.</event>
</thread>"#;
    let case = load("seed_000_example");
    assert_eq!(case.options.escape, EscapeMode::Minimal);
    assert_eq!(serialize_thread_to_xml(&case.events, &case.options), seed_example);
    assert_eq!(case.expected, seed_example);
}

#[test]
fn escape_xml_handles_the_five_specials() {
    assert_eq!(escape_xml("&"), "&amp;");
    assert_eq!(escape_xml("<"), "&lt;");
    assert_eq!(escape_xml(">"), "&gt;");
    assert_eq!(escape_xml("\""), "&quot;");
    assert_eq!(escape_xml("'"), "&apos;");
    assert_eq!(escape_xml("a<b>&\"c\"'d' &amp;"), "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos; &amp;amp;");
    assert_eq!(escape_xml("plain text, é 😀"), "plain text, é 😀");
}

#[test]
fn empty_thread_is_open_and_close_tag() {
    assert_eq!(render(&json!([])), "<thread>\n</thread>");
}

#[test]
fn each_event_type_maps_to_its_xml_type() {
    let doc = render(&json!([
        {"type":"tool_call","toolName":"t","toolCallId":"c","args":{},"iteration":0},
        {"type":"tool_result","toolCallId":"c","result":"r","iteration":0},
        {"type":"error","error":"e","recoverable":false,"iteration":0},
        {"type":"human_input_requested","question":"q","iteration":0},
        {"type":"human_input_received","response":"r","iteration":0},
        {"type":"completion","result":"done","verified":true,"iteration":0},
        {"type":"summary","summarizedIterations":[],"summary":"s","iteration":0},
    ]));
    assert_eq!(
        doc,
        r#"<thread>
  <event type="tool_input" id="0" name="t" iteration="0">{}</event>
  <event type="tool_output" id="1" name="t" status="success" iteration="0">r</event>
  <event type="error" id="2" iteration="0" recoverable="false">e</event>
  <event type="human_input_requested" id="3" iteration="0">q</event>
  <event type="human_input_received" id="4" iteration="0">r</event>
  <event type="completion" id="5" iteration="0">done</event>
  <event type="summary" id="6" iteration="0" summarizedIterations="">s</event>
</thread>"#
    );
}

#[test]
fn message_role_dispatch() {
    let doc = render(&json!([
        {"type":"message","role":"user","content":"u","iteration":0},
        {"type":"message","role":"assistant","content":"a","iteration":0},
        {"type":"message","role":"system","content":"s","iteration":0},
    ]));
    assert_eq!(
        doc,
        "<thread>\n  <event type=\"human\" id=\"0\" iteration=\"0\">u</event>\n  <event type=\"ai\" id=\"1\" iteration=\"0\">a</event>\n  <event type=\"system\" id=\"2\" iteration=\"0\">s</event>\n</thread>"
    );
}

#[test]
fn tool_call_args_are_json_in_the_body() {
    let doc = render(&json!([
        {"type":"tool_call","toolName":"calc","toolCallId":"c","args":{"z":[1.0,null],"a":{"s":"x\ny"}},"iteration":2},
    ]));
    assert_eq!(
        doc,
        "<thread>\n  <event type=\"tool_input\" id=\"0\" name=\"calc\" iteration=\"2\">{&quot;z&quot;:[1,null],&quot;a&quot;:{&quot;s&quot;:&quot;x\\ny&quot;}}</event>\n</thread>"
    );
}

#[test]
fn tool_result_name_resolves_from_matching_call() {
    let doc = render(&json!([
        {"type":"tool_call","toolName":"search","toolCallId":"c1","args":{},"iteration":1},
        {"type":"tool_call","toolName":"read","toolCallId":"c2","args":{},"iteration":1},
        {"type":"tool_result","toolCallId":"c1","result":"hits","iteration":1},
    ]));
    assert!(
        doc.contains("\n  <event type=\"tool_output\" id=\"2\" name=\"search\" status=\"success\" iteration=\"1\">hits</event>\n"),
        "{doc}"
    );
}

#[test]
fn tool_result_name_falls_back_to_unknown() {
    let doc = render(&json!([
        {"type":"tool_result","toolCallId":"nowhere","result":"r","iteration":0},
    ]));
    assert_eq!(
        doc,
        "<thread>\n  <event type=\"tool_output\" id=\"0\" name=\"unknown\" status=\"success\" iteration=\"0\">r</event>\n</thread>"
    );
}

#[test]
fn error_has_recoverable_attribute() {
    let doc = render(&json!([
        {"type":"error","error":"a","recoverable":true,"iteration":0},
        {"type":"error","error":"b","recoverable":false,"iteration":1},
    ]));
    assert_eq!(
        doc,
        "<thread>\n  <event type=\"error\" id=\"0\" iteration=\"0\" recoverable=\"true\">a</event>\n  <event type=\"error\" id=\"1\" iteration=\"1\" recoverable=\"false\">b</event>\n</thread>"
    );
}

#[test]
fn summary_has_comma_separated_iterations() {
    let doc = render(&json!([
        {"type":"summary","summarizedIterations":[1,2,3],"summary":"s","iteration":4},
    ]));
    assert_eq!(
        doc,
        "<thread>\n  <event type=\"summary\" id=\"0\" iteration=\"4\" summarizedIterations=\"1,2,3\">s</event>\n</thread>"
    );
}

#[test]
fn response_prefix_after_closing_tag() {
    let events =
        AgentEvent::list_from_values(vec![json!({"type":"message","role":"user","content":"x","iteration":0})])
            .unwrap();
    let options =
        |prefix: Option<&str>| XmlOptions { response_prefix: prefix.map(str::to_owned), ..XmlOptions::default() };
    let lines = "<thread>\n  <event type=\"human\" id=\"0\" iteration=\"0\">x</event>\n</thread>";
    assert_eq!(serialize_thread_to_xml(&events, &options(Some("I will now"))), format!("{lines}\nI will now"));
    assert_eq!(serialize_thread_to_xml(&events, &options(Some(""))), lines);
    assert_eq!(serialize_thread_to_xml(&events, &options(None)), lines);
    assert_eq!(serialize_thread_to_xml(&[], &options(Some("<p>"))), "<thread>\n</thread>\n<p>");
}

#[test]
fn attribute_values_and_text_are_escaped() {
    let doc = render(&json!([
        {"type":"tool_call","toolName":"a&<>\"'b","toolCallId":"c","args":{},"iteration":0},
        {"type":"tool_result","toolCallId":"c","result":"<&>\"'","iteration":0},
        {"type":"x\"<&>'","iteration":0},
    ]));
    assert_eq!(
        doc,
        "<thread>\n  <event type=\"tool_input\" id=\"0\" name=\"a&amp;&lt;&gt;&quot;&apos;b\" iteration=\"0\">{}</event>\n  <event type=\"tool_output\" id=\"1\" name=\"a&amp;&lt;&gt;&quot;&apos;b\" status=\"success\" iteration=\"0\">&lt;&amp;&gt;&quot;&apos;</event>\n  <event type=\"x&quot;&lt;&amp;&gt;&apos;\" id=\"2\" iteration=\"0\">{}</event>\n</thread>"
    );
}
