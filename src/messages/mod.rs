//! Chat messages from a thread (seeds 001 and 002), in LangChain's stored-message form.

mod injection;
mod options;
mod standard;
mod stored;
mod xml_mode;

pub use injection::{context_injection, system_message, ContextInjection};
pub use options::{build_messages, ContextMode, MessageOptions};
pub use standard::{DanglingToolCalls, Entry, StandardMessages};
pub use stored::{MessageData, MessageType, StoredMessage, ToolCall};
pub use xml_mode::{xml_messages, xml_messages_from};
