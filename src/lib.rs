//! threadkeeper: agent threads kept, rendered and served.
//!
//! The library is a pure core (no I/O): the event model, the renderers of seeds 000–003 and
//! the turn documents of seed 004. The binary wraps it in a CLI and a JSON-RPC sidecar.

pub mod convert;
pub mod event;
pub mod js_json;
pub mod messages;
pub mod xml;

pub use event::{AgentEvent, EventError, EventKind, Role};
pub use xml::{escape_xml, serialize_thread_to_xml, EscapeMode, XmlOptions, XmlRenderer};
pub use messages::{
    build_messages, context_injection, system_message, ContextMode, MessageOptions, MessageType, StandardMessages,
    StoredMessage, ToolCall,
};
pub use convert::{messages_to_prompt, messages_to_xml, parse_tool_calls, ParsedToolCall, ParsedToolCalls};
