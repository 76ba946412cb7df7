//! Golden and guardrail tests for turn documents (seed 004).

use serde_json::{json, Map, Value};
use threadkeeper::turns::*;
use threadkeeper::AgentEvent;

fn golden(name: &str) -> String {
    let path = format!("{}/tests/golden/turns/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn load(name: &str) -> Turn {
    let (turn, warnings) = from_yaml(&golden(name)).unwrap();
    assert_eq!(warnings, Vec::<String>::new(), "{name}");
    turn
}

fn yaml(turn: &Turn) -> String {
    to_yaml(turn, &Options::default()).unwrap()
}

fn map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn block(kind: BlockKind, role: &str, payload: Value) -> Block {
    Block { role: role.into(), payload: map(payload), ..Block::new(kind) }
}

fn thread_events() -> Vec<AgentEvent> {
    AgentEvent::list_from_values(serde_json::from_str(&golden("thread_events.json")).unwrap()).unwrap()
}

/// Events as JSON text: equal strings mean equal values *and* equal key order.
fn events_text(events: &[AgentEvent]) -> String {
    serde_json::to_string(&events.iter().map(AgentEvent::to_value).collect::<Vec<_>>()).unwrap()
}

/// Refused by a counted limit at the first count past it: the reader did no more work than the
/// limit allows, plus at most `slack` (the largest single item it counts), however fast or slow
/// the machine. Tests check work done, never time taken.
fn assert_stopped_at_the_limit(error: &TurnError, slack: usize) {
    let TurnError::Limit { limit, max, value } = error else { panic!("not a limit: {error}") };
    assert!(*value > *max && *value <= max + slack.max(1), "{limit}: counted to {value}, past the limit {max}");
}

/// What the expansion limit lets `text` build (values, or bytes of strings): proportional to
/// its size, so refusing at this budget bounds the work by the input.
fn expansion_budget(text: &str) -> usize {
    Limits::default().max_expansion * text.len() + 1024
}

// ---- canonical files: load → save is byte-identical ----

#[test]
fn canonical_yaml_files_save_byte_identical() {
    for name in ["full.yaml", "full_redacted_no_data.yaml", "thread_export.yaml"] {
        assert_eq!(yaml(&load(name)), golden(name), "{name}");
    }
    for name in ["suite.yaml", "fixture.yaml"] {
        let (document, warnings) = from_yaml_document(&golden(name)).unwrap();
        assert!(warnings.is_empty(), "{name}: {warnings:?}");
        assert_eq!(to_yaml_document(&document, &Options::default()).unwrap(), golden(name), "{name}");
    }
}

#[test]
fn canonical_json_file_saves_byte_identical() {
    let (turn, warnings) = from_json(&golden("full.json")).unwrap();
    assert!(warnings.is_empty());
    assert_eq!(to_json(&turn, &Options::default()).unwrap(), golden("full.json"));
}

#[test]
fn hand_written_file_canonicalizes_to_the_golden_form() {
    let (turn, _) = from_yaml(&golden("full_input.yaml")).unwrap();
    assert_eq!(yaml(&turn), golden("full.yaml"));
    assert_eq!(to_json(&turn, &Options::default()).unwrap(), golden("full.json"));
}

// ---- the seed's examples ----

#[test]
fn seed_plain_chat_example_loads() {
    let (turn, warnings) = from_yaml(&golden("seed_plain_chat.yaml")).unwrap();
    assert!(warnings.is_empty());
    let expected = Turn {
        run_id: "run_abc".into(),
        blocks: vec![
            block(BlockKind::System, "system", json!({"text": "You are a LLM."})),
            block(BlockKind::User, "user", json!({"text": "Say hi."})),
        ],
        ..Turn::new("turn_001")
    };
    assert_eq!(turn, expected);
    assert_eq!(
        yaml(&turn),
        "version: 1\nid: turn_001\nrun_id: run_abc\nblocks:\n- kind: system\n  role: system\n  payload:\n    text: You are a LLM.\n\
         - kind: user\n  role: user\n  payload:\n    text: Say hi.\n"
    );
}

#[test]
fn seed_json_example_loads_like_the_yaml_one() {
    let (from_json_text, warnings) = from_json(&golden("seed_plain_chat.json")).unwrap();
    assert!(warnings.is_empty());
    let (mut from_yaml_text, _) = from_yaml(&golden("seed_plain_chat.yaml")).unwrap();
    from_yaml_text.run_id.clear(); // the JSON example has no run_id
    assert_eq!(from_json_text, from_yaml_text);
}

#[test]
fn seed_reasoning_example_loads() {
    let turn = load("seed_reasoning.yaml");
    assert_eq!(turn.id, "turn_reasoning");
    let expected_reasoning =
        Block { id: "rs_123".into(), ..block(BlockKind::Reasoning, "", json!({"encrypted_content": "gAAAAA..."})) };
    assert_eq!(
        turn.blocks,
        vec![expected_reasoning, block(BlockKind::LlmText, "assistant", json!({"text": "Hello!"}))]
    );
}

#[test]
fn seed_tools_example_loads() {
    let turn = load("seed_tools.yaml");
    assert_eq!(
        turn.blocks,
        vec![
            block(BlockKind::ToolCall, "", json!({"id": "fc_1", "name": "search", "args": {"q": "golang"}})),
            block(BlockKind::ToolUse, "", json!({"id": "fc_1", "result": {"hits": 10}})),
        ]
    );
}

#[test]
fn json_parity_for_every_yaml_file() {
    for name in [
        "seed_plain_chat.yaml",
        "seed_reasoning.yaml",
        "seed_tools.yaml",
        "full_input.yaml",
        "full.yaml",
        "thread_export.yaml",
    ] {
        let (turn, _) = from_yaml(&golden(name)).unwrap();
        let (again, warnings) = from_json(&to_json(&turn, &Options::default()).unwrap()).unwrap();
        assert!(warnings.is_empty());
        assert_eq!(again, turn, "{name}");
        assert_eq!(yaml(&again), yaml(&turn), "{name}");
    }
}

// ---- redaction and options ----

#[test]
fn redaction_on_and_off() {
    let turn = load("full.yaml");
    let plain = yaml(&turn);
    assert!(plain.contains("encrypted_content: gAAAAABoZ1x2cipherTEXTcipherTEXTcipherTEXT==\n"));
    assert!(!plain.contains("redacted"));
    let redacted = to_yaml(&turn, &Options { redact_encrypted_content: true, omit_data: true }).unwrap();
    assert_eq!(redacted, golden("full_redacted_no_data.yaml"));
    assert!(redacted.contains("encrypted_content: gAAAAA-********************************-XT==\n"));
    assert!(redacted.contains("\n  redacted: true\n"));
    assert!(!redacted.contains("\ndata:"));
}

#[test]
fn redaction_note_only_when_something_was_redacted() {
    let turn = load("seed_tools.yaml");
    let options = Options { redact_encrypted_content: true, omit_data: false };
    assert_eq!(to_yaml(&turn, &options).unwrap(), yaml(&turn));
}

#[test]
fn options_use_camel_case_on_the_wire() {
    let options: Options = serde_json::from_str(r#"{"redactEncryptedContent": true, "omitData": true}"#).unwrap();
    assert_eq!(options, Options { redact_encrypted_content: true, omit_data: true });
    assert_eq!(serde_json::from_str::<Options>("{}").unwrap(), Options::default());
    assert_eq!(
        serde_json::to_string(&Options::default()).unwrap(),
        r#"{"redactEncryptedContent":false,"omitData":false}"#
    );
}

// ---- guardrails ----

#[test]
fn unknown_kind_maps_to_other_and_round_trips() {
    let text = "version: 1\nblocks:\n- kind: citation\n  payload:\n    url: u\n";
    let (turn, warnings) = from_yaml(text).unwrap();
    assert!(warnings.is_empty());
    assert_eq!(turn.blocks[0].kind, BlockKind::Other);
    assert_eq!(turn.blocks[0].metadata, map(json!({"serde.kind_raw": "citation"})));
    assert_eq!(turn.blocks[0].kind_name(), "citation");
    assert_eq!(yaml(&turn), text);
    assert!(to_json(&turn, &Options::default()).unwrap().contains("\"kind\": \"citation\""));
}

#[test]
fn kind_raw_naming_a_known_kind_is_kept_as_metadata() {
    // Writing `kind: user` would turn the block into a user block.
    let text = "version: 1\nblocks:\n- kind: other\n  payload: {}\n  metadata:\n    serde.kind_raw: user\n";
    let (turn, _) = from_yaml(text).unwrap();
    assert_eq!(turn.blocks[0].kind, BlockKind::Other);
    assert_eq!(yaml(&turn), text);
}

#[test]
fn block_kinds_are_the_seven_strings() {
    let names: Vec<&str> = BlockKind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(names, ["user", "llm_text", "tool_call", "tool_use", "system", "reasoning", "other"]);
    for kind in BlockKind::ALL {
        assert_eq!(BlockKind::from_name(kind.as_str()), Some(kind));
        assert_eq!(serde_json::to_string(&kind).unwrap(), format!("\"{}\"", kind.as_str()));
    }
    assert_eq!(BlockKind::from_name("LLM_TEXT"), None);
}

#[test]
fn llm_text_without_role_gets_assistant() {
    let (turn, _) = from_yaml("blocks:\n- kind: llm_text\n  payload: {text: hi}\n").unwrap();
    assert_eq!(turn.blocks[0].role, "assistant");
    let (turn, _) = from_yaml("blocks:\n- kind: llm_text\n  role: ''\n").unwrap();
    assert_eq!(turn.blocks[0].role, "assistant");
}

#[test]
fn missing_payload_is_empty_map() {
    let (turn, _) = from_yaml("blocks:\n- kind: reasoning\n- kind: user\n  role: user\n  payload:\n").unwrap();
    assert!(turn.blocks[0].payload.is_empty());
    assert!(turn.blocks[1].payload.is_empty());
    assert_eq!(
        yaml(&turn),
        "version: 1\nblocks:\n- kind: reasoning\n  payload: {}\n- kind: user\n  role: user\n  payload: {}\n"
    );
}

#[test]
fn extra_payload_and_metadata_keys_are_preserved() {
    let text = "version: 1\nblocks:\n- kind: user\n  role: user\n  payload:\n    custom: {b: 1, a: [x]}\n    text: t\n  metadata:\n    anything: 1\n";
    let (turn, _) = from_yaml(text).unwrap();
    assert_eq!(turn.blocks[0].payload["custom"], json!({"b": 1, "a": ["x"]}));
    assert_eq!(turn.blocks[0].metadata["anything"], json!(1));
    assert_eq!(
        yaml(&turn),
        "version: 1\nblocks:\n- kind: user\n  role: user\n  payload:\n    custom:\n      b: 1\n      a:\n      - x\n    text: t\n  metadata:\n    anything: 1\n"
    );
}

#[test]
fn namespaced_metadata_keys_pass_through_untouched() {
    let turn = load("full.yaml");
    assert_eq!(turn.metadata["geppetto.session_id@v1"], json!("sess_1"));
    assert_eq!(turn.blocks[5].metadata["geppetto.usage@v1"], json!({"output_tokens": 7, "input_tokens": 20}));
}

#[test]
fn top_level_keys_sorted_nested_order_kept() {
    let turn = load("full_input.yaml");
    // As read: the file's order.
    assert_eq!(turn.blocks[3].payload.keys().collect::<Vec<_>>(), ["name", "id", "args", "item_id"]);
    let text = yaml(&turn);
    assert!(text.contains("  payload:\n    args:\n      zeta: 1\n      alpha:\n        y:\n        - 3\n        - 2\n        - 1\n        b: '2'\n      q: golang\n    id: fc_1\n"));
}

#[test]
fn unknown_top_level_fields_warn() {
    let text = "version: 1\nid: t\ncolour: red\nblocks:\n- kind: user\n  role: user\n  size: 3\n  payload: {text: x}\nextra: [1]\n";
    let (turn, warnings) = from_yaml(text).unwrap();
    assert_eq!(turn.id, "t");
    assert_eq!(
        warnings,
        ["blocks[0].size: unknown field ignored", "colour: unknown field ignored", "extra: unknown field ignored"]
    );
    assert!(!yaml(&turn).contains("colour"));
}

#[test]
fn scalar_ids_are_read_as_text_with_a_warning() {
    let (turn, warnings) = from_yaml("id: 123\nblocks:\n- kind: user\n  role: user\n  id: true\n").unwrap();
    assert_eq!((turn.id.as_str(), turn.blocks[0].id.as_str()), ("123", "true"));
    assert_eq!(
        warnings,
        ["id: number 123 read as the string \"123\"", "blocks[0].id: boolean true read as the string \"true\""]
    );
}

#[test]
fn missing_kind_reads_as_other_with_a_warning() {
    let (turn, warnings) = from_yaml("blocks:\n- payload: {text: x}\n").unwrap();
    assert_eq!(turn.blocks[0].kind, BlockKind::Other);
    assert_eq!(warnings, ["blocks[0].kind: missing, read as other"]);
}

#[test]
fn wrong_types_are_errors_naming_the_field() {
    let cases = [
        ("blocks: {}\n", "blocks: expected a sequence, found object"),
        ("blocks:\n- kind: user\n  payload: [1]\n", "blocks[0].payload: expected a mapping, found array"),
        ("blocks:\n- 3\n", "blocks[0]: expected a mapping, found number"),
        ("blocks:\n- kind: [user]\n", "blocks[0].kind: expected a string, found array"),
        ("metadata: text\n", "metadata: expected a mapping, found string"),
        ("- a\n", "expected a mapping at the document root, found array"),
        ("", "expected a mapping at the document root, found null"),
        ("version: '1'\n", "version: expected an integer, found string"),
    ];
    for (text, message) in cases {
        assert_eq!(from_yaml(text).unwrap_err().to_string(), message, "{text:?}");
    }
}

#[test]
fn version_absent_means_1() {
    let (turn, _) = from_yaml("id: t\n").unwrap();
    assert_eq!(turn.version, 1);
    assert_eq!(yaml(&turn), "version: 1\nid: t\nblocks: []\n");
}

#[test]
fn higher_version_is_refused() {
    let error = from_yaml("version: 2\nid: t\n").unwrap_err();
    assert_eq!(error, TurnError::UnsupportedVersion { found: "2".into(), supported: 1 });
    assert_eq!(error.to_string(), "unsupported turn document version 2: this reader supports version 1");
    assert_eq!(
        from_json(r#"{"version": 0}"#).unwrap_err().to_string(),
        "unsupported turn document version 0: this reader supports version 1"
    );
    assert!(matches!(from_yaml_document("version: 3\nturns: []\n"), Err(TurnError::UnsupportedVersion { .. })));
    assert!(matches!(from_yaml_document("turns:\n- version: 2\n"), Err(TurnError::UnsupportedVersion { .. })));
    // Nor is such a turn written.
    let turn = Turn { version: 2, ..Turn::new("t") };
    assert_eq!(
        to_yaml(&turn, &Options::default()).unwrap_err(),
        TurnError::UnsupportedVersion { found: "2".into(), supported: 1 }
    );
    assert!(serde_json::to_value(&turn).is_err());
}

#[test]
fn serialization_does_not_mutate_input() {
    let mut turn = load("full.yaml");
    turn.blocks[5].role.clear(); // an llm_text without role, as a caller may build it
    turn.metadata.insert("z".into(), json!(1)); // unsorted
    let before = turn.clone();
    let before_text = serde_json::to_string(&to_value(&turn, &Options::default()).unwrap()).unwrap();
    let options = Options { redact_encrypted_content: true, omit_data: true };
    to_yaml(&turn, &options).unwrap();
    to_json(&turn, &options).unwrap();
    to_value(&turn, &options).unwrap();
    assert_eq!(turn, before);
    assert_eq!(turn.metadata.keys().next_back().map(String::as_str), Some("z"));
    assert!(turn.blocks[5].role.is_empty());
    assert_eq!(serde_json::to_string(&to_value(&turn, &Options::default()).unwrap()).unwrap(), before_text);
}

#[test]
fn normalize_gives_what_a_save_load_cycle_gives() {
    let mut turn = load("full_input.yaml");
    turn.blocks[5].role.clear();
    let (reloaded, _) = from_yaml(&yaml(&turn)).unwrap();
    normalize(&mut turn);
    assert_eq!(turn, reloaded);
    assert_eq!(
        serde_json::to_string(&to_value(&turn, &Options::default()).unwrap()).unwrap(),
        serde_json::to_string(&to_value(&reloaded, &Options::default()).unwrap()).unwrap()
    );
}

#[test]
fn json_output_is_pretty_with_two_spaces_and_a_final_newline() {
    let turn = Turn { blocks: vec![block(BlockKind::User, "user", json!({"text": "hi"}))], ..Turn::new("t") };
    assert_eq!(
        to_json(&turn, &Options::default()).unwrap(),
        "{\n  \"version\": 1,\n  \"id\": \"t\",\n  \"blocks\": [\n    {\n      \"kind\": \"user\",\n      \"role\": \"user\",\n      \"payload\": {\n        \"text\": \"hi\"\n      }\n    }\n  ]\n}\n"
    );
}

#[test]
fn turn_serde_impls_use_the_canonical_form() {
    let turn = load("full.yaml");
    assert_eq!(serde_json::to_value(&turn).unwrap(), to_value(&turn, &Options::default()).unwrap());
    let back: Turn = serde_json::from_value(serde_json::to_value(&turn).unwrap()).unwrap();
    assert_eq!(back, turn);
    let error = serde_json::from_value::<Turn>(json!({"version": 9})).unwrap_err().to_string();
    assert_eq!(error, "unsupported turn document version 9: this reader supports version 1");
}

// ---- document shapes ----

#[test]
fn geppetto_fixture_shape_loads() {
    let (document, _) = from_yaml_document(&golden("fixture.yaml")).unwrap();
    let TurnDocument::Fixture { turn, followups } = document else { panic!("not a fixture") };
    assert_eq!(turn.id, "fx");
    assert_eq!(turn.blocks.len(), 2);
    assert_eq!(followups.iter().map(|b| b.kind).collect::<Vec<_>>(), [BlockKind::ToolCall, BlockKind::LlmText]);
    // The single-turn reader returns the fixture's turn and says what it left out.
    let (single, warnings) = from_yaml(&golden("fixture.yaml")).unwrap();
    assert_eq!(single, turn);
    assert_eq!(
        warnings,
        ["followups: 2 block(s) not part of the turn were dropped; read the whole fixture as a document"]
    );
}

#[test]
fn suite_shape_loads() {
    let (document, _) = from_yaml_document(&golden("suite.yaml")).unwrap();
    let TurnDocument::Suite(turns) = document else { panic!("not a suite") };
    assert_eq!(turns.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["t1", "t2"]);
    assert_eq!(turns[1].run_id, "r2");
    assert!(turns.iter().all(|t| t.version == 1));
    assert_eq!(
        from_yaml(&golden("suite.yaml")).unwrap_err().to_string(),
        "turns: this is a suite of 2 turn(s), not a single turn; read it as a document"
    );
}

#[test]
fn single_turn_reads_as_a_turn_document() {
    let (document, _) = from_yaml_document(&golden("full.yaml")).unwrap();
    assert_eq!(document, TurnDocument::Turn(load("full.yaml")));
    let json_text = to_json_document(&document, &Options::default()).unwrap();
    assert_eq!(json_text, golden("full.json"));
    assert_eq!(from_json_document(&json_text).unwrap().0, document);
}

// ---- validation ----

fn problems(turn: &Turn, strict: bool) -> Vec<String> {
    validate(turn, strict).into_iter().map(|p| format!("{}: {}", p.path, p.message)).collect()
}

#[test]
fn valid_files_have_no_problems() {
    for name in ["seed_plain_chat.yaml", "seed_reasoning.yaml", "seed_tools.yaml", "full.yaml", "thread_export.yaml"] {
        assert_eq!(problems(&load(name), false), Vec::<String>::new(), "{name}");
    }
    assert_eq!(problems(&load("seed_tools.yaml"), true), Vec::<String>::new());
}

#[test]
fn validation_lists_every_problem_with_its_path() {
    let text = "blocks:\n\
        - {kind: system, role: user, payload: {text: 3}}\n\
        - {kind: user, payload: {text: hi, images: x}}\n\
        - {kind: llm_text, role: user}\n\
        - {kind: tool_call, role: assistant, payload: {name: f}}\n\
        - {kind: tool_use, payload: {id: 7}}\n\
        - {kind: gadget}\n";
    let (turn, _) = from_yaml(text).unwrap();
    let always = [
        "blocks[0].role: must be \"system\" for a system block, found \"user\"",
        "blocks[0].payload.text: expected a string, found number",
        "blocks[1].role: must be \"user\" for a user block, missing",
        "blocks[1].payload.images: expected an array, found string",
        "blocks[2].role: must be \"assistant\" for a llm_text block, found \"user\"",
        "blocks[4].payload.id: expected a string, found number",
    ];
    assert_eq!(problems(&turn, false), always);
    let strict = [
        always[0],
        always[1],
        always[2],
        always[3],
        always[4],
        "blocks[3].role: should be empty: a tool_call block has no role",
        "blocks[3].payload.id: missing",
        "blocks[3].payload.args: missing",
        always[5],
        "blocks[4].payload.result: missing",
        "blocks[5].kind: unknown kind \"gadget\"",
    ];
    assert_eq!(problems(&turn, true), strict);
}

#[test]
fn strict_validation_wants_a_role_on_llm_text() {
    let turn = Turn { blocks: vec![block(BlockKind::LlmText, "", json!({"text": "x"}))], ..Turn::default() };
    assert_eq!(problems(&turn, false), Vec::<String>::new());
    assert_eq!(problems(&turn, true), ["blocks[0].role: missing: should be \"assistant\""]);
    let turn = Turn { version: 2, ..Turn::default() };
    assert_eq!(problems(&turn, false), ["version: unsupported version 2: expected 1"]);
}

// ---- threads ↔ turns ----

#[test]
fn thread_export_matches_the_golden_file() {
    assert_eq!(yaml(&events_to_turn(&thread_events(), "thread_7")), golden("thread_export.yaml"));
}

#[test]
fn thread_export_imports_back_to_the_same_events() {
    let events = thread_events();
    let turn = events_to_turn(&events, "thread_7");
    assert_eq!(events_text(&turn_to_events(&turn).unwrap()), events_text(&events));
    let (from_yaml_text, _) = from_yaml(&yaml(&turn)).unwrap();
    assert_eq!(events_text(&turn_to_events(&from_yaml_text).unwrap()), events_text(&events));
    let (from_json_text, _) = from_json(&to_json(&turn, &Options::default()).unwrap()).unwrap();
    assert_eq!(events_text(&turn_to_events(&from_json_text).unwrap()), events_text(&events));
}

#[test]
fn geppetto_turn_imports_as_events_and_back() {
    let turn = load("full.yaml");
    let events = turn_to_events(&turn).unwrap();
    let types: Vec<&str> = events.iter().map(AgentEvent::event_type).collect();
    // Only the plain system text block has an event form; the rest carry ids, extra payload
    // keys or metadata, or have no event kind, and travel whole.
    assert_eq!(types, ["message", "turn_block", "turn_block", "turn_block", "turn_block", "turn_block", "turn_block"]);
    assert_eq!(
        serde_json::to_string(&events[0].to_value()).unwrap(),
        r#"{"type":"message","role":"system","content":"You are terse.\nAnswer in one line.","iteration":0}"#
    );
    assert_eq!(
        serde_json::to_string(&events[2].to_value()).unwrap(),
        r#"{"type":"turn_block","block":{"id":"rs_1","kind":"reasoning","payload":{"encrypted_content":"gAAAAABoZ1x2cipherTEXTcipherTEXTcipherTEXT==","item_id":"rs_1","summary":[{"type":"summary_text","text":"Looked for tutorials."}]}},"iteration":0}"#
    );
    let back = events_to_turn(&events, "turn_full");
    let mut expected = turn.blocks.clone();
    expected[0].metadata.insert("threadkeeper.iteration@v1".into(), json!(0));
    assert_eq!(back.blocks, expected);
    // And the events survive the turn they make, through text.
    let (reloaded, _) = from_yaml(&yaml(&back)).unwrap();
    assert_eq!(events_text(&turn_to_events(&reloaded).unwrap()), events_text(&events));
}

#[test]
fn reasoning_blocks_survive_turn_round_trips() {
    let turn = load("seed_reasoning.yaml");
    let events = turn_to_events(&turn).unwrap();
    assert_eq!(events[0].event_type(), "turn_block");
    assert_eq!(events[1].event_type(), "message");
    let back = events_to_turn(&events, &turn.id);
    assert_eq!(back.blocks[0], turn.blocks[0]);
    assert_eq!(from_yaml(&yaml(&back)).unwrap().0.blocks[0], turn.blocks[0]);
}

#[test]
fn unknown_kinds_survive_events_round_trips() {
    let turn = load("full.yaml");
    let citation = &turn.blocks[6];
    assert_eq!(citation.kind_name(), "citation");
    let events = turn_to_events(&Turn { blocks: vec![citation.clone()], ..Turn::default() }).unwrap();
    let back = events_to_turn(&events, "t");
    assert_eq!(&back.blocks[0], citation);
    assert!(yaml(&back).contains("- kind: citation\n"));
}

#[test]
fn a_turn_block_event_that_is_not_a_wrap_stays_an_event() {
    let events = thread_events();
    let last = events.last().unwrap();
    assert_eq!(last.event_type(), "turn_block");
    let block = event_to_block(last);
    assert_eq!(block.kind, BlockKind::Other);
    assert_eq!(block.metadata["threadkeeper.event_type@v1"], json!("turn_block"));
}

#[test]
fn an_edited_export_is_an_error_naming_the_block() {
    let (mut turn, _) = from_yaml(&golden("thread_export.yaml")).unwrap();
    turn.blocks[2].metadata.insert("geppetto.note@v1".into(), json!("x"));
    assert_eq!(
        turn_to_events(&turn).unwrap_err().to_string(),
        "blocks[2].metadata.geppetto.note@v1: has no place in the event; the block is not an exported tool_call event"
    );
    let (mut turn, _) = from_yaml(&golden("thread_export.yaml")).unwrap();
    turn.blocks[5].payload.shift_remove("recoverable");
    assert_eq!(
        turn_to_events(&turn).unwrap_err().to_string(),
        "blocks[5]: describes an invalid \"error\" event: field recoverable: missing"
    );
    let (mut turn, _) = from_yaml(&golden("thread_export.yaml")).unwrap();
    turn.blocks[0].payload.insert("text".into(), json!(5));
    assert_eq!(
        turn_to_events(&turn).unwrap_err().to_string(),
        "blocks[0].payload.text: expected a string, found number"
    );
    let (mut turn, _) = from_yaml(&golden("thread_export.yaml")).unwrap();
    turn.blocks[4].metadata.insert("threadkeeper.key_order@v1".into(), json!(["type"]));
    assert_eq!(
        turn_to_events(&turn).unwrap_err().to_string(),
        "blocks[4].metadata.threadkeeper.key_order@v1: is not a list of exactly the event's keys"
    );
}

// ---- hostile input ----

fn laughs(levels: usize, width: usize) -> String {
    let mut text = String::from("a0: &a0 [lol]\n");
    for i in 1..levels {
        text.push_str(&format!("a{i}: &a{i} [{}]\n", vec![format!("*a{}", i - 1); width].join(", ")));
    }
    text
}

#[test]
fn billion_laughs_is_refused_within_a_budget_proportional_to_the_input() {
    for text in [laughs(10, 10), laughs(40, 2), laughs(3, 2000)] {
        let error = from_yaml(&text).unwrap_err();
        // Every alias use builds "lol" (3 bytes) or a key of a few bytes.
        assert_stopped_at_the_limit(&error, 8);
        assert!(
            matches!(error, TurnError::Limit { limit: "max_expansion", max, .. } if max == expansion_budget(&text)),
            "{error}"
        );
        assert!(error.to_string().contains("YAML aliases repeat too much"), "{error}");
    }
}

#[test]
fn aliased_huge_scalar_is_refused_within_a_budget_proportional_to_the_input() {
    let text = format!("a: &a \"{}\"\nb: [{}]\n", "x".repeat(1 << 20), vec!["*a"; 100].join(","));
    let error = from_yaml(&text).unwrap_err();
    // At most one copy of the scalar past the budget: 5 of the 100 uses, not all of them.
    assert_stopped_at_the_limit(&error, 1 << 20);
    assert!(
        matches!(error, TurnError::Limit { limit: "max_expansion", max, .. } if max == expansion_budget(&text)),
        "{error}"
    );
    assert!(expansion_budget(&text) < 5 << 20);
}

#[test]
fn small_alias_use_is_fine() {
    let (turn, _) = from_yaml("blocks:\n- &b {kind: user, role: user, payload: {text: hi}}\n- *b\n").unwrap();
    assert_eq!(turn.blocks.len(), 2);
    assert_eq!(turn.blocks[0], turn.blocks[1]);
}

#[test]
fn deep_flow_nesting_is_refused_at_the_first_level_too_deep() {
    for text in [
        "[".repeat(100_000),
        "{a: ".repeat(1_000_000),
        format!("blocks:\n- kind: user\n  payload: {{args: {}}}\n", "[".repeat(500)),
    ] {
        let error = from_yaml(&text).unwrap_err();
        // Counted to 101 of up to a million levels: the reader stopped at the first level too
        // deep, whatever the size of the rest.
        assert_stopped_at_the_limit(&error, 1);
        assert_eq!(error, TurnError::Limit { limit: "max_depth", max: 100, value: 101 });
        assert_eq!(error.to_string(), "document exceeds the max_depth limit of 100 (found 101)");
    }
}

#[test]
fn deep_block_nesting_is_refused_at_the_first_level_too_deep() {
    let text: String = (0..1000).map(|i| format!("{}- \n", " ".repeat(i))).collect();
    let error = from_yaml(&text).unwrap_err();
    assert_stopped_at_the_limit(&error, 1);
    assert_eq!(error, TurnError::Limit { limit: "max_depth", max: 100, value: 101 });
}

#[test]
fn deep_json_nesting_is_refused_before_reading_past_the_limit() {
    let text = format!("{{\"data\": {}{}}}", "[".repeat(100_000), "]".repeat(100_000));
    let error = from_json(&text).unwrap_err();
    assert_stopped_at_the_limit(&error, 1);
    assert_eq!(error, TurnError::Limit { limit: "max_depth", max: 100, value: 101 });
    // Text past level 101 is never read: garbage there changes nothing.
    let poisoned = format!("{{\"data\": {}{} not JSON", "[".repeat(101), '\u{0}');
    assert_eq!(from_json(&poisoned).unwrap_err(), error);
}

#[test]
fn nesting_up_to_the_limit_is_accepted() {
    // Root mapping (1) → data (2) → 98 more levels.
    let text = format!("data:\n  x: {}{}\n", "[".repeat(98), "]".repeat(98));
    assert!(from_yaml(&text).is_ok());
    let text = format!("data:\n  x: {}{}\n", "[".repeat(99), "]".repeat(99));
    assert!(from_yaml(&text).is_err());
}

/// `max_input_bytes` measures what a document holds (its value as compact JSON), so the same
/// value is refused alike in YAML and in JSON, and layout costs nothing. (A server's lower YAML
/// text limit is looked at before the text is parsed: `parse` tests it.)
#[test]
fn a_document_holding_more_than_the_limit_is_refused_however_it_is_laid_out() {
    let long = "x".repeat(17 << 20);
    let held = format!("{{\"id\":\"{long}\"}}").len();
    let error = from_yaml(&format!("id: \"{long}\"\n")).unwrap_err();
    assert_eq!(error, TurnError::Limit { limit: "max_input_bytes", max: 16 << 20, value: held });
    let error = from_json(&format!("{{\n  \"id\": \"{long}\"\n}}\n")).unwrap_err();
    assert_eq!(error, TurnError::Limit { limit: "max_input_bytes", max: 16 << 20, value: held });
    let short = "x".repeat(15 << 20);
    let indented = format!("{{\n{}\"id\": \"{short}\"\n}}\n", " ".repeat(2 << 20));
    assert!(indented.len() > 16 << 20);
    assert_eq!(from_json(&indented).unwrap().0.id, short);
}

#[test]
fn limits_are_adjustable() {
    let limits = Limits { max_input_bytes: 64, ..Limits::default() };
    let error = read_document(&golden("suite.yaml"), Format::Yaml, &limits).unwrap_err();
    assert!(matches!(error, TurnError::Limit { limit: "max_input_bytes", max: 64, .. }));
    let limits = Limits { max_values: 10, ..Limits::default() };
    let error = read_document(&golden("suite.yaml"), Format::Yaml, &limits).unwrap_err();
    assert_eq!(error, TurnError::Limit { limit: "max_values", max: 10, value: 11 });
}

#[test]
fn tags_duplicates_and_multiple_documents_are_refused() {
    assert_eq!(
        from_yaml("id: !secret x\n").unwrap_err().to_string(),
        "not a valid document: id: unsupported YAML tag !secret at line 1 column 5"
    );
    assert!(from_yaml("id: a\nid: b\n").unwrap_err().to_string().contains("duplicate key \"id\""));
    assert!(from_json(r#"{"id": "a", "id": "b"}"#).unwrap_err().to_string().contains("duplicate key \"id\""));
    assert!(from_yaml("id: a\n---\nid: b\n").unwrap_err().to_string().contains("more than one document"));
    assert!(matches!(from_json("{\"id\": \"a\"} x"), Err(TurnError::Syntax { .. })));
    assert!(matches!(from_yaml("x: .nan\n"), Err(TurnError::Syntax { .. })));
}

// ---- thread/import then thread/export gives the document back ----

/// The turns a document holds as `thread/import` reads them: a fixture's followups join its turn.
fn importable_turns(text: &str, format: Format) -> Vec<Turn> {
    match read_document(text, format, &Limits::default()) {
        Ok((TurnDocument::Turn(turn), _)) => vec![turn],
        Ok((TurnDocument::Fixture { mut turn, followups }, _)) => {
            turn.blocks.extend(followups);
            vec![turn]
        }
        Ok((TurnDocument::Suite(turns), _)) => turns,
        Err(_) => Vec::new(),
    }
}

/// Import then export through the library's mapping; `None` when the import is refused.
fn through_a_thread(turn: &Turn) -> Option<Turn> {
    let parts = turn_to_thread(turn).ok()?;
    Some(thread_to_turn(&turn.id, &parts.events, parts.settings, &parts.metadata.unwrap_or_default()))
}

/// Every turn document text in the golden files and in the protocol vectors' requests.
fn every_document() -> Vec<(String, String, Format)> {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut documents = Vec::new();
    for entry in std::fs::read_dir(format!("{root}/tests/golden/turns")).unwrap() {
        let path = entry.unwrap().path();
        let format = match path.extension().and_then(|e| e.to_str()) {
            Some("yaml") => Format::Yaml,
            Some("json") if !path.ends_with("thread_events.json") => Format::Json,
            _ => continue,
        };
        documents.push((path.display().to_string(), std::fs::read_to_string(&path).unwrap(), format));
    }
    for entry in std::fs::read_dir(format!("{root}/protocol/vectors")).unwrap() {
        let path = entry.unwrap().path();
        let Ok(vector) = serde_json::from_str::<Value>(&std::fs::read_to_string(&path).unwrap()) else { continue };
        for exchange in vector["exchanges"].as_array().into_iter().flatten() {
            let params = &exchange["request"]["params"];
            let format = match (exchange["request"]["method"].as_str(), params["format"].as_str()) {
                (Some("thread/import"), Some("yaml")) | (Some("turns/fromYaml"), _) => Format::Yaml,
                (Some("thread/import"), Some("json")) | (Some("turns/fromJson"), _) => Format::Json,
                _ => continue,
            };
            if let Some(text) = params["text"].as_str() {
                documents.push((format!("{} {}", path.display(), exchange["request"]["id"]), text.to_owned(), format));
            }
        }
    }
    documents
}

#[test]
fn every_document_exports_back_as_imported() {
    let mut checked = 0;
    for (name, text, format) in every_document() {
        for turn in importable_turns(&text, format) {
            let Some(back) = through_a_thread(&turn) else { continue };
            // Writing normalizes (sorted keys, defaults filled): compare written forms.
            assert_eq!(yaml(&back), yaml(&turn), "{name}");
            checked += 1;
        }
    }
    assert!(checked >= 15, "only {checked} documents checked");
}

#[test]
fn turn_fields_live_in_the_thread_metadata() {
    let (turn, _) = from_yaml(
        "id: t\nrun_id: r1\nblocks:\n- kind: user\n  role: user\n  payload: {text: hi}\n- kind: reasoning\n  id: rs\n  \
         payload: {}\n- kind: llm_text\n  payload: {text: yo}\nmetadata:\n  geppetto.session_id@v1: s\n  \
         threadkeeper.metadata@v1: {owner: me}\ndata:\n  k: [1]\n",
    )
    .unwrap();
    let parts = turn_to_thread(&turn).unwrap();
    assert_eq!(
        Value::Object(parts.metadata.clone().unwrap()),
        json!({"owner": "me", "threadkeeper.turn@v1": {
            "run_id": "r1", "metadata": {"geppetto.session_id@v1": "s"}, "data": {"k": [1]},
            "unmarked_blocks": [[0, 1], [2, 3]]
        }})
    );
    // A thread without the record exports as before; a record that is not one stays metadata.
    let odd = map(json!({"threadkeeper.turn@v1": {"run_id": 5}}));
    let exported = thread_to_turn("t", &parts.events, None, &odd);
    assert_eq!(exported.run_id, "");
    assert_eq!(exported.metadata["threadkeeper.metadata@v1"], json!({"threadkeeper.turn@v1": {"run_id": 5}}));
    assert_eq!(exported.blocks[0].metadata["threadkeeper.iteration@v1"], json!(0));
    // The thread's own metadata may not claim the record's key.
    let (clash, _) =
        from_yaml("metadata:\n  threadkeeper.metadata@v1: {threadkeeper.turn@v1: {}}\n  geppetto.x@v1: 1\n").unwrap();
    assert_eq!(
        turn_to_thread(&clash).unwrap_err().to_string(),
        "metadata.threadkeeper.metadata@v1.threadkeeper.turn@v1: is reserved for the turn's own fields (run_id, metadata, data)"
    );
}
