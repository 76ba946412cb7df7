//! Rendering options and the one-shot entry point.

use super::standard::{DanglingToolCalls, StandardMessages};
use super::stored::StoredMessage;
use super::xml_mode::xml_messages;
use crate::event::AgentEvent;
use crate::xml::EscapeMode;
use serde::{Deserialize, Serialize};

/// How prior history is presented to the model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContextMode {
    /// One chat message per event (seed 001).
    #[default]
    Standard,
    /// One human message holding the `<thread>` document (seed 002).
    Xml,
}

impl ContextMode {
    /// The name in the protocol, as it serializes.
    pub fn as_str(self) -> &'static str {
        match self {
            ContextMode::Standard => "standard",
            ContextMode::Xml => "xml",
        }
    }
}

/// Options of [`build_messages`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct MessageOptions {
    pub context_mode: ContextMode,
    /// Host instructions, placed in the system message after the summaries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Appended to the XML document (XML mode only; standard mode has no place for it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_prefix: Option<String>,
    /// Standard mode: merge adjacent `tool_call` events of one iteration into one AI message.
    /// Kept for compatibility: calls made while others are unanswered always share one AI
    /// message (rule 8b), which covers every such pair, so it changes nothing.
    pub group_tool_calls: bool,
    /// Standard mode: what becomes of a call that was never answered.
    pub dangling_tool_calls: DanglingToolCalls,
    /// XML mode: body escaping of the document.
    pub escape: EscapeMode,
}

/// The chat messages of a thread: the system message (if any), then the history.
pub fn build_messages(events: &[AgentEvent], options: &MessageOptions) -> Vec<StoredMessage> {
    let instructions = options.instructions.as_deref();
    match options.context_mode {
        ContextMode::Standard => {
            let mut builder = StandardMessages::new();
            builder.extend(events);
            builder.to_messages(instructions, options.dangling_tool_calls)
        }
        ContextMode::Xml => xml_messages(events, instructions, options.response_prefix.as_deref(), options.escape),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_read_camel_case_with_defaults() {
        let options: MessageOptions =
            serde_json::from_str(r#"{"contextMode":"xml","groupToolCalls":true,"escape":"minimal"}"#).unwrap();
        assert_eq!(options.context_mode, ContextMode::Xml);
        assert!(options.group_tool_calls);
        assert_eq!(options.escape, EscapeMode::Minimal);
        let defaults: MessageOptions = serde_json::from_str("{}").unwrap();
        assert_eq!(defaults, MessageOptions::default());
        assert_eq!(
            serde_json::to_string(&defaults).unwrap(),
            r#"{"contextMode":"standard","groupToolCalls":false,"danglingToolCalls":"repair","escape":"full"}"#
        );
    }
}
