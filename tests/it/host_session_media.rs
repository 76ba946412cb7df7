//! Media in agent hosts' session files: Claude Code's pasted images, screenshots and PDFs (each
//! screenshot written twice, in the `tool_result` and in `toolUseResult`) and Codex's
//! `input_image` data URLs become blob parts, each blob stored once and no kept line holding its
//! bytes; export → import gives the same events; a part that cannot be read fails the import
//! naming its line and field, storing nothing; Claude Code's redacted thinking goes back to
//! Anthropic (golden file).
//!
//! `UPDATE_GOLDEN=1 cargo test --test it host_session_media` rewrites the golden file.

use crate::support::{refused_claude_code_import, serve, Server, Wire, ANSWER_TIMEOUT};
use base64::Engine as _;
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use threadkeeper::media::BlobId;

const CLAUDE_CODE: &str = "claude-code/screenshots-synthetic-2.0.76.jsonl";
const CODEX: &str = "codex/screenshots-synthetic-0.58.0.jsonl";

fn fixture(path: &str) -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/host-sessions").join(path)).unwrap()
}

fn lines(text: &str) -> Vec<Value> {
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Every text in `lines` that gives media bytes (an Anthropic block's base64 `source.data`,
/// `toolUseResult.file.base64`, a `data:` URL), with the id of the blob of those bytes.
pub(crate) fn media_texts(lines: &[Value]) -> HashMap<String, String> {
    fn walk(value: &Value, out: &mut HashMap<String, String>) {
        match value {
            Value::Object(fields) => {
                let base64 = match (fields.get("type"), fields.get("data"), fields.get("base64")) {
                    (Some(t), Some(Value::String(data)), _) if t == "base64" => Some(data),
                    (_, _, Some(Value::String(data))) => Some(data),
                    _ => None,
                };
                if let Some(data) = base64 {
                    if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(data) {
                        out.insert(data.clone(), BlobId::of(&bytes).as_str().to_owned());
                    }
                }
                fields.values().for_each(|v| walk(v, out));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::String(text) => {
                if let Some((_, payload)) = text.strip_prefix("data:").and_then(|rest| rest.split_once(";base64,")) {
                    if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(payload) {
                        out.insert(text.clone(), BlobId::of(&bytes).as_str().to_owned());
                    }
                }
            }
            _ => {}
        }
    }
    let mut out = HashMap::new();
    lines.iter().for_each(|line| walk(line, &mut out));
    out
}

/// `value` with each string `copies` names replaced by `{"blob": ID}`, as a kept line has it.
pub(crate) fn with_blob_refs(value: Value, copies: &HashMap<String, String>) -> Value {
    match value {
        Value::String(text) => match copies.get(&text) {
            Some(id) => json!({"blob": id}),
            None => Value::String(text),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(|v| with_blob_refs(v, copies)).collect()),
        Value::Object(fields) => {
            Value::Object(fields.into_iter().map(|(k, v)| (k, with_blob_refs(v, copies))).collect())
        }
        other => other,
    }
}

/// The media parts of the events' contents.
fn media_parts(events: &[Value]) -> Vec<Value> {
    let mut parts = Vec::new();
    for event in events {
        if let Some(content) = event["content"].as_array() {
            parts.extend(content.iter().filter(|p| p["type"] != "text").cloned());
        }
    }
    parts
}

/// Imports `path` as `format`, and checks every media part is a blob part (or a URL), that the
/// blobs are the file's distinct images, stored once each, that no event holds their bytes, and
/// that export → import gives the same events. Gives the events.
fn import_and_check(server: &mut Server, path: &str, format: &str, thread_id: &str, urls: usize) -> Vec<Value> {
    let text = fixture(path);
    let copies = media_texts(&lines(&text));
    let distinct: HashSet<&String> = copies.values().collect();
    let result = server.ok("thread/import", json!({"text": text, "format": format, "threadId": thread_id}));
    assert_eq!(result["threadId"], thread_id);
    let events = server.ok("thread/events", json!({"threadId": thread_id}))["events"].as_array().unwrap().clone();
    let parts = media_parts(&events);
    let blobs: HashSet<String> = parts.iter().filter_map(|p| p["blob"].as_str().map(str::to_owned)).collect();
    assert_eq!(parts.iter().filter(|p| p.get("url").is_some()).count(), urls, "{path}: URL parts");
    assert!(parts.iter().all(|p| p.get("blob").is_some() || p.get("url").is_some()), "{path}: {parts:?}");
    assert!(parts.iter().all(|p| p.get("data").is_none()), "{path}: {parts:?}");
    assert_eq!(blobs.iter().collect::<HashSet<_>>(), distinct, "{path}: one blob per distinct image");
    for id in &blobs {
        let stat = server.ok("blob/stat", json!({"blob": id}));
        let part = parts.iter().find(|p| p["blob"] == *id).unwrap();
        assert_eq!((&stat["size"], &stat["mediaType"]), (&part["size"], &part["mediaType"]), "{id}");
    }
    // No event, kept lines and items included, holds the bytes again.
    let stored = serde_json::to_string(&events).unwrap();
    for data in copies.keys() {
        assert!(!stored.contains(data.as_str()), "{path}: bytes kept in an event: {}…", &data[..40.min(data.len())]);
    }
    for format in ["yaml", "json"] {
        let exported = server.ok("thread/export", json!({"threadId": thread_id, "format": format}));
        let again = format!("{thread_id}.{format}");
        server.ok("thread/import", json!({"text": exported["text"], "format": format, "threadId": again}));
        let back = server.ok("thread/events", json!({"threadId": again}));
        assert_eq!(back["events"].as_array().unwrap(), &events, "{path}: export as {format} → import");
    }
    events
}

#[test]
fn claude_code_screenshots_are_blob_parts_stored_once() {
    let mut server = Server::start(Wire::Ndjson, "memory");
    let events = import_and_check(&mut server, CLAUDE_CODE, "claude-code", "shots", 1);
    let message = |uuid: &str| events.iter().find(|e| e["claudeCode"]["uuid"] == uuid).unwrap().clone();
    // A pasted screenshot and the text beside it: one user message of parts, in order.
    let pasted = message("u1");
    assert_eq!(pasted["type"], "message");
    let kinds: Vec<&str> = pasted["content"].as_array().unwrap().iter().map(|p| p["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["text", "image"]);
    assert_eq!((pasted["content"][1]["width"].as_u64(), pasted["content"][1]["height"].as_u64()), (Some(3), Some(2)));
    // The screenshot tool's result: its content parts; `toolUseResult` names the same blob.
    let shot = message("u2");
    assert_eq!(shot["type"], "tool_result");
    assert!(shot.get("result").is_none());
    let blob = shot["content"][1]["blob"].clone();
    assert_eq!(shot["claudeCode"]["toolUseResult"][1]["source"]["data"], json!({"blob": blob}));
    // The Read tool's image: `toolUseResult.file.base64` names the blob the part names.
    let read = message("u3");
    assert_eq!(read["claudeCode"]["toolUseResult"]["file"]["base64"], json!({"blob": read["content"][0]["blob"]}));
    assert_eq!(read["claudeCode"]["toolUseResult"]["file"]["originalSize"], 73);
    // A PDF is a file part.
    let pdf = message("u4");
    assert_eq!(
        (&pdf["content"][0]["type"], &pdf["content"][0]["mediaType"]),
        (&json!("file"), &json!("application/pdf"))
    );
    // Two images, a URL, text, the first screenshot again: one message of their parts.
    let mixed = message("u5");
    let kinds: Vec<&str> = mixed["content"].as_array().unwrap().iter().map(|p| p["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["image", "image", "text", "image"]);
    assert_eq!(mixed["content"][1]["url"], "https://example.com/mockup.png");
    assert_eq!(mixed["content"][3]["blob"], pasted["content"][1]["blob"]);
    // Redacted thinking: a reasoning event of Anthropic's, which its render gives back.
    let redacted = events.iter().find(|e| e["type"] == "reasoning").unwrap();
    assert_eq!(
        (&redacted["provider"], &redacted["model"]),
        (&json!("anthropic"), &json!("claude-sonnet-4-5-20250929"))
    );
    assert!(redacted["redactedData"].as_str().unwrap().starts_with("EmwKAhgB"));
    let mut rendered = server.ok("thread/render", json!({"threadId": "shots", "format": "anthropic"}));
    rendered.as_object_mut().unwrap().shift_remove("version");
    let text = serde_json::to_string_pretty(&rendered).unwrap() + "\n";
    assert!(text.contains("\"redacted_thinking\""), "{text}");
    check_golden("screenshots-synthetic-2.0.76.anthropic.json", &text);
    server.stop();
}

/// A rewind after the screenshot call: the thread and the branch each name their blobs, and
/// the store holds each blob the branch brought.
#[test]
fn a_branch_keeps_its_media_as_the_thread_does() {
    let mut server = Server::start(Wire::Ndjson, "memory");
    let text = fixture(CLAUDE_CODE);
    let mut line: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    line["uuid"] = json!("u-rewound");
    line["parentUuid"] = json!("a3");
    line["timestamp"] = json!("2026-11-20T10:59:00.000Z");
    line["message"]["content"] = json!([{"type": "text", "text": "try again"}, line["message"]["content"][1].clone()]);
    let text = format!("{text}{line}\n");
    let result = server.ok(
        "thread/import",
        json!({"text": text, "format": "claude-code", "threadId": "b", "options": {"branches": true}}),
    );
    assert_eq!(result["session"]["leftOut"]["branches"], 1);
    let mut all = HashSet::new();
    for id in ["b", "b.branch-1"] {
        let events = server.ok("thread/events", json!({"threadId": id}))["events"].as_array().unwrap().clone();
        for part in media_parts(&events).iter().filter(|p| p.get("blob").is_some()) {
            server.ok("blob/stat", json!({"blob": part["blob"]}));
            all.insert(part["blob"].as_str().unwrap().to_owned());
        }
    }
    assert_eq!(all.len(), 4, "the thread's and the branch's blobs, each once");
    server.stop();
}

#[test]
fn codex_data_url_images_are_blob_parts_and_remote_ones_stay_urls() {
    let mut server = Server::start(Wire::Ndjson, "memory");
    let events = import_and_check(&mut server, CODEX, "codex", "rollout", 1);
    let user = events.iter().find(|e| e["type"] == "message" && e["role"] == "user").unwrap();
    assert_eq!(user["content"][1]["type"], "image");
    assert_eq!(user["responsesItem"]["content"][1]["image_url"], json!({"blob": user["content"][1]["blob"]}));
    // The terminal's copy of the message (a line kept whole) names the blob too.
    let echoed = events.iter().find(|e| e["type"] == "codex_line" && e["line"]["payload"]["type"] == "user_message");
    assert_eq!(echoed.unwrap()["line"]["payload"]["images"][0], json!({"blob": user["content"][1]["blob"]}));
    let outputs: Vec<&Value> = events.iter().filter(|e| e["type"] == "tool_result").collect();
    assert_eq!(outputs.len(), 2);
    assert_eq!(outputs[0]["content"][0]["text"].as_str().unwrap().split(' ').next(), Some("after.png"));
    assert_eq!(outputs[1]["content"][0]["blob"], user["content"][1]["blob"], "the same image is the same blob");
    assert_eq!(outputs[1]["content"][1]["url"], "https://example.com/remote.png");
    server.stop();
}

#[test]
fn an_unreadable_media_part_fails_the_import_naming_its_line_and_stores_nothing() {
    let claude = fixture(CLAUDE_CODE);
    let codex = fixture(CODEX);
    let pdf_as_png = claude.replace("\"media_type\":\"application/pdf\"", "\"media_type\":\"image/png\"");
    let cases = [
        // Bad base64 in the pasted screenshot (line 1), then in a tool's output (line 5).
        (claude.replacen("\"data\":\"iVBOR", "\"data\":\"%%%%", 1), "claude-code", "", "line 1: message.content[1].source.data: not valid base64"),
        (codex.replacen("data:image/png;base64,iVBOR", "data:image/png;base64,%%%%", 1), "codex", "", "line 3: payload.content[1].image_url: not valid base64"),
        // A media type the bytes contradict: a PDF declared a PNG (line 9), PNGs declared GIFs.
        (pdf_as_png, "claude-code", "", "line 9: message.content[0].content[0].source.media_type: declared \"image/png\", but the data holds application/pdf bytes"),
        (codex.replace("data:image/png;base64,", "data:image/gif;base64,"), "codex", "", "line 3: payload.content[1].image_url: declared \"image/gif\", but the data holds image/png bytes"),
        // Over maxBlobBytes: 73-byte images under a 72-byte limit.
        (claude.clone(), "claude-code", "72", "line 1: message.content[1].source.data: 73 bytes is over the 72-byte limit of a blob (maxBlobBytes)"),
        (codex.clone(), "codex", "72", "line 3: payload.content[1].image_url: 73 bytes is over the 72-byte limit of a blob (maxBlobBytes)"),
    ];
    for (text, format, max_blob_bytes, expected) in cases {
        let mut command = serve(Some("memory"));
        if !max_blob_bytes.is_empty() {
            command.args(["--max-blob-bytes", max_blob_bytes]);
        }
        let mut server = Server::start_command(Wire::Ndjson, &mut command);
        let error = server.err("thread/import", json!({"text": text, "format": format, "threadId": "bad"}));
        assert_eq!(error["code"], -32602, "{error}");
        assert_eq!(error["data"]["path"], "text");
        let reason = error["data"]["reason"].as_str().unwrap();
        assert!(reason.starts_with(expected), "{reason}\n  expected {expected}");
        assert_eq!(server.err("thread/events", json!({"threadId": "bad"}))["code"], -32001, "nothing stored");
        server.stop();
    }
}

/// The command line names the file, the line and the field; `--follow` stores the blobs of the
/// lines it appends.
#[test]
fn the_command_line_names_a_bad_part_and_follow_stores_appended_media() {
    const BIN: &str = env!("CARGO_BIN_EXE_threadkeeper");
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("threads.db").display());
    let claude = fixture(CLAUDE_CODE);
    let bad = dir.path().join("bad.jsonl");
    fs::write(&bad, claude.replacen("\"data\":\"iVBOR", "\"data\":\"%%%%", 1)).unwrap();
    let stderr = refused_claude_code_import(&store, &bad);
    let expected = format!("threadkeeper: {}: line 1: message.content[1].source.data: not valid base64", bad.display());
    assert!(stderr.starts_with(&expected), "{stderr}");

    // Follow a session whose first line has no media; the rest come while following.
    let lines: Vec<&str> = claude.lines().collect();
    let session = dir.path().join("session.jsonl");
    fs::write(&session, format!("{}\n", lines[1])).unwrap();
    let mut follower = Command::new(BIN)
        .args(["import", "--from", "claude-code", "--follow", "--poll-ms", "50", "--store", &store, "--thread", "live"])
        .arg(&session)
        .env_remove("THREADKEEPER_STORE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(follower.stdout.take().unwrap()), &mut first).unwrap();
    let mut file = fs::OpenOptions::new().append(true).open(&session).unwrap();
    let rest: String = lines.iter().enumerate().filter(|(i, _)| *i != 1).map(|(_, l)| format!("{l}\n")).collect();
    file.write_all(rest.as_bytes()).unwrap();
    file.flush().unwrap();
    let mut server = Server::start(Wire::Ndjson, &store);
    let deadline = Instant::now() + ANSWER_TIMEOUT;
    let events = loop {
        let events = server.ok("thread/events", json!({"threadId": "live"}))["events"].as_array().unwrap().clone();
        if events.iter().any(|e| e["claudeCode"]["uuid"] == "a6") {
            break events;
        }
        assert!(Instant::now() < deadline, "the follower did not append the lines");
        std::thread::sleep(Duration::from_millis(50));
    };
    let blobs: HashSet<String> =
        media_parts(&events).iter().filter_map(|p| p["blob"].as_str().map(str::to_owned)).collect();
    assert_eq!(blobs.len(), 4);
    for id in blobs {
        server.ok("blob/stat", json!({"blob": id}));
    }
    server.stop();
    follower.kill().unwrap();
    follower.wait().unwrap();
}

fn check_golden(name: &str, text: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/host-sessions").join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        fs::write(&path, text).unwrap();
    } else {
        let golden = fs::read_to_string(&path).unwrap_or_default();
        assert!(golden == text, "{} differs (UPDATE_GOLDEN=1 rewrites it):\n{text}", path.display());
    }
}
