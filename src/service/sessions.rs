//! Agent hosts' session files (Claude Code, Codex) imported as threads.
//!
//! The file is read, converted and validated whole before anything is stored, so a bad line
//! leaves nothing behind; the thread then goes in as an import does, and each branch kept
//! (`keep_branches`) as a thread of its own, `ID.branch-N` or `ID.sidechain-N`.

use super::{check_thread_id, off_loop, ImportTarget, ServiceError, ServiceResult, ThreadService, ValidEvents};
use crate::convert::{BranchKind, HostFormat, LeftOut, SessionReader};
use crate::event::AgentEvent;
use crate::media::IngestLimits;
use crate::store::ThreadRecord;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// What importing a session file made.
#[derive(Debug)]
pub struct SessionImported {
    pub thread: ThreadRecord,
    /// The host's id of the session, when the file has one.
    pub session_id: Option<String>,
    /// Lines read.
    pub lines: usize,
    /// The threads made of other branches and sidechains (with `keep_branches`).
    pub branches: Vec<BranchImported>,
    /// Branches and sidechains not in the thread.
    pub left_out: LeftOut,
    /// The reader, ready for what the host appends to the file next.
    pub reader: SessionReader,
}

#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchImported {
    pub thread_id: String,
    pub kind: BranchKind,
    /// The host's id of the line the branch ends at.
    pub leaf: String,
    pub event_count: u64,
}

impl ThreadService {
    /// Creates a thread from a host's session file: under `thread_id`, else the session's own
    /// id, else a new one (as [`ThreadService::import`] does with a document's id).
    pub async fn import_session(
        &self,
        text: String,
        format: HostFormat,
        thread_id: Option<String>,
        keep_branches: bool,
        cancel: &CancellationToken,
    ) -> ServiceResult<SessionImported> {
        let limits = self.limits;
        let (reader, import, main, branches) = off_loop(cancel, move |_| {
            let ingest_limits = IngestLimits { max_blob_bytes: limits.max_blob_bytes };
            let mut reader = SessionReader::with_limits(format, ingest_limits);
            let mut import = reader
                .read_all(&text, keep_branches)
                .map_err(|e| ServiceError::InvalidParams { path: "text".into(), reason: e.to_string() })?;
            let blobs = std::mem::take(&mut import.blobs);
            // The reader stored each media part's bytes as a blob as it read the line: the
            // events name them, and the bytes go to the store with them.
            let valid = |events: Vec<AgentEvent>| {
                let values = events.into_iter().map(AgentEvent::into_value).collect::<Vec<Value>>();
                let mut valid = super::validate_events(&limits, values)?;
                valid.media.provide(&blobs);
                Ok::<_, ServiceError>(valid)
            };
            let main = valid(std::mem::take(&mut import.events))?;
            let branches = std::mem::take(&mut import.branches)
                .into_iter()
                .map(|branch| Ok((branch.kind, branch.leaf, valid(branch.events)?)))
                .collect::<ServiceResult<Vec<(BranchKind, String, ValidEvents)>>>()?;
            Ok((reader, import, main, branches))
        })
        .await?;
        // A new id is made here rather than by the import: the branches are named after it.
        let (target, base_id) = match (thread_id, &import.session_id) {
            (Some(id), _) => (ImportTarget::Given(id.clone()), id),
            (None, Some(session)) if check_thread_id(session).is_ok() => {
                (ImportTarget::FromDocument(session.clone()), session.clone())
            }
            (None, _) => {
                let id = super::new_thread_id();
                (ImportTarget::Given(id.clone()), id)
            }
        };
        // Every branch's id is checked before anything is stored.
        let mut counters = (0usize, 0usize);
        let mut named = Vec::with_capacity(branches.len());
        for (kind, leaf, events) in branches {
            let n = match kind {
                BranchKind::Branch => {
                    counters.0 += 1;
                    counters.0
                }
                BranchKind::Sidechain => {
                    counters.1 += 1;
                    counters.1
                }
            };
            let suffix = match kind {
                BranchKind::Branch => "branch",
                BranchKind::Sidechain => "sidechain",
            };
            let id = format!("{base_id}.{suffix}-{n}");
            check_thread_id(&id)?;
            if self.store.record(&id).await?.is_some() {
                return Err(ServiceError::ThreadExists {
                    thread_id: id,
                    hint: "pass threadId to import under another id",
                });
            }
            named.push((id, kind, leaf, events));
        }
        let thread = self.import(target, None, None, (main.stored, main.media)).await?;
        let mut imported = Vec::with_capacity(named.len());
        for (id, kind, leaf, events) in named {
            let record =
                self.import(ImportTarget::Given(id.clone()), None, None, (events.stored, events.media)).await?;
            imported.push(BranchImported { thread_id: id, kind, leaf, event_count: record.event_count });
        }
        Ok(SessionImported {
            thread,
            session_id: import.session_id,
            lines: import.lines,
            branches: imported,
            left_out: import.left_out,
            reader,
        })
    }

    /// Appends what a host wrote to a followed session file since: complete lines only.
    pub async fn append_session_lines(
        &self,
        thread_id: &str,
        reader: &mut SessionReader,
        text: &str,
    ) -> ServiceResult<Option<ThreadRecord>> {
        let events = reader
            .read_more(text)
            .map_err(|e| ServiceError::InvalidParams { path: "text".into(), reason: e.to_string() })?;
        if events.is_empty() {
            return Ok(None);
        }
        let mut valid = self.validate_events(events.into_iter().map(AgentEvent::into_value).collect())?;
        valid.media.provide(&reader.take_blobs());
        self.append(thread_id, valid, None).await.map(Some)
    }
}
