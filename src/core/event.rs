//! The AgentEvent model: the events of an agent run, kept exactly as the host sent them.
//!
//! An event is stored as its JSON object, key order and unknown fields included, so that what
//! comes in is what goes out. [`AgentEvent::kind`] gives a typed, borrowed view of the fields the
//! renderers need; construction validates those fields once, so the view never fails.

use serde_json::{Map, Number, Value};
use std::borrow::Cow;

/// The roles a `message` event can carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
    System,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
        }
    }
}

/// A typed view of one event's fields.
#[derive(Clone, Copy, Debug)]
pub enum EventKind<'a> {
    Message {
        role: Role,
        content: Content<'a>,
    },
    ToolCall {
        tool_name: &'a str,
        tool_call_id: &'a str,
        args: &'a Map<String, Value>,
    },
    /// `result` is absent only when `content` (parts) is given; [`ToolResultView::result_text`]
    /// and friends give what text renders show.
    ToolResult {
        tool_call_id: &'a str,
        result: Option<&'a Value>,
        content: Option<&'a [Value]>,
    },
    Error {
        error: &'a str,
        recoverable: bool,
        tool_call_id: Option<&'a str>,
    },
    HumanInputRequested {
        question: &'a str,
    },
    HumanInputReceived {
        response: &'a str,
    },
    Completion {
        result: &'a str,
        verified: bool,
    },
    Summary {
        summarized_iterations: &'a [Value],
        summary: &'a str,
    },
    /// Reasoning a model produced ([`crate::providers::reasoning`] reads its fields): shown
    /// by the XML and trace views as any other kept event, replayed by the provider renders.
    Reasoning {
        provider: &'a str,
    },
    /// A type this version does not know; kept and rendered generically.
    Unknown {
        type_name: &'a str,
    },
}

/// A `message`'s content: a string, or content parts ([`crate::media::parts`]).
#[derive(Clone, Copy, Debug)]
pub enum Content<'a> {
    Text(&'a str),
    Parts(&'a [Value]),
}

impl<'a> Content<'a> {
    /// The content as text: the string, or the parts' text with each media part named
    /// ([`crate::media::parts::text_of`]).
    pub fn text(self) -> Cow<'a, str> {
        match self {
            Content::Text(text) => Cow::Borrowed(text),
            Content::Parts(parts) => Cow::Owned(crate::media::parts::text_of(parts)),
        }
    }

    /// The string, when the content is one.
    pub fn as_str(self) -> Option<&'a str> {
        match self {
            Content::Text(text) => Some(text),
            Content::Parts(_) => None,
        }
    }

    /// The parts, when the content is an array.
    pub fn parts(self) -> Option<&'a [Value]> {
        match self {
            Content::Text(_) => None,
            Content::Parts(parts) => Some(parts),
        }
    }

    /// Whether it says nothing: blank text, or parts that are all blank text.
    pub fn is_blank(self) -> bool {
        match self {
            Content::Text(text) => text.trim().is_empty(),
            Content::Parts(parts) => crate::media::Part::all(parts).all(|part| match part {
                crate::media::Part::Text(text) => text.trim().is_empty(),
                crate::media::Part::Media(_) => false,
            }),
        }
    }
}

/// What text renders show of a tool result: its `result`, or, when it gives `content` parts
/// and no `result`, the text of its text parts.
pub fn tool_result_value<'a>(result: Option<&'a Value>, content: Option<&'a [Value]>) -> Cow<'a, Value> {
    match (result, content) {
        (Some(result), _) => Cow::Borrowed(result),
        (None, Some(parts)) => Cow::Owned(Value::String(crate::media::parts::text_parts_only(parts))),
        (None, None) => Cow::Owned(Value::String(String::new())),
    }
}

/// The `type` of a reasoning event: what a model thought, as its provider hands it back.
pub const REASONING_EVENT_TYPE: &str = "reasoning";

/// The providers a reasoning event may name: whose signature or encrypted form it carries.
pub const REASONING_PROVIDERS: [&str; 4] = ["anthropic", "openai", "google", "bedrock"];

/// Gemini's signature of a model part, kept on the `message` or `tool_call` event made of it.
pub const THOUGHT_SIGNATURE_KEY: &str = "thoughtSignature";

/// A validation failure: which field of which event, and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct EventError {
    /// Path of the offending field, e.g. `events[3].toolCallId`.
    pub path: String,
    /// What is wrong, e.g. `missing` or `expected a string, found number`.
    pub reason: String,
}

/// One validated event. Cloning is a deep copy; share with `Arc` where that matters.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentEvent {
    fields: Map<String, Value>,
}

impl AgentEvent {
    /// Validates a JSON value as an event. `path` names it in errors, e.g. `events[3]`.
    pub fn from_value(value: Value, path: &str) -> Result<Self, EventError> {
        match value {
            Value::Object(fields) => Self::from_map(fields, path),
            other => Err(EventError {
                path: path.to_string(),
                reason: format!("expected an event object, found {}", json_type(&other)),
            }),
        }
    }

    /// Validates a JSON object as an event.
    pub fn from_map(fields: Map<String, Value>, path: &str) -> Result<Self, EventError> {
        let event = AgentEvent { fields };
        event.validate(path)?;
        Ok(event)
    }

    /// An event from fields validated before (text read back from an [`crate::event_log::EventLog`]).
    pub(crate) fn from_validated_fields(fields: Map<String, Value>) -> Self {
        AgentEvent { fields }
    }

    /// Validates a list of JSON values, naming failures `events[i].field`.
    pub fn list_from_values(values: Vec<Value>) -> Result<Vec<Self>, EventError> {
        values.into_iter().enumerate().map(|(i, v)| Self::from_value(v, &format!("events[{i}]"))).collect()
    }

    /// The event's `type` string.
    pub fn event_type(&self) -> &str {
        self.fields.get("type").and_then(Value::as_str).unwrap_or_default()
    }

    /// The event's `iteration` number.
    pub fn iteration(&self) -> &Number {
        // A scan of an event's few keys is cheaper than hashing one; renderers call this per event.
        match self.fields.iter().find(|(key, _)| *key == "iteration") {
            Some((_, Value::Number(n))) => n,
            _ => unreachable!("validated at construction"),
        }
    }

    /// The event's `timestamp`, when present.
    pub fn timestamp(&self) -> Option<&Number> {
        match self.fields.get("timestamp") {
            Some(Value::Number(n)) => Some(n),
            _ => None,
        }
    }

    /// All fields, in the order received.
    pub fn fields(&self) -> &Map<String, Value> {
        &self.fields
    }

    pub fn into_fields(self) -> Map<String, Value> {
        self.fields
    }

    pub fn into_value(self) -> Value {
        Value::Object(self.fields)
    }

    pub fn to_value(&self) -> Value {
        Value::Object(self.fields.clone())
    }

    /// A typed view of the fields the renderers use.
    pub fn kind(&self) -> EventKind<'_> {
        let f = KnownFields::of(&self.fields);
        fn s(v: Option<&Value>) -> &str {
            v.and_then(Value::as_str).unwrap_or_default()
        }
        let b = |v: Option<&Value>| v.and_then(Value::as_bool).unwrap_or_default();
        match s(f.type_) {
            "message" => EventKind::Message {
                role: match s(f.role) {
                    "user" => Role::User,
                    "assistant" => Role::Assistant,
                    _ => Role::System,
                },
                content: match f.content {
                    Some(Value::Array(parts)) => Content::Parts(parts),
                    other => Content::Text(s(other)),
                },
            },
            "tool_call" => EventKind::ToolCall {
                tool_name: s(f.tool_name),
                tool_call_id: s(f.tool_call_id),
                args: f.args.and_then(Value::as_object).expect("validated"),
            },
            "tool_result" => EventKind::ToolResult {
                tool_call_id: s(f.tool_call_id),
                result: f.result,
                content: f.content.and_then(Value::as_array).map(Vec::as_slice),
            },
            "error" => EventKind::Error {
                error: s(f.error),
                recoverable: b(f.recoverable),
                tool_call_id: f.tool_call_id.and_then(Value::as_str),
            },
            "human_input_requested" => EventKind::HumanInputRequested { question: s(f.question) },
            "human_input_received" => EventKind::HumanInputReceived { response: s(f.response) },
            "completion" => EventKind::Completion { result: s(f.result), verified: b(f.verified) },
            "summary" => EventKind::Summary {
                summarized_iterations: f
                    .summarized_iterations
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or_default(),
                summary: s(f.summary),
            },
            REASONING_EVENT_TYPE => EventKind::Reasoning { provider: s(self.fields.get("provider")) },
            other => EventKind::Unknown { type_name: other },
        }
    }

    fn validate(&self, path: &str) -> Result<(), EventError> {
        let check = FieldCheck { fields: &self.fields, path };
        let event_type = check.string("type")?;
        check.number("iteration")?;
        check.optional("timestamp", Expect::Number)?;
        match event_type {
            "message" => {
                let role = check.string("role")?;
                if !matches!(role, "user" | "assistant" | "system") {
                    return Err(
                        check.error("role", format!("expected \"user\", \"assistant\" or \"system\", found {role:?}"))
                    );
                }
                check.content("content")?;
                check.optional(THOUGHT_SIGNATURE_KEY, Expect::String)?;
            }
            "tool_call" => {
                check.string("toolName")?;
                check.string("toolCallId")?;
                check.require("args", Expect::Object)?;
                check.optional(THOUGHT_SIGNATURE_KEY, Expect::String)?;
            }
            REASONING_EVENT_TYPE => {
                let provider = check.string("provider")?;
                if !REASONING_PROVIDERS.contains(&provider) {
                    let reason =
                        format!("expected \"anthropic\", \"openai\", \"google\" or \"bedrock\", found {provider:?}");
                    return Err(check.error("provider", reason));
                }
                for key in ["model", "text", "signature", "redactedData", "encryptedContent", "itemId"] {
                    check.optional(key, Expect::String)?;
                }
                match self.fields.get("summary") {
                    None | Some(Value::String(_) | Value::Array(_)) => {}
                    Some(other) => {
                        let reason = format!("expected a string or an array, found {}", json_type(other));
                        return Err(check.error("summary", reason));
                    }
                }
            }
            "tool_result" => {
                check.string("toolCallId")?;
                match self.fields.get("content") {
                    None => {
                        check.require("result", Expect::Any)?;
                    }
                    Some(Value::Array(_)) => check.content("content")?,
                    Some(other) => {
                        return Err(check.error(
                            "content",
                            format!("expected an array of content parts, found {}", json_type(other)),
                        ))
                    }
                }
            }
            "error" => {
                check.string("error")?;
                check.require("recoverable", Expect::Bool)?;
                check.optional("toolCallId", Expect::String)?;
            }
            "human_input_requested" => {
                check.string("question")?;
                check.optional("context", Expect::String)?;
                check.optional("urgency", Expect::String)?;
                check.optional("format", Expect::String)?;
                check.optional("choices", Expect::Array)?;
                if let Some(Value::Array(choices)) = self.fields.get("choices") {
                    check_items(choices, path, "choices", Expect::String)?;
                }
            }
            "human_input_received" => {
                check.string("response")?;
            }
            "completion" => {
                check.string("result")?;
                check.require("verified", Expect::Bool)?;
            }
            "summary" => {
                check.require("summarizedIterations", Expect::Array)?;
                if let Some(Value::Array(items)) = self.fields.get("summarizedIterations") {
                    check_items(items, path, "summarizedIterations", Expect::Number)?;
                }
                check.string("summary")?;
            }
            _ => {} // unknown types are kept whole (forward compatibility)
        }
        Ok(())
    }
}

/// The fields [`AgentEvent::kind`] reads, found in one pass over the event: comparing a handful
/// of short keys costs several times less than one hashed lookup per field, and renderers ask
/// for the kind of every event.
#[derive(Default)]
struct KnownFields<'a> {
    type_: Option<&'a Value>,
    role: Option<&'a Value>,
    content: Option<&'a Value>,
    tool_name: Option<&'a Value>,
    tool_call_id: Option<&'a Value>,
    args: Option<&'a Value>,
    result: Option<&'a Value>,
    error: Option<&'a Value>,
    recoverable: Option<&'a Value>,
    question: Option<&'a Value>,
    response: Option<&'a Value>,
    verified: Option<&'a Value>,
    summarized_iterations: Option<&'a Value>,
    summary: Option<&'a Value>,
}

impl<'a> KnownFields<'a> {
    fn of(fields: &'a Map<String, Value>) -> Self {
        let mut known = KnownFields::default();
        for (key, value) in fields {
            let slot = match key.as_str() {
                "type" => &mut known.type_,
                "role" => &mut known.role,
                "content" => &mut known.content,
                "toolName" => &mut known.tool_name,
                "toolCallId" => &mut known.tool_call_id,
                "args" => &mut known.args,
                "result" => &mut known.result,
                "error" => &mut known.error,
                "recoverable" => &mut known.recoverable,
                "question" => &mut known.question,
                "response" => &mut known.response,
                "verified" => &mut known.verified,
                "summarizedIterations" => &mut known.summarized_iterations,
                "summary" => &mut known.summary,
                _ => continue,
            };
            *slot = Some(value);
        }
        known
    }
}

#[derive(Clone, Copy)]
enum Expect {
    String,
    Number,
    Bool,
    Object,
    Array,
    Any,
}

impl Expect {
    fn accepts(self, v: &Value) -> bool {
        match self {
            Expect::String => v.is_string(),
            Expect::Number => v.is_number(),
            Expect::Bool => v.is_boolean(),
            Expect::Object => v.is_object(),
            Expect::Array => v.is_array(),
            Expect::Any => true,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Expect::String => "a string",
            Expect::Number => "a number",
            Expect::Bool => "a boolean",
            Expect::Object => "an object",
            Expect::Array => "an array",
            Expect::Any => "a value",
        }
    }
}

struct FieldCheck<'a> {
    fields: &'a Map<String, Value>,
    path: &'a str,
}

impl<'a> FieldCheck<'a> {
    fn error(&self, key: &str, reason: String) -> EventError {
        EventError { path: format!("{}.{}", self.path, key), reason }
    }

    fn require(&self, key: &str, expect: Expect) -> Result<&'a Value, EventError> {
        match self.fields.get(key) {
            None => Err(self.error(key, "missing".into())),
            Some(v) if expect.accepts(v) => Ok(v),
            Some(v) => Err(self.error(key, format!("expected {}, found {}", expect.name(), json_type(v)))),
        }
    }

    fn optional(&self, key: &str, expect: Expect) -> Result<(), EventError> {
        if self.fields.contains_key(key) {
            self.require(key, expect)?;
        }
        Ok(())
    }

    fn string(&self, key: &str) -> Result<&'a str, EventError> {
        Ok(self.require(key, Expect::String)?.as_str().unwrap_or_default())
    }

    /// A string, or an array of content parts ([`crate::media::parts::validate_parts`]).
    fn content(&self, key: &str) -> Result<(), EventError> {
        match self.fields.get(key) {
            Some(Value::Array(parts)) => crate::media::parts::validate_parts(parts, &format!("{}.{key}", self.path))
                .map_err(|(path, reason)| EventError { path, reason }),
            Some(Value::String(_)) => Ok(()),
            None => Err(self.error(key, "missing".into())),
            Some(v) => {
                Err(self.error(key, format!("expected a string or an array of content parts, found {}", json_type(v))))
            }
        }
    }

    fn number(&self, key: &str) -> Result<(), EventError> {
        self.require(key, Expect::Number).map(drop)
    }
}

fn check_items(items: &[Value], path: &str, key: &str, expect: Expect) -> Result<(), EventError> {
    for (i, item) in items.iter().enumerate() {
        if !expect.accepts(item) {
            return Err(EventError {
                path: format!("{path}.{key}[{i}]"),
                reason: format!("expected {}, found {}", expect.name(), json_type(item)),
            });
        }
    }
    Ok(())
}

/// The JSON type name of a value, for error messages.
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(v: Value) -> String {
        AgentEvent::list_from_values(vec![json!({"type":"message","role":"user","content":"ok","iteration":0}), v])
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn missing_and_mistyped_fields_name_index_and_field() {
        assert_eq!(err(json!({"type":"tool_result","iteration":1,"result":4})), "events[1].toolCallId: missing");
        assert_eq!(
            err(json!({"type":"tool_call","iteration":1,"toolName":"x","toolCallId":7,"args":{}})),
            "events[1].toolCallId: expected a string, found number"
        );
        assert_eq!(err(json!({"type":"message","role":"user","content":"x"})), "events[1].iteration: missing");
        assert_eq!(err(json!({"iteration":0})), "events[1].type: missing");
        assert_eq!(err(json!(5)), "events[1]: expected an event object, found number");
        assert_eq!(
            err(json!({"type":"summary","iteration":0,"summary":"s","summarizedIterations":[1,"2"]})),
            "events[1].summarizedIterations[1]: expected a number, found string"
        );
        assert_eq!(
            err(json!({"type":"message","role":"robot","content":"x","iteration":0})),
            "events[1].role: expected \"user\", \"assistant\" or \"system\", found \"robot\""
        );
    }

    #[test]
    fn reasoning_events_are_checked_and_kept_byte_for_byte() {
        assert_eq!(
            err(json!({"type":"reasoning","iteration":1,"provider":"mistral"})),
            "events[1].provider: expected \"anthropic\", \"openai\", \"google\" or \"bedrock\", found \"mistral\""
        );
        assert_eq!(err(json!({"type":"reasoning","iteration":1})), "events[1].provider: missing");
        assert_eq!(
            err(json!({"type":"reasoning","iteration":1,"provider":"openai","summary":3})),
            "events[1].summary: expected a string or an array, found number"
        );
        assert_eq!(
            err(
                json!({"type":"tool_call","iteration":1,"toolName":"x","toolCallId":"c","args":{},"thoughtSignature":1})
            ),
            "events[1].thoughtSignature: expected a string, found number"
        );
        let v =
            json!({"type":"reasoning","provider":"anthropic","text":"","signature":"sig","iteration":0,"extra":[1]});
        let e = AgentEvent::from_value(v.clone(), "events[0]").unwrap();
        assert!(matches!(e.kind(), EventKind::Reasoning { provider: "anthropic" }));
        assert_eq!(serde_json::to_string(&e.to_value()).unwrap(), serde_json::to_string(&v).unwrap());
    }

    #[test]
    fn unknown_types_and_fields_are_kept_in_order() {
        let v = json!({"zeta":1,"type":"approval","iteration":2,"alpha":{"b":1,"a":2}});
        let e = AgentEvent::from_value(v.clone(), "events[0]").unwrap();
        assert!(matches!(e.kind(), EventKind::Unknown { type_name: "approval" }));
        assert_eq!(serde_json::to_string(&e.to_value()).unwrap(), serde_json::to_string(&v).unwrap());
    }
}
