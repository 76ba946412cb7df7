//! The `<thread>` XML document: escaping, serialization (seed 000) and parsing.

mod escape;
mod parse;
mod serialize;
mod to_events;
pub mod type_names;

pub use escape::{escape_into, escape_xml, is_forbidden_char, EscapeMode};
pub use parse::XmlParseError;
pub use serialize::{serialize_thread_to_xml, XmlOptions, XmlRenderer};
pub use to_events::{parse_thread_document, parse_thread_xml, ThreadDocument};
