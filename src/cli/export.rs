//! `threadkeeper export --otlp URL`: a thread's traces, sent once to an OTLP/HTTP backend;
//! `threadkeeper export --format yaml|json --thread ID`: a stored thread's turn document.

use super::document::BlobsArg;
use super::input::{display_name, read_events, read_source};
use clap::Args;
use std::path::Path;
use threadkeeper::core::trace::TraceOptions;
use threadkeeper::otel::{backfill, trace_options, OtlpSettings};
use threadkeeper::store::{open_store, StoreSpec};
use threadkeeper::AgentEvent;

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// Thread file: events as a JSON array or JSON Lines, or a turn document; `-` reads stdin.
    // Not in conflict with `--store`: THREADKEEPER_STORE in the environment counts as given.
    #[arg(value_name = "FILE", required_unless_present = "thread")]
    file: Option<String>,
    /// A stored thread to send (with `--store`, as `serve` takes it); with FILE, the thread id
    /// its spans carry (default: the file's name without its extension).
    #[arg(long, value_name = "ID")]
    thread: Option<String>,
    /// The store holding `--thread` (default: the default store of `serve`); not read with FILE.
    #[arg(long, env = "THREADKEEPER_STORE", value_name = "STORE")]
    store: Option<StoreSpec>,
    /// The OTLP/HTTP base URL to send to (spans go to URL/v1/traces), as `serve
    /// --otlp-endpoint` takes it.
    #[arg(long, value_name = "URL", required_unless_present = "format", conflicts_with = "format")]
    otlp: Option<String>,
    /// Write the stored thread `--thread` as a turn document in this format, to stdout or
    /// `--output`, instead of sending traces.
    #[arg(long, value_enum, requires = "thread", conflicts_with = "file")]
    format: Option<DocumentFormat>,
    /// With `--format`: media inline (base64 in the document), as blob ids (refs), or as ids
    /// with each blob's bytes written to `--blobs-dir` (dir).
    #[arg(long, value_enum, default_value = "inline", requires = "format")]
    blobs: BlobsArg,
    /// With `--blobs dir`: the folder blob files are written to, one per blob named by its hash.
    #[arg(long, value_name = "DIR", requires = "format")]
    blobs_dir: Option<std::path::PathBuf>,
    /// With `--format`: the file to write the document to (default: stdout).
    #[arg(long, value_name = "FILE", requires = "format")]
    output: Option<std::path::PathBuf>,
    /// Put the thread's text in the spans, as `serve --otlp-capture-content`.
    #[arg(long)]
    otlp_capture_content: bool,
}

/// The formats a turn document is written in.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum DocumentFormat {
    Yaml,
    Json,
}

impl From<DocumentFormat> for threadkeeper::turns::Format {
    fn from(format: DocumentFormat) -> Self {
        match format {
            DocumentFormat::Yaml => threadkeeper::turns::Format::Yaml,
            DocumentFormat::Json => threadkeeper::turns::Format::Json,
        }
    }
}

/// `export --format`: the stored thread's document, written out.
fn export_document(args: &ExportArgs, format: DocumentFormat) -> i32 {
    let thread_id = args.thread.as_deref().expect("clap requires --thread with --format");
    let runtime = match super::command_runtime() {
        Ok(runtime) => runtime,
        Err(message) => return super::finish(Err(message)),
    };
    let written = runtime.block_on(async {
        let spec = args.store.clone().unwrap_or_default();
        let store = open_store(&spec, u64::MAX).await.map_err(|e| format!("cannot open the store {spec}: {e}"))?;
        let service = threadkeeper::service::ThreadService::new(store, Default::default());
        let text =
            super::document::export(&service, thread_id, format.into(), args.blobs, args.blobs_dir.as_deref()).await?;
        match &args.output {
            Some(path) => {
                std::fs::write(path, &text).map(|_| String::new()).map_err(|e| format!("{}: {e}", path.display()))
            }
            None => Ok(text),
        }
    });
    super::finish(written)
}

pub fn run(args: ExportArgs) -> i32 {
    if let Some(format) = args.format {
        return export_document(&args, format);
    }
    // Bad input is 2, as for every command; a backend that did not take the spans is 1.
    let (status, message) = match read(&args) {
        Err(message) => (2, message),
        Ok((runtime, settings, thread)) => {
            let thread_id = thread.options.thread_id.clone();
            let sent =
                runtime.block_on(backfill::send_thread(&settings, thread.options, &thread.events, thread.fallback_ms));
            match sent {
                Ok(sent) => (
                    0,
                    format!(
                        "sent {} spans ({} traces) of thread {thread_id} to {}",
                        sent.spans, sent.traces, settings.traces_endpoint
                    ),
                ),
                Err(e) => (1, format!("not sent: {e}")),
            }
        }
    };
    eprintln!("threadkeeper: {message}");
    status
}

/// The thread to send, as the spans need it.
struct Thread {
    options: TraceOptions,
    events: Vec<AgentEvent>,
    /// The time of the first events when they carry none.
    fallback_ms: u64,
}

fn read(args: &ExportArgs) -> Result<(tokio::runtime::Runtime, OtlpSettings, Thread), String> {
    let settings = OtlpSettings::resolve(args.otlp.as_deref(), &Default::default(), args.otlp_capture_content)?
        .expect("an endpoint was given");
    let runtime = super::command_runtime()?;
    let (options, events, fallback_ms) = match &args.file {
        Some(file) => {
            let name = display_name(file);
            let events = read_events(&read_source(file)?, name)?;
            let stem = Path::new(name).file_stem().map_or(name.into(), |s| s.to_string_lossy());
            let thread_id = args.thread.clone().unwrap_or_else(|| stem.into_owned());
            let options = TraceOptions { thread_id, capture_content: args.otlp_capture_content, ..Default::default() };
            (options, events, 0)
        }
        None => {
            let thread_id = args.thread.as_deref().expect("clap requires FILE or --thread");
            let spec = args.store.clone().unwrap_or_default();
            runtime.block_on(async {
                let store = open_store(&spec, 1).await.map_err(|e| format!("cannot open the store {spec}: {e}"))?;
                let (record, log) =
                    store.events_from(thread_id, 0).await.map_err(|e| format!("thread {thread_id}: {e}"))?;
                Ok::<_, String>((trace_options(&record, args.otlp_capture_content), log.parse_all(), record.created_at))
            })?
        }
    };
    Ok((runtime, settings, Thread { options, events, fallback_ms }))
}
