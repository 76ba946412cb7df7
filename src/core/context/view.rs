//! The event list upstream would hold, rebuilt from the log.
//!
//! Upstream's summarization replaces its list with
//! `[...newSummaries, ...events.filter(e => e.iteration > cutoff || e.type === "summary")]`.
//! The log keeps every event and records each round as its marked summaries (see
//! [`super::upstream`]), so replaying the log — plain events appended, each round's
//! summaries rewriting the list as upstream did at that point — gives upstream's list after
//! every round, in any store, from the stored events alone. An append without a round costs
//! O(new events); a round costs one pass over the list, as upstream's rewrite does.

use super::estimate::estimate_from_len;
use super::rolling::{self, rolling_marker, RollingMarker};
use super::upstream::{compaction_marker, upstream_json_len, CompactionMarker};
pub use super::view_item::ViewItem;
use crate::event::AgentEvent;

/// What an event did to the view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewChange {
    /// The event was appended at the end, as upstream appends it.
    Appended,
    /// A compaction round rewrote the list: renders built from the old one are stale.
    Rewritten,
}

/// A compaction round's marker, of either strategy.
enum Round {
    Upstream(CompactionMarker),
    Rolling(RollingMarker),
}

fn round_marker(event: &AgentEvent) -> Option<Round> {
    compaction_marker(event).map(Round::Upstream).or_else(|| rolling_marker(event).map(Round::Rolling))
}

/// Upstream's event list as positions into the log.
#[derive(Clone, Debug, Default)]
pub struct CompactedView {
    items: Vec<ViewItem>,
    /// The round whose summaries are being inserted, and where its next one goes.
    open_round: Option<(u64, usize)>,
    rounds: u64,
    log_len: usize,
    upstream_tokens: u64,
    /// Whether marked summaries rewrite the list; off for a list that is already a view.
    replay_rounds: bool,
}

impl CompactedView {
    /// An empty view of a log whose rounds are replayed.
    pub fn new() -> Self {
        CompactedView { replay_rounds: true, ..Self::default() }
    }

    /// A view of events that are already upstream's list (taken from another view): every
    /// event is appended as it comes, markers or not.
    pub fn verbatim() -> Self {
        Self::default()
    }

    /// Takes the next event of the log.
    pub fn push(&mut self, event: &AgentEvent) -> ViewChange {
        let is_summary = event.event_type() == "summary";
        let item = ViewItem {
            position: self.log_len,
            iteration: event.iteration().as_f64().unwrap_or(0.0),
            is_summary,
            upstream_tokens: estimate_from_len(upstream_json_len(event)),
            rolling_round: None,
        };
        self.log_len += 1;
        self.upstream_tokens += item.upstream_tokens;
        let round = if self.replay_rounds { round_marker(event) } else { None };
        match round {
            None => {
                self.open_round = None;
                self.items.push(item);
                return ViewChange::Appended;
            }
            Some(Round::Upstream(marker)) => self.upstream_round(item, &marker),
            Some(Round::Rolling(marker)) => {
                self.open_round = None;
                rolling::apply_round(&mut self.items, item, &marker);
                self.rounds = self.rounds.max(marker.round);
            }
        }
        self.upstream_tokens = self.items.iter().map(|i| i.upstream_tokens).sum();
        ViewChange::Rewritten
    }

    /// Upstream's rewrite for the first summary of a round, its summaries in front.
    fn upstream_round(&mut self, item: ViewItem, marker: &CompactionMarker) {
        match self.open_round {
            Some((round, at)) if round == marker.round => {
                self.items.insert(at, item);
                self.open_round = Some((round, at + 1));
            }
            _ => {
                self.items.retain(|kept| kept.iteration > marker.cutoff || kept.is_summary);
                self.items.insert(0, item);
                self.open_round = Some((marker.round, 1));
                self.rounds = self.rounds.max(marker.round);
            }
        }
    }

    /// The view's events, in upstream's order.
    pub fn items(&self) -> &[ViewItem] {
        &self.items
    }

    /// Positions in the log of the view's events, in upstream's order.
    pub fn positions(&self) -> impl ExactSizeIterator<Item = usize> + '_ {
        self.items.iter().map(|item| item.position)
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The highest round number seen in the log (0 when never compacted).
    pub fn rounds(&self) -> u64 {
        self.rounds
    }

    /// Upstream's `estimateThreadTokens` of the list.
    pub fn upstream_tokens(&self) -> u64 {
        self.upstream_tokens
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn event(value: Value) -> AgentEvent {
        AgentEvent::from_value(value, "event").expect("valid")
    }

    fn user(iteration: u64) -> AgentEvent {
        event(json!({"type": "message", "role": "user", "content": "hi", "iteration": iteration}))
    }

    fn summary(iteration: u64, round: u64, cutoff: u64) -> AgentEvent {
        event(json!({"type": "summary", "summarizedIterations": [iteration], "summary": "s", "timestamp": 1,
            "iteration": iteration, "compaction": {"round": round, "cutoff": cutoff}}))
    }

    fn positions(view: &CompactedView) -> Vec<usize> {
        view.positions().collect()
    }

    #[test]
    fn rounds_put_their_summaries_first_and_drop_what_they_summarize() {
        let mut view = CompactedView::new();
        for i in 1..=5 {
            assert_eq!(view.push(&user(i)), ViewChange::Appended);
        }
        assert_eq!(view.push(&summary(1, 1, 2)), ViewChange::Rewritten);
        view.push(&summary(2, 1, 2));
        assert_eq!(positions(&view), vec![5, 6, 2, 3, 4]);
        view.push(&user(6));
        // A second round straight after another: its summaries go before the first round's.
        view.push(&summary(3, 2, 3));
        assert_eq!(positions(&view), vec![8, 5, 6, 3, 4, 7]);
        assert_eq!(view.rounds(), 2);
    }

    #[test]
    fn two_rounds_back_to_back_are_told_apart_by_their_number() {
        let mut view = CompactedView::new();
        for i in 1..=4 {
            view.push(&user(i));
        }
        view.push(&summary(1, 1, 1));
        view.push(&summary(2, 2, 2));
        assert_eq!(positions(&view), vec![5, 4, 2, 3]);
    }

    #[test]
    fn a_verbatim_view_does_not_replay_rounds() {
        let mut view = CompactedView::verbatim();
        view.push(&user(1));
        assert_eq!(view.push(&summary(1, 1, 5)), ViewChange::Appended);
        assert_eq!(positions(&view), vec![0, 1]);
    }
}
