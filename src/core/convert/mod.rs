//! Stateless conversions for CLI model providers (seed 003): stored messages to a `<thread>`
//! document or a labelled text prompt, and tool calls out of a model's text reply; and the
//! inverses of the renders: events from stored messages, from OpenAI Responses items, from AI
//! SDK model messages, from Pydantic AI messages, from Gemini contents or from Bedrock Converse
//! messages; and agent hosts' session files (Claude Code,
//! Codex) as threads.

mod ai_sdk_reasoning;
mod ai_sdk_shapes;
mod block_forms;
mod claude_code_media;
mod claude_code_tree;
mod cli_prompt;
mod from_ai_sdk;
mod from_bedrock_converse;
mod from_claude_code;
mod from_codex;
mod from_gemini;
mod from_messages;
mod from_pydantic_ai;
mod from_responses;
mod host_session;
mod input_fields;
mod js_whitespace;
mod kept_items;
mod kept_media;
mod langchain_reasoning;
mod media_blocks;
mod pydantic_ai_media;
mod session_media;
mod session_reader;
mod thread_splice;
mod to_prompt;
mod to_xml;
mod tool_calls;

pub use cli_prompt::{build_cli_prompt, InputEncoding, ToolDefinition, TOOL_CALL_FORMAT};
pub use from_ai_sdk::ai_sdk_to_events;
pub use from_bedrock_converse::bedrock_converse_to_events;
pub use from_claude_code::{CLAUDE_CODE_BLOCK_EVENT_TYPE, CLAUDE_CODE_KEY, CLAUDE_CODE_LINE_EVENT_TYPE};
pub use from_codex::CODEX_LINE_EVENT_TYPE;
pub use from_gemini::gemini_to_events;
pub use from_messages::{
    messages_to_events, messages_to_events_keeping_block_forms, EventStamp, KEPT_ITEM_EVENT_TYPE, KEPT_ITEM_KEY,
};
pub use from_pydantic_ai::pydantic_ai_to_events;
pub use from_responses::{responses_to_events, responses_to_events_keeping_items};
pub use host_session::{Branch, BranchKind, LeftOut, SessionError, SessionImport};
pub use kept_items::responses_from_events;
pub use kept_media::{kept_item_blobs, kept_media_from_blobs, kept_media_to_blobs, KEPT_ITEM_BLOBS_KEY};
pub use session_reader::{HostFormat, SessionReader};
pub use to_prompt::messages_to_prompt;
pub use to_xml::messages_to_xml;
pub use tool_calls::{parse_tool_calls, ParsedToolCall, ParsedToolCalls};
