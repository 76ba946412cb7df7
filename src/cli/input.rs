//! Reading thread files: a JSON array of events or JSON Lines.

use std::io::Read;
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

/// Parses events: a JSON array when the text starts with `[`, else one event per line.
pub fn parse_events(text: &str, name: &str) -> Result<Vec<AgentEvent>, String> {
    if text.trim_start().starts_with('[') {
        let values: Vec<serde_json::Value> =
            serde_json::from_str(text).map_err(|e| format!("{name}: not a JSON array of events: {e}"))?;
        return AgentEvent::list_from_values(values).map_err(|e| format!("{name}: {e}"));
    }
    let mut events = Vec::new();
    for (line_index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let path = format!("events[{}]", events.len());
        let value: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| format!("{name}:{}: {path}: not JSON: {e}", line_index + 1))?;
        let event =
            AgentEvent::from_value(value, &path).map_err(|e| format!("{name}:{}: {e}", line_index + 1))?;
        events.push(event);
    }
    Ok(events)
}
