//! `threadkeeper export --otlp`: a stored thread's traces, sent once.

use super::sender::Sender;
use super::OtlpSettings;
use crate::core::trace::{thread_spans, Span, TraceOptions};
use crate::event::AgentEvent;

/// Spans per request.
const BATCH_SPANS: usize = 512;

/// What a backfill sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sent {
    pub spans: usize,
    pub traces: usize,
}

/// The spans the live export gives for `events` (a run still open at the end ended at its last
/// event and flagged), sent to `settings`' endpoint. Events without a `timestamp` take the time
/// of the one before them, the first ones `fallback_ms`.
pub async fn send_thread(
    settings: &OtlpSettings,
    options: TraceOptions,
    events: &[AgentEvent],
    fallback_ms: u64,
) -> Result<Sent, String> {
    let sender = Sender::new(settings)?;
    let spans: Vec<Span> = thread_spans(options, events, fallback_ms);
    let sent = Sent { spans: spans.len(), traces: spans.iter().filter(|s| s.parent_span_id.is_none()).count() };
    let mut spans = spans.into_iter().peekable();
    while spans.peek().is_some() {
        let batch: Vec<Span> = spans.by_ref().take(BATCH_SPANS).collect();
        sender.send(batch).await.map_err(|e| format!("{}: {e}", settings.traces_endpoint))?;
    }
    Ok(sent)
}
