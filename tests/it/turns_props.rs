//! Property tests for turn documents: text round trips of random turns, and lossless
//! threads ↔ turns round trips of random event lists.

use proptest::prelude::*;
use serde_json::{Map, Value};
use threadkeeper::turns::*;
use threadkeeper::AgentEvent;

/// Strings that trip YAML writers and readers, and names the format reserves.
const NASTY: &[&str] = &[
    "",
    " ",
    "yes",
    "no",
    "Yes",
    "NO",
    "on",
    "off",
    "y",
    "n",
    "null",
    "Null",
    "~",
    "true",
    "False",
    "1",
    "-1",
    "007",
    "0x1F",
    "0o17",
    "1e3",
    "1.5",
    "1_000",
    ".inf",
    "-.Inf",
    ".nan",
    "-",
    "- a",
    ":",
    ": ",
    "a: b",
    "#",
    " #c",
    "'",
    "\"",
    "\\",
    "\n",
    "\r\n",
    "\r",
    "\t",
    "\0",
    "\u{7}",
    "\u{1b}[31m",
    "\u{7f}",
    "\u{85}",
    "\u{2028}",
    "\u{2029}",
    "\u{feff}",
    "\u{fffd}",
    "😀",
    "é",
    "---",
    "...",
    "&a",
    "*a",
    "!tag",
    "!!str",
    "%YAML 1.2",
    "[",
    "]",
    "{",
    "}",
    ",",
    "|",
    ">",
    "?",
    "@",
    "`",
    "  lead",
    "trail  ",
    "a\n\nb\n",
    "\n\n",
    " \n ",
    "\u{a0}",
    "<<",
    "=",
    "[[{",
    "threadkeeper.iteration@v1",
    "threadkeeper.key_order@v1",
    "serde.kind_raw",
    "type",
    "iteration",
    "timestamp",
    "text",
    "args",
    "encrypted_content",
    "turn_block",
    "block",
    "kind",
    "payload",
    "metadata",
    "user",
    "other",
    "llm_text",
];

const RESERVED_PAYLOAD: &[&str] =
    &["text", "images", "id", "name", "args", "result", "error", "encrypted_content", "item_id", "summary"];

fn nasty_string() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(NASTY).prop_map(str::to_string),
        2 => any::<String>(),
        2 => "[a-z_.@0-9]{0,12}",
        1 => prop::collection::vec(prop::sample::select(NASTY), 0..4).prop_map(|parts| parts.concat()),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    crate::strategies::json_value(nasty_string, 4, 40, 6)
}

fn payload_key() -> impl Strategy<Value = String> {
    prop_oneof![prop::sample::select(RESERVED_PAYLOAD).prop_map(str::to_string), nasty_string()]
}

fn metadata_key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("serde.kind_raw".to_string()),
        "(geppetto|serde|x)\\.[a-z_]{1,8}@v[0-9]".prop_map(|k| k),
        nasty_string(),
    ]
}

fn kind() -> impl Strategy<Value = (BlockKind, Option<String>)> {
    prop_oneof![
        3 => prop::sample::select(&BlockKind::ALL[..]).prop_map(|k| (k, None)),
        1 => nasty_string().prop_map(|raw| (BlockKind::Other, Some(raw))),
    ]
}

fn role() -> impl Strategy<Value = String> {
    prop_oneof![prop::sample::select(&["", "user", "assistant", "system"][..]).prop_map(str::to_string), nasty_string()]
}

fn block() -> impl Strategy<Value = Block> {
    (
        kind(),
        nasty_string(),
        nasty_string(),
        role(),
        crate::strategies::json_map(payload_key(), json_value(), 6),
        crate::strategies::json_map(metadata_key(), json_value(), 6),
    )
        .prop_map(|((kind, raw), id, turn_id, role, payload, mut metadata)| {
            if let Some(raw) = raw {
                metadata.insert(KIND_RAW_KEY.to_string(), Value::String(raw));
            }
            Block { id, turn_id, kind, role, payload, metadata }
        })
}

/// A block as geppetto writes one for a plain exchange: exactly the form of an event.
fn plain_block() -> impl Strategy<Value = Block> {
    let text = |kind: BlockKind, role: &'static str| {
        nasty_string().prop_map(move |t| Block {
            role: role.to_string(),
            payload: Map::from_iter([("text".to_string(), Value::String(t))]),
            ..Block::new(kind)
        })
    };
    prop_oneof![
        text(BlockKind::User, "user"),
        text(BlockKind::LlmText, "assistant"),
        text(BlockKind::System, "system"),
        (nasty_string(), nasty_string(), crate::strategies::json_map(nasty_string(), json_value(), 3)).prop_map(
            |(id, name, args)| {
                let payload = [("args", Value::Object(args)), ("id", id.into()), ("name", name.into())];
                Block {
                    payload: payload.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
                    ..Block::new(BlockKind::ToolCall)
                }
            }
        ),
        (nasty_string(), json_value()).prop_map(|(id, result)| {
            let payload = [("id", Value::String(id)), ("result", result)];
            Block {
                payload: payload.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
                ..Block::new(BlockKind::ToolUse)
            }
        }),
    ]
}

fn turn() -> impl Strategy<Value = Turn> {
    (
        nasty_string(),
        nasty_string(),
        prop::collection::vec(block(), 0..5),
        crate::strategies::json_map(metadata_key(), json_value(), 6),
        crate::strategies::json_map(nasty_string(), json_value(), 6),
    )
        .prop_map(|(id, run_id, blocks, metadata, data)| Turn {
            version: FORMAT_VERSION,
            id,
            run_id,
            blocks,
            metadata,
            data,
        })
}

fn normalized(turn: &Turn) -> Turn {
    let mut turn = turn.clone();
    normalize(&mut turn);
    turn
}

fn yaml(turn: &Turn) -> String {
    to_yaml(turn, &Options::default()).unwrap()
}

fn json(turn: &Turn) -> String {
    to_json(turn, &Options::default()).unwrap()
}

// ---- events ----

fn maybe<T: std::fmt::Debug + Clone>(s: impl Strategy<Value = T>) -> impl Strategy<Value = Option<T>> {
    prop_oneof![Just(None), s.prop_map(Some)]
}

fn string_value() -> impl Strategy<Value = Value> {
    nasty_string().prop_map(Value::String)
}

/// The fields of one event of each type, before extras, timestamp and shuffling.
fn event_core() -> impl Strategy<Value = Vec<(String, Value)>> {
    let s = string_value;
    let b = || any::<bool>().prop_map(Value::Bool);
    let f = |name: &str, v: Value| (name.to_string(), v);
    prop_oneof![
        (prop::sample::select(&["user", "assistant", "system"][..]), s()).prop_map(move |(role, content)| vec![
            f("type", "message".into()),
            f("role", role.into()),
            f("content", content)
        ]),
        (s(), s(), crate::strategies::json_map(nasty_string(), json_value(), 6)).prop_map(
            move |(name, id, args)| vec![
                f("type", "tool_call".into()),
                f("toolName", name),
                f("toolCallId", id),
                f("args", Value::Object(args)),
            ]
        ),
        (s(), json_value()).prop_map(move |(id, result)| vec![
            f("type", "tool_result".into()),
            f("toolCallId", id),
            f("result", result)
        ]),
        // Content parts, in any order, with and without text.
        (prop::sample::select(&["user", "assistant", "system"][..]), content_parts()).prop_map(
            move |(role, parts)| vec![f("type", "message".into()), f("role", role.into()), f("content", parts)]
        ),
        (s(), maybe(json_value()), content_parts()).prop_map(move |(id, result, parts)| {
            let mut fields = vec![f("type", "tool_result".into()), f("toolCallId", id)];
            fields.extend(result.map(|r| f("result", r)));
            fields.push(f("content", parts));
            fields
        }),
        (s(), b(), maybe(s())).prop_map(move |(error, recoverable, id)| {
            let mut fields = vec![f("type", "error".into()), f("error", error), f("recoverable", recoverable)];
            fields.extend(id.map(|id| f("toolCallId", id)));
            fields
        }),
        (s(), maybe(s()), maybe(s()), maybe(prop::collection::vec(s(), 0..3))).prop_map(
            move |(q, context, urgency, choices)| {
                let mut fields = vec![f("type", "human_input_requested".into()), f("question", q)];
                fields.extend(context.map(|v| f("context", v)));
                fields.extend(urgency.map(|v| f("urgency", v)));
                fields.extend(choices.map(|v| f("choices", Value::Array(v))));
                fields
            }
        ),
        s().prop_map(move |r| vec![f("type", "human_input_received".into()), f("response", r)]),
        (s(), b()).prop_map(move |(r, v)| vec![f("type", "completion".into()), f("result", r), f("verified", v)]),
        (prop::collection::vec(crate::strategies::number().prop_map(Value::Number), 0..4), s()).prop_map(
            move |(its, summary)| vec![
                f("type", "summary".into()),
                f("summarizedIterations", Value::Array(its)),
                f("summary", summary)
            ]
        ),
        (
            nasty_string()
                .prop_filter("an unknown type", |t| !crate::strategies::KNOWN_EVENT_TYPES.contains(&t.as_str())),
            crate::strategies::json_map(nasty_string(), json_value(), 6)
        )
            .prop_map(move |(t, fields)| {
                let mut v = vec![f("type", Value::String(t))];
                v.extend(fields.into_iter().filter(|(k, _)| !matches!(k.as_str(), "type" | "iteration" | "timestamp")));
                v
            }),
        // Events shaped like wrapped blocks, canonical or not.
        (block(), any::<bool>()).prop_map(move |(block, canonical)| {
            let mut json = serde_json::to_value(&block).unwrap();
            if canonical {
                // Roughly what a wrap looks like: canonical kind name, sorted maps.
                json["kind"] = Value::String(block.kind.as_str().to_string());
            }
            vec![f("type", "turn_block".into()), f("block", json)]
        }),
    ]
}

/// Content parts: text, and media named by blob or URL.
fn content_parts() -> impl Strategy<Value = Value> {
    let blob = any::<u8>().prop_map(|n| threadkeeper::media::BlobId::of(&[n]).to_string());
    let part = prop_oneof![
        nasty_string().prop_map(|text| serde_json::json!({"type": "text", "text": text})),
        (blob, maybe(prop::sample::select(&["auto", "low", "high", "original"][..])), 1u64..100_000).prop_map(
            |(blob, detail, size)| {
                let mut part = serde_json::json!({"type": "image", "blob": blob, "mediaType": "image/png"});
                if let Some(detail) = detail {
                    part["detail"] = detail.into();
                }
                part["size"] = size.into();
                part["width"] = 1280.into();
                part["height"] = 800.into();
                part
            }
        ),
        (nasty_string(), maybe(nasty_string())).prop_map(|(name, filename)| {
            let mut part = serde_json::json!({"type": "file", "url": format!("https://x.test/{}", name.len()), "mediaType": "application/pdf"});
            if let Some(filename) = filename {
                part["filename"] = filename.into();
            }
            part
        }),
    ];
    prop::collection::vec(part, 0..5).prop_map(Value::Array)
}

fn event() -> impl Strategy<Value = AgentEvent> {
    (
        event_core(),
        crate::strategies::number(),
        maybe(crate::strategies::number()),
        crate::strategies::json_map(nasty_string(), json_value(), 6),
        any::<bool>(),
    )
        .prop_flat_map(|(mut fields, iteration, timestamp, extras, natural)| {
            fields.push(("timestamp".into(), Value::Null)); // placeholder, removed below when absent
            fields.push(("iteration".into(), Value::Number(iteration)));
            for (key, value) in extras {
                if !fields.iter().any(|(k, _)| *k == key) {
                    fields.push((key, value));
                }
            }
            match timestamp {
                Some(ts) => fields.iter_mut().find(|(k, _)| k == "timestamp").unwrap().1 = Value::Number(ts),
                None => fields.retain(|(k, _)| k != "timestamp"),
            }
            if natural {
                Just(fields).boxed()
            } else {
                Just(fields).prop_shuffle().boxed()
            }
        })
        .prop_map(|fields| {
            let map: Map<String, Value> = fields.into_iter().collect();
            AgentEvent::from_map(map, "event").expect("generated events are valid")
        })
}

fn events_text(events: &[AgentEvent]) -> String {
    serde_json::to_string(&events.iter().map(AgentEvent::to_value).collect::<Vec<_>>()).unwrap()
}

fn value_depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(value_depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(value_depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// YAML-like text, line by line: indentation, an entry start, a value. Much of it is invalid
/// YAML; the rest has block scalars, comments, quotes and brackets inside plain text.
fn yamlish_text() -> impl Strategy<Value = String> {
    const STARTS: &[&str] = &["", "- ", "a: ", "b: ", "- c: ", "\"q\": ", "[k]: ", "&x d: ", "? ", ": ", "- - "];
    const VALUES: &[&str] = &[
        "",
        "",
        "x",
        "x[{y",
        "it's [",
        "'[q'",
        "\"{q\\\"[\"",
        "[1, [2]]",
        "{a: [b, {c: d}]}",
        "[a\"b\"]",
        "|",
        ">-",
        "|2",
        "# c [",
        "*x",
        "[",
        "]",
        "{",
        "}",
        "[[",
        "]]",
        "x # [",
        "{\"k\":\"[\"}",
        "[a, 'b]', \"c{\"]",
    ];
    let line = (0usize..4, prop::sample::select(STARTS), prop::sample::select(VALUES))
        .prop_map(|(indent, start, value)| format!("{}{start}{value}", "  ".repeat(indent)));
    prop::collection::vec(line, 0..12).prop_map(|lines| lines.join("\n") + "\n")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn yaml_round_trip_gives_the_normalized_turn(turn in turn()) {
        let text = yaml(&turn);
        let (again, warnings) = from_yaml(&text).unwrap();
        prop_assert!(warnings.is_empty(), "{:?}", warnings);
        prop_assert_eq!(&again, &normalized(&turn));
        prop_assert_eq!(yaml(&again), text.clone());
        prop_assert_eq!(yaml(&normalized(&turn)), text);
    }

    #[test]
    fn json_round_trip_gives_the_normalized_turn(turn in turn()) {
        let text = json(&turn);
        let (again, warnings) = from_json(&text).unwrap();
        prop_assert!(warnings.is_empty(), "{:?}", warnings);
        prop_assert_eq!(&again, &normalized(&turn));
        prop_assert_eq!(json(&again), text);
        prop_assert_eq!(from_yaml(&yaml(&turn)).unwrap().0, again);
    }

    #[test]
    fn redacted_and_data_free_output_reads_back(turn in turn()) {
        let options = Options { redact_encrypted_content: true, omit_data: true };
        let (again, _) = from_yaml(&to_yaml(&turn, &options).unwrap()).unwrap();
        prop_assert!(again.data.is_empty());
        prop_assert_eq!(again.blocks.len(), turn.blocks.len());
        for (a, b) in again.blocks.iter().zip(&turn.blocks) {
            if let Some(Value::String(secret)) = b.payload.get("encrypted_content") {
                prop_assert_eq!(&a.payload["encrypted_content"], &Value::String(redact_encrypted_content(secret)));
            }
        }
        validate(&again, true);
    }

    #[test]
    fn depth_prescan_never_refuses_a_document_within_the_limit(turn in turn()) {
        // Block style, and flow style (pretty JSON is YAML too).
        for text in [yaml(&turn), json(&turn)] {
            // JSON text is YAML unless it holds characters YAML forbids raw (DEL, C1 controls).
            let Ok(value) = parse_value(&text, Format::Yaml, &Limits::default()) else { continue };
            let depth = value_depth(&value);
            let exact = Limits { max_depth: depth, ..Limits::default() };
            prop_assert!(parse_value(&text, Format::Yaml, &exact).is_ok(), "refused at depth {}", depth);
            let below = Limits { max_depth: depth - 1, ..Limits::default() };
            let refused = matches!(parse_value(&text, Format::Yaml, &below), Err(TurnError::Limit { limit: "max_depth", .. }));
            prop_assert!(refused);
        }
    }

    #[test]
    fn events_survive_a_turn(events in prop::collection::vec(event(), 0..8)) {
        let expected = events_text(&events);
        let turn = events_to_turn(&events, "thread");
        prop_assert_eq!(events_text(&turn_to_events(&turn).unwrap()), expected.clone());
        let (from_yaml_text, warnings) = from_yaml(&yaml(&turn)).unwrap();
        prop_assert!(warnings.is_empty());
        prop_assert_eq!(events_text(&turn_to_events(&from_yaml_text).unwrap()), expected.clone());
        let (from_json_text, _) = from_json(&json(&turn)).unwrap();
        prop_assert_eq!(events_text(&turn_to_events(&from_json_text).unwrap()), expected);
    }

    #[test]
    fn foreign_blocks_survive_events(turn in turn()) {
        // Blocks from other tools, as read from a file: normalized, no threadkeeper.* metadata.
        let mut turn = turn;
        normalize(&mut turn);
        for block in &mut turn.blocks {
            block.metadata.retain(|k, _| !k.starts_with("threadkeeper."));
        }
        let events = turn_to_events(&turn).unwrap();
        let back = events_to_turn(&events, &turn.id);
        for ((original, event), returned) in turn.blocks.iter().zip(&events).zip(&back.blocks) {
            let mut expected = original.clone();
            if event.event_type() != "turn_block" {
                // Blocks that are plain events gain the iteration they were given.
                expected.metadata.insert("threadkeeper.iteration@v1".into(), Value::from(0));
            }
            prop_assert_eq!(returned, &expected);
        }
        // The events are stable from then on, through text too.
        let (reloaded, _) = from_yaml(&yaml(&back)).unwrap();
        prop_assert_eq!(events_text(&turn_to_events(&reloaded).unwrap()), events_text(&events));
    }

    #[test]
    fn import_then_export_gives_the_normalized_document(
        turn in turn(),
        events in prop::collection::vec(event(), 0..4),
        thread_metadata in maybe(crate::strategies::json_map(nasty_string(), json_value(), 3)),
        split in any::<prop::sample::Index>(),
        plain in prop::collection::vec(plain_block(), 0..4),
    ) {
        // A turn as a file holds it (normalized), mixing blocks from elsewhere with exported
        // events, and turn-level fields of every kind. Keys of the threadkeeper namespace are
        // the protocol's own and appear only as it writes them.
        let mut turn = turn;
        normalize(&mut turn);
        turn.metadata.retain(|k, _| !k.starts_with("threadkeeper."));
        for block in &mut turn.blocks {
            block.metadata.retain(|k, _| !k.starts_with("threadkeeper."));
        }
        let at = split.index(turn.blocks.len() + 1);
        let exported = events_to_turn(&events, "t").blocks;
        turn.blocks.splice(at..at, exported);
        let at = split.index(turn.blocks.len() + 1);
        turn.blocks.splice(at..at, plain);
        if let Some(metadata) = thread_metadata.filter(|m| !m.is_empty()) {
            turn.metadata.insert(thread::METADATA_KEY.into(), Value::Object(metadata));
        }
        normalize(&mut turn);

        let parts = turn_to_thread(&turn).unwrap();
        let back = thread_to_turn(&turn.id, &parts.events, parts.settings, &parts.metadata.unwrap_or_default());
        prop_assert_eq!(yaml(&back), yaml(&turn));
        // And the export imports to the very same thread.
        let (reloaded, _) = from_yaml(&yaml(&back)).unwrap();
        let again = turn_to_thread(&reloaded).unwrap();
        prop_assert_eq!(events_text(&again.events), events_text(&parts.events));
    }

    #[test]
    fn prescan_agrees_with_the_parser_on_yamlish_text(text in yamlish_text()) {
        // Never panics; and a document that parses is never refused by the pre-scan at its
        // own depth.
        let _ = from_yaml(&text);
        if let Ok(value) = parse_value(&text, Format::Yaml, &Limits::default()) {
            let depth = value_depth(&value);
            let exact = Limits { max_depth: depth, ..Limits::default() };
            prop_assert!(parse_value(&text, Format::Yaml, &exact).is_ok(), "refused {:?} at depth {}", text, depth);
        }
    }
}
