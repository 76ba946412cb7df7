//! Turn-document methods (seed 004): `turns/*`, `thread/export`, `thread/import`.

use crate::convert::{HostFormat, LeftOut};
use crate::server::cancel;
use crate::server::errors::{document_error, from_service, invalid_params};
use crate::server::table::{MethodTable, Policy};
use crate::server::wire::{parse, TextResult, ThreadInfo};
use crate::service::BlobsForm;
use crate::service::{read_turn, write_turn, BranchImported};
use crate::turns::{self, Format, Options, Turn};
use jsonrpsee::types::ErrorObjectOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

type RpcResult<T> = Result<T, ErrorObjectOwned>;

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
    /// How media parts carry their bytes: by `blob` id (`refs`, the default) or inline.
    #[serde(default)]
    blobs: BlobsForm,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ImportParams {
    text: String,
    format: ImportFormat,
    thread_id: Option<String>,
    #[serde(default)]
    options: ImportOptions,
}

/// A turn document's text format, or the agent host whose session file the text is.
#[derive(Clone, Copy, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum ImportFormat {
    Yaml,
    Json,
    ClaudeCode,
    Codex,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ImportOptions {
    /// Session files: other branches and sidechains become threads of their own.
    #[serde(default)]
    branches: bool,
}

/// A session file's import: the thread, and what else the file held.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SessionImportResult {
    #[serde(flatten)]
    thread: ThreadInfo,
    session: SessionSummary,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SessionSummary {
    #[serde(skip_serializing_if = "Option::is_none")]
    session_id: Option<String>,
    lines: usize,
    left_out: LeftOut,
    branches: Vec<BranchImported>,
}

fn turn_from_params(turn: Value) -> RpcResult<(Turn, Vec<String>)> {
    turns::turn_from_value(turn).map_err(|e| document_error("turn", e))
}

fn register_pair(m: &mut MethodTable, to: &'static str, from: &'static str, format: Format) {
    m.register_sync(to, Policy::STATELESS, move |params, _| -> RpcResult<TextResult> {
        let p: ToTextParams = parse(&params)?;
        let (turn, _) = turn_from_params(p.turn)?;
        let text = write_turn(&turn, format, &p.options).map_err(from_service)?;
        Ok(TextResult { text })
    });
    m.register_sync(from, Policy::STATELESS, move |params, ctx| -> RpcResult<Value> {
        let p: FromTextParams = parse(&params)?;
        let (turn, warnings) = read_turn(&p.text, format, &ctx.service.limits().documents).map_err(from_service)?;
        let turn = turns::to_value(&turn, &Options::default()).map_err(|e| document_error("text", e))?;
        Ok(json!({ "turn": turn, "warnings": warnings }))
    });
}

pub(super) fn register(m: &mut MethodTable) {
    register_pair(m, "turns/toYaml", "turns/fromYaml", Format::Yaml);
    register_pair(m, "turns/toJson", "turns/fromJson", Format::Json);

    m.register_sync("turns/validate", Policy::STATELESS, |params, _| -> RpcResult<Value> {
        let p: ValidateParams = parse(&params)?;
        let (turn, _) = turn_from_params(p.turn)?;
        let problems = turns::validate(&turn, p.strict);
        Ok(json!({ "valid": problems.is_empty(), "problems": problems }))
    });

    m.register("thread/export", Policy::THREAD_READ, |params, ctx| async move {
        let p: ExportParams = parse(&params)?;
        let text = ctx
            .service
            .export_document(&p.thread_id, p.format, p.options, p.blobs, &cancel::current())
            .await
            .map_err(from_service)?;
        RpcResult::Ok(TextResult { text })
    });

    // Cancellable until it stores the thread (the service reads the whole document first).
    m.register("thread/import", Policy::THREAD_WRITE, |params, ctx| async move {
        let p: ImportParams = parse(&params)?;
        // Up to a 16 MiB document as JSON text: not kept beside its text while it is read.
        drop(params);
        let (document, host) = match p.format {
            ImportFormat::Yaml => (Format::Yaml, None),
            ImportFormat::Json => (Format::Json, None),
            ImportFormat::ClaudeCode => (Format::Json, Some(HostFormat::ClaudeCode)),
            ImportFormat::Codex => (Format::Json, Some(HostFormat::Codex)),
        };
        let Some(host) = host else {
            if p.options.branches {
                return Err(invalid_params("options.branches", "only for the claude-code and codex formats"));
            }
            let record = ctx
                .service
                .import_document(p.text, document, p.thread_id, &cancel::current())
                .await
                .map_err(from_service)?;
            return RpcResult::Ok(serde_json::to_value(ThreadInfo::from(record)).unwrap_or_default());
        };
        let imported = ctx
            .service
            .import_session(p.text, host, p.thread_id, p.options.branches, &cancel::current())
            .await
            .map_err(from_service)?;
        let result = SessionImportResult {
            thread: ThreadInfo::from(imported.thread),
            session: SessionSummary {
                session_id: imported.session_id,
                lines: imported.lines,
                left_out: imported.left_out,
                branches: imported.branches,
            },
        };
        RpcResult::Ok(serde_json::to_value(result).unwrap_or_default())
    });
}
