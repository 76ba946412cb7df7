//! `thread/view` (issue 14): a thread as one self-contained HTML page.

use super::cancel;
use super::errors::{from_service, invalid_params};
use super::methods::{render_args, Format, RenderOptionsParams};
use super::table::{MethodTable, Policy};
use super::wire::parse;
use crate::context::Tokenizer;
use crate::event::AgentEvent;
use crate::service::{RenderFormat, RenderOptions, Rendered, ServiceError, ServiceResult, ThreadService};
use crate::view::{render_page, ModelInput, Page, ViewOptions};
use crate::xml::EscapeMode;
use crate::{ContextMode, DanglingToolCalls};
use jsonrpsee::types::ErrorObjectOwned;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ViewParams {
    thread_id: String,
    #[serde(default)]
    options: Option<RenderOptionsParams>,
}

#[derive(Serialize)]
struct ViewResult {
    html: String,
}

/// Reads of a thread that an append slipped between are tried again this many times.
const CONSISTENT_READ_ATTEMPTS: usize = 3;

pub fn register(m: &mut MethodTable) {
    m.register("thread/view", Policy::THREAD_READ, |params, ctx| async move {
        let p: ViewParams = parse(&params)?;
        let options = p.options.unwrap_or_default();
        if options.budget.is_some() {
            return Err(invalid_params("options.budget", "applies to thread/render only"));
        }
        let (_, options) = render_args(Format::Xml, options)?;
        if options.from_event.is_some() {
            return Err(invalid_params("options.fromEvent", "applies to thread/render only"));
        }
        let html = thread_page(&ctx.service, &p.thread_id, options, &cancel::current()).await.map_err(from_service)?;
        Ok::<_, ErrorObjectOwned>(ViewResult { html })
    });
}

/// The page of a stored thread: its events as stored, and the model input and per-iteration
/// estimates `thread/render` and `thread/tokens` give for `options`, all of one version.
pub async fn thread_page(
    service: &ThreadService,
    thread_id: &str,
    options: RenderOptions,
    cancel: &CancellationToken,
) -> ServiceResult<String> {
    let mut attempts = 0;
    let (events, xml, messages, context_mode, tokens) = loop {
        attempts += 1;
        let xml = service.render(thread_id, RenderFormat::Xml, options.clone(), cancel).await?;
        let messages = service.render(thread_id, RenderFormat::Messages, options.clone(), cancel).await?;
        let tokens = service.tokens(thread_id, RenderFormat::Xml, options.clone(), Tokenizer::Estimate, cancel).await?;
        let page = service.events(thread_id, 0, None).await?;
        let (Rendered::Xml { version: xml_version, text: xml }, Rendered::Messages { version, context_mode, json }) =
            (xml, messages)
        else {
            return Err(ServiceError::Internal("a render answered in another format".to_owned()));
        };
        if (xml_version == version && version == page.version) || attempts == CONSISTENT_READ_ATTEMPTS {
            break (page.events, xml, json, context_mode, tokens.by_iteration);
        }
    };
    let title = thread_id.to_owned();
    let event_count = events.len();
    let view_options = view_options(context_mode, options.escape, options.dangling_tool_calls);
    let build = move || {
        let parsed: Vec<AgentEvent> = events.iter().map(|event| event.parse()).collect();
        let model_input = ModelInput { xml, messages_json: messages };
        render_page(&Page {
            title: &title,
            events: &parsed,
            model_input: &model_input,
            options: view_options,
            tokens: Some(&tokens),
        })
    };
    let job = tokio::task::spawn_blocking(build);
    let html = tokio::select! {
        biased;
        _ = cancel.cancelled() => return Err(ServiceError::Cancelled),
        done = job => done.map_err(|e| ServiceError::Internal(e.to_string()))?,
    };
    tracing::debug!(thread_id, events = event_count, bytes = html.len(), "view page built");
    Ok(html)
}

/// The options as the page names them.
pub fn view_options(context_mode: ContextMode, escape: EscapeMode, dangling: DanglingToolCalls) -> ViewOptions {
    ViewOptions {
        context_mode: context_mode.as_str(),
        escape: match escape {
            EscapeMode::Full => "full",
            EscapeMode::Minimal => "minimal",
        },
        dangling_tool_calls: match dangling {
            DanglingToolCalls::Repair => "repair",
            DanglingToolCalls::Drop => "drop",
        },
    }
}
