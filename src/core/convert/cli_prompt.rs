//! `buildPrompt` of upstream's CLI model providers: the one string a CLI model (Claude Code,
//! Codex) gets per call — the tools it may call and how to call them, then the thread.

use super::{messages_to_prompt, messages_to_xml};
use crate::js_json;
use crate::messages::StoredMessage;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What the model is told about calling tools, byte for byte as upstream sends it
/// (`TOOL_CALL_FORMAT` of deep-factor-agent's CLI providers).
pub const TOOL_CALL_FORMAT: &str = r#"When you need to call a tool, respond with ONLY a JSON block in this exact format:

```json
{
  "tool_calls": [
    {
      "name": "tool_name",
      "args": { "param": "value" },
      "id": "call_1"
    }
  ]
}
```

If you do not need to call any tools, respond with plain text (no JSON block)."#;

/// A tool the model may call, as upstream lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolDefinition {
    pub name: String,
    /// Left out of the listing when absent, as `JSON.stringify` leaves out `undefined`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments' JSON Schema; `{}` when absent, as upstream lists a tool without a schema.
    #[serde(default)]
    pub parameters: Option<Map<String, Value>>,
}

/// How the thread is written into the prompt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputEncoding {
    /// `messagesToXml`: one `<thread>` document (upstream's default).
    #[default]
    Xml,
    /// `messagesToPrompt`: `[User]`-style labelled blocks.
    Text,
}

/// The prompt upstream's `buildPrompt` sends: with tools, `"[Available Tools]\n"` +
/// `JSON.stringify(tools, null, 2)` (each as `{name, description, parameters}`), a blank line,
/// [`TOOL_CALL_FORMAT`] and a blank line; then the messages in `encoding`. Without tools (none,
/// or an empty list) just the messages.
pub fn build_cli_prompt(messages: &[StoredMessage], tools: &[ToolDefinition], encoding: InputEncoding) -> String {
    let mut prompt = String::new();
    if !tools.is_empty() {
        let listed: Vec<Value> = tools.iter().map(listing).collect();
        prompt.push_str("[Available Tools]\n");
        prompt.push_str(&js_json::to_string_pretty(&Value::Array(listed)));
        prompt.push_str("\n\n");
        prompt.push_str(TOOL_CALL_FORMAT);
        prompt.push_str("\n\n");
    }
    prompt.push_str(&match encoding {
        InputEncoding::Xml => messages_to_xml(messages),
        InputEncoding::Text => messages_to_prompt(messages),
    });
    prompt
}

/// `{name, description, parameters}` in upstream's key order, whatever order the caller used.
fn listing(tool: &ToolDefinition) -> Value {
    let mut object = Map::new();
    object.insert("name".into(), Value::String(tool.name.clone()));
    if let Some(description) = &tool.description {
        object.insert("description".into(), Value::String(description.clone()));
    }
    object.insert("parameters".into(), Value::Object(tool.parameters.clone().unwrap_or_default()));
    Value::Object(object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(value: Value) -> ToolDefinition {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn without_tools_the_prompt_is_the_encoding() {
        let messages = [StoredMessage::human("Hi <b>")];
        assert_eq!(build_cli_prompt(&messages, &[], InputEncoding::Xml), messages_to_xml(&messages));
        assert_eq!(build_cli_prompt(&messages, &[], InputEncoding::Text), "[User]\nHi <b>");
    }

    #[test]
    fn tools_are_listed_in_upstream_key_order() {
        let tools = [
            tool(json!({"parameters": {"type": "object", "properties": {}}, "name": "ls", "description": "List."})),
            tool(json!({"name": "now"})),
        ];
        let prompt = build_cli_prompt(&[StoredMessage::human("x")], &tools, InputEncoding::Text);
        let expected = format!(
            "[Available Tools]\n[\n  {{\n    \"name\": \"ls\",\n    \"description\": \"List.\",\n    \"parameters\": {{\n      \
             \"type\": \"object\",\n      \"properties\": {{}}\n    }}\n  }},\n  {{\n    \"name\": \"now\",\n    \
             \"parameters\": {{}}\n  }}\n]\n\n{TOOL_CALL_FORMAT}\n\n[User]\nx"
        );
        assert_eq!(prompt, expected);
    }

    #[test]
    fn unknown_tool_fields_are_refused() {
        assert!(serde_json::from_value::<ToolDefinition>(json!({"name": "a", "schema": {}})).is_err());
    }
}
