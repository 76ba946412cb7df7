//! `threadkeeper render`: one thread file in, one rendering out.

use super::input::{display_name, read_events, read_source};
use clap::{Args, ValueEnum};
use threadkeeper::providers::anthropic::{CacheControl, CacheTtl};
use threadkeeper::providers::{render_request_with, ProviderOptions};
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
    /// `--format anthropic`: mark prompt-caching breakpoints (`auto`) or none (the default).
    #[arg(long, value_enum, value_name = "WHEN")]
    cache_control: Option<Cache>,
    /// `--format anthropic`: the breakpoints' time to live; implies `--cache-control auto`.
    #[arg(long, value_enum, value_name = "TTL")]
    cache_ttl: Option<Ttl>,
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
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Cache {
    None,
    Auto,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Ttl {
    #[value(name = "5m")]
    FiveMinutes,
    #[value(name = "1h")]
    OneHour,
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

/// The Anthropic options the flags ask for; refused on any other format, as the protocol does.
fn provider_options(args: &RenderArgs) -> Result<ProviderOptions, String> {
    let asked = args.cache_control.is_some() || args.cache_ttl.is_some();
    if asked && !matches!(args.format, Format::Anthropic) {
        return Err("--cache-control and --cache-ttl apply to --format anthropic only".into());
    }
    let ttl = args.cache_ttl.map(|ttl| match ttl {
        Ttl::FiveMinutes => CacheTtl::FiveMinutes,
        Ttl::OneHour => CacheTtl::OneHour,
    });
    let cache_control = match (args.cache_control, ttl) {
        (Some(Cache::None), Some(_)) => return Err("--cache-ttl needs --cache-control auto, not none".into()),
        (Some(Cache::None), None) | (None, None) => CacheControl::None,
        (Some(Cache::Auto), ttl) | (None, ttl @ Some(_)) => CacheControl::Auto { ttl },
    };
    Ok(ProviderOptions { cache_control, ..ProviderOptions::default() })
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
        Format::OpenaiChat => with_newline(render_request(&events, &options, Provider::OpenAiChat, true)),
        Format::OpenaiResponses => with_newline(render_request(&events, &options, Provider::OpenAiResponses, true)),
        Format::Anthropic => {
            with_newline(render_request_with(&events, &options, Provider::Anthropic, &provider_options, true))
        }
        Format::AiSdk => with_newline(render_request(&events, &options, Provider::AiSdk, true)),
        Format::PydanticAi => with_newline(render_request(&events, &options, Provider::PydanticAi, true)),
    })
}

fn with_newline(mut text: String) -> String {
    text.push('\n');
    text
}
