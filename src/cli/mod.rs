//! Command-line interface: `serve` (the default), `render`, `convert`, `prompt`, `view`,
//! `export`, `import`, `mcp`.

mod convert;
mod document;
mod export;
mod import;
mod input;
mod mcp;
mod prompt;
mod render;
mod search;
mod serve;
mod view;
mod view_serve;

use clap::{Parser, Subcommand};

/// Keeps agent threads and renders them as XML or chat messages, incrementally.
///
/// Run with no subcommand to serve protocol v1 (JSON-RPC 2.0) on stdin/stdout.
#[derive(Parser, Debug)]
#[command(name = "threadkeeper", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: serve::ServeArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Serve protocol v1 (JSON-RPC 2.0, LSP or NDJSON framing) on stdin/stdout.
    Serve(serve::ServeArgs),
    /// Render a thread file (events as a JSON array or JSON Lines, or a turn document) to stdout.
    Render(render::RenderArgs),
    /// Convert a thread between events and turn documents (YAML or JSON).
    Convert(convert::ConvertArgs),
    /// Print the prompt a CLI model gets for a thread file: the tools and how to call them,
    /// then the thread as XML or text.
    Prompt(prompt::PromptArgs),
    /// Write a thread file or a stored thread as one self-contained HTML page: a timeline by
    /// iteration, tool calls beside their results, and the model input; or, with `--serve`,
    /// serve every thread of a store as live pages.
    View(view::ViewArgs),
    /// Send a thread file or a stored thread as OpenTelemetry GenAI traces to an OTLP/HTTP
    /// backend: the spans `serve --otlp-endpoint` sends for it live.
    Export(export::ExportArgs),
    /// Import an agent host's session file (Claude Code, Codex) into a store as a thread; with
    /// `--follow`, keep appending what the host writes to it.
    Import(import::ImportArgs),
    /// Serve a store's threads to agents over the Model Context Protocol (stdio): tools to
    /// list and read threads in token-bounded pages, and each thread as a resource.
    Mcp(mcp::McpArgs),
    /// Search every thread of a store: hits as `threadId:eventIndex` with their snippets.
    Search(search::SearchArgs),
}

/// Prints a one-shot command's output, or its error as one line on stderr; the exit status:
/// 0, 2 for bad input (nothing on stdout then), 1 when stdout cannot be written.
fn finish(result: Result<String, String>) -> i32 {
    use std::io::Write;
    match result {
        Ok(output) => {
            let mut stdout = std::io::stdout().lock();
            match stdout.write_all(output.as_bytes()).and_then(|_| stdout.flush()) {
                Ok(()) => 0,
                Err(_) => 1,
            }
        }
        Err(message) => {
            eprintln!("threadkeeper: {message}");
            2
        }
    }
}

/// The runtime of a command that does one job and ends: one thread is all it needs.
fn command_runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(runtime_error)
}

/// The runtime of a command that serves until it is stopped (`serve`, `mcp`, `view --serve`).
fn serving_runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(runtime_error)
}

fn runtime_error(e: std::io::Error) -> String {
    format!("cannot start the runtime: {e}")
}

/// Why a store given on the command line could not be opened, as the command says it.
fn cannot_open_store(spec: &threadkeeper::store::StoreSpec, e: threadkeeper::store::StoreError) -> String {
    let reason = match e {
        threadkeeper::store::StoreError::Unavailable(reason) => reason,
        other => other.to_string(),
    };
    format!("cannot open the store {spec}: {reason}")
}

/// Runs the command; returns the process exit status.
pub fn run(cli: Cli) -> i32 {
    match cli.command {
        None => serve::run(cli.serve),
        Some(Command::Serve(args)) => serve::run(args),
        Some(Command::Render(args)) => render::run(args),
        Some(Command::Convert(args)) => convert::run(args),
        Some(Command::Prompt(args)) => prompt::run(args),
        Some(Command::View(args)) => view::run(args),
        Some(Command::Export(args)) => export::run(args),
        Some(Command::Import(args)) => import::run(args),
        Some(Command::Mcp(args)) => mcp::run(args),
        Some(Command::Search(args)) => search::run(args),
    }
}
