//! Params shared by several method groups: a render's format and options (`thread/render`,
//! `thread/tokens`, `thread/view`, `prompt/cli`), and the render's token budget.

use super::cache_control::{provider_options, CacheFormat};
use crate::context::Tokenizer;
use crate::messages::{ContextMode, DanglingToolCalls};
use crate::providers::gemini::{self, Placeholder};
use crate::providers::keep_images::KeepImages;
use crate::providers::reasoning::{ModelFamily, ReasoningReplay, Replay};
use crate::providers::Provider;
use crate::server::errors::invalid_params;
use crate::service::{RenderFormat, RenderOptions};
use crate::xml::EscapeMode;
use jsonrpsee::types::ErrorObjectOwned;
use serde::Deserialize;
use serde_json::Value;

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
    #[serde(rename = "ai-sdk")]
    AiSdk,
    #[serde(rename = "pydantic-ai")]
    PydanticAi,
    Gemini,
    #[serde(rename = "bedrock-converse")]
    BedrockConverse,
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
    /// `anthropic`, `openai-chat`, `openai-responses` and `bedrock-converse` only; read by
    /// [`provider_options`].
    cache_control: Option<Value>,
    /// How counts measure media parts (`anthropic`, `openai-tiles`, `openai-patches`, …).
    media_tokens: Option<crate::context::MediaTokenRule>,
    /// What media a render carries (`keepImages`).
    media: Option<MediaParams>,
    /// Provider formats only: which reasoning goes back.
    reasoning: Option<ReasoningReplay>,
    /// Provider formats only: the model the request is for (its family filters reasoning).
    model: Option<String>,
    /// `gemini` only: what an unsigned first call of a step in the current turn carries.
    thought_signature_placeholder: Option<Placeholder>,
    /// Render within a token budget (`thread/render` only).
    pub(super) budget: Option<BudgetParams>,
}

/// `options.media`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct MediaParams {
    /// Checked by [`keep_images`], for a message naming the range.
    keep_images: Option<Value>,
}

/// `options.media.keepImages`: an integer from 1 to [`KeepImages::MAX`].
fn keep_images(media: Option<&MediaParams>) -> RpcResult<Option<KeepImages>> {
    let Some(value) = media.and_then(|media| media.keep_images.as_ref()) else { return Ok(None) };
    match value.as_u64().and_then(KeepImages::new) {
        Some(keep) => Ok(Some(keep)),
        None => Err(invalid_params(
            "options.media.keepImages",
            &format!("expected an integer from 1 to {}, found {value}", KeepImages::MAX),
        )),
    }
}

/// `thread/render`'s `options.budget`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct BudgetParams {
    pub(super) max_tokens: u64,
    #[serde(default)]
    pub(super) tokenizer: Tokenizer,
    /// Keep the cut until over `maxTokens`, then drop to this many (at most `maxTokens`).
    pub(super) drop_to: Option<u64>,
}

/// What `thread/render` (and `thread/tokens`) are asked for, checked.
pub(super) fn render_args(format: Format, o: RenderOptionsParams) -> RpcResult<(RenderFormat, RenderOptions)> {
    if o.from_event.is_some() && !matches!(format, Format::Xml) {
        return Err(invalid_params("options.fromEvent", "applies to format \"xml\" only"));
    }
    if matches!(format, Format::Xml | Format::Messages | Format::Text) {
        if o.reasoning.is_some() {
            return Err(invalid_params("options.reasoning", "applies to the provider formats only"));
        }
        if o.model.is_some() {
            return Err(invalid_params("options.model", "applies to the provider formats only"));
        }
    }
    if o.thought_signature_placeholder.is_some() && !matches!(format, Format::Gemini) {
        return Err(invalid_params("options.thoughtSignaturePlaceholder", "applies to format \"gemini\" only"));
    }
    let cache_format = match format {
        Format::Anthropic => CacheFormat::Anthropic,
        Format::OpenAiChat | Format::OpenAiResponses => CacheFormat::OpenAi,
        Format::BedrockConverse => CacheFormat::Bedrock,
        _ => CacheFormat::Other,
    };
    let mut provider = provider_options(cache_format, o.cache_control.as_ref())?;
    provider.replay = Replay {
        reasoning: o.reasoning.unwrap_or_default(),
        model: o.model.as_deref().map(ModelFamily::of).unwrap_or_default(),
    };
    provider.keep_images = keep_images(o.media.as_ref())?;
    provider.gemini = gemini::Options { placeholder: o.thought_signature_placeholder.unwrap_or_default() };
    let format = match format {
        Format::Xml => RenderFormat::Xml,
        Format::Messages => RenderFormat::Messages,
        Format::Text => RenderFormat::Text,
        Format::OpenAiChat => RenderFormat::Provider(Provider::OpenAiChat),
        Format::OpenAiResponses => RenderFormat::Provider(Provider::OpenAiResponses),
        Format::Anthropic => RenderFormat::Provider(Provider::Anthropic),
        Format::AiSdk => RenderFormat::Provider(Provider::AiSdk),
        Format::PydanticAi => RenderFormat::Provider(Provider::PydanticAi),
        Format::Gemini => RenderFormat::Provider(Provider::Gemini),
        Format::BedrockConverse => RenderFormat::Provider(Provider::BedrockConverse),
    };
    let options = RenderOptions {
        from_event: o.from_event,
        context_mode: o.context_mode,
        instructions: o.instructions,
        response_prefix: o.response_prefix,
        escape: o.escape,
        dangling_tool_calls: o.dangling_tool_calls,
        provider,
        media_tokens: o.media_tokens,
    };
    Ok((format, options))
}
