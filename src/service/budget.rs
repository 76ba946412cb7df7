//! What a render within a budget is, and how a rendering is measured against it: shared by the
//! budgeted renders (`context`), the kept cuts they replay (`kept_cut`) and rolling plans.

use super::state::ThreadState;
use super::{RenderFormat, RenderOptions, Rendered};
use crate::context::{media_tokens, BudgetItem, MediaTokenRule, Tokenizer};
use crate::event::AgentEvent;
use crate::messages::ContextMode;
use serde_json::{Number, Value};

/// A render's token budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    pub max_tokens: u64,
    pub tokenizer: Tokenizer,
    /// Keep the cut until the rendering would exceed `max_tokens`, then drop to this many
    /// (see [`super::kept_cut`]); `None` finds the fewest iterations to drop at every render.
    pub drop_to: Option<u64>,
}

/// A render that fits its budget, and what it left out to fit.
#[derive(Clone, Debug, PartialEq)]
pub struct BudgetedRender {
    pub rendered: Rendered,
    pub dropped: Vec<Number>,
    pub tokens: u64,
}

/// The model input of a rendering, as the tokenizer sees it: the text of a text format, the
/// JSON text of a message format.
pub(super) fn model_input(rendered: &Rendered) -> &str {
    match rendered {
        Rendered::Xml { text, .. } | Rendered::Text { text, .. } => text,
        Rendered::Messages { json, .. } | Rendered::Provider { json, .. } => json,
        Rendered::XmlDelta { lines, .. } => lines,
    }
}

/// The tokens of `rendered`, a rendering of `state`: its model input's, with the media parts a
/// provider or messages rendering carries counted by their rule
/// ([`crate::context::media_tokens`]) instead of as their placeholder text.
pub(super) fn tokens_of(
    state: &ThreadState,
    format: RenderFormat,
    options: &RenderOptions,
    tokenizer: Tokenizer,
    rendered: &Rendered,
) -> u64 {
    let count = tokenizer.count(model_input(rendered));
    let name = match format {
        // XML and text renders name media and never carry them: their text is what counts.
        RenderFormat::Xml | RenderFormat::Text => return count,
        RenderFormat::Messages => "messages",
        RenderFormat::Provider(provider) => provider.name(),
    };
    let rule = options.media_tokens.unwrap_or_else(|| MediaTokenRule::default_for(name));
    let events = state.view_events_with_parts();
    if events.is_empty() {
        return count;
    }
    let mode = options.context_mode.or(state.record.settings.context_mode).unwrap_or_default();
    media_tokens::with_media(count, &events, mode == ContextMode::Xml, rule, tokenizer, options.provider.keep_images)
}

pub(super) fn budget_item(event: &AgentEvent) -> BudgetItem<'_> {
    let links_a_call = matches!(event.event_type(), "tool_call" | "tool_result" | "error");
    BudgetItem {
        iteration: event.iteration().as_f64().unwrap_or(0.0),
        is_summary: event.event_type() == "summary",
        tool_call_id: event.fields().get("toolCallId").and_then(Value::as_str).filter(|_| links_a_call),
    }
}
