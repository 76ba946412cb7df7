//! Threads ↔ turns: a lossless mapping between [`AgentEvent`]s and [`Block`]s.
//!
//! | event | block |
//! |---|---|
//! | `message`, role `user` / `assistant` / `system` | kind `user` / `llm_text` / `system`, same role, payload `{text: content}` |
//! | `tool_call` | kind `tool_call`, payload `{id: toolCallId, name: toolName, args}` |
//! | `tool_result` | kind `tool_use`, payload `{id: toolCallId, result}` |
//! | `turn_block` wrapping a block (see below) | that block |
//! | any other type (`error`, `human_input_requested`, `human_input_received`, `completion`, `summary`, unknown) | kind `other`, metadata `threadkeeper.event_type@v1: <type>`, payload = every field but `type`, `iteration`, `timestamp` |
//!
//! Every block made from an event carries `threadkeeper.iteration@v1` and, when the event has
//! one, `threadkeeper.timestamp@v1` in its metadata. Fields of a `message`, `tool_call` or
//! `tool_result` event that have no place in the block (upstream's newer `durationMs`,
//! `display`, ...) go, in order, into the object `threadkeeper.extra_fields@v1`. Key order is
//! data too: when the event's keys are not in the natural order — `type`, the type's own fields
//! in upstream's order, (for `other` blocks: the remaining payload keys sorted), `timestamp`,
//! `iteration`, then the extra fields — the order is kept in `threadkeeper.key_order@v1`.
//! Values are copied whole, so nested key order (tool arguments) is never touched.
//!
//! Going back, a block that carries any `threadkeeper.*` metadata key claims to be an exported
//! event: it must convert back to an event that exports to the very same block, or
//! [`turn_to_events`] fails naming the block. A block without such keys (from another tool,
//! e.g. a geppetto file) becomes the event it exactly describes when there is one — a plain
//! `user`/`llm_text`/`system` text block, a `tool_call` with object `args`, a `tool_use`; such
//! blocks have no iteration and get iteration 0 — and otherwise an event of type `turn_block`,
//! `{type: "turn_block", block: {...the whole block...}, iteration: 0}`, which converts back to
//! the same block. Reasoning blocks, unknown kinds, blocks with ids or foreign metadata all
//! travel that way.
//!
//! Both directions check themselves by converting back, so `turn_to_events(events_to_turn(e))`
//! gives `e` — same values, same key order — for every list of events, also through YAML or
//! JSON text (which sorts the top-level keys of payload and metadata, and nothing else).

use super::error::TurnError;
use super::model::{sort_keys, Block, BlockKind, Turn};
use crate::event::{json_type, AgentEvent, Content, EventKind, Role};
use serde_json::{Map, Value};

/// Metadata key: the event's `iteration`.
pub const ITERATION_KEY: &str = "threadkeeper.iteration@v1";
/// Metadata key: the event's `timestamp`, when it has one.
pub const TIMESTAMP_KEY: &str = "threadkeeper.timestamp@v1";
/// Metadata key of an `other` block: the event's `type`.
pub const EVENT_TYPE_KEY: &str = "threadkeeper.event_type@v1";
/// Metadata key: fields of a known event type that have no place in its block.
pub const EXTRA_FIELDS_KEY: &str = "threadkeeper.extra_fields@v1";
/// Metadata key: the event's keys in their order, when that is not the natural order.
pub const KEY_ORDER_KEY: &str = "threadkeeper.key_order@v1";
/// Metadata key of a block holding media: the order of its content parts, when it is not the
/// plain one (see [`media_payload`]): each text part's text, and each media part's index in
/// `payload.images`.
pub const PARTS_KEY: &str = "threadkeeper.parts@v1";
/// Metadata key of a `tool_use` block whose event gave content parts and no `result`: its
/// `payload.result` is the text of those parts, not a field of the event.
pub const RESULT_FROM_CONTENT_KEY: &str = "threadkeeper.result_from_content@v1";
/// Event type carrying a whole block that has no event form of its own.
pub const TURN_BLOCK_EVENT_TYPE: &str = "turn_block";

const MARK_PREFIX: &str = "threadkeeper.";

/// The thread as one turn: its id is the thread id, one block per event, in order.
pub fn events_to_turn(events: &[AgentEvent], thread_id: &str) -> Turn {
    Turn { id: thread_id.to_string(), blocks: events.iter().map(event_to_block).collect(), ..Turn::default() }
}

/// The events a turn describes, one per block, in order. Fails on a block that carries
/// `threadkeeper.*` metadata but is not what any event exports to.
pub fn turn_to_events(turn: &Turn) -> Result<Vec<AgentEvent>, TurnError> {
    turn.blocks.iter().enumerate().map(|(i, block)| block_event(i, block)).collect()
}

/// The event block `i` of a turn describes; fails naming the block as [`turn_to_events`] does.
pub(crate) fn block_event(i: usize, block: &Block) -> Result<AgentEvent, TurnError> {
    block_to_event(block).map_err(|(field, reason)| {
        let path = if field.is_empty() { format!("blocks[{i}]") } else { format!("blocks[{i}].{field}") };
        TurnError::invalid(path, reason)
    })
}

/// The block one event exports to.
pub fn event_to_block(event: &AgentEvent) -> Block {
    if event.event_type() == TURN_BLOCK_EVENT_TYPE {
        if let Some(block) = unwrap_block(event) {
            return block;
        }
    }
    let fields = event.fields();
    let mut block;
    let mut consumed: Vec<&str> = vec!["type", "iteration", "timestamp"];
    match event.kind() {
        EventKind::Message { role, content: Content::Text(content) } => {
            block = Block::new(message_kind(role));
            block.role = role.as_str().to_string();
            block.payload.insert("text".into(), Value::String(content.to_string()));
            consumed.extend(["role", "content"]);
        }
        // Seed 004's payload names `images` on user and system blocks: a message's media go
        // there (assistant ones too), its text parts into `text`.
        EventKind::Message { role, content: Content::Parts(parts) } => {
            block = Block::new(message_kind(role));
            block.role = role.as_str().to_string();
            let (text, images, layout) = media_payload(parts, true);
            block.payload.insert("text".into(), Value::String(text));
            block.payload.insert("images".into(), Value::Array(images));
            if let Some(layout) = layout {
                block.metadata.insert(PARTS_KEY.into(), layout);
            }
            consumed.extend(["role", "content"]);
        }
        // A tool result's media sit beside its `result`.
        EventKind::ToolResult { tool_call_id, result, content: Some(parts) } => {
            block = Block::new(BlockKind::ToolUse);
            block.payload.insert("id".into(), Value::String(tool_call_id.to_string()));
            let (text, images, layout) = media_payload(parts, result.is_none());
            match result {
                Some(result) => block.payload.insert("result".into(), result.clone()),
                None => {
                    block.metadata.insert(RESULT_FROM_CONTENT_KEY.into(), Value::Bool(true));
                    block.payload.insert("result".into(), Value::String(text))
                }
            };
            block.payload.insert("images".into(), Value::Array(images));
            if let Some(layout) = layout {
                block.metadata.insert(PARTS_KEY.into(), layout);
            }
            consumed.extend(["toolCallId", "result", "content"]);
        }
        EventKind::ToolCall { tool_name, tool_call_id, args } => {
            block = Block::new(BlockKind::ToolCall);
            block.payload.insert("id".into(), Value::String(tool_call_id.to_string()));
            block.payload.insert("name".into(), Value::String(tool_name.to_string()));
            block.payload.insert("args".into(), Value::Object(args.clone()));
            consumed.extend(["toolName", "toolCallId", "args"]);
        }
        EventKind::ToolResult { tool_call_id, result: Some(result), content: None } => {
            block = Block::new(BlockKind::ToolUse);
            block.payload.insert("id".into(), Value::String(tool_call_id.to_string()));
            block.payload.insert("result".into(), result.clone());
            consumed.extend(["toolCallId", "result"]);
        }
        _ => {
            block = Block::new(BlockKind::Other);
            block.metadata.insert(EVENT_TYPE_KEY.into(), Value::String(event.event_type().to_string()));
            consumed.extend(fields.keys().map(String::as_str));
            for (key, value) in fields {
                if !matches!(key.as_str(), "type" | "iteration" | "timestamp") {
                    block.payload.insert(key.clone(), value.clone());
                }
            }
        }
    }
    block.metadata.insert(ITERATION_KEY.into(), Value::Number(event.iteration().clone()));
    if let Some(timestamp) = fields.get("timestamp") {
        block.metadata.insert(TIMESTAMP_KEY.into(), timestamp.clone());
    }
    let extras: Map<String, Value> =
        fields.iter().filter(|(k, _)| !consumed.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect();
    if !extras.is_empty() {
        block.metadata.insert(EXTRA_FIELDS_KEY.into(), Value::Object(extras));
    }
    let keys: Vec<&str> = fields.keys().map(String::as_str).collect();
    if keys != natural_order(event.event_type(), block.kind == BlockKind::Other, &keys) {
        block.metadata.insert(KEY_ORDER_KEY.into(), keys.iter().map(|k| Value::String(k.to_string())).collect());
    }
    block
}

/// The event a block describes; on failure, the field at fault (relative to the block) and
/// what is wrong.
fn block_to_event(block: &Block) -> Result<AgentEvent, (String, String)> {
    let marked = block.metadata.keys().any(|k| k.starts_with(MARK_PREFIX));
    if !marked {
        // A block from elsewhere: the event it exactly describes (with iteration 0), if any.
        if let Ok(event) = rebuild_event(block) {
            let mut exported = event_to_block(&event);
            exported.metadata.shift_remove(ITERATION_KEY);
            if exported == *block {
                return Ok(event);
            }
        }
        return Ok(wrap_block(block));
    }
    let event = rebuild_event(block)?;
    let exported = event_to_block(&event);
    match first_difference(&exported, block) {
        None => Ok(event),
        Some((field, reason)) => {
            Err((field, format!("{reason}; the block is not an exported {} event", event.event_type())))
        }
    }
}

fn message_kind(role: Role) -> BlockKind {
    match role {
        Role::User => BlockKind::User,
        Role::Assistant => BlockKind::LlmText,
        Role::System => BlockKind::System,
    }
}

/// The fields each type names in upstream's order; `type` comes first and `timestamp`,
/// `iteration` last.
fn own_fields(event_type: &str) -> &'static [&'static str] {
    match event_type {
        "message" => &["role", "content"],
        "tool_call" => &["toolName", "toolCallId", "args"],
        "tool_result" => &["toolCallId", "result", "content"],
        "error" => &["error", "recoverable", "toolCallId"],
        "human_input_requested" => &["question", "context", "urgency", "format", "choices"],
        "human_input_received" => &["response"],
        "completion" => &["result", "verified"],
        "summary" => &["summarizedIterations", "summary"],
        _ => &[],
    }
}

/// The order an event's keys are rebuilt in: `type`, the type's own fields, (for `other`
/// blocks) the remaining keys sorted, `timestamp`, `iteration`, (otherwise) the remaining keys
/// as given.
fn natural_order<'k>(event_type: &str, other_block: bool, keys: &[&'k str]) -> Vec<&'k str> {
    let own = own_fields(event_type);
    let fixed = |k: &str| k == "type" || k == "timestamp" || k == "iteration" || own.contains(&k);
    let mut rest: Vec<&'k str> = keys.iter().copied().filter(|k| !fixed(k)).collect();
    let mut order: Vec<&'k str> = Vec::with_capacity(keys.len());
    let pick = |name: &str, order: &mut Vec<&'k str>| {
        if let Some(k) = keys.iter().find(|k| **k == name) {
            order.push(k);
        }
    };
    pick("type", &mut order);
    for name in own {
        pick(name, &mut order);
    }
    if other_block {
        rest.sort_unstable();
        order.append(&mut rest);
    }
    pick("timestamp", &mut order);
    pick("iteration", &mut order);
    order.append(&mut rest);
    order
}

type Fault = (String, String);

fn fault(field: &str, reason: impl Into<String>) -> Fault {
    (field.to_string(), reason.into())
}

/// Builds the event a block's fields describe, without checking it exports back to the block.
fn rebuild_event(block: &Block) -> Result<AgentEvent, Fault> {
    let meta = &block.metadata;
    let payload = &block.payload;
    let mut fields = Map::new();
    let message = |role: &str, fields: &mut Map<String, Value>| -> Result<(), Fault> {
        fields.insert("type".into(), "message".into());
        fields.insert("role".into(), role.into());
        let text = payload_string(payload, "text")?;
        let content = match payload.get("images") {
            None => text,
            Some(_) => Value::Array(parts_of(text.as_str().unwrap_or_default(), payload, meta, true)?),
        };
        fields.insert("content".into(), content);
        Ok(())
    };
    match block.kind {
        BlockKind::User => message("user", &mut fields)?,
        BlockKind::LlmText => message("assistant", &mut fields)?,
        BlockKind::System => message("system", &mut fields)?,
        BlockKind::ToolCall => {
            fields.insert("type".into(), "tool_call".into());
            fields.insert("toolName".into(), payload_string(payload, "name")?);
            fields.insert("toolCallId".into(), payload_string(payload, "id")?);
            fields.insert("args".into(), payload_value(payload, "args")?);
        }
        BlockKind::ToolUse => {
            fields.insert("type".into(), "tool_result".into());
            fields.insert("toolCallId".into(), payload_string(payload, "id")?);
            let result = payload_value(payload, "result")?;
            let from_content = meta.get(RESULT_FROM_CONTENT_KEY) == Some(&Value::Bool(true));
            if payload.contains_key("images") {
                let text = if from_content { result.as_str().unwrap_or_default() } else { "" };
                fields.insert("content".into(), Value::Array(parts_of(text, payload, meta, from_content)?));
            }
            if !from_content {
                fields.insert("result".into(), result);
            }
        }
        BlockKind::Other => {
            let field = format!("metadata.{EVENT_TYPE_KEY}");
            match meta.get(EVENT_TYPE_KEY) {
                Some(Value::String(t)) => fields.insert("type".into(), Value::String(t.clone())),
                Some(v) => return Err(fault(&field, format!("expected a string, found {}", json_type(v)))),
                None => return Err(fault(&field, "missing: an other block names its event type")),
            };
            for (key, value) in payload {
                if fields.contains_key(key) {
                    return Err(fault(&format!("payload.{key}"), "is not an event field"));
                }
                fields.insert(key.clone(), value.clone());
            }
        }
        BlockKind::Reasoning => return Err(fault("kind", "a reasoning block has no event form")),
    }
    if let Some(timestamp) = meta.get(TIMESTAMP_KEY) {
        fields.insert("timestamp".into(), timestamp.clone());
    }
    let iteration = meta.get(ITERATION_KEY).cloned().unwrap_or(Value::from(0));
    fields.insert("iteration".into(), iteration);
    let mut extra_keys = Vec::new();
    if block.kind != BlockKind::Other {
        match meta.get(EXTRA_FIELDS_KEY) {
            None => {}
            Some(Value::Object(extras)) => {
                for (key, value) in extras {
                    if fields.contains_key(key) {
                        return Err(fault(
                            &format!("metadata.{EXTRA_FIELDS_KEY}.{key}"),
                            "repeats a field the block holds",
                        ));
                    }
                    extra_keys.push(key.as_str());
                    fields.insert(key.clone(), value.clone());
                }
            }
            Some(v) => {
                return Err(fault(
                    &format!("metadata.{EXTRA_FIELDS_KEY}"),
                    format!("expected an object, found {}", json_type(v)),
                ))
            }
        }
    }
    let event_type = fields.get("type").and_then(Value::as_str).unwrap_or_default().to_string();
    let fields = order_fields(fields, block, &extra_keys)?;
    AgentEvent::from_map(fields, "event").map_err(|e| {
        let field = e.path.strip_prefix("event.").unwrap_or(&e.path);
        fault("", format!("describes an invalid {event_type:?} event: field {field}: {}", e.reason))
    })
}

/// A block's view of content parts: the text parts joined by newlines (`lead_text`: the plain
/// order starts with one text part holding it), the media parts for `payload.images`, and the
/// parts' order when it is not the plain one (`lead_text` ? one text part, then the media : the
/// media alone) — as [`PARTS_KEY`] keeps it.
fn media_payload(parts: &[Value], lead_text: bool) -> (String, Vec<Value>, Option<Value>) {
    let is_text = |part: &Value| part.get("type").and_then(Value::as_str) == Some("text");
    let text = crate::media::parts::text_parts_only(parts);
    let images: Vec<Value> = parts.iter().filter(|part| !is_text(part)).cloned().collect();
    let texts = parts.iter().filter(|part| is_text(part)).count();
    let plain = if lead_text {
        (texts == 0 && text.is_empty()) || (texts == 1 && is_text(&parts[0]) && !text.is_empty())
    } else {
        texts == 0
    };
    let plain = plain && parts.iter().all(|part| !is_text(part) || part.as_object().is_some_and(|p| p.len() == 2));
    let layout = (!plain).then(|| {
        let mut index = 0;
        Value::Array(
            parts
                .iter()
                .map(|part| match is_text(part) {
                    true => part.clone(),
                    false => {
                        index += 1;
                        Value::from(index - 1)
                    }
                })
                .collect(),
        )
    });
    (text, images, layout)
}

/// The content parts a block's payload and [`PARTS_KEY`] describe (the inverse of
/// [`media_payload`]).
fn parts_of(
    text: &str,
    payload: &Map<String, Value>,
    meta: &Map<String, Value>,
    lead_text: bool,
) -> Result<Vec<Value>, Fault> {
    let images = match payload.get("images") {
        Some(Value::Array(images)) => images,
        Some(other) => return Err(fault("payload.images", format!("expected an array, found {}", json_type(other)))),
        None => return Err(fault("payload.images", "missing")),
    };
    match meta.get(PARTS_KEY) {
        None => {
            let lead = (lead_text && !text.is_empty()).then(|| serde_json::json!({"type": "text", "text": text}));
            Ok(lead.into_iter().chain(images.iter().cloned()).collect())
        }
        Some(Value::Array(layout)) => {
            layout
                .iter()
                .enumerate()
                .map(|(i, entry)| match entry {
                    Value::Number(n) => n.as_u64().and_then(|n| images.get(n as usize)).cloned().ok_or_else(|| {
                        fault(&format!("metadata.{PARTS_KEY}[{i}]"), "names no image of payload.images")
                    }),
                    Value::Object(_) => Ok(entry.clone()),
                    other => Err(fault(
                        &format!("metadata.{PARTS_KEY}[{i}]"),
                        format!("expected a text part or an index into payload.images, found {}", json_type(other)),
                    )),
                })
                .collect()
        }
        Some(other) => {
            Err(fault(&format!("metadata.{PARTS_KEY}"), format!("expected an array, found {}", json_type(other))))
        }
    }
}

/// Puts rebuilt fields in the recorded key order, or else the natural one.
fn order_fields(
    mut fields: Map<String, Value>,
    block: &Block,
    extra_keys: &[&str],
) -> Result<Map<String, Value>, Fault> {
    let order: Vec<String> = match block.metadata.get(KEY_ORDER_KEY) {
        Some(recorded) => {
            let field = format!("metadata.{KEY_ORDER_KEY}");
            let names: Option<Vec<String>> =
                recorded.as_array().map(|items| items.iter().filter_map(|k| k.as_str().map(str::to_string)).collect());
            match names {
                Some(names)
                    if names.len() == fields.len()
                        && recorded.as_array().is_some_and(|a| a.len() == names.len())
                        && names.iter().all(|k| fields.contains_key(k)) =>
                {
                    let mut seen = std::collections::HashSet::new();
                    if !names.iter().all(|k| seen.insert(k.as_str())) {
                        return Err(fault(&field, "lists a key twice"));
                    }
                    names
                }
                _ => return Err(fault(&field, "is not a list of exactly the event's keys")),
            }
        }
        None => {
            // Extra fields keep their recorded order; every other key has a fixed place.
            let mut keys: Vec<&str> = fields.keys().map(String::as_str).filter(|k| !extra_keys.contains(k)).collect();
            keys.extend_from_slice(extra_keys);
            let event_type = fields.get("type").and_then(Value::as_str).unwrap_or_default();
            natural_order(event_type, block.kind == BlockKind::Other, &keys).into_iter().map(str::to_string).collect()
        }
    };
    Ok(order.into_iter().filter_map(|k| fields.shift_remove(&k).map(|v| (k, v))).collect())
}

fn payload_value(payload: &Map<String, Value>, key: &str) -> Result<Value, Fault> {
    payload.get(key).cloned().ok_or_else(|| fault(&format!("payload.{key}"), "missing"))
}

fn payload_string(payload: &Map<String, Value>, key: &str) -> Result<Value, Fault> {
    match payload_value(payload, key)? {
        s @ Value::String(_) => Ok(s),
        v => Err(fault(&format!("payload.{key}"), format!("expected a string, found {}", json_type(&v)))),
    }
}

/// `{type: "turn_block", block: {...}, iteration: 0}` for a block with no event form. The
/// block's own payload and metadata keys are sorted, as text would leave them.
fn wrap_block(block: &Block) -> AgentEvent {
    let mut fields = Map::new();
    fields.insert("type".into(), TURN_BLOCK_EVENT_TYPE.into());
    fields.insert("block".into(), Value::Object(block_to_json(block)));
    fields.insert("iteration".into(), Value::from(0));
    AgentEvent::from_map(fields, "event").expect("a turn_block event has type and iteration")
}

fn block_to_json(block: &Block) -> Map<String, Value> {
    let mut out = Map::new();
    let put_string = |key: &str, value: &str, out: &mut Map<String, Value>| {
        if !value.is_empty() {
            out.insert(key.into(), Value::String(value.to_string()));
        }
    };
    put_string("id", &block.id, &mut out);
    put_string("turn_id", &block.turn_id, &mut out);
    out.insert("kind".into(), block.kind.as_str().into());
    put_string("role", &block.role, &mut out);
    let mut payload = block.payload.clone();
    sort_keys(&mut payload);
    out.insert("payload".into(), Value::Object(payload));
    if !block.metadata.is_empty() {
        let mut metadata = block.metadata.clone();
        sort_keys(&mut metadata);
        out.insert("metadata".into(), Value::Object(metadata));
    }
    out
}

/// The block a `turn_block` event carries, if the event is exactly what that block wraps to.
fn unwrap_block(event: &AgentEvent) -> Option<Block> {
    let Value::Object(json) = event.fields().get("block")? else { return None };
    let string = |key: &str| match json.get(key) {
        None => Some(String::new()),
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => None,
    };
    let map = |key: &str| match json.get(key) {
        None => Some(Map::new()),
        Some(Value::Object(m)) => Some(m.clone()),
        Some(_) => None,
    };
    let block = Block {
        id: string("id")?,
        turn_id: string("turn_id")?,
        kind: BlockKind::from_name(json.get("kind")?.as_str()?)?,
        role: string("role")?,
        payload: map("payload")?,
        metadata: map("metadata")?,
    };
    let rewrapped = block_to_event(&block).ok()?;
    (serde_json::to_string(rewrapped.fields()).ok()? == serde_json::to_string(event.fields()).ok()?).then_some(block)
}

/// The first field where `found` differs from `expected`, and how.
fn first_difference(expected: &Block, found: &Block) -> Option<Fault> {
    let differ = |field: &str, e: &dyn std::fmt::Debug, f: &dyn std::fmt::Debug| {
        Some(fault(field, format!("is {f:?}, the event exports {e:?}")))
    };
    if expected.kind != found.kind {
        return differ("kind", &expected.kind.as_str(), &found.kind_name());
    }
    for (field, e, f) in [
        ("id", &expected.id, &found.id),
        ("turn_id", &expected.turn_id, &found.turn_id),
        ("role", &expected.role, &found.role),
    ] {
        if e != f {
            return differ(field, e, f);
        }
    }
    for (name, e, f) in
        [("payload", &expected.payload, &found.payload), ("metadata", &expected.metadata, &found.metadata)]
    {
        for (key, value) in f {
            match e.get(key) {
                None => return Some(fault(&format!("{name}.{key}"), "has no place in the event")),
                Some(v) if v != value => {
                    return Some(fault(&format!("{name}.{key}"), "differs from what the event exports"))
                }
                _ => {}
            }
        }
        if let Some(key) = e.keys().find(|k| !f.contains_key(*k)) {
            return Some(fault(&format!("{name}.{key}"), "missing"));
        }
    }
    None
}
