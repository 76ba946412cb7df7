//! Which iterations upstream would summarize next, and what it would ask its summarizer.
//!
//! deep-factor-agent's `ContextManager.summarize`: the iterations are the distinct `iteration`
//! values of the list, sorted; `cutoff = maxIteration - keepRecentIterations`; every iteration
//! `<= cutoff` is summarized, one summary each, except one whose only event is a `summary`.
//! With no iteration `<= cutoff` upstream returns the thread unchanged.

use super::upstream::{upstream_json, CompactionMarker, COMPACTION_FIELD};
use super::view_item::ViewItem;
use crate::event::AgentEvent;
use serde_json::{json, Map, Number, Value};

/// The summarizer's instruction, as upstream sends it before the iteration's events.
pub const SUMMARIZER_INSTRUCTION: &str = "Summarize the following agent iteration events in 2-3 sentences. \
Focus on what tools were called, what was accomplished, and any errors:";

/// An iteration value compared as JavaScript compares numbers (`1` and `1.0` are one key).
pub type IterationKey = f64;

/// One iteration upstream would summarize.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedIteration {
    pub iteration: IterationKey,
    /// Positions in the view of the iteration's events, in list order.
    pub view_positions: Vec<usize>,
}

/// A summarization round as upstream would run it now.
#[derive(Clone, Debug, PartialEq)]
pub struct CompactionPlan {
    pub cutoff: f64,
    /// In ascending iteration order, as upstream emits its summaries.
    pub iterations: Vec<PlannedIteration>,
}

/// Plans the next round over the view's items; `None` when upstream would change nothing
/// (no iteration at or below the cutoff).
pub fn plan_compaction(items: &[ViewItem], keep_recent_iterations: f64) -> Option<CompactionPlan> {
    let mut groups: Vec<(IterationKey, Vec<usize>)> = Vec::new();
    let mut index: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    for (at, item) in items.iter().enumerate() {
        // `+ 0.0` folds -0 into 0, as a JavaScript Map's SameValueZero does.
        let key = item.iteration + 0.0;
        let group = *index.entry(key.to_bits()).or_insert_with(|| {
            groups.push((key, Vec::new()));
            groups.len() - 1
        });
        groups[group].1.push(at);
    }
    groups.sort_by(|a, b| a.0.total_cmp(&b.0));
    let max_iteration = groups.last()?.0;
    let cutoff = max_iteration - keep_recent_iterations;
    if groups.first().is_none_or(|g| g.0 > cutoff) {
        return None;
    }
    let iterations = groups
        .into_iter()
        .take_while(|(iteration, _)| *iteration <= cutoff)
        .filter(|(_, at)| !(at.len() == 1 && items[at[0]].is_summary))
        .map(|(iteration, view_positions)| PlannedIteration { iteration, view_positions })
        .collect();
    Some(CompactionPlan { cutoff, iterations })
}

/// Upstream's summarizer message for one iteration's events.
pub fn summarizer_prompt<'a>(events: impl IntoIterator<Item = &'a AgentEvent>) -> String {
    let mut prompt = format!("{SUMMARIZER_INSTRUCTION}\n\n");
    for (i, event) in events.into_iter().enumerate() {
        if i > 0 {
            prompt.push('\n');
        }
        prompt.push_str(&upstream_json(event));
    }
    prompt
}

/// The summary event a round appends for one iteration: upstream's fields in upstream's
/// order, then the round's marker.
pub fn summary_event(
    iteration: &Number,
    summary: &str,
    timestamp: u64,
    marker: &CompactionMarker,
) -> Map<String, Value> {
    let value = json!({
        "type": "summary",
        "summarizedIterations": [iteration],
        "summary": summary,
        "timestamp": timestamp,
        "iteration": iteration,
        COMPACTION_FIELD: marker.to_value(),
    });
    match value {
        Value::Object(map) => map,
        _ => unreachable!("an object literal"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(iteration: f64, is_summary: bool) -> ViewItem {
        ViewItem { position: 0, iteration, is_summary, upstream_tokens: 1, rolling_round: None }
    }

    #[test]
    fn summarizes_what_is_at_or_below_the_cutoff_except_lone_summaries() {
        let items =
            [item(3.0, false), item(1.0, true), item(2.0, false), item(1.0, false), item(5.0, false), item(4.0, true)];
        let plan = plan_compaction(&items, 3.0).expect("a round");
        assert_eq!(plan.cutoff, 2.0);
        let planned: Vec<(f64, Vec<usize>)> =
            plan.iterations.iter().map(|p| (p.iteration, p.view_positions.clone())).collect();
        assert_eq!(planned, vec![(1.0, vec![1, 3]), (2.0, vec![2])]);
        let lone = [item(1.0, true), item(5.0, false)];
        assert_eq!(plan_compaction(&lone, 3.0).map(|p| p.iterations.len()), Some(0));
    }

    #[test]
    fn nothing_to_do_when_no_iteration_is_old_enough() {
        assert_eq!(plan_compaction(&[], 3.0), None);
        assert_eq!(plan_compaction(&[item(2.0, false), item(4.0, false)], 3.0), None);
    }

    #[test]
    fn the_prompt_is_upstreams_text() {
        let event =
            AgentEvent::from_value(json!({"type": "message", "role": "user", "content": "hi", "iteration": 1}), "e")
                .expect("valid");
        assert_eq!(
            summarizer_prompt([&event, &event]),
            "Summarize the following agent iteration events in 2-3 sentences. Focus on what tools were called, \
what was accomplished, and any errors:\n\n{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\",\"iteration\":1}\n\
{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\",\"iteration\":1}"
        );
    }
}
