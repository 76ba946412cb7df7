//! `threadkeeper convert`: threads between events (JSON/JSON Lines) and turn documents.

use super::input::{display_name, read_events, read_source, read_thread, Source};
use clap::{Args, ValueEnum};
use threadkeeper::turns::{self, Format, Options, TurnDocument};

#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// Output: a turn document in YAML or JSON, or the events as a JSON array.
    #[arg(long, value_enum)]
    to: Target,
    /// Replace `encrypted_content` with a placeholder of the same shape.
    #[arg(long)]
    redact_encrypted_content: bool,
    /// Leave the turn's `data` map out.
    #[arg(long)]
    omit_data: bool,
    /// Thread id written as the turn id when converting events (default: the file name).
    #[arg(long, value_name = "ID")]
    id: Option<String>,
    /// Input: events (JSON array or JSON Lines) or a turn document (YAML or JSON); `-` is stdin.
    #[arg(value_name = "FILE")]
    file: String,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Target {
    Yaml,
    Json,
    Events,
}

pub fn run(args: ConvertArgs) -> i32 {
    super::finish(convert(&args))
}

fn convert(args: &ConvertArgs) -> Result<String, String> {
    let text = read_source(&args.file)?;
    let name = display_name(&args.file);
    let options = Options { redact_encrypted_content: args.redact_encrypted_content, omit_data: args.omit_data };
    let format = match args.to {
        Target::Events => {
            let events = read_events(&text, name)?;
            let values: Vec<_> = events.iter().map(|e| e.fields()).collect();
            let mut json = serde_json::to_string_pretty(&values).map_err(|e| e.to_string())?;
            json.push('\n');
            return Ok(json);
        }
        Target::Yaml => Format::Yaml,
        Target::Json => Format::Json,
    };
    let document = match read_thread(&text, name)? {
        Source::Turn(document) => *document,
        Source::Events(events) => {
            let id = args.id.clone().unwrap_or_else(|| default_id(&args.file));
            TurnDocument::Turn(turns::events_to_turn(&events, &id))
        }
    };
    turns::write_document(&document, format, &options).map_err(|e| format!("{name}: {e}"))
}

/// The file's stem, as a turn id for events that carry none.
fn default_id(path: &str) -> String {
    std::path::Path::new(path)
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| path != "-" && !s.is_empty())
        .unwrap_or("thread")
        .to_string()
}
