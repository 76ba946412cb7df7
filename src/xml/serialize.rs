//! Seed 000: a thread of events as a `<thread>` XML document.
//!
//! [`XmlRenderer`] is incremental: every event's line depends only on the events before it
//! (its position and, for tool results, earlier tool calls), so appending events never changes
//! lines already rendered. A long-lived thread keeps one renderer and pays only for new events.

use super::escape::{escape_into, EscapeMode};
use crate::event::{AgentEvent, EventKind, Role};
use crate::js_json;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Write as _;

/// Options of `serializeThreadToXml`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct XmlOptions {
    /// Appended after `</thread>` as `"\n" + prefix` (nothing when absent or empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_prefix: Option<String>,
    /// Body escaping; attribute values are always escaped fully.
    #[serde(default)]
    pub escape: EscapeMode,
}

/// Renders `events` as a `<thread>` document.
pub fn serialize_thread_to_xml(events: &[AgentEvent], options: &XmlOptions) -> String {
    let mut renderer = XmlRenderer::new(options.escape);
    renderer.extend(events);
    renderer.document(options.response_prefix.as_deref())
}

/// Accumulates the `<event>` lines of a thread, one event at a time.
#[derive(Clone, Debug)]
pub struct XmlRenderer {
    escape: EscapeMode,
    lines: String,
    count: usize,
    /// toolCallId → toolName of the latest `tool_call` seen with that id.
    tool_names: HashMap<String, String>,
}

impl XmlRenderer {
    pub fn new(escape: EscapeMode) -> Self {
        XmlRenderer { escape, lines: String::new(), count: 0, tool_names: HashMap::new() }
    }

    /// Number of events rendered so far.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The escape mode this renderer was built with.
    pub fn escape(&self) -> EscapeMode {
        self.escape
    }

    /// The rendered `<event>` lines, each ending in `\n`.
    pub fn lines(&self) -> &str {
        &self.lines
    }

    pub fn extend<'a>(&mut self, events: impl IntoIterator<Item = &'a AgentEvent>) {
        for event in events {
            self.push(event);
        }
    }

    /// Renders one more event.
    pub fn push(&mut self, event: &AgentEvent) {
        let out = &mut self.lines;
        let id = self.count;
        self.count += 1;
        let iteration = js_json::number_to_string(event.iteration());
        let escape = self.escape;
        let open = |out: &mut String, type_name: &str| {
            out.push_str("  <event type=\"");
            escape_into(out, type_name, EscapeMode::Full);
            let _ = write!(out, "\" id=\"{id}\"");
        };
        let close_open_tag = |out: &mut String| {
            out.push_str(" iteration=\"");
            out.push_str(&iteration);
            out.push_str("\">");
        };
        match event.kind() {
            EventKind::Message { role, content } => {
                open(out, match role {
                    Role::User => "human",
                    Role::Assistant => "ai",
                    Role::System => "system",
                });
                close_open_tag(out);
                escape_into(out, content, escape);
            }
            EventKind::ToolCall { tool_name, tool_call_id, args } => {
                open(out, "tool_input");
                push_attr(out, "name", tool_name);
                close_open_tag(out);
                let mut json = String::new();
                js_json::write_object(&mut json, args);
                escape_into(out, &json, escape);
                // Latest call wins, as a backward scan from the result would find it.
                self.tool_names.insert(tool_call_id.to_owned(), tool_name.to_owned());
            }
            EventKind::ToolResult { tool_call_id, result } => {
                open(out, "tool_output");
                let name = self.tool_names.get(tool_call_id).map_or("unknown", String::as_str);
                push_attr(out, "name", name);
                out.push_str(" status=\"success\"");
                close_open_tag(out);
                match result {
                    Value::String(text) => escape_into(out, text, escape),
                    other => escape_into(out, &js_json::to_string(other), escape),
                }
            }
            EventKind::Error { error, recoverable, .. } => {
                open(out, "error");
                out.push_str(" iteration=\"");
                out.push_str(&iteration);
                let _ = write!(out, "\" recoverable=\"{recoverable}\">");
                escape_into(out, error, escape);
            }
            EventKind::HumanInputRequested { question } => {
                open(out, "human_input_requested");
                close_open_tag(out);
                escape_into(out, question, escape);
            }
            EventKind::HumanInputReceived { response } => {
                open(out, "human_input_received");
                close_open_tag(out);
                escape_into(out, response, escape);
            }
            EventKind::Completion { result, .. } => {
                open(out, "completion");
                close_open_tag(out);
                escape_into(out, result, escape);
            }
            EventKind::Summary { summarized_iterations, summary } => {
                open(out, "summary");
                out.push_str(" iteration=\"");
                out.push_str(&iteration);
                out.push_str("\" summarizedIterations=\"");
                for (i, n) in summarized_iterations.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    if let Value::Number(n) = n {
                        js_json::write_number(out, n);
                    }
                }
                out.push_str("\">");
                escape_into(out, summary, escape);
            }
            EventKind::Unknown { type_name } => {
                open(out, type_name);
                close_open_tag(out);
                let mut rest = serde_json::Map::new();
                for (k, v) in event.fields() {
                    if !matches!(k.as_str(), "type" | "iteration" | "timestamp") {
                        rest.insert(k.clone(), v.clone());
                    }
                }
                let mut json = String::new();
                js_json::write_object(&mut json, &rest);
                escape_into(out, &json, escape);
            }
        }
        out.push_str("</event>\n");
    }

    /// Appends the whole document (`<thread>`, lines, `</thread>`, prefix) to `out`.
    pub fn write_document(&self, out: &mut String, response_prefix: Option<&str>) {
        out.reserve(self.lines.len() + 20 + response_prefix.map_or(0, str::len));
        out.push_str("<thread>\n");
        out.push_str(&self.lines);
        out.push_str("</thread>");
        if let Some(prefix) = response_prefix.filter(|p| !p.is_empty()) {
            out.push('\n');
            out.push_str(prefix);
        }
    }

    /// The whole document as a new string.
    pub fn document(&self, response_prefix: Option<&str>) -> String {
        let mut out = String::new();
        self.write_document(&mut out, response_prefix);
        out
    }
}

fn push_attr(out: &mut String, name: &str, value: &str) {
    out.push(' ');
    out.push_str(name);
    out.push_str("=\"");
    escape_into(out, value, EscapeMode::Full);
    out.push('"');
}
