//! Params shared by several method groups: a render's format and options (`thread/render`,
//! `thread/tokens`, `thread/view`, `prompt/cli`), and the render's token budget.

use crate::context::Tokenizer;
use crate::messages::{ContextMode, DanglingToolCalls};
use crate::providers::Provider;
use crate::server::errors::invalid_params;
use crate::service::{RenderFormat, RenderOptions};
use crate::xml::EscapeMode;
use jsonrpsee::types::ErrorObjectOwned;
use serde::Deserialize;

type RpcResult<T> = Result<T, ErrorObjectOwned>;

#[derive(Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub(super) enum Format {
    Xml,
    #[default]
    Messages,
    Text,
    #[serde(rename = "openai-chat")]
    OpenAiChat,
    #[serde(rename = "openai-responses")]
    OpenAiResponses,
    Anthropic,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct RenderOptionsParams {
    context_mode: Option<ContextMode>,
    instructions: Option<String>,
    response_prefix: Option<String>,
    #[serde(default)]
    escape: EscapeMode,
    /// Accepted for compatibility; rule 8b groups every call made while others are pending.
    #[serde(default, rename = "groupToolCalls")]
    _group_tool_calls: bool,
    #[serde(default)]
    dangling_tool_calls: DanglingToolCalls,
    from_event: Option<u64>,
    /// Render within a token budget (`thread/render` only).
    pub(super) budget: Option<BudgetParams>,
}

/// `thread/render`'s `options.budget`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct BudgetParams {
    pub(super) max_tokens: u64,
    #[serde(default)]
    pub(super) tokenizer: Tokenizer,
}

/// What `thread/render` (and `thread/tokens`) are asked for, checked.
pub(super) fn render_args(format: Format, o: RenderOptionsParams) -> RpcResult<(RenderFormat, RenderOptions)> {
    if o.from_event.is_some() && !matches!(format, Format::Xml) {
        return Err(invalid_params("options.fromEvent", "applies to format \"xml\" only"));
    }
    let format = match format {
        Format::Xml => RenderFormat::Xml,
        Format::Messages => RenderFormat::Messages,
        Format::Text => RenderFormat::Text,
        Format::OpenAiChat => RenderFormat::Provider(Provider::OpenAiChat),
        Format::OpenAiResponses => RenderFormat::Provider(Provider::OpenAiResponses),
        Format::Anthropic => RenderFormat::Provider(Provider::Anthropic),
    };
    let options = RenderOptions {
        from_event: o.from_event,
        context_mode: o.context_mode,
        instructions: o.instructions,
        response_prefix: o.response_prefix,
        escape: o.escape,
        dangling_tool_calls: o.dangling_tool_calls,
    };
    Ok((format, options))
}
