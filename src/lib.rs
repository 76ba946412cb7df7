//! threadkeeper: agent threads kept, rendered and served.
//!
//! The pure core (no I/O) is the event model ([`event`]), the renderers of seeds 000–003
//! ([`xml`], [`messages`], [`convert`]), the turn documents of seed 004 ([`turns`]) and
//! [`js_json`]. Around it: [`store`] (where threads
//! live), [`service`] (open threads and their incremental renderings) and [`server`] (protocol
//! v1 over a byte stream). The binary adds the command line.

pub mod convert;
pub mod event;
pub mod js_json;
pub mod messages;
pub mod providers;
pub mod server;
pub mod service;
pub mod store;
pub mod turns;
pub mod xml;

pub use convert::{messages_to_prompt, messages_to_xml, parse_tool_calls, ParsedToolCall, ParsedToolCalls};
pub use event::{AgentEvent, EventError, EventKind, Role};
pub use messages::{
    build_messages, context_injection, system_message, ContextMode, DanglingToolCalls, MessageOptions, MessageType,
    StandardMessages, StoredMessage, ToolCall,
};
pub use providers::{render_request, Provider};
pub use xml::{
    escape_xml, parse_thread_document, parse_thread_xml, serialize_thread_to_xml, EscapeMode, ThreadDocument,
    XmlOptions, XmlParseError, XmlRenderer,
};
