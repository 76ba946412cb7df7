//! The thread methods: open, append, render, events, pop, fork, list, close, delete.

use super::params::{render_args, Format, RenderOptionsParams};
use super::render::{render_result, render_within_budget};
use crate::event_log::EventLog;
use crate::server::cancel;
use crate::server::errors::{from_service, invalid_params};
use crate::server::table::{MethodTable, Policy};
use crate::server::wire::{parse, ThreadInfo};
use crate::service::EventPage;
use crate::store::{ForkPoint, ThreadSettings};
use jsonrpsee::types::ErrorObjectOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

type RpcResult<T> = Result<T, ErrorObjectOwned>;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct OpenParams {
    thread_id: Option<String>,
    settings: Option<ThreadSettings>,
    metadata: Option<Map<String, Value>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AppendParams {
    thread_id: String,
    events: Vec<Value>,
    expected_version: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RenderParams {
    thread_id: String,
    format: Format,
    #[serde(default)]
    options: Option<RenderOptionsParams>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct EventsParams {
    thread_id: String,
    offset: Option<u64>,
    limit: Option<u64>,
    /// The last N events; not with `offset`.
    tail: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PopParams {
    thread_id: String,
    #[serde(default = "one")]
    count: u64,
    expected_version: Option<u64>,
}

fn one() -> u64 {
    1
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ForkParams {
    thread_id: String,
    at_version: Option<u64>,
    at_event: Option<u64>,
    new_thread_id: Option<String>,
    metadata: Option<Map<String, Value>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PopResult {
    events: EventLog,
    version: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ThreadIdParams {
    thread_id: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Empty {}

#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct EventsResult {
    version: u64,
    event_count: u64,
    events: EventLog,
}

pub(super) fn register(m: &mut MethodTable) {
    m.register("thread/open", Policy::THREAD_WRITE_QUICK, |params, ctx| async move {
        let p: OpenParams = parse(&params)?;
        let record = ctx.service.open(p.thread_id, p.settings, p.metadata).await.map_err(from_service)?;
        RpcResult::Ok(ThreadInfo::from(record))
    });

    m.register("thread/append", Policy::THREAD_WRITE_QUICK, |params, ctx| async move {
        let p: AppendParams = parse(&params)?;
        let events = ctx.service.validate_events(p.events).map_err(from_service)?;
        let record = ctx.service.append(&p.thread_id, events, p.expected_version).await.map_err(from_service)?;
        RpcResult::Ok(json!({
            "threadId": record.thread_id,
            "version": record.version,
            "eventCount": record.event_count,
        }))
    });

    m.register_raw("thread/render", Policy::THREAD_READ_QUICK, |params, ctx| async move {
        let p: RenderParams = parse(&params)?;
        let mut o = p.options.unwrap_or_default();
        if let Some(budget) = o.budget.take() {
            return render_within_budget(&ctx, p.thread_id, p.format, o, budget).await;
        }
        let (format, options) = render_args(p.format, o)?;
        let rendered =
            ctx.service.render(&p.thread_id, format, options, &cancel::current()).await.map_err(from_service)?;
        Ok(render_result(rendered))
    });

    m.register("thread/events", Policy::THREAD_READ_QUICK, |params, ctx| async move {
        let p: EventsParams = parse(&params)?;
        let page = match p.tail {
            Some(_) if p.offset.is_some() || p.limit.is_some() => {
                return Err(invalid_params("tail", "not with offset or limit (tail counts from the end)"))
            }
            Some(tail) => ctx.service.events_tail(&p.thread_id, tail).await,
            None => ctx.service.events(&p.thread_id, p.offset.unwrap_or(0), p.limit).await,
        };
        let EventPage { version, event_count, events } = page.map_err(from_service)?;
        // Stored events are already the JSON to send: shared, not copied, and not re-serialized.
        RpcResult::Ok(EventsResult { version, event_count, events })
    });

    m.register("thread/pop", Policy::THREAD_WRITE_QUICK, |params, ctx| async move {
        let p: PopParams = parse(&params)?;
        let (events, record) =
            ctx.service.pop(&p.thread_id, p.count, p.expected_version).await.map_err(from_service)?;
        RpcResult::Ok(PopResult { events, version: record.version })
    });

    m.register("thread/fork", Policy::THREAD_WRITE_QUICK, |params, ctx| async move {
        let p: ForkParams = parse(&params)?;
        let at = match (p.at_version, p.at_event) {
            (Some(_), Some(_)) => return Err(invalid_params("atEvent", "not with atVersion (give one fork point)")),
            (Some(version), None) => ForkPoint::Version(version),
            (None, Some(events)) => ForkPoint::Events(events),
            (None, None) => ForkPoint::Whole,
        };
        let record = ctx.service.fork(&p.thread_id, at, p.new_thread_id, p.metadata).await.map_err(from_service)?;
        RpcResult::Ok(ThreadInfo::from(record))
    });

    m.register("thread/list", Policy::SERVICE_READ, |params, ctx| async move {
        let _: Empty = parse(&params)?;
        let records = ctx.service.list().await.map_err(from_service)?;
        let threads: Vec<ThreadInfo> = records.into_iter().map(ThreadInfo::from).collect();
        RpcResult::Ok(json!({ "threads": threads }))
    });

    m.register("thread/close", Policy::THREAD_WRITE_QUICK, |params, ctx| async move {
        let p: ThreadIdParams = parse(&params)?;
        ctx.service.close(&p.thread_id).await.map_err(from_service)?;
        RpcResult::Ok(json!({ "threadId": p.thread_id, "closed": true }))
    });

    m.register("thread/delete", Policy::THREAD_WRITE_QUICK, |params, ctx| async move {
        let p: ThreadIdParams = parse(&params)?;
        let deleted = ctx.service.delete(&p.thread_id).await.map_err(from_service)?;
        RpcResult::Ok(json!({ "threadId": p.thread_id, "deleted": deleted }))
    });
}
