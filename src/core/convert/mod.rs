//! Stateless conversions for CLI model providers (seed 003): stored messages to a `<thread>`
//! document or a labelled text prompt, and tool calls out of a model's text reply.

mod cli_prompt;
mod js_whitespace;
mod thread_splice;
mod to_prompt;
mod to_xml;
mod tool_calls;

pub use cli_prompt::{build_cli_prompt, InputEncoding, ToolDefinition, TOOL_CALL_FORMAT};
pub use to_prompt::messages_to_prompt;
pub use to_xml::messages_to_xml;
pub use tool_calls::{parse_tool_calls, ParsedToolCall, ParsedToolCalls};
