//! The thread list: every thread of the store, newest first, each with its last event in a line.

use crate::event::AgentEvent;
use crate::store::{Store, StoreResult, ThreadRecord};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Mutex;

/// How much of the last event the list shows.
const LINE_CHARS: usize = 160;

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadRow {
    pub id: String,
    /// Milliseconds since the Unix epoch.
    pub updated_at: u64,
    pub created_at: u64,
    pub event_count: u64,
    pub version: u64,
    /// The last event in one line (empty for a thread without events).
    pub last: String,
}

/// Builds the list; each thread's last event is read again only when its version moved on.
#[derive(Default)]
pub struct ThreadList {
    last_lines: Mutex<HashMap<String, (u64, String)>>,
}

impl ThreadList {
    pub async fn rows(&self, store: &dyn Store) -> StoreResult<Vec<ThreadRow>> {
        let records = store.list().await?;
        let mut rows = Vec::with_capacity(records.len());
        let mut fresh = HashMap::with_capacity(records.len());
        for record in records {
            let cached = self.cached(&record);
            let last = match cached {
                Some(line) => line,
                None => last_line_of(store, &record).await,
            };
            fresh.insert(record.thread_id.clone(), (record.version, last.clone()));
            rows.push(ThreadRow {
                id: record.thread_id,
                updated_at: record.updated_at,
                created_at: record.created_at,
                event_count: record.event_count,
                version: record.version,
                last,
            });
        }
        // Threads deleted since leave the cache.
        *self.last_lines.lock().unwrap_or_else(|p| p.into_inner()) = fresh;
        rows.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then_with(|| a.id.cmp(&b.id)));
        Ok(rows)
    }

    fn cached(&self, record: &ThreadRecord) -> Option<String> {
        let lines = self.last_lines.lock().unwrap_or_else(|p| p.into_inner());
        lines.get(&record.thread_id).filter(|(version, _)| *version == record.version).map(|(_, line)| line.clone())
    }
}

async fn last_line_of(store: &dyn Store, record: &ThreadRecord) -> String {
    if record.event_count == 0 {
        return String::new();
    }
    match store.events_from(&record.thread_id, record.event_count - 1).await {
        Ok((_, log)) => log.parse(log.len().saturating_sub(1)).map(|e| one_line(&e)).unwrap_or_default(),
        // Deleted meanwhile, or the store failed: the next change tries again.
        Err(_) => String::new(),
    }
}

/// `type role/tool: text`, whitespace folded, cut to [`LINE_CHARS`].
pub fn one_line(event: &AgentEvent) -> String {
    let fields = event.fields();
    let mut line = fields.get("type").and_then(Value::as_str).unwrap_or("event").to_owned();
    for key in ["role", "toolName"] {
        if let Some(Value::String(text)) = fields.get(key) {
            line.push(' ');
            line.push_str(text);
        }
    }
    let body = ["content", "args", "result", "error", "question", "response", "summary"]
        .iter()
        .find_map(|key| fields.get(*key));
    if let Some(body) = body {
        line.push_str(": ");
        match body {
            Value::String(text) => line.push_str(text),
            other => line.push_str(&other.to_string()),
        }
    }
    let folded: Vec<&str> = line.split_whitespace().collect();
    let folded = folded.join(" ");
    match folded.char_indices().nth(LINE_CHARS) {
        Some((cut, _)) => format!("{}…", &folded[..cut]),
        None => folded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_names_the_event_and_folds_its_text() {
        let event = AgentEvent::from_value(
            serde_json::json!({
                "type": "tool_call", "toolName": "search", "toolCallId": "c1", "args": {"q": "a\nb"}, "iteration": 1
            }),
            "event",
        )
        .unwrap();
        assert_eq!(one_line(&event), r#"tool_call search: {"q":"a\nb"}"#);
        let long = AgentEvent::from_value(
            serde_json::json!({"type": "message", "role": "user", "content": "x ".repeat(200), "iteration": 0}),
            "event",
        )
        .unwrap();
        let line = one_line(&long);
        assert_eq!(line.chars().count(), LINE_CHARS + 1);
        assert!(line.starts_with("message user: x x") && line.ends_with('…'));
    }
}
