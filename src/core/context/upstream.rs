//! Events as upstream holds them, and the marker that records a compaction round in the log.
//!
//! Upstream rewrites its event list when it summarizes; threadkeeper appends the round's
//! summaries instead and marks each with a `compaction` field (`{"round": n, "cutoff": c}`),
//! so the list upstream would hold can be rebuilt from the stored events alone, in any store
//! and after a restart. The marker is threadkeeper's, not upstream's: everything that must
//! match upstream (its token estimate, the summarizer prompts) sees the event without it.

use crate::event::AgentEvent;
use crate::js_json;
use serde_json::{Number, Value};

/// The field of a `summary` event that makes it part of a compaction round.
pub const COMPACTION_FIELD: &str = "compaction";

/// What a compaction round's summary event records about its round.
#[derive(Clone, Debug, PartialEq)]
pub struct CompactionMarker {
    /// The round's number, counting from 1 in the thread's log; tells two rounds appended
    /// back to back apart.
    pub round: u64,
    /// Upstream's `cutoff` for the round: events of iterations above it survive the rewrite.
    pub cutoff: f64,
}

impl CompactionMarker {
    pub fn to_value(&self) -> Value {
        let cutoff = iteration_number(self.cutoff);
        serde_json::json!({ "round": self.round, "cutoff": cutoff })
    }
}

/// An iteration (or cutoff) as JSON: an integer when it is one, as iterations nearly always are.
pub fn iteration_number(cutoff: f64) -> Number {
    if cutoff.fract() == 0.0 && cutoff.abs() < 9.0e15 {
        Number::from(cutoff as i64)
    } else {
        Number::from_f64(cutoff).unwrap_or_else(|| Number::from(0))
    }
}

/// The compaction marker of a round's summary event; `None` for every other event, including
/// summaries a host appended itself (upstream keeps those as they are).
pub fn compaction_marker(event: &AgentEvent) -> Option<CompactionMarker> {
    if event.event_type() != "summary" {
        return None;
    }
    let marker = event.fields().get(COMPACTION_FIELD)?.as_object()?;
    let round = marker.get("round")?.as_u64()?;
    let cutoff = marker.get("cutoff")?.as_f64()?;
    Some(CompactionMarker { round, cutoff })
}

/// `JSON.stringify(event)` of the event upstream holds: the stored fields in order, minus a
/// compaction marker.
pub fn upstream_json(event: &AgentEvent) -> String {
    let mut out = String::new();
    let marked = compaction_marker(event).is_some();
    out.push('{');
    let mut first = true;
    for (key, value) in event.fields() {
        if marked && key == COMPACTION_FIELD {
            continue;
        }
        if !first {
            out.push(',');
        }
        first = false;
        js_json::write_string(&mut out, key);
        out.push(':');
        js_json::write_value(&mut out, value);
    }
    out.push('}');
    out
}

/// The UTF-16 length of [`upstream_json`], computed without writing it: the estimate of every
/// event a thread loads needs it, and measuring is several times cheaper than printing.
pub fn upstream_json_len(event: &AgentEvent) -> u64 {
    let marked = compaction_marker(event).is_some();
    let fields = event.fields().iter().filter(|(key, _)| !(marked && *key == COMPACTION_FIELD));
    let mut len = 2; // {}
    for (i, (key, value)) in fields.enumerate() {
        len += u64::from(i > 0) + string_len(key) + 1 + value_len(value);
    }
    len
}

fn value_len(value: &Value) -> u64 {
    match value {
        Value::Null => 4,
        Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(n) => match n.as_i64() {
            // Integers JavaScript holds exactly print as their digits; others as it prints them.
            Some(i) if i.unsigned_abs() < 1 << 53 => {
                u64::from(i < 0) + u64::from(i.unsigned_abs().checked_ilog10().unwrap_or(0)) + 1
            }
            _ => js_json::number_to_string(n).len() as u64,
        },
        Value::String(s) => string_len(s),
        Value::Array(items) => 2 + items.len().saturating_sub(1) as u64 + items.iter().map(value_len).sum::<u64>(),
        Value::Object(map) => {
            2 + map.len().saturating_sub(1) as u64
                + map.iter().map(|(k, v)| string_len(k) + 1 + value_len(v)).sum::<u64>()
        }
    }
}

/// A JSON string literal's UTF-16 length with JavaScript's escapes (as [`js_json::write_string`]):
/// one table look-up per byte.
fn string_len(s: &str) -> u64 {
    2 + s.bytes().map(|b| u64::from(STRING_BYTE_LEN[usize::from(b)])).sum::<u64>()
}

/// What each UTF-8 byte adds to a string literal's UTF-16 length: a lead byte 1 (2 for a
/// four-byte sequence, a surrogate pair), a continuation byte 0, and an escaped control or
/// quote its escape's length (`\n` 2, `\u001f` 6).
const STRING_BYTE_LEN: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = match b as u8 {
            b'"' | b'\\' | 0x08 | 0x0C | b'\n' | b'\r' | b'\t' => 2,
            0x00..=0x1F => 6,
            0x80..=0xBF => 0,
            0xF0..=0xFF => 2,
            _ => 1,
        };
        b += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(value: Value) -> AgentEvent {
        AgentEvent::from_value(value, "event").expect("valid")
    }

    #[test]
    fn a_round_summary_is_printed_without_its_marker() {
        let e = event(json!({"type": "summary", "summarizedIterations": [1], "summary": "s", "timestamp": 5,
            "iteration": 1, "compaction": {"round": 2, "cutoff": 4}}));
        assert_eq!(compaction_marker(&e), Some(CompactionMarker { round: 2, cutoff: 4.0 }));
        assert_eq!(
            upstream_json(&e),
            r#"{"type":"summary","summarizedIterations":[1],"summary":"s","timestamp":5,"iteration":1}"#
        );
    }

    proptest::proptest! {
        #[test]
        fn the_measured_length_is_the_printed_one(
            content in proptest::prelude::any::<String>(),
            number in proptest::prelude::any::<f64>(),
            marked in proptest::prelude::any::<bool>(),
            int in proptest::prelude::any::<i64>(),
        ) {
            let mut value = json!({"type": "summary", "summarizedIterations": [1, number], "summary": content,
                "iteration": 1, "timestamp": int, "nested": {"a": [null, true, false, {}], "k\u{1}": content}});
            if marked {
                value["compaction"] = json!({"round": 1, "cutoff": 0});
            }
            let e = event(value);
            proptest::prop_assert_eq!(upstream_json_len(&e), crate::context::utf16_len(&upstream_json(&e)));
        }
    }

    #[test]
    fn other_events_keep_every_field_in_javascript_form() {
        let e = event(json!({"type": "message", "role": "user", "content": "a\u{2028}", "iteration": 1.0,
            "compaction": {"round": 1, "cutoff": 0}}));
        assert_eq!(compaction_marker(&e), None);
        assert_eq!(
            upstream_json(&e),
            "{\"type\":\"message\",\"role\":\"user\",\"content\":\"a\u{2028}\",\"iteration\":1,\"compaction\":{\"round\":1,\"cutoff\":0}}"
        );
    }
}
