//! A thread's change feed: after each change signal of the store, what the page lacks.
//!
//! The page says how many events it holds (`from`, or `Last-Event-ID` when the browser
//! reconnects); the feed sends the events after those with the links and estimates they change,
//! and ends with `reset` when a pop took back events the page shows, or `deleted`.

use crate::event::AgentEvent;
use crate::store::{ChangeSignal, Store, StoreResult};
use crate::view::{iteration_tokens, link_events, CallLink, CallOutcome};
use crate::xml::EscapeMode;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// One message for the page: its JSON text and the event count it leaves the page with.
pub struct Message {
    pub json: String,
    pub event_count: usize,
}

pub struct ThreadFeed {
    store: Arc<dyn Store>,
    thread_id: String,
    signal: ChangeSignal,
    stop: CancellationToken,
    /// Every event of the thread up to `count`, parsed once (links are made from all of them).
    events: Vec<AgentEvent>,
    /// What the page holds: this many events, of this version of the thread.
    count: usize,
    version: Option<u64>,
    started: bool,
    ended: bool,
}

impl ThreadFeed {
    pub fn new(
        store: Arc<dyn Store>,
        thread_id: String,
        from: usize,
        signal: ChangeSignal,
        stop: CancellationToken,
    ) -> Self {
        ThreadFeed {
            store,
            thread_id,
            signal,
            stop,
            events: Vec::new(),
            count: from,
            version: None,
            started: false,
            ended: false,
        }
    }

    /// The next message, waiting for changes as long as needed; `None` when the feed ends.
    pub async fn next(&mut self) -> Option<Message> {
        if self.ended {
            return None;
        }
        loop {
            if self.started {
                tokio::select! {
                    changed = self.signal.changed() => changed.ok()?,
                    _ = self.stop.cancelled() => return None,
                }
            }
            let first = !self.started;
            self.started = true;
            let step = if first { self.start().await } else { self.catch_up().await };
            match step {
                Ok(Some(message)) => return Some(message),
                Ok(None) => {}
                Err(e) => tracing::warn!(thread_id = %self.thread_id, error = %e, "live feed could not read the store"),
            }
        }
    }

    /// Reads the whole thread once; sends what came after the page was built.
    async fn start(&mut self) -> StoreResult<Option<Message>> {
        let (record, log) = match self.store.events_from(&self.thread_id, 0).await {
            Ok(read) => read,
            Err(crate::store::StoreError::NotFound { .. }) => return Ok(Some(self.end("deleted"))),
            Err(e) => {
                self.started = false;
                return Err(e);
            }
        };
        self.events = log.parse_all();
        self.version = Some(record.version);
        if self.count > self.events.len() {
            return Ok(Some(self.end("reset")));
        }
        Ok(self.appended())
    }

    /// After a change: the new events, or the end of the feed when the thread was rewound.
    async fn catch_up(&mut self) -> StoreResult<Option<Message>> {
        let Some(version) = self.version else { return self.start().await };
        let record = match self.store.record(&self.thread_id).await? {
            Some(record) => record,
            None => return Ok(Some(self.end("deleted"))),
        };
        if record.version == version {
            return Ok(None);
        }
        let (record, log) = match self.store.events_from(&self.thread_id, self.count as u64).await {
            Ok(read) => read,
            Err(crate::store::StoreError::NotFound { .. }) => return Ok(Some(self.end("deleted"))),
            Err(e) => return Err(e),
        };
        // Read after the events: a pop between the two reads is seen too.
        if (record.event_count as usize) < self.count
            || self.store.rewound_since(&self.thread_id, version, self.count as u64).await?
        {
            return Ok(Some(self.end("reset")));
        }
        self.events.truncate(self.count);
        self.events.extend(log.parse_all());
        self.version = Some(record.version);
        Ok(self.appended())
    }

    fn appended(&mut self) -> Option<Message> {
        if self.events.len() == self.count {
            return None;
        }
        let json = append_message(&self.events, self.count, EscapeMode::default());
        self.count = self.events.len();
        Some(Message { json, event_count: self.count })
    }

    fn end(&mut self, kind: &str) -> Message {
        self.ended = true;
        Message { json: json!({ "type": kind }).to_string(), event_count: self.count }
    }
}

/// `{"type":"append","from":N,"events":[…],"links":{…},"tokens":[…]}`: the events from `from`
/// on as stored, the links that involve them or may have changed (calls still unanswered), and
/// the estimates of the iterations they touch.
pub fn append_message(events: &[AgentEvent], from: usize, escape: EscapeMode) -> String {
    let links = link_events(events);
    let calls: Vec<&CallLink> = links
        .calls
        .iter()
        .filter(|link| {
            link.call >= from
                || match link.outcome {
                    CallOutcome::Answered { by } => by >= from,
                    CallOutcome::NotCompleted { .. } => true,
                }
        })
        .collect();
    let strays: Vec<usize> = links.strays.iter().copied().filter(|&i| i >= from).collect();
    let asks: Vec<_> =
        links.asks.iter().filter(|ask| ask.request >= from || ask.answer.is_none_or(|a| a >= from)).collect();
    let touched: HashSet<u64> = events[from..].iter().map(iteration_key).collect();
    let touched_events: Vec<AgentEvent> =
        events.iter().filter(|e| touched.contains(&iteration_key(e))).cloned().collect();
    let tokens = iteration_tokens(&touched_events, escape);
    let new_events: Vec<&serde_json::Map<String, Value>> = events[from..].iter().map(|e| e.fields()).collect();
    json!({
        "type": "append",
        "from": from,
        "events": new_events,
        "links": { "calls": calls, "strays": strays, "asks": asks },
        "tokens": tokens,
    })
    .to_string()
}

fn iteration_key(event: &AgentEvent) -> u64 {
    (event.iteration().as_f64().unwrap_or(0.0) + 0.0).to_bits()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(values: Value) -> Vec<AgentEvent> {
        AgentEvent::list_from_values(serde_json::from_value(values).unwrap()).unwrap()
    }

    #[test]
    fn an_update_carries_the_new_events_and_only_the_links_they_can_change() {
        let all = events(json!([
            {"type": "tool_call", "toolName": "a", "toolCallId": "1", "args": {}, "iteration": 0},
            {"type": "tool_result", "toolCallId": "1", "result": "r", "iteration": 0},
            {"type": "tool_call", "toolName": "b", "toolCallId": "2", "args": {}, "iteration": 1},
            {"type": "human_input_requested", "question": "?", "iteration": 1},
            {"type": "tool_result", "toolCallId": "2", "result": "late", "iteration": 2},
            {"type": "tool_result", "toolCallId": "9", "result": "stray", "iteration": 2},
        ]));
        let update: Value = serde_json::from_str(&append_message(&all, 4, EscapeMode::default())).unwrap();
        assert_eq!(update["type"], "append");
        assert_eq!(update["from"], 4);
        assert_eq!(update["events"].as_array().unwrap().len(), 2);
        // Call 0 was answered before: the page has that link already.
        assert_eq!(update["links"]["calls"], json!([{"call": 2, "status": "answered", "by": 4}]));
        assert_eq!(update["links"]["strays"], json!([5]));
        // The question is still open: its link may change, so it comes again.
        assert_eq!(update["links"]["asks"], json!([{"request": 3, "answer": null}]));
        // Estimates of the iterations the new events touch only.
        let iterations: Vec<&Value> = update["tokens"].as_array().unwrap().iter().map(|t| &t[0]).collect();
        assert_eq!(iterations, [&json!(2)]);
    }
}
