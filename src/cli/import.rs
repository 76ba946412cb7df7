//! `threadkeeper import --from claude-code|codex FILE`: an agent host's session file as a stored
//! thread; with `--follow`, the lines the host goes on writing are appended as they come.
//! `--from yaml|json`: a turn document (media inline, or as blob ids found in the store or in
//! `--blobs-dir`).

use clap::{Args, ValueEnum};
use std::io::{Read, Seek, SeekFrom, Write};
use std::time::Duration;
use threadkeeper::convert::{HostFormat, SessionReader};
use threadkeeper::service::{Limits, ServiceError, SessionImported, ThreadService};
use threadkeeper::store::{open_store, StoreSpec};
use threadkeeper::turns::Format;
use tokio_util::sync::CancellationToken;

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The agent host that wrote the file.
    #[arg(long, value_enum)]
    from: Host,
    /// The session file: Claude Code's `~/.claude/projects/…/SESSION.jsonl`, Codex's
    /// `~/.codex/sessions/…/rollout-….jsonl`.
    #[arg(value_name = "FILE")]
    file: String,
    /// The store to import into (as `serve` takes it).
    #[arg(long, env = "THREADKEEPER_STORE", value_name = "STORE")]
    store: Option<StoreSpec>,
    /// The thread's id (default: the session's id).
    #[arg(long, value_name = "ID")]
    thread: Option<String>,
    /// Keep the other branches (Claude Code: conversations rewound away from) and sidechains
    /// (subagents) as threads of their own, `ID.branch-N` and `ID.sidechain-N`; without it they
    /// are counted and left out.
    #[arg(long)]
    branches: bool,
    /// Keep reading the file as the host writes it, appending each new line's events to the
    /// thread, until SIGTERM or SIGINT. A last line without its line break waits for it.
    #[arg(long)]
    follow: bool,
    /// With `--follow`: how often the file is looked at, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 200, value_parser = clap::value_parser!(u64).range(10..=60_000))]
    poll_ms: u64,
    /// With `--from yaml|json`: a folder of blob files (each named by its hash's 64 hex
    /// digits, as `export --blobs dir` writes them) for the blobs the document names.
    #[arg(long, value_name = "DIR")]
    blobs_dir: Option<std::path::PathBuf>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Host {
    ClaudeCode,
    Codex,
    /// A turn document in YAML.
    Yaml,
    /// A turn document in JSON.
    Json,
}

impl Host {
    fn session_format(self) -> Option<HostFormat> {
        match self {
            Host::ClaudeCode => Some(HostFormat::ClaudeCode),
            Host::Codex => Some(HostFormat::Codex),
            Host::Yaml | Host::Json => None,
        }
    }
}

pub fn run(args: ImportArgs) -> i32 {
    let runtime = match super::command_runtime() {
        Ok(runtime) => runtime,
        Err(message) => return super::finish(Err(message)),
    };
    let status = runtime.block_on(async {
        let stop = threadkeeper::server::stop_signal();
        match import(&args).await {
            Ok(None) => 0,
            Ok(Some(following)) => {
                let result = tokio::select! {
                    _ = stop => Ok(()),
                    ended = following.run(&args) => ended,
                };
                match result {
                    Ok(()) => 0,
                    Err(message) => super::finish(Err(message)),
                }
            }
            Err(message) => super::finish(Err(message)),
        }
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    status
}

/// The thread being followed: where the file was read up to, and what waits for its line break.
struct Following {
    service: ThreadService,
    thread_id: String,
    reader: SessionReader,
    offset: u64,
}

/// Imports the file; prints what was made as one JSON line. With `--follow`, reads only whole
/// lines and returns what following needs.
async fn import(args: &ImportArgs) -> Result<Option<Following>, String> {
    let name = args.file.as_str();
    let mut bytes = Vec::new();
    std::fs::File::open(name).and_then(|mut f| f.read_to_end(&mut bytes)).map_err(|e| format!("{name}: {e}"))?;
    // Following, a last line still being written is read when its line break comes.
    let whole = if args.follow { bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1) } else { bytes.len() };
    bytes.truncate(whole);
    let text = String::from_utf8(bytes).map_err(|e| format!("{name}: not UTF-8 text: {e}"))?;
    let spec = args.store.clone().unwrap_or_default();
    let store = open_store(&spec, u64::MAX).await.map_err(|e| format!("cannot open the store {spec}: {e}"))?;
    let service = ThreadService::new(store, Limits::default());
    let cancel = CancellationToken::new();
    let Some(format) = args.from.session_format() else {
        import_document(&service, args, text, &cancel).await?;
        return Ok(None);
    };
    let imported = service
        .import_session(text, format, args.thread.clone(), args.branches, &cancel)
        .await
        .map_err(|e| described(name, e))?;
    print_summary(&imported)?;
    if !args.follow {
        return Ok(None);
    }
    let SessionImported { thread, reader, .. } = imported;
    Ok(Some(Following { service, thread_id: thread.thread_id, reader, offset: whole as u64 }))
}

/// `--from yaml|json`: the document as a thread, its blobs first put from `--blobs-dir`.
async fn import_document(
    service: &ThreadService,
    args: &ImportArgs,
    text: String,
    cancel: &CancellationToken,
) -> Result<(), String> {
    let name = args.file.as_str();
    if args.follow || args.branches {
        return Err("--follow and --branches read agent hosts' sessions, not turn documents".into());
    }
    let format = if matches!(args.from, Host::Yaml) { Format::Yaml } else { Format::Json };
    if let Some(dir) = &args.blobs_dir {
        super::document::put_blobs_from(service, &text, dir).await?;
    }
    let thread =
        service.import_document(text, format, args.thread.clone(), cancel).await.map_err(|e| described(name, e))?;
    let summary = serde_json::json!({"threadId": thread.thread_id, "eventCount": thread.event_count});
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{summary}").and_then(|_| stdout.flush()).map_err(|e| format!("cannot write to stdout: {e}"))
}

fn print_summary(imported: &SessionImported) -> Result<(), String> {
    let summary = serde_json::json!({
        "threadId": imported.thread.thread_id,
        "eventCount": imported.thread.event_count,
        "sessionId": imported.session_id,
        "lines": imported.lines,
        "leftOut": imported.left_out,
        "branches": imported.branches,
    });
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{summary}").and_then(|_| stdout.flush()).map_err(|e| format!("cannot write to stdout: {e}"))
}

impl Following {
    /// Appends the file's new whole lines as they come; returns only on an error.
    async fn run(mut self, args: &ImportArgs) -> Result<(), String> {
        let name = args.file.as_str();
        let mut pending: Vec<u8> = Vec::new();
        let mut interval = tokio::time::interval(Duration::from_millis(args.poll_ms));
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            interval.tick().await;
            let read = read_from(name, self.offset).map_err(|e| format!("{name}: {e}"))?;
            let Some(more) = read else {
                return Err(format!("{name}: the file got shorter than what was read; it was replaced or cut"));
            };
            if more.is_empty() {
                continue;
            }
            self.offset += more.len() as u64;
            pending.extend_from_slice(&more);
            let Some(end) = pending.iter().rposition(|&b| b == b'\n') else { continue };
            let lines: Vec<u8> = pending.drain(..=end).collect();
            let text = String::from_utf8(lines).map_err(|e| format!("{name}: not UTF-8 text: {e}"))?;
            let appended = self
                .service
                .append_session_lines(&self.thread_id, &mut self.reader, &text)
                .await
                .map_err(|e| described(name, e))?;
            if let Some(record) = appended {
                tracing::debug!(thread = %self.thread_id, version = record.version, "appended followed lines");
            }
        }
    }
}

/// The bytes of the file after `offset`; `None` when the file is shorter than that.
fn read_from(path: &str, offset: u64) -> std::io::Result<Option<Vec<u8>>> {
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    if len < offset {
        return Ok(None);
    }
    file.seek(SeekFrom::Start(offset))?;
    let mut more = Vec::with_capacity((len - offset) as usize);
    file.read_to_end(&mut more)?;
    Ok(Some(more))
}

/// A service error as one line naming the file: a bad line as `FILE: line N: what is wrong`.
fn described(name: &str, error: ServiceError) -> String {
    match error {
        ServiceError::InvalidParams { path, reason } if path == "text" => format!("{name}: {reason}"),
        other => format!("{name}: {other}"),
    }
}
