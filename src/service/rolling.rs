//! The rolling compaction strategy on open threads (see [`crate::context::rolling`]): what the
//! next round should summarize or merge, measured on the rendering the host sends, and
//! recording a round.

use super::context::ViewCuts;
use super::state::ThreadState;
use super::OFFLOAD_RENDERS_FROM_EVENTS;
use super::{now_ms, off_loop, render_now, RenderFormat, RenderOptions, ServiceError, ServiceResult, ThreadService};
use crate::context::rolling::{
    choose_merge, merge_prompt, rolling_marker, rolling_summary_event, summarize_prompt, target_tokens, LiveSummary,
    RollingMarker,
};
use crate::context::{iteration_number, BudgetChoice, Tokenizer};
use crate::event::AgentEvent;
use crate::media::bytes::NO_MEDIA;
use crate::media::parts::parts_of;
use crate::media::{Part, PartSource};
use crate::store::ThreadRecord;
use crate::xml::{serialize_thread_to_xml, XmlOptions};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

/// What a rolling plan measures and against what (`thread/planCompaction`, strategy `rolling`).
#[derive(Clone, Debug)]
pub struct RollingBudget {
    pub max_tokens: u64,
    /// A summarize round leaves out the oldest iterations until the rendering is at most this.
    pub compact_to: u64,
    /// The room all live summaries together may take; `max_tokens / 4` when not given.
    pub summary_tokens: Option<u64>,
    pub tokenizer: Tokenizer,
    pub format: RenderFormat,
    pub options: RenderOptions,
}

impl RollingBudget {
    pub fn summary_room(&self) -> u64 {
        self.summary_tokens.unwrap_or(self.max_tokens / 4)
    }
}

/// One rolling round: what it summarizes or merges.
#[derive(Clone, Debug, PartialEq)]
pub enum RollingStep {
    /// The oldest whole iterations, `first` to `last`.
    Summarize { first: f64, last: f64 },
    /// The live summaries of these rounds (adjacent, oldest first) into one.
    Merge { rounds: Vec<u64> },
}

/// A planned round, with the range it covers and the summarizer prompt for it.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedStep {
    pub step: RollingStep,
    pub first: f64,
    pub last: f64,
    pub prompt: String,
    /// The media parts of the iterations a summarize step covers, in order, so the host's
    /// summary can name them (a merge's summaries named theirs): `{iteration, type,
    /// mediaType, blob | url, size?}`. Empty for a thread without media.
    pub media: Vec<Value>,
}

/// `thread/planCompaction` with strategy `rolling`.
#[derive(Clone, Debug, PartialEq)]
pub struct RollingPlan {
    pub needed: bool,
    /// The tokens of the rendering of the view, as measured.
    pub tokens: u64,
    /// The version the plan was made on; its round expects it.
    pub version: u64,
    /// The tokens the live summaries' texts take together.
    pub summary_tokens: u64,
    /// The next round; `None` when none is needed, or when nothing is left to compact (the
    /// newest iteration and the summaries alone are over the budget).
    pub step: Option<PlannedStep>,
}

impl ThreadService {
    /// What the next rolling round should be, measured on the rendering `budget` names.
    pub async fn plan_rolling(
        &self,
        thread_id: &str,
        budget: RollingBudget,
        cancel: &CancellationToken,
    ) -> ServiceResult<RollingPlan> {
        let mut state = self.caught_up(thread_id).await?;
        if state.view().len() < OFFLOAD_RENDERS_FROM_EVENTS {
            return plan_now(&mut state, &budget, cancel);
        }
        off_loop(cancel, move |token| plan_now(&mut state, &budget, token)).await
    }

    /// Records a rolling round: `summary` of what `step` covers, appended as one marked event
    /// when the step is one the view allows now. Answers the record and the round's number.
    pub async fn compact_rolling(
        &self,
        thread_id: &str,
        step: RollingStep,
        summary: &str,
        expected_version: Option<u64>,
    ) -> ServiceResult<(ThreadRecord, u64)> {
        if summary.trim().is_empty() {
            return Err(invalid("summary", "must be non-empty text: the round's summary".into()));
        }
        let (event, seen_version, round) = {
            let state = self.caught_up(thread_id).await?;
            if expected_version.is_some_and(|v| v != state.record.version) {
                return Err(ServiceError::VersionConflict {
                    thread_id: thread_id.to_owned(),
                    current_version: state.record.version,
                });
            }
            let round = state.view().rounds() + 1;
            let marker = match step {
                RollingStep::Summarize { first, last } => summarize_marker(&state, round, first, last)?,
                RollingStep::Merge { rounds } => merge_marker(&state, round, rounds)?,
            };
            (rolling_summary_event(&marker, summary, now_ms()), state.record.version, round)
        };
        let valid = self.validate_events(vec![Value::Object(event)])?;
        // The round was checked on this version: a write in between could change what it covers.
        let record = self.append(thread_id, valid, Some(seen_version)).await?;
        tracing::debug!(thread_id, round, version = record.version, "rolling compaction round appended");
        Ok((record, round))
    }
}

fn plan_now(state: &mut ThreadState, budget: &RollingBudget, cancel: &CancellationToken) -> ServiceResult<RollingPlan> {
    let rendered = render_now(state, budget.format, budget.options.clone(), &NO_MEDIA, cancel)?;
    let tokens = super::budget::tokens_of(state, budget.format, &budget.options, budget.tokenizer, &rendered);
    drop(rendered);
    let live = live_summaries(state, budget.tokenizer);
    let mut plan = RollingPlan {
        needed: tokens > budget.max_tokens,
        tokens,
        version: state.record.version,
        summary_tokens: live.iter().map(|(s, _)| s.tokens).sum(),
        step: None,
    };
    if !plan.needed {
        return Ok(plan);
    }
    let room = budget.summary_room();
    let (summaries, texts): (Vec<LiveSummary>, Vec<String>) = live.into_iter().unzip();
    plan.step = match choose_merge(&summaries, room) {
        Some(rounds) => {
            let merged = &summaries[..rounds.len()];
            let prompt = merge_prompt(
                merged.iter().zip(&texts).map(|(s, text)| (s.first, s.last, text.as_str())),
                target_tokens(room),
            );
            let (first, last) = (merged[0].first, merged[merged.len() - 1].last);
            Some(PlannedStep { step: RollingStep::Merge { rounds }, first, last, prompt, media: Vec::new() })
        }
        None => summarize_step(state, budget, cancel)?,
    };
    Ok(plan)
}

/// The live rolling summaries of the view, in view order (oldest first), with their texts.
fn live_summaries(state: &ThreadState, tokenizer: Tokenizer) -> Vec<(LiveSummary, String)> {
    state
        .view()
        .items()
        .iter()
        .filter(|item| item.rolling_round.is_some())
        .filter_map(|item| {
            let event = state.events.parse(item.position).expect("view positions are in the log");
            let marker = rolling_marker(&event)?;
            let text = event.fields().get("summary").and_then(Value::as_str).unwrap_or_default().to_owned();
            let tokens = tokenizer.count(&text);
            Some((LiveSummary { round: marker.round, first: marker.first, last: marker.last, tokens }, text))
        })
        .collect()
}

/// The oldest whole iterations whose removal brings the rendering to at most `compact_to`
/// (all it may take when nothing less does); `None` when no iteration can go.
fn summarize_step(
    state: &ThreadState,
    budget: &RollingBudget,
    cancel: &CancellationToken,
) -> ServiceResult<Option<PlannedStep>> {
    let cuts = view_cuts(state);
    let counts: Vec<usize> = cuts.points.counts.iter().copied().filter(|&count| count > 0).collect();
    let Some(&most) = counts.last() else { return Ok(None) };
    let measure = |count: usize| {
        cuts.count_without(count, budget.format, &budget.options, budget.tokenizer, cancel).map(|(_, tokens)| tokens)
    };
    let count = match crate::context::choose_dropped(&counts, budget.compact_to, measure)? {
        BudgetChoice::Fits { dropped, .. } => dropped,
        BudgetChoice::TooBig { .. } => most,
    };
    let (first, last) = (cuts.points.iterations[0], cuts.points.iterations[count - 1]);
    let events = cuts.events_between(first, last);
    let document =
        serialize_thread_to_xml(&events, &XmlOptions { response_prefix: None, escape: budget.options.escape });
    let prompt = summarize_prompt(first, last, target_tokens(budget.summary_room()), &document);
    let media = covered_media(&events);
    Ok(Some(PlannedStep { step: RollingStep::Summarize { first, last }, first, last, prompt, media }))
}

/// What [`PlannedStep::media`] lists of `events`' message and tool-result parts.
fn covered_media(events: &[AgentEvent]) -> Vec<Value> {
    let mut listed = Vec::new();
    for event in events {
        for part in Part::all(parts_of(event)) {
            let Part::Media(media) = part else { continue };
            let mut entry = Map::new();
            entry
                .insert("iteration".into(), Value::Number(iteration_number(event.iteration().as_f64().unwrap_or(0.0))));
            entry.insert("type".into(), media.kind.as_str().into());
            entry.insert("mediaType".into(), media.media_type_or_default().into());
            match media.source {
                PartSource::Blob(id) => entry.insert("blob".into(), id.into()),
                PartSource::Url(url) => entry.insert("url".into(), url.into()),
                PartSource::Data(_) => None,
            };
            if let Some(size) = media.size() {
                entry.insert("size".into(), size.into());
            }
            listed.push(Value::Object(entry));
        }
    }
    listed
}

fn view_cuts(state: &ThreadState) -> ViewCuts {
    ViewCuts::new(state.record.clone(), state.events.gather(state.view().positions()))
}

/// The marker of a summarize round, when `first`–`last` are the oldest whole iterations a round
/// may take now: from the oldest, up to a cut that parts no call from its answer, never the newest.
fn summarize_marker(state: &ThreadState, round: u64, first: f64, last: f64) -> ServiceResult<RollingMarker> {
    let cuts = view_cuts(state);
    let iterations = &cuts.points.iterations;
    let rank = iterations.iter().position(|&i| (i + 0.0).to_bits() == (last + 0.0).to_bits());
    let allowed = rank.is_some_and(|rank| cuts.points.counts.contains(&(rank + 1)));
    let starts_at_oldest = iterations.first().is_some_and(|&i| (i + 0.0).to_bits() == (first + 0.0).to_bits());
    if !(starts_at_oldest && allowed) {
        let oldest = iterations.first().map_or("none".to_owned(), |&i| iteration_number(i).to_string());
        let ends: Vec<String> = cuts
            .points
            .counts
            .iter()
            .filter(|&&count| count > 0)
            .map(|&count| iteration_number(iterations[count - 1]).to_string())
            .collect();
        let ends = if ends.is_empty() { "none: nothing can be summarized now".to_owned() } else { ends.join(", ") };
        let reason = format!(
            "[{}, {}] is not a range a round can summarize now: it starts at the oldest iteration ({oldest}) and ends \
             before the newest where no call is parted from its answer ({ends}); plan again",
            iteration_number(first),
            iteration_number(last)
        );
        return Err(invalid("step.iterations", reason));
    }
    Ok(RollingMarker { round, first, last, merges: Vec::new() })
}

/// The marker of a merge round, when `rounds` are two or more live rolling summaries next to
/// each other in the view.
fn merge_marker(state: &ThreadState, round: u64, mut rounds: Vec<u64>) -> ServiceResult<RollingMarker> {
    let live = live_summaries(state, Tokenizer::Estimate);
    let live_rounds: Vec<u64> = live.iter().map(|(s, _)| s.round).collect();
    let show = |rounds: &[u64]| rounds.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
    let mut at: Vec<usize> = Vec::with_capacity(rounds.len());
    for (i, wanted) in rounds.iter().enumerate() {
        match live_rounds.iter().position(|r| r == wanted) {
            Some(index) if !at.contains(&index) => at.push(index),
            Some(_) => return Err(invalid(&format!("step.rounds[{i}]"), format!("round {wanted} twice"))),
            None => {
                let reason = format!("round {wanted} is not a live rolling summary; live: {}", show(&live_rounds));
                return Err(invalid(&format!("step.rounds[{i}]"), reason));
            }
        }
    }
    at.sort_unstable();
    if at.len() < 2 || at.windows(2).any(|w| w[1] != w[0] + 1) {
        let reason = format!(
            "a merge takes two or more live summaries next to each other; live, oldest first: {}",
            show(&live_rounds)
        );
        return Err(invalid("step.rounds", reason));
    }
    rounds = at.iter().map(|&index| live_rounds[index]).collect();
    let (first, last) = (live[at[0]].0.first, live[at[at.len() - 1]].0.last);
    Ok(RollingMarker { round, first, last, merges: rounds })
}

fn invalid(path: &str, reason: String) -> ServiceError {
    ServiceError::InvalidParams { path: path.to_owned(), reason }
}
