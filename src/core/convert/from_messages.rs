//! Events from LangChain stored messages: the inverse of the standard-mode rendering.
//!
//! Each message becomes the events the renderer would have made it from:
//!
//! | message | events |
//! |---|---|
//! | human | `message` user, or what its label says: `[System]: ` → `message` system, `[Human Response]: ` → `human_input_received`, `[Error (recoverable)]: ` / `[Error]: ` → `error`, `[Tool Result for ID]: ` → `tool_result` |
//! | ai | `message` assistant when it has text (or no calls), then one `tool_call` per call |
//! | system | `message` system |
//! | tool | `tool_result`; with `status: "error"`, an `error` naming the call |
//!
//! What the renderer made up is not turned back into events: the opening human message placed
//! before a conversation that opens with the assistant, and the `[Tool call not completed]`
//! answers of calls that got none. A not-completed answer that says the run stopped to ask for
//! human input gives back that `human_input_requested`, placed where it leaves the same calls
//! unanswered for the same reason, so rendering the events again gives the same messages.
//!
//! Every event keeps what the host gave beside the text and calls of the message it came from
//! (`messageId`, `messageName`, `messageFields`), which the `messages` render gives back.

use crate::event::{AgentEvent, EventError};
use crate::messages::{Content, MessageType, StoredMessage, ToolCall, OPENING_TEXT};
use serde_json::{Map, Number, Value};
use std::collections::HashMap;

use crate::messages::labels::{
    ERROR_LABEL, HUMAN_RESPONSE_LABEL, NON_RECOVERABLE_LABEL, NOT_COMPLETED_LABEL, RECOVERABLE_LABEL,
    STOPPED_FOR_INPUT, STRAY_RESULT_LABEL, SYSTEM_LABEL,
};

/// What every converted event carries besides its own fields.
#[derive(Clone, Debug, PartialEq)]
pub struct EventStamp {
    pub iteration: Number,
    /// Set on every event when given; events need none.
    pub timestamp: Option<Number>,
}

impl Default for EventStamp {
    fn default() -> Self {
        EventStamp { iteration: Number::from(0), timestamp: None }
    }
}

/// One entry of the conversation to convert: a message, or an event already made (a reasoning
/// block of the Responses form), kept in its place. `items` are the Responses items it was read
/// from, when they are to be kept on its events (one per event, in order).
#[derive(Clone, Debug)]
pub(crate) enum Source<'a> {
    Message { message: &'a StoredMessage, path: String, items: Vec<&'a Value> },
    Event { fields: Map<String, Value>, items: Vec<&'a Value> },
}

/// Event type of an item kept with nothing else: one whose conversion makes no event of its own.
pub const KEPT_ITEM_EVENT_TYPE: &str = "responses_item";
/// Event field holding the Responses item an event was made from (`null`: made from none).
pub const KEPT_ITEM_KEY: &str = "responsesItem";

/// The events of LangChain stored messages (the form `thread/render` "messages" returns).
/// Errors name the message and field: `messages[2].data.tool_call_id: missing`.
pub fn messages_to_events(messages: &[StoredMessage], stamp: &EventStamp) -> Result<Vec<AgentEvent>, EventError> {
    let sources: Vec<Source<'_>> = messages
        .iter()
        .enumerate()
        .map(|(i, message)| Source::Message { message, path: format!("messages[{i}]"), items: Vec::new() })
        .collect();
    sources_to_events(&sources, stamp, false, false)
}

/// The same events, each media part keeping the form of the LangChain block it was made of, so
/// the `messages` render gives the block back as written ([`super::block_forms`]).
pub fn messages_to_events_keeping_block_forms(
    messages: &[StoredMessage],
    stamp: &EventStamp,
) -> Result<Vec<AgentEvent>, EventError> {
    let sources: Vec<Source<'_>> = messages
        .iter()
        .enumerate()
        .map(|(i, message)| Source::Message { message, path: format!("messages[{i}]"), items: Vec::new() })
        .collect();
    sources_to_events(&sources, stamp, false, true)
}

/// With `keep_items`, every event carries the item it was made from (`responsesItem`; `null` on
/// one made from none), and an item that makes no event is kept by a `responses_item` event of
/// its own, in its place: the items come back from the events, in order.
pub(crate) fn sources_to_events(
    sources: &[Source<'_>],
    stamp: &EventStamp,
    keep_items: bool,
    keep_block_forms: bool,
) -> Result<Vec<AgentEvent>, EventError> {
    let mut out = Events {
        stamp,
        events: Vec::new(),
        origin: Origin::default(),
        asked_in_group: false,
        keep_items,
        items: Vec::new(),
    };
    let opening = opening_index(sources);
    // A question whose not-completed calls are the last of their group: it is asked once the
    // group's answers are in, before anything that would claim those calls first.
    let mut deferred_question: Option<String> = None;
    for (index, source) in sources.iter().enumerate() {
        let (message, path, items) = match source {
            Source::Event { fields, items } => {
                out.items = items.iter().rev().map(|item| (*item).clone()).collect();
                out.push_fields(fields.clone());
                out.keep_unused_items();
                continue;
            }
            Source::Message { message, path, items } => (*message, path.as_str(), items),
        };
        out.origin = Origin::of(message);
        out.items = items.iter().rev().map(|item| (*item).clone()).collect();
        let starts_group = message.message_type == MessageType::Ai && !message.tool_calls().is_empty();
        let claims_calls = message.message_type == MessageType::Human && is_error_text(&text_of(&message.data.content));
        if starts_group || claims_calls {
            if let Some(question) = deferred_question.take() {
                out.question(question);
            }
        }
        if starts_group {
            out.asked_in_group = false;
        }
        let media = media_of(&message.data.content, &format!("{path}.data.content"), keep_block_forms)?;
        match (&message.message_type, media) {
            (MessageType::Human, _) if Some(index) == opening => {}
            (MessageType::Human, Some(parts)) => out.parts("user", parts),
            (MessageType::Human, None) => out.human(&text_of(&message.data.content)),
            (MessageType::System, Some(parts)) => out.parts("system", parts),
            (MessageType::System, None) => out.message("system", text_of(&message.data.content)),
            (MessageType::Ai, media) => {
                let answers = not_completed_answers(sources, index);
                out.reasoning(message, keep_block_forms);
                if let Some(question) = out.ai(message, media, path, &answers)? {
                    deferred_question = Some(question);
                }
            }
            (MessageType::Tool, Some(parts)) if !has_error_status(message) => out.tool_parts(message, parts, path)?,
            (MessageType::Tool, _) => out.tool(message, path)?,
            (MessageType::Other(name), _) => {
                return Err(fault(&format!("{path}.type"), format!("expected system, human, ai or tool, found {name}")))
            }
        }
        out.keep_unused_items();
    }
    if let Some(question) = deferred_question {
        out.question(question);
    }
    Ok(out.events)
}

/// The index of the opening message the renderer adds (rule 9): the first message, a human
/// one with [`OPENING_TEXT`] after the system message, when the message after it renders as the assistant's or a tool's.
fn opening_index(sources: &[Source<'_>]) -> Option<usize> {
    let messages = sources.iter().enumerate().filter_map(|(i, source)| match source {
        Source::Message { message, .. } => Some((i, *message)),
        Source::Event { .. } => None,
    });
    let mut messages = messages.skip_while(|(_, message)| message.message_type == MessageType::System);
    let (index, first) = messages.next()?;
    let is_opening = first.message_type == MessageType::Human && first.content_str() == Some(OPENING_TEXT);
    let next_is_not_human =
        messages.next().is_some_and(|(_, next)| matches!(next.message_type, MessageType::Ai | MessageType::Tool));
    (is_opening && next_is_not_human).then_some(index)
}

/// Why a call was answered as not completed.
#[derive(Clone, Debug, PartialEq)]
enum NotCompleted {
    /// The run stopped to ask this question.
    Question(String),
    /// An error, or no reason: the events that follow say it again.
    Other,
}

/// The calls of an AI message that the tool messages right after it answer as not completed,
/// and why.
fn not_completed_answers(sources: &[Source<'_>], index: usize) -> Vec<(String, NotCompleted)> {
    let mut out = Vec::new();
    for source in &sources[index + 1..] {
        let Source::Message { message, .. } = source else { break };
        if message.message_type != MessageType::Tool {
            break;
        }
        let (Some(id), Some(content)) = (&message.data.tool_call_id, message.content_str()) else { continue };
        if let Some(reason) = not_completed(message, content) {
            out.push((id.clone(), reason));
        }
    }
    out
}

fn not_completed(message: &StoredMessage, content: &str) -> Option<NotCompleted> {
    if !has_error_status(message) {
        return None;
    }
    let why = content.strip_prefix(NOT_COMPLETED_LABEL)?;
    Some(match why.strip_prefix(STOPPED_FOR_INPUT) {
        Some(question) => NotCompleted::Question(question.to_owned()),
        None => NotCompleted::Other,
    })
}

fn has_error_status(message: &StoredMessage) -> bool {
    message.data.extra.get("status").and_then(Value::as_str) == Some("error")
}

/// Whether a human message's text is an error the renderer wrote (an `error` event, which
/// marks the calls still open as interrupted).
fn is_error_text(text: &str) -> bool {
    [RECOVERABLE_LABEL, NON_RECOVERABLE_LABEL, ERROR_LABEL].iter().any(|label| text.starts_with(label))
}

/// The text of a message's content: a string as is; of LangChain content blocks, the strings
/// and `text` blocks joined (images and other blocks carry no text); anything else as JSON text.
pub(crate) fn text_of(content: &Content) -> String {
    match content {
        Content::Text(text) => text.clone(),
        Content::Other(value) => match &**value {
            Value::Null => String::new(),
            Value::Array(blocks) => blocks.iter().filter_map(block_text).collect(),
            other => crate::js_json::to_string(other),
        },
        Content::Parts(parts) => crate::media::parts::text_parts_only(parts),
    }
}

/// The content parts of a message that holds media: the thread's own parts, or LangChain
/// content blocks read as parts ([`super::media_blocks`]); `None` for content without media.
fn media_of(content: &Content, path: &str, keep_block_forms: bool) -> Result<Option<Vec<Value>>, EventError> {
    match content {
        Content::Parts(parts) if crate::media::parts::has_media(parts) => Ok(Some(parts.to_vec())),
        Content::Other(value) => match &**value {
            Value::Array(blocks) => {
                let parts = super::media_blocks::media_parts(blocks, super::media_blocks::Form::LangChain, path)?;
                Ok(parts.map(|parts| {
                    if keep_block_forms {
                        super::block_forms::with_block_forms(blocks, parts)
                    } else {
                        parts
                    }
                }))
            }
            _ => Ok(None),
        },
        _ => Ok(None),
    }
}

fn block_text(block: &Value) -> Option<&str> {
    match block {
        Value::String(text) => Some(text),
        Value::Object(fields) if fields.get("type").and_then(Value::as_str) == Some("text") => {
            fields.get("text").and_then(Value::as_str)
        }
        _ => None,
    }
}

fn fault(path: &str, reason: impl Into<String>) -> EventError {
    EventError { path: path.to_owned(), reason: reason.into() }
}

/// What an event keeps of the message it came from, so the `messages` render can give it back:
/// `data.id` as `messageId`, `data.name` as `messageName`, and the other `data` keys that carry
/// something (`additional_kwargs`, `response_metadata`, `usage_metadata`, ...) in `messageFields`.
#[derive(Clone, Debug, Default)]
struct Origin {
    id: Option<String>,
    name: Option<String>,
    fields: Option<Map<String, Value>>,
}

/// `data` keys with an event field or a meaning of their own, never copied into `messageFields`.
const OWN_DATA_KEYS: &[&str] = &["id", "name", "type", "status"];

impl Origin {
    fn of(message: &StoredMessage) -> Self {
        let extra = &message.data.extra;
        let fields: Map<String, Value> = extra
            .iter()
            .filter(|(key, value)| !OWN_DATA_KEYS.contains(&key.as_str()) && !is_default_value(value))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        Origin {
            id: extra.get("id").and_then(Value::as_str).map(str::to_owned),
            name: extra.get("name").and_then(Value::as_str).map(str::to_owned),
            fields: (!fields.is_empty()).then_some(fields),
        }
    }

    fn stamp(&self, map: &mut Map<String, Value>) {
        if let Some(id) = &self.id {
            map.insert("messageId".into(), Value::String(id.clone()));
        }
        if let Some(name) = &self.name {
            map.insert("messageName".into(), Value::String(name.clone()));
        }
        if let Some(fields) = &self.fields {
            map.insert("messageFields".into(), Value::Object(fields.clone()));
        }
    }
}

/// A value LangChain's loaders fill in themselves when the key is absent (`{}`, `[]`, `null`,
/// `false`): keeping it would only make every event longer.
fn is_default_value(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(false) => true,
        Value::Object(map) => map.is_empty(),
        Value::Array(list) => list.is_empty(),
        _ => false,
    }
}

/// The events made so far, each stamped, and carrying what they keep of the message they came from.
struct Events<'s> {
    stamp: &'s EventStamp,
    events: Vec<AgentEvent>,
    origin: Origin,
    /// Whether a question was asked for the current group of calls: a human answer after it
    /// would answer one of them, which the thread's did not.
    asked_in_group: bool,
    /// Whether events keep the items they were made from.
    keep_items: bool,
    /// The current source's items not yet given to an event, last first.
    items: Vec<Value>,
}

impl Events<'_> {
    fn push(&mut self, event_type: &str, fields: impl IntoIterator<Item = (&'static str, Value)>) {
        let mut map = Map::new();
        map.insert("type".into(), event_type.into());
        map.extend(fields.into_iter().map(|(key, value)| (key.to_owned(), value)));
        self.push_record(map);
    }

    /// The iteration (and timestamp) of this conversion, on an event's fields.
    fn stamp_time(&self, map: &mut Map<String, Value>) {
        map.insert("iteration".into(), Value::Number(self.stamp.iteration.clone()));
        if let Some(timestamp) = &self.stamp.timestamp {
            map.insert("timestamp".into(), Value::Number(timestamp.clone()));
        }
    }

    /// An event made elsewhere, stamped with the iteration (and timestamp) of this conversion.
    fn push_fields(&mut self, mut map: Map<String, Value>) {
        self.stamp_time(&mut map);
        // An event made elsewhere that kept no item describes its item itself.
        if !self.items.is_empty() {
            self.keep_item(&mut map);
        }
        self.events.push(AgentEvent::from_map(map, "event").expect("passed-through events have a type"));
    }

    /// Gives the event the next item of its source, or `null` when it was made from none.
    fn keep_item(&mut self, map: &mut Map<String, Value>) {
        if self.keep_items {
            map.insert(KEPT_ITEM_KEY.into(), self.items.pop().unwrap_or(Value::Null));
        }
    }

    /// Keeps each item of the source that made no event in a `responses_item` event, in place.
    fn keep_unused_items(&mut self) {
        while !self.items.is_empty() {
            self.push(KEPT_ITEM_EVENT_TYPE, std::iter::empty());
        }
    }

    /// The reasoning blocks of an AI message's content, each a reasoning record in its place
    /// before the message's text and calls ([`super::langchain_reasoning`]).
    fn reasoning(&mut self, message: &StoredMessage, keep_block_forms: bool) {
        let Content::Other(content) = &message.data.content else { return };
        let Value::Array(blocks) = &**content else { return };
        let metadata = message.data.extra.get("response_metadata");
        for fields in super::langchain_reasoning::reasoning_events(blocks, metadata, keep_block_forms) {
            self.push_record(fields);
        }
    }

    /// An event whose own fields are made already, stamped as [`Self::push`] stamps.
    fn push_record(&mut self, mut map: Map<String, Value>) {
        self.stamp_time(&mut map);
        self.origin.stamp(&mut map);
        self.keep_item(&mut map);
        self.events.push(AgentEvent::from_map(map, "event").expect("converted events have their fields"));
    }

    /// A message of content parts (media kept as parts, never as text).
    fn parts(&mut self, role: &str, parts: Vec<Value>) {
        self.push("message", [("role", role.into()), ("content", Value::Array(parts))]);
    }

    /// A tool message holding media: a result given as content parts.
    fn tool_parts(&mut self, message: &StoredMessage, parts: Vec<Value>, path: &str) -> Result<(), EventError> {
        let id = message
            .data
            .tool_call_id
            .as_deref()
            .ok_or_else(|| fault(&format!("{path}.data.tool_call_id"), "missing"))?;
        self.push("tool_result", [("toolCallId", id.into()), ("content", Value::Array(parts))]);
        Ok(())
    }

    fn message(&mut self, role: &str, content: String) {
        self.push("message", [("role", role.into()), ("content", content.into())]);
    }

    fn question(&mut self, question: String) {
        let origin = std::mem::take(&mut self.origin);
        let items = std::mem::take(&mut self.items);
        self.push("human_input_requested", [("question", question.into())]);
        self.origin = origin;
        self.items = items;
        self.asked_in_group = true;
    }

    fn error(&mut self, error: &str, recoverable: bool, tool_call_id: Option<&str>) {
        let mut fields = vec![("error", Value::from(error)), ("recoverable", Value::Bool(recoverable))];
        fields.extend(tool_call_id.map(|id| ("toolCallId", Value::from(id))));
        self.push("error", fields);
    }

    fn tool_result(&mut self, tool_call_id: &str, result: Value) {
        self.push("tool_result", [("toolCallId", tool_call_id.into()), ("result", result)]);
    }

    /// A human message: what its label says it was rendered from, else a user message.
    fn human(&mut self, text: &str) {
        if let Some(content) = text.strip_prefix(SYSTEM_LABEL) {
            self.message("system", content.to_owned());
        } else if text.starts_with(HUMAN_RESPONSE_LABEL) && self.asked_in_group {
            // The answer went to no call although one waited: the thread asked again meanwhile
            // (a question that reached no call leaves no trace). The same text, as the user's.
            self.message("user", text.to_owned());
        } else if let Some(response) = text.strip_prefix(HUMAN_RESPONSE_LABEL) {
            self.push("human_input_received", [("response", response.into())]);
        } else if let Some(error) = text.strip_prefix(RECOVERABLE_LABEL) {
            self.error(error, true, None);
        } else if let Some(error) = text.strip_prefix(ERROR_LABEL).or_else(|| text.strip_prefix(NON_RECOVERABLE_LABEL))
        {
            self.error(error, false, None);
        } else if let Some((id, result)) = text.strip_prefix(STRAY_RESULT_LABEL).and_then(|rest| rest.split_once("]: "))
        {
            self.tool_result(id, result.into());
        } else {
            self.message("user", text.to_owned());
        }
    }

    /// An AI message: its text, then its calls. A question that left calls unanswered is asked
    /// after the last call before the next call it did not reach (answered calls in between
    /// included). When its last unanswered call ends the message, it is returned instead, to be
    /// asked after the group's answers and the messages that waited for them, before the first
    /// error or call that follows (an answer given before the question stays text).
    fn ai(
        &mut self,
        message: &StoredMessage,
        media: Option<Vec<Value>>,
        path: &str,
        not_completed: &[(String, NotCompleted)],
    ) -> Result<Option<String>, EventError> {
        let calls = message.tool_calls();
        match media {
            Some(parts) => self.parts("assistant", parts),
            None => {
                let text = text_of(&message.data.content);
                if !text.is_empty() || calls.is_empty() {
                    self.message("assistant", text);
                }
            }
        }
        // The first not-completed answer naming an id is the one the render made for it.
        let mut by_id: HashMap<&str, &NotCompleted> = HashMap::with_capacity(not_completed.len());
        for (id, reason) in not_completed.iter().rev() {
            by_id.insert(id, reason);
        }
        let reasons: Vec<Option<&NotCompleted>> =
            calls.iter().map(|call| call.id.as_deref().and_then(|id| by_id.get(id).copied())).collect();
        let mut open_question: Option<&str> = None;
        for (j, call) in calls.iter().enumerate() {
            self.tool_call(call, &format!("{path}.data.tool_calls[{j}]"))?;
            if let Some(NotCompleted::Question(question)) = reasons[j] {
                open_question = Some(question);
            }
            let Some(question) = open_question else { continue };
            // Asked here, the question reaches exactly the calls it left unanswered, and a later
            // human answer finds the call it points at answered already, as in the thread.
            let ask_here = match reasons.get(j + 1) {
                Some(Some(next)) => !matches!(next, NotCompleted::Question(same) if same == question),
                Some(None) => false,
                None => reasons[j].is_none(),
            };
            if ask_here {
                self.question(question.to_owned());
                open_question = None;
            }
        }
        Ok(open_question.map(str::to_owned))
    }

    fn tool_call(&mut self, call: &ToolCall, path: &str) -> Result<(), EventError> {
        let id = call.id.as_deref().ok_or_else(|| fault(&format!("{path}.id"), "missing"))?;
        self.push(
            "tool_call",
            [
                ("toolName", call.name.as_str().into()),
                ("toolCallId", id.into()),
                ("args", Value::Object(call.args.clone())),
            ],
        );
        Ok(())
    }

    /// A tool message: the call's result, or with `status: "error"` the error that answered it
    /// (nothing for a not-completed answer: the renderer writes those itself).
    fn tool(&mut self, message: &StoredMessage, path: &str) -> Result<(), EventError> {
        let id = message
            .data
            .tool_call_id
            .as_deref()
            .ok_or_else(|| fault(&format!("{path}.data.tool_call_id"), "missing"))?;
        if !has_error_status(message) {
            let result = match &message.data.content {
                Content::Text(text) => Value::String(text.clone()),
                Content::Other(value) => (**value).clone(),
                Content::Parts(parts) => Value::Array(parts.to_vec()),
            };
            self.tool_result(id, result);
            return Ok(());
        }
        let text = text_of(&message.data.content);
        if text.starts_with(NOT_COMPLETED_LABEL) {
            return Ok(());
        }
        match text.strip_prefix(NON_RECOVERABLE_LABEL).or_else(|| text.strip_prefix(ERROR_LABEL)) {
            Some(error) => self.error(error, false, Some(id)),
            None => self.error(text.strip_prefix(RECOVERABLE_LABEL).unwrap_or(&text), true, Some(id)),
        }
        Ok(())
    }
}
