//! The inverses of the renders: `messages/toEvents`, `responses/toEvents`, `aiSdk/toEvents`,
//! `pydanticAi/toEvents`, `gemini/toEvents` and `bedrockConverse/toEvents`, and the items `responses/toEvents` kept on events back
//! (`responses/fromEvents`).

use crate::convert::{
    ai_sdk_to_events, bedrock_converse_to_events, gemini_to_events, kept_item_blobs, kept_media_from_blobs,
    kept_media_to_blobs, messages_to_events, messages_to_events_keeping_block_forms, pydantic_ai_to_events,
    responses_from_events, responses_to_events, responses_to_events_keeping_items, EventStamp,
};
use crate::event::{AgentEvent, EventError};
use crate::messages::StoredMessage;
use crate::server::errors::{from_service, invalid_params};
use crate::server::table::{MethodTable, Policy};
use crate::server::wire::parse;
use jsonrpsee::types::ErrorObjectOwned;
use serde::Deserialize;
use serde_json::{json, Number, Value};

type RpcResult<T> = Result<T, ErrorObjectOwned>;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct MessagesParams {
    messages: Vec<StoredMessage>,
    iteration: Option<Number>,
    timestamp: Option<Number>,
    /// Media parts keep the form of the LangChain block they were made of.
    #[serde(default)]
    keep_block_forms: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ItemsParams {
    items: Vec<Value>,
    iteration: Option<Number>,
    timestamp: Option<Number>,
    #[serde(default)]
    keep_items: bool,
    /// With `keepItems`: a kept item's media bytes name the blob its event's part stores.
    #[serde(default)]
    keep_media_as_blobs: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EventsParams {
    events: Vec<Value>,
}

/// A framework's model messages (AI SDK or Pydantic AI): checked part by part by the conversion,
/// which names what it refuses.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ModelMessagesParams {
    messages: Vec<Value>,
    iteration: Option<Number>,
    timestamp: Option<Number>,
}

/// A Gemini body's `contents` (its `systemInstruction` is the host's instructions, not events).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct GeminiParams {
    contents: Vec<Value>,
    iteration: Option<Number>,
    timestamp: Option<Number>,
}

pub(super) fn register(m: &mut MethodTable) {
    m.register_sync("gemini/toEvents", Policy::STATELESS, |params, _| -> RpcResult<Value> {
        let p: GeminiParams = parse(&params)?;
        converted(gemini_to_events(&p.contents, &stamp(p.iteration, p.timestamp)))
    });

    m.register_sync("bedrockConverse/toEvents", Policy::STATELESS, |params, _| -> RpcResult<Value> {
        let p: ModelMessagesParams = parse(&params)?;
        converted(bedrock_converse_to_events(&p.messages, &stamp(p.iteration, p.timestamp)))
    });

    m.register_sync("messages/toEvents", Policy::STATELESS, |params, _| -> RpcResult<Value> {
        let p: MessagesParams = parse(&params)?;
        let convert = if p.keep_block_forms { messages_to_events_keeping_block_forms } else { messages_to_events };
        converted(convert(&p.messages, &stamp(p.iteration, p.timestamp)))
    });

    m.register_sync("responses/toEvents", Policy::STATELESS, |params, _| -> RpcResult<Value> {
        let p: ItemsParams = parse(&params)?;
        let stamp = stamp(p.iteration, p.timestamp);
        if p.keep_media_as_blobs && !p.keep_items {
            return Err(invalid_params("keepMediaAsBlobs", "needs keepItems: true"));
        }
        let convert = if p.keep_items { responses_to_events_keeping_items } else { responses_to_events };
        let events = convert(&p.items, &stamp);
        converted(if p.keep_media_as_blobs { events.map(kept_media_to_blobs) } else { events })
    });

    // Reads the store only for kept items whose media bytes name blobs (`responsesItemBlobs`).
    m.register("responses/fromEvents", Policy::SERVICE_READ, |params, ctx| async move {
        let p: EventsParams = parse(&params)?;
        let mut events = p.events;
        let blobs = kept_item_blobs(&events).map_err(|e| invalid_params(&e.path, &e.reason))?;
        if !blobs.is_empty() {
            let ids = blobs.iter().map(|(id, _)| id.clone()).collect();
            let media = ctx.service.media_for(ids).await.map_err(from_service)?;
            kept_media_from_blobs(&mut events, &media).map_err(|e| invalid_params(&e.path, &e.reason))?;
        }
        let events = AgentEvent::list_from_values(events).map_err(|e| invalid_params(&e.path, &e.reason))?;
        let items = responses_from_events(&events).map_err(|e| invalid_params(&e.path, &e.reason))?;
        RpcResult::Ok(json!({ "items": items }))
    });

    m.register_sync("aiSdk/toEvents", Policy::STATELESS, |params, _| -> RpcResult<Value> {
        let p: ModelMessagesParams = parse(&params)?;
        converted(ai_sdk_to_events(&p.messages, &stamp(p.iteration, p.timestamp)))
    });

    m.register_sync("pydanticAi/toEvents", Policy::STATELESS, |params, _| -> RpcResult<Value> {
        let p: ModelMessagesParams = parse(&params)?;
        converted(pydantic_ai_to_events(&p.messages, &stamp(p.iteration, p.timestamp)))
    });
}

/// Iteration 0 unless given; no timestamp unless given (events need none).
fn stamp(iteration: Option<Number>, timestamp: Option<Number>) -> EventStamp {
    EventStamp { iteration: iteration.unwrap_or_else(|| 0.into()), timestamp }
}

/// The `{events}` result of a conversion, or `-32602` naming the input that does not convert.
fn converted(events: Result<Vec<AgentEvent>, EventError>) -> RpcResult<Value> {
    let events = events.map_err(|e| invalid_params(&e.path, &e.reason))?;
    Ok(json!({ "events": events.into_iter().map(AgentEvent::into_value).collect::<Vec<_>>() }))
}
