//! Events from OpenAI Responses input items: the inverse of the `openai-responses` projection.
//!
//! Items are read into the stored messages the projection was made from, and those go through
//! the same conversion as `messages/toEvents`, so both inverses read labels and repairs alike:
//!
//! | item | read as |
//! |---|---|
//! | `message` user | human message (its label, if any, decides the event) |
//! | `message` system / developer | system message → `message` system |
//! | `message` assistant | AI message with its text |
//! | `function_call` (consecutive ones together) | one AI message with those calls; `arguments` parsed as JSON |
//! | `function_call_output` | tool message; an output labelled as an error or a not-completed answer is read with `status: "error"` (the Responses form has no status) |
//! | `reasoning` | a `turn_block` event carrying the reasoning block the projection replays |
//!
//! Any other item type is refused, naming the item: nothing is dropped unseen. With `keepItems`
//! it is kept instead, verbatim, in a `responses_item` event that no render but the XML shows.

use super::from_messages::{sources_to_events, EventStamp, Source, KEPT_ITEM_EVENT_TYPE};
use super::input_fields::{fault, string};
use super::kept_media::names_provider_file;
use super::media_blocks::{media_parts, Form};
use crate::event::{json_type, AgentEvent, EventError};
use crate::messages::labels::{NON_RECOVERABLE_LABEL, NOT_COMPLETED_LABEL, RECOVERABLE_LABEL};
use crate::messages::{Content, MessageType, StoredMessage, ToolCall};
use crate::turns::events::TURN_BLOCK_EVENT_TYPE;
use serde_json::{Map, Value};

/// Output labels that mean the tool message was rendered with `status: "error"`.
const ERROR_OUTPUT_LABELS: &[&str] = &[RECOVERABLE_LABEL, NON_RECOVERABLE_LABEL, NOT_COMPLETED_LABEL];

/// The events of Responses input items. Errors name the item and field: `items[3].call_id: missing`.
pub fn responses_to_events(items: &[Value], stamp: &EventStamp) -> Result<Vec<AgentEvent>, EventError> {
    convert(items, stamp, false)
}

/// The same events, each also keeping the item it was made from, verbatim, in `responsesItem`
/// (`null` on an event made from none, such as the question a not-completed output gives back);
/// an item that makes no event of its own is kept by a `{type: "responses_item", responsesItem}`
/// event in its place, which every render but the XML document passes over.
/// [`super::responses_from_events`] gives the items back, in order.
pub fn responses_to_events_keeping_items(items: &[Value], stamp: &EventStamp) -> Result<Vec<AgentEvent>, EventError> {
    convert(items, stamp, true)
}

fn convert(items: &[Value], stamp: &EventStamp, keep_items: bool) -> Result<Vec<AgentEvent>, EventError> {
    let mut pieces: Vec<Piece> = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        read_item(item, index, keep_items, &mut pieces)?;
    }
    let kept = |indices: &[usize]| -> Vec<&Value> {
        if keep_items {
            indices.iter().map(|&i| &items[i]).collect()
        } else {
            Vec::new()
        }
    };
    let sources: Vec<Source<'_>> = pieces
        .iter()
        .map(|piece| match piece {
            Piece::Message { message, indices } => {
                Source::Message { message, path: format!("items[{}]", indices[0]), items: kept(indices) }
            }
            // A reasoning event that gives back its very item keeps no copy (the XML shows it whole).
            Piece::Event { fields, index } if reasoning_item(fields).as_ref() == Some(&items[*index]) => {
                Source::Event { fields: fields.clone(), items: Vec::new() }
            }
            Piece::Event { fields, index } => Source::Event { fields: fields.clone(), items: kept(&[*index]) },
        })
        .collect();
    sources_to_events(&sources, stamp, keep_items, false)
}

/// An item read: a message (consecutive function calls share one; `indices` are their items),
/// or a ready event.
enum Piece {
    Message { message: StoredMessage, indices: Vec<usize> },
    Event { fields: Map<String, Value>, index: usize },
}

fn read_item(item: &Value, index: usize, keep_items: bool, out: &mut Vec<Piece>) -> Result<(), EventError> {
    let path = format!("items[{index}]");
    let fields =
        item.as_object().ok_or_else(|| fault(&path, format!("expected an object, found {}", json_type(item))))?;
    // An input message may leave out `type` (the API's "easy input message").
    let item_type = match fields.get("type") {
        None if fields.contains_key("role") => "message",
        None => return Err(fault(&format!("{path}.type"), "missing")),
        Some(Value::String(name)) => name.as_str(),
        Some(other) => {
            return Err(fault(&format!("{path}.type"), format!("expected a string, found {}", json_type(other))))
        }
    };
    let message = match item_type {
        "message" => read_message(fields, &path, keep_items)?,
        "function_call" => {
            let call = read_call(fields, &path)?;
            if let Some(Piece::Message { message, indices }) = out.last_mut() {
                if message.message_type == MessageType::Ai && !message.tool_calls().is_empty() {
                    message.data.tool_calls.get_or_insert_with(Vec::new).push(call);
                    indices.push(index);
                    return Ok(());
                }
            }
            StoredMessage::ai_tool_calls(vec![call])
        }
        "function_call_output" => read_output(fields, &path, keep_items)?,
        // Kept, a reasoning item without an id (no model takes it back) is the host's as it is.
        "reasoning" if keep_items && !fields.get("id").is_some_and(Value::is_string) => {
            out.push(Piece::Event { fields: kept_item_event(), index });
            return Ok(());
        }
        "reasoning" => {
            out.push(Piece::Event { fields: reasoning_event(fields, &path)?, index });
            return Ok(());
        }
        // Kept, an item of another type (a hosted tool's call, ...) is the host's as it is: the
        // model input has no place for it.
        _ if keep_items => {
            out.push(Piece::Event { fields: kept_item_event(), index });
            return Ok(());
        }
        other => {
            return Err(fault(
                &format!("{path}.type"),
                format!(
                "unsupported item type {other:?}: expected message, function_call, function_call_output or reasoning"
            ),
            ))
        }
    };
    out.push(Piece::Message { message, indices: vec![index] });
    Ok(())
}

fn read_message(fields: &Map<String, Value>, path: &str, keep_items: bool) -> Result<StoredMessage, EventError> {
    let role = string(fields, "role", path)?;
    let content_path = format!("{path}.content");
    let text = content_text(fields.get("content"), &content_path)?;
    let media = match fields.get("content") {
        Some(Value::Array(parts)) => held_media(parts, keep_items, &content_path)?,
        _ => None,
    };
    let mut message = match (role, media) {
        ("user", Some(parts)) => StoredMessage::with_parts(MessageType::Human, parts),
        ("assistant", Some(parts)) => StoredMessage::with_parts(MessageType::Ai, parts),
        ("system" | "developer", Some(parts)) => StoredMessage::with_parts(MessageType::System, parts),
        (role, _) => match role {
            "user" => StoredMessage::human(text),
            "system" | "developer" => StoredMessage::system(text),
            "assistant" => StoredMessage::ai(text),
            other => {
                return Err(fault(
                    &format!("{path}.role"),
                    format!("expected user, system, developer or assistant, found {other:?}"),
                ))
            }
        },
    };
    if let Some(id) = fields.get("id").filter(|id| id.is_string()) {
        message.data.extra.insert("id".into(), id.clone());
    }
    Ok(message)
}

/// The media parts of an item's content. Kept, a part naming a provider's file (`file_id`) is
/// passed over (the item keeps it whole); otherwise it is refused, naming it.
fn held_media(parts: &[Value], keep_items: bool, path: &str) -> Result<Option<Vec<Value>>, EventError> {
    if !keep_items || !parts.iter().any(names_provider_file) {
        return media_parts(parts, Form::Responses, path);
    }
    // Nulls, which no form reads, keep the other parts' indices in error paths.
    let held: Vec<Value> =
        parts.iter().map(|part| if names_provider_file(part) { Value::Null } else { part.clone() }).collect();
    media_parts(&held, Form::Responses, path)
}

/// A message's content: a string, or parts whose `text` (`input_text`, `output_text`, `text`)
/// is joined; parts without text (images, files, refusals) carry none.
fn content_text(content: Option<&Value>, path: &str) -> Result<String, EventError> {
    match content {
        Some(Value::String(text)) => Ok(text.clone()),
        Some(Value::Array(parts)) => Ok(parts
            .iter()
            .filter(|part| {
                matches!(part.get("type").and_then(Value::as_str), Some("input_text" | "output_text" | "text"))
            })
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect()),
        None => Err(fault(path, "missing")),
        Some(other) => Err(fault(path, format!("expected a string or a list of parts, found {}", json_type(other)))),
    }
}

fn read_call(fields: &Map<String, Value>, path: &str) -> Result<ToolCall, EventError> {
    let id = string(fields, "call_id", path)?;
    let name = string(fields, "name", path)?;
    let arguments = match fields.get("arguments") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::String(text)) => serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone())),
        Some(other) => other.clone(),
    };
    // Every provider needs an object; anything else is kept whole under `input`, as
    // `toolCalls/parse` and `xml/parseThread` keep it.
    let args = match arguments {
        Value::Object(args) => args,
        other => Map::from_iter([("input".to_owned(), other)]),
    };
    Ok(ToolCall::new(id, name, args))
}

fn read_output(fields: &Map<String, Value>, path: &str, keep_items: bool) -> Result<StoredMessage, EventError> {
    let id = string(fields, "call_id", path)?;
    let mut message = match fields.get("output") {
        Some(Value::String(text)) => StoredMessage::tool(id, text.clone()),
        Some(Value::Array(parts)) => match held_media(parts, keep_items, &format!("{path}.output"))? {
            Some(parts) => {
                let mut message = StoredMessage::tool(id, String::new());
                message.data.content = Content::Parts(parts.into());
                message
            }
            None => StoredMessage::tool(id, content_text(fields.get("output"), &format!("{path}.output"))?),
        },
        None => return Err(fault(&format!("{path}.output"), "missing")),
        Some(other) => {
            let mut message = StoredMessage::tool(id, String::new());
            message.data.content = Content::Other(Box::new(other.clone()));
            message
        }
    };
    let content = message.content_str().unwrap_or_default();
    if ERROR_OUTPUT_LABELS.iter().any(|label| content.starts_with(label)) {
        message.data.extra.insert("status".into(), Value::String("error".into()));
    }
    Ok(message)
}

/// The `turn_block` event whose reasoning block the projection replays as this item: the
/// payload keeps `item_id` (the item's `id`), `summary` and `encrypted_content` as given.
fn reasoning_event(fields: &Map<String, Value>, path: &str) -> Result<Map<String, Value>, EventError> {
    let id = string(fields, "id", path)?;
    let mut payload = Map::new();
    if let Some(encrypted) = fields.get("encrypted_content").filter(|v| !v.is_null()) {
        payload.insert("encrypted_content".into(), encrypted.clone());
    }
    payload.insert("item_id".into(), Value::String(id.to_owned()));
    payload.insert("summary".into(), fields.get("summary").cloned().unwrap_or_else(|| Value::Array(Vec::new())));
    let mut block = Map::new();
    block.insert("kind".into(), "reasoning".into());
    block.insert("payload".into(), Value::Object(payload));
    let mut event = Map::new();
    event.insert("type".into(), TURN_BLOCK_EVENT_TYPE.into());
    event.insert("block".into(), Value::Object(block));
    Ok(event)
}

/// The event that keeps an item with nothing else (its `responsesItem` is added with the stamps).
fn kept_item_event() -> Map<String, Value> {
    Map::from_iter([("type".to_owned(), Value::from(KEPT_ITEM_EVENT_TYPE))])
}

/// The reasoning item a reasoning `turn_block` event was made from, rebuilt from its block:
/// `{type, id: item_id, summary, encrypted_content?}`; `None` for any other event.
pub(super) fn reasoning_item(fields: &Map<String, Value>) -> Option<Value> {
    if fields.get("type")?.as_str()? != TURN_BLOCK_EVENT_TYPE {
        return None;
    }
    let block = fields.get("block")?.as_object()?;
    if block.get("kind")?.as_str()? != "reasoning" {
        return None;
    }
    let payload = block.get("payload")?.as_object()?;
    let mut item = Map::new();
    item.insert("type".into(), "reasoning".into());
    item.insert("id".into(), Value::String(payload.get("item_id")?.as_str()?.to_owned()));
    item.insert("summary".into(), payload.get("summary")?.clone());
    if let Some(encrypted) = payload.get("encrypted_content") {
        item.insert("encrypted_content".into(), encrypted.clone());
    }
    Some(Value::Object(item))
}
