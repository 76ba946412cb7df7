//! LangChain's stored-message form: `{"type": "human", "data": {"content": "...", ...}}`.
//!
//! This is what Python `messages_to_dict` / `messages_from_dict` and JavaScript
//! `mapChatMessagesToStoredMessages` / `mapStoredMessagesToChatMessages` read and write.
//!
//! Messages we produce are minimal: `content` (always a string), `tool_calls` only on AI
//! messages that have calls, `tool_call_id` only on tool messages. Both loaders fill in the rest
//! (`additional_kwargs`, `response_metadata`, ...) themselves; Python's `ToolMessage` needs
//! `tool_call_id` and nothing else, its `AIMessage` only `content`.
//!
//! Messages we read may come from either loader's writer, so `content` may be a list of content
//! blocks and `data` may carry keys we do not know; both are kept so input round-trips.

use crate::js_json;
use serde::de::{self, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// The `type` of a stored message.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MessageType {
    System,
    Human,
    Ai,
    Tool,
    /// Any other LangChain type (`generic`, `function`, `chat`, ...), kept by name.
    Other(String),
}

impl MessageType {
    pub fn as_str(&self) -> &str {
        match self {
            MessageType::System => "system",
            MessageType::Human => "human",
            MessageType::Ai => "ai",
            MessageType::Tool => "tool",
            MessageType::Other(name) => name,
        }
    }

    pub fn from_name(name: &str) -> Self {
        match name {
            "system" => MessageType::System,
            "human" => MessageType::Human,
            "ai" => MessageType::Ai,
            "tool" => MessageType::Tool,
            other => MessageType::Other(other.to_owned()),
        }
    }
}

impl fmt::Display for MessageType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for MessageType {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for MessageType {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = Cow::<str>::deserialize(deserializer)?;
        Ok(MessageType::from_name(&name))
    }
}

/// One stored message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredMessage {
    #[serde(rename = "type")]
    pub message_type: MessageType,
    pub data: MessageData,
}

/// The `data` of a stored message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MessageData {
    /// A string in everything we produce; LangChain content blocks (a list) when read.
    #[serde(default)]
    pub content: Content,
    /// Calls requested by an AI message. `None` means the key is absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    /// The call a tool message answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Every other key, in the order received.
    #[serde(flatten)]
    pub extra: Extra,
}

/// The `content` of a message: text, or whatever else was read (LangChain content blocks).
///
/// Text is kept as a plain string, a third of the size of a JSON value: a long thread renders
/// one message per event, so the size of every field counts.
#[derive(Clone, Debug, PartialEq)]
pub enum Content {
    Text(String),
    Other(Box<Value>),
    /// A thread's own content parts ([`crate::media::parts`]): text, and media named by blob
    /// or URL. Renders turn them into each provider's parts, with the bytes where they go.
    Parts(Arc<[Value]>),
}

impl Default for Content {
    fn default() -> Self {
        Content::Text(String::new())
    }
}

impl Content {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Content::Text(text) => Some(text),
            Content::Other(_) | Content::Parts(_) => None,
        }
    }

    /// The thread's content parts, when the content is made of them.
    pub fn parts(&self) -> Option<&[Value]> {
        match self {
            Content::Parts(parts) => Some(parts),
            Content::Text(_) | Content::Other(_) => None,
        }
    }
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Content::Text(text) => serializer.serialize_str(text),
            Content::Other(value) => value.serialize(serializer),
            // Without the bytes at hand, the parts as the thread keeps them (blob ids, never
            // bytes); renders that carry media write them in their provider's form instead.
            Content::Parts(parts) => parts.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match Value::deserialize(deserializer)? {
            Value::String(text) => Content::Text(text),
            other => Content::Other(Box::new(other)),
        })
    }
}

/// Keys of a message or call beyond the ones we know, in the order received. Almost always
/// none, so none costs one word instead of an empty map's 72 bytes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Extra(Option<Box<Map<String, Value>>>);

impl Extra {
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.as_ref()?.get(key)
    }

    pub fn insert(&mut self, key: String, value: Value) -> Option<Value> {
        self.0.get_or_insert_with(Box::default).insert(key, value)
    }

    pub fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |map| map.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.0.iter().flat_map(|map| map.iter())
    }
}

impl From<Map<String, Value>> for Extra {
    fn from(map: Map<String, Value>) -> Self {
        Extra((!map.is_empty()).then(|| Box::new(map)))
    }
}

impl Serialize for Extra {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (key, value) in self.iter() {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Extra {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Map::<String, Value>::deserialize(deserializer).map(Extra::from)
    }
}

impl StoredMessage {
    fn with_content(message_type: MessageType, content: String) -> Self {
        StoredMessage {
            message_type,
            data: MessageData {
                content: Content::Text(content),
                tool_calls: None,
                tool_call_id: None,
                extra: Extra::default(),
            },
        }
    }

    pub fn system(content: impl Into<String>) -> Self {
        Self::with_content(MessageType::System, content.into())
    }

    pub fn human(content: impl Into<String>) -> Self {
        Self::with_content(MessageType::Human, content.into())
    }

    /// An AI message with text and no tool calls.
    pub fn ai(content: impl Into<String>) -> Self {
        Self::with_content(MessageType::Ai, content.into())
    }

    /// An AI message with empty text that requests `calls` (no `tool_calls` key when empty).
    pub fn ai_tool_calls(calls: Vec<ToolCall>) -> Self {
        let mut message = Self::with_content(MessageType::Ai, String::new());
        message.data.tool_calls = Some(calls).filter(|calls| !calls.is_empty());
        message
    }

    /// A tool message answering the call `tool_call_id`.
    pub fn tool(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        let mut message = Self::with_content(MessageType::Tool, content.into());
        message.data.tool_call_id = Some(tool_call_id.into());
        message
    }

    /// The content as text: the string itself, else its `JSON.stringify` form.
    pub fn content_text(&self) -> Cow<'_, str> {
        match &self.data.content {
            Content::Text(text) => Cow::Borrowed(text),
            Content::Other(other) => Cow::Owned(js_json::to_string(other)),
            Content::Parts(parts) => Cow::Owned(crate::media::parts::text_of(parts)),
        }
    }

    /// A message of `message_type` holding content parts.
    pub fn with_parts(message_type: MessageType, parts: impl Into<Arc<[Value]>>) -> Self {
        let mut message = Self::with_content(message_type, String::new());
        message.data.content = Content::Parts(parts.into());
        message
    }

    /// The content when it is a string.
    pub fn content_str(&self) -> Option<&str> {
        self.data.content.as_str()
    }

    /// The tool calls, empty when there are none.
    pub fn tool_calls(&self) -> &[ToolCall] {
        self.data.tool_calls.as_deref().unwrap_or_default()
    }
}

/// One tool call of an AI message: `{"id", "name", "args", "type": "tool_call"}`.
///
/// `type` is always written as `"tool_call"` and ignored when read. `id` is written even when
/// absent (as `null`), since Python's `ToolCall` requires the key.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    pub id: Option<String>,
    pub name: String,
    /// The arguments, keys in the order received.
    pub args: Map<String, Value>,
    /// Other keys, kept so input round-trips.
    pub extra: Extra,
}

impl ToolCall {
    pub fn new(id: impl Into<String>, name: impl Into<String>, args: Map<String, Value>) -> Self {
        ToolCall { id: Some(id.into()), name: name.into(), args, extra: Extra::default() }
    }
}

impl Serialize for ToolCall {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(4 + self.extra.len()))?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("name", &self.name)?;
        map.serialize_entry("args", &self.args)?;
        map.serialize_entry("type", "tool_call")?;
        for (key, value) in self.extra.iter() {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for ToolCall {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut fields = Map::<String, Value>::deserialize(deserializer)?;
        let id = match fields.shift_remove("id") {
            None | Some(Value::Null) => None,
            Some(Value::String(id)) => Some(id),
            Some(_) => return Err(de::Error::custom("tool call `id` must be a string or null")),
        };
        let name = match fields.shift_remove("name") {
            Some(Value::String(name)) => name,
            None => return Err(de::Error::missing_field("name")),
            Some(_) => return Err(de::Error::custom("tool call `name` must be a string")),
        };
        let args = match fields.shift_remove("args") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(args)) => args,
            Some(_) => return Err(de::Error::custom("tool call `args` must be an object")),
        };
        fields.shift_remove("type");
        Ok(ToolCall { id, name, args, extra: fields.into() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn produced_messages_are_minimal() {
        let out = |m: &StoredMessage| serde_json::to_string(m).unwrap();
        assert_eq!(out(&StoredMessage::human("hi")), r#"{"type":"human","data":{"content":"hi"}}"#);
        assert_eq!(out(&StoredMessage::system("s")), r#"{"type":"system","data":{"content":"s"}}"#);
        assert_eq!(out(&StoredMessage::ai("a")), r#"{"type":"ai","data":{"content":"a"}}"#);
        assert_eq!(
            out(&StoredMessage::tool("c1", "42")),
            r#"{"type":"tool","data":{"content":"42","tool_call_id":"c1"}}"#
        );
        assert_eq!(
            out(&StoredMessage::ai_tool_calls(vec![ToolCall::new("c1", "calc", args(json!({"z":1,"a":2})))])),
            r#"{"type":"ai","data":{"content":"","tool_calls":[{"id":"c1","name":"calc","args":{"z":1,"a":2},"type":"tool_call"}]}}"#
        );
        assert_eq!(out(&StoredMessage::ai_tool_calls(vec![])), r#"{"type":"ai","data":{"content":""}}"#);
    }

    #[test]
    fn python_dumped_messages_round_trip() {
        // The shape `messages_to_dict` writes for an AIMessage with a call.
        let text = r#"{"type":"ai","data":{"content":[{"type":"text","text":"hi"}],"additional_kwargs":{},"response_metadata":{},"type":"ai","name":null,"id":null,"tool_calls":[{"name":"calc","args":{"x":1},"id":null,"type":"tool_call"}],"invalid_tool_calls":[],"usage_metadata":null}}"#;
        let message: StoredMessage = serde_json::from_str(text).unwrap();
        assert_eq!(message.message_type, MessageType::Ai);
        assert_eq!(message.content_text(), r#"[{"type":"text","text":"hi"}]"#);
        assert_eq!(message.tool_calls()[0].id, None);
        assert_eq!(message.tool_calls()[0].name, "calc");
        let back: Value = serde_json::to_value(&message).unwrap();
        assert_eq!(back, serde_json::from_str::<Value>(text).unwrap());
    }

    #[test]
    fn content_other_than_text_and_extra_keys_round_trip_byte_for_byte() {
        for text in [
            r#"{"type":"tool","data":{"content":null,"tool_call_id":"x","status":"error","name":null}}"#,
            r#"{"type":"ai","data":{"content":42,"tool_calls":[{"id":null,"name":"a","args":{},"type":"tool_call","index":0}]}}"#,
            r#"{"type":"human","data":{"content":{"a":[1,"b"]}}}"#,
        ] {
            let message: StoredMessage = serde_json::from_str(text).unwrap();
            assert_eq!(serde_json::to_string(&message).unwrap(), text);
        }
        let mut message = StoredMessage::tool("c1", "x");
        assert!(message.data.extra.is_empty());
        message.data.extra.insert("status".into(), Value::String("error".into()));
        assert_eq!(message.data.extra.get("status"), Some(&Value::String("error".into())));
        assert_eq!(
            serde_json::to_string(&message).unwrap(),
            r#"{"type":"tool","data":{"content":"x","tool_call_id":"c1","status":"error"}}"#
        );
    }

    #[test]
    fn other_types_keep_their_name_and_missing_content_is_empty() {
        let message: StoredMessage = serde_json::from_str(r#"{"type":"generic","data":{"role":"x"}}"#).unwrap();
        assert_eq!(message.message_type, MessageType::Other("generic".into()));
        assert_eq!(message.content_text(), "");
        assert_eq!(serde_json::to_string(&message).unwrap(), r#"{"type":"generic","data":{"content":"","role":"x"}}"#);
    }

    #[test]
    fn malformed_tool_calls_are_rejected_with_a_reason() {
        let err = |text: &str| serde_json::from_str::<StoredMessage>(text).unwrap_err().to_string();
        assert!(
            err(r#"{"type":"ai","data":{"content":"","tool_calls":[{"args":{}}]}}"#).contains("missing field `name`")
        );
        assert!(err(r#"{"type":"ai","data":{"content":"","tool_calls":[{"name":"a","args":"x"}]}}"#)
            .contains("`args` must be an object"));
    }
}
