//! A thread as OpenTelemetry GenAI spans: pure, no I/O and no OpenTelemetry types.
//!
//! [`TraceBuilder`] reads a thread's events in order and gives each span when the event that
//! ends it arrives, so a live exporter and a backfill of the stored thread give the same spans:
//!
//! - a **run** (a user message up to its `completion` or the next user message) is a trace
//!   whose root span is `invoke_agent`;
//! - a **model turn** (the assistant text and tool calls of one iteration, in a row) is a child
//!   span `chat`;
//! - a **tool call** is a child span `execute_tool {name}` from the call to its result or error;
//! - human-input rounds, summaries, compaction rounds, errors outside tools and unknown events
//!   are span events of the run.
//!
//! Ids are derived from the thread id and event positions ([`ids`]), never drawn at random, so
//! a restarted server or a backfill names a span as the live export did. Thread text is in no
//! span unless [`TraceOptions::capture_content`] asks for the conventions' message attributes.

mod builder;
mod carried;
mod content;
pub mod ids;

pub use builder::TraceBuilder;

use crate::event::AgentEvent;

/// What a span's attribute holds.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    Str(String),
    Int(i64),
    Bool(bool),
    StrList(Vec<String>),
    IntList(Vec<i64>),
}

pub type Attribute = (&'static str, AttrValue);

/// OpenTelemetry's span kinds used here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanKind {
    /// Work in the agent's own process: the run, a tool.
    Internal,
    /// A call out of it: a model turn.
    Client,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpanStatus {
    Unset,
    /// Failed; the description is thread text, so only with content capture.
    Error {
        description: Option<String>,
    },
}

/// Something that happened in a span at one time.
#[derive(Clone, Debug, PartialEq)]
pub struct SpanEvent {
    pub name: &'static str,
    pub time_ms: u64,
    pub attributes: Vec<Attribute>,
}

/// One finished span.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    pub trace_id: u128,
    pub span_id: u64,
    /// `None` for a run's root span.
    pub parent_span_id: Option<u64>,
    pub name: String,
    pub kind: SpanKind,
    /// Milliseconds since the Unix epoch.
    pub start_ms: u64,
    pub end_ms: u64,
    pub attributes: Vec<Attribute>,
    pub events: Vec<SpanEvent>,
    pub status: SpanStatus,
}

impl Span {
    /// The attribute `key`, when the span has it.
    pub fn attribute(&self, key: &str) -> Option<&AttrValue> {
        self.attributes.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }
}

/// The thread-wide facts a trace carries.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceOptions {
    pub thread_id: String,
    /// The thread metadata's `agentName`.
    pub agent_name: Option<String>,
    /// The thread's system instructions (exported only with `capture_content`).
    pub instructions: Option<String>,
    /// Adds `gen_ai.input.messages`, `gen_ai.output.messages`, `gen_ai.system_instructions`,
    /// tool arguments and results, and error texts.
    pub capture_content: bool,
}

/// Every span of a stored thread: its events replayed in order, a run still open at the end
/// ended at its last event and flagged, as a live export ends it at shutdown. Events without a
/// `timestamp` take the time of the event before them (the store keeps no append times), the
/// first ones `fallback_ms`.
pub fn thread_spans(options: TraceOptions, events: &[AgentEvent], fallback_ms: u64) -> Vec<Span> {
    let mut builder = TraceBuilder::new(options);
    let mut spans = Vec::new();
    for event in events {
        builder.push(event, None, fallback_ms, &mut spans);
    }
    builder.finish(&mut spans);
    spans
}

#[cfg(test)]
mod tests;
