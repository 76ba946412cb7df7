//! The skeleton shared by the readers of agent hosts' session files (Claude Code's session
//! JSONL, Codex's rollout JSONL): reading lines, errors naming the line, what a whole file reads
//! as, timestamps, iterations and the events every format makes (a tool call's answer, a line
//! kept whole).
//!
//! It knows neither format: their mappings ([`super::from_claude_code`], [`super::from_codex`])
//! build on it, and [`super::session_reader`] picks one.

use crate::event::AgentEvent;
use serde_json::{Map, Number, Value};

/// A line that cannot be read: its number (1-based) and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct SessionError {
    pub line: usize,
    pub reason: String,
}

impl SessionError {
    pub(super) fn new(line: usize, reason: impl Into<String>) -> Self {
        SessionError { line, reason: reason.into() }
    }
}

/// A whole session file read as a thread.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionImport {
    /// The host's id of the session (Claude Code's `sessionId`, Codex's `session_meta` id).
    pub session_id: Option<String>,
    /// The thread: the conversation the host would resume.
    pub events: Vec<AgentEvent>,
    /// Other branches and sidechains, as threads of their own (only when asked for).
    pub branches: Vec<Branch>,
    /// Branches and sidechains in the file that are not in `events`.
    pub left_out: LeftOut,
    /// Lines read (blank lines not counted).
    pub lines: usize,
    /// The bytes of the blobs the events' media parts name, each once: the events name them
    /// by id, the store is to keep them with the thread.
    pub blobs: Vec<crate::media::Blob>,
}

/// A conversation of the file beside the thread: a branch the user rewound away from, or a
/// subagent's sidechain.
#[derive(Clone, Debug, PartialEq)]
pub struct Branch {
    pub kind: BranchKind,
    /// The id of the line the branch ends at.
    pub leaf: String,
    /// The whole conversation up to that line (a branch shares its start with the thread).
    pub events: Vec<AgentEvent>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BranchKind {
    Branch,
    Sidechain,
}

/// How many conversations of the file are not in the thread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct LeftOut {
    pub branches: usize,
    pub sidechains: usize,
}

/// Lines in `text`, a last one without its line break included.
pub(super) fn count_lines(text: &str) -> usize {
    text.bytes().filter(|&b| b == b'\n').count() + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

/// A line read: its number (1-based) and its object.
pub(super) type NumberedLine = (usize, Map<String, Value>);

/// The non-blank lines of `text` as JSON objects, numbered from `before + 1`.
pub(super) fn parse_lines(text: &str, before: usize) -> Result<Vec<NumberedLine>, SessionError> {
    let mut lines = Vec::new();
    for (index, line) in text.split('\n').enumerate() {
        let number = before + index + 1;
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.trim().is_empty() {
            continue;
        }
        let line = crate::json_text::replace_lone_surrogates(line);
        match serde_json::from_str::<Value>(&line) {
            Ok(Value::Object(map)) => lines.push((number, map)),
            Ok(other) => {
                return Err(SessionError::new(
                    number,
                    format!("expected a JSON object, found {}", crate::event::json_type(&other)),
                ))
            }
            Err(e) => return Err(SessionError::new(number, format!("not JSON: {e}"))),
        }
    }
    Ok(lines)
}

/// Validates the events made from one line (they are made here, so a failure is a bug in the
/// mapping, reported against the line all the same).
pub(super) fn events_of(number: usize, made: Vec<Map<String, Value>>) -> Result<Vec<AgentEvent>, SessionError> {
    made.into_iter()
        .map(|fields| AgentEvent::from_map(fields, "event").map_err(|e| SessionError::new(number, e.to_string())))
        .collect()
}

/// An event of `event_type` at `iteration`, its other fields to come.
pub(super) fn event(event_type: &str, iteration: u64) -> Map<String, Value> {
    let mut event = Map::new();
    event.insert("type".into(), event_type.into());
    event.insert("iteration".into(), iteration.into());
    event
}

/// A tool call's answer: its result, or (when the host marked it failed) a recoverable error
/// carrying `error_text`.
pub(super) fn tool_outcome(tool_call_id: String, outcome: Result<Value, String>, iteration: u64) -> Map<String, Value> {
    match outcome {
        Ok(result) => {
            let mut event = event("tool_result", iteration);
            event.insert("toolCallId".into(), tool_call_id.into());
            event.insert("result".into(), result);
            event
        }
        Err(error_text) => {
            let mut event = event("error", iteration);
            event.insert("error".into(), error_text.into());
            event.insert("recoverable".into(), true.into());
            event.insert("toolCallId".into(), tool_call_id.into());
            event
        }
    }
}

/// The event keeping a line whole.
pub(super) fn line_event(event_type: &str, line: Map<String, Value>, iteration: u64) -> Map<String, Value> {
    let mut event = Map::new();
    event.insert("type".into(), event_type.into());
    event.insert("line".into(), Value::Object(line));
    event.insert("iteration".into(), iteration.into());
    event
}

/// Counts iterations as the thread goes: a user's message after anything else begins one.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Iterations {
    current: u64,
    /// Whether anything but a user's message came since the current iteration began.
    answered: bool,
}

impl Iterations {
    /// The iteration of a user's message.
    pub(super) fn user(&mut self) -> u64 {
        if self.answered {
            self.current += 1;
            self.answered = false;
        }
        self.current
    }

    /// The iteration of anything else.
    pub(super) fn other(&mut self) -> u64 {
        self.answered = true;
        self.current
    }

    /// The iteration now, without moving on (lines kept whole).
    pub(super) fn now(&self) -> u64 {
        self.current
    }

    /// Every iteration before the current one (what a compaction summary replaces).
    pub(super) fn before(&self) -> Vec<Value> {
        (0..self.current).map(Value::from).collect()
    }
}

/// An RFC 3339 timestamp (`2025-06-14T10:00:00.123Z`, or with an offset) as milliseconds since
/// the epoch; `None` for anything else.
pub(super) fn timestamp_ms(text: &str) -> Option<Number> {
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(range)?;
        part.bytes().all(|c| c.is_ascii_digit()).then(|| part.parse().ok())?
    };
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') || b[13] != b':' {
        return None;
    }
    let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut i = 19;
    let mut millis = 0i64;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return None;
        }
        let fraction = &text[start..i.min(start + 3)];
        millis = fraction.parse::<i64>().ok()? * 10i64.pow(3 - fraction.len() as u32);
    }
    let offset_minutes = match &text[i..] {
        "Z" | "z" => 0,
        rest if rest.len() == 6 && matches!(rest.as_bytes()[0], b'+' | b'-') && rest.as_bytes()[3] == b':' => {
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            sign * (digits(i + 1..i + 3)? * 60 + digits(i + 4..i + 6)?)
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    Some(Number::from(seconds * 1000 + millis))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_index = (month + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// Text of content parts: the `text` of each part that has one, joined by blank lines.
pub(super) fn parts_text<'a>(parts: impl IntoIterator<Item = &'a Value>) -> String {
    parts.into_iter().filter_map(|part| part.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_read_as_milliseconds() {
        assert_eq!(timestamp_ms("1970-01-01T00:00:00Z"), Some(0.into()));
        assert_eq!(timestamp_ms("2025-06-14T10:00:00.123Z"), Some(1_749_895_200_123i64.into()));
        assert_eq!(timestamp_ms("2025-06-14T10:00:00.1234567Z"), Some(1_749_895_200_123i64.into()));
        assert_eq!(timestamp_ms("2025-06-14T12:00:00.5+02:00"), Some(1_749_895_200_500i64.into()));
        assert_eq!(timestamp_ms("2024-02-29T00:00:00Z"), Some(1_709_164_800_000i64.into()));
        assert_eq!(timestamp_ms("yesterday"), None);
        assert_eq!(timestamp_ms("2025-13-01T00:00:00Z"), None);
        assert_eq!(timestamp_ms("2025-06-14T10:00:00"), None);
    }

    #[test]
    fn a_bad_line_is_named_by_its_number() {
        let error = parse_lines("{\"a\":1}\n\n[1]\n", 0).unwrap_err();
        assert_eq!(error, SessionError::new(3, "expected a JSON object, found array"));
        let error = parse_lines("{\"a\":1}\n{\"a\":", 10).unwrap_err();
        assert_eq!(error.line, 12);
        assert!(error.reason.starts_with("not JSON: "), "{}", error.reason);
    }

    #[test]
    fn a_user_message_after_an_answer_begins_an_iteration() {
        let mut iterations = Iterations::default();
        assert_eq!((iterations.user(), iterations.user(), iterations.other()), (0, 0, 0));
        assert_eq!((iterations.user(), iterations.other(), iterations.other(), iterations.user()), (1, 1, 1, 2));
        assert_eq!(iterations.before(), vec![Value::from(0), Value::from(1)]);
    }
}
