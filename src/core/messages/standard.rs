//! Standard context mode (seed 001), repaired so that every provider accepts it.
//!
//! Each event becomes a chat message of its own, as seed 001 says:
//!
//! | event | message |
//! |---|---|
//! | `message` user / assistant | human / ai with the content |
//! | `message` system | human `"[System]: " + content` |
//! | `human_input_received` | human `"[Human Response]: " + response` |
//! | `tool_call` | ai with empty content and the tool call |
//! | `tool_result` | tool with `tool_call_id`; content the result, or its `JSON.stringify` form |
//! | `error` | human `"[Error (recoverable)]: " + error` or `"[Error]: " + error` |
//! | `summary` | no message; feeds the system message |
//! | `summary` of a rolling round | human `"[Summary of iterations 0 to 41]: " + summary` |
//! | `completion`, `human_input_requested`, unknown types | no message |
//!
//! A thread whose seed-001 form is already valid for OpenAI and Anthropic (every AI message
//! with calls directly followed by the tool messages answering them) renders exactly so. Any
//! other thread is repaired, and nothing is lost on the way (rendering rule 8b):
//!
//! - calls made while earlier calls are still unanswered join their AI message, so parallel
//!   calls share one message and their results follow it;
//! - an `error` whose `toolCallId` names an unanswered call is that call's tool message
//!   (`status: "error"`, `"[Error (recoverable)]: …"` / `"[Error (non-recoverable)]: …"`);
//! - a `human_input_received` after a `human_input_requested` that came while calls were
//!   unanswered answers the latest of those calls with the response;
//! - messages arriving while calls are unanswered wait until the calls are answered, so calls
//!   and results stay adjacent; everything else keeps its order;
//! - a call still unanswered when the thread moves on (a new call after such waiting messages,
//!   or the end of the thread) is answered by a tool message with `status: "error"` saying it
//!   was not completed and why, when the thread says why (see [`DanglingToolCalls`]);
//! - a `tool_result` for an unknown or already answered call is a human message
//!   `"[Tool Result for <id>]: " + content`, never an orphan tool message;
//! - a reused call id gets a suffix (`_2`, `_3`, …) so ids are unique, and an id OpenAI would
//!   refuse (empty, over 40 characters) is mapped; results answer the pending call that
//!   carries the id they name;
//! - a blank user or assistant message is left out, and a conversation that would open with
//!   the assistant opens with [`OPENING_TEXT`].
//!
//! An event's `aiSdk` field ([`CARRIED_KEY`]) is kept on the message (a call's, on the call)
//! made of it, for the `ai-sdk` projection.

use super::call_ids::IdRule;
use super::injection::ContextInjection;
use super::labels::{
    ERROR_LABEL, HUMAN_RESPONSE_LABEL, NON_RECOVERABLE_LABEL, NOT_COMPLETED_LABEL, RECOVERABLE_LABEL,
    STOPPED_FOR_INPUT, STRAY_RESULT_LABEL, SYSTEM_LABEL,
};
use super::stored::{Content as MessageContent, MessageType, StoredMessage, ToolCall};
use crate::context::rolling::summary_message_text;
use crate::event::{AgentEvent, Content, EventKind, Role, THOUGHT_SIGNATURE_KEY};
use crate::js_json;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::HashSet;

/// The human message placed before a conversation that would open with the assistant: the
/// conversation must open with a user turn (Anthropic).
pub const OPENING_TEXT: &str = "(The conversation so far follows.)";

/// Whether `text` has nothing but (Unicode) whitespace.
pub fn is_blank(text: &str) -> bool {
    text.trim().is_empty()
}

/// What to do with a tool call that has no answer (rendering rule 8b).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DanglingToolCalls {
    /// Answer it with a tool message, `status: "error"`, saying it was not completed.
    #[default]
    Repair,
    /// Leave the call out of its AI message (and the message out when no call is left).
    Drop,
}

/// One entry of the standard-mode rendering.
#[derive(Clone, Debug, PartialEq)]
pub enum Entry<'a> {
    Message(MessageRef<'a>),
    /// Reasoning: a `reasoning` event's fields, or a reasoning `turn_block`'s whole block
    /// ([`crate::providers::reasoning::Reasoning`] reads either). Each provider projection
    /// replays its own provider's, before the assistant message that follows.
    Reasoning(&'a Map<String, Value>),
}

impl Entry<'_> {
    /// The message, unless this is a reasoning block.
    pub fn message(&self) -> Option<&StoredMessage> {
        match self {
            Entry::Message(message) => Some(message),
            Entry::Reasoning(_) => None,
        }
    }
}

/// A message of a rendering: one the builder keeps, or one made for this rendering (a call
/// list without its dropped calls, a not-completed answer of a call still open, the opening
/// message). Boxed, so the common borrowed case stays two words.
#[derive(Clone, Debug, PartialEq)]
pub enum MessageRef<'a> {
    Kept(&'a StoredMessage),
    Made(Box<StoredMessage>),
}

impl MessageRef<'_> {
    pub fn into_owned(self) -> StoredMessage {
        match self {
            MessageRef::Kept(message) => message.clone(),
            MessageRef::Made(message) => *message,
        }
    }
}

impl std::ops::Deref for MessageRef<'_> {
    type Target = StoredMessage;

    fn deref(&self) -> &StoredMessage {
        match self {
            MessageRef::Kept(message) => message,
            MessageRef::Made(message) => message,
        }
    }
}

/// A settled entry; unanswered calls stay marked so the dangling policy applies at render time.
#[derive(Clone, Debug)]
enum Item {
    Message(StoredMessage),
    /// An AI message with calls, and which of them were never answered.
    Calls {
        message: StoredMessage,
        unanswered: Vec<bool>,
    },
    /// The tool message answering a call that was never answered (`Repair` only).
    NotCompleted(StoredMessage),
    Reasoning(Map<String, Value>),
}

/// Why a call may have gone unanswered, as far as the thread says.
#[derive(Clone, Debug)]
enum Interruption {
    HumanInput(String),
    Error(String),
}

#[derive(Clone, Debug)]
struct PendingCall {
    /// The id the thread gave the call; the rendered id may carry a suffix.
    thread_id: String,
    answered: bool,
    interruption: Option<Interruption>,
}

/// Calls still waiting for answers, with what has arrived meanwhile.
#[derive(Clone, Debug)]
struct OpenCalls {
    /// The AI message holding the calls, in order.
    message: StoredMessage,
    calls: Vec<PendingCall>,
    /// Tool messages, in the order they arrived.
    answers: Vec<StoredMessage>,
    /// Entries that arrived while calls were unanswered; they follow the answers.
    waiting: Vec<Item>,
    /// Reasoning that came between the calls, before any answer (interleaved thinking): it
    /// belongs to the calls' message, so it goes before it.
    reasoning: Vec<Item>,
    /// The call a `human_input_received` would answer: the latest call still unanswered
    /// when a `human_input_requested` arrived.
    awaiting_human: Option<usize>,
}

impl OpenCalls {
    fn new() -> Self {
        OpenCalls {
            message: StoredMessage::ai_tool_calls(Vec::new()),
            calls: Vec::new(),
            answers: Vec::new(),
            waiting: Vec::new(),
            reasoning: Vec::new(),
            awaiting_human: None,
        }
    }

    fn add_call(&mut self, call: ToolCall, thread_id: &str, origin: Origin<'_>) {
        origin.give_once(&mut self.message);
        self.message.data.tool_calls.get_or_insert_with(Vec::new).push(call);
        self.calls.push(PendingCall { thread_id: thread_id.to_owned(), answered: false, interruption: None });
    }

    /// The first unanswered call the thread named `id`.
    fn unanswered(&self, id: &str) -> Option<usize> {
        self.calls.iter().position(|c| !c.answered && c.thread_id == id)
    }

    fn answer(&mut self, index: usize, content: MessageContent, error: bool, origin: Origin<'_>) {
        self.calls[index].answered = true;
        let id = self.message.tool_calls()[index].id.clone().unwrap_or_default();
        let mut message = StoredMessage::tool(id, String::new());
        message.data.content = content;
        if error {
            message.data.extra.insert("status".into(), Value::String("error".into()));
        }
        origin.give_once(&mut message);
        self.answers.push(message);
    }

    fn all_answered(&self) -> bool {
        self.calls.iter().all(|c| c.answered)
    }

    fn interrupt(&mut self, why: Interruption) {
        for call in self.calls.iter_mut().filter(|c| !c.answered && c.interruption.is_none()) {
            call.interruption = Some(why.clone());
        }
    }

    /// The settled entries: the calls, their answers, answers for the unanswered, the waiting.
    fn settle(&self, out: &mut Vec<Item>) {
        let unanswered: Vec<bool> = self.calls.iter().map(|c| !c.answered).collect();
        out.extend(self.reasoning.iter().cloned());
        out.push(Item::Calls { message: self.message.clone(), unanswered });
        out.extend(self.answers.iter().cloned().map(Item::Message));
        for (call, tool_call) in self.calls.iter().zip(self.message.tool_calls()) {
            if !call.answered {
                out.push(Item::NotCompleted(not_completed(tool_call, call.interruption.as_ref())));
            }
        }
        out.extend(self.waiting.iter().cloned());
    }
}

/// What an event keeps of the LangChain message it came from, as `messages/toEvents` writes it:
/// `messageId` (the message's `data.id`), `messageName` (`data.name`) and `messageFields` (its
/// other `data` keys, such as `additional_kwargs` and `usage_metadata`).
#[derive(Clone, Copy, Default)]
struct Origin<'a> {
    id: Option<&'a str>,
    name: Option<&'a str>,
    fields: Option<&'a Map<String, Value>>,
    /// What a framework's message form keeps under [`CARRIED_KEY`].
    carried: Option<&'a Value>,
    /// Gemini's signature of the part the event was made of ([`THOUGHT_SIGNATURE_KEY`]).
    thought_signature: Option<&'a Value>,
}

impl<'a> Origin<'a> {
    /// Found in one pass over the event's few keys, as [`AgentEvent::kind`] finds its own.
    fn of(event: &'a AgentEvent) -> Self {
        let mut origin = Origin::default();
        for (key, value) in event.fields() {
            match (key.as_str(), value) {
                ("messageId", Value::String(id)) => origin.id = Some(id),
                ("messageName", Value::String(name)) => origin.name = Some(name),
                ("messageFields", Value::Object(fields)) => origin.fields = Some(fields),
                (CARRIED_KEY, carried) => origin.carried = Some(carried),
                (THOUGHT_SIGNATURE_KEY, signature) => origin.thought_signature = Some(signature),
                _ => {}
            }
        }
        origin
    }

    /// Gives `extra` (a message's, or a call's) the event's `aiSdk` and `thoughtSignature`, if
    /// it has them. The signature stays with the one part it signs: never given once to a
    /// message made of several events.
    fn carry(self, extra: &mut super::stored::Extra) {
        if let Some(carried) = self.carried {
            extra.insert(CARRIED_KEY.to_owned(), carried.clone());
        }
        if let Some(signature) = self.thought_signature {
            extra.insert(THOUGHT_SIGNATURE_KEY.to_owned(), signature.clone());
        }
    }

    /// Gives `message` what it kept, key by key unless the message has that key already: a
    /// message made of several events takes its first event's.
    fn give_once(self, message: &mut StoredMessage) {
        let extra = &mut message.data.extra;
        let id = self.id.map(|id| ("id", Value::String(id.to_owned())));
        let name = self.name.map(|name| ("name", Value::String(name.to_owned())));
        let carried = self.carried.map(|carried| (CARRIED_KEY, carried.clone()));
        for (key, value) in id.into_iter().chain(name).chain(carried) {
            if extra.get(key).is_none() {
                extra.insert(key.to_owned(), value);
            }
        }
        for (key, value) in self.fields.into_iter().flatten() {
            if extra.get(key).is_none() && !matches!(key.as_str(), "content" | "tool_calls" | "tool_call_id") {
                extra.insert(key.clone(), value.clone());
            }
        }
    }
}

/// The event key whose value the message or call made of the event keeps under the same key:
/// what a framework's message form needs that events have no field for (`aiSdk/toEvents`
/// writes it, the `ai-sdk` projection reads it).
pub const CARRIED_KEY: &str = "aiSdk";

/// The tool message answering a call that never got an answer.
fn not_completed(call: &ToolCall, why: Option<&Interruption>) -> StoredMessage {
    let reason = match why {
        None => "no result was recorded for this call".to_owned(),
        Some(Interruption::HumanInput(question)) => format!("{STOPPED_FOR_INPUT}{question}"),
        Some(Interruption::Error(error)) => format!("the run reported an error: {error}"),
    };
    let mut message =
        StoredMessage::tool(call.id.clone().unwrap_or_default(), format!("{NOT_COMPLETED_LABEL}{reason}"));
    message.data.extra.insert("status".into(), Value::String("error".into()));
    message
}

/// Rendered call ids, unique within the thread.
#[derive(Clone, Debug, Default)]
struct CallIds {
    used: HashSet<String>,
}

impl CallIds {
    /// `id` itself the first time, then `id_2`, `id_3`, … (the first not yet used); an id
    /// outside [`IdRule::OPENAI`] is mapped into it first.
    fn claim(&mut self, id: &str) -> String {
        let rule = IdRule::OPENAI;
        let base = if rule.allows(id) { id.to_owned() } else { rule.rewrite(id, "") };
        if self.used.insert(base.clone()) {
            return base;
        }
        (2u64..)
            .map(|n| {
                let plain = format!("{base}_{n}");
                if rule.allows(&plain) {
                    plain
                } else {
                    rule.rewrite(id, &format!("_{n}"))
                }
            })
            .find(|candidate| self.used.insert(candidate.clone()))
            .expect("an unused suffix exists")
    }
}

/// The standard-mode messages of a thread, built one event at a time.
///
/// Every push costs time proportional to that event's size (plus, while calls are unanswered,
/// the number of those calls), never to the thread's, so a long-lived thread keeps one builder
/// and pays only for new events.
#[derive(Clone, Debug, Default)]
pub struct StandardMessages {
    injection: ContextInjection,
    /// How many of the first settled items are rolling summaries (see [`Self::leading_summaries`]).
    leading_summaries: usize,
    settled: Vec<Item>,
    open: Option<OpenCalls>,
    ids: CallIds,
}

impl StandardMessages {
    pub fn new() -> Self {
        Self::default()
    }

    /// Converts one more event.
    pub fn push(&mut self, event: &AgentEvent) {
        let origin = Origin::of(event);
        let mut message = match event.kind() {
            // Whitespace says nothing, and Anthropic refuses a turn of it.
            EventKind::Message { role: Role::User | Role::Assistant, content } if content.is_blank() => return,
            EventKind::Message { role, content: Content::Parts(parts) } => match role {
                Role::User => StoredMessage::with_parts(MessageType::Human, parts),
                Role::Assistant => StoredMessage::with_parts(MessageType::Ai, parts),
                Role::System => StoredMessage::with_parts(MessageType::Human, labelled(SYSTEM_LABEL, parts)),
            },
            EventKind::Message { role: Role::User, content: Content::Text(content) } => StoredMessage::human(content),
            EventKind::Message { role: Role::Assistant, content: Content::Text(content) } => {
                let mut message = StoredMessage::ai(content);
                if let Some(signature) = origin.thought_signature {
                    message.data.extra.insert(THOUGHT_SIGNATURE_KEY.to_owned(), signature.clone());
                }
                message
            }
            EventKind::Message { role: Role::System, content: Content::Text(content) } => {
                StoredMessage::human(format!("{SYSTEM_LABEL}{content}"))
            }
            EventKind::HumanInputReceived { response } => {
                if let Some(open) = self.open.as_mut() {
                    if let Some(index) = open.awaiting_human.take().filter(|&i| !open.calls[i].answered) {
                        open.answer(index, MessageContent::Text(response.to_owned()), false, origin);
                        self.settle_if_answered();
                        return;
                    }
                }
                StoredMessage::human(format!("{HUMAN_RESPONSE_LABEL}{response}"))
            }
            EventKind::HumanInputRequested { question } => {
                if let Some(open) = self.open.as_mut() {
                    open.awaiting_human = open.calls.iter().rposition(|c| !c.answered);
                    open.interrupt(Interruption::HumanInput(question.to_owned()));
                }
                return;
            }
            EventKind::ToolCall { tool_name, tool_call_id, args } => {
                if self.open.as_ref().is_some_and(|open| !open.waiting.is_empty()) {
                    // The thread moved on while these calls waited: answer them here.
                    self.settle_open();
                }
                let mut call = ToolCall::new(self.ids.claim(tool_call_id), tool_name, args.clone());
                origin.carry(&mut call.extra);
                if self.open.is_none() {
                    self.open = Some(self.open_calls(origin.id));
                }
                self.open.get_or_insert_with(OpenCalls::new).add_call(call, tool_call_id, origin);
                return;
            }
            EventKind::ToolResult { tool_call_id, result, content: parts } => {
                let content = match (result, parts) {
                    (result, Some(parts)) => MessageContent::Parts(result_parts(result, parts).into()),
                    (Some(Value::String(text)), None) => MessageContent::Text(text.clone()),
                    (Some(other), None) => MessageContent::Text(js_json::to_string(other)),
                    (None, None) => MessageContent::Text(String::new()),
                };
                if let Some(open) = self.open.as_mut() {
                    if let Some(index) = open.unanswered(tool_call_id) {
                        open.answer(index, content, false, origin);
                        self.settle_if_answered();
                        return;
                    }
                }
                let label = format!("{STRAY_RESULT_LABEL}{tool_call_id}]: ");
                match content {
                    MessageContent::Parts(parts) => {
                        StoredMessage::with_parts(MessageType::Human, labelled(&label, &parts))
                    }
                    other => StoredMessage::human(format!("{label}{}", other.as_str().unwrap_or_default())),
                }
            }
            EventKind::Error { error, recoverable, tool_call_id } => {
                if let Some(open) = self.open.as_mut() {
                    if let Some(index) = tool_call_id.and_then(|id| open.unanswered(id)) {
                        let label = if recoverable { RECOVERABLE_LABEL } else { NON_RECOVERABLE_LABEL };
                        open.answer(index, MessageContent::Text(format!("{label}{error}")), true, origin);
                        self.settle_if_answered();
                        return;
                    }
                    open.interrupt(Interruption::Error(error.to_owned()));
                }
                let label = if recoverable { RECOVERABLE_LABEL } else { ERROR_LABEL };
                StoredMessage::human(format!("{label}{error}"))
            }
            EventKind::Summary { .. } => match summary_message_text(event) {
                Some(text) => {
                    if self.open.is_none() && self.settled.len() == self.leading_summaries {
                        self.leading_summaries += 1;
                    }
                    StoredMessage::human(text)
                }
                None => {
                    self.injection.push(event);
                    return;
                }
            },
            EventKind::Unknown { .. } | EventKind::Reasoning { .. } => {
                if let Some(record) = crate::providers::reasoning::record_of(event.fields()) {
                    self.add_reasoning(Item::Reasoning(record.clone()));
                }
                return;
            }
            EventKind::Completion { .. } => return,
        };
        origin.give_once(&mut message);
        self.add(Item::Message(message));
    }

    /// A new group of calls. When the assistant's text just before it came from the same
    /// message (the same `messageId`, as `messages/toEvents` gives both), the text moves into
    /// the calls' message, so an AI message with text and calls renders back as one.
    /// How many messages at the front of the conversation are rolling summaries: the prefix
    /// compaction rounds keep (a provider projection may end a cache breakpoint there).
    pub fn leading_summaries(&self) -> usize {
        self.leading_summaries
    }

    fn open_calls(&mut self, message_id: Option<&str>) -> OpenCalls {
        let mut open = OpenCalls::new();
        let same_message = |item: &Item| match item {
            Item::Message(message) => {
                message.message_type == MessageType::Ai
                    && message.data.tool_calls.is_none()
                    && message_id.is_some()
                    && message.data.extra.get("id").and_then(Value::as_str) == message_id
            }
            _ => false,
        };
        if self.settled.last().is_some_and(same_message) {
            if let Some(Item::Message(text)) = self.settled.pop() {
                open.message.data.content = text.data.content;
                if let Some(signature) = text.data.extra.get(THOUGHT_SIGNATURE_KEY).cloned() {
                    open.message.data.extra.insert(THOUGHT_SIGNATURE_KEY.to_owned(), signature);
                }
            }
        }
        open
    }

    pub fn extend<'a>(&mut self, events: impl IntoIterator<Item = &'a AgentEvent>) {
        for event in events {
            self.push(event);
        }
    }

    /// Reasoning goes with the message after it: while calls wait for their first answer, that
    /// is the calls' message (thinking between parallel calls); otherwise as any other entry.
    fn add_reasoning(&mut self, item: Item) {
        match self.open.as_mut() {
            Some(open) if open.answers.is_empty() && open.waiting.is_empty() => open.reasoning.push(item),
            _ => self.add(item),
        }
    }

    /// Settles `item`, or keeps it waiting behind unanswered calls.
    fn add(&mut self, item: Item) {
        match self.open.as_mut() {
            Some(open) => open.waiting.push(item),
            None => self.settled.push(item),
        }
    }

    fn settle_if_answered(&mut self) {
        if self.open.as_ref().is_some_and(OpenCalls::all_answered) {
            self.settle_open();
        }
    }

    fn settle_open(&mut self) {
        if let Some(open) = self.open.take() {
            open.settle(&mut self.settled);
        }
    }

    /// The context injection accumulated from `summary` events so far.
    pub fn injection(&self) -> &ContextInjection {
        &self.injection
    }

    /// The system message under `instructions`, when there is one.
    pub fn system_message(&self, instructions: Option<&str>) -> Option<StoredMessage> {
        self.injection.system_message(instructions)
    }

    /// The rendering so far, without the system message: calls still open are rendered as if
    /// the thread ended here (their answers, then `dangling` for the unanswered, then what waits).
    pub fn entries(&self, dangling: DanglingToolCalls) -> Vec<Entry<'_>> {
        let open_len = self.open.as_ref().map_or(0, |o| 1 + o.calls.len() + o.waiting.len());
        let mut out = Vec::with_capacity(self.settled.len() + open_len);
        out.extend(self.settled.iter().filter_map(|item| item_entry(item, dangling)));
        if let Some(open) = &self.open {
            let unanswered: Vec<bool> = open.calls.iter().map(|c| !c.answered).collect();
            out.extend(open.reasoning.iter().filter_map(|item| item_entry(item, dangling)));
            out.extend(calls_entry(&open.message, &unanswered, dangling).map(Entry::Message));
            out.extend(open.answers.iter().map(|m| Entry::Message(MessageRef::Kept(m))));
            if dangling == DanglingToolCalls::Repair {
                for (call, tool_call) in open.calls.iter().zip(open.message.tool_calls()) {
                    if !call.answered {
                        let message = not_completed(tool_call, call.interruption.as_ref());
                        out.push(Entry::Message(MessageRef::Made(Box::new(message))));
                    }
                }
            }
            out.extend(open.waiting.iter().filter_map(|item| item_entry(item, dangling)));
        }
        let first_message = out.iter().find_map(Entry::message);
        if first_message.is_some_and(|message| message.message_type != MessageType::Human) {
            out.insert(0, Entry::Message(MessageRef::Made(Box::new(StoredMessage::human(OPENING_TEXT)))));
        }
        out
    }

    /// The conversation as LangChain messages, without the system message.
    pub fn conversation(&self, dangling: DanglingToolCalls) -> Vec<StoredMessage> {
        let entries = self.entries(dangling);
        let mut out = Vec::with_capacity(entries.len());
        out.extend(entries.into_iter().filter_map(|entry| match entry {
            Entry::Message(message) => Some(message.into_owned()),
            Entry::Reasoning(_) => None,
        }));
        out
    }

    /// The full list: the system message (if any), then the conversation.
    pub fn to_messages(&self, instructions: Option<&str>, dangling: DanglingToolCalls) -> Vec<StoredMessage> {
        let mut out = Vec::new();
        out.extend(self.system_message(instructions));
        out.extend(self.conversation(dangling));
        out
    }
}

fn item_entry(item: &Item, dangling: DanglingToolCalls) -> Option<Entry<'_>> {
    match item {
        Item::Message(message) => Some(Entry::Message(MessageRef::Kept(message))),
        Item::Reasoning(payload) => Some(Entry::Reasoning(payload)),
        Item::NotCompleted(message) => {
            (dangling == DanglingToolCalls::Repair).then_some(Entry::Message(MessageRef::Kept(message)))
        }
        Item::Calls { message, unanswered } => calls_entry(message, unanswered, dangling).map(Entry::Message),
    }
}

/// An AI message with calls as `dangling` wants it: whole, or without its unanswered calls
/// (`None` when no call is left).
fn calls_entry<'a>(
    message: &'a StoredMessage,
    unanswered: &[bool],
    dangling: DanglingToolCalls,
) -> Option<MessageRef<'a>> {
    if dangling == DanglingToolCalls::Repair || !unanswered.contains(&true) {
        return Some(MessageRef::Kept(message));
    }
    let calls: Vec<ToolCall> = message
        .tool_calls()
        .iter()
        .zip(unanswered)
        .filter(|(_, &unanswered)| !unanswered)
        .map(|(call, _)| call.clone())
        .collect();
    if calls.is_empty() {
        return None;
    }
    let mut kept = message.clone();
    kept.data.tool_calls = Some(calls);
    Some(MessageRef::Made(Box::new(kept)))
}

/// A tool result's parts: its `result` as a text part first, when it gives one beside `content`.
fn result_parts(result: Option<&Value>, parts: &[Value]) -> Vec<Value> {
    let result = result.map(|result| match result {
        Value::String(text) => text.clone(),
        other => js_json::to_string(other),
    });
    let lead = result.map(|text| serde_json::json!({"type": "text", "text": text}));
    lead.into_iter().chain(parts.iter().cloned()).collect()
}

/// Parts with `label` before their text: joined to a leading text part, or as a text part of
/// its own before media.
fn labelled(label: &str, parts: &[Value]) -> Vec<Value> {
    let mut out = parts.to_vec();
    match out.first_mut().and_then(|part| part.get_mut("text")) {
        Some(Value::String(text)) if parts[0].get("type").and_then(Value::as_str) == Some("text") => {
            text.insert_str(0, label);
        }
        _ => out.insert(0, serde_json::json!({"type": "text", "text": label.trim_end()})),
    }
    out
}
