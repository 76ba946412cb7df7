//! One open thread: its events and everything rendered from them so far.
//!
//! Renderers are built lazily per variant (escape mode, tool-call grouping) and then kept up
//! to date on every append, so a render after an append costs only the new events plus
//! copying the output.

use crate::event::{AgentEvent, StoredEvent};
use crate::messages::{xml_messages_from, ContextInjection, ContextMode, StandardMessages, StoredMessage};
use crate::store::{Appended, ThreadRecord};
use crate::xml::{EscapeMode, XmlRenderer};
use std::sync::Arc;

pub struct ThreadState {
    pub record: ThreadRecord,
    /// The events as stored (compact JSON); renderers get them parsed once, as they arrive.
    pub events: Vec<Arc<StoredEvent>>,
    /// Summaries as the system message presents them; kept eagerly, it grows only with summaries.
    injection: ContextInjection,
    /// Renderers by escape mode, each with the end offset of every event's line.
    xml: Vec<(XmlRenderer, Vec<usize>)>,
    standard: Vec<(bool, StandardMessages)>,
}

impl ThreadState {
    pub fn new(record: ThreadRecord, events: Vec<Arc<StoredEvent>>) -> Self {
        let mut injection = ContextInjection::new();
        for event in &events {
            injection.push(&event.parse());
        }
        ThreadState { record, events, injection, xml: Vec::new(), standard: Vec::new() }
    }

    /// Records events the store has acknowledged.
    pub fn apply(&mut self, events: &[AgentEvent], stored: Vec<Arc<StoredEvent>>, appended: Appended) {
        self.injection.extend(events);
        for (renderer, ends) in &mut self.xml {
            push_all(renderer, ends, events.iter());
        }
        for (_, builder) in &mut self.standard {
            builder.extend(events);
        }
        self.events.extend(stored);
        self.record.version = appended.version;
        self.record.event_count = appended.event_count;
        self.record.updated_at = appended.updated_at;
    }

    /// Events another writer appended to the store, caught up with.
    pub fn catch_up(&mut self, record: ThreadRecord, stored: Vec<Arc<StoredEvent>>) {
        let appended =
            Appended { version: record.version, event_count: record.event_count, updated_at: record.updated_at };
        self.record.settings = record.settings;
        self.record.metadata = record.metadata;
        let events: Vec<AgentEvent> = stored.iter().map(|e| e.parse()).collect();
        self.apply(&events, stored, appended);
    }

    pub fn xml_renderer(&mut self, escape: EscapeMode) -> &XmlRenderer {
        let index = self.xml_index(escape);
        &self.xml[index].0
    }

    /// The `<event>` lines of the events from position `from` on.
    pub fn xml_lines_from(&mut self, escape: EscapeMode, from: usize) -> &str {
        let index = self.xml_index(escape);
        let (renderer, ends) = &self.xml[index];
        let start = if from == 0 { 0 } else { ends[from - 1] };
        &renderer.lines()[start..]
    }

    /// The renderer for `escape`, built from the events on first use.
    fn xml_index(&mut self, escape: EscapeMode) -> usize {
        if let Some(index) = self.xml.iter().position(|(r, _)| r.escape() == escape) {
            return index;
        }
        let mut renderer = XmlRenderer::new(escape);
        let mut ends = Vec::with_capacity(self.events.len());
        let parsed: Vec<AgentEvent> = self.events.iter().map(|e| e.parse()).collect();
        push_all(&mut renderer, &mut ends, parsed.iter());
        self.xml.push((renderer, ends));
        self.xml.len() - 1
    }

    /// The standard-mode builder for a grouping choice, built from the events on first use.
    fn standard_index(&mut self, group_tool_calls: bool) -> usize {
        if let Some(index) = self.standard.iter().position(|(g, _)| *g == group_tool_calls) {
            return index;
        }
        let mut builder = StandardMessages::new(group_tool_calls);
        for event in &self.events {
            builder.push(&event.parse());
        }
        self.standard.push((group_tool_calls, builder));
        self.standard.len() - 1
    }

    /// The thread as chat messages in the given context mode.
    pub fn messages(
        &mut self,
        mode: ContextMode,
        instructions: Option<&str>,
        response_prefix: Option<&str>,
        escape: EscapeMode,
        group_tool_calls: bool,
    ) -> Vec<StoredMessage> {
        match mode {
            ContextMode::Standard => {
                let index = self.standard_index(group_tool_calls);
                self.standard[index].1.to_messages(instructions)
            }
            ContextMode::Xml => {
                let renderer = self.xml_index(escape);
                xml_messages_from(&self.injection, &self.xml[renderer].0, instructions, response_prefix)
            }
        }
    }
}

/// Renders events, recording where each one's line ends.
fn push_all<'a>(renderer: &mut XmlRenderer, ends: &mut Vec<usize>, events: impl Iterator<Item = &'a AgentEvent>) {
    for event in events {
        renderer.push(event);
        ends.push(renderer.lines().len());
    }
}
