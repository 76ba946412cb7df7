//! Events from a Claude Code session file (`~/.claude/projects/<project>/<session>.jsonl`).
//!
//! Each line is one record; `user` and `assistant` lines carry an Anthropic message, split one
//! content block per line by recent versions. Lines form a tree by `uuid` / `parentUuid` (a
//! compaction starts a new root whose `logicalParentUuid` names the line before it): the thread
//! is the conversation ending at the newest leaf, the one Claude Code resumes, with each
//! assistant turn rebuilt from its lines (parallel calls written on sibling branches, and their
//! results, wherever they hang: [`super::claude_code_tree`]). Other conversations are branches
//! the user rewound away from; `isSidechain` lines are subagents' conversations. Versions that
//! wrote no `parentUuid` are read as one chain, in file order, and a root after the first that
//! names no `logicalParentUuid` continues the conversation before it.
//!
//! | line / block | event |
//! |---|---|
//! | `user` text (a string, or `text` blocks) | `message` user |
//! | `user` with `isCompactSummary`, or a `summary` line with a message | `summary` of every iteration before it |
//! | `user` `image` / `document` blocks, with the text blocks beside them | one `message` user of content parts, each media part a blob ([`super::claude_code_media`]) |
//! | `tool_result` block | `tool_result` (`toolCallId`, `result`: its text, or its blocks when not all text; `content` parts when its blocks are text and media); with `is_error`, `error` (recoverable) naming the call |
//! | `assistant` `text` block | `message` assistant, `messageId` = the message's id |
//! | `thinking` block | `turn_block` with a `reasoning` block, payload `{text, signature}` |
//! | `tool_use` block | `tool_call` (`toolName`, `toolCallId`, `args` = `input`), `messageId` |
//! | `redacted_thinking` block | `reasoning` event (`provider: "anthropic"`, `model`, `redactedData`) |
//! | any other block (server tools, media named by a file id) | `claude_code_block` `{block}` |
//! | any other line (`summary` lines that title the session, `system`, `file-history-snapshot`, …) | `claude_code_line` `{line}`, whole |
//!
//! The first event of a `user` or `assistant` line keeps the line's other fields (`type`, `uuid`,
//! `parentUuid`, `sessionId`, `version`, `toolUseResult`, …) and its message's (`model`,
//! `usage`, `id`, …) under `claudeCode`; the line's others get `claudeCode: {uuid}`. Events
//! carry the line's `timestamp` in milliseconds. Empty text blocks make no event. Kept copies of
//! a line name the blob of media bytes a part stored ([`super::session_media`]).

use super::claude_code_media::{self, pieces, Piece};
use super::claude_code_tree::Tree;
use super::host_session::{
    event, events_of, line_event, parts_text, timestamp_ms, tool_outcome, Branch, BranchKind, Iterations, LeftOut,
    NumberedLine, SessionError, SessionImport,
};
use super::session_media::SessionMedia;
use crate::event::{json_type, AgentEvent, REASONING_EVENT_TYPE};
use crate::turns::events::TURN_BLOCK_EVENT_TYPE;
use serde_json::{Map, Value};

/// Event type keeping a content block the thread does not model, as `{block}`.
pub const CLAUDE_CODE_BLOCK_EVENT_TYPE: &str = "claude_code_block";
/// Event field keeping what a line holds besides its content.
pub const CLAUDE_CODE_KEY: &str = "claudeCode";
/// Event type keeping a Claude Code line that makes no event of its own, as `{line}`.
pub const CLAUDE_CODE_LINE_EVENT_TYPE: &str = "claude_code_line";

/// Reads Claude Code lines one at a time, counting iterations across them.
#[derive(Debug, Default)]
pub struct ClaudeCodeLines {
    iterations: Iterations,
    pub(super) session_id: Option<String>,
    /// The blobs media parts made, and the texts they came from.
    pub(super) media: SessionMedia,
}

/// Reads a whole file: the conversation ending at the newest leaf as the thread, through
/// `reader` (which lines make each conversation: [`super::claude_code_tree`]).
pub(super) fn read_session(
    reader: &mut ClaudeCodeLines,
    lines: Vec<NumberedLine>,
    keep_branches: bool,
) -> Result<SessionImport, SessionError> {
    let tree = Tree::of(&lines);
    let line_count = lines.len();
    let (main, others) = tree.conversations();
    let mut left_out = LeftOut::default();
    let mut branches = Vec::new();
    for conversation in others {
        let kind = if conversation.sidechain { BranchKind::Sidechain } else { BranchKind::Branch };
        match kind {
            BranchKind::Branch => left_out.branches += 1,
            BranchKind::Sidechain => left_out.sidechains += 1,
        }
        if !keep_branches {
            continue;
        }
        let mut branch_reader = ClaudeCodeLines { media: reader.media.fresh(), ..ClaudeCodeLines::default() };
        let mut events = Vec::new();
        for (position, (number, line)) in lines.iter().enumerate() {
            if conversation.lines.contains(&position) {
                events.extend(branch_reader.line(*number, line.clone())?);
            }
        }
        reader.media.absorb(branch_reader.media.take_blobs());
        let leaf = tree.ids[conversation.leaf].clone().unwrap_or_default();
        branches.push(Branch { kind, leaf, events });
    }
    let main = main.map(|c| c.lines).unwrap_or_default();
    let mut events = Vec::new();
    for (position, (number, line)) in lines.into_iter().enumerate() {
        if tree.ids[position].is_none() || main.contains(&position) {
            events.extend(reader.line(number, line)?);
        }
    }
    let blobs = reader.media.take_blobs();
    Ok(SessionImport { session_id: reader.session_id.clone(), events, branches, left_out, lines: line_count, blobs })
}

impl ClaudeCodeLines {
    /// A reader whose media parts are stored through `media`.
    pub(super) fn with_media(media: SessionMedia) -> Self {
        ClaudeCodeLines { media, ..ClaudeCodeLines::default() }
    }

    /// The events of one line.
    pub fn line(&mut self, number: usize, line: Map<String, Value>) -> Result<Vec<AgentEvent>, SessionError> {
        if self.session_id.is_none() {
            self.session_id = line.get("sessionId").and_then(Value::as_str).map(str::to_owned);
        }
        let made = match line.get("type").and_then(Value::as_str) {
            Some("user") => self.message(number, line, true)?,
            Some("assistant") => self.message(number, line, false)?,
            // A compaction summary written as its own line (a `summary` line with a message, not
            // a session title).
            Some("summary") if line.contains_key("message") => self.message(number, line, true)?,
            _ => {
                let mut line = line;
                self.media.replace_copies_in(&mut line);
                vec![line_event(CLAUDE_CODE_LINE_EVENT_TYPE, line, self.iterations.now())]
            }
        };
        events_of(number, made)
    }

    fn message(
        &mut self,
        number: usize,
        mut line: Map<String, Value>,
        user: bool,
    ) -> Result<Vec<Map<String, Value>>, SessionError> {
        let fault = |path: &str, reason: String| SessionError::new(number, format!("{path}: {reason}"));
        let mut message = match line.shift_remove("message") {
            Some(Value::Object(message)) => message,
            None => return Err(fault("message", "missing".into())),
            Some(other) => return Err(fault("message", format!("expected an object, found {}", json_type(&other)))),
        };
        let content = match message.shift_remove("content") {
            Some(Value::String(text)) => vec![Value::from(Map::from_iter([
                ("type".to_owned(), Value::from("text")),
                ("text".to_owned(), Value::String(text)),
            ]))],
            Some(Value::Array(blocks)) => blocks,
            None => return Err(fault("message.content", "missing".into())),
            Some(other) => {
                return Err(fault(
                    "message.content",
                    format!("expected a string or a list of blocks, found {}", json_type(&other)),
                ))
            }
        };
        let timestamp = line.get("timestamp").and_then(Value::as_str).and_then(timestamp_ms);
        let message_id = message.get("id").and_then(Value::as_str).map(str::to_owned);
        let model = message.get("model").and_then(Value::as_str).map(str::to_owned);
        let uuid = line.get("uuid").cloned();
        let compact_summary = line.get("isCompactSummary") == Some(&Value::Bool(true))
            || line.get("type").and_then(Value::as_str) == Some("summary");
        if !message.is_empty() {
            line.insert("message".into(), Value::Object(message));
        }
        let mut made = Vec::with_capacity(content.len());
        if user && compact_summary {
            let iteration = self.iterations.user();
            let mut event = event("summary", iteration);
            let summarized = self.iterations.before();
            event.insert("summarizedIterations".into(), Value::Array(summarized));
            event.insert("summary".into(), Value::String(parts_text(&content)));
            made.push(event);
        } else {
            for piece in pieces(content) {
                let (index, block) = match piece {
                    Piece::Block(index, block) => (index, block),
                    Piece::Parts(first, blocks) => {
                        let path_of = |i: usize| format!("message.content[{}]", first + i);
                        let parts = claude_code_media::parts(&blocks, path_of, &mut self.media, number)?;
                        let mut event = event("message", self.iterations.user());
                        event.insert("role".into(), "user".into());
                        event.insert("content".into(), Value::Array(parts));
                        made.push(event);
                        continue;
                    }
                };
                let path = format!("message.content[{index}]");
                let block = match block {
                    Value::Object(block) => block,
                    other => return Err(fault(&path, format!("expected an object, found {}", json_type(&other)))),
                };
                let event = if user {
                    self.user_block(block, &path, number)?
                } else {
                    let message = Said { id: message_id.as_deref(), model: model.as_deref() };
                    self.assistant_block(block, &path, message).map_err(|(p, r)| fault(&p, r))?
                };
                made.extend(event);
            }
        }
        // The kept copy of the line holds no bytes a part has stored as a blob.
        self.media.replace_copies_in(&mut line);
        // The line's other fields go with its first event; the others name the line.
        let mut kept = Some(line);
        for event in &mut made {
            if let Some(ms) = &timestamp {
                event.insert("timestamp".into(), Value::Number(ms.clone()));
            }
            let data = match kept.take() {
                Some(line) => line,
                None => Map::from_iter(uuid.clone().map(|uuid| ("uuid".to_owned(), uuid))),
            };
            event.insert(CLAUDE_CODE_KEY.into(), Value::Object(data));
        }
        if let Some(line) = kept {
            // A line whose content makes no event is kept whole (its content was empty).
            made.push(line_event(CLAUDE_CODE_LINE_EVENT_TYPE, line, self.iterations.now()));
        }
        Ok(made)
    }

    fn user_block(
        &mut self,
        mut block: Map<String, Value>,
        path: &str,
        number: usize,
    ) -> Result<Option<Map<String, Value>>, SessionError> {
        let fault = |(path, reason): (String, String)| SessionError::new(number, format!("{path}: {reason}"));
        match block.get("type").and_then(Value::as_str) {
            Some("text") => Ok(text_of(&block).map(|text| {
                let mut event = event("message", self.iterations.user());
                event.insert("role".into(), "user".into());
                event.insert("content".into(), text.into());
                event
            })),
            Some("tool_result") => {
                let id = required_string(&block, "tool_use_id", path).map_err(fault)?;
                let failed = block.get("is_error") == Some(&Value::Bool(true));
                if let Some(Value::Array(blocks)) = block.get("content").filter(|_| !failed) {
                    if claude_code_media::are_parts(blocks) {
                        let path_of = |i: usize| format!("{path}.content[{i}]");
                        let parts = claude_code_media::parts(blocks, path_of, &mut self.media, number)?;
                        let mut event = event("tool_result", self.iterations.other());
                        event.insert("toolCallId".into(), id.into());
                        event.insert("content".into(), Value::Array(parts));
                        return Ok(Some(event));
                    }
                }
                let result = match block.shift_remove("content") {
                    None | Some(Value::Null) => Value::String(String::new()),
                    Some(Value::Array(parts)) if parts.iter().all(|p| p.get("type") == Some(&"text".into())) => {
                        Value::String(parts_text(&parts))
                    }
                    Some(other) => other,
                };
                let outcome = if failed {
                    Err(match result {
                        Value::String(text) => text,
                        other => crate::js_json::to_string(&other),
                    })
                } else {
                    Ok(result)
                };
                Ok(Some(tool_outcome(id, outcome, self.iterations.other())))
            }
            _ => {
                let iteration = self.iterations.user();
                Ok(Some(self.block_event(block, iteration)))
            }
        }
    }

    fn assistant_block(
        &mut self,
        block: Map<String, Value>,
        path: &str,
        message: Said<'_>,
    ) -> Result<Option<Map<String, Value>>, (String, String)> {
        let iteration = self.iterations.other();
        let with_id = |mut event: Map<String, Value>| {
            if let Some(id) = message.id {
                event.insert("messageId".into(), id.into());
            }
            event
        };
        match block.get("type").and_then(Value::as_str) {
            Some("text") => Ok(text_of(&block).map(|text| {
                let mut event = event("message", iteration);
                event.insert("role".into(), "assistant".into());
                event.insert("content".into(), text.into());
                with_id(event)
            })),
            Some("tool_use") => {
                let id = required_string(&block, "id", path)?;
                let name = required_string(&block, "name", path)?;
                let args = match block.get("input") {
                    Some(Value::Object(input)) => input.clone(),
                    None | Some(Value::Null) => Map::new(),
                    Some(other) => Map::from_iter([("input".to_owned(), other.clone())]),
                };
                let mut event = event("tool_call", iteration);
                event.insert("toolName".into(), name.into());
                event.insert("toolCallId".into(), id.into());
                event.insert("args".into(), Value::Object(args));
                Ok(Some(with_id(event)))
            }
            Some("thinking") => {
                let mut payload = Map::new();
                payload.insert("text".into(), block.get("thinking").cloned().unwrap_or_else(|| "".into()));
                if let Some(signature) = block.get("signature") {
                    payload.insert("signature".into(), signature.clone());
                }
                let mut reasoning = Map::new();
                reasoning.insert("kind".into(), "reasoning".into());
                reasoning.insert("payload".into(), Value::Object(payload));
                let mut event = event(TURN_BLOCK_EVENT_TYPE, iteration);
                event.insert("block".into(), Value::Object(reasoning));
                Ok(Some(event))
            }
            // Thinking the API gave back encrypted: a reasoning event the anthropic render
            // replays as the `redacted_thinking` block it was.
            Some("redacted_thinking") if block.get("data").is_some_and(Value::is_string) => {
                let mut event = event(REASONING_EVENT_TYPE, iteration);
                event.insert("provider".into(), "anthropic".into());
                if let Some(model) = message.model {
                    event.insert("model".into(), model.into());
                }
                event.insert("redactedData".into(), block.get("data").cloned().unwrap_or_default());
                Ok(Some(with_id(event)))
            }
            _ => Ok(Some(self.block_event(block, iteration))),
        }
    }

    /// A block kept whole, without bytes a part of this session has stored as a blob.
    fn block_event(&self, block: Map<String, Value>, iteration: u64) -> Map<String, Value> {
        let mut block = Value::Object(block);
        self.media.replace_copies(&mut block);
        let mut event = event(CLAUDE_CODE_BLOCK_EVENT_TYPE, iteration);
        event.insert("block".into(), block);
        event
    }
}

/// What an assistant line's message says of all its blocks.
#[derive(Clone, Copy)]
struct Said<'a> {
    id: Option<&'a str>,
    model: Option<&'a str>,
}

/// A text block's text, unless empty (an empty text block is no message).
fn text_of(block: &Map<String, Value>) -> Option<String> {
    block.get("text").and_then(Value::as_str).filter(|text| !text.trim().is_empty()).map(str::to_owned)
}

fn required_string(block: &Map<String, Value>, key: &str, path: &str) -> Result<String, (String, String)> {
    match block.get(key) {
        Some(Value::String(text)) => Ok(text.clone()),
        None => Err((format!("{path}.{key}"), "missing".into())),
        Some(other) => Err((format!("{path}.{key}"), format!("expected a string, found {}", json_type(other)))),
    }
}

#[cfg(test)]
mod tests {
    use super::super::host_session::BranchKind;
    use super::super::session_reader::{HostFormat, SessionReader};
    use serde_json::{json, Value};

    fn read(lines: &[Value], keep_branches: bool) -> super::SessionImport {
        let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
        SessionReader::new(HostFormat::ClaudeCode).read_all(&text, keep_branches).unwrap()
    }

    fn user(uuid: &str, parent: Option<&str>, content: Value) -> Value {
        json!({"type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": "s", "message": {"role": "user", "content": content}})
    }

    fn assistant(uuid: &str, parent: &str, id: &str, content: Value) -> Value {
        json!({"type": "assistant", "uuid": uuid, "parentUuid": parent, "message": {"id": id, "role": "assistant", "model": "m", "content": content, "usage": {"output_tokens": 3}}})
    }

    /// Each event's fields without the kept line data.
    fn bare(import: &super::SessionImport) -> Vec<Value> {
        import
            .events
            .iter()
            .map(|e| {
                let mut fields = e.fields().clone();
                fields.shift_remove(super::CLAUDE_CODE_KEY);
                Value::Object(fields)
            })
            .collect()
    }

    #[test]
    fn blocks_become_messages_calls_results_errors_and_reasoning() {
        let import = read(
            &[
                json!({"type": "summary", "summary": "A title", "leafUuid": "a2"}),
                user("u1", None, json!("Read it")),
                assistant(
                    "a1",
                    "u1",
                    "msg_1",
                    json!([{"type": "thinking", "thinking": "hm", "signature": "sig"}, {"type": "text", "text": "Reading."}, {"type": "tool_use", "id": "t1", "name": "Read", "input": {"path": "a"}}]),
                ),
                user(
                    "u2",
                    Some("a1"),
                    json!([{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "no such file"}], "is_error": true}]),
                ),
                assistant(
                    "a2",
                    "u2",
                    "msg_2",
                    json!([{"type": "text", "text": ""}, {"type": "tool_use", "id": "t2", "name": "Ls", "input": {}}]),
                ),
                user(
                    "u3",
                    Some("a2"),
                    json!([{"type": "tool_result", "tool_use_id": "t2", "content": "a.txt"}, {"type": "text", "text": "Go on"}]),
                ),
            ],
            false,
        );
        assert_eq!(import.session_id.as_deref(), Some("s"));
        assert_eq!(
            bare(&import),
            vec![
                json!({"type": "claude_code_line", "line": {"type": "summary", "summary": "A title", "leafUuid": "a2"}, "iteration": 0}),
                json!({"type": "message", "iteration": 0, "role": "user", "content": "Read it"}),
                json!({"type": "turn_block", "iteration": 0, "block": {"kind": "reasoning", "payload": {"text": "hm", "signature": "sig"}}}),
                json!({"type": "message", "iteration": 0, "role": "assistant", "content": "Reading.", "messageId": "msg_1"}),
                json!({"type": "tool_call", "iteration": 0, "toolName": "Read", "toolCallId": "t1", "args": {"path": "a"}, "messageId": "msg_1"}),
                json!({"type": "error", "iteration": 0, "error": "no such file", "recoverable": true, "toolCallId": "t1"}),
                json!({"type": "tool_call", "iteration": 0, "toolName": "Ls", "toolCallId": "t2", "args": {}, "messageId": "msg_2"}),
                json!({"type": "tool_result", "iteration": 0, "toolCallId": "t2", "result": "a.txt"}),
                json!({"type": "message", "iteration": 1, "role": "user", "content": "Go on"}),
            ]
        );
        // The line's other fields, the message's model and usage among them, go with its first event.
        let kept = &import.events[2].fields()[super::CLAUDE_CODE_KEY];
        assert_eq!(
            kept["message"],
            json!({"id": "msg_1", "role": "assistant", "model": "m", "usage": {"output_tokens": 3}})
        );
        assert_eq!(kept["uuid"], json!("a1"));
        assert_eq!(import.events[3].fields()[super::CLAUDE_CODE_KEY], json!({"uuid": "a1"}));
    }

    #[test]
    fn the_thread_follows_the_newest_leaf_and_keeps_branches_apart() {
        let lines = [
            user("u1", None, json!("Start")),
            assistant("a1", "u1", "m1", json!([{"type": "text", "text": "Ready"}])),
            user("b1", Some("a1"), json!("First try")),
            assistant("b1a", "b1", "m2", json!([{"type": "text", "text": "First answer"}])),
            user("b2", Some("a1"), json!("Second try")),
            json!({"type": "user", "uuid": "s1", "parentUuid": null, "isSidechain": true, "message": {"role": "user", "content": "Subtask"}}),
            assistant("b2a", "b2", "m3", json!([{"type": "text", "text": "Second answer"}])),
        ];
        let contents = |events: &[crate::AgentEvent]| -> Vec<String> {
            events.iter().filter_map(|e| e.fields().get("content").and_then(Value::as_str).map(str::to_owned)).collect()
        };
        let import = read(&lines, false);
        assert_eq!(contents(&import.events), ["Start", "Ready", "Second try", "Second answer"]);
        assert_eq!((import.left_out.branches, import.left_out.sidechains), (1, 1));
        assert!(import.branches.is_empty());
        let import = read(&lines, true);
        let kinds: Vec<_> = import.branches.iter().map(|b| (b.kind, b.leaf.as_str(), contents(&b.events))).collect();
        assert_eq!(
            kinds,
            [
                (
                    BranchKind::Branch,
                    "b1a",
                    vec!["Start".to_owned(), "Ready".into(), "First try".into(), "First answer".into()]
                ),
                (BranchKind::Sidechain, "s1", vec!["Subtask".to_owned()]),
            ]
        );
    }

    #[test]
    fn a_compaction_continues_the_chain_and_becomes_a_summary() {
        let import = read(
            &[
                user("u1", None, json!("One")),
                assistant("a1", "u1", "m1", json!([{"type": "text", "text": "Two"}])),
                json!({"type": "system", "subtype": "compact_boundary", "uuid": "cb", "parentUuid": null, "logicalParentUuid": "a1"}),
                json!({"type": "user", "uuid": "cs", "parentUuid": "cb", "isCompactSummary": true, "message": {"role": "user", "content": "Summary: one, two."}}),
                user("u2", Some("cs"), json!("Three")),
            ],
            false,
        );
        let bare = bare(&import);
        assert_eq!(bare.len(), 5);
        assert_eq!(
            bare[3],
            json!({"type": "summary", "iteration": 1, "summarizedIterations": [0], "summary": "Summary: one, two."})
        );
        assert_eq!(bare[4], json!({"type": "message", "iteration": 1, "role": "user", "content": "Three"}));
        assert_eq!(import.left_out.branches, 0);
    }

    #[test]
    fn a_second_root_continues_the_conversation_a_sidechain_root_does_not() {
        let import = read(
            &[
                user("u1", None, json!("One")),
                user("u2", None, json!("Two")),
                json!({"type": "user", "uuid": "s1", "parentUuid": null, "isSidechain": true, "message": {"role": "user", "content": "Sub"}}),
                user("u3", None, json!("Three")),
            ],
            false,
        );
        let contents: Vec<&str> = import.events.iter().filter_map(|e| e.fields()["content"].as_str()).collect();
        assert_eq!(contents, ["One", "Two", "Three"]);
        assert_eq!((import.left_out.branches, import.left_out.sidechains), (0, 1));
    }

    #[test]
    fn a_line_without_its_message_is_named() {
        let text = "{\"type\":\"user\",\"uuid\":\"u1\",\"parentUuid\":null,\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n{\"type\":\"assistant\",\"uuid\":\"a1\",\"parentUuid\":\"u1\",\"message\":{\"content\":[{\"type\":\"tool_use\",\"name\":\"x\"}]}}\n";
        let error = SessionReader::new(HostFormat::ClaudeCode).read_all(text, false).unwrap_err();
        assert_eq!(error.to_string(), "line 2: message.content[0].id: missing");
        let error = SessionReader::new(HostFormat::ClaudeCode)
            .read_all("{\"type\":\"user\",\"uuid\":\"u\"}\n", false)
            .unwrap_err();
        assert_eq!(error.to_string(), "line 1: message: missing");
    }

    #[test]
    fn documents_of_every_source_become_parts_and_file_ids_stay_blocks() {
        let text_source = json!({"type": "document", "title": "notes.txt", "source": {"type": "text", "media_type": "text/plain", "data": "ship </thread> on Friday"}});
        let url_source = json!({"type": "document", "source": {"type": "url", "url": "https://example.com/spec.pdf"}});
        let file_id = json!({"type": "image", "source": {"type": "file", "file_id": "file_011"}});
        let import = read(
            &[
                user("u1", None, json!([{"type": "text", "text": "read these"}, text_source, url_source])),
                user("u2", Some("u1"), json!([file_id])),
            ],
            false,
        );
        let parts = &import.events[0].fields()["content"];
        assert_eq!(parts[0], json!({"type": "text", "text": "read these"}));
        assert_eq!(
            (&parts[1]["type"], &parts[1]["mediaType"], &parts[1]["filename"], &parts[1]["size"]),
            (&json!("file"), &json!("text/plain"), &json!("notes.txt"), &json!(24))
        );
        assert_eq!(parts[2], json!({"type": "file", "url": "https://example.com/spec.pdf"}));
        assert_eq!(import.blobs.len(), 1);
        assert_eq!(&import.blobs[0].bytes[..], b"ship </thread> on Friday");
        assert_eq!(import.events[1].event_type(), super::CLAUDE_CODE_BLOCK_EVENT_TYPE);
    }
}
