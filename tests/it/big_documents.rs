//! Turn documents as big as `maxDocumentBytes` (16 MiB, measured as what a document holds:
//! its value as compact JSON, whatever its layout) in YAML and in JSON, over the real protocol
//! with the default limits: whatever `thread/export` writes, `thread/import` reads back as the
//! very same events — a thread built by appends, and one imported at the limit from compact
//! JSON, whose indented export is longer than the limit. What would not be read back is
//! refused at export, naming the limit.

#[path = "../../benches/support/long_run.rs"]
mod long_run;

use crate::support::{Server, Wire};
use long_run::{document, event};
use serde_json::{json, Value};
use threadkeeper::turns::Format;

const MAX_DOCUMENT_BYTES: usize = 16 << 20;

/// What the run's first `count` events' document holds: its value as compact JSON.
fn held_bytes(count: usize) -> usize {
    let value: Value = serde_json::from_str(&document(count, Format::Json)).unwrap();
    serde_json::to_string(&value).unwrap().len()
}

/// As many of the run's events as a document holding just under the limit has (later events'
/// numbers are longer: 3% is left for them).
fn events_at_the_limit() -> Vec<Value> {
    let sample = 1000;
    let count = MAX_DOCUMENT_BYTES / 100 * 97 * sample / held_bytes(sample);
    (0..count).map(event).collect()
}

fn format_name(format: Format) -> &'static str {
    match format {
        Format::Yaml => "yaml",
        Format::Json => "json",
    }
}

/// Exports `thread` in `format`, imports the text as `copy` and checks the events are the same;
/// the text's length.
fn exports_and_imports_back(server: &mut Server, thread: &str, format: Format, copy: &str) -> usize {
    let name = format_name(format);
    let text = server.ok("thread/export", json!({"threadId": thread, "format": name}))["text"].take();
    let size = text.as_str().unwrap().len();
    server.ok("thread/import", json!({"text": text, "format": name, "threadId": copy}));
    let original = server.ok("thread/events", json!({"threadId": thread}))["events"].take();
    let imported = server.ok("thread/events", json!({"threadId": copy}))["events"].take();
    assert!(imported == original, "{thread} in {name}: the events differ");
    server.ok("thread/delete", json!({"threadId": copy}));
    size
}

#[test]
fn a_thread_at_the_limit_exports_and_imports_back_the_same_in_yaml_and_json() {
    let events = events_at_the_limit();
    let mut server = Server::start(Wire::Ndjson, "memory");
    server.ok("thread/open", json!({"threadId": "big"}));
    for chunk in events.chunks(40_000) {
        server.ok("thread/append", json!({"threadId": "big", "events": chunk}));
    }
    let held = held_bytes(events.len());
    assert!(held > 15 << 20 && held <= MAX_DOCUMENT_BYTES, "{held} bytes held");
    let yaml = exports_and_imports_back(&mut server, "big", Format::Yaml, "copy-yaml");
    let json = exports_and_imports_back(&mut server, "big", Format::Json, "copy-json");
    // The indented JSON is longer than the limit: its layout is not what is measured.
    assert!(json > MAX_DOCUMENT_BYTES && yaml > 15 << 20, "yaml {yaml}, json {json} bytes");
    server.stop();
}

/// A compact JSON document just under the limit (as another program may write one): its
/// export, indented, is longer than the limit, and imports back all the same, in both formats.
#[test]
fn a_compact_document_imported_at_the_limit_exports_and_imports_back() {
    let events = events_at_the_limit();
    let mut server = Server::start(Wire::Ndjson, "memory");
    let text = document(events.len(), Format::Json);
    let compact = serde_json::to_string(&serde_json::from_str::<Value>(&text).unwrap()).unwrap();
    assert!(compact.len() > 15 << 20 && compact.len() <= MAX_DOCUMENT_BYTES, "{} bytes", compact.len());
    server.ok("thread/import", json!({"text": compact, "format": "json", "threadId": "imported"}));
    for format in [Format::Json, Format::Yaml] {
        let size = exports_and_imports_back(&mut server, "imported", format, "again");
        if format == Format::Json {
            assert!(size > MAX_DOCUMENT_BYTES, "{size} bytes");
        }
    }
    server.stop();
}

/// Over a server's document limits, export says so instead of writing what import would refuse;
/// under them, a thread of more events than one append takes exports and imports back.
#[test]
fn an_export_that_would_not_import_back_is_refused_naming_the_limit() {
    let mut cmd = crate::support::serve(Some("memory"));
    cmd.args(["--max-document-bytes", "100000", "--max-events-per-call", "100"]);
    let mut server = Server::start_command(Wire::Ndjson, &mut cmd);
    server.ok("thread/open", json!({"threadId": "many"}));
    let events: Vec<Value> = (0..120).map(event).collect();
    for chunk in events.chunks(100) {
        server.ok("thread/append", json!({"threadId": "many", "events": chunk}));
    }
    for format in [Format::Yaml, Format::Json] {
        exports_and_imports_back(&mut server, "many", format, "many-copy");
    }
    let more: Vec<Value> = (120..400).map(event).collect();
    for chunk in more.chunks(100) {
        server.ok("thread/append", json!({"threadId": "many", "events": chunk}));
    }
    for format in [Format::Yaml, Format::Json] {
        let error = server.err("thread/export", json!({"threadId": "many", "format": format_name(format)}));
        assert_eq!(error["code"], -32004, "{error}");
        assert_eq!(
            (error["data"]["limit"].as_str(), error["data"]["max"].as_u64()),
            (Some("maxDocumentBytes"), Some(100_000))
        );
        assert!(error["data"]["value"].as_u64().unwrap() > 100_000, "{error}");
        let message = error["message"].as_str().unwrap();
        assert!(message.starts_with("limit exceeded: the thread's document would not import back: "), "{message}");
    }
    server.stop();
}

/// The text sizes of a `count`-event document in YAML and in JSON.
fn document_bytes(count: usize) -> (usize, usize) {
    (document(count, Format::Yaml).len(), document(count, Format::Json).len())
}

/// What importing a 16 MiB document costs the whole server, at its peak: the request's frame,
/// its text, what the reader builds, the stored events and the thread's state, all counted by
/// the kernel (`VmHWM`, the peak resident size) on a server that did nothing else.
#[test]
fn importing_a_16_mib_document_peaks_within_10_times_its_size_in_the_server() {
    let sample = 1000;
    let (yaml, json) = document_bytes(sample);
    for (format, sample_bytes) in [(Format::Yaml, yaml), (Format::Json, json)] {
        let name = serde_json::to_value(format).unwrap();
        let name = name.as_str().unwrap();
        let text = document(MAX_DOCUMENT_BYTES / 100 * 97 * sample / sample_bytes, format);
        let size = text.len();
        assert!(size > 15 << 20 && size <= MAX_DOCUMENT_BYTES, "{name}: {size} bytes");
        let mut server = Server::start(Wire::Ndjson, "memory");
        let imported = server.ok("thread/import", json!({"text": text, "format": name, "threadId": "big"}));
        assert!(imported["eventCount"].as_u64() > Some(30_000), "{imported}");
        let peak = crate::support::peak_resident_bytes(server.pid());
        let ratio = peak as f64 / size as f64;
        assert!(ratio <= 10.0, "{name}: the server peaked at {} MiB, {ratio:.1}x the {size}-byte document", peak >> 20);
        server.stop();
    }
}

#[test]
fn the_document_limits_are_flags_of_serve() {
    let mut cmd = crate::support::serve(Some("memory"));
    cmd.args(["--max-document-bytes", "300", "--max-document-yaml-bytes", "200", "--max-document-values", "40"]);
    cmd.args(["--max-document-depth", "4", "--max-document-string-bytes", "100", "--max-document-expansion", "2"]);
    let mut server = Server::start_command(Wire::Ndjson, &mut cmd);
    let turn = |text: &str| format!("id: t\nblocks:\n- kind: user\n  payload: {{text: {text:?}}}\n");
    let limit = |server: &mut Server, method: &str, text: String| {
        let error = server.err(method, json!({"text": text}));
        assert_eq!(error["code"], -32004, "{error}");
        error["data"].clone()
    };
    // Within every limit, YAML and JSON read.
    server.ok("turns/fromYaml", json!({"text": turn("hi")}));
    server.ok(
        "turns/fromJson",
        json!({"text": r#"{"id": "t", "blocks": [{"kind": "user", "payload": {"text": "hi"}}]}"#}),
    );
    let long = turn(&"x".repeat(200));
    let data = limit(&mut server, "turns/fromYaml", long);
    assert_eq!((data["limit"].as_str(), data["max"].as_u64()), (Some("maxDocumentYamlBytes"), Some(200)));
    // What a document holds is measured, not its text: 320 bytes of numbers are too many, and
    // the same few values laid out over 1,000 bytes are not.
    let numbers = vec!["123456789012345"; 20].join(",");
    let json_text = format!(r#"{{"id": "t", "blocks": [], "metadata": {{"a": [{numbers}]}}}}"#);
    assert_eq!(limit(&mut server, "turns/fromJson", json_text)["limit"], "maxDocumentBytes");
    let spaced =
        format!(r#"{{"id": "t",{} "blocks": [{{"kind": "user", "payload": {{"text": "hi"}}}}]}}"#, " ".repeat(1000));
    server.ok("turns/fromJson", json!({"text": spaced}));
    let deep = "id: t\nmetadata: {a: {b: {c: {d: 1}}}}\n".to_owned();
    assert_eq!(limit(&mut server, "turns/fromYaml", deep)["limit"], "maxDocumentDepth");
    let many = format!("id: t\nmetadata: {{{}}}\n", (0..22).map(|i| format!("k{i}: 1")).collect::<Vec<_>>().join(", "));
    assert_eq!(limit(&mut server, "turns/fromYaml", many)["limit"], "maxDocumentValues");
    let strings = format!("id: t\nmetadata: {{a: {0:?}, b: {0:?}}}\n", "y".repeat(60));
    assert_eq!(limit(&mut server, "turns/fromYaml", strings)["limit"], "maxDocumentStringBytes");
    // thread/import reads within the same limits.
    let error = server.err("thread/import", json!({"text": turn(&"x".repeat(200)), "format": "yaml"}));
    assert_eq!(error["data"]["limit"], "maxDocumentYamlBytes");
    server.stop();

    // No expansion: what a document builds is bounded by 1,024 values and string bytes.
    let mut cmd = crate::support::serve(Some("memory"));
    cmd.args(["--max-document-expansion", "0"]);
    let mut server = Server::start_command(Wire::Ndjson, &mut cmd);
    let aliases = format!(
        "a: &a [{}]\nb: &b [{}]\nc: [{}]\n",
        ["x"; 10].join(", "),
        ["*a"; 10].join(", "),
        ["*b"; 20].join(", ")
    );
    let data = limit(&mut server, "turns/fromYaml", aliases);
    assert_eq!((data["limit"].as_str(), data["max"].as_u64()), (Some("maxDocumentExpansion"), Some(1024)));
    server.stop();
}
