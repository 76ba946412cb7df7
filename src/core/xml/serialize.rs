//! Seed 000: a thread of events as a `<thread>` XML document.
//!
//! [`XmlRenderer`] is incremental: every event's line depends only on the events before it
//! (its position and, for tool results, earlier tool calls), so appending events never changes
//! lines already rendered. A long-lived thread keeps one renderer and pays only for new events.

use super::escape::{escape_into, EscapeMode};
use super::type_names;
use crate::event::{AgentEvent, EventKind, Role};
use crate::js_json;
use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

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
    let mut document = String::new();
    output_size::reserve(&mut document, events.len());
    XmlRenderer::render_document_into(events, options, &mut document);
    output_size::trim(&mut document);
    output_size::learn(document.len(), events.len());
    document
}

/// Sizes a one-shot render's buffer once, from the bytes per event of the previous one-shot
/// render, instead of growing it by doubling: each growth of a buffer below the allocator's
/// mmap threshold copies everything written so far.
mod output_size {
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Output bytes per event of the latest one-shot render, plus an eighth; 0 before the first.
    static BYTES_PER_EVENT: AtomicUsize = AtomicUsize::new(0);
    /// Threads of bigger events are rare, and grow their buffer as before.
    const MAX_BYTES_PER_EVENT: usize = 4096;

    pub(super) fn reserve(buf: &mut String, events: usize) {
        let per_event = BYTES_PER_EVENT.load(Ordering::Relaxed);
        // Only a hint: if the memory is not there, the render grows its buffer as it goes.
        if buf.try_reserve(events.saturating_mul(per_event)).is_ok() {
            super::huge_pages::advise(buf);
        }
    }

    /// Gives back what a reservation for bigger events left unused (a block shrinks in place).
    pub(super) fn trim(document: &mut String) {
        if document.capacity() / 2 > document.len() {
            document.shrink_to_fit();
        }
    }

    pub(super) fn learn(document_len: usize, events: usize) {
        if let Some(per_event) = document_len.checked_div(events) {
            let per_event = per_event + 1;
            BYTES_PER_EVENT.store((per_event + per_event / 8).min(MAX_BYTES_PER_EVENT), Ordering::Relaxed);
        }
    }
}

/// Asks the kernel to back a huge one-shot buffer with 2 MiB pages.
///
/// A document of tens of megabytes is fresh memory (glibc maps every block above 32 MiB on its
/// own), which the kernel faults in and zeroes as the renderer first writes it: one fault per
/// 4 KiB page, 17,000 for a 71.5 MB document, as long as the render itself. With 2 MiB pages
/// it is one fault per 2 MiB. Where transparent huge pages are set to `madvise` (a common
/// default) they are used only for memory advised so; `always` needs no advice, `never`
/// ignores it. The advice changes how memory is backed, never what it holds, and the
/// allocator is not involved.
mod huge_pages {
    /// Buffers below this are left alone: they are usually reused from the heap, already
    /// faulted in, and the advice would be a system call for nothing.
    const MIN_BYTES: usize = 32 << 20;
    #[cfg(target_os = "linux")]
    const PAGE: usize = 2 << 20;

    /// Advises the whole 2 MiB pages within `buf`'s spare capacity.
    pub(super) fn advise(buf: &String) {
        if buf.capacity() - buf.len() < MIN_BYTES {
            return;
        }
        #[cfg(target_os = "linux")]
        {
            let base = buf.as_ptr() as usize;
            let start = (base + buf.len()).next_multiple_of(PAGE);
            let end = (base + buf.capacity()) / PAGE * PAGE;
            if start < end {
                // SAFETY: [start, end) lies within the buffer's own allocation (its spare
                // capacity), so no other object's memory is advised; MADV_HUGEPAGE never
                // changes the contents or the validity of memory, only how it is backed.
                let status = unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
                // A kernel without transparent huge pages refuses it; the render is the same.
                if status != 0 {
                    tracing::debug!("madvise(MADV_HUGEPAGE) refused for the XML output buffer");
                }
            }
        }
    }
}

/// How many events ahead of the one being rendered `extend` starts prefetching.
const AHEAD: usize = 4;

/// The document's first line; the renderer's buffer starts with it so that a one-shot render
/// can hand the buffer out as the document without copying it.
const OPEN: &str = "<thread>\n";

/// Accumulates the `<event>` lines of a thread, one event at a time.
#[derive(Clone, Debug)]
pub struct XmlRenderer {
    lines: Lines,
    /// toolCallId → toolName of the latest `tool_call` seen with that id, owned: the renderer
    /// outlives the events it was given.
    tool_names: HashMap<String, String, IdHash>,
}

impl XmlRenderer {
    pub fn new(escape: EscapeMode) -> Self {
        XmlRenderer { lines: Lines::new(escape, OPEN.to_owned()), tool_names: HashMap::default() }
    }

    /// Number of events rendered so far.
    pub fn len(&self) -> usize {
        self.lines.count
    }

    pub fn is_empty(&self) -> bool {
        self.lines.count == 0
    }

    /// The escape mode this renderer was built with.
    pub fn escape(&self) -> EscapeMode {
        self.lines.escape
    }

    /// The rendered `<event>` lines, each ending in `\n`.
    pub fn lines(&self) -> &str {
        &self.lines.buf[OPEN.len()..]
    }

    pub fn extend<'a>(&mut self, events: impl IntoIterator<Item = &'a AgentEvent>) {
        self.lines.extend(events, &mut self.tool_names);
    }

    /// Renders one more event.
    pub fn push(&mut self, event: &AgentEvent) {
        self.lines.push(event, &mut self.tool_names);
    }

    /// Appends the whole document (`<thread>`, lines, `</thread>`, prefix) to `out`.
    pub fn write_document(&self, out: &mut String, response_prefix: Option<&str>) {
        out.reserve(self.lines.buf.len() + 12 + response_prefix.map_or(0, str::len));
        out.push_str(&self.lines.buf);
        close_document(out, response_prefix);
    }

    /// The whole document as a new string.
    pub fn document(&self, response_prefix: Option<&str>) -> String {
        let mut out = String::new();
        self.write_document(&mut out, response_prefix);
        out
    }

    /// Renders `events` as a `<thread>` document into `out`, replacing what it held and reusing
    /// its memory. A caller that renders again and again keeps one buffer this way; a fresh
    /// document of tens of megabytes is fresh memory that the kernel has to map and zero page by
    /// page, which costs about as much as rendering it.
    pub fn render_document_into(events: &[AgentEvent], options: &XmlOptions, out: &mut String) {
        let mut buf = std::mem::take(out);
        buf.clear();
        buf.push_str(OPEN);
        let mut lines = Lines::new(options.escape, buf);
        // The events outlive this render, so the map borrows their ids and names instead of
        // copying two strings per tool call.
        // Sized for a tool call in every other event, as agent threads go, so that it seldom grows.
        let mut tool_names: HashMap<&str, &str, IdHash> =
            HashMap::with_capacity_and_hasher(events.len() / 2, IdHash::default());
        lines.extend(events, &mut tool_names);
        let mut document = lines.buf;
        close_document(&mut document, options.response_prefix.as_deref());
        *out = document;
    }
}

/// toolCallId → toolName of the latest `tool_call` with that id, as a tool result looks it up.
trait ToolNames<'e> {
    fn record(&mut self, tool_call_id: &'e str, tool_name: &'e str);
    fn name(&self, tool_call_id: &str) -> Option<&str>;
}

type IdHash = BuildHasherDefault<id_hash::IdHasher>;

impl<'e> ToolNames<'e> for HashMap<String, String, IdHash> {
    fn record(&mut self, tool_call_id: &'e str, tool_name: &'e str) {
        match self.entry(tool_call_id.to_owned()) {
            Entry::Occupied(mut entry) => tool_name.clone_into(entry.get_mut()),
            Entry::Vacant(entry) => {
                entry.insert(tool_name.to_owned());
            }
        }
    }

    fn name(&self, tool_call_id: &str) -> Option<&str> {
        self.get(tool_call_id).map(String::as_str)
    }
}

impl<'e> ToolNames<'e> for HashMap<&'e str, &'e str, IdHash> {
    fn record(&mut self, tool_call_id: &'e str, tool_name: &'e str) {
        self.insert(tool_call_id, tool_name);
    }

    fn name(&self, tool_call_id: &str) -> Option<&str> {
        self.get(tool_call_id).copied()
    }
}

/// The buffer the lines are written to, and what writing them needs.
#[derive(Clone, Debug)]
struct Lines {
    escape: EscapeMode,
    /// `OPEN` followed by the rendered lines.
    buf: String,
    count: usize,
    /// Reused for JSON bodies before they are escaped.
    scratch: String,
}

impl Lines {
    fn new(escape: EscapeMode, buf: String) -> Self {
        Lines { escape, buf, count: 0, scratch: String::new() }
    }

    fn extend<'e>(&mut self, events: impl IntoIterator<Item = &'e AgentEvent>, tool_names: &mut impl ToolNames<'e>) {
        // Rendering a long thread is bound by memory latency: an event's keys and values sit
        // behind pointers, its tool arguments behind more. Asking for the memory of the events
        // a few places ahead hides most of it, one level of pointers per stage, so that each
        // stage reads only what the previous one brought in.
        let mut events = events.into_iter();
        let mut ahead: [Option<&AgentEvent>; AHEAD] = std::array::from_fn(|_| events.next());
        for (distance, event) in ahead.iter().enumerate() {
            if let Some(event) = event {
                prefetch::stages_up_to(event, distance);
            }
        }
        while let Some(event) = ahead[0] {
            ahead.rotate_left(1);
            ahead[AHEAD - 1] = events.next();
            for (distance, event) in ahead.iter().enumerate() {
                if let Some(event) = event {
                    prefetch::stage(event, distance);
                }
            }
            self.push(event, tool_names);
        }
    }

    /// Renders one more event.
    fn push<'e>(&mut self, event: &'e AgentEvent, tool_names: &mut impl ToolNames<'e>) {
        let Lines { escape, buf: out, count, scratch } = self;
        let escape = *escape;
        let id = *count;
        *count += 1;
        let kind = event.kind();
        let iteration = event.iteration();
        match kind {
            EventKind::Message { role, content } => {
                let type_name = match role {
                    Role::User => "human",
                    Role::Assistant => "ai",
                    Role::System => "system",
                };
                open_tag(out, type_name, id);
                push_iteration(out, iteration);
                out.push('>');
                escape_into(out, &content.text(), escape);
            }
            EventKind::ToolCall { tool_name, tool_call_id, args } => {
                open_tag(out, "tool_input", id);
                push_attr(out, "name", tool_name);
                push_iteration(out, iteration);
                out.push('>');
                scratch.clear();
                js_json::write_object(scratch, args);
                escape_into(out, scratch, escape);
                // Latest call wins, as a backward scan from the result would find it.
                tool_names.record(tool_call_id, tool_name);
            }
            EventKind::ToolResult { tool_call_id, result, content } => {
                open_tag(out, "tool_output", id);
                let name = tool_names.name(tool_call_id).unwrap_or("unknown");
                push_attr(out, "name", name);
                out.push_str(" status=\"success\"");
                push_iteration(out, iteration);
                push_timing_attributes(out, event, scratch);
                out.push('>');
                match result {
                    Some(Value::String(text)) => escape_into(out, text, escape),
                    Some(other) => {
                        scratch.clear();
                        js_json::write_value(scratch, other);
                        escape_into(out, scratch, escape);
                    }
                    None => {}
                }
                // Media never go into the document: each part is a line naming it.
                if let Some(parts) = content {
                    if result.is_some() {
                        out.push('\n');
                    }
                    escape_into(out, &crate::media::parts::text_of(parts), escape);
                }
            }
            EventKind::Error { error, recoverable, .. } => {
                open_tag(out, "error", id);
                push_iteration(out, iteration);
                out.push_str(if recoverable { " recoverable=\"true\">" } else { " recoverable=\"false\">" });
                escape_into(out, error, escape);
            }
            EventKind::HumanInputRequested { question } => {
                open_tag(out, "human_input_requested", id);
                push_iteration(out, iteration);
                out.push('>');
                escape_into(out, question, escape);
            }
            EventKind::HumanInputReceived { response } => {
                open_tag(out, "human_input_received", id);
                push_iteration(out, iteration);
                out.push('>');
                escape_into(out, response, escape);
            }
            EventKind::Completion { result, .. } => {
                open_tag(out, "completion", id);
                push_iteration(out, iteration);
                out.push('>');
                escape_into(out, result, escape);
            }
            EventKind::Summary { summarized_iterations, summary } => {
                open_tag(out, "summary", id);
                push_iteration(out, iteration);
                out.push_str(" summarizedIterations=\"");
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
            // Reasoning is shown as any kept event is: its fields, as they came.
            EventKind::Unknown { .. } | EventKind::Reasoning { .. } => {
                open_unknown_tag(out, &type_names::unknown_type_attribute(event.event_type()), id);
                push_iteration(out, iteration);
                out.push('>');
                // The event's other fields as a JSON object, written without copying them.
                scratch.clear();
                scratch.push('{');
                let rest =
                    event.fields().iter().filter(|(k, _)| !matches!(k.as_str(), "type" | "iteration" | "timestamp"));
                for (i, (key, value)) in rest.enumerate() {
                    if i > 0 {
                        scratch.push(',');
                    }
                    js_json::write_string(scratch, key);
                    scratch.push(':');
                    js_json::write_value(scratch, value);
                }
                scratch.push('}');
                escape_into(out, scratch, escape);
            }
        }
        out.push_str("</event>\n");
    }
}

fn close_document(out: &mut String, response_prefix: Option<&str>) {
    out.push_str("</thread>");
    if let Some(prefix) = response_prefix.filter(|p| !p.is_empty()) {
        out.push('\n');
        out.push_str(prefix);
    }
}

/// `  <event type="{type_name}" id="{id}"` for one of the XML's own type names, which need no
/// escaping.
fn open_tag(out: &mut String, type_name: &'static str, id: usize) {
    debug_assert!(!type_name.bytes().any(|b| matches!(b, b'&' | b'<' | b'>' | b'"' | b'\'' | ..0x20)));
    out.push_str("  <event type=\"");
    out.push_str(type_name);
    push_id(out, id);
}

/// `  <event type="{type_name}" id="{id}"` for a type name from the event.
fn open_unknown_tag(out: &mut String, type_name: &str, id: usize) {
    out.push_str("  <event type=\"");
    escape_into(out, type_name, EscapeMode::Full);
    push_id(out, id);
}

/// `" id="{id}"`, closing the type attribute.
fn push_id(out: &mut String, id: usize) {
    out.push_str("\" id=\"");
    js_json::write_decimal(out, id as u64);
    out.push('"');
}

/// ` iteration="{n}"`, the number as JavaScript prints it.
fn push_iteration(out: &mut String, iteration: &Number) {
    out.push_str(" iteration=\"");
    js_json::write_number(out, iteration);
    out.push('"');
}

/// Upstream's `duration_ms` and `parallel_group` attributes of a `tool_result` (after
/// `iteration`): `duration_ms` when `durationMs` is a number (printed as JavaScript prints it)
/// or a string, as upstream writes any non-null value; `parallel_group` when `parallelGroup`
/// is a non-empty string or a non-zero number (its JavaScript string form), as upstream writes
/// any truthy value. Other JSON types have no faithful attribute form and write nothing.
fn push_timing_attributes(out: &mut String, event: &AgentEvent, scratch: &mut String) {
    let mut push_text = |name: &str, value: &Value, keep: fn(&Value) -> bool| {
        scratch.clear();
        match value {
            Value::String(s) if keep(value) => scratch.push_str(s),
            Value::Number(n) if keep(value) => js_json::write_number(scratch, n),
            _ => return,
        }
        push_attr(out, name, scratch);
    };
    if let Some(duration) = field(event, "durationMs") {
        push_text("duration_ms", duration, |_| true);
    }
    if let Some(group) = field(event, "parallelGroup") {
        push_text("parallel_group", group, |v| match v {
            Value::String(s) => !s.is_empty(),
            Value::Number(n) => n.as_f64() != Some(0.0),
            _ => false,
        });
    }
}

/// A field of an event, found by a scan of its few keys: cheaper than hashing the key.
fn field<'a>(event: &'a AgentEvent, key: &str) -> Option<&'a Value> {
    event.fields().iter().find(|(k, _)| *k == key).map(|(_, value)| value)
}

fn push_attr(out: &mut String, name: &str, value: &str) {
    out.push(' ');
    out.push_str(name);
    out.push_str("=\"");
    escape_into(out, value, EscapeMode::Full);
    out.push('"');
}

/// A fast hash for tool call ids. The map is looked up once per tool call and result, and
/// SipHash was a tenth of a render. Ids come from the host that owns the thread, so a host
/// that chose colliding ids would only slow its own renders.
mod id_hash {
    use std::hash::Hasher;

    /// FxHash's word step: rotate, mix in 8 bytes, multiply.
    #[derive(Default)]
    pub(super) struct IdHasher(u64);

    const K: u64 = 0x517c_c1b7_2722_0a95;

    impl IdHasher {
        fn add(&mut self, word: u64) {
            self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
        }
    }

    impl Hasher for IdHasher {
        fn write(&mut self, bytes: &[u8]) {
            let mut words = bytes.chunks_exact(8);
            for word in &mut words {
                self.add(u64::from_le_bytes(word.try_into().expect("8 bytes")));
            }
            let mut last = [0u8; 8];
            last[..words.remainder().len()].copy_from_slice(words.remainder());
            self.add(u64::from_le_bytes(last));
        }

        fn write_u8(&mut self, b: u8) {
            self.add(u64::from(b));
        }

        fn finish(&self) -> u64 {
            self.0
        }
    }
}

/// Hints to load an event's memory into cache before it is rendered (x86-64 only; a no-op
/// elsewhere). A prefetch never faults and has no effect on results.
mod prefetch {
    use crate::event::AgentEvent;
    use serde_json::{Map, Value};

    #[inline(always)]
    fn line<T>(address: *const T) {
        #[cfg(target_arch = "x86_64")]
        #[allow(unused_unsafe)]
        // SAFETY: a prefetch only hints the cache; any address is allowed.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(address.cast());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = address;
    }

    /// The prefetch stage for an event `distance` places after the next one to render:
    /// 3 — its map entries; 1 — its keys and strings, and the entries of objects in it (its
    /// tool arguments); 0 — the keys and strings of those objects.
    pub(super) fn stage(event: &AgentEvent, distance: usize) {
        match distance {
            3 => entries(event.fields()),
            1 => contents(event.fields(), true),
            0 => {
                for value in event.fields().values() {
                    if let Value::Object(map) = value {
                        contents(map, false);
                    }
                }
            }
            _ => {}
        }
    }

    /// All the stages an event at `distance` would have been through already.
    pub(super) fn stages_up_to(event: &AgentEvent, distance: usize) {
        for d in (distance..4).rev() {
            stage(event, d);
        }
    }

    /// A map's entries (key and value headers), which are contiguous: only their addresses are
    /// computed, nothing is read.
    fn entries(map: &Map<String, Value>) {
        let mut entries = map.iter();
        if let (Some((first, _)), last) = (entries.next(), entries.next_back()) {
            let start = (first as *const String).cast::<u8>().wrapping_sub(64);
            let end = last.map_or(first, |(key, _)| key) as *const String as usize + 128;
            let mut address = start;
            while (address as usize) < end {
                line(address);
                address = address.wrapping_add(64);
            }
        }
    }

    /// The bytes of a map's keys and the start of its string values (reads the entries), and
    /// with `nested` the entries of the objects among its values.
    fn contents(map: &Map<String, Value>, nested: bool) {
        for (key, value) in map {
            line(key.as_ptr());
            match value {
                Value::String(text) => {
                    line(text.as_ptr());
                    line(text.as_ptr().wrapping_add(64));
                }
                Value::Object(inner) if nested => entries(inner),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The advice leaves what a buffer holds and what is written to it after exactly as they
    /// would be without it, whether or not the kernel takes it.
    #[test]
    fn huge_page_advice_keeps_the_contents() {
        let mut buf = String::from("<thread>\n");
        buf.reserve(40 << 20);
        huge_pages::advise(&buf);
        assert_eq!(buf, "<thread>\n");
        let line = "  <event type=\"human\" id=\"0\" iteration=\"1\">x &amp; y</event>\n";
        while buf.len() + line.len() <= buf.capacity() {
            buf.push_str(line);
        }
        assert!(buf.len() > 32 << 20);
        assert!(buf.as_bytes()["<thread>\n".len()..].chunks(line.len()).all(|chunk| chunk == line.as_bytes()));
    }

    /// Small buffers and buffers with little spare room are not advised (nothing to check but
    /// that nothing breaks at the edges of the range computation).
    #[test]
    fn huge_page_advice_handles_small_and_full_buffers() {
        for capacity in [0, 1, 4096, (32 << 20) - 1] {
            let mut buf = String::with_capacity(capacity);
            huge_pages::advise(&buf);
            buf.push('x');
            assert_eq!(buf, "x");
        }
        let mut full = "y".repeat(33 << 20);
        full.shrink_to_fit();
        huge_pages::advise(&full);
        assert_eq!(full.len(), 33 << 20);
    }
}
