//! Protocol v1 against the real binary: real framed bytes over real pipes.

use crate::support::events::user;
use crate::support::{serve, Server, Wire};
use serde_json::{json, Value};

const WIRES: [Wire; 2] = [Wire::Lsp, Wire::Ndjson];

fn open(server: &mut Server, id: &str) -> Value {
    server.ok("thread/open", json!({"threadId": id}))
}

#[test]
fn both_framings_serve_the_thread_lifecycle() {
    for wire in WIRES {
        let mut s = Server::start(wire, "memory");
        let info = open(&mut s, "t1");
        assert_eq!(info["threadId"], "t1");
        assert_eq!(info["version"], 0);
        assert_eq!(info["eventCount"], 0);
        let appended = s.ok("thread/append", json!({"threadId": "t1", "events": [user("What is 2+2?", 0)]}));
        assert_eq!(appended, json!({"threadId": "t1", "version": 1, "eventCount": 1}));
        let xml = s.ok("thread/render", json!({"threadId": "t1", "format": "xml"}));
        assert_eq!(
            xml,
            json!({"format": "xml", "version": 1, "text": "<thread>\n  <event type=\"human\" id=\"0\" iteration=\"0\">What is 2+2?</event>\n</thread>"})
        );
        assert_eq!(s.ok("shutdown", json!(null)), Value::Null);
        s.notify("exit", json!(null));
        assert!(s.wait_for_exit().success(), "{wire:?}: exit after shutdown is status 0");
    }
}

#[test]
fn requests_before_initialize_are_refused() {
    let mut s = Server::spawn(Wire::Lsp, &mut serve(Some("memory")));
    let e = s.err("thread/list", json!({}));
    assert_eq!(e["code"], -32002);
    // Notifications before initialize are dropped silently; initialize then works.
    s.notify("thread/list", json!({}));
    let init = s.ok("initialize", json!({"protocolVersion": 1}));
    assert_eq!(init["serverInfo"]["name"], "threadkeeper");
    assert_eq!(init["capabilities"]["store"]["kind"], "memory");
    assert_eq!(s.err("initialize", json!({}))["code"], -32600);
}

#[test]
fn unsupported_protocol_version_is_invalid_params() {
    let mut s = Server::spawn(Wire::Ndjson, &mut serve(Some("memory")));
    let e = s.err("initialize", json!({"protocolVersion": 2}));
    assert_eq!(e["code"], -32602);
    assert_eq!(e["data"]["path"], "protocolVersion");
}

#[test]
fn after_shutdown_requests_are_invalid_and_exit_statuses_follow_lsp() {
    let mut s = Server::start(Wire::Lsp, "memory");
    s.ok("shutdown", json!(null));
    assert_eq!(s.err("thread/list", json!({}))["code"], -32600);
    s.close_stdin();
    assert_eq!(s.wait_for_exit().code(), Some(0), "EOF after shutdown");

    let mut s = Server::start(Wire::Lsp, "memory");
    s.notify("exit", json!(null));
    assert_eq!(s.wait_for_exit().code(), Some(1), "exit without shutdown");

    let mut s = Server::start(Wire::Ndjson, "memory");
    s.close_stdin();
    assert_eq!(s.wait_for_exit().code(), Some(1), "EOF without shutdown");
}

#[test]
fn every_thread_method_answers() {
    let mut s = Server::start(Wire::Ndjson, "memory");
    let made = s.ok("thread/open", json!({"settings": {"instructions": "Be brief."}, "metadata": {"k": 1}}));
    let id = made["threadId"].as_str().unwrap().to_string();
    assert!(id.starts_with("t-"), "{id}");
    assert_eq!(made["settings"], json!({"instructions": "Be brief."}));
    let events = json!([
        user("hi", 0),
        {"type": "tool_call", "iteration": 1, "toolName": "calc", "toolCallId": "c1", "args": {"b": 1, "a": 2}},
        {"type": "tool_result", "iteration": 1, "toolCallId": "c1", "result": {"z": 1.0, "y": [1e21]}},
        {"type": "approval", "iteration": 1, "zeta": true, "payload": {"x": "y"}}
    ]);
    s.ok("thread/append", json!({"threadId": id, "events": events, "expectedVersion": 0}));
    let page = s.ok("thread/events", json!({"threadId": id}));
    assert_eq!(page["events"], events, "events come back as sent, key order included");
    assert_eq!(serde_json::to_string(&page["events"]).unwrap(), serde_json::to_string(&events).unwrap());
    let page = s.ok("thread/events", json!({"threadId": id, "offset": 1, "limit": 2}));
    assert_eq!(page["events"], json!([events[1], events[2]]));
    assert_eq!(page["eventCount"], 4);
    let xml = s.ok("thread/render", json!({"threadId": id, "format": "xml", "options": {"responsePrefix": "Next:"}}));
    assert!(xml["text"].as_str().unwrap().ends_with("</thread>\nNext:"));
    assert!(xml["text"].as_str().unwrap().contains(
        "<event type=\"tool_output\" id=\"2\" name=\"calc\" status=\"success\" iteration=\"1\">{&quot;z&quot;:1,&quot;y&quot;:[1e+21]}</event>"
    ));
    let minimal = s.ok("thread/render", json!({"threadId": id, "format": "xml", "options": {"escape": "minimal"}}));
    assert!(minimal["text"].as_str().unwrap().contains(">{\"z\":1,\"y\":[1e+21]}</event>"));
    let listed = s.ok("thread/list", json!({}));
    assert_eq!(listed["threads"][0]["threadId"], id.as_str());
    assert_eq!(listed["threads"][0]["version"], 1);
    assert_eq!(listed["threads"][0]["metadata"], json!({"k": 1}));
    let reopened = s.ok("thread/open", json!({"threadId": id, "metadata": {"k": 2}}));
    assert_eq!(reopened["metadata"], json!({"k": 2}));
    assert_eq!(reopened["settings"], json!({"instructions": "Be brief."}), "settings kept when not given");
    assert_eq!(reopened["eventCount"], 4);
    assert_eq!(s.ok("thread/close", json!({"threadId": id})), json!({"threadId": id, "closed": true}));
    // The memory store discards a closed thread.
    assert_eq!(s.err("thread/events", json!({"threadId": id}))["code"], -32001);
    open(&mut s, "gone");
    assert_eq!(s.ok("thread/delete", json!({"threadId": "gone"})), json!({"threadId": "gone", "deleted": true}));
    assert_eq!(s.ok("thread/delete", json!({"threadId": "gone"})), json!({"threadId": "gone", "deleted": false}));
}

#[test]
fn stateless_methods_answer() {
    let mut s = Server::start(Wire::Lsp, "memory");
    assert_eq!(
        s.ok("xml/escape", json!({"text": "<a href=\"x\">'&'</a>"}))["text"],
        "&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;"
    );
    let text = s
        .ok("xml/serializeThread", json!({"events": [user("a\u{1b}[0m", 2)], "options": {"responsePrefix": "P"}}))
        ["text"]
        .clone();
    assert_eq!(text, "<thread>\n  <event type=\"human\" id=\"0\" iteration=\"2\">a\u{FFFD}[0m</event>\n</thread>\nP");
    assert_eq!(s.ok("xml/serializeThread", json!({"events": []}))["text"], "<thread>\n</thread>");
    for method in ["xml/parseThread", "toolCalls/parse"] {
        let r = s.call(method, json!({"text": "<thread>\n</thread>"}));
        assert!(r.get("result").is_some(), "{method}: {r}");
    }
    for method in ["messages/toXml", "messages/toText"] {
        let r = s.call(method, json!({"messages": [{"type": "human", "data": {"content": "hi"}}]}));
        assert!(r.get("result").is_some(), "{method}: {r}");
    }
}

#[test]
fn errors_carry_codes_and_data() {
    let mut s = Server::start(Wire::Lsp, "memory");
    open(&mut s, "e");
    let e = s.err("thread/append", json!({"threadId": "e", "events": [user("ok", 0), {"type": "tool_call", "iteration": 0, "toolName": "x", "args": {}}]}));
    assert_eq!(e["code"], -32602);
    assert_eq!(e["data"], json!({"path": "events[1].toolCallId", "reason": "missing"}));
    assert_eq!(e["message"], "invalid params: events[1].toolCallId: missing");
    // All or nothing: the good first event was not stored.
    assert_eq!(s.ok("thread/events", json!({"threadId": "e"}))["eventCount"], 0);

    let e = s.err("thread/render", json!({"threadId": "e", "format": "pdf"}));
    assert_eq!(e["code"], -32602);
    assert_eq!(e["data"]["path"], "format");
    let e = s.err("thread/append", json!({"threadId": "e", "events": {"not": "a list"}}));
    assert_eq!(e["data"]["path"], "events");
    let e = s.err("thread/open", json!({"threadId": "bad id!"}));
    assert_eq!(e["data"]["path"], "threadId");
    let e = s.err("thread/open", json!({"threadId": "x", "colour": "red"}));
    assert_eq!(e["code"], -32602, "unknown fields are refused: {e}");
    let e = s.err("thread/render", json!({"threadId": "missing", "format": "xml"}));
    assert_eq!(e, json!({"code": -32001, "message": "thread \"missing\" not found", "data": {"threadId": "missing"}}));

    s.ok("thread/append", json!({"threadId": "e", "events": [user("1", 0)]}));
    let e = s.err("thread/append", json!({"threadId": "e", "events": [user("2", 0)], "expectedVersion": 0}));
    assert_eq!(e["code"], -32003);
    assert_eq!(e["data"], json!({"threadId": "e", "currentVersion": 1}));
    s.ok("thread/append", json!({"threadId": "e", "events": [user("2", 0)], "expectedVersion": 1}));

    let e = s.err("thread/frobnicate", json!({}));
    assert_eq!(e, json!({"code": -32601, "message": "method not found: \"thread/frobnicate\""}));
}

#[test]
fn limits_answer_minus_32004_and_nothing_is_stored() {
    let mut s = Server::start_command(
        Wire::Ndjson,
        serve(Some("memory")).args([
            "--max-events-per-call",
            "3",
            "--max-event-bytes",
            "200",
            "--max-threads-in-memory",
            "2",
            "--max-frame-bytes",
            "4096",
        ]),
    );
    open(&mut s, "a");
    let e = s.err(
        "thread/append",
        json!({"threadId": "a", "events": [user("1", 0), user("2", 0), user("3", 0), user("4", 0)]}),
    );
    assert_eq!(e["code"], -32004);
    assert_eq!(e["data"], json!({"limit": "maxEventsPerCall", "value": 4, "max": 3}));
    let e = s.err("thread/append", json!({"threadId": "a", "events": [user(&"x".repeat(300), 0)]}));
    assert_eq!(e["data"]["limit"], "maxEventBytes");
    assert_eq!(s.ok("thread/events", json!({"threadId": "a"}))["eventCount"], 0);
    open(&mut s, "b");
    let e = s.err("thread/open", json!({"threadId": "c"}));
    assert_eq!(e["code"], -32004);
    assert_eq!(e["data"]["limit"], "maxThreadsInMemory");
    // The frame limit: the oversized frame is skipped, the next request is answered.
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "xml/escape", "params": {"text": "y".repeat(5000)}});
    s.send(&big);
    let r = s.recv().unwrap();
    assert_eq!(r["id"], 1, "the id is found in the frame's first bytes");
    assert_eq!(r["error"]["code"], -32004);
    assert_eq!(r["error"]["data"]["limit"], "maxFrameBytes");
    assert_eq!(s.ok("xml/escape", json!({"text": "&"}))["text"], "&amp;");
}

#[test]
fn batches_mix_good_bad_and_notifications() {
    for wire in WIRES {
        let mut s = Server::start(wire, "memory");
        s.send(&json!([
            {"jsonrpc": "2.0", "id": 1, "method": "xml/escape", "params": {"text": "<"}},
            {"jsonrpc": "2.0", "method": "xml/escape", "params": {"text": "notification"}},
            {"jsonrpc": "2.0", "id": 2, "method": "nope"},
            {"jsonrpc": "1.0", "id": 3, "method": "xml/escape"},
            42,
            {"jsonrpc": "2.0", "id": "four", "method": "xml/escape", "params": {"wrong": 1}}
        ]));
        let r = s.recv().unwrap();
        let answers = r.as_array().expect("a batch answer is an array");
        assert_eq!(answers.len(), 5, "{r}");
        assert_eq!(answers[0], json!({"jsonrpc": "2.0", "id": 1, "result": {"text": "&lt;"}}));
        assert_eq!(answers[1]["error"]["code"], -32601);
        assert_eq!(answers[2]["error"]["code"], -32600);
        assert_eq!(answers[2]["id"], 3);
        assert_eq!(answers[3]["error"]["code"], -32600);
        assert_eq!(answers[3]["id"], Value::Null);
        assert_eq!(answers[4]["id"], "four");
        assert_eq!(answers[4]["error"]["code"], -32602);
        // An empty batch is one invalid-request error; a batch of notifications gets nothing.
        s.send(&json!([]));
        assert_eq!(s.recv().unwrap()["error"]["code"], -32600);
        s.send(&json!([{"jsonrpc": "2.0", "method": "xml/escape", "params": {"text": "x"}}]));
        assert_eq!(s.ok("xml/escape", json!({"text": ">"}))["text"], "&gt;");
    }
}

#[test]
fn notifications_get_no_response_but_take_effect() {
    let mut s = Server::start(Wire::Lsp, "memory");
    open(&mut s, "n");
    s.notify("thread/append", json!({"threadId": "n", "events": [user("quiet", 0)]}));
    s.notify("no/such/method", json!({}));
    s.notify("$/setTrace", json!({"value": "off"}));
    let page = s.ok("thread/events", json!({"threadId": "n"}));
    assert_eq!(page["eventCount"], 1, "the notification ran before the later request on the same thread");
}

#[test]
fn ids_of_every_shape_come_back_verbatim() {
    let mut s = Server::start(Wire::Ndjson, "memory");
    for id in [json!(-7), json!(1.5), json!("abc"), json!(""), json!(null), json!(18446744073709551615u64)] {
        s.send(&json!({"jsonrpc": "2.0", "id": id, "method": "xml/escape", "params": {"text": "'"}}));
        let r = s.recv().unwrap();
        assert_eq!(r["id"], id);
        assert_eq!(r["result"]["text"], "&apos;");
    }
    s.send(&json!({"jsonrpc": "2.0", "id": {"no": 1}, "method": "xml/escape"}));
    assert_eq!(s.recv().unwrap()["error"]["code"], -32600);
}

fn assert_alive(s: &mut Server) {
    assert_eq!(s.ok("xml/escape", json!({"text": "\""}))["text"], "&quot;");
}

#[test]
fn malformed_input_never_kills_the_server() {
    let mut s = Server::start(Wire::Lsp, "memory");
    // Invalid JSON.
    s.send_body(b"{\"jsonrpc\": \"2.0\", ");
    assert_eq!(s.recv().unwrap()["error"]["code"], -32700);
    assert_alive(&mut s);
    // Invalid UTF-8.
    s.send_body(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"xml/escape\",\"params\":{\"text\":\"\xff\xfe\"}}");
    assert_eq!(s.recv().unwrap()["error"]["code"], -32700);
    assert_alive(&mut s);
    // A header block without Content-Length, then garbage.
    s.send_raw(b"Content-Type: text/plain\r\n\r\nnot a frame at all ");
    let r = s.recv().unwrap();
    assert_eq!(r["error"]["code"], -32700, "{r}");
    assert_alive(&mut s);
    // Content-Length smaller than the body.
    let body = br#"{"jsonrpc":"2.0","id":9,"method":"xml/escape","params":{"text":"<"}}"#;
    s.send_raw(format!("Content-Length: {}\r\n\r\n", body.len() - 10).as_bytes());
    s.send_raw(body);
    assert_eq!(s.recv().unwrap()["error"]["code"], -32700);
    // The tail is reported as skipped garbage once the next header shows where it ends.
    let id = s.request("xml/escape", json!({"text": "<"}));
    assert_eq!(s.recv().unwrap()["error"]["code"], -32700);
    assert_eq!(s.recv().unwrap(), json!({"jsonrpc": "2.0", "id": id, "result": {"text": "&lt;"}}));
    // Content-Length larger than the body: the next frame's header is found again.
    s.send_raw(format!("Content-Length: {}\r\n\r\n", body.len() + 40).as_bytes());
    s.send_raw(body);
    let next = br#"{"jsonrpc":"2.0","id":10,"method":"xml/escape","params":{"text":"&"}}"#;
    s.send_raw(format!("Content-Length: {}\r\n\r\n", next.len()).as_bytes());
    s.send_raw(next);
    // The body is cut where the swallowed header starts, so both requests are answered.
    // (Requests run concurrently, so their answers may come in either order.)
    let mut answers = [s.recv().unwrap(), s.recv().unwrap()];
    answers.sort_by_key(|r| r["id"].as_u64());
    assert_eq!(answers[0], json!({"jsonrpc": "2.0", "id": 9, "result": {"text": "&lt;"}}));
    assert_eq!(answers[1], json!({"jsonrpc": "2.0", "id": 10, "result": {"text": "&amp;"}}));
    // Deeply nested JSON.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    s.send_body(deep.as_bytes());
    let r = s.recv().unwrap();
    assert_eq!(r["error"]["code"], -32004, "{r}");
    assert_eq!(r["error"]["data"], json!({"limit": "maxJsonDepth", "value": 100_000, "max": 100}));
    let deep_params = format!(
        r#"{{"jsonrpc":"2.0","id":11,"method":"xml/escape","params":{{"text":{}1{}}}}}"#,
        "[".repeat(5000),
        "]".repeat(5000)
    );
    s.send_body(deep_params.as_bytes());
    let r = s.recv().unwrap();
    assert_eq!(r["error"]["data"], json!({"limit": "maxJsonDepth", "value": 5002, "max": 100}), "{r}");
    // Brackets inside strings do not count.
    assert_eq!(s.ok("xml/escape", json!({"text": "[[[[{{{{".repeat(100)}))["text"], "[[[[{{{{".repeat(100));
    assert_alive(&mut s);
    // Params of the wrong shape, unknown methods, non-object messages.
    assert_eq!(s.err("xml/escape", json!([1, 2]))["code"], -32602);
    assert_eq!(s.err("xml/escape", json!({"text": 5}))["data"]["path"], "text");
    s.send_body(b"\"just a string\"");
    assert_eq!(s.recv().unwrap()["error"]["code"], -32600);
    s.send_body(br#"{"jsonrpc":"2.0","id":12,"method":"xml/escape","params":"text"}"#);
    assert_eq!(s.recv().unwrap()["error"]["code"], -32600);
    assert_alive(&mut s);
}

#[test]
fn a_hundred_megabyte_frame_over_the_limit_is_skipped() {
    let mut s = Server::start(Wire::Lsp, "memory");
    let len = 100 * 1024 * 1024;
    s.send_raw(format!("Content-Length: {len}\r\n\r\n").as_bytes());
    let chunk = vec![b' '; 1024 * 1024];
    for _ in 0..100 {
        s.send_raw(&chunk);
    }
    let r = s.recv().unwrap();
    assert_eq!(r["error"]["code"], -32004);
    assert_eq!(r["error"]["data"], json!({"limit": "maxFrameBytes", "value": len, "max": 64 * 1024 * 1024}));
    assert_alive(&mut s);
}

#[test]
fn cancel_answers_minus_32800_for_a_queued_request() {
    let mut s = Server::start(Wire::Ndjson, "memory");
    open(&mut s, "big");
    let events: Vec<Value> = (0..20_000).map(|i| user(&format!("message {i} {}", "x".repeat(100)), i / 10)).collect();
    s.ok("thread/append", json!({"threadId": "big", "events": events}));
    // Renders queue up behind each other on the thread's lane; the last one is cancelled
    // while the first ones are still rendering.
    let ids: Vec<u64> =
        (0..10).map(|_| s.request("thread/render", json!({"threadId": "big", "format": "messages"}))).collect();
    let last = *ids.last().unwrap();
    s.notify("$/cancelRequest", json!({"id": last}));
    let mut cancelled = 0;
    for _ in 0..ids.len() {
        let r = s.recv().unwrap();
        if r["id"] == last {
            assert_eq!(r["error"]["code"], -32800, "{}", r["error"]);
            cancelled += 1;
        } else {
            assert!(r.get("result").is_some());
        }
    }
    assert_eq!(cancelled, 1);
    // Cancelling an unknown or finished id is harmless.
    s.notify("$/cancelRequest", json!({"id": 123456}));
    assert_alive(&mut s);
}

#[test]
fn cancel_stops_a_running_render_export_and_import_and_changes_nothing() {
    let mut s = Server::start(Wire::Ndjson, "memory");
    open(&mut s, "huge");
    for batch in 0..2 {
        let events: Vec<Value> = (0..50_000).map(|i| user(&format!("m{batch}-{i}"), i / 100)).collect();
        s.ok("thread/append", json!({"threadId": "huge", "events": events}));
    }
    // The first render of a format builds its renderer over all 100k events: it is running
    // when the cancel arrives, and answers -32800 instead of finishing.
    let render = s.request("thread/render", json!({"threadId": "huge", "format": "anthropic"}));
    s.notify("$/cancelRequest", json!({"id": render}));
    assert_eq!(s.response(render)["error"]["code"], -32800);
    let export = s.request("thread/export", json!({"threadId": "huge", "format": "json"}));
    s.notify("$/cancelRequest", json!({"id": export}));
    assert_eq!(s.response(export)["error"]["code"], -32800);
    // An import is cancelled while it reads the document, before anything is stored: its
    // first 80k blocks, compact, under every document limit and still long to read.
    let text = s.ok("thread/export", json!({"threadId": "huge", "format": "json"}))["text"].clone();
    let mut document: Value = serde_json::from_str(text.as_str().unwrap()).unwrap();
    document["blocks"].as_array_mut().unwrap().truncate(80_000);
    let text = serde_json::to_string(&document).unwrap();
    assert!(text.len() < 16 << 20, "{} bytes", text.len());
    let import = s.request("thread/import", json!({"text": text, "format": "json", "threadId": "copy"}));
    s.notify("$/cancelRequest", json!({"id": import}));
    assert_eq!(s.response(import)["error"]["code"], -32800);
    assert_eq!(s.err("thread/events", json!({"threadId": "copy", "limit": 1}))["code"], -32001);
    // Nothing changed, and the next renders are whole.
    let info = s.ok("thread/events", json!({"threadId": "huge", "offset": 99_999}));
    assert_eq!((info["version"].clone(), info["eventCount"].clone()), (json!(2), json!(100_000)));
    let messages = s.ok("thread/render", json!({"threadId": "huge", "format": "anthropic"}))["messages"].clone();
    assert_eq!(messages.as_array().unwrap().len(), 1, "one user turn holding every message");
    assert_eq!(messages[0]["content"].as_array().unwrap().len(), 100_000);
}

#[test]
fn interleaved_requests_on_many_threads_equal_the_sequential_result() {
    let mut s = Server::start(Wire::Lsp, "memory");
    let threads = 20;
    let steps = 25;
    for t in 0..threads {
        open(&mut s, &format!("c{t}"));
    }
    // Fire everything without waiting: appends and renders interleaved across threads.
    let mut expected_renders = Vec::new();
    for step in 0..steps {
        for t in 0..threads {
            let event = user(&format!("thread {t} step {step}"), step);
            s.request("thread/append", json!({"threadId": format!("c{t}"), "events": [event]}));
            let id = s.request("thread/render", json!({"threadId": format!("c{t}"), "format": "xml"}));
            expected_renders.push((id, t, step));
        }
    }
    let mut responses = std::collections::HashMap::new();
    for _ in 0..(threads * steps * 2) {
        let r = s.recv().unwrap();
        responses.insert(r["id"].as_u64().unwrap(), r);
    }
    for (id, t, step) in expected_renders {
        // Sequentially, the render right after step N's append sees exactly N+1 events.
        let mut want = String::from("<thread>\n");
        for k in 0..=step {
            want.push_str(&format!(
                "  <event type=\"human\" id=\"{k}\" iteration=\"{k}\">thread {t} step {k}</event>\n"
            ));
        }
        want.push_str("</thread>");
        let r = &responses[&id];
        assert_eq!(r["result"]["text"], want.as_str());
        assert_eq!(r["result"]["version"], step + 1);
    }
}

#[test]
fn logs_stay_off_stdout_and_never_show_event_content() {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = serve(Some("memory"))
        .args(["--log-level", "debug"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let secret = "SECRET-CONTENT-1234";
    let input = format!(
        "{}\n{}\n{}\n{}\n",
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "thread/open", "params": {"threadId": "s"}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "thread/append", "params": {"threadId": "s", "events": [user(secret, 0)]}}),
        json!({"jsonrpc": "2.0", "id": 4, "method": "thread/render", "params": {"threadId": "s", "format": "xml"}}),
    );
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stdout.lines().count(), 4, "stdout holds exactly the four responses: {stdout}");
    for line in stdout.lines() {
        serde_json::from_str::<Value>(line).expect("every stdout line is a protocol message");
    }
    assert!(stderr.contains("thread/append"), "debug logs name methods: {stderr}");
    assert!(!stderr.contains(secret), "logs never hold event content: {stderr}");
}

#[test]
fn xml_deltas_rebuild_the_full_document_at_every_step() {
    let mut s = Server::start(Wire::Ndjson, "memory");
    s.ok("thread/open", json!({"threadId": "d", "settings": {"responsePrefix": "Next:"}}));
    let mut lines = String::new();
    let mut known = 0u64;
    for step in 0..20u64 {
        let events: Vec<Value> = (0..=(step % 3))
            .map(|k| json!({"type": "tool_call", "toolName": "t<&>", "toolCallId": format!("c{step}-{k}"), "args": {"q": "\"x\""}, "iteration": step}))
            .collect();
        s.ok("thread/append", json!({"threadId": "d", "events": events}));
        let delta = s.ok(
            "thread/render",
            json!({"threadId": "d", "format": "xml", "options": {"fromEvent": known, "escape": "minimal"}}),
        );
        assert_eq!(delta["fromEvent"], known);
        lines.push_str(delta["lines"].as_str().unwrap());
        known = delta["eventCount"].as_u64().unwrap();
        let rebuilt = format!("<thread>\n{lines}{}", delta["tail"].as_str().unwrap());
        let full = s.ok("thread/render", json!({"threadId": "d", "format": "xml", "options": {"escape": "minimal"}}));
        assert_eq!(rebuilt, full["text"].as_str().unwrap());
        assert_eq!(delta["version"], full["version"]);
    }
    let nothing_new = s.ok("thread/render", json!({"threadId": "d", "format": "xml", "options": {"fromEvent": known}}));
    assert_eq!(nothing_new["lines"], "");
    assert_eq!(nothing_new["tail"], "</thread>\nNext:");
    let e = s.err("thread/render", json!({"threadId": "d", "format": "xml", "options": {"fromEvent": known + 1}}));
    assert_eq!(e["data"]["path"], "options.fromEvent");
    let e = s.err("thread/render", json!({"threadId": "d", "format": "messages", "options": {"fromEvent": 0}}));
    assert_eq!(e["data"]["path"], "options.fromEvent");
}

#[test]
fn lone_surrogate_escapes_from_javascript_hosts_are_stored_as_the_replacement_character() {
    for wire in WIRES {
        let mut s = Server::start(wire, "memory");
        open(&mut s, "js");
        // What `JSON.stringify` writes for an emoji cut in half, a lone low surrogate, a high one
        // before a non-low escape, next to a real pair and an escaped backslash before `ud83d`.
        let body = r#"{"jsonrpc":"2.0","id":900,"method":"thread/append","params":{"threadId":"js","events":[{"type":"message","role":"user","content":"cut \ud83d|\udc00|\ud83d\u0041|\ud83d\ude00|\\ud83d","iteration":0}]}}"#;
        s.send_body(body.as_bytes());
        let answer = s.recv().expect("an answer");
        assert_eq!(answer["id"], 900, "{wire:?}: {answer}");
        assert_eq!(answer["result"]["eventCount"], 1, "{wire:?}: {answer}");
        let expected = "cut \u{FFFD}|\u{FFFD}|\u{FFFD}A|😀|\\ud83d";
        let events = s.ok("thread/events", json!({"threadId": "js"}));
        assert_eq!(events["events"][0]["content"], expected, "{wire:?}");
        let xml = s.ok("thread/render", json!({"threadId": "js", "format": "xml"}));
        assert_eq!(
            xml["text"],
            format!("<thread>\n  <event type=\"human\" id=\"0\" iteration=\"0\">{expected}</event>\n</thread>"),
            "{wire:?}"
        );
        // Inside a batch too.
        s.send_body(br#"[{"jsonrpc":"2.0","id":901,"method":"xml/escape","params":{"text":"\udfff"}}]"#);
        let batch = s.recv().expect("a batch answer");
        assert_eq!(batch, json!([{"jsonrpc": "2.0", "id": 901, "result": {"text": "\u{FFFD}"}}]), "{wire:?}");
    }
}
