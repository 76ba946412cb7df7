//! Events from a Codex CLI rollout file (`~/.codex/sessions/…/rollout-….jsonl`).
//!
//! Each line is `{timestamp, type, payload}`; `response_item` payloads are OpenAI Responses
//! items, the conversation itself. (Early versions wrote the items as lines of their own after a
//! first line holding the session's id; those are read the same way.) `event_msg` lines repeat
//! the conversation for the terminal and add token counts; they are kept whole, as is every
//! line the thread does not model.
//!
//! | line / item | event |
//! |---|---|
//! | `message` user | `message` user (with `input_image` parts, its content parts: a data URL stored as a blob, an http(s) URL kept) |
//! | `message` developer / system | `message` system |
//! | `message` assistant | `message` assistant (its `output_text` parts joined), `messageId` = the item's id |
//! | `function_call` | `tool_call` (`toolName`, `toolCallId` = `call_id`, `args` = `arguments` parsed) |
//! | `custom_tool_call` | `tool_call`, `args` = `{input}` |
//! | `local_shell_call` | `tool_call` named `local_shell`, `args` = its `action` |
//! | `function_call_output`, `custom_tool_call_output` | `tool_result` (`result` = `output`; an `output` list with images, `content` parts); an output `{content, success: false}` is an `error` (recoverable) naming the call |
//! | `reasoning` | `turn_block` with a `reasoning` block, payload `{item_id?, summary, encrypted_content?, text}` (the summary's text) |
//! | `compacted` line | `summary` of every iteration before it (`message`) |
//! | any other line or item (`session_meta`, `turn_context`, `event_msg`, web searches, …) | `codex_line` `{line}`, whole |
//!
//! Events made from an item keep it, verbatim, in `responsesItem` (as `responses/toEvents` with
//! `keepItems` does; a second event of the item gets `null`), with the model of the turn
//! (`turn_context`'s `model`) in `model`, and the line's `timestamp` in milliseconds.

use super::from_messages::KEPT_ITEM_KEY;
use super::host_session::{
    event, events_of, line_event, parts_text, timestamp_ms, tool_outcome, Iterations, NumberedLine, SessionError,
    SessionImport,
};
use super::media_blocks::{media_parts, Form};
use super::session_media::{LineFields, SessionMedia};
use crate::event::{json_type, AgentEvent};
use crate::turns::events::TURN_BLOCK_EVENT_TYPE;
use serde_json::{Map, Value};

/// Event type keeping a Codex rollout line that makes no event of its own, as `{line}`.
pub const CODEX_LINE_EVENT_TYPE: &str = "codex_line";

/// Reads Codex rollout lines one at a time, keeping the turn's model and the iteration count.
#[derive(Debug, Default)]
pub struct CodexLines {
    iterations: Iterations,
    session_id: Option<String>,
    model: Option<String>,
    /// The blobs media parts made, and the texts they came from.
    pub(super) media: SessionMedia,
}

/// Item types read as events; any other is kept whole with its line.
const MODELLED_ITEMS: &[&str] = &[
    "message",
    "function_call",
    "custom_tool_call",
    "local_shell_call",
    "function_call_output",
    "custom_tool_call_output",
    "reasoning",
];

impl CodexLines {
    /// A reader whose media parts are stored through `media`.
    pub(super) fn with_media(media: SessionMedia) -> Self {
        CodexLines { media, ..CodexLines::default() }
    }

    pub(super) fn read_session(&mut self, lines: Vec<NumberedLine>) -> Result<SessionImport, SessionError> {
        let line_count = lines.len();
        let mut events = Vec::new();
        for (number, line) in lines {
            events.extend(self.line(number, line)?);
        }
        let blobs = self.media.take_blobs();
        Ok(SessionImport {
            session_id: self.session_id.clone(),
            events,
            lines: line_count,
            blobs,
            ..SessionImport::default()
        })
    }

    /// The events of one line.
    pub fn line(&mut self, number: usize, line: Map<String, Value>) -> Result<Vec<AgentEvent>, SessionError> {
        let fault = |path: &str, reason: String| SessionError::new(number, format!("{path}: {reason}"));
        let line_type = line.get("type").and_then(Value::as_str).unwrap_or_default().to_owned();
        let payload = line.get("payload").and_then(Value::as_object);
        match (line_type.as_str(), payload) {
            ("session_meta", Some(meta)) if self.session_id.is_none() => {
                self.session_id = meta.get("id").and_then(Value::as_str).map(str::to_owned);
            }
            ("turn_context", Some(context)) => {
                if let Some(model) = context.get("model").and_then(Value::as_str) {
                    self.model = Some(model.to_owned());
                }
            }
            // Early versions: a first line with the session's id, no type.
            ("", None) if self.session_id.is_none() && line.contains_key("id") => {
                self.session_id = line.get("id").and_then(Value::as_str).map(str::to_owned);
            }
            _ => {}
        }
        let timestamp = line.get("timestamp").and_then(Value::as_str).and_then(timestamp_ms);
        let made = match (line_type.as_str(), payload) {
            ("response_item", Some(item)) if modelled(item) => {
                let item = item.clone();
                self.item(&item, "payload", timestamp).map_err(|(p, r)| fault(&p, r))?
            }
            ("response_item", None) => return Err(fault("payload", "missing or not an object".into())),
            // Early versions: the items themselves.
            (_, None) if line.contains_key("type") && modelled(&line) => {
                let item = line.clone();
                self.item(&item, "", timestamp).map_err(|(p, r)| fault(&p, r))?
            }
            ("compacted", Some(compacted)) => {
                let summary = match compacted.get("message") {
                    Some(Value::String(text)) => text.clone(),
                    None => return Err(fault("payload.message", "missing".into())),
                    Some(other) => {
                        return Err(fault("payload.message", format!("expected a string, found {}", json_type(other))))
                    }
                };
                let iteration = self.iterations.user();
                let mut event = event("summary", iteration);
                let summarized = self.iterations.before();
                event.insert("summarizedIterations".into(), Value::Array(summarized));
                event.insert("summary".into(), summary.into());
                // The replacement history and the rest of the line stay with the summary.
                event.insert("codex".into(), Value::Object(line));
                if let Some(ms) = timestamp {
                    event.insert("timestamp".into(), ms.into());
                }
                vec![event]
            }
            _ => {
                let mut line = line;
                self.media.replace_copies_in(&mut line);
                vec![line_event(CODEX_LINE_EVENT_TYPE, line, self.iterations.now())]
            }
        };
        events_of(number, made)
    }

    /// The events of a Responses item; `prefix` is its path in the line.
    fn item(
        &mut self,
        item: &Map<String, Value>,
        prefix: &str,
        timestamp: Option<serde_json::Number>,
    ) -> Result<Vec<Map<String, Value>>, (String, String)> {
        let path = |key: &str| if prefix.is_empty() { key.to_owned() } else { format!("{prefix}.{key}") };
        let string = |key: &str| -> Result<String, (String, String)> {
            match item.get(key) {
                Some(Value::String(text)) => Ok(text.clone()),
                None => Err((path(key), "missing".into())),
                Some(other) => Err((path(key), format!("expected a string, found {}", json_type(other)))),
            }
        };
        let mut made = Vec::with_capacity(1);
        match item.get("type").and_then(Value::as_str).unwrap_or_default() {
            "message" => {
                let content = match item.get("content") {
                    Some(Value::String(text)) => Value::String(text.clone()),
                    Some(Value::Array(parts)) => match self.media_parts(parts, &path("content"))? {
                        Some(parts) => Value::Array(parts),
                        None => Value::String(parts_text(parts)),
                    },
                    None => return Err((path("content"), "missing".into())),
                    Some(other) => {
                        return Err((
                            path("content"),
                            format!("expected a string or parts, found {}", json_type(other)),
                        ))
                    }
                };
                let (role, iteration) = match string("role")?.as_str() {
                    "user" => ("user", self.iterations.user()),
                    "developer" | "system" => ("system", self.iterations.now()),
                    "assistant" => ("assistant", self.iterations.other()),
                    other => {
                        return Err((
                            path("role"),
                            format!("expected user, developer, system or assistant, found {other:?}"),
                        ))
                    }
                };
                let mut event = event("message", iteration);
                event.insert("role".into(), role.into());
                event.insert("content".into(), content);
                if let Some(id) = item.get("id").filter(|id| id.is_string()) {
                    event.insert("messageId".into(), id.clone());
                }
                made.push(event);
            }
            kind @ ("function_call" | "custom_tool_call" | "local_shell_call") => {
                let id = match (kind, item.get("call_id")) {
                    // A local shell call may carry only its item id.
                    ("local_shell_call", None | Some(Value::Null)) => string("id")?,
                    _ => string("call_id")?,
                };
                let (name, args) = match kind {
                    "function_call" => (string("name")?, arguments(item.get("arguments"))),
                    "custom_tool_call" => {
                        (string("name")?, Map::from_iter([("input".to_owned(), item_field(item, "input"))]))
                    }
                    _ => (
                        "local_shell".to_owned(),
                        match item.get("action") {
                            Some(Value::Object(action)) => action.clone(),
                            _ => return Err((path("action"), "missing or not an object".into())),
                        },
                    ),
                };
                let mut event = event("tool_call", self.iterations.other());
                event.insert("toolName".into(), name.into());
                event.insert("toolCallId".into(), id.into());
                event.insert("args".into(), Value::Object(args));
                made.push(event);
            }
            "function_call_output" | "custom_tool_call_output" => {
                let id = string("call_id")?;
                let output = item.get("output").cloned().ok_or_else(|| (path("output"), "missing".to_owned()))?;
                if let Value::Array(parts) = &output {
                    if let Some(parts) = self.media_parts(parts, &path("output"))? {
                        let mut event = event("tool_result", self.iterations.other());
                        event.insert("toolCallId".into(), id.into());
                        event.insert("content".into(), Value::Array(parts));
                        made.push(event);
                        return Ok(self.stamped(made, item, timestamp));
                    }
                }
                let failed = output.get("success") == Some(&Value::Bool(false));
                let outcome = if failed {
                    Err(match output.get("content") {
                        Some(Value::String(text)) => text.clone(),
                        _ => crate::js_json::to_string(&output),
                    })
                } else {
                    Ok(match output {
                        Value::Object(mut fields)
                            if fields.len() <= 2 && fields.get("content").is_some_and(Value::is_string) =>
                        {
                            fields.shift_remove("content").unwrap_or_default()
                        }
                        Value::Array(parts) => Value::String(parts_text(&parts)),
                        other => other,
                    })
                };
                let event = tool_outcome(id, outcome, self.iterations.other());
                made.push(event);
            }
            _ => {
                // reasoning
                let summary = item.get("summary").cloned().unwrap_or_else(|| Value::Array(Vec::new()));
                let mut payload = Map::new();
                if let Some(encrypted) = item.get("encrypted_content").filter(|v| !v.is_null()) {
                    payload.insert("encrypted_content".into(), encrypted.clone());
                }
                if let Some(id) = item.get("id").filter(|v| v.is_string()) {
                    payload.insert("item_id".into(), id.clone());
                }
                let text = match &summary {
                    Value::Array(parts) => parts_text(parts),
                    _ => String::new(),
                };
                payload.insert("summary".into(), summary);
                payload.insert("text".into(), text.into());
                let mut block = Map::new();
                block.insert("kind".into(), "reasoning".into());
                block.insert("payload".into(), Value::Object(payload));
                let mut event = event(TURN_BLOCK_EVENT_TYPE, self.iterations.other());
                event.insert("block".into(), Value::Object(block));
                made.push(event);
            }
        }
        Ok(self.stamped(made, item, timestamp))
    }

    /// Events of `item` with its timestamp, the turn's model and the item kept (without bytes
    /// a part has stored as a blob).
    fn stamped(
        &self,
        mut made: Vec<Map<String, Value>>,
        item: &Map<String, Value>,
        timestamp: Option<serde_json::Number>,
    ) -> Vec<Map<String, Value>> {
        let mut kept = Value::Object(item.clone());
        self.media.replace_copies(&mut kept);
        for event in &mut made {
            if let Some(ms) = &timestamp {
                event.insert("timestamp".into(), Value::Number(ms.clone()));
            }
            if let Some(model) = &self.model {
                event.insert("model".into(), model.clone().into());
            }
            event.insert(KEPT_ITEM_KEY.into(), kept.clone());
        }
        made
    }

    /// Content parts of a list of Responses content items that holds media (`input_image` as a
    /// data URL, stored as a blob, or an http(s) URL; `input_file`), `None` for text alone.
    fn media_parts(&mut self, items: &[Value], path: &str) -> Result<Option<Vec<Value>>, (String, String)> {
        let parts = media_parts(items, Form::Responses, path).map_err(|e| split_error(&e.to_string()))?;
        let Some(mut parts) = parts else { return Ok(None) };
        for (i, part) in parts.iter_mut().enumerate() {
            let fields = match part.get("type").and_then(Value::as_str) {
                Some("file") => FILE_FIELDS,
                _ => IMAGE_FIELDS,
            };
            self.media.ingest(part, &format!("{path}[{i}]"), fields)?;
        }
        Ok(Some(parts))
    }
}

/// Where an `input_image`'s and an `input_file`'s bytes and media type are.
const IMAGE_FIELDS: LineFields = LineFields { data: "image_url", media_type: "image_url" };
const FILE_FIELDS: LineFields = LineFields { data: "file_data", media_type: "file_data" };

/// A conversion's `path: reason` as the two.
fn split_error(error: &str) -> (String, String) {
    match error.split_once(": ") {
        Some((path, reason)) => (path.to_owned(), reason.to_owned()),
        None => (String::new(), error.to_owned()),
    }
}

fn modelled(item: &Map<String, Value>) -> bool {
    item.get("type").and_then(Value::as_str).is_some_and(|t| MODELLED_ITEMS.contains(&t))
}

fn item_field(item: &Map<String, Value>, key: &str) -> Value {
    item.get(key).cloned().unwrap_or(Value::Null)
}

/// A call's arguments: JSON text parsed; anything that is not an object is kept under `input`.
fn arguments(arguments: Option<&Value>) -> Map<String, Value> {
    let value = match arguments {
        None | Some(Value::Null) => return Map::new(),
        Some(Value::String(text)) => serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone())),
        Some(other) => other.clone(),
    };
    match value {
        Value::Object(args) => args,
        other => Map::from_iter([("input".to_owned(), other)]),
    }
}

#[cfg(test)]
mod tests {
    use super::super::session_reader::{HostFormat, SessionReader};
    use serde_json::{json, Value};

    fn read(lines: &[Value]) -> Vec<Value> {
        let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
        let import = SessionReader::new(HostFormat::Codex).read_all(&text, false).unwrap();
        import
            .events
            .into_iter()
            .map(|e| {
                let mut fields = e.into_fields();
                fields.shift_remove(super::KEPT_ITEM_KEY);
                Value::Object(fields)
            })
            .collect()
    }

    fn item(payload: Value) -> Value {
        json!({"timestamp": "1970-01-01T00:00:01Z", "type": "response_item", "payload": payload})
    }

    #[test]
    fn items_become_events_and_other_lines_are_kept() {
        let events = read(&[
            json!({"type": "session_meta", "payload": {"id": "s1", "cli_version": "0.77.0"}}),
            json!({"type": "turn_context", "payload": {"model": "gpt-5"}}),
            item(json!({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Rules"}]})),
            item(json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "List"}]})),
            item(
                json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": "Plan"}], "encrypted_content": null}),
            ),
            item(
                json!({"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"ls\"]}", "call_id": "c1"}),
            ),
            item(json!({"type": "function_call_output", "call_id": "c1", "output": "a.txt"})),
            item(json!({"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin", "call_id": "c2"})),
            item(
                json!({"type": "custom_tool_call_output", "call_id": "c2", "output": {"content": "denied", "success": false}}),
            ),
            item(
                json!({"type": "message", "role": "assistant", "id": "m1", "content": [{"type": "output_text", "text": "Done"}]}),
            ),
            json!({"type": "event_msg", "payload": {"type": "token_count", "info": null}}),
            json!({"type": "compacted", "payload": {"message": "Listed files."}}),
        ]);
        let at = |t: i64, mut v: Value| {
            v["timestamp"] = json!(t);
            v["model"] = json!("gpt-5");
            v
        };
        assert_eq!(
            events,
            vec![
                json!({"type": "codex_line", "line": {"type": "session_meta", "payload": {"id": "s1", "cli_version": "0.77.0"}}, "iteration": 0}),
                json!({"type": "codex_line", "line": {"type": "turn_context", "payload": {"model": "gpt-5"}}, "iteration": 0}),
                at(1000, json!({"type": "message", "iteration": 0, "role": "system", "content": "Rules"})),
                at(1000, json!({"type": "message", "iteration": 0, "role": "user", "content": "List"})),
                at(
                    1000,
                    json!({"type": "turn_block", "iteration": 0, "block": {"kind": "reasoning", "payload": {"summary": [{"type": "summary_text", "text": "Plan"}], "text": "Plan"}}})
                ),
                at(
                    1000,
                    json!({"type": "tool_call", "iteration": 0, "toolName": "shell", "toolCallId": "c1", "args": {"command": ["ls"]}})
                ),
                at(1000, json!({"type": "tool_result", "iteration": 0, "toolCallId": "c1", "result": "a.txt"})),
                at(
                    1000,
                    json!({"type": "tool_call", "iteration": 0, "toolName": "apply_patch", "toolCallId": "c2", "args": {"input": "*** Begin"}})
                ),
                at(
                    1000,
                    json!({"type": "error", "iteration": 0, "error": "denied", "recoverable": true, "toolCallId": "c2"})
                ),
                at(
                    1000,
                    json!({"type": "message", "iteration": 0, "role": "assistant", "content": "Done", "messageId": "m1"})
                ),
                json!({"type": "codex_line", "line": {"type": "event_msg", "payload": {"type": "token_count", "info": null}}, "iteration": 0}),
                json!({"type": "summary", "iteration": 1, "summarizedIterations": [0], "summary": "Listed files.", "codex": {"type": "compacted", "payload": {"message": "Listed files."}}}),
            ]
        );
    }

    #[test]
    fn early_rollouts_hold_items_as_lines() {
        let events = read(&[
            json!({"id": "s0", "timestamp": "2025-04-01T00:00:00Z", "instructions": null}),
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}]}),
            json!({"record_type": "state"}),
            json!({"type": "local_shell_call", "call_id": "c1", "status": "completed", "action": {"type": "exec", "command": ["ls"]}}),
        ]);
        assert_eq!(events.len(), 4);
        assert_eq!(events[1], json!({"type": "message", "iteration": 0, "role": "user", "content": "Hi"}));
        assert_eq!(events[3]["toolName"], json!("local_shell"));
        assert_eq!(events[3]["args"], json!({"type": "exec", "command": ["ls"]}));
    }

    #[test]
    fn a_call_without_its_id_is_named() {
        let text = format!("{}\n", item(json!({"type": "function_call", "name": "shell", "arguments": "{}"})));
        let error = SessionReader::new(HostFormat::Codex).read_all(&text, false).unwrap_err();
        assert_eq!(error.to_string(), "line 1: payload.call_id: missing");
    }
}
