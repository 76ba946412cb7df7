//! `threadkeeper serve`: protocol v1 on stdin/stdout.

use clap::Args;
use std::sync::Arc;
use std::time::Duration;
use threadkeeper::otel::{LiveExport, LiveLimits, OtlpSettings};
use threadkeeper::server::{self, ServerConfig, TracingCapability};
use threadkeeper::service::{Limits, ThreadService};
use threadkeeper::store::{open_store_with, PostgresOptions, StoreSpec};
use threadkeeper::turns::Limits as DocumentLimits;

#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// Where threads live: `memory` (gone when the process ends), `sqlite` (the default: a
    /// database in $THREADKEEPER_DATA_DIR, else $XDG_DATA_HOME/threadkeeper, else
    /// ~/.local/share/threadkeeper), `sqlite:PATH`, or `postgres://USER@HOST/DATABASE`
    /// (shared by every server using that database).
    #[arg(long, env = "THREADKEEPER_STORE", value_name = "STORE")]
    store: Option<StoreSpec>,
    /// Largest message accepted, in bytes.
    #[arg(long, default_value_t = ServerConfig::default().max_frame_bytes, value_name = "BYTES")]
    max_frame_bytes: usize,
    /// Most events accepted in one call.
    #[arg(long, default_value_t = Limits::default().max_events_per_call, value_name = "N")]
    max_events_per_call: usize,
    /// Largest event accepted (its compact JSON), in bytes.
    #[arg(long, default_value_t = Limits::default().max_event_bytes, value_name = "BYTES")]
    max_event_bytes: usize,
    /// Largest blob accepted (a media part's bytes, `blob/put`), in bytes.
    #[arg(long, default_value_t = Limits::default().max_blob_bytes, value_name = "BYTES")]
    max_blob_bytes: usize,
    /// Most threads held in memory (durable stores evict the least recently used).
    #[arg(long, default_value_t = Limits::default().max_threads_in_memory, value_name = "N")]
    max_threads_in_memory: usize,
    /// Event bytes up to which a thread keeps its renderers between renders (incremental
    /// renders); a bigger thread rebuilds them per render and holds only its events.
    #[arg(long, default_value_t = Limits::default().keep_renders_up_to_bytes, value_name = "BYTES")]
    keep_renders_up_to: usize,
    /// PostgreSQL store: connections this server keeps to the database.
    #[arg(long, default_value_t = PostgresOptions::default().pool_size as u64,
          value_parser = clap::value_parser!(u64).range(1..=1000), value_name = "N")]
    pg_pool_size: u64,
    /// PostgreSQL store: append transactions in flight at once (group commit: the appends that
    /// arrive meanwhile are committed together in the next one). At most `--pg-pool-size`.
    #[arg(long, default_value_t = PostgresOptions::default().commit_slots as u64,
          value_parser = clap::value_parser!(u64).range(1..=1000), value_name = "N")]
    pg_commit_slots: u64,
    /// PostgreSQL store: longest an append waits, in microseconds, for the threads answered a
    /// moment ago that usually call again at once, so that they commit together (0: never).
    #[arg(long, default_value_t = PostgresOptions::default().commit_hold.as_micros() as u64,
          value_parser = clap::value_parser!(u64).range(0..=100_000), value_name = "MICROSECONDS")]
    pg_commit_hold: u64,
    /// Most a turn document given as text may hold (`turns/from*`, `thread/import`), in bytes of
    /// compact JSON whatever its layout; `thread/export` refuses a thread over it.
    #[arg(long, default_value_t = DocumentLimits::default().max_input_bytes, value_name = "BYTES")]
    max_document_bytes: usize,
    /// Longest YAML turn document text, in bytes, refused before it is parsed.
    #[arg(long, default_value_t = DocumentLimits::default().max_yaml_input_bytes, value_name = "BYTES")]
    max_document_yaml_bytes: usize,
    /// Deepest nesting of a turn document's mappings and sequences.
    #[arg(long, default_value_t = DocumentLimits::default().max_depth, value_name = "N")]
    max_document_depth: usize,
    /// Most values (keys, scalars, mappings, sequences) read from one turn document.
    #[arg(long, default_value_t = DocumentLimits::default().max_values, value_name = "N")]
    max_document_values: usize,
    /// Most bytes of keys and strings read from one turn document.
    #[arg(long, default_value_t = DocumentLimits::default().max_string_bytes, value_name = "BYTES")]
    max_document_string_bytes: usize,
    /// Values, and bytes of strings, read per byte of a turn document (plus 1,024 each): the
    /// bound on what YAML aliases may expand to.
    #[arg(long, default_value_t = DocumentLimits::default().max_expansion, value_name = "N")]
    max_document_expansion: usize,
    /// Log filter for stderr, e.g. `info` or `threadkeeper=debug` (overrides RUST_LOG).
    #[arg(long, value_name = "FILTER")]
    log_level: Option<String>,
    /// Send every thread as OpenTelemetry GenAI traces, live, to this OTLP/HTTP base URL (spans
    /// go to URL/v1/traces). Default: $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the full URL), else
    /// $OTEL_EXPORTER_OTLP_ENDPOINT; neither set, nothing is exported.
    #[arg(long, value_name = "URL")]
    otlp_endpoint: Option<String>,
    /// With tracing on: put the thread's text in the spans (messages, tool arguments and
    /// results, as the GenAI conventions' gen_ai.input.messages and the like). Off by default:
    /// no thread text leaves the process.
    #[arg(long)]
    otlp_capture_content: bool,
}

/// How long SIGTERM (or the end of input) waits for the last spans to be sent.
const TRACING_FLUSH: Duration = Duration::from_secs(2);

pub fn run(args: ServeArgs) -> i32 {
    init_logging(args.log_level.as_deref());
    let limits = Limits {
        max_events_per_call: args.max_events_per_call,
        max_event_bytes: args.max_event_bytes,
        max_blob_bytes: args.max_blob_bytes,
        max_threads_in_memory: args.max_threads_in_memory,
        keep_renders_up_to_bytes: args.keep_renders_up_to,
        documents: DocumentLimits {
            max_input_bytes: args.max_document_bytes,
            max_yaml_input_bytes: args.max_document_yaml_bytes,
            max_depth: args.max_document_depth,
            max_values: args.max_document_values,
            max_string_bytes: args.max_document_string_bytes,
            max_expansion: args.max_document_expansion,
        },
    };
    let runtime = match super::serving_runtime() {
        Ok(runtime) => runtime,
        Err(message) => {
            eprintln!("threadkeeper: {message}");
            return 1;
        }
    };
    // A store that cannot be opened at start is a configuration problem: say so and stop.
    // Failures after start are answered per request (-32005) while the server keeps going.
    let spec = args.store.unwrap_or_default();
    let postgres = PostgresOptions {
        pool_size: args.pg_pool_size as usize,
        commit_slots: args.pg_commit_slots.min(args.pg_pool_size) as usize,
        commit_hold: Duration::from_micros(args.pg_commit_hold),
    };
    let store = match runtime.block_on(open_store_with(&spec, limits.max_threads_in_memory as u64, postgres)) {
        Ok(store) => store,
        Err(e) => {
            eprintln!("threadkeeper: {}", super::cannot_open_store(&spec, e));
            runtime.shutdown_background();
            return 2;
        }
    };
    tracing::info!(store = %spec, "store opened");
    let env: std::collections::HashMap<String, String> = std::env::vars().collect();
    let tracing_settings = match OtlpSettings::resolve(args.otlp_endpoint.as_deref(), &env, args.otlp_capture_content) {
        Ok(settings) => settings,
        Err(reason) => {
            eprintln!("threadkeeper: cannot export traces to {reason}");
            runtime.shutdown_background();
            return 2;
        }
    };
    let mut service = ThreadService::new(store, limits);
    let mut export = None;
    if let Some(settings) = &tracing_settings {
        let _runtime = runtime.enter();
        match LiveExport::start(settings, LiveLimits::default()) {
            Ok(live) => {
                tracing::info!(endpoint = %settings.traces_endpoint, "exporting traces");
                service = service.with_observer(live.clone());
                export = Some(live);
            }
            Err(reason) => {
                eprintln!("threadkeeper: cannot export traces to {reason}");
                runtime.shutdown_background();
                return 2;
            }
        }
    }
    let service = Arc::new(service);
    let tracing = tracing_settings.map(|s| TracingCapability { capture_content: s.capture_content });
    let config = ServerConfig { max_frame_bytes: args.max_frame_bytes, tracing };
    // SIGTERM and SIGINT stop the server gracefully: running requests finish and are answered.
    // Served from a worker thread, not from `block_on`'s: the worker that sees stdin become
    // readable runs the read itself instead of waking another thread for it.
    let status = runtime.block_on(async {
        let serving = tokio::spawn(async move {
            let stop = server::stop_signal();
            server::serve_until(server::stdin_input(), server::stdout_output(), service, config, stop).await
        });
        let status = serving.await.unwrap_or(1);
        if let Some(export) = export {
            export.shutdown(TRACING_FLUSH).await;
        }
        status
    });
    tracing::debug!(status, "exit");
    // Don't wait for the stdin thread: it may be blocked in a read forever.
    runtime.shutdown_background();
    status
}

/// Logs go to stderr, quiet by default (warnings and errors only).
pub(super) fn init_logging(filter: Option<&str>) {
    use tracing_subscriber::EnvFilter;
    let filter = match filter {
        Some(f) => EnvFilter::new(f),
        None => EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn")),
    };
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(false).try_init();
}
