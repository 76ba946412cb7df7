//! CLI-model prompts: `threadkeeper prompt` against golden bytes, `prompt/cli` over the
//! protocol giving the same bytes for the same thread, and `prompt/parseReply` events that a
//! thread takes as they are.
//!
//! `UPDATE_GOLDEN=1 cargo test --test it prompt::` rewrites the golden files; review every
//! changed byte. The tool listing in them was checked against node's `JSON.stringify(tools,
//! null, 2)` when they were written.

use crate::support::{Server, Wire};
use serde_json::{json, Value};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_threadkeeper");
const DIR: &str = "tests/golden/prompt";
const INSTRUCTIONS: &str = "Be <brief> & exact.";

fn cli(args: &[&str]) -> Output {
    crate::support::run_bounded(Command::new(BIN).args(args), None)
}

/// The golden file's name and the `prompt` arguments that print it.
fn cases() -> Vec<(&'static str, Vec<String>)> {
    let thread = format!("{DIR}/thread.json");
    let tools = format!("{DIR}/tools.json");
    let mut cases = Vec::new();
    for encoding in ["xml", "text"] {
        let with_tools =
            vec!["--tools".to_owned(), tools.clone(), "--input-encoding".into(), encoding.into(), thread.clone()];
        let plain = vec![
            "--input-encoding".to_owned(),
            encoding.into(),
            "--instructions".into(),
            INSTRUCTIONS.into(),
            thread.clone(),
        ];
        let (tools_name, plain_name) =
            if encoding == "xml" { ("tools-xml.txt", "xml.txt") } else { ("tools-text.txt", "text.txt") };
        cases.push((tools_name, with_tools));
        cases.push((plain_name, plain));
    }
    cases
}

#[test]
fn prompts_match_their_golden_files() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut mismatches = Vec::new();
    for (name, args) in cases() {
        let mut all = vec!["prompt"];
        all.extend(args.iter().map(String::as_str));
        let output = cli(&all);
        assert!(output.status.success(), "{name}: {}", String::from_utf8_lossy(&output.stderr));
        let path = format!("{DIR}/{name}");
        if update {
            std::fs::write(&path, &output.stdout).unwrap();
        } else if std::fs::read(&path).unwrap() != output.stdout {
            mismatches.push(name);
        }
    }
    assert!(mismatches.is_empty(), "golden mismatches (UPDATE_GOLDEN=1 rewrites): {mismatches:?}");
}

#[test]
fn the_tool_listing_comes_first_then_the_plain_prompt() {
    for encoding in ["xml", "text"] {
        let with_tools = std::fs::read_to_string(format!("{DIR}/tools-{encoding}.txt")).unwrap();
        assert!(with_tools.starts_with("[Available Tools]\n[\n  {\n    \"name\": \"read_file\",\n"));
        let (_, thread) = with_tools.split_once("(no JSON block).\n\n").expect("the format instructions");
        let output = cli(&["prompt", "--input-encoding", encoding, &format!("{DIR}/thread.json")]);
        assert_eq!(thread.as_bytes(), output.stdout, "{encoding}");
    }
}

#[test]
fn the_protocol_gives_the_cli_bytes_for_the_same_thread() {
    let events: Value = serde_json::from_str(&std::fs::read_to_string(format!("{DIR}/thread.json")).unwrap()).unwrap();
    let tools: Value = serde_json::from_str(&std::fs::read_to_string(format!("{DIR}/tools.json")).unwrap()).unwrap();
    let mut server = Server::start(Wire::Lsp, "memory");
    server.ok("thread/open", json!({"threadId": "t", "settings": {"instructions": INSTRUCTIONS}}));
    server.ok("thread/append", json!({"threadId": "t", "events": events}));
    for encoding in ["xml", "text"] {
        let plain = server.ok("prompt/cli", json!({"threadId": "t", "inputEncoding": encoding}));
        let golden = std::fs::read_to_string(format!("{DIR}/{encoding}.txt")).unwrap();
        assert_eq!(plain["prompt"], golden, "{encoding}");
        // The thread's messages given as messages: the same prompt.
        let messages = server.ok("thread/render", json!({"threadId": "t", "format": "messages"}))["messages"].clone();
        let given = server.ok("prompt/cli", json!({"messages": messages, "inputEncoding": encoding}));
        assert_eq!(given["prompt"], golden, "{encoding}");
        // Render options apply: without the thread's instructions the tools golden follows.
        let with_tools = server.ok(
            "prompt/cli",
            json!({"threadId": "t", "inputEncoding": encoding, "tools": tools, "options": {"instructions": ""}}),
        );
        let golden = std::fs::read_to_string(format!("{DIR}/tools-{encoding}.txt")).unwrap();
        assert_eq!(with_tools["prompt"], golden, "{encoding} with tools");
    }
}

#[test]
fn reply_events_append_as_they_are() {
    let mut server = Server::start(Wire::Ndjson, "memory");
    server.ok("thread/open", json!({"threadId": "t"}));
    let reply =
        "Looking.\n```json\n{\"tool_calls\": [{\"name\": \"ls\", \"args\": {\"dir\": \"/\"}, \"id\": \"c9\"}]}\n```";
    let parsed = server.ok("prompt/parseReply", json!({"text": reply, "iteration": 7}));
    assert_eq!(parsed["content"], "Looking.");
    assert_eq!(parsed["toolCalls"], json!([{"id": "c9", "name": "ls", "args": {"dir": "/"}}]));
    let events = parsed["events"].as_array().unwrap();
    let timestamp = events[0]["timestamp"].as_u64().expect("a timestamp in milliseconds");
    assert_eq!(
        Value::Array(events.clone()),
        json!([
            {"type": "message", "role": "assistant", "content": "Looking.", "iteration": 7, "timestamp": timestamp},
            {"type": "tool_call", "toolName": "ls", "toolCallId": "c9", "args": {"dir": "/"}, "iteration": 7,
             "timestamp": timestamp},
        ])
    );
    server.ok("thread/append", json!({"threadId": "t", "events": events}));
    assert_eq!(server.ok("thread/events", json!({"threadId": "t"}))["events"], Value::Array(events.clone()));
    let rendered = server.ok("thread/render", json!({"threadId": "t", "format": "messages"}));
    let messages = rendered["messages"].as_array().unwrap();
    assert!(messages.iter().any(|m| m["type"] == "ai" && m["data"]["content"] == "Looking."), "{rendered}");
    assert!(messages.iter().any(|m| m["data"]["tool_calls"][0]["id"] == "c9"), "{rendered}");
}

#[test]
fn a_bad_tools_file_is_refused_naming_where() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools.json");
    std::fs::write(&tools, r#"[{"name": "ok"}, {"name": "x", "schema": {}}]"#).unwrap();
    let output = cli(&["prompt", "--tools", tools.to_str().unwrap(), &format!("{DIR}/thread.json")]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.starts_with(&format!(
            "threadkeeper: {}: not a list of tools ({{name, description?, parameters?}}): [1].schema: unknown field `schema`,",
            tools.display()
        )),
        "{stderr}"
    );
    let missing = cli(&["prompt", "--tools", "/nonexistent/tools.json", &format!("{DIR}/thread.json")]);
    assert_eq!(missing.status.code(), Some(2));
}
