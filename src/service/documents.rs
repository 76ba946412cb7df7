//! Threads as turn documents (seed 004): export and import.
//!
//! Both grow with the thread or the document, so their work runs off the async workers and
//! stops answering at once when cancelled ([`off_loop`]); an import stores nothing until its
//! document has been read, converted and validated whole.

use super::{
    check_thread_id, off_loop, BlobsForm, ImportTarget, Limits, ServiceError, ServiceResult, StoredEvents,
    ThreadService,
};
use crate::event::AgentEvent;
use crate::store::{ThreadRecord, ThreadSettings};
use crate::turns::thread::SETTINGS_KEY;
use crate::turns::{self, Format, Measure, Options, Turn, TurnDocument, TurnError};
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
            let (turn, _) = read_turn_freeing_text(text, format, &limits.documents)?;
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
            // The events go through the same limits as an append, each stored as it is made
            // while its block is freed: the import holds the turn or the events' text, mostly,
            // never the events parsed whole beside them.
            // Each event is held to the limit of an append; how many there are is bounded by the
            // document limits instead of `maxEventsPerCall`, so that every thread exported
            // within them, however many appends built it, imports back.
            let limits = Limits { max_events_per_call: usize::MAX, ..limits };
            let mut stored = StoredEvents::new(&limits, turn.blocks.len())?;
            let fields = turns::turn_to_thread_each(turn, |event| stored.push(event).map_err(ImportFault))
                .map_err(|ImportFault(error)| error)?;
            let settings = match fields.settings {
                Some(value) => Some(serde_json::from_value::<ThreadSettings>(value).map_err(|e| {
                    ServiceError::InvalidParams { path: format!("text.metadata.{SETTINGS_KEY}"), reason: e.to_string() }
                })?),
                None => None,
            };
            Ok((target, settings, fields.metadata, stored.finish()))
        })
        .await?;
        // The value read from the text and the turn are freed: their pages go back before the
        // thread's state is built from the stored events.
        super::give_back_memory();
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
    one_turn(turns::read_document(text, format, limits).map_err(text_error)?)
}

/// [`read_turn`] for an import, which needs the text no more once it is read: it is freed
/// before the value read from it becomes a turn, so the two are not held together.
fn read_turn_freeing_text(text: String, format: Format, limits: &turns::Limits) -> ServiceResult<(Turn, Vec<String>)> {
    let value = turns::parse_value(&text, format, limits).map_err(text_error)?;
    drop(text);
    one_turn(turns::document_from_value(value).map_err(text_error)?)
}

fn text_error(error: turns::TurnError) -> ServiceError {
    ServiceError::Document { field: "text", error }
}

/// Why an import stopped while it took the turn apart: the turn's own fault, or a limit.
struct ImportFault(ServiceError);

impl From<turns::TurnError> for ImportFault {
    fn from(error: turns::TurnError) -> Self {
        ImportFault(text_error(error))
    }
}

/// The one turn of a document read, with the reader's warnings.
fn one_turn((document, mut warnings): (TurnDocument, Vec<String>)) -> ServiceResult<(Turn, Vec<String>)> {
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
