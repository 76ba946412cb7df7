//! `serve --otlp-endpoint` and `export --otlp` against an OTLP/HTTP receiver on loopback that
//! decodes what arrives with the protocol's own protobuf types: a thread of three runs appended
//! through the protocol arrives as three traces with the GenAI conventions' tree, names, kinds,
//! attributes and error status, and without any of its text; `export --otlp` sends the same
//! spans; a run open at SIGTERM is ended and flagged; with the endpoint down appends succeed.

use crate::support::{serve, Server, Wire};
use axum::body::Bytes;
use axum::extract::State;
use axum::routing::post;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, KeyValue};
use opentelemetry_proto::tonic::trace::v1::{span::SpanKind, status::StatusCode, Span};
use prost::Message;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_threadkeeper");
/// A failing test gives up waiting for spans after this long (no assertion is timed).
const PATIENCE: Duration = Duration::from_secs(60);

/// An OTLP/HTTP receiver on loopback that keeps every request body.
struct Receiver {
    base: String,
    bodies: Arc<Mutex<Vec<Vec<u8>>>>,
    _runtime: tokio::runtime::Runtime,
}

impl Receiver {
    fn start() -> Receiver {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
        let bodies: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let app = axum::Router::new()
            .route(
                "/v1/traces",
                post(|State(bodies): State<Arc<Mutex<Vec<Vec<u8>>>>>, body: Bytes| async move {
                    bodies.lock().unwrap().push(body.to_vec());
                    // An empty ExportTraceServiceResponse: everything accepted.
                    ([("content-type", "application/x-protobuf")], Vec::<u8>::new())
                }),
            )
            .with_state(bodies.clone());
        runtime.spawn(async move { axum::serve(listener, app).await.unwrap() });
        Receiver { base, bodies, _runtime: runtime }
    }

    fn requests(&self) -> Vec<ExportTraceServiceRequest> {
        let bodies = self.bodies.lock().unwrap().clone();
        bodies.iter().map(|b| ExportTraceServiceRequest::decode(&b[..]).expect("an OTLP protobuf body")).collect()
    }

    fn spans(&self) -> Vec<Span> {
        let mut spans = Vec::new();
        for request in self.requests() {
            for resource in request.resource_spans {
                for scope in resource.scope_spans {
                    spans.extend(scope.spans);
                }
            }
        }
        spans
    }

    /// Waits until `done` holds for the spans received so far.
    fn wait_for(&self, what: &str, done: impl Fn(&[Span]) -> bool) -> Vec<Span> {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let spans = self.spans();
            if done(&spans) {
                return spans;
            }
            assert!(Instant::now() < deadline, "waited for {what}; got {} spans", spans.len());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn all_bytes(&self) -> Vec<u8> {
        self.bodies.lock().unwrap().concat()
    }
}

fn roots(spans: &[Span]) -> Vec<&Span> {
    spans.iter().filter(|s| s.parent_span_id.is_empty()).collect()
}

fn attr<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a any_value::Value> {
    attributes.iter().find(|kv| kv.key == key).and_then(|kv| kv.value.as_ref()).and_then(|v| v.value.as_ref())
}

fn str_attr<'a>(span: &'a Span, key: &str) -> Option<&'a str> {
    match attr(&span.attributes, key)? {
        any_value::Value::StringValue(s) => Some(s),
        other => panic!("{key} is {other:?}"),
    }
}

/// Text only the thread holds.
const SECRETS: &[&str] = &[
    "SECRET-ask",
    "SECRET-say",
    "SECRET-arg",
    "SECRET-result",
    "SECRET-fail",
    "SECRET-question",
    "SECRET-answer",
    "SECRET-summary",
    "SECRET-done",
    "SECRET-instructions",
];

/// Three runs, appended a step at a time: parallel tool calls; a failed tool and a human-input
/// round (ended by the next user message); a compaction round through `thread/compact`.
fn append_three_runs(server: &mut Server, thread_id: &str) {
    let mut append = |events: Value| {
        server.ok("thread/append", json!({"threadId": thread_id, "events": events}));
    };
    append(json!([{"type": "message", "role": "user", "content": "SECRET-ask", "iteration": 0, "timestamp": 1_000}]));
    append(json!([
        {"type": "message", "role": "assistant", "content": "SECRET-say", "iteration": 0, "timestamp": 2_000,
         "model": "gpt-4o", "provider": "openai", "usage": {"inputTokens": 10, "outputTokens": 5}},
        {"type": "tool_call", "toolName": "weather", "toolCallId": "c1", "args": {"city": "SECRET-arg"}, "iteration": 0, "timestamp": 2_000},
        {"type": "tool_call", "toolName": "clock", "toolCallId": "c2", "args": {}, "iteration": 0, "timestamp": 2_000},
    ]));
    append(
        json!([{"type": "tool_result", "toolCallId": "c2", "result": "SECRET-result", "iteration": 0, "timestamp": 2_500}]),
    );
    append(
        json!([{"type": "tool_result", "toolCallId": "c1", "result": {"t": "SECRET-result"}, "iteration": 0, "timestamp": 3_000}]),
    );
    append(json!([
        {"type": "message", "role": "assistant", "content": "SECRET-say", "iteration": 1, "timestamp": 4_000, "finishReason": "stop"},
        {"type": "completion", "result": "SECRET-done", "verified": true, "iteration": 1, "timestamp": 4_100},
    ]));
    append(json!([
        {"type": "message", "role": "user", "content": "SECRET-ask", "iteration": 2, "timestamp": 5_000},
        {"type": "tool_call", "toolName": "book", "toolCallId": "c3", "args": {"q": "SECRET-arg"}, "iteration": 2, "timestamp": 6_000},
    ]));
    append(
        json!([{"type": "error", "error": "SECRET-fail", "recoverable": true, "toolCallId": "c3", "iteration": 2, "timestamp": 6_500}]),
    );
    append(
        json!([{"type": "human_input_requested", "question": "SECRET-question", "iteration": 2, "timestamp": 7_000}]),
    );
    append(json!([{"type": "human_input_received", "response": "SECRET-answer", "iteration": 2, "timestamp": 8_000}]));
    append(
        json!([{"type": "message", "role": "assistant", "content": "SECRET-say", "iteration": 3, "timestamp": 9_000}]),
    );
    append(json!([{"type": "message", "role": "user", "content": "SECRET-ask", "iteration": 4, "timestamp": 10_000}]));
    let plan = server.ok("thread/planCompaction", json!({"threadId": thread_id, "keepRecentIterations": 1}));
    let summaries: Vec<Value> = plan["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| json!({"iteration": i["iteration"], "summary": "SECRET-summary"}))
        .collect();
    assert_eq!(summaries.len(), 4, "{plan}");
    server.ok("thread/compact", json!({"threadId": thread_id, "summaries": summaries, "keepRecentIterations": 1}));
    server.ok(
        "thread/append",
        json!({"threadId": thread_id, "events": [
            {"type": "message", "role": "assistant", "content": "SECRET-say", "iteration": 4, "timestamp": 11_000},
            {"type": "completion", "result": "SECRET-done", "verified": false, "iteration": 4, "timestamp": 11_100},
        ]}),
    );
}

fn open_thread(server: &mut Server, thread_id: &str) {
    server.ok(
        "thread/open",
        json!({"threadId": thread_id, "metadata": {"agentName": "planner"},
               "settings": {"instructions": "SECRET-instructions"}}),
    );
}

/// A span as compared between the live export and the backfill: everything but the times of
/// events the store keeps no time for (here every event has its own).
fn comparable(span: &Span) -> String {
    let mut attributes: Vec<String> = span.attributes.iter().map(|kv| format!("{kv:?}")).collect();
    attributes.sort();
    format!(
        "{:?} {:?} {:?} {} {} {} {} {attributes:?} {:?} {:?}",
        span.trace_id,
        span.span_id,
        span.parent_span_id,
        span.name,
        span.kind,
        span.start_time_unix_nano,
        span.end_time_unix_nano,
        span.events,
        span.status
    )
}

#[test]
fn a_thread_appended_live_arrives_as_its_three_traces_and_export_sends_the_same() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let store = format!("sqlite:{}", dir.path().join("t.db").display());
    let mut server = Server::start_command(Wire::Ndjson, serve(Some(&store)).args(["--otlp-endpoint", &receiver.base]));
    assert_eq!(
        server.init["capabilities"]["tracing"],
        json!({"exporter": "otlp", "protocol": "http/protobuf", "captureContent": false})
    );
    open_thread(&mut server, "trip");
    append_three_runs(&mut server, "trip");
    let spans = receiver.wait_for("three runs", |spans| roots(spans).len() == 3);

    // The tree: three traces, each an invoke_agent root with its chat and tool spans under it.
    let roots = roots(&spans);
    assert_eq!(spans.iter().map(|s| &s.trace_id).collect::<BTreeSet<_>>().len(), 3);
    for root in &roots {
        assert_eq!(root.name, "invoke_agent planner");
        assert_eq!(root.kind, SpanKind::Internal as i32);
        assert_eq!(str_attr(root, "gen_ai.agent.name"), Some("planner"));
    }
    let mut names = Vec::new();
    for span in &spans {
        assert_eq!(str_attr(span, "gen_ai.conversation.id"), Some("trip"));
        if span.parent_span_id.is_empty() {
            continue;
        }
        let root = roots.iter().find(|r| r.trace_id == span.trace_id).expect("its run");
        assert_eq!(span.parent_span_id, root.span_id, "{} hangs under its run", span.name);
        let kind = if span.name.starts_with("chat") { SpanKind::Client } else { SpanKind::Internal };
        assert_eq!(span.kind, kind as i32, "{}", span.name);
        names.push(span.name.as_str());
    }
    names.sort();
    assert_eq!(
        names,
        [
            "chat",
            "chat",
            "chat",
            "chat",
            "chat gpt-4o",
            "execute_tool book",
            "execute_tool clock",
            "execute_tool weather"
        ]
    );
    let first_chat = spans.iter().find(|s| s.name == "chat gpt-4o").unwrap();
    assert_eq!(str_attr(first_chat, "gen_ai.provider.name"), Some("openai"));
    assert_eq!(str_attr(first_chat, "gen_ai.operation.name"), Some("chat"));
    assert_eq!(str_attr(first_chat, "gen_ai.request.model"), Some("gpt-4o"));
    assert_eq!(attr(&first_chat.attributes, "gen_ai.usage.input_tokens"), Some(&any_value::Value::IntValue(10)));
    let weather = spans.iter().find(|s| s.name == "execute_tool weather").unwrap();
    assert_eq!(str_attr(weather, "gen_ai.tool.name"), Some("weather"));
    assert_eq!(str_attr(weather, "gen_ai.tool.call.id"), Some("c1"));
    assert_eq!((weather.start_time_unix_nano, weather.end_time_unix_nano), (2_000_000_000, 3_000_000_000));
    // The failed tool: status ERROR with error.type, and no text.
    let book = spans.iter().find(|s| s.name == "execute_tool book").unwrap();
    let status = book.status.as_ref().unwrap();
    assert_eq!(status.code, StatusCode::Error as i32);
    assert_eq!(status.message, "");
    assert_eq!(str_attr(book, "error.type"), Some("tool_error"));
    // Human input and compaction as span events of their runs.
    let event_names = |root: &Span| root.events.iter().map(|e| e.name.clone()).collect::<Vec<_>>();
    let mut by_start: Vec<&&Span> = roots.iter().collect();
    by_start.sort_by_key(|r| r.start_time_unix_nano);
    assert_eq!(event_names(by_start[1]), ["threadkeeper.human_input.requested", "threadkeeper.human_input.received"]);
    assert_eq!(event_names(by_start[2]), ["threadkeeper.compaction"; 4]);
    // The resource names the service.
    let resource = receiver.requests()[0].resource_spans[0].resource.clone().unwrap();
    let service = attr(&resource.attributes, "service.name");
    assert_eq!(service, Some(&any_value::Value::StringValue("threadkeeper".into())));
    // Capture off: not one byte of the thread's text went out.
    let bytes = receiver.all_bytes();
    for secret in SECRETS {
        assert!(!bytes.windows(secret.len()).any(|w| w == secret.as_bytes()), "{secret} was exported");
    }

    // The backfill of the stored thread: the same spans.
    let again = Receiver::start();
    let output = Command::new(BIN)
        .args(["export", "--otlp", &again.base, "--store", &store, "--thread", "trip"])
        .env_remove("THREADKEEPER_STORE")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stderr).contains("sent 11 spans (3 traces) of thread trip"));
    let live: BTreeSet<String> = spans.iter().map(comparable).collect();
    let backfilled: BTreeSet<String> = again.spans().iter().map(comparable).collect();
    assert_eq!(live.len(), 11);
    assert_eq!(backfilled, live);
    assert!(server.stop().success());
}

#[test]
fn a_run_open_at_sigterm_is_ended_flagged_and_sent_with_content_when_asked() {
    let receiver = Receiver::start();
    let mut server = Server::start_command(
        Wire::Lsp,
        serve(Some("memory")).args(["--otlp-endpoint", &receiver.base, "--otlp-capture-content"]),
    );
    assert_eq!(server.init["capabilities"]["tracing"]["captureContent"], true);
    open_thread(&mut server, "open-run");
    server.ok(
        "thread/append",
        json!({"threadId": "open-run", "events": [
            {"type": "message", "role": "user", "content": "SECRET-ask", "iteration": 0, "timestamp": 1_000},
            {"type": "message", "role": "assistant", "content": "SECRET-say", "iteration": 0, "timestamp": 1_500},
            {"type": "tool_call", "toolName": "slow", "toolCallId": "s1", "args": {"x": "SECRET-arg"}, "iteration": 0, "timestamp": 2_000},
        ]}),
    );
    assert_eq!(unsafe { libc::kill(server.pid() as libc::pid_t, libc::SIGTERM) }, 0);
    assert!(server.wait_for_exit().success(), "{}", server.stderr());
    // Sent before the process ended: nothing to wait for.
    let spans = receiver.spans();
    let root = roots(&spans)[0].clone();
    let flag = attr(&root.attributes, "threadkeeper.run.incomplete");
    assert_eq!(flag, Some(&any_value::Value::BoolValue(true)), "{root:?}");
    assert_eq!(root.end_time_unix_nano, 2_000_000_000, "ended at its last event");
    let tool = spans.iter().find(|s| s.name == "execute_tool slow").unwrap();
    assert_eq!(attr(&tool.attributes, "threadkeeper.tool.unanswered"), Some(&any_value::Value::BoolValue(true)));
    // Content, in the conventions' shapes.
    let chat = spans.iter().find(|s| s.name == "chat").unwrap();
    let output: Value = serde_json::from_str(str_attr(chat, "gen_ai.output.messages").unwrap()).unwrap();
    assert_eq!(
        output,
        json!([{"role": "assistant", "finish_reason": "tool_call", "parts": [
            {"type": "text", "content": "SECRET-say"},
            {"type": "tool_call", "id": "s1", "name": "slow", "arguments": {"x": "SECRET-arg"}}]}])
    );
    let input: Value = serde_json::from_str(str_attr(chat, "gen_ai.input.messages").unwrap()).unwrap();
    assert_eq!(input, json!([{"role": "user", "parts": [{"type": "text", "content": "SECRET-ask"}]}]));
    let instructions: Value = serde_json::from_str(str_attr(chat, "gen_ai.system_instructions").unwrap()).unwrap();
    assert_eq!(instructions, json!([{"type": "text", "content": "SECRET-instructions"}]));
    assert_eq!(str_attr(tool, "gen_ai.tool.call.arguments"), Some(r#"{"x":"SECRET-arg"}"#));
}

#[test]
fn with_the_endpoint_down_appends_succeed_and_the_server_stops_cleanly() {
    // Nothing listens there: a port bound and dropped again.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let down = format!("http://127.0.0.1:{port}");
    let mut server = Server::start_command(Wire::Ndjson, serve(Some("memory")).args(["--otlp-endpoint", &down]));
    server.ok("thread/open", json!({"threadId": "t"}));
    for i in 0..200 {
        let events = json!([
            {"type": "message", "role": "user", "content": format!("q{i}"), "iteration": i},
            {"type": "completion", "result": "ok", "verified": true, "iteration": i},
        ]);
        let result = server.ok("thread/append", json!({"threadId": "t", "events": events}));
        assert_eq!(result["eventCount"], 2 * (i + 1));
    }
    assert!(server.stop().success());
}

#[test]
fn bad_endpoints_stop_the_server_before_it_serves() {
    let output = serve(Some("memory"))
        .args(["--otlp-endpoint", "https://collector:4318"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("https is not supported"), "{stderr}");
    // export --otlp says which thread it could not find.
    let output = Command::new(BIN)
        .args(["export", "--otlp", "http://127.0.0.1:9", "--store", "memory", "--thread", "nope"])
        .env_remove("THREADKEEPER_STORE")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("thread nope"));
}

#[test]
fn export_sends_a_thread_file_under_its_name() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("small-run.jsonl");
    let events = [
        json!({"type": "message", "role": "user", "content": "SECRET-ask", "iteration": 0, "timestamp": 1_000}),
        json!({"type": "tool_call", "toolName": "calc", "toolCallId": "k", "args": {"e": "SECRET-arg"}, "iteration": 0, "timestamp": 2_000}),
        json!({"type": "tool_result", "toolCallId": "k", "result": "SECRET-result", "iteration": 0, "timestamp": 3_000}),
        json!({"type": "completion", "result": "SECRET-done", "verified": true, "iteration": 1, "timestamp": 4_000}),
    ];
    let lines: Vec<String> = events.iter().map(Value::to_string).collect();
    std::fs::write(&file, lines.join("\n")).unwrap();
    // A store in the environment does not stand in the way of a file.
    let output = Command::new(BIN)
        .args(["export", "--otlp", &receiver.base, file.to_str().unwrap()])
        .env("THREADKEEPER_STORE", "memory")
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let spans = receiver.spans();
    let mut names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["chat", "execute_tool calc", "invoke_agent"]);
    assert!(spans.iter().all(|s| str_attr(s, "gen_ai.conversation.id") == Some("small-run")));
    let bytes = receiver.all_bytes();
    for secret in SECRETS {
        assert!(!bytes.windows(secret.len()).any(|w| w == secret.as_bytes()), "{secret} was exported");
    }
}
