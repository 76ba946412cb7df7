//! Reading thread files: a JSON array of events, JSON Lines, or a turn document (YAML or JSON).

use std::io::Read;
use threadkeeper::turns::{self, Format, TurnDocument};
use threadkeeper::AgentEvent;

/// Reads `path` (`-` for stdin) whole.
pub fn read_source(path: &str) -> Result<String, String> {
    let mut text = String::new();
    let result = if path == "-" {
        std::io::stdin().read_to_string(&mut text).map(drop)
    } else {
        std::fs::File::open(path).and_then(|mut f| f.read_to_string(&mut text)).map(drop)
    };
    result.map_err(|e| format!("{path}: {e}"))?;
    Ok(text)
}

/// The name to use for `path` in messages.
pub fn display_name(path: &str) -> &str {
    if path == "-" {
        "<stdin>"
    } else {
        path
    }
}

/// What a thread file turned out to be.
pub enum Source {
    Events(Vec<AgentEvent>),
    Turn(Box<TurnDocument>),
}

/// Detects and reads a thread file: `[` starts a JSON array of events; `{` starts JSON Lines of
/// events, or a JSON turn document when the first object is not an event; anything else is a
/// YAML turn document.
pub fn read_thread(text: &str, name: &str) -> Result<Source, String> {
    // JSON from JavaScript hosts may hold lone surrogate escapes (YAML is left alone).
    let text: &str = &match text.trim_start().starts_with(['[', '{']) {
        true => threadkeeper::json_text::replace_lone_surrogates(text),
        false => std::borrow::Cow::Borrowed(text),
    };
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        return parse_event_array(text, name).map(Source::Events);
    }
    if trimmed.starts_with('{') && first_line_is_event(trimmed) {
        return parse_event_lines(text, name).map(Source::Events);
    }
    let format = if trimmed.starts_with('{') { Format::Json } else { Format::Yaml };
    let (document, warnings) =
        turns::read_document(text, format, &turns::Limits::default()).map_err(|e| format!("{name}: {e}"))?;
    for warning in warnings {
        eprintln!("threadkeeper: {name}: warning: {warning}");
    }
    Ok(Source::Turn(Box::new(document)))
}

/// The events of a thread file, whatever its kind; a turn document must hold one turn.
pub fn read_events(text: &str, name: &str) -> Result<Vec<AgentEvent>, String> {
    match read_thread(text, name)? {
        Source::Events(events) => Ok(events),
        Source::Turn(document) => {
            let turn = match *document {
                TurnDocument::Turn(turn) => turn,
                TurnDocument::Fixture { mut turn, followups } => {
                    turn.blocks.extend(followups);
                    turn
                }
                TurnDocument::Suite(turns) => {
                    return Err(format!("{name}: a suite of {} turns; give a file with one turn", turns.len()))
                }
            };
            turns::turn_to_events(&turn).map_err(|e| format!("{name}: {e}"))
        }
    }
}

fn first_line_is_event(text: &str) -> bool {
    let first = text.lines().next().unwrap_or_default();
    match serde_json::from_str::<serde_json::Value>(first) {
        Ok(serde_json::Value::Object(map)) => map.contains_key("type") && map.contains_key("iteration"),
        // A multi-line JSON object is a turn document, not JSON Lines.
        _ => false,
    }
}

fn parse_event_array(text: &str, name: &str) -> Result<Vec<AgentEvent>, String> {
    let values: Vec<serde_json::Value> =
        serde_json::from_str(text).map_err(|e| format!("{name}: not a JSON array of events: {e}"))?;
    AgentEvent::list_from_values(values).map_err(|e| format!("{name}: {e}"))
}

fn parse_event_lines(text: &str, name: &str) -> Result<Vec<AgentEvent>, String> {
    let mut events = Vec::new();
    for (line_index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let path = format!("events[{}]", events.len());
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|e| format!("{name}:{}: {path}: not JSON: {e}", line_index + 1))?;
        let event = AgentEvent::from_value(value, &path).map_err(|e| format!("{name}:{}: {e}", line_index + 1))?;
        events.push(event);
    }
    Ok(events)
}
