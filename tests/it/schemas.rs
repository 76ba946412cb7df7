//! The JSON Schemas of `protocol/schema/` against the server and the vectors: every registered
//! method has a schema file, every file compiles (draft 2020-12, relative `$ref`s resolved from
//! the local files), and every request, result and error in the vectors is valid.

use crate::support::vectors::{load_all, Vector, ANY};
use jsonschema::{Retrieve, Uri, Validator};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use threadkeeper::server::methods::{table, Context};
use threadkeeper::service::{Limits, ThreadService};
use threadkeeper::store::MemoryStore;

/// Notifications the connection handles itself (they are not registered methods).
const CONNECTION_NOTIFICATIONS: [&str; 3] = ["$/cancelRequest", "exit", "initialized"];

/// Params fields that hold a whole document (or a search query) in a string. What is wrong
/// inside the document (syntax, an unsupported version, a block that converts to no event, a
/// query's unbalanced quote) is -32602 with a `data.path` at or under the field, though no
/// schema of the params can see it.
const DOCUMENT_FIELDS: [(&str, &str); 5] = [
    ("turns/fromYaml", "text"),
    ("turns/fromJson", "text"),
    ("thread/import", "text"),
    ("xml/parseThread", "text"),
    ("thread/search", "query"),
];

/// Whether a -32602 error is about the inside of one of the method's document fields.
fn is_document_error(method: &str, error: &Value) -> bool {
    let Some(path) = error.pointer("/data/path").and_then(Value::as_str) else { return false };
    DOCUMENT_FIELDS.iter().any(|&(m, field)| {
        m == method && path.strip_prefix(field).is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
    })
}

/// Whether an error is about what media bytes or the store hold, which no schema can see:
/// undecodable or empty data, a type the bytes contradict, an image header out of bounds, a
/// blob the store does not hold.
fn is_media_error(method: &str, error: &Value) -> bool {
    let Some(path) = error.pointer("/data/path").and_then(Value::as_str) else { return false };
    let part_field = |path: &str| {
        path.starts_with("events[")
            && path.contains("].content[")
            && [".data", ".mediaType", ".blob"].iter().any(|f| path.ends_with(f))
    };
    match method {
        "thread/append" => part_field(path),
        "blob/put" => matches!(path, "data" | "mediaType"),
        "blob/get" | "blob/stat" => path == "blob",
        _ => false,
    }
}

fn schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol").join("schema")
}

/// The `file:` URI of the schema folder (with a trailing slash), the base of every `$ref`.
fn base_uri() -> String {
    let dir = schema_dir().canonicalize().expect("protocol/schema exists");
    format!("file://{}/", dir.display())
}

/// Serves `$ref`s from the local files, and nothing else (no network).
struct LocalFiles;

impl Retrieve for LocalFiles {
    fn retrieve(&self, uri: &Uri<String>) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        let path = uri.as_str().strip_prefix("file://").ok_or_else(|| format!("not a local schema: {uri}"))?;
        let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
        Ok(serde_json::from_str(&text)?)
    }
}

/// A validator for `reference`, relative to the schema folder (e.g. `error.json` or
/// `methods/thread.append.json#/$defs/params`).
pub(crate) fn validator(reference: &str) -> Validator {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_base_uri(base_uri())
        .with_retriever(LocalFiles)
        .build(&json!({ "$ref": reference }))
        .unwrap_or_else(|e| panic!("schema {reference} does not compile: {e}"))
}

/// Schema errors, as `instance pointer: message` lines, leaving out those about a `"<any>"`
/// placeholder of a vector (it stands for a value the vector does not pin down).
pub(crate) fn errors(validator: &Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .filter(|e| e.instance().as_ref() != &json!(ANY))
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// Schema files of one folder, by protocol name (`thread.append.json` is `thread/append`).
fn schema_files(folder: &str) -> BTreeMap<String, String> {
    std::fs::read_dir(schema_dir().join(folder))
        .unwrap_or_else(|e| panic!("protocol/schema/{folder}: {e}"))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|file| {
            let method = file.strip_suffix(".json")?.replace('.', "/");
            Some((method, format!("{folder}/{file}")))
        })
        .collect()
}

fn registered_methods() -> BTreeSet<String> {
    let service = Arc::new(ThreadService::new(Arc::new(MemoryStore::new(1)), Limits::default()));
    let table = table(Context { service, max_frame_bytes: 1024, tracing: None });
    table.names().into_iter().map(str::to_owned).collect()
}

struct MethodSchemas {
    params: Validator,
    result: Validator,
}

fn method_schemas() -> BTreeMap<String, MethodSchemas> {
    schema_files("methods")
        .into_iter()
        .map(|(method, file)| {
            let schemas = MethodSchemas {
                params: validator(&format!("{file}#/$defs/params")),
                result: validator(&format!("{file}#/$defs/result")),
            };
            (method, schemas)
        })
        .collect()
}

#[test]
fn every_registered_method_has_a_schema_file_and_no_file_is_stale() {
    let registered = registered_methods();
    let files: BTreeSet<String> = schema_files("methods").into_keys().collect();
    assert_eq!(files, registered, "protocol/schema/methods/ must hold one file per registered method");
    let notifications: BTreeSet<String> = schema_files("notifications").into_keys().collect();
    let expected: BTreeSet<String> = CONNECTION_NOTIFICATIONS.iter().map(|s| s.to_string()).collect();
    assert_eq!(notifications, expected);
}

#[test]
fn every_schema_file_compiles_with_every_definition() {
    let mut compiled = 0;
    let shared = ["agent-event.json", "stored-message.json", "thread-info.json", "thread-settings.json", "turn.json"];
    let mut files = shared.into_iter().chain(["error.json"]).map(String::from).collect::<Vec<_>>();
    files.extend(schema_files("methods").into_values());
    files.extend(schema_files("notifications").into_values());
    for file in files {
        let text = std::fs::read_to_string(schema_dir().join(&file)).unwrap();
        let schema: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema", "{file}");
        assert!(schema["title"].is_string() && schema["description"].is_string(), "{file}: title and description");
        validator(&file);
        for name in schema["$defs"].as_object().into_iter().flat_map(|defs| defs.keys()) {
            validator(&format!("{file}#/$defs/{name}"));
            compiled += 1;
        }
        if file.starts_with("methods/") {
            for def in ["params", "result"] {
                assert!(schema["$defs"].get(def).is_some(), "{file}: $defs/{def} is missing");
            }
        }
        if file.starts_with("notifications/") {
            assert!(schema["$defs"].get("params").is_some(), "{file}: $defs/params is missing");
        }
    }
    assert!(compiled >= 40, "only {compiled} definitions compiled");
}

/// What a response says about the request it answers, for schema purposes.
enum Outcome<'a> {
    Result(&'a Value),
    Error(&'a Value),
}

/// The requests (with an id) of one exchange and their responses, paired by id.
fn pairs<'a>(request: &'a Value, response: &'a Value) -> Vec<(&'a Value, Outcome<'a>)> {
    let outcome = |r: &'a Value| match r.get("result") {
        Some(result) => Outcome::Result(result),
        None => Outcome::Error(&r["error"]),
    };
    match (request, response) {
        (Value::Object(_), Value::Object(_))
            if request.get("id").is_some() && request.get("id") == response.get("id") =>
        {
            vec![(request, outcome(response))]
        }
        (Value::Array(requests), Value::Array(responses)) => requests
            .iter()
            .filter(|r| r.get("id").is_some_and(|id| !id.is_null()))
            .filter_map(|r| responses.iter().find(|a| a.get("id") == r.get("id")).map(|a| (r, outcome(a))))
            .collect(),
        _ => Vec::new(),
    }
}

/// Every error object of a response (single or batch).
fn error_objects(response: &Value) -> Vec<&Value> {
    match response {
        Value::Array(items) => items.iter().filter_map(|r| r.get("error")).collect(),
        other => other.get("error").into_iter().collect(),
    }
}

fn check_vector(
    vector: &Vector,
    methods: &BTreeMap<String, MethodSchemas>,
    error: &Validator,
    seen: &mut BTreeSet<String>,
) -> Vec<String> {
    let mut problems = Vec::new();
    for (i, exchange) in vector.exchanges.iter().enumerate() {
        let at = format!("{} exchange {i} ({})", vector.file, exchange.label());
        for e in error_objects(&exchange.response) {
            problems.extend(errors(error, e).into_iter().map(|m| format!("{at}: error{m}")));
        }
        let Some(request) = exchange.request() else { continue };
        for (request, outcome) in pairs(&request, &exchange.response) {
            let Some(method) = request["method"].as_str() else { continue };
            let Some(schemas) = methods.get(method) else { continue };
            // Absent params read as {}.
            let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
            let param_errors = errors(&schemas.params, &params);
            match outcome {
                Outcome::Result(result) => {
                    seen.insert(method.to_owned());
                    problems.extend(param_errors.iter().map(|m| format!("{at}: params{m}")));
                    problems.extend(errors(&schemas.result, result).into_iter().map(|m| format!("{at}: result{m}")));
                }
                // The schema must refuse what the server refuses as invalid params.
                Outcome::Error(e) if e["code"] == -32602 => {
                    if param_errors.is_empty() && !is_document_error(method, e) && !is_media_error(method, e) {
                        problems
                            .push(format!("{at}: the server answers -32602 but the params schema accepts {params}"));
                    }
                }
                // Envelope and lifecycle errors say nothing about params.
                Outcome::Error(e) if matches!(e["code"].as_i64(), Some(-32600 | -32601 | -32700)) => {}
                Outcome::Error(_) => problems.extend(param_errors.iter().map(|m| format!("{at}: params{m}"))),
            }
        }
    }
    problems
}

#[test]
fn vectors_are_valid_against_the_schemas() {
    let methods = method_schemas();
    let error = validator("error.json");
    let mut seen = BTreeSet::new();
    let mut problems = Vec::new();
    for vector in load_all() {
        problems.extend(check_vector(&vector, &methods, &error, &mut seen));
    }
    assert!(problems.is_empty(), "{} schema problems:\n{}", problems.len(), problems.join("\n"));
    let unexercised: Vec<&String> = methods.keys().filter(|m| !seen.contains(*m)).collect();
    assert!(unexercised.is_empty(), "methods without a successful vector exchange: {unexercised:?}");
}

#[test]
fn the_example_thread_is_valid() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join("thread.json");
    let events: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert!(events.len() >= 10);
    let event = validator("agent-event.json");
    for (i, e) in events.iter().enumerate() {
        assert_eq!(errors(&event, e), Vec::<String>::new(), "examples/thread.json event {i}");
    }
}

#[test]
fn the_event_schema_accepts_unknown_types_and_refuses_broken_known_ones() {
    let event = validator("agent-event.json");
    let valid = [
        json!({"type": "approval", "iteration": 2}),
        json!({"type": "plan", "iteration": 0.5, "timestamp": 1, "steps": ["a"]}),
        json!({"type": "tool_result", "toolCallId": "c", "result": null, "iteration": 0}),
        json!({"type": "error", "error": "e", "recoverable": false, "iteration": 0, "durationMs": 3}),
    ];
    for e in &valid {
        assert_eq!(errors(&event, e), Vec::<String>::new(), "{e}");
    }
    let invalid = [
        json!({"type": "approval"}),
        json!({"iteration": 0}),
        json!({"type": "approval", "iteration": 0, "timestamp": "now"}),
        json!({"type": "message", "role": "robot", "content": "x", "iteration": 0}),
        json!({"type": "tool_call", "toolName": "x", "toolCallId": "c", "iteration": 0}),
        json!({"type": "tool_result", "toolCallId": "c", "iteration": 0}),
        json!({"type": "summary", "summary": "s", "summarizedIterations": ["1"], "iteration": 0}),
        json!({"type": "human_input_requested", "question": "q", "choices": [1], "iteration": 0}),
        json!("message"),
    ];
    for e in &invalid {
        assert!(!errors(&event, e).is_empty(), "accepted {e}");
    }
}

#[test]
fn the_error_schema_requires_the_data_of_each_code() {
    let error = validator("error.json");
    let valid = [
        json!({"code": -32602, "message": "m", "data": {"path": "text", "reason": "missing"}}),
        json!({"code": -32001, "message": "m", "data": {"threadId": "t"}}),
        json!({"code": -32003, "message": "m", "data": {"threadId": "t", "currentVersion": 2}}),
        json!({"code": -32004, "message": "m", "data": {"limit": "maxEventsPerCall", "value": 4, "max": 3}}),
        json!({"code": -32800, "message": "request cancelled"}),
    ];
    for e in &valid {
        assert_eq!(errors(&error, e), Vec::<String>::new(), "{e}");
    }
    let invalid = [
        json!({"code": -32602, "message": "m"}),
        json!({"code": -32003, "message": "m", "data": {"threadId": "t"}}),
        json!({"code": -32004, "message": "m", "data": {"limit": "x", "value": 1}}),
        json!({"code": -32601, "message": "m", "data": {}}),
        json!({"code": -1, "message": "m"}),
    ];
    for e in &invalid {
        assert!(!errors(&error, e).is_empty(), "accepted {e}");
    }
}

#[test]
fn the_turn_schema_accepts_the_seed_examples_and_refuses_broken_turns() {
    let turn = validator("turn.json");
    let valid = [
        json!({"version": 1, "id": "turn_001", "run_id": "run_abc", "blocks": [
            {"kind": "system", "role": "system", "payload": {"text": "You are a LLM."}},
            {"kind": "user", "role": "user", "payload": {"text": "Say hi."}}], "metadata": {}, "data": {}}),
        json!({"version": 1, "id": "turn_reasoning", "blocks": [
            {"kind": "reasoning", "id": "rs_123", "payload": {"encrypted_content": "gAAAAA..."}},
            {"kind": "llm_text", "role": "assistant", "payload": {"text": "Hello!"}}]}),
        json!({"blocks": [{"kind": "web_search_call"}, {"payload": {}}], "colour": "ignored"}),
        json!({}),
    ];
    for t in &valid {
        assert_eq!(errors(&turn, t), Vec::<String>::new(), "{t}");
    }
    let invalid = [
        json!({"version": 2, "blocks": []}),
        json!({"blocks": [{"kind": 7}]}),
        json!({"blocks": [{"kind": "user", "payload": "hello"}]}),
        json!({"blocks": {"kind": "user"}}),
        json!({"version": 1, "turns": []}),
        json!("turn"),
    ];
    for t in &invalid {
        assert!(!errors(&turn, t).is_empty(), "accepted {t}");
    }
    // The written form always has version, blocks, and a kind and payload per block.
    let written = validator("turn.json#/$defs/written");
    let minimal = json!({"version": 1, "blocks": [{"kind": "x", "payload": {}}]});
    assert_eq!(errors(&written, &minimal), Vec::<String>::new());
    let incomplete = [
        json!({"blocks": []}),
        json!({"version": 1, "blocks": [{"kind": "user"}]}),
        json!({"version": 1, "id": "", "blocks": []}),
    ];
    for t in incomplete {
        assert!(!errors(&written, &t).is_empty(), "accepted {t}");
    }
}

#[test]
fn provider_goldens_are_valid_against_the_provider_schemas() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/providers");
    let mut checked = 0;
    for (suffix, definition) in [
        (".openai-chat.json", "openaiChat"),
        (".openai-responses.json", "openaiResponses"),
        (".anthropic.json", "anthropic"),
    ] {
        let validator = validator(&format!("providers.json#/$defs/{definition}"));
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if !path.to_str().unwrap().ends_with(suffix) {
                continue;
            }
            let body: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            assert_eq!(errors(&validator, &body), Vec::<String>::new(), "{}", path.display());
            checked += 1;
        }
    }
    assert!(checked >= 30, "only {checked} provider goldens");
    // The schema refuses what a provider refuses.
    let anthropic = validator("providers.json#/$defs/anthropic");
    let bad = json!({"messages":[{"role":"user","content":[{"type":"text","text":""}]}]});
    assert!(!errors(&anthropic, &bad).is_empty());
}
