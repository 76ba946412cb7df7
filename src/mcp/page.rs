//! A thread's events from some index, rendered until the next one would pass a token budget.
//!
//! This is what keeps a 10,000-event thread from flooding an agent's context: every page's
//! text counts at most `max_tokens` (OpenAI's o200k_base tokenizer, the one the project's
//! token counts default to for real models), and `next_event` says where the next page
//! starts. One event bigger than the whole budget is cut, with a marker, rather than skipped.

use super::event_text::event_line;
use crate::context::Tokenizer;
use crate::event_log::EventLog;
use crate::xml::{EscapeMode, XmlRenderer};

/// The tokenizer pages are counted with.
pub const TOKENIZER: Tokenizer = Tokenizer::O200kBase;
/// Smallest budget accepted: room for one cut event and its marker.
pub const MIN_TOKENS: u64 = 64;
/// Bytes of text a cut event's shown part is looked for in, per token of the budget.
const MAX_BYTES_PER_TOKEN: usize = 32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageFormat {
    /// One `#N [label] …` line per event ([`super::event_text`]).
    Text,
    /// The `<event …>` lines of the thread's `<thread>` XML rendering.
    Xml,
}

/// A rendered page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Page {
    pub text: String,
    /// Tokens of `text`.
    pub tokens: u64,
    pub from_event: u64,
    /// Where the next page starts; `None` when this page reaches the thread's end.
    pub next_event: Option<u64>,
    /// The event cut to fit (only ever a page's first).
    pub cut_event: Option<u64>,
}

impl Page {
    /// Whether something from `from_event` on is not in this page.
    pub fn truncated(&self) -> bool {
        self.next_event.is_some() || self.cut_event.is_some()
    }
}

/// Renders `events` (the thread's events from index `first`) from index `from` on. XML needs
/// the thread from its start (`first` 0): a tool result's line names the tool of an earlier
/// call.
pub fn render_page(events: &EventLog, first: u64, from: u64, format: PageFormat, max_tokens: u64) -> Page {
    let end = first + events.len() as u64;
    let mut lines = LineSource::new(events, first, from, format);
    let mut text = String::new();
    // Where each event's line starts in `text`, to take whole lines back off.
    let mut starts: Vec<(u64, usize)> = Vec::new();
    let mut used = 0u64;
    let mut next_event = None;
    let mut cut_event = None;
    for index in from..end {
        let line = lines.line(index);
        let tokens = TOKENIZER.count(&line);
        if used + tokens <= max_tokens {
            starts.push((index, text.len()));
            text.push_str(&line);
            used += tokens;
            continue;
        }
        if index == from {
            text = cut_to_fit(&line, index, tokens, max_tokens);
            starts.push((index, 0));
            cut_event = Some(index);
            next_event = (index + 1 < end).then_some(index + 1);
        } else {
            next_event = Some(index);
        }
        break;
    }
    // Lines were counted one by one; make sure the page as a whole fits too. A page of one
    // line fits already: it was counted alone, or cut to fit.
    let mut tokens = TOKENIZER.count(&text);
    while tokens > max_tokens && starts.len() > 1 {
        let (index, start) = starts.pop().expect("more than one line");
        text.truncate(start);
        next_event = Some(index);
        tokens = TOKENIZER.count(&text);
    }
    Page { text, tokens, from_event: from, next_event, cut_event }
}

/// The first part of `line`, with a marker saying it was cut, in at most `max_tokens`.
fn cut_to_fit(line: &str, index: u64, line_tokens: u64, max_tokens: u64) -> String {
    let marker = format!(" … [event #{index} cut to fit: {line_tokens} tokens in all; get_event gives it whole]\n");
    let with_marker = |end: usize| {
        let mut cut = line[..end].trim_end_matches('\n').to_owned();
        cut.push_str(&marker);
        cut
    };
    // The longest prefix (on a character boundary) that fits with the marker: binary search
    // over byte offsets, counting the text as it will be sent. Tokens seldom span more than a
    // few bytes, so the search starts below a bound that keeps a megabytes-long event from
    // being tokenized whole at every step (a tighter bound only shows less, never too much).
    let (mut low, mut high) =
        (0usize, line.len().min(usize::try_from(max_tokens).unwrap_or(usize::MAX).saturating_mul(MAX_BYTES_PER_TOKEN)));
    while low < high {
        let mid = floor_char_boundary(line, (low + high).div_ceil(2));
        if mid <= low {
            break;
        }
        if TOKENIZER.count(&with_marker(mid)) <= max_tokens {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    with_marker(low)
}

fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Renders the lines of a page one event at a time.
enum LineSource<'a> {
    Text { events: &'a EventLog, first: u64 },
    Xml { events: &'a EventLog, renderer: XmlRenderer, rendered: u64 },
}

impl<'a> LineSource<'a> {
    fn new(events: &'a EventLog, first: u64, from: u64, format: PageFormat) -> Self {
        match format {
            PageFormat::Text => LineSource::Text { events, first },
            PageFormat::Xml => {
                debug_assert_eq!(first, 0, "XML pages need the thread from its start");
                // The lines before the page are rendered for what later lines refer to.
                let mut renderer = XmlRenderer::new(EscapeMode::default());
                let before = (from as usize).min(events.len());
                renderer.extend(events.slice(0..before).parse_all().iter());
                LineSource::Xml { events, renderer, rendered: before as u64 }
            }
        }
    }

    fn line(&mut self, index: u64) -> String {
        match self {
            LineSource::Text { events, first } => match events.parse((index - *first) as usize) {
                Some(event) => event_line(index, &event),
                None => format!("#{index} [unreadable]\n"),
            },
            LineSource::Xml { events, renderer, rendered } => {
                debug_assert_eq!(*rendered, index);
                let before = renderer.lines().len();
                if let Some(event) = events.parse(index as usize) {
                    renderer.push(&event);
                }
                *rendered += 1;
                renderer.lines()[before..].to_owned()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::AgentEvent;
    use serde_json::json;

    fn log(contents: &[String]) -> EventLog {
        let events: Vec<AgentEvent> = contents
            .iter()
            .map(|c| {
                AgentEvent::from_value(json!({"type": "message", "role": "user", "content": c, "iteration": 1}), "e")
                    .unwrap()
            })
            .collect();
        EventLog::from(events.as_slice())
    }

    #[test]
    fn pages_stay_in_budget_and_cover_every_event_once() {
        let contents: Vec<String> = (0..500).map(|i| format!("message number {i} says something")).collect();
        let events = log(&contents);
        for format in [PageFormat::Text, PageFormat::Xml] {
            let (mut from, mut seen) = (0, 0);
            loop {
                let page = render_page(&events, 0, from, format, 300);
                assert!(page.tokens <= 300 && TOKENIZER.count(&page.text) == page.tokens);
                assert_eq!(page.cut_event, None);
                seen += page.text.lines().count();
                match page.next_event {
                    Some(next) => {
                        assert!(next > from);
                        from = next;
                    }
                    None => break,
                }
            }
            assert_eq!(seen, 500, "{format:?}");
        }
    }

    #[test]
    fn an_event_bigger_than_the_budget_is_cut_with_a_marker() {
        let contents = vec!["word ".repeat(5000), "after".to_owned()];
        let events = log(&contents);
        let page = render_page(&events, 0, 0, PageFormat::Text, 100);
        assert!(page.tokens <= 100, "{}", page.tokens);
        assert!(page.text.starts_with("#0 [user] word word"));
        assert!(page.text.contains("[event #0 cut to fit"), "{}", page.text);
        assert_eq!((page.cut_event, page.next_event), (Some(0), Some(1)));
        let huge = log(&["line of output ".repeat(70_000)]);
        let page = render_page(&huge, 0, 0, PageFormat::Text, 500);
        assert!(page.tokens <= 500 && page.tokens > 400, "{}", page.tokens);
        let next = render_page(&events, 0, 1, PageFormat::Text, 100);
        assert_eq!(next.text, "#1 [user] after\n");
        assert!(!next.truncated());
    }
}
