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
