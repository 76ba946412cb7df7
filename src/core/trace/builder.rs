//! Events in, finished spans out: the state of one thread's open run.

use super::carried::Carried;
use super::content;
use super::ids::{self, Role};
use super::{AttrValue, Attribute, Span, SpanEvent, SpanKind, SpanStatus, TraceOptions};
use crate::event::{AgentEvent, EventKind, Role as MessageRole};
use serde_json::{Map, Number, Value};

/// Reads a thread's events in order and gives each span once the event that ends it is read.
pub struct TraceBuilder {
    options: TraceOptions,
    /// Events read so far: the position of the next one.
    position: u64,
    /// The time of the last event read: the time of a later one that carries none and has no
    /// append time.
    last_ms: Option<u64>,
    run: Option<Run>,
}

struct Run {
    trace_id: u128,
    span_id: u64,
    start_ms: u64,
    end_ms: u64,
    /// The first model and provider a turn of the run named.
    carried: Carried,
    input_tokens: Option<i64>,
    output_tokens: Option<i64>,
    events: Vec<SpanEvent>,
    /// An unrecoverable error outside a tool, with its text when content is captured.
    failure: Option<Option<String>>,
    verified: Option<bool>,
    turn: Option<Turn>,
    tools: Vec<Tool>,
    /// When the model was last given something: a turn's span starts there.
    turn_input_ms: u64,
    /// With content capture: the run's messages so far, the input of its next turn.
    messages: Vec<Value>,
    input: Vec<Value>,
    output: Vec<Value>,
}

struct Turn {
    span_id: u64,
    iteration: Number,
    start_ms: u64,
    end_ms: u64,
    carried: Carried,
    calls: bool,
    /// With content capture: the turn's input and what it said.
    input: Vec<Value>,
    parts: Vec<Value>,
}

struct Tool {
    span_id: u64,
    call_id: String,
    name: String,
    start_ms: u64,
    arguments: Option<String>,
}

/// How a tool span ended.
enum ToolEnd<'a> {
    Result(&'a Value),
    Error(&'a str),
    Unanswered,
}

impl TraceBuilder {
    pub fn new(options: TraceOptions) -> Self {
        TraceBuilder { options, position: 0, last_ms: None, run: None }
    }

    /// The position of the next event.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// New thread-wide facts (the thread's metadata or settings changed) for the spans to come.
    pub fn set_options(&mut self, options: TraceOptions) {
        self.options = options;
    }

    /// Reads the next event; pushes the spans it ends onto `out`. Its time is its `timestamp`,
    /// else `append_ms`, else the time of the event before it, else `fallback_ms`.
    pub fn push(&mut self, event: &AgentEvent, append_ms: Option<u64>, fallback_ms: u64, out: &mut Vec<Span>) {
        let position = self.position;
        self.position += 1;
        let time = event.timestamp().map(ms).or(append_ms).or(self.last_ms).unwrap_or(fallback_ms);
        self.last_ms = Some(time);
        let kind = event.kind();
        if let EventKind::Message { role: MessageRole::User, content } = kind {
            self.end_run(false, out);
            let capture = self.options.capture_content;
            let run = self.start_run(position, time);
            if capture {
                let message = content::message("user", content::content_parts(content));
                run.input.push(message.clone());
                run.messages.push(message);
            }
            return;
        }
        if self.run.is_none() {
            self.start_run(position, time);
        }
        let capture = self.options.capture_content;
        let run = self.run.as_mut().expect("a run is open");
        run.end_ms = run.end_ms.max(time);
        let turn_event =
            matches!(kind, EventKind::Message { role: MessageRole::Assistant, .. } | EventKind::ToolCall { .. });
        if !turn_event || run.turn.as_ref().is_some_and(|turn| &turn.iteration != event.iteration()) {
            self.close_turn(out);
        }
        let run = self.run.as_mut().expect("a run is open");
        match kind {
            EventKind::Message { role: MessageRole::Assistant, content } => {
                let turn = turn_for(run, event, position, &self.options.thread_id, time);
                if capture {
                    turn.parts.extend(content::content_parts(content));
                }
            }
            EventKind::ToolCall { tool_name, tool_call_id, args } => {
                let turn = turn_for(run, event, position, &self.options.thread_id, time);
                turn.calls = true;
                if capture {
                    turn.parts.push(content::tool_call_part(tool_call_id, tool_name, args));
                }
                run.tools.push(Tool {
                    span_id: ids::span_id(&self.options.thread_id, position, Role::Tool),
                    call_id: tool_call_id.to_owned(),
                    name: tool_name.to_owned(),
                    start_ms: time,
                    arguments: capture.then(|| Value::Object(args.clone()).to_string()),
                });
            }
            other => {
                run.turn_input_ms = time;
                if self.read_other(other, event, position, time, out) {
                    self.end_run(false, out);
                }
            }
        }
    }

    /// Ends a run still open (flagged `threadkeeper.run.incomplete`) at its last event.
    pub fn finish(&mut self, out: &mut Vec<Span>) {
        self.end_run(true, out);
    }

    fn start_run(&mut self, position: u64, time: u64) -> &mut Run {
        let thread_id = &self.options.thread_id;
        self.run.insert(Run {
            trace_id: ids::trace_id(thread_id, position),
            span_id: ids::span_id(thread_id, position, Role::Run),
            start_ms: time,
            end_ms: time,
            carried: Carried::default(),
            input_tokens: None,
            output_tokens: None,
            events: Vec::new(),
            failure: None,
            verified: None,
            turn: None,
            tools: Vec::new(),
            turn_input_ms: time,
            messages: Vec::new(),
            input: Vec::new(),
            output: Vec::new(),
        })
    }

    /// Reads an event that is neither a user message nor part of a turn; true when it ends the
    /// run (a completion).
    fn read_other(
        &mut self,
        kind: EventKind<'_>,
        event: &AgentEvent,
        position: u64,
        time: u64,
        out: &mut Vec<Span>,
    ) -> bool {
        let capture = self.options.capture_content;
        let marks = |name: &'static str, mut attributes: Vec<Attribute>| {
            attributes.insert(0, ("threadkeeper.event.position", AttrValue::Int(position as i64)));
            attributes.insert(1, ("threadkeeper.iteration", AttrValue::Int(int(event.iteration()))));
            SpanEvent { name, time_ms: time, attributes }
        };
        let o = &self.options;
        let run = self.run.as_mut().expect("a run is open");
        let parent = run.parent();
        match kind {
            EventKind::ToolResult { tool_call_id, result, content: parts } => {
                // Media parts are named (kind, type, blob, size), never carried.
                let result = &*crate::event::tool_result_value(result, parts);
                if capture {
                    let mut message = vec![content::tool_response_part(tool_call_id, result)];
                    message.extend(parts.into_iter().flat_map(content::media_parts));
                    run.messages.push(content::message("tool", message));
                }
                if let Some(tool) = take_tool(run, tool_call_id) {
                    out.push(tool_span(o, parent, tool, time, ToolEnd::Result(result)));
                }
            }
            EventKind::Error { error, tool_call_id: Some(id), .. } if run.tools.iter().any(|t| t.call_id == id) => {
                if capture {
                    let part = content::tool_response_part(id, &Value::String(error.to_owned()));
                    run.messages.push(content::message("tool", vec![part]));
                }
                let tool = take_tool(run, id).expect("checked above");
                out.push(tool_span(o, parent, tool, time, ToolEnd::Error(error)));
            }
            EventKind::Error { error, recoverable, .. } => {
                let mut attributes = vec![
                    ("exception.type", AttrValue::Str(AGENT_ERROR.into())),
                    ("threadkeeper.error.recoverable", AttrValue::Bool(recoverable)),
                ];
                if capture {
                    attributes.push(("exception.message", AttrValue::Str(error.into())));
                }
                run.events.push(marks("exception", attributes));
                if !recoverable && run.failure.is_none() {
                    run.failure = Some(capture.then(|| error.to_owned()));
                }
            }
            EventKind::HumanInputRequested { question } => {
                let mut attributes = Vec::new();
                if capture {
                    attributes.push(("threadkeeper.human_input.question", AttrValue::Str(question.into())));
                }
                run.events.push(marks("threadkeeper.human_input.requested", attributes));
            }
            EventKind::HumanInputReceived { response } => {
                let mut attributes = Vec::new();
                if capture {
                    attributes.push(("threadkeeper.human_input.response", AttrValue::Str(response.into())));
                    run.messages.push(content::message("user", vec![content::text_part(response)]));
                }
                run.events.push(marks("threadkeeper.human_input.received", attributes));
            }
            EventKind::Summary { summarized_iterations, summary } => {
                let iterations: Vec<i64> = summarized_iterations.iter().filter_map(Value::as_number).map(int).collect();
                let mut attributes = vec![("threadkeeper.summary.iterations", AttrValue::IntList(iterations))];
                let name = match compaction_marker(event.fields()) {
                    Some((round, cutoff)) => {
                        attributes.push(("threadkeeper.compaction.round", AttrValue::Int(round)));
                        attributes.push(("threadkeeper.compaction.cutoff", AttrValue::Int(cutoff)));
                        "threadkeeper.compaction"
                    }
                    None => "threadkeeper.summary",
                };
                if capture {
                    attributes.push(("threadkeeper.summary.text", AttrValue::Str(summary.into())));
                }
                run.events.push(marks(name, attributes));
            }
            EventKind::Completion { result, verified } => {
                run.verified = Some(verified);
                if capture {
                    run.output.push(content::output_message(vec![content::text_part(result)], "stop"));
                }
                return true;
            }
            EventKind::Message { role, content } => {
                // A system message (user and assistant ones never get here).
                if capture {
                    run.messages.push(content::message(role.as_str(), vec![content::text_part(&content.text())]));
                }
            }
            EventKind::Unknown { .. } | EventKind::Reasoning { .. } => {
                let type_name = event.event_type();
                let attributes = vec![("threadkeeper.event.type", AttrValue::Str(type_name.into()))];
                run.events.push(marks("threadkeeper.event", attributes));
            }
            EventKind::ToolCall { .. } => unreachable!("a turn's event"),
        }
        false
    }

    /// Ends the open run, if any: its turn, its unanswered tools, then its root span.
    fn end_run(&mut self, incomplete: bool, out: &mut Vec<Span>) {
        self.close_turn(out);
        let Some(mut run) = self.run.take() else { return };
        for tool in std::mem::take(&mut run.tools) {
            out.push(tool_span(&self.options, run.parent(), tool, run.end_ms, ToolEnd::Unanswered));
        }
        out.push(self.run_span(run, incomplete));
    }

    /// Gives the open turn's span; the run counts its tokens and names its first model.
    fn close_turn(&mut self, out: &mut Vec<Span>) {
        let Some(run) = self.run.as_mut() else { return };
        let Some(turn) = run.turn.take() else { return };
        run.turn_input_ms = turn.end_ms;
        add(&mut run.input_tokens, turn.carried.input_tokens);
        add(&mut run.output_tokens, turn.carried.output_tokens);
        run.carried.model = run.carried.model.take().or_else(|| turn.carried.model.clone());
        run.carried.provider = run.carried.provider.take().or_else(|| turn.carried.provider.clone());
        out.push(turn_span(&self.options, run.parent(), turn));
    }

    fn run_span(&self, run: Run, incomplete: bool) -> Span {
        let o = &self.options;
        let mut attributes = common(o, "invoke_agent");
        if let Some(agent) = &o.agent_name {
            attributes.push(("gen_ai.agent.name", AttrValue::Str(agent.clone())));
        }
        push_carried(&mut attributes, &run.carried, run.input_tokens, run.output_tokens);
        if let Some(verified) = run.verified {
            attributes.push(("threadkeeper.completion.verified", AttrValue::Bool(verified)));
        }
        if incomplete {
            attributes.push(("threadkeeper.run.incomplete", AttrValue::Bool(true)));
        }
        let status = match run.failure {
            Some(description) => {
                attributes.push(("error.type", AttrValue::Str(AGENT_ERROR.into())));
                SpanStatus::Error { description }
            }
            None => SpanStatus::Unset,
        };
        if o.capture_content {
            push_content(o, &mut attributes, &run.input, &run.output);
        }
        Span {
            trace_id: run.trace_id,
            span_id: run.span_id,
            parent_span_id: None,
            name: match &o.agent_name {
                Some(agent) => format!("invoke_agent {agent}"),
                None => "invoke_agent".into(),
            },
            kind: SpanKind::Internal,
            start_ms: run.start_ms,
            end_ms: run.end_ms,
            attributes,
            events: run.events,
            status,
        }
    }
}

fn turn_span(o: &TraceOptions, run: Parent, turn: Turn) -> Span {
    let mut attributes = common(o, "chat");
    push_carried(&mut attributes, &turn.carried, turn.carried.input_tokens, turn.carried.output_tokens);
    if let Some(reason) = &turn.carried.finish_reason {
        attributes.push(("gen_ai.response.finish_reasons", AttrValue::StrList(vec![reason.clone()])));
    }
    attributes.push(("threadkeeper.iteration", AttrValue::Int(int(&turn.iteration))));
    if o.capture_content {
        let inferred = if turn.calls { "tool_call" } else { "stop" };
        let reason = turn.carried.finish_reason.as_deref().unwrap_or(inferred).to_owned();
        let output = [content::output_message(turn.parts, &reason)];
        push_content(o, &mut attributes, &turn.input, &output);
    }
    Span {
        trace_id: run.trace_id,
        span_id: turn.span_id,
        parent_span_id: Some(run.span_id),
        name: match &turn.carried.model {
            Some(model) => format!("chat {model}"),
            None => "chat".into(),
        },
        kind: SpanKind::Client,
        start_ms: turn.start_ms.min(turn.end_ms),
        end_ms: turn.end_ms,
        attributes,
        events: Vec::new(),
        status: SpanStatus::Unset,
    }
}

fn tool_span(o: &TraceOptions, run: Parent, tool: Tool, end_ms: u64, end: ToolEnd<'_>) -> Span {
    let capture = o.capture_content;
    let mut attributes = common(o, "execute_tool");
    attributes.push(("gen_ai.tool.name", AttrValue::Str(tool.name.clone())));
    attributes.push(("gen_ai.tool.call.id", AttrValue::Str(tool.call_id)));
    attributes.push(("gen_ai.tool.type", AttrValue::Str("function".into())));
    if let Some(arguments) = tool.arguments {
        attributes.push(("gen_ai.tool.call.arguments", AttrValue::Str(arguments)));
    }
    let mut status = SpanStatus::Unset;
    match end {
        ToolEnd::Result(result) if capture => {
            attributes.push(("gen_ai.tool.call.result", AttrValue::Str(result.to_string())));
        }
        ToolEnd::Result(_) => {}
        ToolEnd::Error(error) => {
            attributes.push(("error.type", AttrValue::Str(TOOL_ERROR.into())));
            status = SpanStatus::Error { description: capture.then(|| error.to_owned()) };
        }
        ToolEnd::Unanswered => attributes.push(("threadkeeper.tool.unanswered", AttrValue::Bool(true))),
    }
    Span {
        trace_id: run.trace_id,
        span_id: tool.span_id,
        parent_span_id: Some(run.span_id),
        name: format!("execute_tool {}", tool.name),
        kind: SpanKind::Internal,
        start_ms: tool.start_ms.min(end_ms),
        end_ms,
        attributes,
        events: Vec::new(),
        status,
    }
}

fn common(o: &TraceOptions, operation: &'static str) -> Vec<Attribute> {
    vec![
        ("gen_ai.operation.name", AttrValue::Str(operation.into())),
        ("gen_ai.conversation.id", AttrValue::Str(o.thread_id.clone())),
    ]
}

fn push_content(o: &TraceOptions, attributes: &mut Vec<Attribute>, input: &[Value], output: &[Value]) {
    if let Some(instructions) = o.instructions.as_deref().filter(|i| !i.is_empty()) {
        attributes.push(("gen_ai.system_instructions", AttrValue::Str(content::system_instructions(instructions))));
    }
    if !input.is_empty() {
        attributes.push(("gen_ai.input.messages", AttrValue::Str(content::json_text(input))));
    }
    if !output.is_empty() {
        attributes.push(("gen_ai.output.messages", AttrValue::Str(content::json_text(output))));
    }
}

/// `error.type` of a failed tool call and of a run stopped by an unrecoverable error: the
/// events say no more than that (their text is content).
const TOOL_ERROR: &str = "tool_error";
const AGENT_ERROR: &str = "agent_error";

/// The turn an assistant event belongs to: the open one when it is of the same iteration,
/// else a new one (the open one is given first).
fn turn_for<'r>(run: &'r mut Run, event: &AgentEvent, position: u64, thread_id: &str, time: u64) -> &'r mut Turn {
    let carried = Carried::of(event.fields());
    if run.turn.is_none() {
        run.turn = Some(Turn {
            span_id: ids::span_id(thread_id, position, Role::Turn),
            iteration: event.iteration().clone(),
            start_ms: run.turn_input_ms,
            end_ms: time,
            carried: Carried::default(),
            calls: false,
            input: run.messages.clone(),
            parts: Vec::new(),
        });
    }
    let turn = run.turn.as_mut().expect("opened above");
    turn.end_ms = turn.end_ms.max(time);
    turn.carried.fill_from(carried);
    turn
}

fn take_tool(run: &mut Run, call_id: &str) -> Option<Tool> {
    let index = run.tools.iter().position(|t| t.call_id == call_id)?;
    Some(run.tools.remove(index))
}

fn add(total: &mut Option<i64>, tokens: Option<i64>) {
    if let Some(tokens) = tokens {
        *total = Some(total.unwrap_or(0) + tokens);
    }
}

/// The run's ids, which its child spans carry.
#[derive(Clone, Copy)]
struct Parent {
    trace_id: u128,
    span_id: u64,
}

impl Run {
    fn parent(&self) -> Parent {
        Parent { trace_id: self.trace_id, span_id: self.span_id }
    }
}

fn push_carried(attributes: &mut Vec<Attribute>, carried: &Carried, input: Option<i64>, output: Option<i64>) {
    if let Some(provider) = &carried.provider {
        attributes.push(("gen_ai.provider.name", AttrValue::Str(provider.clone())));
    }
    if let Some(model) = &carried.model {
        attributes.push(("gen_ai.request.model", AttrValue::Str(model.clone())));
    }
    if let Some(tokens) = input {
        attributes.push(("gen_ai.usage.input_tokens", AttrValue::Int(tokens)));
    }
    if let Some(tokens) = output {
        attributes.push(("gen_ai.usage.output_tokens", AttrValue::Int(tokens)));
    }
}

/// A summary's compaction marker `{round: integer, cutoff: number}`, as the compacted view
/// reads it.
fn compaction_marker(fields: &Map<String, Value>) -> Option<(i64, i64)> {
    let marker = fields.get("compaction")?.as_object()?;
    let round = marker.get("round")?.as_i64()?;
    let cutoff = marker.get("cutoff")?.as_number()?;
    Some((round, int(cutoff)))
}

/// A JSON number as an integer attribute (iterations and cutoffs are integers in practice).
fn int(n: &Number) -> i64 {
    n.as_i64().unwrap_or_else(|| n.as_f64().unwrap_or(0.0) as i64)
}

/// A `timestamp` in whole milliseconds since the epoch (negative ones are 0).
fn ms(n: &Number) -> u64 {
    n.as_u64().unwrap_or_else(|| n.as_f64().unwrap_or(0.0).max(0.0) as u64)
}
