//! Turn-document methods (seed 004): `turns/*`, `thread/export`, `thread/import`.

use super::cancel;
use super::errors::{from_service, invalid_params, LIMIT_EXCEEDED};
use super::methods::{parse, Context, ThreadInfo};
use crate::event::AgentEvent;
use crate::service::{check_thread_id, ImportTarget};
use crate::store::ThreadSettings;
use crate::turns::{self, Format, Options, Turn, TurnDocument, TurnError};
use jsonrpsee::types::ErrorObjectOwned;
use jsonrpsee::RpcModule;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::turns::thread::SETTINGS_KEY;

type RpcResult<T> = Result<T, ErrorObjectOwned>;

/// A turn-document error as a protocol error; `field` names the params field holding the text.
fn turn_error(field: &str, error: TurnError) -> ErrorObjectOwned {
    match error {
        TurnError::Limit { limit, max, value } => document_limit(field, limit, value, max),
        TurnError::Invalid { path, reason } if !path.is_empty() => invalid_params(&format!("{field}.{path}"), &reason),
        other => invalid_params(field, &other.to_string()),
    }
}

/// A document over one of the [`turns::Limits`]: -32004 under the protocol's camelCase limit
/// name, with a message that says what about the document is too large.
fn document_limit(field: &str, limit: &str, value: usize, max: usize) -> ErrorObjectOwned {
    let (name, what) = match limit {
        "max_input_bytes" => ("maxDocumentBytes", "the document is too long"),
        "max_yaml_input_bytes" => ("maxDocumentYamlBytes", "the YAML document is too long"),
        "max_depth" => ("maxDocumentDepth", "the document nests too deeply"),
        "max_values" => ("maxDocumentValues", "the document has too many values"),
        "max_string_bytes" => ("maxDocumentStringBytes", "the document's strings are too long"),
        "max_expansion" => ("maxDocumentExpansion", "the document's YAML aliases expand to too much"),
        other => (other, "the document is too large"),
    };
    ErrorObjectOwned::owned(
        LIMIT_EXCEEDED,
        format!("limit exceeded: {field}: {what}: {name} is {max}, got {value}"),
        Some(json!({ "limit": name, "value": value, "max": max })),
    )
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ToTextParams {
    turn: Value,
    #[serde(default)]
    options: Options,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FromTextParams {
    text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ValidateParams {
    turn: Value,
    #[serde(default)]
    strict: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ExportParams {
    thread_id: String,
    format: Format,
    #[serde(default)]
    options: Options,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ImportParams {
    text: String,
    format: Format,
    thread_id: Option<String>,
}

fn turn_from_params(turn: Value) -> RpcResult<(Turn, Vec<String>)> {
    turns::turn_from_value(turn).map_err(|e| turn_error("turn", e))
}

fn read_turn(text: &str, format: Format) -> RpcResult<(Turn, Vec<String>)> {
    let (document, mut warnings) =
        turns::read_document(text, format, &turns::Limits::default()).map_err(|e| turn_error("text", e))?;
    match document {
        TurnDocument::Turn(turn) => Ok((turn, warnings)),
        TurnDocument::Fixture { mut turn, followups } => {
            if !followups.is_empty() {
                warnings.push(format!("followups: {} block(s) appended to the turn's blocks", followups.len()));
            }
            turn.blocks.extend(followups);
            Ok((turn, warnings))
        }
        TurnDocument::Suite(turns) => {
            Err(invalid_params("text", &format!("a suite of {} turn(s); this method takes one turn", turns.len())))
        }
    }
}

fn write_turn(turn: &Turn, format: Format, options: &Options) -> RpcResult<Value> {
    let text = match format {
        Format::Yaml => turns::to_yaml(turn, options),
        Format::Json => turns::to_json(turn, options),
    }
    .map_err(|e| turn_error("turn", e))?;
    Ok(json!({ "text": text }))
}

fn register_pair(m: &mut RpcModule<Context>, to: &'static str, from: &'static str, format: Format) {
    m.register_method(to, move |params, _, _| -> RpcResult<Value> {
        let p: ToTextParams = parse(&params)?;
        let (turn, _) = turn_from_params(p.turn)?;
        write_turn(&turn, format, &p.options)
    })
    .expect("unique method name");
    m.register_method(from, move |params, _, _| -> RpcResult<Value> {
        let p: FromTextParams = parse(&params)?;
        let (turn, warnings) = read_turn(&p.text, format)?;
        let turn = turns::to_value(&turn, &Options::default()).map_err(|e| turn_error("text", e))?;
        Ok(json!({ "turn": turn, "warnings": warnings }))
    })
    .expect("unique method name");
}

pub fn register(m: &mut RpcModule<Context>) {
    register_pair(m, "turns/toYaml", "turns/fromYaml", Format::Yaml);
    register_pair(m, "turns/toJson", "turns/fromJson", Format::Json);

    m.register_method("turns/validate", |params, _, _| -> RpcResult<Value> {
        let p: ValidateParams = parse(&params)?;
        let (turn, _) = turn_from_params(p.turn)?;
        let problems = turns::validate(&turn, p.strict);
        Ok(json!({ "valid": problems.is_empty(), "problems": problems }))
    })
    .expect("unique method name");

    m.register_async_method("thread/export", |params, ctx, _| async move {
        let p: ExportParams = parse(&params)?;
        let (record, events) = ctx.service.snapshot(&p.thread_id).await.map_err(from_service)?;
        // Converting and writing grow with the thread: off the async workers, and cancellable.
        cancel::off_loop(move |_| {
            let events: Vec<AgentEvent> = events.iter().map(|e| e.parse()).collect();
            let settings = (record.settings != ThreadSettings::default())
                .then(|| serde_json::to_value(&record.settings).unwrap_or_default());
            let turn = turns::thread_to_turn(&record.thread_id, &events, settings, &record.metadata);
            write_turn(&turn, p.format, &p.options)
        })
        .await
    })
    .expect("unique method name");

    m.register_async_method("thread/import", |params, ctx, _| async move {
        let p: ImportParams = parse(&params)?;
        // Reading, converting and validating grow with the document: off the async workers and
        // cancellable, since nothing is stored before the import below.
        let service = ctx.service.clone();
        let (target, settings, metadata, events) = cancel::off_loop(move |_| {
            let (turn, _) = read_turn(&p.text, p.format)?;
            let target = match p.thread_id {
                Some(id) => ImportTarget::Given(id),
                None if turn.id.is_empty() => ImportTarget::New,
                None => {
                    // The turn's id names the thread; say so when it cannot be a thread id.
                    check_thread_id(&turn.id).map_err(|_| {
                        let reason = "not a usable thread id (1 to 128 characters of A-Z a-z 0-9 . _ : -): pass threadId";
                        invalid_params("text.id", reason)
                    })?;
                    ImportTarget::FromDocument(turn.id.clone())
                }
            };
            let parts = turns::turn_to_thread(&turn).map_err(|e| turn_error("text", e))?;
            let settings = match parts.settings {
                Some(value) => Some(
                    serde_json::from_value::<ThreadSettings>(value)
                        .map_err(|e| invalid_params(&format!("text.metadata.{SETTINGS_KEY}"), &e.to_string()))?,
                ),
                None => None,
            };
            // The events go through the same limits as an append.
            let values: Vec<Value> = parts.events.into_iter().map(AgentEvent::into_value).collect();
            let events = service.validate_events(values).map_err(from_service)?;
            Ok((target, settings, parts.metadata, events))
        })
        .await?;
        let record = ctx.service.import(target, settings, metadata, events).await.map_err(from_service)?;
        RpcResult::Ok(ThreadInfo::from(record))
    })
    .expect("unique method name");
}
