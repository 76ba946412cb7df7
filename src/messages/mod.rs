//! TEMPORARY stub until the messages module lands.
use crate::event::AgentEvent;
use serde::{Deserialize, Serialize};
use serde_json::Value;
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContextMode { #[default] Standard, Xml }
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredMessage { #[serde(rename = "type")] pub kind: String, pub data: Value }
impl StoredMessage { pub fn human(s: String) -> Self { StoredMessage { kind: "human".into(), data: serde_json::json!({"content": s}) } } }
#[derive(Clone, Debug)]
pub struct StandardMessages { msgs: Vec<StoredMessage> }
impl StandardMessages {
    pub fn new(_g: bool) -> Self { StandardMessages { msgs: vec![] } }
    pub fn push(&mut self, _e: &AgentEvent) {}
    pub fn messages(&self, _i: Option<&str>) -> Vec<StoredMessage> { self.msgs.clone() }
    pub fn system_message(&self, _i: Option<&str>) -> Option<StoredMessage> { None }
}
pub fn messages_to_prompt(_m: &[StoredMessage]) -> String { String::new() }
#[derive(Clone, Debug, Default)]
pub struct MessageOptions { pub context_mode: ContextMode, pub instructions: Option<String>, pub response_prefix: Option<String>, pub group_tool_calls: bool, pub escape: crate::xml::EscapeMode }
pub fn build_messages(_e: &[AgentEvent], _o: &MessageOptions) -> Vec<StoredMessage> { vec![] }
