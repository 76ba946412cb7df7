//! Provider projections: the rendered conversation in the request form each model API takes.
//!
//! Every projection starts from the repaired standard-mode entries (or, in XML context mode,
//! the one human message holding the `<thread>` document), so the sequencing rules every
//! provider shares — each call answered right after it, no orphan answers, unique ids — hold
//! before a projection starts; each module then adds only its provider's own rules.
//!
//! | format | module | shape |
//! |---|---|---|
//! | `openai-chat` | [`openai_chat`] | `{messages}` (Chat Completions) |
//! | `openai-responses` | [`openai_responses`] | `{instructions?, input}` (Responses API) |
//! | `anthropic` | [`anthropic`] | `{system?, messages}` (Messages API) |
//! | `ai-sdk` | [`ai_sdk`] | `{instructions?, messages}` (Vercel AI SDK `ModelMessage[]`) |
//! | `pydantic-ai` | [`pydantic_ai`] | `{messages}` (Pydantic AI's `ModelMessagesTypeAdapter` form) |
//! | `gemini` | [`gemini`] | `{contents, systemInstruction?}` (Gemini `generateContent`) |
//! | `bedrock-converse` | [`bedrock_converse`] | `{messages, system?}` (Amazon Bedrock Converse) |
//!
//! Media parts go out in each provider's own form ([`media_parts`]), their bytes taken from the
//! render's [`MediaBytes`] only now; a part whose bytes are not at hand, or that the provider
//! cannot take, is its placeholder text, as in the XML document. Reasoning goes back to the
//! provider that produced it, and to no other ([`reasoning`]).

pub mod ai_sdk;
pub mod ai_sdk_media;
mod ai_sdk_signed;
pub mod anthropic;
pub mod bedrock_converse;
pub mod cache_points;
pub mod gemini;
pub mod keep_images;
pub mod media_parts;
pub mod openai_cache;
pub mod openai_chat;
pub mod openai_responses;
pub mod pydantic_ai;
mod pydantic_ai_media;
pub mod reasoning;
pub mod xml_blocks;

use crate::event::AgentEvent;
use crate::media::bytes::NO_MEDIA;
use crate::media::MediaBytes;
use crate::messages::{xml_messages, ContextMode, Entry, MessageOptions, MessageRef, StandardMessages, StoredMessage};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A provider's request form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Provider {
    #[serde(rename = "openai-chat")]
    OpenAiChat,
    #[serde(rename = "openai-responses")]
    OpenAiResponses,
    #[serde(rename = "anthropic")]
    Anthropic,
    #[serde(rename = "ai-sdk")]
    AiSdk,
    #[serde(rename = "pydantic-ai")]
    PydanticAi,
    #[serde(rename = "gemini")]
    Gemini,
    #[serde(rename = "bedrock-converse")]
    BedrockConverse,
}

impl Provider {
    pub const ALL: [Provider; 7] = [
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
        Provider::Anthropic,
        Provider::AiSdk,
        Provider::PydanticAi,
        Provider::Gemini,
        Provider::BedrockConverse,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Provider::OpenAiChat => "openai-chat",
            Provider::OpenAiResponses => "openai-responses",
            Provider::Anthropic => "anthropic",
            Provider::AiSdk => "ai-sdk",
            Provider::PydanticAi => "pydantic-ai",
            Provider::Gemini => "gemini",
            Provider::BedrockConverse => "bedrock-converse",
        }
    }
}

/// One projected request body, borrowing from the entries it was made of.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ProviderRequest<'a> {
    OpenAiChat(openai_chat::Request<'a>),
    OpenAiResponses(openai_responses::Request<'a>),
    Anthropic(anthropic::Request<'a>),
    AiSdk(ai_sdk::Request<'a>),
    PydanticAi(pydantic_ai::Request),
    Gemini(gemini::Request<'a>),
    BedrockConverse(bedrock_converse::Request<'a>),
}

/// Projects `system` (the system message's text, if any) and the conversation for `provider`.
/// Pydantic AI's fields kept on events are not seen here: [`render_request`] and the server's
/// renders pass them to [`pydantic_ai::project`].
pub fn project<'a>(provider: Provider, system: Option<&'a str>, entries: &'a [Entry<'a>]) -> ProviderRequest<'a> {
    project_with(provider, system, entries, &ProviderOptions::default(), &NO_MEDIA)
}

/// What a projection takes besides the conversation; each option belongs to one provider.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ProviderOptions {
    /// `anthropic` only: prompt-caching breakpoints.
    pub cache_control: anthropic::CacheControl,
    /// `openai-chat` and `openai-responses` only: the cache key, breakpoints and options.
    pub openai_cache: openai_cache::CacheControl,
    /// How many messages at the front of the conversation later compaction rounds keep as
    /// they are (rolling summaries): a prefix worth its own breakpoint. Set from the thread,
    /// not by the host.
    pub stable_prefix: usize,
    /// Which reasoning goes back (`options.reasoning`, `options.model`).
    pub replay: reasoning::Replay,
    /// `gemini` only: the signature an unsigned call of the current turn gets.
    pub gemini: gemini::Options,
    /// `bedrock-converse` only: `cachePoint` blocks.
    pub bedrock_cache: bedrock_converse::CacheControl,
    /// Every format that carries image bytes: only the newest images go with them
    /// (`options.media.keepImages`, [`keep_images`]).
    pub keep_images: Option<keep_images::KeepImages>,
}

impl ProviderOptions {
    /// With the thread's cache key where the host gave none.
    pub fn for_thread(self, thread_id: &str) -> ProviderOptions {
        ProviderOptions { openai_cache: self.openai_cache.for_thread(thread_id), ..self }
    }
}

/// [`project`] with the provider's options and the bytes of the media the entries name.
pub fn project_with<'a>(
    provider: Provider,
    system: Option<&'a str>,
    entries: &'a [Entry<'a>],
    options: &ProviderOptions,
    media: &'a MediaBytes,
) -> ProviderRequest<'a> {
    match provider {
        Provider::OpenAiChat => ProviderRequest::OpenAiChat(openai_chat::project_cached(
            system,
            entries,
            media,
            options.openai_cache,
            options.stable_prefix,
        )),
        Provider::OpenAiResponses => ProviderRequest::OpenAiResponses(openai_responses::project_cached(
            system,
            entries,
            media,
            options.openai_cache,
            options.stable_prefix,
            &options.replay,
        )),
        Provider::Anthropic => ProviderRequest::Anthropic(anthropic::project_cached(
            system,
            entries,
            media,
            options.cache_control,
            options.stable_prefix,
            &options.replay,
        )),
        Provider::AiSdk => ProviderRequest::AiSdk(ai_sdk::project(system, entries, media)),
        Provider::PydanticAi => {
            ProviderRequest::PydanticAi(pydantic_ai::project(system, entries, pydantic_ai::Kept::default(), media))
        }
        Provider::Gemini => ProviderRequest::Gemini(gemini::project(system, entries, options, media)),
        Provider::BedrockConverse => ProviderRequest::BedrockConverse(bedrock_converse::project_cached(
            system,
            entries,
            media,
            options.bedrock_cache,
            options.stable_prefix,
            &options.replay,
        )),
    }
}

/// Tool arguments as OpenAI carries them: `JSON.stringify(args)`.
fn arguments(args: &Map<String, Value>) -> String {
    let mut out = String::new();
    crate::js_json::write_object(&mut out, args);
    out
}

/// The request body of `provider` as JSON text (two-space indented when `pretty`).
pub fn to_json(
    provider: Provider,
    system: Option<&str>,
    entries: &[Entry<'_>],
    options: &ProviderOptions,
    media: &MediaBytes,
    pretty: bool,
) -> String {
    if options.replay.reasoning == reasoning::ReasoningReplay::None {
        // `reasoning: "none"`: the thread without its reasoning, whatever a format would replay.
        let kept: Vec<Entry<'_>> = entries.iter().filter(|entry| entry.message().is_some()).cloned().collect();
        let options = ProviderOptions { replay: reasoning::Replay::default(), ..*options };
        return to_json(provider, system, &kept, &options, media, pretty);
    }
    if let Some(kept) = options.keep_images.and_then(|keep| keep_images::apply(entries, keep)) {
        let options = ProviderOptions { keep_images: None, ..*options };
        return to_json(provider, system, &kept, &options, media, pretty);
    }
    let request = project_with(provider, system, entries, options, media);
    let text = if pretty { serde_json::to_string_pretty(&request) } else { serde_json::to_string(&request) };
    text.expect("projections serialize")
}

/// The request body of `provider` in XML context mode: the system prompt and the `<thread>`
/// document. Under prompt caching with breakpoints (`anthropic`'s, or OpenAI's explicit ones)
/// the document goes out in blocks ([`xml_blocks`]); otherwise as one user message, as ever.
/// `media_after` are the media parts the document names (by blob, once each, in order): those
/// whose bytes are in `media` follow the document in the same user message, each after a text
/// part naming it, so the model can tie them to the document's placeholders.
pub fn xml_to_json(
    provider: Provider,
    system: Option<&str>,
    document: String,
    media_after: &[Value],
    media: &MediaBytes,
    options: &ProviderOptions,
    pretty: bool,
) -> String {
    let media_after = &xml_media_parts(&keep_images::after_document(media_after, options.keep_images), media);
    let request = match provider {
        Provider::Anthropic => match options.cache_control {
            anthropic::CacheControl::Auto { ttl } => {
                let mark = anthropic::CacheMark { kind: anthropic::Ephemeral::Ephemeral, ttl };
                let blocks = xml_blocks::split(&document);
                Some(ProviderRequest::Anthropic(anthropic::project_xml(system, &blocks, media_after, media, mark)))
            }
            anthropic::CacheControl::None => None,
        },
        Provider::OpenAiChat | Provider::OpenAiResponses => match options.openai_cache.fields() {
            Some((fields, true)) => {
                let blocks = xml_blocks::split(&document);
                Some(match provider {
                    Provider::OpenAiChat => ProviderRequest::OpenAiChat(openai_chat::project_xml(
                        system,
                        &blocks,
                        media_after,
                        media,
                        fields,
                    )),
                    _ => ProviderRequest::OpenAiResponses(openai_responses::project_xml(
                        system,
                        &blocks,
                        media_after,
                        media,
                        fields,
                    )),
                })
            }
            _ => None,
        },
        Provider::BedrockConverse => match options.bedrock_cache {
            bedrock_converse::CacheControl::Auto => Some(ProviderRequest::BedrockConverse(
                bedrock_converse::project_xml(system, &xml_blocks::split(&document), media_after, media),
            )),
            bedrock_converse::CacheControl::None => None,
        },
        Provider::AiSdk | Provider::PydanticAi | Provider::Gemini => None,
    };
    if let Some(request) = request {
        let text = if pretty { serde_json::to_string_pretty(&request) } else { serde_json::to_string(&request) };
        return text.expect("projections serialize");
    }
    let message = if media_after.is_empty() {
        StoredMessage::human(document)
    } else {
        let mut parts = vec![serde_json::json!({"type": "text", "text": document})];
        parts.extend(media_after.iter().cloned());
        StoredMessage::with_parts(crate::messages::MessageType::Human, parts)
    };
    let entries = [Entry::Message(MessageRef::Made(Box::new(message)))];
    to_json(provider, system, &entries, options, media, pretty)
}

/// The parts that follow an XML document: each media part whose bytes are at hand, after a
/// text part naming it (`Media <placeholder>:`). Empty when none is, so the request is the
/// document alone, as before.
pub fn xml_media_parts(named: &[Value], media: &MediaBytes) -> Vec<Value> {
    let mut out = Vec::new();
    for part in crate::media::Part::all(named) {
        let crate::media::Part::Media(part) = part else { continue };
        if part.blob().is_some_and(|id| media.contains(id)) {
            out.push(serde_json::json!({"type": "text", "text": format!("Media {}:", part.placeholder())}));
            out.push(Value::Object(part.fields.clone()));
        }
    }
    out
}

/// One-shot: the request body of `provider` for `events` under `options`.
pub fn render_request(events: &[AgentEvent], options: &MessageOptions, provider: Provider, pretty: bool) -> String {
    render_request_with(events, options, provider, &ProviderOptions::default(), pretty)
}

/// [`render_request`] with the provider's options.
pub fn render_request_with(
    events: &[AgentEvent],
    options: &MessageOptions,
    provider: Provider,
    provider_options: &ProviderOptions,
    pretty: bool,
) -> String {
    render_request_with_media(events, options, provider, provider_options, &NO_MEDIA, pretty)
}

/// [`render_request_with`], carrying the media whose bytes are in `media`.
pub fn render_request_with_media(
    events: &[AgentEvent],
    options: &MessageOptions,
    provider: Provider,
    provider_options: &ProviderOptions,
    media: &MediaBytes,
    pretty: bool,
) -> String {
    let instructions = options.instructions.as_deref();
    // A thread file has no id: its first event, which appends never change, stands for it.
    let thread = events.first().map(|event| serde_json::to_string(event.fields()).expect("events serialize"));
    let provider_options = &provider_options.for_thread(thread.as_deref().unwrap_or_default());
    match options.context_mode {
        ContextMode::Standard => {
            let mut builder = StandardMessages::new();
            builder.extend(events);
            let system = builder.system_message(instructions);
            let entries = builder.entries(options.dangling_tool_calls);
            let system = system.as_ref().and_then(|m| m.content_str());
            if provider == Provider::PydanticAi {
                // `reasoning: "none"`: no thinking parts, as in every other format.
                let entries = match provider_options.replay.reasoning {
                    reasoning::ReasoningReplay::None => entries.into_iter().filter(|e| e.message().is_some()).collect(),
                    reasoning::ReasoningReplay::Auto => entries,
                };
                let entries = keep_images::apply_or_keep(entries, provider_options.keep_images);
                return pydantic_ai::to_json(system, &entries, pydantic_ai::Kept::of(events), media, pretty);
            }
            let provider_options = ProviderOptions { stable_prefix: builder.leading_summaries(), ..*provider_options };
            to_json(provider, system, &entries, &provider_options, media, pretty)
        }
        ContextMode::Xml => {
            let mut messages = xml_messages(events, instructions, options.response_prefix.as_deref(), options.escape);
            let document = messages.pop().expect("XML mode always has the document message");
            let document = document.content_str().expect("the document is text").to_owned();
            let system = messages.pop();
            let named = crate::media::parts::media_named_once(events);
            let system = system.as_ref().and_then(|m| m.content_str());
            xml_to_json(provider, system, document, &named, media, provider_options, pretty)
        }
    }
}
