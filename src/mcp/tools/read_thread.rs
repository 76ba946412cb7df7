//! `read_thread`: a thread's events as text or XML lines, in pages bounded by a token budget.

use super::{service_error, ToolOutput, ToolResult};
use crate::mcp::page::{render_page, Page, PageFormat, MIN_TOKENS, TOKENIZER};
use crate::service::ThreadService;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const NAME: &str = "read_thread";
pub const DESCRIPTION: &str = "Read a thread's events from fromEvent on, as text (one `#N [role or kind] …` line \
per event, media named, never bytes) or as the <event> lines of its XML rendering, stopping before the page would \
pass maxTokens (o200k_base tokens). When nextEvent is present, call again with fromEvent = nextEvent for the next \
page. An event bigger than the budget is cut with a marker; get_event gives it whole.";

pub const DEFAULT_MAX_TOKENS: u64 = 4000;
pub const MAX_MAX_TOKENS: u64 = 32000;

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ReadFormat {
    /// One `#N [label] …` line per event.
    #[default]
    Text,
    /// The `<event>` lines of the thread's `<thread>` XML rendering.
    Xml,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ReadThreadArgs {
    pub thread_id: String,
    /// text (default) or xml.
    pub format: Option<ReadFormat>,
    /// The first event to read, from 0 (default 0): a previous page's nextEvent.
    pub from_event: Option<u64>,
    /// Most tokens in the page: 64 to 32000 (default 4000).
    #[schemars(range(min = 64, max = 32000))]
    pub max_tokens: Option<u64>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReadThreadOutput {
    pub thread_id: String,
    pub format: ReadFormat,
    /// The page: whole lines, one event each (the first may be cut to fit).
    pub text: String,
    /// o200k_base tokens of text (at most maxTokens).
    pub tokens: u64,
    pub from_event: u64,
    /// Where the next page starts; absent when this page reaches the thread's end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_event: Option<u64>,
    pub event_count: u64,
    /// True when something from fromEvent on is not in this page (more events follow, or an
    /// event was cut).
    pub truncated: bool,
    /// The event cut to fit the budget, when one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut_event: Option<u64>,
}

/// A checked request for a page.
#[derive(Clone, Copy, Debug)]
pub struct PageRequest {
    pub format: ReadFormat,
    pub from_event: u64,
    pub max_tokens: u64,
}

impl PageRequest {
    pub fn first(max_tokens: u64) -> Self {
        PageRequest { format: ReadFormat::Text, from_event: 0, max_tokens }
    }
}

pub async fn call(service: &ThreadService, args: ReadThreadArgs) -> ToolResult {
    let max_tokens = args.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
    if !(MIN_TOKENS..=MAX_MAX_TOKENS).contains(&max_tokens) {
        return Err(format!("invalid arguments: maxTokens must be {MIN_TOKENS} to {MAX_MAX_TOKENS}, got {max_tokens}"));
    }
    let request =
        PageRequest { format: args.format.unwrap_or_default(), from_event: args.from_event.unwrap_or(0), max_tokens };
    let output = read_page(service, &args.thread_id, request).await?;
    let text = with_footer(&output);
    Ok(ToolOutput::new(&output, text))
}

/// A page of the thread, as the tool and the `thread://` resources give it.
pub async fn read_page(
    service: &ThreadService,
    thread_id: &str,
    request: PageRequest,
) -> Result<ReadThreadOutput, String> {
    let format = match request.format {
        ReadFormat::Text => PageFormat::Text,
        ReadFormat::Xml => PageFormat::Xml,
    };
    // Text lines stand alone; XML lines need the thread from its start (earlier tool calls).
    let first = if format == PageFormat::Xml { 0 } else { request.from_event };
    let events = service.events(thread_id, first, None).await.map_err(service_error)?;
    if request.from_event > events.event_count {
        return Err(format!(
            "fromEvent {} is past the end of thread {thread_id:?}, which has {} events",
            request.from_event, events.event_count
        ));
    }
    let (from, max_tokens, event_count) = (request.from_event, request.max_tokens, events.event_count);
    // Rendering and counting are CPU work: off the runtime's threads.
    let page: Page = tokio::task::spawn_blocking(move || render_page(&events.events, first, from, format, max_tokens))
        .await
        .map_err(|e| format!("internal error: {e}"))?;
    debug_assert!(TOKENIZER.count(&page.text) <= max_tokens);
    let truncated = page.truncated();
    Ok(ReadThreadOutput {
        thread_id: thread_id.to_owned(),
        format: request.format,
        tokens: page.tokens,
        from_event: page.from_event,
        next_event: page.next_event,
        event_count,
        truncated,
        cut_event: page.cut_event,
        text: page.text,
    })
}

/// The page, then a line saying which events it holds and how to read on.
pub fn with_footer(output: &ReadThreadOutput) -> String {
    let mut text = output.text.clone();
    let shown_end = output.next_event.unwrap_or(output.event_count);
    let range = if shown_end > output.from_event {
        format!("events {} to {} of {}", output.from_event, shown_end - 1, output.event_count)
    } else {
        format!("no events from {} (the thread has {})", output.from_event, output.event_count)
    };
    match output.next_event {
        Some(next) => text.push_str(&format!("[{range}; more: call read_thread with fromEvent {next}]\n")),
        None => text.push_str(&format!("[{range}; end of thread]\n")),
    }
    text
}
