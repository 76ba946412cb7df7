//! Protocol v1 methods, registered in the [`MethodTable`] with how each is run.
//!
//! Each method parses its params into a typed struct (errors name the failing field), calls
//! the thread service or a pure core function, and shapes the result as `protocol/` specifies.

use super::cancel;
use super::errors::{from_service, invalid_params};
pub use super::table::Context;
use super::table::{MethodTable, Policy};
use super::wire::{parse, TextResult, ThreadInfo};
use crate::event::AgentEvent;
use crate::event_log::EventLog;
use crate::messages::{ContextMode, DanglingToolCalls, StoredMessage};
use crate::providers::Provider;
use crate::service::{EventPage, RenderFormat, RenderOptions, Rendered};
use crate::store::{ForkPoint, ThreadSettings};
use crate::xml::{EscapeMode, XmlOptions};
use jsonrpsee::types::{ErrorObjectOwned, Params};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{json, Map, Value};

pub const PROTOCOL_VERSION: u64 = 1;

type RpcResult<T> = Result<T, ErrorObjectOwned>;

/// Checks `initialize` params.
fn check_initialize(params: &Params) -> RpcResult<()> {
    let p: InitializeParams = parse(params)?;
    if let Some(v) = p.protocol_version {
        if v != PROTOCOL_VERSION {
            return Err(invalid_params(
                "protocolVersion",
                &format!("this server speaks protocol version {PROTOCOL_VERSION}, not {v}"),
            ));
        }
    }
    Ok(())
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitializeParams {
    #[serde(default)]
    #[allow(dead_code)]
    client_info: Option<Value>,
    #[serde(default)]
    protocol_version: Option<u64>,
}

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

#[derive(Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub(super) enum Format {
    Xml,
    #[default]
    Messages,
    Text,
    #[serde(rename = "openai-chat")]
    OpenAiChat,
    #[serde(rename = "openai-responses")]
    OpenAiResponses,
    Anthropic,
    #[serde(rename = "pydantic-ai")]
    PydanticAi,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct RenderOptionsParams {
    context_mode: Option<ContextMode>,
    instructions: Option<String>,
    response_prefix: Option<String>,
    #[serde(default)]
    escape: EscapeMode,
    /// Accepted for compatibility; rule 8b groups every call made while others are pending.
    #[serde(default, rename = "groupToolCalls")]
    _group_tool_calls: bool,
    #[serde(default)]
    dangling_tool_calls: DanglingToolCalls,
    from_event: Option<u64>,
    /// Render within a token budget (`thread/render` only).
    pub(super) budget: Option<super::context_methods::BudgetParams>,
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

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SerializeParams {
    events: Vec<Value>,
    #[serde(default)]
    options: XmlOptions,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TextParams {
    text: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MessagesParams {
    messages: Vec<StoredMessage>,
}

/// Builds the module with every v1 method.
pub fn table(context: Context) -> MethodTable {
    let mut m = MethodTable::new(context);
    register_lifecycle(&mut m);
    register_threads(&mut m);
    register_stateless(&mut m);
    super::turn_methods::register(&mut m);
    super::prompt_methods::register(&mut m);
    super::context_methods::register(&mut m);
    super::view_methods::register(&mut m);
    m
}

fn register_lifecycle(m: &mut MethodTable) {
    m.register_sync("initialize", Policy::LIFECYCLE, |params, ctx| -> RpcResult<Value> {
        check_initialize(&params)?;
        let limits = ctx.service.limits();
        Ok(json!({
            "serverInfo": { "name": "threadkeeper", "version": env!("CARGO_PKG_VERSION") },
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {
                "renderFormats": ["xml", "messages", "text", "openai-chat", "openai-responses", "anthropic", "pydantic-ai"],
                "contextModes": ["standard", "xml"],
                "escapeModes": ["full", "minimal"],
                "turnFormats": ["yaml", "json"],
                "store": { "kind": ctx.service.store_kind() },
                "limits": {
                    "maxFrameBytes": ctx.max_frame_bytes,
                    "maxEventsPerCall": limits.max_events_per_call,
                    "maxEventBytes": limits.max_event_bytes,
                    "maxThreadsInMemory": limits.max_threads_in_memory,
                },
            },
        }))
    });
    m.register_sync("shutdown", Policy::LIFECYCLE, |_, _| -> RpcResult<Value> { Ok(Value::Null) });
}

fn register_threads(m: &mut MethodTable) {
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
            return super::context_methods::render_within_budget(&ctx, p.thread_id, p.format, o, budget).await;
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

fn register_stateless(m: &mut MethodTable) {
    m.register_sync("xml/serializeThread", Policy::STATELESS, |params, ctx| -> RpcResult<TextResult> {
        let p: SerializeParams = parse(&params)?;
        let valid = ctx.service.validate_events(p.events).map_err(from_service)?;
        Ok(TextResult { text: crate::xml::serialize_thread_to_xml(&valid.events, &p.options) })
    });

    m.register_sync("xml/escape", Policy::STATELESS, |params, _| -> RpcResult<TextResult> {
        let p: TextParams = parse(&params)?;
        Ok(TextResult { text: crate::xml::escape_xml(&p.text) })
    });

    m.register_sync("xml/parseThread", Policy::STATELESS, |params, _| -> RpcResult<Value> {
        let p: TextParams = parse(&params)?;
        let events = crate::xml::parse_thread_xml(&p.text).map_err(|e| invalid_params("text", &e.to_string()))?;
        let events: Vec<&Map<String, Value>> = events.iter().map(AgentEvent::fields).collect();
        Ok(json!({ "events": events }))
    });

    m.register_sync("messages/toXml", Policy::STATELESS, |params, _| -> RpcResult<TextResult> {
        let p: MessagesParams = parse(&params)?;
        Ok(TextResult { text: crate::convert::messages_to_xml(&p.messages) })
    });

    m.register_sync("messages/toText", Policy::STATELESS, |params, _| -> RpcResult<TextResult> {
        let p: MessagesParams = parse(&params)?;
        Ok(TextResult { text: crate::convert::messages_to_prompt(&p.messages) })
    });

    super::inverse_methods::register(m);

    m.register_sync("toolCalls/parse", Policy::STATELESS, |params, _| -> RpcResult<Value> {
        let p: TextParams = parse(&params)?;
        serde_json::to_value(crate::convert::parse_tool_calls(&p.text))
            .map_err(|e| ErrorObjectOwned::owned(super::errors::INTERNAL_ERROR, e.to_string(), None::<()>))
    });
}

/// What `thread/render` (and `thread/tokens`) are asked for, checked.
pub(super) fn render_args(format: Format, o: RenderOptionsParams) -> RpcResult<(RenderFormat, RenderOptions)> {
    if o.from_event.is_some() && !matches!(format, Format::Xml) {
        return Err(invalid_params("options.fromEvent", "applies to format \"xml\" only"));
    }
    let format = match format {
        Format::Xml => RenderFormat::Xml,
        Format::Messages => RenderFormat::Messages,
        Format::Text => RenderFormat::Text,
        Format::OpenAiChat => RenderFormat::Provider(Provider::OpenAiChat),
        Format::OpenAiResponses => RenderFormat::Provider(Provider::OpenAiResponses),
        Format::Anthropic => RenderFormat::Provider(Provider::Anthropic),
        Format::PydanticAi => RenderFormat::Provider(Provider::PydanticAi),
    };
    let options = RenderOptions {
        from_event: o.from_event,
        context_mode: o.context_mode,
        instructions: o.instructions,
        response_prefix: o.response_prefix,
        escape: o.escape,
        dangling_tool_calls: o.dangling_tool_calls,
    };
    Ok((format, options))
}

/// A render's result as JSON text: what the renderer wrote is spliced in, never parsed into a
/// tree or copied message by message.
pub(super) fn render_result(rendered: Rendered) -> Box<RawValue> {
    let text = match rendered {
        Rendered::Xml { version, text } => to_json(&json_shapes::Text { format: "xml", version, text: &text }),
        Rendered::Text { version, text } => to_json(&json_shapes::Text { format: "text", version, text: &text }),
        Rendered::XmlDelta { version, event_count, from_event, lines, tail } => to_json(&json_shapes::XmlDelta {
            format: "xml",
            version,
            event_count,
            from_event,
            lines: &lines,
            tail: &tail,
        }),
        Rendered::Messages { version, context_mode, json } => {
            format!(
                r#"{{"format":"messages","version":{version},"contextMode":"{}","messages":{json}}}"#,
                context_mode.as_str()
            )
        }
        Rendered::Provider { version, context_mode, provider, json } => {
            let fields = json.strip_prefix('{').expect("a request body is a JSON object");
            format!(
                r#"{{"format":"{}","version":{version},"contextMode":"{}",{fields}"#,
                provider.name(),
                context_mode.as_str()
            )
        }
    };
    RawValue::from_string(text).expect("renderers write JSON")
}

fn to_json(value: &impl Serialize) -> String {
    serde_json::to_string(value).expect("results serialize")
}

/// Result shapes serialized straight from borrowed text.
mod json_shapes {
    use serde::Serialize;

    #[derive(Serialize)]
    pub struct Text<'a> {
        pub format: &'static str,
        pub version: u64,
        pub text: &'a str,
    }

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct XmlDelta<'a> {
        pub format: &'static str,
        pub version: u64,
        pub event_count: u64,
        pub from_event: u64,
        pub lines: &'a str,
        pub tail: &'a str,
    }
}
