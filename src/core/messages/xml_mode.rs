//! XML context mode (seed 002): the system message, then the whole thread as one `<thread>`
//! document in a single human message.

use super::injection::ContextInjection;
use super::stored::StoredMessage;
use crate::event::AgentEvent;
use crate::xml::{EscapeMode, XmlRenderer};

/// `[system?, human(<thread> document + response prefix)]` of `events`.
pub fn xml_messages(
    events: &[AgentEvent],
    instructions: Option<&str>,
    response_prefix: Option<&str>,
    escape: EscapeMode,
) -> Vec<StoredMessage> {
    let mut injection = ContextInjection::new();
    injection.extend(events);
    let mut renderer = XmlRenderer::new(escape);
    renderer.extend(events);
    xml_messages_from(&injection, &renderer, instructions, response_prefix)
}

/// The XML-mode messages from state kept incrementally: the thread's injection and renderer.
pub fn xml_messages_from(
    injection: &ContextInjection,
    renderer: &XmlRenderer,
    instructions: Option<&str>,
    response_prefix: Option<&str>,
) -> Vec<StoredMessage> {
    let mut out = Vec::with_capacity(2);
    out.extend(injection.system_message(instructions));
    out.push(StoredMessage::human(renderer.document(response_prefix)));
    out
}
