//! One open thread: its events and everything rendered from them so far.
//!
//! Renderers are built lazily per variant (escape mode, tool-call grouping) and then kept up
//! to date on every append, so a render after an append costs only the new events plus
//! copying the output.

use crate::event::{AgentEvent, StoredEvent};
use crate::messages::{
    xml_messages_from, ContextInjection, ContextMode, DanglingToolCalls, Entry, MessageRef, StandardMessages,
    StoredMessage,
};
use crate::providers::{self, Provider};
use crate::store::{Appended, ThreadRecord};
use crate::xml::{EscapeMode, XmlRenderer};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

pub struct ThreadState {
    pub record: ThreadRecord,
    /// The events as stored (compact JSON); renderers get them parsed once, as they arrive.
    pub events: Vec<Arc<StoredEvent>>,
    /// Summaries as the system message presents them; kept eagerly, it grows only with summaries.
    injection: ContextInjection,
    /// Renderers by escape mode, each with the end offset of every event's line.
    xml: Vec<(XmlRenderer, Vec<usize>)>,
    /// Standard mode, built on first use.
    standard: Option<StandardMessages>,
}

impl ThreadState {
    pub fn new(record: ThreadRecord, events: Vec<Arc<StoredEvent>>) -> Self {
        let mut injection = ContextInjection::new();
        for event in &events {
            injection.push(&event.parse());
        }
        ThreadState { record, events, injection, xml: Vec::new(), standard: None }
    }

    /// Records events the store has acknowledged.
    pub fn apply(&mut self, events: &[AgentEvent], stored: Vec<Arc<StoredEvent>>, appended: Appended) {
        self.injection.extend(events);
        for (renderer, ends) in &mut self.xml {
            push_all(renderer, ends, events.iter());
        }
        if let Some(builder) = &mut self.standard {
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

    /// Builds the renderer a render in `mode` (or of the XML document, `None`) needs unless it
    /// is kept already — the one part of a render whose cost grows with the thread — and gives
    /// up, keeping nothing, once `cancel` fires.
    pub fn prepare(
        &mut self,
        mode: Option<ContextMode>,
        escape: EscapeMode,
        cancel: &CancellationToken,
    ) -> Result<(), Cancelled> {
        match mode {
            Some(ContextMode::Standard) if self.standard.is_none() => {
                let mut builder = StandardMessages::new();
                for_each_parsed(&self.events, cancel, |event| builder.push(event))?;
                self.standard = Some(builder);
            }
            Some(ContextMode::Standard) => {}
            None | Some(ContextMode::Xml) if self.xml.iter().any(|(r, _)| r.escape() == escape) => {}
            None | Some(ContextMode::Xml) => {
                let mut renderer = XmlRenderer::new(escape);
                let mut ends = Vec::with_capacity(self.events.len());
                for_each_parsed(&self.events, cancel, |event| push_all(&mut renderer, &mut ends, [event].into_iter()))?;
                self.xml.push((renderer, ends));
            }
        }
        Ok(())
    }

    /// The renderer for `escape`, built from the events on first use.
    fn xml_index(&mut self, escape: EscapeMode) -> usize {
        let never = CancellationToken::new();
        self.prepare(None, escape, &never).expect("an uncancelled build completes");
        self.xml.iter().position(|(r, _)| r.escape() == escape).expect("prepared above")
    }

    /// The standard-mode builder, built from the events on first use.
    fn standard(&mut self) -> &StandardMessages {
        let never = CancellationToken::new();
        self.prepare(Some(ContextMode::Standard), EscapeMode::default(), &never)
            .expect("an uncancelled build completes");
        self.standard.as_ref().expect("prepared above")
    }

    /// The thread as chat messages in the given context mode.
    pub fn messages(&mut self, mode: ContextMode, view: &View<'_>) -> Vec<StoredMessage> {
        match mode {
            ContextMode::Standard => self.standard().to_messages(view.instructions, view.dangling),
            ContextMode::Xml => {
                let renderer = self.xml_index(view.escape);
                xml_messages_from(&self.injection, &self.xml[renderer].0, view.instructions, view.response_prefix)
            }
        }
    }

    /// The thread as chat messages, JSON text of the array, serialized without copying them.
    pub fn messages_json(&mut self, mode: ContextMode, view: &View<'_>) -> String {
        let text = match mode {
            ContextMode::Standard => {
                let builder = self.standard();
                let system = builder.system_message(view.instructions);
                let entries = builder.entries(view.dangling);
                let messages: Vec<&StoredMessage> = system
                    .iter()
                    .chain(entries.iter().filter_map(|entry| match entry {
                        Entry::Message(message) => Some(&**message),
                        Entry::Reasoning(_) => None,
                    }))
                    .collect();
                serde_json::to_string(&messages)
            }
            ContextMode::Xml => serde_json::to_string(&self.messages(mode, view)),
        };
        text.expect("messages serialize")
    }

    /// The thread as `provider`'s request body, JSON text.
    pub fn provider_json(&mut self, provider: Provider, mode: ContextMode, view: &View<'_>) -> String {
        match mode {
            ContextMode::Standard => {
                let builder = self.standard();
                let system = builder.system_message(view.instructions);
                let entries = builder.entries(view.dangling);
                providers::to_json(provider, system.as_ref().and_then(|m| m.content_str()), &entries, false)
            }
            ContextMode::Xml => {
                let index = self.xml_index(view.escape);
                let renderer = &self.xml[index].0;
                let system = self.injection.system_message(view.instructions);
                let document = StoredMessage::human(renderer.document(view.response_prefix));
                let entries = [Entry::Message(MessageRef::Made(Box::new(document)))];
                providers::to_json(provider, system.as_ref().and_then(|m| m.content_str()), &entries, false)
            }
        }
    }
}

/// The settings a render applies, after the request's overrides.
#[derive(Clone, Copy, Debug)]
pub struct View<'a> {
    pub instructions: Option<&'a str>,
    pub response_prefix: Option<&'a str>,
    pub escape: EscapeMode,
    pub dangling: DanglingToolCalls,
}

/// A render given up because its request was cancelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cancelled;

/// How many events a build takes between two looks at its cancellation token.
const EVENTS_BETWEEN_CHECKS: usize = 1024;

/// Parses the events one at a time for `f`, stopping when `cancel` fires.
fn for_each_parsed(
    events: &[Arc<StoredEvent>],
    cancel: &CancellationToken,
    mut f: impl FnMut(&AgentEvent),
) -> Result<(), Cancelled> {
    for chunk in events.chunks(EVENTS_BETWEEN_CHECKS) {
        if cancel.is_cancelled() {
            return Err(Cancelled);
        }
        for event in chunk {
            f(&event.parse());
        }
    }
    Ok(())
}

/// Renders events, recording where each one's line ends.
fn push_all<'a>(renderer: &mut XmlRenderer, ends: &mut Vec<usize>, events: impl Iterator<Item = &'a AgentEvent>) {
    for event in events {
        renderer.push(event);
        ends.push(renderer.lines().len());
    }
}
