//! `threadkeeper prompt`: the prompt a CLI model (seed 003) gets for a thread file.

use super::input::{display_name, read_events, read_source};
use clap::{Args, ValueEnum};
use threadkeeper::convert::{build_cli_prompt, InputEncoding, ToolDefinition};
use threadkeeper::{build_messages, MessageOptions};

#[derive(Args, Debug)]
pub struct PromptArgs {
    /// The tools the model may call: a JSON array of `{name, description?, parameters?}`.
    #[arg(long, value_name = "FILE")]
    tools: Option<String>,
    /// How the thread is written: a `<thread>` document, or `[User]`-style labelled text.
    #[arg(long, value_enum, default_value_t = Encoding::Xml)]
    input_encoding: Encoding,
    /// System instructions (joined after any summaries in the system message).
    #[arg(long, value_name = "TEXT")]
    instructions: Option<String>,
    /// Thread file: events as a JSON array or JSON Lines, or a turn document (YAML or JSON);
    /// `-` reads stdin.
    #[arg(value_name = "FILE")]
    file: String,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Encoding {
    Xml,
    Text,
}

pub fn run(args: PromptArgs) -> i32 {
    super::finish(prompt(&args))
}

fn prompt(args: &PromptArgs) -> Result<String, String> {
    let tools = match &args.tools {
        Some(path) => read_tools(path)?,
        None => Vec::new(),
    };
    let text = read_source(&args.file)?;
    let events = read_events(&text, display_name(&args.file))?;
    // The thread's standard-mode messages, as `render --format messages` gives them.
    let options = MessageOptions { instructions: args.instructions.clone(), ..MessageOptions::default() };
    let encoding = match args.input_encoding {
        Encoding::Xml => InputEncoding::Xml,
        Encoding::Text => InputEncoding::Text,
    };
    // Exactly the prompt, no trailing newline: byte-identical to upstream's.
    Ok(build_cli_prompt(&build_messages(&events, &options), &tools, encoding))
}

fn read_tools(path: &str) -> Result<Vec<ToolDefinition>, String> {
    let text = read_source(path)?;
    let mut de = serde_json::Deserializer::from_str(&text);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let at = e.path().to_string();
        let at = if at == "." { String::new() } else { format!("{at}: ") };
        let reason = e.inner().to_string();
        // serde_json's position means little next to the path; drop it.
        let reason = reason.rfind(" at line ").map_or(reason.as_str(), |i| &reason[..i]);
        format!("{}: not a list of tools ({{name, description?, parameters?}}): {at}{reason}", display_name(path))
    })
}
