//! Threads as turn documents (seed 004): export and import.
//!
//! Both grow with the thread or the document, so their work runs off the async workers and
//! stops answering at once when cancelled ([`off_loop`]); an import stores nothing until its
//! document has been read, converted and validated whole.

use super::{check_thread_id, off_loop, BlobsForm, ImportTarget, Limits, ServiceError, ServiceResult, ThreadService};
use crate::event::AgentEvent;
use crate::store::{ThreadRecord, ThreadSettings};
use crate::turns::thread::SETTINGS_KEY;
use crate::turns::{self, Format, Measure, Options, Turn, TurnDocument, TurnError};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

impl ThreadService {
    /// The thread as a turn document, in `format`; media parts name their blobs, or with
    /// [`BlobsForm::Inline`] carry the bytes as `data`, so the document stands alone.
    pub async fn export_document(
        &self,
        thread_id: &str,
        format: Format,
        options: Options,
        blobs: BlobsForm,
        cancel: &CancellationToken,
    ) -> ServiceResult<String> {
        let (record, events) = self.snapshot(thread_id).await?;
        let media = match blobs {
            BlobsForm::Refs => None,
            BlobsForm::Inline => Some(self.media_for(crate::media::parts::blobs_of_events(&events.parse_all())).await?),
        };
        let limits = self.limits.documents;
        off_loop(cancel, move |_| {
            let mut events: Vec<AgentEvent> = events.parse_all();
            if let Some(media) = &media {
                events = super::blobs::inline_blobs(events, media)?;
            }
            let settings = (record.settings != ThreadSettings::default())
                .then(|| serde_json::to_value(&record.settings).unwrap_or_default());
            let turn = turns::thread_to_turn(&record.thread_id, &events, settings, &record.metadata);
            check_imports_back(&turn, &options, &limits)?;
            let text = write_turn(&turn, format, &options)?;
            if format == Format::Yaml && text.len() > limits.max_yaml_input_bytes {
                let error = TurnError::Limit {
                    limit: "max_yaml_input_bytes",
                    max: limits.max_yaml_input_bytes,
                    value: text.len(),
                };
                return Err(ServiceError::Document { field: NOT_IMPORTABLE, error });
            }
            Ok(text)
        })
        .await
    }

    /// Creates a thread from a turn document: under `thread_id`, else the document's own id,
    /// else a new one (see [`ThreadService::import`] for what each may replace).
    pub async fn import_document(
        &self,
        text: String,
        format: Format,
        thread_id: Option<String>,
        cancel: &CancellationToken,
    ) -> ServiceResult<ThreadRecord> {
        let limits = self.limits;
        let (target, settings, metadata, events) = off_loop(cancel, move |_| {
            let (turn, _) = read_turn(&text, format, &limits.documents)?;
            let target = match thread_id {
                Some(id) => ImportTarget::Given(id),
                None if turn.id.is_empty() => ImportTarget::New,
                None => {
                    // The turn's id names the thread; say so when it cannot be a thread id.
                    check_thread_id(&turn.id).map_err(|_| ServiceError::InvalidParams {
                        path: "text.id".into(),
                        reason: "not a usable thread id (1 to 128 characters of A-Z a-z 0-9 . _ : -): pass threadId"
                            .into(),
                    })?;
                    ImportTarget::FromDocument(turn.id.clone())
                }
            };
            let parts =
                turns::turn_to_thread(&turn).map_err(|error| ServiceError::Document { field: "text", error })?;
            let settings = match parts.settings {
                Some(value) => Some(serde_json::from_value::<ThreadSettings>(value).map_err(|e| {
                    ServiceError::InvalidParams { path: format!("text.metadata.{SETTINGS_KEY}"), reason: e.to_string() }
                })?),
                None => None,
            };
            // Each event is held to the limit of an append; how many there are is bounded by the
            // document limits instead of `maxEventsPerCall`, so that every thread exported
            // within them, however many appends built it, imports back.
            let values: Vec<Value> = parts.events.into_iter().map(AgentEvent::into_value).collect();
            let events = super::validate_events(&Limits { max_events_per_call: usize::MAX, ..limits }, values)?;
            Ok((target, settings, parts.metadata, events))
        })
        .await?;
        self.import(target, settings, metadata, events).await
    }
}

/// The `field` of a [`ServiceError::Document`] refusing an export whose document this server
/// would not read back.
pub const NOT_IMPORTABLE: &str = "export";

/// Refuses, before it is written, a document that `thread/import` would refuse within
/// `limits`: a backup that cannot be restored is worse than none, and the caller learns now,
/// with the limit to raise, rather than when restoring.
fn check_imports_back(turn: &Turn, options: &Options, limits: &turns::Limits) -> ServiceResult<()> {
    let value = turns::to_value(turn, options).map_err(|error| ServiceError::Document { field: "turn", error })?;
    Measure::of(&value).check(limits).map_err(|error| ServiceError::Document { field: NOT_IMPORTABLE, error })
}

/// The one turn of a document (a fixture's follow-ups appended to its blocks), and the
/// reader's warnings; the text is read within `limits`.
pub fn read_turn(text: &str, format: Format, limits: &turns::Limits) -> ServiceResult<(Turn, Vec<String>)> {
    let document = |error| ServiceError::Document { field: "text", error };
    let (document, mut warnings) = turns::read_document(text, format, limits).map_err(document)?;
    match document {
        TurnDocument::Turn(turn) => Ok((turn, warnings)),
        TurnDocument::Fixture { mut turn, followups } => {
            if !followups.is_empty() {
                warnings.push(format!("followups: {} block(s) appended to the turn's blocks", followups.len()));
            }
            turn.blocks.extend(followups);
            Ok((turn, warnings))
        }
        TurnDocument::Suite(turns) => Err(ServiceError::InvalidParams {
            path: "text".into(),
            reason: format!("a suite of {} turn(s); this method takes one turn", turns.len()),
        }),
    }
}

/// A turn as a document's text.
pub fn write_turn(turn: &Turn, format: Format, options: &Options) -> ServiceResult<String> {
    match format {
        Format::Yaml => turns::to_yaml(turn, options),
        Format::Json => turns::to_json(turn, options),
    }
    .map_err(|error| ServiceError::Document { field: "turn", error })
}
