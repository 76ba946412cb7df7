//! Agent hosts' session files as threads: Claude Code sessions and Codex rollouts from public
//! repositories (`tests/fixtures/host-sessions`, origin and licence in its SOURCES.md), read
//! with every message, call and result accounted for and every line kept; their exact events
//! (golden files); `thread/import` and `threadkeeper import` on them, bad lines refused whole;
//! and `import --follow` feeding `view --serve` while the file grows.
//!
//! The thread files rendered for each provider are checked in `providers` (which takes
//! [`provider_threads`]). `HOST_SESSIONS_DIR=DIR` adds the `claude-code/*.jsonl` and
//! `codex/*.jsonl` files under DIR to every check here and there, for sessions kept elsewhere.
//! `UPDATE_GOLDEN=1 cargo test --test it host_sessions` rewrites the golden files.

use crate::support::{refused_claude_code_import, Server, Wire, EXIT_TIMEOUT};
use crate::viewer::{read_event_with, Viewer};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use threadkeeper::convert::{HostFormat, SessionImport, SessionReader};
use threadkeeper::AgentEvent;

const BIN: &str = env!("CARGO_BIN_EXE_threadkeeper");

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/host-sessions")
}

/// Every session file: `(format, path)`, the project's and those under `$HOST_SESSIONS_DIR`.
fn session_files() -> Vec<(HostFormat, PathBuf)> {
    let mut dirs = vec![fixture_dir()];
    dirs.extend(std::env::var_os("HOST_SESSIONS_DIR").map(PathBuf::from));
    let mut files = Vec::new();
    for dir in dirs {
        for (sub, format) in [("claude-code", HostFormat::ClaudeCode), ("codex", HostFormat::Codex)] {
            let Ok(entries) = fs::read_dir(dir.join(sub)) else { continue };
            let mut paths: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
            paths.retain(|p| p.extension().is_some_and(|e| e == "jsonl"));
            paths.sort();
            files.extend(paths.into_iter().map(|p| (format, p)));
        }
    }
    assert!(files.len() >= 12, "fixtures missing: {files:?}");
    files
}

fn import(format: HostFormat, path: &Path, keep_branches: bool) -> SessionImport {
    let text = fs::read_to_string(path).unwrap();
    SessionReader::new(format).read_all(&text, keep_branches).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn name(path: &Path) -> String {
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

/// Every imported thread and branch, named, for the provider checks.
pub(crate) fn provider_threads() -> Vec<(String, Vec<AgentEvent>)> {
    let mut threads = Vec::new();
    for (format, path) in session_files() {
        let import = import(format, &path, true);
        for (i, branch) in import.branches.into_iter().enumerate() {
            threads.push((format!("{} branch {i}", name(&path)), branch.events));
        }
        threads.push((name(&path), import.events));
    }
    threads
}

/// The thread of every Claude Code session, named, for the render checks (their branches may
/// end mid-call, as may a Codex rollout whose turn was aborted).
pub(crate) fn claude_code_threads() -> Vec<(String, Vec<AgentEvent>)> {
    let files = session_files().into_iter().filter(|(format, _)| *format == HostFormat::ClaudeCode);
    files.map(|(format, path)| (name(&path), import(format, &path, false).events)).collect()
}

fn lines(path: &Path) -> Vec<Value> {
    let text = fs::read_to_string(path).unwrap();
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The texts of messages: a string content, or the text parts of one with media (Claude Code
/// wrote each as a block of its own, Codex's are joined as its text messages are).
fn message_texts(events: &[&AgentEvent], format: HostFormat) -> HashSet<String> {
    let mut texts = HashSet::new();
    for event in events {
        match &event.fields()["content"] {
            Value::String(text) => {
                texts.insert(text.clone());
            }
            Value::Array(parts) => {
                let parts = parts.iter().filter_map(|p| p["text"].as_str().map(str::to_owned));
                match format {
                    HostFormat::ClaudeCode => texts.extend(parts),
                    HostFormat::Codex => {
                        texts.insert(parts.collect::<Vec<_>>().join("\n\n"));
                    }
                }
            }
            _ => {}
        }
    }
    texts
}

/// The media bytes a session file holds, by the text that gives them.
fn media_copies(lines: &[Value]) -> std::collections::HashMap<String, String> {
    crate::host_session_media::media_texts(lines)
}

fn strings(events: &[&AgentEvent], key: &str) -> HashSet<String> {
    events.iter().filter_map(|e| e.fields().get(key).and_then(Value::as_str).map(str::to_owned)).collect()
}

/// Asserts two sets are equal, naming only what differs.
fn same(found: HashSet<String>, said: HashSet<String>, what: &str) {
    let extra: Vec<&String> = found.difference(&said).collect();
    let missing: Vec<&String> = said.difference(&found).collect();
    assert!(
        extra.is_empty() && missing.is_empty(),
        "{what}: {} missing {missing:?}, {} extra {extra:?}",
        missing.len(),
        extra.len()
    );
}

/// What the file says and what the thread (with its branches) must hold of it: the ids of calls
/// and of the calls results answer, the non-empty texts, and the lines kept whole.
struct Said {
    calls: HashSet<String>,
    answered: HashSet<String>,
    texts: HashSet<String>,
    kept_lines: Vec<Value>,
}

fn claude_code_said(lines: &[Value]) -> Said {
    let mut said = Said { calls: HashSet::new(), answered: HashSet::new(), texts: HashSet::new(), kept_lines: vec![] };
    for line in lines {
        let kind = line["type"].as_str().unwrap_or_default();
        // Compaction summaries become `summary` events.
        if kind == "summary" && line.get("message").is_some() || line["isCompactSummary"] == true {
            continue;
        }
        if kind != "user" && kind != "assistant" {
            said.kept_lines.push(line.clone());
            continue;
        }
        let content = &line["message"]["content"];
        let blocks = match content {
            Value::String(text) => vec![json!({"type": "text", "text": text})],
            other => other.as_array().unwrap().clone(),
        };
        for block in blocks {
            match block["type"].as_str().unwrap() {
                "text" if !block["text"].as_str().unwrap().trim().is_empty() => {
                    said.texts.insert(block["text"].as_str().unwrap().to_owned());
                }
                "tool_use" => {
                    said.calls.insert(block["id"].as_str().unwrap().to_owned());
                }
                "tool_result" => {
                    said.answered.insert(block["tool_use_id"].as_str().unwrap().to_owned());
                }
                _ => {}
            }
        }
    }
    said
}

fn codex_said(lines: &[Value]) -> Said {
    let mut said = Said { calls: HashSet::new(), answered: HashSet::new(), texts: HashSet::new(), kept_lines: vec![] };
    for line in lines {
        let item = match line["type"].as_str() {
            Some("response_item") => &line["payload"],
            Some("compacted") => continue,
            _ => {
                said.kept_lines.push(line.clone());
                continue;
            }
        };
        match item["type"].as_str().unwrap() {
            "message" => {
                let text: Vec<&str> =
                    item["content"].as_array().unwrap().iter().filter_map(|p| p["text"].as_str()).collect();
                said.texts.insert(text.join("\n\n"));
            }
            "function_call" | "custom_tool_call" | "local_shell_call" => {
                said.calls.insert(item["call_id"].as_str().unwrap().to_owned());
            }
            "function_call_output" | "custom_tool_call_output" => {
                said.answered.insert(item["call_id"].as_str().unwrap().to_owned());
            }
            "reasoning" => {}
            _ => said.kept_lines.push(line.clone()),
        }
    }
    said
}

#[test]
fn every_message_call_and_result_is_accounted_for_and_every_other_line_kept() {
    for (format, path) in session_files() {
        let import = import(format, &path, true);
        let all: Vec<&AgentEvent> =
            import.events.iter().chain(import.branches.iter().flat_map(|b| b.events.iter())).collect();
        let lines = lines(&path);
        let said = match format {
            HostFormat::ClaudeCode => claude_code_said(&lines),
            HostFormat::Codex => codex_said(&lines),
        };
        let of_type = |types: &[&str]| -> Vec<&AgentEvent> {
            all.iter().copied().filter(|e| types.contains(&e.event_type())).collect()
        };
        let file = path.display();
        same(strings(&of_type(&["tool_call"]), "toolCallId"), said.calls, &format!("{file}: calls"));
        same(strings(&of_type(&["tool_result", "error"]), "toolCallId"), said.answered, &format!("{file}: results"));
        same(message_texts(&of_type(&["message"]), format), said.texts, &format!("{file}: messages"));
        let kept: Vec<Value> =
            of_type(&["claude_code_line", "codex_line"]).iter().map(|e| e.fields()["line"].clone()).collect();
        let copies = media_copies(&lines);
        for line in &said.kept_lines {
            // Bytes a media part stored as a blob are named by it in the kept line.
            let line = crate::host_session_media::with_blob_refs(line.clone(), &copies);
            assert!(kept.contains(&line), "{file}: line not kept whole: {line}");
        }
        // Each line is in the thread or in a branch: nothing read is dropped.
        if format == HostFormat::ClaudeCode {
            let uuids: HashSet<&str> = lines.iter().filter_map(|l| l["uuid"].as_str()).collect();
            let held: HashSet<&str> = all
                .iter()
                .filter_map(|e| e.fields().get("claudeCode").and_then(|k| k["uuid"].as_str()))
                .chain(kept.iter().filter_map(|l| l["uuid"].as_str()))
                .collect();
            assert_eq!(held, uuids, "{file}: lines");
        }
        assert_eq!(import.lines, lines.len(), "{file}");
    }
}

/// Session files past this size have no golden file: one as big as the session would be
/// reviewed no better than the session itself. The other checks here cover them.
const GOLDEN_UP_TO_BYTES: u64 = 1 << 20;

#[test]
fn the_threads_are_the_golden_events() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/host-sessions");
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut failures = Vec::new();
    let small = |path: &Path| fs::metadata(path).unwrap().len() <= GOLDEN_UP_TO_BYTES;
    for (format, path) in session_files().into_iter().filter(|(_, p)| p.starts_with(fixture_dir()) && small(p)) {
        let import = import(format, &path, false);
        let values: Vec<Value> = import.events.iter().map(AgentEvent::to_value).collect();
        let summary = json!({"sessionId": import.session_id, "lines": import.lines, "leftOut": {"branches": import.left_out.branches, "sidechains": import.left_out.sidechains}, "events": values});
        let text = serde_json::to_string_pretty(&summary).unwrap() + "\n";
        let golden = dir.join(format!("{}.events.json", name(&path)));
        if update {
            fs::create_dir_all(&dir).unwrap();
            fs::write(&golden, &text).unwrap();
        } else if fs::read_to_string(&golden).ok().as_deref() != Some(text.as_str()) {
            failures.push(golden.display().to_string());
        }
    }
    assert!(failures.is_empty(), "differ from their golden files (UPDATE_GOLDEN=1 rewrites): {failures:?}");
}

/// Each call of the thread is one event and so is its answer, both in the thread: parallel
/// calls written on sibling branches of the line tree, and their results wherever they hang,
/// make one turn (as Claude Code resumes it).
#[test]
fn each_call_of_a_claude_code_thread_is_answered_once_in_it() {
    for (_, path) in session_files().into_iter().filter(|(f, _)| *f == HostFormat::ClaudeCode) {
        let import = import(HostFormat::ClaudeCode, &path, false);
        let file = path.display();
        let ids = |types: &[&str]| -> Vec<String> {
            let of_type = import.events.iter().filter(|e| types.contains(&e.event_type()));
            of_type.filter_map(|e| e.fields().get("toolCallId")?.as_str().map(str::to_owned)).collect()
        };
        let (calls, answers) = (ids(&["tool_call"]), ids(&["tool_result", "error"]));
        let unique = |ids: &[String]| ids.iter().collect::<HashSet<_>>().len() == ids.len();
        assert!(unique(&calls) && unique(&answers), "{file}: a call or an answer twice");
        let (calls, answers): (HashSet<String>, HashSet<String>) =
            (calls.into_iter().collect(), answers.into_iter().collect());
        assert_eq!(calls.difference(&answers).collect::<Vec<_>>(), Vec::<&String>::new(), "{file}: calls unanswered");
        assert_eq!(
            answers.difference(&calls).collect::<Vec<_>>(),
            Vec::<&String>::new(),
            "{file}: answers without calls"
        );
    }
}

/// The shape in isolation (`parallel-calls-synthetic.jsonl`): two turns of parallel calls, each
/// call and result on a branch of its own with progress lines between, then a real fork (the
/// user asked again from an earlier answer).
#[test]
fn parallel_calls_on_sibling_branches_are_one_turn_and_a_rewind_stays_a_branch() {
    let path = fixture_dir().join("claude-code/parallel-calls-synthetic.jsonl");
    let import = import(HostFormat::ClaudeCode, &path, true);
    let outline: Vec<String> = import
        .events
        .iter()
        .map(|e| {
            let f = e.fields();
            let said = f.get("toolCallId").or(f.get("content")).and_then(Value::as_str).unwrap_or_default();
            let line = f.get("line").map(|l| l["type"].as_str().unwrap()).unwrap_or_default();
            format!("{} {said}{line}", e.event_type())
        })
        .collect();
    assert_eq!(
        outline,
        [
            "claude_code_line file-history-snapshot",
            "message Read a.txt and b.txt, then list the directory.",
            "message Reading both files at once.",
            "tool_call t1",
            "claude_code_line progress",
            "tool_call t2",
            "tool_result t1",
            "claude_code_line progress",
            "tool_result t2",
            "tool_call t3",
            "tool_call t4",
            "claude_code_line progress",
            "tool_result t4",
            "tool_result t3",
            "message Both files read; the directory holds a.txt and b.txt.",
            "message Actually, keep it; summarize a.txt instead.",
            "message a.txt says alpha.",
            "claude_code_line system",
        ]
    );
    assert_eq!((import.left_out.branches, import.left_out.sidechains), (1, 0));
    let branch = &import.branches[0];
    assert_eq!(branch.leaf, "r5");
    let branch_calls = strings(&branch.events.iter().collect::<Vec<_>>(), "toolCallId");
    assert_eq!(branch_calls, HashSet::from(["t1", "t2", "t3", "t4", "t5"].map(str::to_owned)));
}

#[test]
fn a_forked_session_keeps_its_other_branch_apart() {
    let path = fixture_dir().join("claude-code/agent-history-forked-2.0.75.jsonl");
    let contents = |events: &[AgentEvent]| -> Vec<String> {
        events
            .iter()
            .filter(|e| e.event_type() == "message")
            .map(|e| e.fields()["content"].as_str().unwrap().to_owned())
            .collect()
    };
    let thread = import(HostFormat::ClaudeCode, &path, false);
    assert_eq!((thread.left_out.branches, thread.left_out.sidechains), (1, 0));
    assert!(contents(&thread.events).iter().any(|t| t.contains("MergeSort")));
    assert!(!contents(&thread.events).iter().any(|t| t.contains("go with QuickSort")));
    let with_branches = import(HostFormat::ClaudeCode, &path, true);
    assert_eq!(with_branches.branches.len(), 1);
    let branch = contents(&with_branches.branches[0].events);
    assert!(
        branch.iter().any(|t| t.contains("go with QuickSort")) && !branch.iter().any(|t| t.contains("try MergeSort"))
    );
    // The branch begins as the thread does.
    assert_eq!(branch[..2], contents(&thread.events)[..2]);
}

// ---- over the protocol and the command line ----

fn session_text(path: &str) -> String {
    fs::read_to_string(fixture_dir().join(path)).unwrap()
}

#[test]
fn thread_import_takes_claude_code_and_codex_and_refuses_a_bad_line_whole() {
    let mut server = Server::start(Wire::Ndjson, "memory");
    let forked = session_text("claude-code/agent-history-forked-2.0.75.jsonl");
    let result =
        server.ok("thread/import", json!({"text": forked, "format": "claude-code", "options": {"branches": true}}));
    assert_eq!(result["threadId"], "fork-session-001");
    assert_eq!(result["session"]["sessionId"], "fork-session-001");
    assert_eq!(result["session"]["lines"], 14);
    assert_eq!(result["session"]["leftOut"], json!({"branches": 1, "sidechains": 0}));
    assert_eq!(result["session"]["branches"][0]["threadId"], "fork-session-001.branch-1");
    assert_eq!(result["session"]["branches"][0]["kind"], "branch");
    let branch = server.ok("thread/events", json!({"threadId": "fork-session-001.branch-1"}));
    assert_eq!(branch["eventCount"], result["session"]["branches"][0]["eventCount"]);

    // What was imported exports as a turn document, and that imports back to the same events.
    let exported = server.ok("thread/export", json!({"threadId": "fork-session-001", "format": "yaml"}));
    server.ok("thread/import", json!({"text": exported["text"], "format": "yaml", "threadId": "again"}));
    let original = server.ok("thread/events", json!({"threadId": "fork-session-001"}));
    let again = server.ok("thread/events", json!({"threadId": "again"}));
    assert_eq!(original["events"], again["events"]);

    let codex = session_text("codex/agent-history-real-0.135.0.jsonl");
    let result = server.ok("thread/import", json!({"text": codex, "format": "codex", "threadId": "rollout"}));
    assert_eq!(result["threadId"], "rollout");
    assert_eq!(result["eventCount"], 11);

    // A line that is not JSON, and one whose call has no id: named, and nothing stored.
    let mut lines: Vec<&str> = codex.lines().collect();
    lines[5] = "{\"type\":\"response_item\",";
    let error = server.err("thread/import", json!({"text": lines.join("\n"), "format": "codex", "threadId": "bad"}));
    assert_eq!(error["code"], -32602);
    assert_eq!(error["data"]["path"], "text");
    let reason = error["data"]["reason"].as_str().unwrap();
    assert!(reason.starts_with("line 6: not JSON: "), "{reason}");
    lines[5] = r#"{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}"}}"#;
    let error = server.err("thread/import", json!({"text": lines.join("\n"), "format": "codex", "threadId": "bad"}));
    assert_eq!(error["data"]["reason"], "line 6: payload.call_id: missing");
    let missing = server.err("thread/events", json!({"threadId": "bad"}));
    assert_eq!(missing["code"], -32001);

    // Branches are a session file's option; an unknown option is refused.
    let error = server.err("thread/import", json!({"text": "{}", "format": "json", "options": {"branches": true}}));
    assert_eq!((error["code"].as_i64(), error["data"]["path"].as_str()), (Some(-32602), Some("options.branches")));
    let error =
        server.err("thread/import", json!({"text": forked, "format": "claude-code", "options": {"sidechains": true}}));
    assert_eq!(error["code"], -32602);
    server.stop();
}

#[test]
fn the_command_line_imports_into_a_store_and_names_a_bad_line() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("threads.db").display());
    let path = fixture_dir().join("claude-code/agent-history-compaction-2.0.75.jsonl");
    let output = Command::new(BIN)
        .args(["import", "--from", "claude-code", "--store", &store, "--thread", "kept"])
        .arg(&path)
        .env_remove("THREADKEEPER_STORE")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let summary: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(summary["threadId"], "kept");
    let mut server = Server::start(Wire::Ndjson, &store);
    let events = server.ok("thread/events", json!({"threadId": "kept"}));
    assert_eq!(events["eventCount"], summary["eventCount"]);
    assert!(events["events"].as_array().unwrap().iter().any(|e| e["type"] == "summary"));
    server.stop();

    let bad = dir.path().join("bad.jsonl");
    fs::write(
        &bad,
        "{\"type\":\"user\",\"uuid\":\"u1\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n\nnot json\n",
    )
    .unwrap();
    let stderr = refused_claude_code_import(&store, &bad);
    let expected = format!("threadkeeper: {}: line 3: not JSON: ", bad.display());
    assert!(stderr.starts_with(&expected), "{stderr}");
    let mut server = Server::start(Wire::Ndjson, &store);
    assert_eq!(server.err("thread/events", json!({"threadId": "bad"}))["code"], -32001);
    server.stop();
}

/// `import --follow` appends what the host writes, and `view --serve` shows it: lines in the
/// order written, a half-written line once its line break comes, each within the issue's 2 s.
#[test]
fn followed_lines_reach_the_viewer_in_order_within_two_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("threads.db").display());
    let source = session_text("claude-code/claude-code-log-todowrite-1.0.24.jsonl");
    let lines: Vec<&str> = source.lines().collect();
    let session = dir.path().join("session.jsonl");
    fs::write(&session, format!("{}\n{}\n", lines[0], lines[1])).unwrap();

    let mut follower = Command::new(BIN)
        .args(["import", "--from", "claude-code", "--follow", "--poll-ms", "50", "--store", &store])
        .arg(&session)
        .env_remove("THREADKEEPER_STORE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(follower.stdout.take().unwrap()).read_line(&mut first).unwrap();
    let summary: Value = serde_json::from_str(&first).unwrap();
    let thread_id = summary["threadId"].as_str().unwrap().to_owned();
    assert_eq!(thread_id, "todowrite_session");
    let from = summary["eventCount"].as_u64().unwrap();

    let viewer = Viewer::start(&store);
    let mut stream = viewer.connect();
    write!(
        stream,
        "GET /thread/{thread_id}/feed?token={}&from={from} HTTP/1.1\r\nHost: {}\r\n\r\n",
        viewer.token, viewer.authority
    )
    .unwrap();
    let mut feed = BufReader::new(stream);
    let mut status = String::new();
    feed.read_line(&mut status).unwrap();
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");

    let mut file = fs::OpenOptions::new().append(true).open(&session).unwrap();
    // The third line in two writes: nothing is read of it until its line break.
    let (head, tail) = lines[2].split_at(lines[2].len() / 2);
    file.write_all(head.as_bytes()).unwrap();
    file.flush().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    file.write_all(format!("{tail}\n{}\n", lines[3]).as_bytes()).unwrap();
    file.flush().unwrap();
    let written = Instant::now();
    // Line 3 is a tool call (TodoWrite), line 4 its result: they come in that order.
    let data = read_event_with(&mut feed, "toolu_todowrite_001");
    let elapsed = written.elapsed();
    let update: Value = serde_json::from_str(&data).unwrap();
    assert_eq!(update["type"], "append");
    assert_eq!(update["from"], from);
    let types: Vec<&str> = update["events"].as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap()).collect();
    let appended_in_one = types == ["tool_call", "tool_result"];
    if !appended_in_one {
        assert_eq!(types, ["tool_call"]);
        read_event_with(&mut feed, "\"tool_result\"");
    }
    assert!(elapsed < Duration::from_secs(2), "shown after {elapsed:?}");

    // A bad line stops the follower, naming it; what came before stays.
    file.write_all(b"{oops\n").unwrap();
    file.flush().unwrap();
    let deadline = Instant::now() + EXIT_TIMEOUT;
    let status = loop {
        if let Some(status) = follower.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the follower went on past a bad line");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(2));
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut follower.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(stderr.contains(&format!("{}: line 5: not JSON", session.display())), "{stderr}");
    viewer.terminate();
}
