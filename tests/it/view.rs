//! The viewer page (`threadkeeper view`, `thread/view`): its bytes for the example run, and
//! that nothing from a thread becomes markup or script.

use crate::support::{Server, Wire};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::process::{Command, Output};
use threadkeeper::view::{render_page, ModelInput, Page, ViewOptions};
use threadkeeper::AgentEvent;

const BIN: &str = env!("CARGO_BIN_EXE_threadkeeper");
const DATA_OPEN: &str = "<script type=\"application/json\" id=\"thread-data\">";

fn cli(args: &[&str]) -> Output {
    crate::support::run_bounded(Command::new(BIN).args(args).env_remove("THREADKEEPER_STORE"), None)
}

fn page_of(args: &[&str]) -> String {
    let output = cli(args);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// The page's JSON document, checked to be the only place thread data sits.
fn page_data(html: &str) -> Value {
    assert_eq!(html.matches("<script").count(), 2, "the data block and the page's script only");
    assert_eq!(html.matches("</script>").count(), 2);
    let start = html.find(DATA_OPEN).expect("a data block") + DATA_OPEN.len();
    let end = start + html[start..].find("</script>").unwrap();
    let data = &html[start..end];
    assert!(!data.contains('<') && !data.contains('>'), "no markup characters in the data block");
    serde_json::from_str(data).unwrap()
}

fn hostile_events() -> Value {
    serde_json::from_str(&std::fs::read_to_string("tests/browser/fixtures/hostile.json").unwrap()).unwrap()
}

#[test]
fn the_example_page_matches_its_golden_file() {
    let html = page_of(&["view", "examples/thread.json", "--out", "-"]);
    let path = "tests/golden/view/thread.html";
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(path, &html).unwrap();
    }
    assert!(html == std::fs::read_to_string(path).unwrap(), "{path} differs (UPDATE_GOLDEN=1 rewrites)");
}

#[test]
fn the_page_carries_the_events_links_and_model_input() {
    let html = page_of(&["view", "examples/thread.json", "--out", "-", "--dangling-tool-calls", "drop"]);
    let data = page_data(&html);
    let events: Value = serde_json::from_str(&std::fs::read_to_string("examples/thread.json").unwrap()).unwrap();
    assert_eq!(data["events"], events);
    assert_eq!(data["title"], "thread.json");
    assert_eq!(data["options"], json!({"contextMode": "standard", "escape": "full", "danglingToolCalls": "drop"}));
    let xml = page_of(&["render", "examples/thread.json"]);
    assert_eq!(data["xml"], xml);
    let messages: Value = serde_json::from_str(&page_of(&[
        "render",
        "--format",
        "messages",
        "--dangling-tool-calls",
        "drop",
        "examples/thread.json",
    ]))
    .unwrap();
    assert_eq!(data["messages"], messages);
    assert_eq!(
        data["links"]["calls"],
        json!([{"call": 2, "status": "answered", "by": 4}, {"call": 3, "status": "answered", "by": 5}, {"call": 6, "status": "answered", "by": 7}])
    );
    assert_eq!(data["links"]["asks"], json!([{"request": 8, "answer": 9}]));
    assert_eq!(data["tokens"].as_array().unwrap().len(), 3);
}

#[test]
fn hostile_strings_stay_data() {
    let html = page_of(&["view", "tests/browser/fixtures/hostile.json", "--out", "-"]);
    let data = page_data(&html);
    assert_eq!(data["events"], hostile_events());
}

#[test]
fn the_title_is_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("<img src=x>&.json");
    std::fs::write(&file, "[]").unwrap();
    let html = page_of(&["view", file.to_str().unwrap(), "--out", "-"]);
    assert!(html.contains("<title>&lt;img src=x&gt;&amp;.json · threadkeeper</title>"));
    page_data(&html);
}

#[test]
fn view_writes_next_to_the_file_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.json");
    std::fs::copy("examples/thread.json", &file).unwrap();
    let output = cli(&["view", file.to_str().unwrap()]);
    assert!(output.status.success());
    assert!(output.stdout.is_empty());
    page_data(&std::fs::read_to_string(dir.path().join("run.html")).unwrap());
}

#[test]
fn bad_input_is_one_line_and_no_page() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.json");
    std::fs::write(&file, r#"[{"type": "message", "iteration": 0}]"#).unwrap();
    let output = cli(&["view", file.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("events[0].role: missing"), "{stderr}");
    assert!(!dir.path().join("bad.html").exists());
    let none = cli(&["view"]);
    assert_eq!(none.status.code(), Some(2), "FILE or --thread is required");
}

#[test]
fn thread_view_renders_a_stored_thread() {
    let mut s = Server::start(Wire::Ndjson, "memory");
    s.ok("thread/open", json!({"threadId": "run-1", "settings": {"contextMode": "xml"}}));
    s.ok("thread/append", json!({"threadId": "run-1", "events": hostile_events()}));
    let html = s.ok("thread/view", json!({"threadId": "run-1"}))["html"].as_str().unwrap().to_owned();
    let data = page_data(&html);
    assert_eq!(data["events"], hostile_events());
    assert_eq!(data["options"]["contextMode"], "xml");
    let xml = s.ok("thread/render", json!({"threadId": "run-1", "format": "xml"}));
    assert_eq!(data["xml"], xml["text"]);
    let messages = s.ok("thread/render", json!({"threadId": "run-1", "format": "messages"}));
    assert_eq!(data["messages"], messages["messages"]);
    let tokens = s.ok("thread/tokens", json!({"threadId": "run-1", "format": "xml"}));
    let by_iteration: Vec<Value> =
        tokens["byIteration"].as_array().unwrap().iter().map(|t| json!([t["iteration"], t["tokens"]])).collect();
    assert_eq!(data["tokens"], Value::Array(by_iteration));

    let delta = s.err("thread/view", json!({"threadId": "run-1", "options": {"fromEvent": 0}}));
    assert_eq!((delta["code"].as_i64(), &delta["data"]["path"]), (Some(-32602), &json!("options.fromEvent")));
    let missing = s.err("thread/view", json!({"threadId": "nope"}));
    assert_eq!(missing["code"], -32001);
}

#[test]
fn thread_view_names_media_and_never_carries_their_bytes() {
    let mut s = Server::start(Wire::Ndjson, "memory");
    // A 2 × 1 PNG.
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAADUlEQVR4nGP4z8AARAAI/gH/xp559wAAAABJRU5ErkJggg==";
    let blob = "sha256:ad0296980d1852b61d129d90513b6951c31188d6fab3876be9193a28a2b69e39";
    s.ok("thread/open", json!({"threadId": "shot"}));
    s.ok(
        "thread/append",
        json!({"threadId": "shot", "events": [
            {"type": "message", "role": "user", "iteration": 0, "content": [
                {"type": "text", "text": "see"}, {"type": "image", "data": png, "mediaType": "image/png"}]},
            {"type": "message", "role": "assistant", "content": "a red pixel", "iteration": 0},
        ]}),
    );
    let html = s.ok("thread/view", json!({"threadId": "shot"}))["html"].as_str().unwrap().to_owned();
    assert!(!html.contains(&png[..40]), "the page holds no bytes");
    let data = page_data(&html);
    assert_eq!(data["events"][0]["content"][1]["blob"], blob);
    let shown = data["messages"].to_string();
    assert!(shown.contains(&format!("[image image/png {blob} 2x1 70 bytes]")), "{shown}");
    // A render for a model still carries them.
    let messages = s.ok("thread/render", json!({"threadId": "shot", "format": "messages"}));
    assert!(messages["messages"].to_string().contains(png));
}

#[test]
fn view_reads_a_stored_thread_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("threads.db").display());
    {
        let mut s = Server::start(Wire::Ndjson, &store);
        s.ok("thread/open", json!({"threadId": "run-2"}));
        s.ok("thread/append", json!({"threadId": "run-2", "events": hostile_events()}));
    }
    let out = dir.path().join("page.html");
    let output = cli(&["view", "--store", &store, "--thread", "run-2", "--out", out.to_str().unwrap()]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let data = page_data(&std::fs::read_to_string(out).unwrap());
    assert_eq!(data["events"], hostile_events());
    assert_eq!(data["title"], "run-2");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Whatever a thread holds, the page has only its own two scripts and the events read back
    /// from the data block unchanged.
    #[test]
    fn any_content_stays_inside_the_data_block(content in any::<String>(), tool in "[<>/!a-z-]{0,12}") {
        let values = json!([
            {"type": "message", "role": "user", "content": content, "iteration": 0},
            {"type": "tool_call", "toolName": tool, "toolCallId": content, "args": {content.clone(): content}, "iteration": 1},
        ]);
        let events = AgentEvent::list_from_values(serde_json::from_value(values.clone()).unwrap()).unwrap();
        let model_input = ModelInput { xml: content.clone(), messages_json: "[]".to_owned() };
        let options = ViewOptions::default();
        let html = render_page(&Page { title: &content, events: &events, model_input: &model_input, options, tokens: None, media: None });
        let data = page_data(&html);
        prop_assert_eq!(&data["events"], &values);
        prop_assert_eq!(&data["xml"], &json!(content));
    }
}
