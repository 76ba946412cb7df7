//! TEMPORARY stub until the convert module lands.
use crate::messages::StoredMessage;
pub fn messages_to_xml(_m: &[StoredMessage]) -> String { String::new() }
pub fn parse_tool_calls(_t: &str) -> serde_json::Value { serde_json::Value::Null }
