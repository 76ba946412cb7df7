//! threadkeeper: agent threads kept, rendered and served.
//!
//! Layers, each using only those below it:
//!
//! - [`server`]: protocol v1 over a byte stream — framing, the method table, lanes, cancellation;
//! - [`service`]: open threads, appends and incremental renders; knows nothing of JSON-RPC;
//! - [`store`]: where threads live — one trait, memory / SQLite / PostgreSQL;
//! - [`core`]: the pure renderers and models (no I/O).
//!
//! [`viewer`] serves a store's threads as live pages over HTTP (`threadkeeper view --serve`);
//! [`mcp`] serves a store's threads to agents over the Model Context Protocol (`threadkeeper mcp`);
//! [`otel`] sends threads as OpenTelemetry GenAI traces over OTLP (`serve --otlp-endpoint`).
//!
//! The binary (`src/main.rs`, `src/cli/`) adds the command line. The core's modules are also
//! reachable at the crate root (`threadkeeper::xml`, …).

pub mod core;
pub mod mcp;
pub mod otel;
pub mod server;
pub mod service;
pub mod store;
pub mod viewer;

pub use self::core::{
    context, convert, event, event_log, js_json, json_text, media, messages, providers, search, turns, view, xml,
};

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
