//! The GenAI conventions' message shapes, for content capture: `{role, parts: [...]}` with
//! `text`, `tool_call` and `tool_call_response` parts; output messages add `finish_reason`.

use serde_json::{json, Map, Value};

pub fn text_part(text: &str) -> Value {
    json!({"type": "text", "content": text})
}

pub fn tool_call_part(id: &str, name: &str, arguments: &Map<String, Value>) -> Value {
    json!({"type": "tool_call", "id": id, "name": name, "arguments": arguments})
}

pub fn tool_response_part(id: &str, response: &Value) -> Value {
    json!({"type": "tool_call_response", "id": id, "response": response})
}

pub fn message(role: &str, parts: Vec<Value>) -> Value {
    json!({"role": role, "parts": parts})
}

pub fn output_message(parts: Vec<Value>, finish_reason: &str) -> Value {
    json!({"role": "assistant", "parts": parts, "finish_reason": finish_reason})
}

/// `gen_ai.system_instructions`: the parts alone.
pub fn system_instructions(text: &str) -> String {
    Value::Array(vec![text_part(text)]).to_string()
}

/// A JSON attribute value as the conventions record it: the JSON text.
pub fn json_text(values: &[Value]) -> String {
    serde_json::to_string(values).unwrap_or_default()
}
