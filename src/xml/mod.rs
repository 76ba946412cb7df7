//! The `<thread>` XML document: escaping, serialization (seed 000) and parsing.

mod escape;
mod serialize;

pub use escape::{escape_into, escape_xml, is_forbidden_char, EscapeMode};
pub use serialize::{serialize_thread_to_xml, XmlOptions, XmlRenderer};
mod parse_stub; pub use parse_stub::parse_thread_xml;
