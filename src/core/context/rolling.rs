//! Rolling compaction: a strategy that keeps a long run inside its window and its cache.
//!
//! Upstream's strategy puts one summary per iteration in the system message, forever: every
//! round changes the request's first block, and the summaries alone outgrow the window. A
//! rolling round instead summarizes the oldest whole iterations of the view into one summary
//! that renders as a message of its own right after the instructions, after the summaries
//! before it. So the system message and every earlier summary stay an unchanged prefix from one
//! round to the next. When the live summaries together outgrow their room, a merge round
//! replaces the oldest of them by one, where they were: summaries stay bounded however long the
//! run.
//!
//! A round is one `summary` event appended to the log, marked
//! `"compaction": {"strategy": "rolling", "round": n, "iterations": [first, last]}` (a merge
//! adds `"merges": [rounds…]`), so the view is rebuilt from the stored events alone, like
//! upstream's rounds. Nothing leaves the log.

use super::upstream::{iteration_number, COMPACTION_FIELD};
use super::view_item::ViewItem;
use crate::event::AgentEvent;
use serde_json::{json, Map, Value};

/// The `strategy` of a rolling round's marker.
pub const STRATEGY: &str = "rolling";

/// What a rolling round's summary event records about its round.
#[derive(Clone, Debug, PartialEq)]
pub struct RollingMarker {
    /// The round's number, counting every round of the thread (upstream's too) from 1.
    pub round: u64,
    /// The iterations the summary covers, oldest and newest.
    pub first: f64,
    pub last: f64,
    /// For a merge, the rounds whose summaries this one replaces; empty for a summarize round.
    pub merges: Vec<u64>,
}

impl RollingMarker {
    pub fn to_value(&self) -> Value {
        let mut marker = json!({
            "strategy": STRATEGY,
            "round": self.round,
            "iterations": [iteration_number(self.first), iteration_number(self.last)],
        });
        if !self.merges.is_empty() {
            marker["merges"] = json!(self.merges);
        }
        marker
    }
}

/// The rolling marker of a round's summary event; `None` for every other event, including a
/// summary whose marker is malformed (it stays an ordinary summary, as a host's own would).
pub fn rolling_marker(event: &AgentEvent) -> Option<RollingMarker> {
    if event.event_type() != "summary" {
        return None;
    }
    let marker = event.fields().get(COMPACTION_FIELD)?.as_object()?;
    if marker.get("strategy")?.as_str()? != STRATEGY {
        return None;
    }
    let round = marker.get("round")?.as_u64()?;
    let [first, last] = marker.get("iterations")?.as_array()?.as_slice() else { return None };
    let (first, last) = (first.as_f64()?, last.as_f64()?);
    if first > last {
        return None;
    }
    let merges = match marker.get("merges") {
        None => Vec::new(),
        Some(rounds) => rounds.as_array()?.iter().map(Value::as_u64).collect::<Option<Vec<u64>>>()?,
    };
    Some(RollingMarker { round, first, last, merges })
}

/// Whether `event` is a rolling round's summary (rendered as a message, not in the system message).
pub fn is_rolling_summary(event: &AgentEvent) -> bool {
    rolling_marker(event).is_some()
}

/// The iterations a summary covers, as a person reads them: `"iteration 4"`, `"iterations 0 to 41"`.
pub fn covered(first: f64, last: f64) -> String {
    if first == last {
        format!("iteration {}", iteration_number(first))
    } else {
        format!("iterations {} to {}", iteration_number(first), iteration_number(last))
    }
}

/// A rolling summary as the text of its message: `"[Summary of iterations 0 to 41]: " + summary`.
pub fn summary_message_text(event: &AgentEvent) -> Option<String> {
    let marker = rolling_marker(event)?;
    let summary = event.fields().get("summary").and_then(Value::as_str).unwrap_or_default();
    Some(format!("[Summary of {}]: {summary}", covered(marker.first, marker.last)))
}

/// The summary event a rolling round appends: upstream's summary fields (the covered range as
/// `summarizedIterations: [first, last]`, so the event stays small however much it covers),
/// then the round's marker.
pub fn rolling_summary_event(marker: &RollingMarker, summary: &str, timestamp: u64) -> Map<String, Value> {
    let (first, last) = (iteration_number(marker.first), iteration_number(marker.last));
    let value = json!({
        "type": "summary",
        "summarizedIterations": [first, last],
        "summary": summary,
        "timestamp": timestamp,
        "iteration": last,
        COMPACTION_FIELD: marker.to_value(),
    });
    match value {
        Value::Object(map) => map,
        _ => unreachable!("an object literal"),
    }
}

/// Replays a rolling round on the view's items: a summarize round takes the events of the
/// iterations it covers out (summaries stay, as upstream's filter keeps them) and puts its
/// summary after the live rolling summaries; a merge takes the merged summaries out and puts
/// its own where the first of them was.
pub(super) fn apply_round(items: &mut Vec<ViewItem>, mut item: ViewItem, marker: &RollingMarker) {
    item.rolling_round = Some(marker.round);
    let after_live = |items: &[ViewItem]| items.iter().rposition(|i| i.rolling_round.is_some()).map_or(0, |at| at + 1);
    if marker.merges.is_empty() {
        let (first, last) = (marker.first + 0.0, marker.last + 0.0);
        items.retain(|kept| kept.is_summary || !(first..=last).contains(&(kept.iteration + 0.0)));
        let at = after_live(items);
        items.insert(at, item);
        return;
    }
    let merged = |i: &ViewItem| i.rolling_round.is_some_and(|round| marker.merges.contains(&round));
    let at = items.iter().position(merged);
    items.retain(|kept| !merged(kept));
    let at = at.unwrap_or_else(|| after_live(items));
    items.insert(at, item);
}

/// One live rolling summary, as planning sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveSummary {
    pub round: u64,
    pub first: f64,
    pub last: f64,
    pub tokens: u64,
}

/// The oldest live summaries to merge when all of them take more than `room` tokens: as many
/// as leave the rest within half the room, and at least two. `None` when they fit, or when
/// there is only one (nothing to merge; a summarize round comes instead).
pub fn choose_merge(live: &[LiveSummary], room: u64) -> Option<Vec<u64>> {
    let total: u64 = live.iter().map(|s| s.tokens).sum();
    if total <= room || live.len() < 2 {
        return None;
    }
    let mut rest = total;
    let mut count = 0;
    for summary in live {
        if count >= 2 && rest <= room / 2 {
            break;
        }
        rest -= summary.tokens;
        count += 1;
    }
    Some(live[..count].iter().map(|s| s.round).collect())
}

/// How long a summary the prompts ask for: a quarter of the summaries' room, so a few rounds
/// pass between merges.
pub fn target_tokens(summary_room: u64) -> u64 {
    (summary_room / 4).max(1)
}

/// The summarizer prompt of a summarize round: the instruction, then the iterations' events as
/// the model saw them (their `<thread>` document).
pub fn summarize_prompt(first: f64, last: f64, target: u64, document: &str) -> String {
    format!(
        "You are compacting the history of a long agent run so that it can go on within its context window. \
Summarize {}, shown below as the agent saw them, in at most about {target} tokens. Keep what the agent needs \
to continue: the task and its constraints, what was done and decided, the tools called with their key \
arguments and results, errors and how they were handled, and what is still open. Write plain prose and \
invent nothing.\n\n{document}",
        covered(first, last)
    )
}

/// The summarizer prompt of a merge round: the instruction, then each summary under the
/// iterations it covers, oldest first.
pub fn merge_prompt<'a>(summaries: impl IntoIterator<Item = (f64, f64, &'a str)>, target: u64) -> String {
    let summaries: Vec<(f64, f64, &str)> = summaries.into_iter().collect();
    let (first, last) = (summaries.first().map_or(0.0, |s| s.0), summaries.last().map_or(0.0, |s| s.1));
    let mut prompt = format!(
        "You are compacting the history of a long agent run so that it can go on within its context window. \
Below are {} summaries of consecutive parts of the run, oldest first. Merge them into one summary of {}, in \
at most about {target} tokens. Keep what the agent needs to continue: the task and its constraints, what was \
done and decided, the tools called and what they returned, errors and how they were handled, and what is \
still open; let later parts override earlier ones where they disagree. Write plain prose and invent nothing.",
        summaries.len(),
        covered(first, last)
    );
    for (first, last, summary) in summaries {
        prompt.push_str("\n\n### ");
        let heading = covered(first, last);
        let mut chars = heading.chars();
        prompt.extend(chars.next().map(|c| c.to_ascii_uppercase()));
        prompt.push_str(chars.as_str());
        prompt.push('\n');
        prompt.push_str(summary);
    }
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::view::CompactedView;

    fn event(value: Value) -> AgentEvent {
        AgentEvent::from_value(value, "event").expect("valid")
    }

    fn user(iteration: u64) -> AgentEvent {
        event(json!({"type": "message", "role": "user", "content": "hi", "iteration": iteration}))
    }

    fn rolling(round: u64, first: u64, last: u64, merges: &[u64]) -> AgentEvent {
        let marker = RollingMarker { round, first: first as f64, last: last as f64, merges: merges.to_vec() };
        event(Value::Object(rolling_summary_event(&marker, "s", 1)))
    }

    fn positions(view: &CompactedView) -> Vec<usize> {
        view.positions().collect()
    }

    #[test]
    fn the_marker_round_trips_and_malformed_ones_are_plain_summaries() {
        let e = rolling(3, 0, 41, &[1, 2]);
        assert_eq!(rolling_marker(&e), Some(RollingMarker { round: 3, first: 0.0, last: 41.0, merges: vec![1, 2] }));
        assert_eq!(e.fields()["summarizedIterations"], json!([0, 41]));
        for bad in [
            json!({"strategy": "rolling", "round": 1, "iterations": [3, 1]}),
            json!({"strategy": "rolling", "round": 1, "iterations": [1]}),
            json!({"strategy": "rolling", "round": -1, "iterations": [1, 2]}),
            json!({"strategy": "other", "round": 1, "iterations": [1, 2]}),
            json!({"strategy": "rolling", "round": 1, "iterations": [1, 2], "merges": ["x"]}),
        ] {
            let e = event(json!({"type": "summary", "summarizedIterations": [1], "summary": "s", "iteration": 1,
                "compaction": bad}));
            assert_eq!(rolling_marker(&e), None, "{bad}");
        }
        assert_eq!(rolling_marker(&user(1)), None);
    }

    #[test]
    fn rounds_stack_after_each_other_and_merges_take_the_place_of_what_they_merge() {
        let mut view = CompactedView::new();
        for i in 0..6 {
            view.push(&user(i));
        }
        view.push(&rolling(1, 0, 1, &[])); // position 6
        assert_eq!(positions(&view), vec![6, 2, 3, 4, 5]);
        view.push(&user(6)); // 7
        view.push(&rolling(2, 2, 3, &[])); // 8
        assert_eq!(positions(&view), vec![6, 8, 4, 5, 7]);
        view.push(&rolling(3, 4, 4, &[])); // 9
        assert_eq!(positions(&view), vec![6, 8, 9, 5, 7]);
        view.push(&rolling(4, 0, 3, &[1, 2])); // 10
        assert_eq!(positions(&view), vec![10, 9, 5, 7]);
        assert_eq!(view.rounds(), 4);
    }

    #[test]
    fn a_round_keeps_summaries_and_events_appended_after_it() {
        let mut view = CompactedView::new();
        view.push(&user(0));
        view.push(&event(json!({"type": "summary", "summarizedIterations": [0], "summary": "host's", "iteration": 0})));
        view.push(&user(1));
        view.push(&user(2));
        view.push(&rolling(1, 0, 1, &[])); // 4
        view.push(&user(0)); // 5: a late event of a summarized iteration stays
        assert_eq!(positions(&view), vec![4, 1, 3, 5]);
    }

    #[test]
    fn merges_leave_the_rest_within_half_the_room() {
        let live = |tokens: &[u64]| -> Vec<LiveSummary> {
            tokens
                .iter()
                .enumerate()
                .map(|(i, &tokens)| LiveSummary { round: i as u64 + 1, first: 0.0, last: 0.0, tokens })
                .collect()
        };
        assert_eq!(choose_merge(&live(&[100, 100]), 200), None);
        assert_eq!(choose_merge(&live(&[500]), 200), None);
        assert_eq!(choose_merge(&live(&[100, 100, 100]), 200), Some(vec![1, 2]));
        assert_eq!(choose_merge(&live(&[60, 60, 60, 60, 60]), 200), Some(vec![1, 2, 3, 4]));
        assert_eq!(choose_merge(&live(&[60, 60, 60, 60, 60]), 280), Some(vec![1, 2, 3]));
        assert_eq!(choose_merge(&live(&[300, 10]), 200), Some(vec![1, 2]));
    }

    #[test]
    fn messages_and_prompts_name_what_they_cover() {
        assert_eq!(
            summary_message_text(&rolling(1, 0, 41, &[])).as_deref(),
            Some("[Summary of iterations 0 to 41]: s")
        );
        assert_eq!(summary_message_text(&rolling(1, 5, 5, &[])).as_deref(), Some("[Summary of iteration 5]: s"));
        let prompt = merge_prompt([(0.0, 3.0, "A."), (4.0, 4.0, "B.")], 100);
        assert!(prompt.contains("Below are 2 summaries"), "{prompt}");
        assert!(prompt.contains("one summary of iterations 0 to 4, in at most about 100 tokens"), "{prompt}");
        assert!(prompt.ends_with("### Iterations 0 to 3\nA.\n\n### Iteration 4\nB."), "{prompt}");
        let prompt = summarize_prompt(2.0, 7.0, 50, "<thread>\n</thread>");
        assert!(prompt.contains("Summarize iterations 2 to 7, shown below"), "{prompt}");
        assert!(prompt.ends_with("invent nothing.\n\n<thread>\n</thread>"), "{prompt}");
    }
}
