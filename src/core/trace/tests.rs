use super::*;
use serde_json::{json, Value};

/// Text that only the thread's content holds: no span may carry it without capture.
const SECRETS: &[&str] = &[
    "SECRET-user-1",
    "SECRET-say-1",
    "SECRET-arg",
    "SECRET-result",
    "SECRET-tool-error",
    "SECRET-question",
    "SECRET-answer",
    "SECRET-summary",
    "SECRET-done",
    "SECRET-instructions",
    "SECRET-fatal",
];

/// Three runs: parallel tool calls; a tool error and a human-input round; a compaction round.
pub(crate) fn three_runs() -> Vec<Value> {
    vec![
        // Run 1 (positions 0–7).
        json!({"type": "message", "role": "user", "content": "SECRET-user-1", "iteration": 0, "timestamp": 1000}),
        json!({"type": "message", "role": "assistant", "content": "SECRET-say-1", "iteration": 0, "timestamp": 2000,
               "model": "gpt-4o", "provider": "openai", "usage": {"inputTokens": 10, "outputTokens": 5}}),
        json!({"type": "tool_call", "toolName": "weather", "toolCallId": "c1", "args": {"city": "SECRET-arg"}, "iteration": 0, "timestamp": 2000}),
        json!({"type": "tool_call", "toolName": "clock", "toolCallId": "c2", "args": {}, "iteration": 0, "timestamp": 2000}),
        json!({"type": "tool_result", "toolCallId": "c2", "result": "SECRET-result", "iteration": 0, "timestamp": 2500}),
        json!({"type": "tool_result", "toolCallId": "c1", "result": {"t": "SECRET-result"}, "iteration": 0, "timestamp": 3000}),
        json!({"type": "message", "role": "assistant", "content": "SECRET-say-1", "iteration": 1, "timestamp": 4000,
               "model": "gpt-4o", "provider": "openai", "usage": {"inputTokens": 20, "outputTokens": 7}, "finishReason": "stop"}),
        json!({"type": "completion", "result": "SECRET-done", "verified": true, "iteration": 1, "timestamp": 4100}),
        // Run 2 (8–13): a failed tool, a question and its answer; ended by the next user message.
        json!({"type": "message", "role": "user", "content": "SECRET-user-1", "iteration": 2, "timestamp": 5000}),
        json!({"type": "tool_call", "toolName": "book", "toolCallId": "c3", "args": {"q": "SECRET-arg"}, "iteration": 2, "timestamp": 6000}),
        json!({"type": "error", "error": "SECRET-tool-error", "recoverable": true, "toolCallId": "c3", "iteration": 2, "timestamp": 6500}),
        json!({"type": "human_input_requested", "question": "SECRET-question", "iteration": 2, "timestamp": 7000}),
        json!({"type": "human_input_received", "response": "SECRET-answer", "iteration": 2, "timestamp": 8000}),
        json!({"type": "message", "role": "assistant", "content": "SECRET-say-1", "iteration": 3, "timestamp": 9000}),
        // Run 3 (14–18): a compaction round of two summaries.
        json!({"type": "message", "role": "user", "content": "SECRET-user-1", "iteration": 4, "timestamp": 10000}),
        json!({"type": "summary", "summarizedIterations": [0], "summary": "SECRET-summary", "iteration": 0, "timestamp": 10500,
               "compaction": {"round": 1, "cutoff": 1}}),
        json!({"type": "summary", "summarizedIterations": [1], "summary": "SECRET-summary", "iteration": 1, "timestamp": 10500,
               "compaction": {"round": 1, "cutoff": 1}}),
        json!({"type": "message", "role": "assistant", "content": "SECRET-say-1", "iteration": 4, "timestamp": 11000}),
        json!({"type": "completion", "result": "SECRET-done", "verified": false, "iteration": 4, "timestamp": 11100}),
    ]
}

fn events(values: Vec<Value>) -> Vec<AgentEvent> {
    AgentEvent::list_from_values(values).unwrap()
}

fn options(capture: bool) -> TraceOptions {
    TraceOptions {
        thread_id: "thread-1".into(),
        agent_name: Some("planner".into()),
        instructions: Some("SECRET-instructions".into()),
        capture_content: capture,
    }
}

fn str_attr<'a>(span: &'a Span, key: &str) -> Option<&'a str> {
    match span.attribute(key)? {
        AttrValue::Str(s) => Some(s),
        other => panic!("{key} is {other:?}"),
    }
}

fn int_attr(span: &Span, key: &str) -> Option<i64> {
    match span.attribute(key)? {
        AttrValue::Int(n) => Some(*n),
        other => panic!("{key} is {other:?}"),
    }
}

fn outline(spans: &[Span]) -> Vec<(String, Option<u64>, u64, u64)> {
    spans.iter().map(|s| (s.name.clone(), s.parent_span_id, s.start_ms, s.end_ms)).collect()
}

#[test]
fn three_runs_make_three_traces_with_their_tree() {
    let spans = thread_spans(options(false), &events(three_runs()), 0);
    let roots: Vec<&Span> = spans.iter().filter(|s| s.parent_span_id.is_none()).collect();
    assert_eq!(roots.len(), 3);
    let traces: std::collections::HashSet<u128> = spans.iter().map(|s| s.trace_id).collect();
    assert_eq!(traces.len(), 3);
    for span in &spans {
        let root = roots.iter().find(|r| r.trace_id == span.trace_id).unwrap();
        if span.parent_span_id.is_some() {
            assert_eq!(span.parent_span_id, Some(root.span_id), "{} hangs under its run", span.name);
            assert!(span.start_ms >= root.start_ms && span.end_ms <= root.end_ms, "{} inside its run", span.name);
        }
    }
    let (r1, r2, r3) = (roots[0].span_id, roots[1].span_id, roots[2].span_id);
    // In the order their ending events came.
    assert_eq!(
        outline(&spans),
        vec![
            ("chat gpt-4o".into(), Some(r1), 1000, 2000),
            ("execute_tool clock".into(), Some(r1), 2000, 2500),
            ("execute_tool weather".into(), Some(r1), 2000, 3000),
            ("chat gpt-4o".into(), Some(r1), 3000, 4000),
            ("invoke_agent planner".into(), None, 1000, 4100),
            ("chat".into(), Some(r2), 5000, 6000),
            ("execute_tool book".into(), Some(r2), 6000, 6500),
            ("chat".into(), Some(r2), 8000, 9000),
            ("invoke_agent planner".into(), None, 5000, 9000),
            ("chat".into(), Some(r3), 10500, 11000),
            ("invoke_agent planner".into(), None, 10000, 11100),
        ]
    );
    let kinds: Vec<SpanKind> = spans.iter().map(|s| s.kind).collect();
    for (span, kind) in spans.iter().zip(kinds) {
        let expected = if span.name.starts_with("chat") { SpanKind::Client } else { SpanKind::Internal };
        assert_eq!(kind, expected, "{}", span.name);
    }
}

#[test]
fn spans_carry_the_conventions_attributes() {
    let spans = thread_spans(options(false), &events(three_runs()), 0);
    for span in &spans {
        assert_eq!(str_attr(span, "gen_ai.conversation.id"), Some("thread-1"));
        let operation = str_attr(span, "gen_ai.operation.name").unwrap();
        assert!(span.name.starts_with(operation), "{} is {operation}", span.name);
    }
    let chat = &spans[0];
    assert_eq!(str_attr(chat, "gen_ai.request.model"), Some("gpt-4o"));
    assert_eq!(str_attr(chat, "gen_ai.provider.name"), Some("openai"));
    assert_eq!(int_attr(chat, "gen_ai.usage.input_tokens"), Some(10));
    assert_eq!(int_attr(chat, "gen_ai.usage.output_tokens"), Some(5));
    assert_eq!(chat.attribute("gen_ai.response.finish_reasons"), None, "none carried");
    assert_eq!(spans[3].attribute("gen_ai.response.finish_reasons"), Some(&AttrValue::StrList(vec!["stop".into()])));
    let weather = &spans[2];
    assert_eq!(str_attr(weather, "gen_ai.tool.name"), Some("weather"));
    assert_eq!(str_attr(weather, "gen_ai.tool.call.id"), Some("c1"));
    assert_eq!(weather.status, SpanStatus::Unset);
    let run1 = &spans[4];
    assert_eq!(str_attr(run1, "gen_ai.agent.name"), Some("planner"));
    assert_eq!(int_attr(run1, "gen_ai.usage.input_tokens"), Some(30), "the run's turns summed");
    assert_eq!(int_attr(run1, "gen_ai.usage.output_tokens"), Some(12));
    assert_eq!(str_attr(run1, "gen_ai.request.model"), Some("gpt-4o"));
    assert_eq!(run1.attribute("threadkeeper.completion.verified"), Some(&AttrValue::Bool(true)));
    assert_eq!(run1.attribute("threadkeeper.run.incomplete"), None);
}

#[test]
fn a_tool_error_is_an_error_status_with_its_type() {
    let spans = thread_spans(options(false), &events(three_runs()), 0);
    let book = spans.iter().find(|s| s.name == "execute_tool book").unwrap();
    assert_eq!(book.status, SpanStatus::Error { description: None });
    assert_eq!(str_attr(book, "error.type"), Some("tool_error"));
    let captured = thread_spans(options(true), &events(three_runs()), 0);
    let book = captured.iter().find(|s| s.name == "execute_tool book").unwrap();
    assert_eq!(book.status, SpanStatus::Error { description: Some("SECRET-tool-error".into()) });
    // A recoverable error outside a tool is an exception event; an unrecoverable one fails the run.
    let mut values = three_runs();
    values.insert(
        7,
        json!({"type": "error", "error": "SECRET-fatal", "recoverable": false, "iteration": 1, "timestamp": 4050}),
    );
    let spans = thread_spans(options(false), &events(values), 0);
    let run1 = spans.iter().find(|s| s.parent_span_id.is_none()).unwrap();
    assert_eq!(run1.status, SpanStatus::Error { description: None });
    assert_eq!(str_attr(run1, "error.type"), Some("agent_error"));
    assert_eq!(run1.events[0].name, "exception");
    assert_eq!(run1.events[0].time_ms, 4050);
}

#[test]
fn human_input_and_compaction_are_span_events_of_their_run() {
    let spans = thread_spans(options(false), &events(three_runs()), 0);
    let roots: Vec<&Span> = spans.iter().filter(|s| s.parent_span_id.is_none()).collect();
    let names = |span: &Span| span.events.iter().map(|e| (e.name, e.time_ms)).collect::<Vec<_>>();
    assert_eq!(names(roots[0]), vec![]);
    assert_eq!(
        names(roots[1]),
        vec![("threadkeeper.human_input.requested", 7000), ("threadkeeper.human_input.received", 8000)]
    );
    assert_eq!(names(roots[2]), vec![("threadkeeper.compaction", 10500), ("threadkeeper.compaction", 10500)]);
    let round = &roots[2].events[1];
    assert!(round.attributes.contains(&("threadkeeper.compaction.round", AttrValue::Int(1))));
    assert!(round.attributes.contains(&("threadkeeper.compaction.cutoff", AttrValue::Int(1))));
    assert!(round.attributes.contains(&("threadkeeper.summary.iterations", AttrValue::IntList(vec![1]))));
    assert!(round.attributes.contains(&("threadkeeper.event.position", AttrValue::Int(16))));
}

#[test]
fn without_capture_no_thread_text_is_in_any_span() {
    let mut values = three_runs();
    values.insert(7, json!({"type": "error", "error": "SECRET-fatal", "recoverable": false, "iteration": 1}));
    let spans = thread_spans(options(false), &events(values.clone()), 0);
    let printed = format!("{spans:?}");
    for secret in SECRETS {
        assert!(!printed.contains(secret), "{secret} leaked");
    }
    // The same thread with capture carries each of them.
    let printed = format!("{:?}", thread_spans(options(true), &events(values), 0));
    for secret in SECRETS {
        assert!(printed.contains(secret), "{secret} captured");
    }
}

#[test]
fn capture_uses_the_conventions_message_shapes() {
    let spans = thread_spans(options(true), &events(three_runs()), 0);
    let json = |span: &Span, key: &str| -> Value { serde_json::from_str(str_attr(span, key).unwrap()).unwrap() };
    let second_chat = &spans[3];
    assert_eq!(
        json(second_chat, "gen_ai.input.messages"),
        json!([
            {"role": "user", "parts": [{"type": "text", "content": "SECRET-user-1"}]},
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c2", "response": "SECRET-result"}]},
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": {"t": "SECRET-result"}}]},
        ])
    );
    assert_eq!(
        json(&spans[0], "gen_ai.output.messages"),
        json!([{"role": "assistant", "finish_reason": "tool_call", "parts": [
            {"type": "text", "content": "SECRET-say-1"},
            {"type": "tool_call", "id": "c1", "name": "weather", "arguments": {"city": "SECRET-arg"}},
            {"type": "tool_call", "id": "c2", "name": "clock", "arguments": {}},
        ]}])
    );
    assert_eq!(
        json(&spans[0], "gen_ai.system_instructions"),
        json!([{"type": "text", "content": "SECRET-instructions"}])
    );
    assert_eq!(json(&spans[2], "gen_ai.tool.call.arguments"), json!({"city": "SECRET-arg"}));
    assert_eq!(json(&spans[2], "gen_ai.tool.call.result"), json!({"t": "SECRET-result"}));
    assert_eq!(
        json(&spans[4], "gen_ai.output.messages"),
        json!([{"role": "assistant", "parts": [{"type": "text", "content": "SECRET-done"}], "finish_reason": "stop"}])
    );
}

#[test]
fn live_pushes_give_the_spans_of_a_backfill() {
    let all = events(three_runs());
    let backfill = thread_spans(options(false), &all, 0);
    // One event per append, spans taken as they come, then the end.
    let mut builder = TraceBuilder::new(options(false));
    let mut live = Vec::new();
    for event in &all {
        builder.push(event, Some(99), 0, &mut live);
    }
    builder.finish(&mut live);
    assert_eq!(live, backfill);
    // A restarted exporter reads what came before silently and gives the rest the same.
    for cut in 0..all.len() {
        let mut builder = TraceBuilder::new(options(false));
        let mut before = Vec::new();
        for event in &all[..cut] {
            builder.push(event, None, 0, &mut before);
        }
        let mut after = Vec::new();
        for event in &all[cut..] {
            builder.push(event, None, 0, &mut after);
        }
        builder.finish(&mut after);
        assert_eq!(after, backfill[before.len()..], "restarted after {cut} events");
    }
}

#[test]
fn an_open_run_is_ended_at_its_last_event_and_flagged() {
    let values = three_runs()[..12].to_vec();
    let spans = thread_spans(options(false), &events(values), 0);
    let run2 = spans.last().unwrap();
    assert_eq!(run2.parent_span_id, None);
    assert_eq!(run2.attribute("threadkeeper.run.incomplete"), Some(&AttrValue::Bool(true)));
    assert_eq!((run2.start_ms, run2.end_ms), (5000, 7000));
    // An unanswered call ends with its run, flagged.
    let values = vec![
        json!({"type": "message", "role": "user", "content": "x", "iteration": 0, "timestamp": 10}),
        json!({"type": "tool_call", "toolName": "slow", "toolCallId": "s", "args": {}, "iteration": 0, "timestamp": 20}),
    ];
    let spans = thread_spans(options(false), &events(values), 0);
    assert_eq!(outline(&spans)[1..2], [("execute_tool slow".into(), Some(spans[2].span_id), 20, 20)]);
    assert_eq!(spans[1].attribute("threadkeeper.tool.unanswered"), Some(&AttrValue::Bool(true)));
}

#[test]
fn events_without_timestamps_take_their_append_time_or_the_one_before() {
    let values = vec![
        json!({"type": "message", "role": "user", "content": "x", "iteration": 0}),
        json!({"type": "message", "role": "assistant", "content": "y", "iteration": 0, "timestamp": 500}),
        json!({"type": "completion", "result": "z", "verified": true, "iteration": 0}),
    ];
    let all = events(values);
    let mut builder = TraceBuilder::new(options(false));
    let mut spans = Vec::new();
    builder.push(&all[0], Some(100), 0, &mut spans);
    builder.push(&all[1], Some(900), 0, &mut spans);
    builder.push(&all[2], Some(700), 0, &mut spans);
    assert_eq!(
        outline(&spans),
        vec![("chat".into(), Some(spans[1].span_id), 100, 500), ("invoke_agent planner".into(), None, 100, 700)]
    );
    let backfilled = thread_spans(options(false), &all, 42);
    assert_eq!((backfilled[1].start_ms, backfilled[1].end_ms), (42, 500));
}

#[test]
fn langchain_message_fields_name_the_model_and_usage() {
    let values = vec![
        json!({"type": "message", "role": "user", "content": "x", "iteration": 0}),
        json!({"type": "message", "role": "assistant", "content": "y", "iteration": 0, "messageFields": {
            "response_metadata": {"model_name": "claude-x", "model_provider": "anthropic", "stop_reason": "end_turn"},
            "usage_metadata": {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}}}),
        json!({"type": "tool_call", "toolName": "t", "toolCallId": "a", "args": {}, "iteration": 0, "messageFields": {
            "usage_metadata": {"input_tokens": 3, "output_tokens": 4}}}),
        json!({"type": "tool_result", "toolCallId": "a", "result": 1, "iteration": 0}),
    ];
    let spans = thread_spans(options(false), &events(values), 0);
    let chat = &spans[0];
    assert_eq!(chat.name, "chat claude-x");
    assert_eq!(str_attr(chat, "gen_ai.provider.name"), Some("anthropic"));
    assert_eq!(int_attr(chat, "gen_ai.usage.input_tokens"), Some(3), "one response's usage, not summed per event");
    assert_eq!(chat.attribute("gen_ai.response.finish_reasons"), Some(&AttrValue::StrList(vec!["end_turn".into()])));
}

#[test]
fn without_an_agent_name_the_root_is_invoke_agent() {
    let values = vec![json!({"type": "message", "role": "user", "content": "x", "iteration": 0})];
    let spans = thread_spans(TraceOptions { thread_id: "t".into(), ..Default::default() }, &events(values), 0);
    assert_eq!(spans[0].name, "invoke_agent");
    assert_eq!(spans[0].attribute("gen_ai.agent.name"), None);
}

#[test]
fn media_parts_are_named_as_the_conventions_name_files_and_uris_never_carried() {
    let blob = format!("sha256:{}", "a".repeat(64));
    let values = vec![
        json!({"type": "message", "role": "user", "iteration": 0, "timestamp": 1000, "content": [
            {"type": "text", "text": "see"},
            {"type": "image", "blob": blob, "mediaType": "image/png", "size": 48213, "width": 1280, "height": 800},
            {"type": "image", "url": "https://example.com/a.png"},
        ]}),
        json!({"type": "tool_call", "toolName": "shot", "toolCallId": "c1", "args": {}, "iteration": 0, "timestamp": 2000}),
        json!({"type": "tool_result", "toolCallId": "c1", "iteration": 0, "timestamp": 2500, "content": [
            {"type": "text", "text": "taken"},
            {"type": "file", "blob": blob, "mediaType": "application/pdf", "filename": "a.pdf", "size": 9},
        ]}),
        json!({"type": "message", "role": "assistant", "content": "done", "iteration": 1, "timestamp": 3000}),
    ];
    let spans = thread_spans(options(true), &events(values), 0);
    let json = |span: &Span, key: &str| -> Value { serde_json::from_str(str_attr(span, key).unwrap()).unwrap() };
    assert_eq!(
        json(&spans[0], "gen_ai.input.messages"),
        json!([{"role": "user", "parts": [
            {"type": "text", "content": "see"},
            {"type": "file", "mime_type": "image/png", "modality": "image", "file_id": blob, "size": 48213, "width": 1280, "height": 800},
            {"type": "uri", "mime_type": "image/*", "modality": "image", "uri": "https://example.com/a.png"},
        ]}])
    );
    let second_chat = spans.iter().filter(|s| s.attribute("gen_ai.input.messages").is_some()).nth(1).unwrap();
    assert_eq!(
        json(second_chat, "gen_ai.input.messages")[1],
        json!({"role": "tool", "parts": [
            {"type": "tool_call_response", "id": "c1", "response": "taken"},
            {"type": "file", "mime_type": "application/pdf", "modality": "document", "file_id": blob, "filename": "a.pdf", "size": 9},
        ]})
    );
    assert!(!format!("{spans:?}").contains("[image"), "no placeholder text");
}
