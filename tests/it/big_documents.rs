//! A turn document as big as `maxDocumentBytes` (16 MiB) in YAML and in JSON: whatever
//! `thread/export` writes, `thread/import` reads back as the very same events, over the real
//! protocol.

#[path = "../../benches/support/long_run.rs"]
mod long_run;

use crate::support::{Server, Wire};
use long_run::{document, event};
use serde_json::{json, Value};
use threadkeeper::turns::Format;

const MAX_DOCUMENT_BYTES: usize = 16 << 20;

/// The larger of the thread's YAML and JSON documents, as export writes them.
fn document_bytes(count: usize) -> (usize, usize) {
    (document(count, Format::Yaml).len(), document(count, Format::Json).len())
}

#[test]
fn a_16_mib_thread_exports_and_imports_back_the_same_in_yaml_and_json() {
    let sample = 1000;
    let (yaml, json) = document_bytes(sample);
    let mut server = Server::start(Wire::Ndjson, "memory");
    for (format, sample_bytes) in [(Format::Yaml, yaml), (Format::Json, json)] {
        let name = serde_json::to_value(format).unwrap();
        let name = name.as_str().unwrap();
        // As many events as fit this form's document under the limit (later events' numbers
        // are longer: 3% is left for them).
        let count = MAX_DOCUMENT_BYTES / 100 * 97 * sample / sample_bytes;
        let events: Vec<Value> = (0..count).map(event).collect();
        let thread = format!("big-{name}");
        server.ok("thread/open", json!({"threadId": thread}));
        for chunk in events.chunks(40_000) {
            server.ok("thread/append", json!({"threadId": thread, "events": chunk}));
        }
        let text = server.ok("thread/export", json!({"threadId": thread, "format": name}))["text"].take();
        let size = text.as_str().unwrap().len();
        assert!(size > 15 << 20 && size <= MAX_DOCUMENT_BYTES, "{name}: {size} bytes");
        let copy = format!("copy-{name}");
        server.ok("thread/import", json!({"text": text, "format": name, "threadId": copy}));
        let original = server.ok("thread/events", json!({"threadId": thread}))["events"].take();
        let imported = server.ok("thread/events", json!({"threadId": copy}))["events"].take();
        assert_eq!(original.as_array().map(Vec::len), Some(count));
        assert!(imported == original, "{name}: the events differ");
        server.ok("thread/delete", json!({"threadId": thread}));
        server.ok("thread/delete", json!({"threadId": copy}));
    }
    server.stop();
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
    let json_text = format!(r#"{{"id": "t", "blocks": [], "metadata": {{"a": "{}"}}}}"#, "x".repeat(260));
    assert_eq!(limit(&mut server, "turns/fromJson", json_text)["limit"], "maxDocumentBytes");
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
