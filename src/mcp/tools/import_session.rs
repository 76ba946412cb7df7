//! `import_session`: an agent host's session file as a new thread. Listed only when the
//! operator allowed directories (`--allow-import DIR`); the one tool that writes.

use super::{service_error, ToolOutput, ToolResult};
use crate::convert::HostFormat;
use crate::mcp::import_guard::AllowedDirs;
use crate::service::ThreadService;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

pub const NAME: &str = "import_session";
pub const DESCRIPTION: &str = "Import an agent host's session file (Claude Code ~/.claude/projects/…/SESSION.jsonl, \
Codex ~/.codex/sessions/…/rollout-….jsonl) as a new thread. Only files inside the directories this server was \
allowed to import from are read; give an absolute path.";

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SessionFormat {
    /// Claude Code's session JSON Lines.
    ClaudeCode,
    /// Codex CLI's rollout JSON Lines.
    Codex,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImportSessionArgs {
    /// Absolute path of the session file, inside an allowed directory.
    pub path: String,
    /// Which host wrote it: claude-code or codex.
    pub format: SessionFormat,
    /// The new thread's id (default: the session's own id, else a new one).
    pub thread_id: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportSessionOutput {
    pub thread_id: String,
    pub event_count: u64,
    /// The host's id of the session, when the file has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Lines read from the file.
    pub lines: usize,
}

pub async fn call(
    service: &ThreadService,
    allowed: &AllowedDirs,
    args: ImportSessionArgs,
    cancel: CancellationToken,
) -> ToolResult {
    let resolved = allowed.check(&args.path)?;
    let reader = allowed.clone();
    let text = tokio::task::spawn_blocking(move || reader.read(&resolved))
        .await
        .map_err(|e| format!("internal error: {e}"))??;
    let format = match args.format {
        SessionFormat::ClaudeCode => HostFormat::ClaudeCode,
        SessionFormat::Codex => HostFormat::Codex,
    };
    let imported = service.import_session(text, format, args.thread_id, false, &cancel).await.map_err(service_error)?;
    tracing::info!(thread_id = %imported.thread.thread_id, events = imported.thread.event_count, "session imported");
    let output = ImportSessionOutput {
        thread_id: imported.thread.thread_id,
        event_count: imported.thread.event_count,
        session_id: imported.session_id,
        lines: imported.lines,
    };
    let text = format!(
        "Imported {} lines as thread {:?} ({} events). Read it with read_thread.\n",
        output.lines, output.thread_id, output.event_count
    );
    Ok(ToolOutput::new(&output, text))
}
