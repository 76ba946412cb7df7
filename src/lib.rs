//! threadkeeper: agent threads kept, rendered and served.
//!
//! The library is a pure core (no I/O): the event model, the renderers of seeds 000–003 and
//! the turn documents of seed 004. The binary wraps it in a CLI and a JSON-RPC sidecar.

pub mod event;
pub mod js_json;
pub mod xml;

pub use event::{AgentEvent, EventError, EventKind, Role};
pub use xml::{
    escape_xml, parse_thread_document, parse_thread_xml, serialize_thread_to_xml, EscapeMode, ThreadDocument,
    XmlOptions, XmlParseError, XmlRenderer,
};
