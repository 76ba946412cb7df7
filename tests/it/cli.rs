//! The command line: `render`, `convert`, `--help`, `--version`, bad input.

use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_threadkeeper");

fn run(args: &[&str], stdin: &str) -> Output {
    crate::support::run_bounded(Command::new(BIN).args(args), Some(stdin.as_bytes()))
}

fn stdout(output: &Output) -> String {
    assert!(output.status.success(), "failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout.clone()).unwrap()
}

#[test]
fn render_xml_of_the_example_matches_its_golden_file() {
    let out = stdout(&run(&["render", "examples/thread.json"], ""));
    assert_eq!(out, std::fs::read_to_string("tests/golden/cli/thread.xml").unwrap());
}

#[test]
fn render_reads_json_lines_from_stdin() {
    let lines = "{\"type\":\"message\",\"role\":\"user\",\"content\":\"a & b\",\"iteration\":0}\n\n{\"type\":\"completion\",\"result\":\"done\",\"verified\":true,\"iteration\":1}\n";
    let out = stdout(&run(&["render", "--response-prefix", "Go:", "-"], lines));
    assert_eq!(
        out,
        "<thread>\n  <event type=\"human\" id=\"0\" iteration=\"0\">a &amp; b</event>\n  <event type=\"completion\" id=\"1\" iteration=\"1\">done</event>\n</thread>\nGo:"
    );
}

#[test]
fn render_messages_and_text_formats() {
    let messages: serde_json::Value = serde_json::from_str(&stdout(&run(
        &[
            "render",
            "--format",
            "messages",
            "--group-tool-calls",
            "--instructions",
            "Be brief.",
            "examples/thread.json",
        ],
        "",
    )))
    .unwrap();
    let messages = messages.as_array().unwrap();
    assert_eq!(messages[0]["type"], "system");
    assert!(messages[0]["data"]["content"].as_str().unwrap().ends_with("\n\nBe brief."));
    // The two parallel search calls share one AI message.
    let grouped = messages.iter().find(|m| m["data"]["tool_calls"].as_array().is_some_and(|c| c.len() == 2));
    assert!(grouped.is_some(), "{messages:?}");
    let text = stdout(&run(&["render", "--format", "text", "--context-mode", "xml", "examples/thread.json"], ""));
    assert!(text.starts_with("[System]\n## Previous Iteration Summaries"), "{text}");
    assert!(text.contains("\n\n[User]\n<thread>\n  <event type=\"system\""), "{text}");
}

#[test]
fn bad_input_exits_2_with_one_line_naming_event_and_field() {
    let bad = r#"[{"type":"message","role":"user","content":"ok","iteration":0},{"type":"tool_result","iteration":1}]"#;
    let out = run(&["render", "-"], bad);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr, "threadkeeper: <stdin>: events[1].toolCallId: missing\n");

    let out = run(
        &["render", "-"],
        "{\"type\":\"message\",\"role\":\"user\",\"content\":\"ok\",\"iteration\":0}\n{\"type\":\"message\"}\n",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr)
        .unwrap()
        .starts_with("threadkeeper: <stdin>:2: events[1].iteration: missing"));

    let out = run(&["render", "does/not/exist.json"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(String::from_utf8(out.stderr).unwrap().lines().count(), 1);
}

#[test]
fn convert_round_trips_events_through_yaml_and_json_turns() {
    let original: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("examples/thread.json").unwrap()).unwrap();
    for to in ["yaml", "json"] {
        let turn = stdout(&run(&["convert", "--to", to, "examples/thread.json"], ""));
        assert!(turn.contains("id: thread") || turn.contains("\"id\": \"thread\""), "{turn}");
        let back = stdout(&run(&["convert", "--to", "events", "-"], &turn));
        let back: serde_json::Value = serde_json::from_str(&back).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), serde_json::to_string(&original).unwrap());
        // A turn file renders exactly as the events it came from.
        let from_turn = stdout(&run(&["render", "-"], &turn));
        assert_eq!(from_turn, stdout(&run(&["render", "examples/thread.json"], "")));
    }
}

#[test]
fn convert_reads_seed_turn_files_and_redacts() {
    let yaml = stdout(&run(
        &["convert", "--to", "yaml", "--redact-encrypted-content", "tests/golden/turns/seed_reasoning.yaml"],
        "",
    ));
    assert!(!yaml.contains("gAAAAA..."), "{yaml}");
    assert!(yaml.contains("redacted: true"), "{yaml}");
    let out = run(&["convert", "--to", "events", "-"], "version: 2\nid: x\nblocks: []\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("version"));
}

#[test]
fn help_and_version() {
    let help = stdout(&run(&["--help"], ""));
    for word in ["serve", "render", "convert", "--store"] {
        assert!(help.contains(word), "--help mentions {word}: {help}");
    }
    let version = stdout(&run(&["--version"], ""));
    assert_eq!(version, format!("threadkeeper {}\n", env!("CARGO_PKG_VERSION")));
    assert!(stdout(&run(&["render", "--help"], "")).contains("--response-prefix"));
}

#[test]
fn render_provider_formats_print_the_request_bodies_of_the_protocol_pages() {
    for (format, page) in [
        ("openai-chat", "protocol/providers/openai-chat.md"),
        ("openai-responses", "protocol/providers/openai-responses.md"),
        ("anthropic", "protocol/providers/anthropic.md"),
    ] {
        let out = stdout(&run(
            &["render", "--format", format, "--instructions", "Be brief.", "examples/provider-thread.json"],
            "",
        ));
        let page = std::fs::read_to_string(page).unwrap();
        assert!(page.contains(&format!("```json\n{out}```")), "{format}: the CLI and {page} disagree");
    }
}

#[test]
fn render_drop_leaves_unanswered_calls_out() {
    let thread = r#"[{"type":"message","role":"user","content":"go","iteration":0},
        {"type":"tool_call","toolName":"t","toolCallId":"c","args":{},"iteration":0}]"#;
    let repaired = stdout(&run(&["render", "--format", "openai-chat", "-"], thread));
    assert!(repaired.contains("[Tool call not completed]"));
    let dropped = stdout(&run(&["render", "--format", "openai-chat", "--dangling-tool-calls", "drop", "-"], thread));
    assert_eq!(
        dropped,
        "{\n  \"messages\": [\n    {\n      \"role\": \"user\",\n      \"content\": \"go\"\n    }\n  ]\n}\n"
    );
}

/// A SQLite store holding two small threads, written through `serve`.
fn search_store(dir: &std::path::Path) -> String {
    let store = format!("sqlite:{}", dir.join("threads.db").display());
    let requests = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"cli-test"}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"thread/open","params":{"threadId":"deploy"}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"thread/append","params":{"threadId":"deploy","events":[{"type":"message","role":"user","content":"Deploy the main   branch\nto staging","iteration":0},{"type":"tool_call","toolName":"run_shell","toolCallId":"c1","args":{"command":"git push origin main"},"iteration":1},{"type":"tool_result","toolCallId":"c1","result":"error: failed to push some refs","iteration":1}]}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"thread/open","params":{"threadId":"notes"}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"thread/append","params":{"threadId":"notes","events":[{"type":"message","role":"assistant","content":"main is green again","iteration":0}]}}"#,
    ];
    // Input ends without `exit`, so the server's status is not 0; its answers are what count.
    let out = run(&["serve", "--store", &store], &(requests.join("\n") + "\n"));
    let answers = String::from_utf8(out.stdout).unwrap();
    assert_eq!(answers.lines().count(), 5, "{answers}");
    assert!(!answers.contains("\"error\""), "{answers}");
    store
}

#[test]
fn search_prints_hits_as_thread_and_event_with_snippets_plain_when_piped() {
    let dir = tempfile::tempdir().unwrap();
    let store = search_store(dir.path());
    let out = stdout(&run(&["search", "--store", &store, "branch"], ""));
    assert_eq!(out, "deploy:0\tDeploy the main «branch» to staging\n");
    let out = stdout(&run(&["search", "--store", &store, "main"], ""));
    let mut places: Vec<&str> = out.lines().map(|l| l.split('\t').next().unwrap()).collect();
    places.sort();
    assert_eq!(places, ["deploy:0", "deploy:1", "notes:0"]);
    assert!(!out.contains('\x1b'), "no colour when piped: {out:?}");
    assert!(out.lines().all(|l| l.contains("«main»")), "{out}");
    let out = stdout(&run(&["search", "--store", &store, "--limit", "1", "push -error"], ""));
    assert_eq!(out, "deploy:1\trun_shell {\"command\":\"git «push» origin main\"}\n");
    // A query may start with an excluded term, and the options may follow it.
    let out = stdout(&run(&["search", "--store", &store, "-error push", "--limit", "1"], ""));
    assert_eq!(out, "deploy:1\trun_shell {\"command\":\"git «push» origin main\"}\n");
    assert_eq!(stdout(&run(&["search", "--store", &store, "nowhere"], "")), "");
}

#[test]
fn search_json_is_the_methods_result() {
    let dir = tempfile::tempdir().unwrap();
    let store = search_store(dir.path());
    let out = stdout(&run(&["search", "--store", &store, "--json", "--limit", "2", "main"], ""));
    let result: serde_json::Value = serde_json::from_str(&out).unwrap();
    let hits = result["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 2);
    for hit in hits {
        for field in ["threadId", "eventIndex", "iteration", "type", "snippet", "score"] {
            assert!(hit.get(field).is_some(), "{field} in {hit}");
        }
    }
    assert!(result["nextCursor"].is_string(), "{result}");
    let out = stdout(&run(&["search", "--store", &store, "--json", "branch"], ""));
    let result: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(result["hits"][0]["role"], "user");
    assert_eq!(result["hits"][0]["snippet"], "Deploy the main «branch» to staging");
    assert!(result.get("nextCursor").is_none());
}

#[test]
fn a_malformed_search_query_is_one_clear_line_and_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let store = search_store(dir.path());
    for (query, reason) in [
        ("\"main branch", "query: a quote opened at character 1 is never closed"),
        ("-main", "query: the query has no words to search for (only exclusions, or no letters or digits)"),
        ("   ", "query: the query is empty"),
    ] {
        let out = run(&["search", "--store", &store, query], "");
        assert_eq!(out.status.code(), Some(2), "{query}");
        assert!(out.stdout.is_empty());
        assert_eq!(String::from_utf8(out.stderr).unwrap(), format!("threadkeeper: invalid params: {reason}\n"));
    }
    let out = run(&["search", "--store", &store, "--limit", "0", "main"], "");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "threadkeeper: invalid params: limit: must be 1 to 100, got 0\n"
    );
}
