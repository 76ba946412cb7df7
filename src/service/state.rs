//! One open thread: its events and everything rendered from them so far.
//!
//! Renderers are built lazily per variant (escape mode, tool-call grouping) and then kept up
//! to date on every append, so a render after an append costs only the new events plus
//! copying the output.
//!
//! They are kept only while the thread is small: what they hold is more than the events' own
//! size (the XML lines about 1.5×, the standard-mode messages several times). A thread whose
//! events pass its keep limit (`--keep-renders-up-to`, 64 MiB by default) keeps its events alone; each render builds what
//! it needs from them and [`ThreadState::release_renderers`] lets it go afterwards, so such a
//! thread costs time per render in proportion to its length, and memory only while rendering.

use super::attached::Attached;
use crate::context::{CompactedView, Tokenizer, ViewChange};
use crate::event::AgentEvent;
use crate::event_log::{parse_validated, EventLog};
use crate::media::{BlobId, MediaBytes};
use crate::messages::{
    with_media_blocks, with_reasoning_blocks, xml_messages_from, ContextInjection, ContextMode, DanglingToolCalls,
    MessageType, StandardMessages, StoredMessage,
};
use crate::providers::{self, Provider, ProviderOptions};
use crate::store::{Appended, ThreadRecord};
use crate::xml::{EscapeMode, XmlRenderer};
use std::borrow::Cow;
use std::sync::OnceLock;
use tokio_util::sync::CancellationToken;

pub struct ThreadState {
    pub record: ThreadRecord,
    /// The events as stored (compact JSON, shared with an in-memory store); renderers get them
    /// parsed once, as they arrive.
    pub events: EventLog,
    /// The list upstream would hold after its compaction rounds, which every render shows.
    view: CompactedView,
    /// Summaries as the system message presents them; kept eagerly, it grows only with summaries.
    injection: ContextInjection,
    /// Renderers by escape mode, each with the end offset of every event's line.
    xml: Vec<(XmlRenderer, Vec<usize>)>,
    /// Standard mode, built on first use.
    standard: Option<StandardMessages>,
    /// Renderers are kept while the events' JSON takes at most this many bytes.
    keep_renderers_up_to: usize,
    /// Per escape mode and tokenizer, the measure of each view event's `<event>` line so far
    /// ([`Tokenizer::measure`]): counts after an append measure only the new lines.
    line_measures: Vec<(EscapeMode, Tokenizer, Vec<u64>)>,
    /// What renders keep with the thread between calls: where each budget that keeps its cut
    /// stands (`kept_cut`), for the next render with the same options.
    pub(super) attached: Attached,
    /// Whether any event names a blob: only then does a render look for the bytes it needs.
    holds_media: bool,
}

/// Events parsed at a time by [`ThreadState::apply_stored`].
const APPLY_SLICE_EVENTS: usize = 1024;

/// Event bytes (compact JSON) up to which a thread keeps its renderers between renders, by
/// default: about 90k events of an agent run, whose renders then stay incremental.
pub const KEEP_RENDERERS_UP_TO_BYTES: usize = 64 << 20;

/// How to give memory the allocator holds free back to the system at once; the binary sets
/// it, since it chooses the allocator.
static GIVE_BACK_MEMORY: OnceLock<fn()> = OnceLock::new();

/// Sets what [`give_back_memory`] does (once; later calls change nothing).
pub fn set_give_back_memory(give_back: fn()) {
    let _ = GIVE_BACK_MEMORY.set(give_back);
}

/// Asks the allocator to return freed memory now, after a big thread's memory was freed; an
/// allocator left to itself may keep it.
pub fn give_back_memory() {
    if let Some(give_back) = GIVE_BACK_MEMORY.get() {
        give_back();
    }
}

impl ThreadState {
    pub fn new(record: ThreadRecord, events: EventLog, keep_renderers_up_to: usize) -> Self {
        Self::build(record, events, keep_renderers_up_to, &CancellationToken::new())
            .expect("an uncancelled build completes")
    }

    /// [`ThreadState::new`], giving up (keeping nothing) once `cancel` fires: reading every
    /// event is what loading a big thread costs.
    pub fn build(
        record: ThreadRecord,
        events: EventLog,
        keep_renderers_up_to: usize,
        cancel: &CancellationToken,
    ) -> Result<Self, Cancelled> {
        Self::with_view(record, events, keep_renderers_up_to, CompactedView::new(), cancel)
    }

    /// A thread whose events are already a compacted view (taken from another thread's):
    /// rendered as they are, their rounds not replayed again. Budgeted renders use it.
    pub fn verbatim(record: ThreadRecord, events: EventLog) -> Self {
        Self::with_view(record, events, usize::MAX, CompactedView::verbatim(), &CancellationToken::new())
            .expect("an uncancelled build completes")
    }

    fn with_view(
        record: ThreadRecord,
        events: EventLog,
        keep_renderers_up_to: usize,
        mut view: CompactedView,
        cancel: &CancellationToken,
    ) -> Result<Self, Cancelled> {
        let mut holds_media = false;
        for_each_parsed(events.iter(), cancel, |event| {
            holds_media |= names_blobs(event);
            view.push(event);
        })?;
        let mut state = ThreadState {
            record,
            events,
            view,
            injection: ContextInjection::new(),
            xml: Vec::new(),
            standard: None,
            keep_renderers_up_to,
            line_measures: Vec::new(),
            attached: Attached::default(),
            holds_media,
        };
        state.rebuild_injection();
        Ok(state)
    }

    /// The compacted view every render shows.
    pub fn view(&self) -> &CompactedView {
        &self.view
    }

    /// The view's events, in upstream's order.
    pub fn view_events(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        self.view.positions().map(|at| self.events.get(at).expect("view positions are in the log"))
    }

    /// The blobs the view's events name, once each: what a render may need the bytes of.
    pub fn view_blobs(&self) -> Vec<BlobId> {
        if !self.holds_media {
            return Vec::new();
        }
        let events: Vec<AgentEvent> =
            self.view_events().filter(|json| json.contains("\"sha256:")).map(parse_validated).collect();
        crate::media::parts::blobs_of_events(&events)
    }

    /// The injection reads only the view's summaries, so it is rebuilt from them after a round.
    fn rebuild_injection(&mut self) {
        let mut injection = ContextInjection::new();
        for item in self.view.items().iter().filter(|item| item.is_summary) {
            injection.push(&self.events.parse(item.position).expect("view positions are in the log"));
        }
        self.injection = injection;
    }

    /// Whether renderers stay kept between renders (the thread is small enough).
    pub fn keeps_renderers(&self) -> bool {
        self.events.json_bytes() <= self.keep_renderers_up_to
    }

    /// Drops the renderers of a thread too big to keep them; called after every render.
    pub fn release_renderers(&mut self) {
        if !self.keeps_renderers() && (!self.xml.is_empty() || self.standard.is_some()) {
            self.xml = Vec::new();
            self.standard = None;
            give_back_memory();
        }
    }

    /// Records events the store has acknowledged: `stored` is their text; `shared`, when the
    /// store holds the thread's events in memory, is its log after the append, kept instead of
    /// a second copy.
    pub fn apply(&mut self, events: &[AgentEvent], stored: &EventLog, shared: Option<EventLog>, appended: Appended) {
        let mut rewritten = false;
        for event in events {
            self.holds_media |= names_blobs(event);
            rewritten |= self.view.push(event) == ViewChange::Rewritten;
        }
        match shared {
            Some(log) if log.len() == self.events.len() + stored.len() => self.events = log,
            _ => self.events.extend(stored),
        }
        if rewritten {
            // A compaction round reordered the view: renderers start again from it, once.
            self.rebuild_injection();
            self.xml = Vec::new();
            self.standard = None;
            self.line_measures = Vec::new();
        } else {
            self.injection.extend(events);
            self.release_renderers();
            for (renderer, ends) in &mut self.xml {
                push_all(renderer, ends, events.iter());
            }
            if let Some(builder) = &mut self.standard {
                builder.extend(events);
            }
        }
        self.record.version = appended.version;
        self.record.event_count = appended.event_count;
        self.record.updated_at = appended.updated_at;
    }

    /// [`ThreadState::apply`] for events given by their stored text alone: parsed a slice at a
    /// time, so a big import is never held parsed whole beside its text.
    pub fn apply_stored(&mut self, stored: &EventLog, shared: Option<EventLog>, appended: Appended) {
        let mut shared = shared;
        let mut start = 0;
        while start < stored.len() {
            let end = (start + APPLY_SLICE_EVENTS).min(stored.len());
            let slice = stored.slice(start..end);
            let events: Vec<AgentEvent> = slice.parse_all();
            // The store's own log replaces ours once it is complete: with the last slice.
            let last = end == stored.len();
            self.apply(&events, &slice, if last { shared.take() } else { None }, appended);
            start = end;
        }
    }

    /// Events another writer appended to the store, caught up with.
    pub fn catch_up(&mut self, record: ThreadRecord, stored: EventLog) {
        let appended =
            Appended { version: record.version, event_count: record.event_count, updated_at: record.updated_at };
        self.record.settings = record.settings;
        self.record.metadata = record.metadata;
        let events: Vec<AgentEvent> = stored.parse_all();
        self.apply(&events, &stored, None, appended);
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

    /// Each view event's `<event>` line (the share [`crate::context`] attributes to its
    /// iteration), in view order.
    pub fn xml_event_lines(&mut self, escape: EscapeMode) -> impl Iterator<Item = &str> + '_ {
        let index = self.xml_index(escape);
        let (renderer, ends) = &self.xml[index];
        let lines = renderer.lines();
        ends.iter().scan(0, move |start, &end| {
            let line = &lines[*start..end];
            *start = end;
            Some(line)
        })
    }

    /// The measure of every view event's `<event>` line, measuring only lines not measured
    /// before; gives up once `cancel` fires (what was measured is kept).
    pub fn line_measures(
        &mut self,
        escape: EscapeMode,
        tokenizer: Tokenizer,
        cancel: &CancellationToken,
    ) -> Result<&[u64], Cancelled> {
        let index = match self.line_measures.iter().position(|(e, t, _)| *e == escape && *t == tokenizer) {
            Some(index) => index,
            None => {
                self.line_measures.push((escape, tokenizer, Vec::new()));
                self.line_measures.len() - 1
            }
        };
        let measured = self.line_measures[index].2.len();
        if measured < self.view.len() {
            let mut measures = std::mem::take(&mut self.line_measures[index].2);
            self.prepare(None, escape, cancel)?;
            let mut cancelled = false;
            for (i, line) in self.xml_event_lines(escape).enumerate().skip(measured) {
                if i % EVENTS_BETWEEN_CHECKS == 0 && cancel.is_cancelled() {
                    cancelled = true;
                    break;
                }
                measures.push(tokenizer.measure(line));
            }
            self.line_measures[index].2 = measures;
            if cancelled {
                return Err(Cancelled);
            }
        }
        Ok(&self.line_measures[index].2)
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
                for_each_parsed(self.view_events(), cancel, |event| builder.push(event))?;
                self.standard = Some(builder);
            }
            Some(ContextMode::Standard) => {}
            None | Some(ContextMode::Xml) if self.xml.iter().any(|(r, _)| r.escape() == escape) => {}
            None | Some(ContextMode::Xml) => {
                let mut renderer = XmlRenderer::new(escape);
                let mut ends = Vec::with_capacity(self.view.len());
                for_each_parsed(self.view_events(), cancel, |event| {
                    push_all(&mut renderer, &mut ends, [event].into_iter())
                })?;
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

    /// The thread as chat messages, JSON text of the array, serialized without copying them
    /// (but those made of content parts, which go out as LangChain content blocks carrying
    /// their media's bytes).
    pub fn messages_json(&mut self, mode: ContextMode, view: &View<'_>) -> String {
        let text = match mode {
            ContextMode::Standard => {
                let builder = self.standard();
                let system = builder.system_message(view.instructions);
                let entries =
                    providers::keep_images::apply_or_keep(builder.entries(view.dangling), view.provider.keep_images);
                let mut messages: Vec<Cow<'_, StoredMessage>> =
                    system.iter().map(|message| with_media_blocks(message, view.media)).collect();
                messages.extend(with_reasoning_blocks(&entries, view.media));
                serde_json::to_string(&messages)
            }
            ContextMode::Xml => {
                let named = self.view_media_parts();
                let mut messages = self.messages(mode, view);
                let named = providers::keep_images::after_document(&named, view.provider.keep_images);
                let media_after = providers::xml_media_parts(&named, view.media);
                if let Some(document) = messages.last_mut().filter(|_| !media_after.is_empty()) {
                    let mut parts = vec![serde_json::json!({"type": "text", "text": document.content_text()})];
                    parts.extend(media_after);
                    *document = StoredMessage::with_parts(MessageType::Human, parts);
                }
                let messages: Vec<Cow<'_, StoredMessage>> =
                    messages.iter().map(|message| with_media_blocks(message, view.media)).collect();
                serde_json::to_string(&messages)
            }
        };
        text.expect("messages serialize")
    }

    /// The view's events that hold content parts (what counts of media look at), parsed; none
    /// at all for the many threads without parts.
    pub fn view_events_with_parts(&self) -> Vec<AgentEvent> {
        self.view_events().filter(|json| json.contains("\"content\":[")).map(parse_validated).collect()
    }

    /// The media parts the view names by blob, the first of each blob, in order: what follows
    /// the document in XML context mode.
    pub fn view_media_parts(&self) -> Vec<serde_json::Value> {
        if !self.holds_media {
            return Vec::new();
        }
        let events: Vec<AgentEvent> =
            self.view_events().filter(|json| json.contains("\"sha256:")).map(parse_validated).collect();
        crate::media::parts::media_named_once(&events)
    }

    /// The thread as `provider`'s request body, JSON text.
    pub fn provider_json(&mut self, provider: Provider, mode: ContextMode, view: &View<'_>) -> String {
        let options = view.provider.for_thread(&self.record.thread_id);
        match mode {
            ContextMode::Standard => {
                // Pydantic AI's kept fields, from the few events that hold any.
                let kept = (provider == Provider::PydanticAi).then(|| self.pydantic_ai_kept());
                let builder = self.standard();
                let system = builder.system_message(view.instructions);
                let system = system.as_ref().and_then(|m| m.content_str());
                let entries = builder.entries(view.dangling);
                let options = ProviderOptions { stable_prefix: builder.leading_summaries(), ..options };
                match kept {
                    Some(kept) => {
                        let entries = providers::keep_images::apply_or_keep(entries, options.keep_images);
                        providers::pydantic_ai::to_json(system, &entries, kept, view.media, false)
                    }
                    None => providers::to_json(provider, system, &entries, &options, view.media, false),
                }
            }
            ContextMode::Xml => {
                let named = self.view_media_parts();
                let index = self.xml_index(view.escape);
                let renderer = &self.xml[index].0;
                let system = self.injection.system_message(view.instructions);
                let document = renderer.document(view.response_prefix);
                let system = system.as_ref().and_then(|m| m.content_str());
                providers::xml_to_json(provider, system, document, &named, view.media, &options, false)
            }
        }
    }
}

impl ThreadState {
    /// The Pydantic AI fields kept on the view's events; only events whose text names them are parsed.
    fn pydantic_ai_kept(&self) -> providers::pydantic_ai::Kept {
        let mut kept = providers::pydantic_ai::Kept::default();
        for json in self.view_events().filter(|json| providers::pydantic_ai::Kept::may_hold(json)) {
            kept.push(&parse_validated(json));
        }
        kept
    }
}

/// Whether an event's parts name a blob.
fn names_blobs(event: &AgentEvent) -> bool {
    match event.kind() {
        crate::event::EventKind::Message { content, .. } => {
            content.parts().is_some_and(|p| crate::media::parts::blobs_named(p).next().is_some())
        }
        crate::event::EventKind::ToolResult { content: Some(parts), .. } => {
            crate::media::parts::blobs_named(parts).next().is_some()
        }
        _ => false,
    }
}

/// The settings a render applies, after the request's overrides.
#[derive(Clone, Copy, Debug)]
pub struct View<'a> {
    pub instructions: Option<&'a str>,
    pub response_prefix: Option<&'a str>,
    pub escape: EscapeMode,
    pub dangling: DanglingToolCalls,
    pub provider: ProviderOptions,
    /// The bytes of the blobs the view names, for the formats that carry media.
    pub media: &'a MediaBytes,
}

impl Drop for ThreadState {
    /// A big thread's memory goes back to the system as it is freed (on close or eviction).
    fn drop(&mut self) {
        if !self.keeps_renderers() {
            self.events = EventLog::new();
            self.xml = Vec::new();
            self.standard = None;
            give_back_memory();
        }
    }
}

/// A render given up because its request was cancelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cancelled;

/// How many events a build takes between two looks at its cancellation token.
const EVENTS_BETWEEN_CHECKS: usize = 1024;

/// Parses the events one at a time for `f`, stopping when `cancel` fires.
pub fn for_each_parsed<'a>(
    events: impl Iterator<Item = &'a str>,
    cancel: &CancellationToken,
    mut f: impl FnMut(&AgentEvent),
) -> Result<(), Cancelled> {
    for (i, json) in events.enumerate() {
        if i % EVENTS_BETWEEN_CHECKS == 0 && cancel.is_cancelled() {
            return Err(Cancelled);
        }
        f(&parse_validated(json));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ThreadSettings;
    use proptest::prelude::*;
    use serde_json::{json, Map, Value};

    fn thread(keep_renderers_up_to: usize) -> ThreadState {
        let record = ThreadRecord {
            thread_id: "t".into(),
            version: 0,
            event_count: 0,
            settings: ThreadSettings::default(),
            metadata: Map::new(),
            created_at: 0,
            updated_at: 0,
        };
        let mut state = ThreadState::new(record, EventLog::new(), KEEP_RENDERERS_UP_TO_BYTES);
        state.keep_renderers_up_to = keep_renderers_up_to;
        state
    }

    fn append(state: &mut ThreadState, values: &[Value]) {
        let events: Vec<AgentEvent> =
            values.iter().map(|v| AgentEvent::from_value(v.clone(), "event").expect("a valid event")).collect();
        let stored = EventLog::from(events.as_slice());
        let count = state.events.len() as u64 + events.len() as u64;
        let appended = Appended { version: state.record.version + 1, event_count: count, updated_at: 0 };
        state.apply(&events, &stored, None, appended);
    }

    /// Every render a thread answers, as text: XML whole and from each event on, and each
    /// message format in both context modes and both dangling-call policies.
    fn renders(state: &mut ThreadState) -> Vec<String> {
        let mut out = Vec::new();
        out.push(state.xml_renderer(EscapeMode::default()).document(Some("go")));
        state.release_renderers();
        for from in 0..=state.view().len() {
            out.push(state.xml_lines_from(EscapeMode::default(), from).to_owned());
            state.release_renderers();
        }
        for mode in [ContextMode::Standard, ContextMode::Xml] {
            for dangling in [DanglingToolCalls::Repair, DanglingToolCalls::Drop] {
                let view = View {
                    instructions: Some("be brief"),
                    response_prefix: None,
                    escape: EscapeMode::default(),
                    dangling,
                    provider: Default::default(),
                    media: &crate::media::bytes::NO_MEDIA,
                };
                out.push(state.messages_json(mode, &view));
                state.release_renderers();
                for provider in Provider::ALL {
                    out.push(state.provider_json(provider, mode, &view));
                    state.release_renderers();
                }
            }
        }
        out
    }

    fn event(kind: u8, id: u8, n: usize) -> Value {
        let id = format!("call_{}", id % 3);
        match kind % 7 {
            0 => json!({"type": "message", "role": "user", "content": format!("question {n} <&>"), "iteration": n}),
            1 => json!({"type": "message", "role": "assistant", "content": format!("answer {n}"), "iteration": n}),
            2 => {
                json!({"type": "tool_call", "toolName": format!("tool{}", n % 2), "toolCallId": id, "args": {"n": n}, "iteration": n})
            }
            3 => json!({"type": "tool_result", "toolCallId": id, "result": {"n": n}, "iteration": n}),
            4 => {
                json!({"type": "error", "error": "failed", "recoverable": n.is_multiple_of(2), "toolCallId": id, "iteration": n})
            }
            5 => json!({"type": "human_input_requested", "question": "why?", "iteration": n}),
            // A compaction round of one summary: the view is rewritten.
            _ => {
                json!({"type": "summary", "summarizedIterations": [n.saturating_sub(2)], "summary": "s", "iteration": n.saturating_sub(2),
                "compaction": {"round": n, "cutoff": n.saturating_sub(2)}})
            }
        }
    }

    #[test]
    fn a_big_thread_keeps_nothing_after_a_render() {
        let mut state = thread(0);
        append(&mut state, &[event(0, 0, 0), event(2, 0, 1)]);
        assert!(!state.keeps_renderers());
        renders(&mut state);
        assert!(state.xml.is_empty() && state.standard.is_none());
    }

    #[test]
    fn a_thread_drops_its_renderers_when_it_grows_past_the_limit() {
        let mut state = thread(200);
        append(&mut state, &[event(0, 0, 0)]);
        renders(&mut state);
        assert!(!state.xml.is_empty() && state.standard.is_some());
        append(&mut state, &[event(1, 0, 1), event(2, 0, 2), event(3, 0, 3)]);
        assert!(!state.keeps_renderers());
        assert!(state.xml.is_empty() && state.standard.is_none());
    }

    #[test]
    fn memory_is_given_back_after_a_big_render_and_when_a_big_thread_goes() {
        use std::cell::Cell;
        thread_local! {
            /// Calls made by this test's own thread; other tests trim on theirs.
            static CALLS: Cell<usize> = const { Cell::new(0) };
        }
        set_give_back_memory(|| CALLS.with(|calls| calls.set(calls.get() + 1)));
        let calls = || CALLS.with(Cell::get);
        let mut small = thread(usize::MAX);
        append(&mut small, &[event(0, 0, 0)]);
        small.xml_renderer(EscapeMode::default());
        small.release_renderers();
        drop(small);
        assert_eq!(calls(), 0);
        let mut big = thread(0);
        append(&mut big, &[event(0, 0, 0)]);
        big.xml_renderer(EscapeMode::default());
        big.release_renderers();
        assert_eq!(calls(), 1);
        big.release_renderers();
        assert_eq!(calls(), 1, "nothing more to give back");
        drop(big);
        assert_eq!(calls(), 2);
    }

    proptest! {
        #[test]
        fn renders_are_the_same_whether_renderers_are_kept_or_not(
            batches in prop::collection::vec(prop::collection::vec((0u8..7, 0u8..4), 0..6), 1..5),
        ) {
            let mut kept = thread(usize::MAX);
            let mut released = thread(0);
            let mut n = 0;
            for batch in batches {
                let values: Vec<Value> = batch.iter().map(|&(kind, id)| { n += 1; event(kind, id, n) }).collect();
                append(&mut kept, &values);
                append(&mut released, &values);
                prop_assert_eq!(renders(&mut kept), renders(&mut released));
            }
            // An empty thread is small enough to keep them.
            prop_assert!(released.events.is_empty() || (released.xml.is_empty() && released.standard.is_none()));
        }
    }
}
