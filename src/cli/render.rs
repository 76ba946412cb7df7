//! `threadkeeper render`: one thread file in, one rendering out.

use super::input::{display_name, read_events, read_source};
use clap::{Args, ValueEnum};
use threadkeeper::providers::anthropic::{CacheControl, CacheTtl};
use threadkeeper::providers::gemini::{self, Placeholder};
use threadkeeper::providers::openai_cache::{self, Breakpoints, CacheKey, Caching};
use threadkeeper::providers::reasoning::{ModelFamily, ReasoningReplay, Replay};
use threadkeeper::providers::{bedrock_converse, render_request_with, ProviderOptions};
use threadkeeper::{
    build_messages, messages_to_prompt, render_request, ContextMode, DanglingToolCalls, MessageOptions, Provider,
};
use threadkeeper::{serialize_thread_to_xml, EscapeMode, XmlOptions};

#[derive(Args, Debug)]
pub struct RenderArgs {
    /// What to print: the `<thread>` document, stored messages as JSON, or the text prompt.
    #[arg(long, value_enum, default_value_t = Format::Xml)]
    format: Format,
    /// How `messages` and `text` present the thread.
    #[arg(long, value_enum, default_value_t = Mode::Standard)]
    context_mode: Mode,
    /// System instructions (joined after any summaries in the system message).
    #[arg(long, value_name = "TEXT")]
    instructions: Option<String>,
    /// Text appended after `</thread>` on its own line.
    #[arg(long, value_name = "TEXT")]
    response_prefix: Option<String>,
    /// Body escaping: `full` escapes & < > " ', `minimal` only & < >.
    #[arg(long, value_enum, default_value_t = Escape::Full)]
    escape: Escape,
    /// Merge adjacent tool calls of one iteration into one AI message (kept for compatibility:
    /// calls made while others are unanswered always share one message).
    #[arg(long)]
    group_tool_calls: bool,
    /// Standard mode: answer a call that never got a result with an error tool message
    /// (`repair`), or leave the call out (`drop`).
    #[arg(long, value_enum, default_value_t = Dangling::Repair)]
    dangling_tool_calls: Dangling,
    /// `--format anthropic`, `openai-chat`, `openai-responses` or `bedrock-converse`: prompt
    /// caching (`auto`) or none (the default).
    #[arg(long, value_enum, value_name = "WHEN")]
    cache_control: Option<Cache>,
    /// The breakpoints' time to live (`5m`, `1h` for anthropic; `30m` for the OpenAI formats);
    /// implies `--cache-control auto`.
    #[arg(long, value_enum, value_name = "TTL")]
    cache_ttl: Option<Ttl>,
    /// OpenAI formats: the `prompt_cache_key` (1 to 64 bytes; default: a hash of the thread's
    /// first event); implies `--cache-control auto`.
    #[arg(long, value_name = "KEY")]
    cache_key: Option<String>,
    /// OpenAI formats: which breakpoints the request writes (default: threadkeeper's explicit
    /// ones and OpenAI's implicit one); implies `--cache-control auto`.
    #[arg(long, value_enum, value_name = "WHICH")]
    cache_breakpoints: Option<CacheBreakpoints>,
    /// Provider formats: give back the reasoning the provider requires (`auto`, the default),
    /// or none.
    #[arg(long, value_enum, value_name = "WHICH")]
    reasoning: Option<ReasoningFlag>,
    /// Provider formats: the model the request is for; reasoning another model family
    /// produced is left out.
    #[arg(long, value_name = "MODEL")]
    model: Option<String>,
    /// `--format gemini`: the signature an unsigned first call of a step in the current turn
    /// gets (default `skip_thought_signature_validator`; `none` leaves it unsigned).
    #[arg(long, value_enum, value_name = "VALUE")]
    thought_signature_placeholder: Option<PlaceholderFlag>,
    /// Thread file: events as a JSON array or JSON Lines, or a turn document (YAML or JSON);
    /// `-` reads stdin.
    #[arg(value_name = "FILE")]
    file: String,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Format {
    Xml,
    Messages,
    Text,
    /// OpenAI Chat Completions `{messages}`.
    OpenaiChat,
    /// OpenAI Responses `{instructions?, input}`.
    OpenaiResponses,
    /// Anthropic Messages `{system?, messages}`.
    Anthropic,
    /// Vercel AI SDK `{instructions?, messages}` (`ModelMessage[]`).
    AiSdk,
    /// Pydantic AI `{messages}` (`ModelMessagesTypeAdapter`'s JSON form).
    PydanticAi,
    /// Gemini `generateContent` `{contents, systemInstruction?}`.
    Gemini,
    /// Amazon Bedrock Converse `{messages, system?}`.
    BedrockConverse,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ReasoningFlag {
    Auto,
    None,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum PlaceholderFlag {
    #[value(name = "skip_thought_signature_validator")]
    SkipThoughtSignatureValidator,
    #[value(name = "context_engineering_is_the_way_to_go")]
    ContextEngineeringIsTheWayToGo,
    None,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Cache {
    None,
    Auto,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Ttl {
    #[value(name = "5m")]
    FiveMinutes,
    #[value(name = "1h")]
    OneHour,
    #[value(name = "30m")]
    ThirtyMinutes,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum CacheBreakpoints {
    Explicit,
    Implicit,
    None,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(super) enum Dangling {
    Repair,
    Drop,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(super) enum Mode {
    Standard,
    Xml,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(super) enum Escape {
    Full,
    Minimal,
}

// The command line's names for the core's option types (clap stays out of the core).
impl From<Dangling> for DanglingToolCalls {
    fn from(value: Dangling) -> Self {
        match value {
            Dangling::Repair => DanglingToolCalls::Repair,
            Dangling::Drop => DanglingToolCalls::Drop,
        }
    }
}

impl From<Mode> for ContextMode {
    fn from(value: Mode) -> Self {
        match value {
            Mode::Standard => ContextMode::Standard,
            Mode::Xml => ContextMode::Xml,
        }
    }
}

impl From<Escape> for EscapeMode {
    fn from(value: Escape) -> Self {
        match value {
            Escape::Full => EscapeMode::Full,
            Escape::Minimal => EscapeMode::Minimal,
        }
    }
}

pub fn run(args: RenderArgs) -> i32 {
    super::finish(render(&args))
}

/// The caching options the flags ask for; refused on a format no provider caches, as the
/// protocol does.
fn provider_options(args: &RenderArgs) -> Result<ProviderOptions, String> {
    let provider_format = !matches!(args.format, Format::Xml | Format::Messages | Format::Text);
    if !provider_format && (args.reasoning.is_some() || args.model.is_some()) {
        return Err("--reasoning and --model apply to the provider formats only".into());
    }
    let placeholder = match args.thought_signature_placeholder {
        _ if !matches!(args.format, Format::Gemini) && args.thought_signature_placeholder.is_some() => {
            return Err("--thought-signature-placeholder applies to --format gemini only".into())
        }
        None | Some(PlaceholderFlag::SkipThoughtSignatureValidator) => Placeholder::SkipValidator,
        Some(PlaceholderFlag::ContextEngineeringIsTheWayToGo) => Placeholder::ContextEngineering,
        Some(PlaceholderFlag::None) => Placeholder::None,
    };
    let replay = Replay {
        reasoning: match args.reasoning {
            Some(ReasoningFlag::None) => ReasoningReplay::None,
            _ => ReasoningReplay::Auto,
        },
        model: args.model.as_deref().map(ModelFamily::of).unwrap_or_default(),
    };
    let caching = caching_options(args)?;
    Ok(ProviderOptions { replay, gemini: gemini::Options { placeholder }, ..caching })
}

fn caching_options(args: &RenderArgs) -> Result<ProviderOptions, String> {
    let openai_only = args.cache_key.is_some() || args.cache_breakpoints.is_some();
    let asked = args.cache_control.is_some() || args.cache_ttl.is_some() || openai_only;
    match args.format {
        _ if !asked => Ok(ProviderOptions::default()),
        Format::Anthropic if openai_only => {
            Err("--cache-key and --cache-breakpoints apply to --format openai-chat and openai-responses only".into())
        }
        Format::Anthropic => anthropic_options(args),
        Format::OpenaiChat | Format::OpenaiResponses => openai_options(args),
        Format::BedrockConverse if openai_only || args.cache_ttl.is_some() => {
            Err("--format bedrock-converse takes --cache-control only".into())
        }
        Format::BedrockConverse => {
            let bedrock_cache = match args.cache_control {
                Some(Cache::Auto) => bedrock_converse::CacheControl::Auto,
                _ => bedrock_converse::CacheControl::None,
            };
            Ok(ProviderOptions { bedrock_cache, ..Default::default() })
        }
        _ => Err("--cache-control, --cache-ttl, --cache-key and --cache-breakpoints apply to --format anthropic, openai-chat, openai-responses and bedrock-converse only".into()),
    }
}

fn anthropic_options(args: &RenderArgs) -> Result<ProviderOptions, String> {
    let ttl = match args.cache_ttl {
        None => None,
        Some(Ttl::FiveMinutes) => Some(CacheTtl::FiveMinutes),
        Some(Ttl::OneHour) => Some(CacheTtl::OneHour),
        Some(_) => return Err("--cache-ttl: --format anthropic takes 5m or 1h".into()),
    };
    let cache_control = match (args.cache_control, ttl) {
        (Some(Cache::None), Some(_)) => return Err("--cache-ttl needs --cache-control auto, not none".into()),
        (Some(Cache::None), None) | (None, None) => CacheControl::None,
        (Some(Cache::Auto), ttl) | (None, ttl @ Some(_)) => CacheControl::Auto { ttl },
    };
    Ok(ProviderOptions { cache_control, ..Default::default() })
}

fn openai_options(args: &RenderArgs) -> Result<ProviderOptions, String> {
    let ttl = match args.cache_ttl {
        None => None,
        Some(Ttl::ThirtyMinutes) => Some(openai_cache::Ttl::ThirtyMinutes),
        Some(_) => return Err("--cache-ttl: the OpenAI formats take 30m".into()),
    };
    let key = match &args.cache_key {
        Some(key) => Some(CacheKey::new(key).ok_or("--cache-key: 1 to 64 bytes")?),
        None => None,
    };
    let breakpoints = match args.cache_breakpoints {
        None => Breakpoints::Auto,
        Some(CacheBreakpoints::Explicit) => Breakpoints::Explicit,
        Some(CacheBreakpoints::Implicit) => Breakpoints::Implicit,
        Some(CacheBreakpoints::None) => Breakpoints::None,
    };
    let others = ttl.is_some() || key.is_some() || args.cache_breakpoints.is_some();
    if args.cache_control == Some(Cache::None) && others {
        return Err("--cache-ttl, --cache-key and --cache-breakpoints need --cache-control auto, not none".into());
    }
    if breakpoints == Breakpoints::None && ttl.is_some() {
        return Err("--cache-ttl is sent in prompt_cache_options, which --cache-breakpoints none leaves out".into());
    }
    let openai_cache = match args.cache_control {
        Some(Cache::None) => openai_cache::CacheControl::None,
        _ => openai_cache::CacheControl::On(Caching { key, breakpoints, ttl }),
    };
    Ok(ProviderOptions { openai_cache, ..Default::default() })
}

fn render(args: &RenderArgs) -> Result<String, String> {
    let provider_options = provider_options(args)?;
    let text = read_source(&args.file)?;
    let events = read_events(&text, display_name(&args.file))?;
    let escape = args.escape.into();
    let options = MessageOptions {
        context_mode: args.context_mode.into(),
        instructions: args.instructions.clone(),
        response_prefix: args.response_prefix.clone(),
        group_tool_calls: args.group_tool_calls,
        dangling_tool_calls: args.dangling_tool_calls.into(),
        escape,
    };
    Ok(match args.format {
        Format::Xml => {
            let xml_options = XmlOptions { response_prefix: args.response_prefix.clone(), escape };
            // Exactly the document, no trailing newline: byte-identical to the reference.
            serialize_thread_to_xml(&events, &xml_options)
        }
        Format::Messages => {
            let messages = build_messages(&events, &options);
            let mut json = serde_json::to_string_pretty(&messages).map_err(|e| e.to_string())?;
            json.push('\n');
            json
        }
        Format::Text => messages_to_prompt(&build_messages(&events, &options)),
        Format::OpenaiChat => {
            with_newline(render_request_with(&events, &options, Provider::OpenAiChat, &provider_options, true))
        }
        Format::OpenaiResponses => {
            with_newline(render_request_with(&events, &options, Provider::OpenAiResponses, &provider_options, true))
        }
        Format::Anthropic => {
            with_newline(render_request_with(&events, &options, Provider::Anthropic, &provider_options, true))
        }
        Format::AiSdk => with_newline(render_request_with(&events, &options, Provider::AiSdk, &provider_options, true)),
        Format::PydanticAi => with_newline(render_request(&events, &options, Provider::PydanticAi, true)),
        Format::Gemini => {
            with_newline(render_request_with(&events, &options, Provider::Gemini, &provider_options, true))
        }
        Format::BedrockConverse => {
            with_newline(render_request_with(&events, &options, Provider::BedrockConverse, &provider_options, true))
        }
    })
}

fn with_newline(mut text: String) -> String {
    text.push('\n');
    text
}
