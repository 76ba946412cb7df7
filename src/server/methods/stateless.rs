//! Stateless conversions: `xml/*`, `messages/toXml`, `messages/toText`, `toolCalls/parse`.

use crate::event::AgentEvent;
use crate::messages::StoredMessage;
use crate::server::errors::{from_service, invalid_params, INTERNAL_ERROR};
use crate::server::table::{MethodTable, Policy};
use crate::server::wire::{parse, TextResult};
use crate::xml::XmlOptions;
use jsonrpsee::types::ErrorObjectOwned;
use serde::Deserialize;
use serde_json::{json, Map, Value};

type RpcResult<T> = Result<T, ErrorObjectOwned>;

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

pub(super) fn register(m: &mut MethodTable) {
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

    m.register_sync("toolCalls/parse", Policy::STATELESS, |params, _| -> RpcResult<Value> {
        let p: TextParams = parse(&params)?;
        serde_json::to_value(crate::convert::parse_tool_calls(&p.text))
            .map_err(|e| ErrorObjectOwned::owned(INTERNAL_ERROR, e.to_string(), None::<()>))
    });
}
