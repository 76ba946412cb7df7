//! Chat messages from a thread (seeds 001 and 002), in LangChain's stored-message form.

pub mod block_forms;
mod call_ids;
mod injection;
pub mod labels;
mod media_blocks;
mod options;
mod reasoning_blocks;
mod standard;
mod stored;
mod xml_mode;

pub use call_ids::{IdMap, IdRule};
pub use injection::{context_injection, system_message, ContextInjection};
pub use media_blocks::with_media_blocks;
pub use options::{build_messages, ContextMode, MessageOptions};
#[cfg(test)]
pub(crate) use reasoning_blocks::kept_block;
pub use reasoning_blocks::with_reasoning_blocks;
pub use standard::{is_blank, DanglingToolCalls, Entry, MessageRef, StandardMessages, CARRIED_KEY, OPENING_TEXT};
pub use stored::{Content, Extra, MessageData, MessageType, StoredMessage, ToolCall};
pub use xml_mode::{xml_messages, xml_messages_from};
