//! The lifecycle methods: `initialize` and `shutdown`.

use crate::server::errors::invalid_params;
use crate::server::table::{MethodTable, Policy};
use crate::server::wire::parse;
use jsonrpsee::types::{ErrorObjectOwned, Params};
use serde::Deserialize;
use serde_json::{json, Value};

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

pub(super) fn register(m: &mut MethodTable) {
    m.register_sync("initialize", Policy::LIFECYCLE, |params, ctx| -> RpcResult<Value> {
        check_initialize(&params)?;
        let limits = ctx.service.limits();
        let mut result = json!({
            "serverInfo": { "name": "threadkeeper", "version": env!("CARGO_PKG_VERSION") },
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {
                "renderFormats": ["xml", "messages", "text", "openai-chat", "openai-responses", "anthropic", "ai-sdk", "pydantic-ai", "gemini", "bedrock-converse"],
                "contextModes": ["standard", "xml"],
                "escapeModes": ["full", "minimal"],
                "turnFormats": ["yaml", "json"],
                "store": { "kind": ctx.service.store_kind() },
                "limits": {
                    "maxFrameBytes": ctx.max_frame_bytes,
                    "maxEventsPerCall": limits.max_events_per_call,
                    "maxEventBytes": limits.max_event_bytes,
                    "maxBlobBytes": limits.max_blob_bytes,
                    "maxThreadsInMemory": limits.max_threads_in_memory,
                },
            },
        });
        // Present only when the export is on, so a server without it answers as before.
        if let Some(tracing) = ctx.tracing {
            result["capabilities"]["tracing"] = json!({
                "exporter": "otlp",
                "protocol": "http/protobuf",
                "captureContent": tracing.capture_content,
            });
        }
        Ok(result)
    });
    m.register_sync("shutdown", Policy::LIFECYCLE, |_, _| -> RpcResult<Value> { Ok(Value::Null) });
}
