//! Token counts, compaction rounds and renders within a budget, on open threads.
//!
//! Every render shows the thread's compacted view (see [`crate::context::view`]): the list
//! upstream would hold after its summarization rounds. Here the host asks what that list
//! costs, what upstream would summarize next, records a round, or renders within a budget.

use super::budget::{budget_item, tokens_of, Budget, BudgetedRender};
use super::kept_cut::{render_keeping_cut, replays_little};
use super::state::{Cancelled, ThreadState};
use super::{now_ms, OFFLOAD_RENDERS_FROM_EVENTS};
use super::{off_loop, render_now, RenderFormat, RenderOptions, Rendered, ServiceError, ServiceResult, ThreadService};
use crate::context::{
    choose_dropped, drop_points, iteration_number, plan_compaction, summarizer_prompt, summary_event, BudgetChoice,
    BudgetItem, CompactionMarker, CompactionPlan, DropPoints, Tokenizer,
};
use crate::event::AgentEvent;
use crate::event_log::EventLog;
use crate::media::bytes::NO_MEDIA;
use crate::store::ThreadRecord;
use serde_json::{Number, Value};
use std::collections::HashMap;
use tokio_util::sync::CancellationToken;

/// `thread/tokens`: the tokens of a rendering, whole and per iteration.
#[derive(Clone, Debug, PartialEq)]
pub struct TokenCount {
    pub tokens: u64,
    pub tokenizer: Tokenizer,
    /// In ascending iteration order.
    pub by_iteration: Vec<(Number, u64)>,
}

/// `thread/planCompaction`: upstream's trigger and its next round's summarizer prompts.
#[derive(Clone, Debug, PartialEq)]
pub struct CompactionPlanned {
    pub needed: bool,
    pub tokens: u64,
    pub iterations: Vec<(Number, String)>,
}

impl ThreadService {
    /// Counts the tokens of the model input `thread/render` gives for the same arguments.
    pub async fn tokens(
        &self,
        thread_id: &str,
        format: RenderFormat,
        options: RenderOptions,
        tokenizer: Tokenizer,
        cancel: &CancellationToken,
    ) -> ServiceResult<TokenCount> {
        reject_from_event(&options)?;
        let mut state = self.caught_up(thread_id).await?;
        if state.view().len() < OFFLOAD_RENDERS_FROM_EVENTS {
            return count_now(&mut state, format, options, tokenizer, cancel);
        }
        off_loop(cancel, move |token| count_now(&mut state, format, options, tokenizer, token)).await
    }

    /// What upstream's context manager would do now with the thread's compacted view.
    pub async fn plan_compaction(
        &self,
        thread_id: &str,
        max_context_tokens: u64,
        keep_recent_iterations: f64,
    ) -> ServiceResult<CompactionPlanned> {
        let state = self.caught_up(thread_id).await?;
        let tokens = state.view().upstream_tokens();
        let plan = plan_compaction(state.view().items(), keep_recent_iterations);
        let iterations = plan
            .map(|plan| {
                plan.iterations
                    .iter()
                    .map(|planned| (iteration_number(planned.iteration), prompt_of(&state, &planned.view_positions)))
                    .collect()
            })
            .unwrap_or_default();
        Ok(CompactionPlanned { needed: tokens > max_context_tokens, tokens, iterations })
    }

    /// Records a compaction round: the summaries of exactly the iterations upstream would
    /// summarize now, appended in one append, each marked with the round. Nothing is appended
    /// when upstream would summarize nothing and no summary is given.
    pub async fn compact(
        &self,
        thread_id: &str,
        summaries: Vec<(f64, String)>,
        keep_recent_iterations: f64,
        expected_version: Option<u64>,
    ) -> ServiceResult<ThreadRecord> {
        let (events, seen_version) = {
            let state = self.caught_up(thread_id).await?;
            if expected_version.is_some_and(|v| v != state.record.version) {
                return Err(ServiceError::VersionConflict {
                    thread_id: thread_id.to_owned(),
                    current_version: state.record.version,
                });
            }
            let plan = plan_compaction(state.view().items(), keep_recent_iterations);
            let round = state.view().rounds() + 1;
            let events = round_events(plan.as_ref(), &summaries, round, now_ms())?;
            if events.is_empty() {
                return Ok(state.record.clone());
            }
            (events, state.record.version)
        };
        let summaries = events.len();
        let valid = self.validate_events(events)?;
        // The round was planned on this version: a write in between would change the plan.
        let record = self.append(thread_id, valid, Some(seen_version)).await?;
        tracing::debug!(thread_id, summaries, version = record.version, "compaction round appended");
        Ok(record)
    }

    /// Renders, leaving out the oldest unsummarized iterations until the rendering fits.
    pub async fn render_within_budget(
        &self,
        thread_id: &str,
        format: RenderFormat,
        options: RenderOptions,
        budget: Budget,
        cancel: &CancellationToken,
    ) -> ServiceResult<BudgetedRender> {
        if options.from_event.is_some() {
            return Err(ServiceError::InvalidParams {
                path: "options.fromEvent".into(),
                reason: "cannot be used with options.budget".into(),
            });
        }
        let mut state = self.caught_up(thread_id).await?;
        if budget.drop_to.is_some() {
            if state.view().len() < OFFLOAD_RENDERS_FROM_EVENTS && replays_little(&state, format, &options, budget) {
                return render_keeping_cut(&mut state, format, options, budget, cancel);
            }
            return off_loop(cancel, move |token| render_keeping_cut(&mut state, format, options, budget, token)).await;
        }
        let record = state.record.clone();
        let view = state.events.gather(state.view().positions());
        drop(state);
        if view.len() < OFFLOAD_RENDERS_FROM_EVENTS {
            return budgeted_now(record, view, format, options, budget, cancel);
        }
        off_loop(cancel, move |token| budgeted_now(record, view, format, options, budget, token)).await
    }
}

fn reject_from_event(options: &RenderOptions) -> ServiceResult<()> {
    match options.from_event {
        Some(_) => Err(ServiceError::InvalidParams {
            path: "options.fromEvent".into(),
            reason: "counts are of whole renderings; leave it out".into(),
        }),
        None => Ok(()),
    }
}

/// The summarizer prompt of the view events at `view_positions`.
fn prompt_of(state: &ThreadState, view_positions: &[usize]) -> String {
    let items = state.view().items();
    let events: Vec<AgentEvent> = view_positions
        .iter()
        .map(|&at| state.events.parse(items[at].position).expect("view positions are in the log"))
        .collect();
    summarizer_prompt(&events)
}

/// The round's summary events, in upstream's order; the summaries must name exactly the
/// planned iterations, each once.
fn round_events(
    plan: Option<&CompactionPlan>,
    summaries: &[(f64, String)],
    round: u64,
    timestamp: u64,
) -> ServiceResult<Vec<Value>> {
    let planned: Vec<f64> = plan.map(|p| p.iterations.iter().map(|i| i.iteration).collect()).unwrap_or_default();
    let mut by_iteration: HashMap<u64, &str> = HashMap::new();
    for (i, (iteration, summary)) in summaries.iter().enumerate() {
        let key = (iteration + 0.0).to_bits();
        if !planned.iter().any(|p| (p + 0.0).to_bits() == key) {
            return Err(invalid(
                format!("summaries[{i}].iteration"),
                format!("iteration {} is not one to summarize now; planned: {}", show(*iteration), list(&planned)),
            ));
        }
        if by_iteration.insert(key, summary).is_some() {
            return Err(invalid(format!("summaries[{i}].iteration"), format!("iteration {} twice", show(*iteration))));
        }
    }
    if let Some(missing) = planned.iter().find(|p| !by_iteration.contains_key(&(*p + 0.0).to_bits())) {
        return Err(invalid(
            "summaries".into(),
            format!("no summary of iteration {}; a round summarizes all of: {}", show(*missing), list(&planned)),
        ));
    }
    let Some(plan) = plan else { return Ok(Vec::new()) };
    let marker = CompactionMarker { round, cutoff: plan.cutoff };
    Ok(planned
        .iter()
        .map(|&iteration| {
            let summary = by_iteration[&(iteration + 0.0).to_bits()];
            Value::Object(summary_event(&iteration_number(iteration), summary, timestamp, &marker))
        })
        .collect())
}

fn invalid(path: String, reason: String) -> ServiceError {
    ServiceError::InvalidParams { path, reason }
}

fn show(iteration: f64) -> String {
    iteration_number(iteration).to_string()
}

fn list(iterations: &[f64]) -> String {
    if iterations.is_empty() {
        return "none".into();
    }
    iterations.iter().map(|&i| show(i)).collect::<Vec<_>>().join(", ")
}

fn count_now(
    state: &mut ThreadState,
    format: RenderFormat,
    options: RenderOptions,
    tokenizer: Tokenizer,
    cancel: &CancellationToken,
) -> ServiceResult<TokenCount> {
    let counted = count_with_renderers(state, format, options, tokenizer, cancel);
    state.release_renderers();
    counted
}

fn count_with_renderers(
    state: &mut ThreadState,
    format: RenderFormat,
    options: RenderOptions,
    tokenizer: Tokenizer,
    cancel: &CancellationToken,
) -> ServiceResult<TokenCount> {
    let escape = options.escape;
    let tokens = match format {
        // The document is "<thread>\n", the event lines, then the tail: its measure adds up
        // from the kept line measures, so an append costs only its own lines.
        RenderFormat::Xml => {
            let prefix = options.response_prefix.or_else(|| state.record.settings.response_prefix.clone());
            let mut tail = String::from("</thread>");
            if let Some(prefix) = prefix.filter(|p| !p.is_empty()) {
                tail.push('\n');
                tail.push_str(&prefix);
            }
            let lines: u64 =
                state.line_measures(escape, tokenizer, cancel).map_err(|_| ServiceError::Cancelled)?.iter().sum();
            tokenizer.tokens_of_measure(tokenizer.measure("<thread>\n") + lines + tokenizer.measure(&tail))
        }
        _ => {
            let rendered = super::render_with_renderers(state, format, options.clone(), &NO_MEDIA, cancel)?;
            tokens_of(state, format, &options, tokenizer, &rendered)
        }
    };
    let by_iteration = by_iteration(state, escape, tokenizer, cancel).map_err(|_| ServiceError::Cancelled)?;
    Ok(TokenCount { tokens, tokenizer, by_iteration })
}

/// Each iteration's share: the tokens of its view events' `<event>` lines, joined in view
/// order (their measures add up). The same in every format, so shares compare across formats.
fn by_iteration(
    state: &mut ThreadState,
    escape: crate::xml::EscapeMode,
    tokenizer: Tokenizer,
    cancel: &CancellationToken,
) -> Result<Vec<(Number, u64)>, Cancelled> {
    let iterations: Vec<f64> = state.view().items().iter().map(|item| item.iteration + 0.0).collect();
    let measures = state.line_measures(escape, tokenizer, cancel)?;
    let mut shares: HashMap<u64, (f64, u64)> = HashMap::new();
    for (iteration, measure) in iterations.into_iter().zip(measures) {
        shares.entry(iteration.to_bits()).or_insert((iteration, 0)).1 += measure;
    }
    let mut shares: Vec<(f64, u64)> = shares.into_values().collect();
    shares.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(shares
        .into_iter()
        .map(|(iteration, measure)| (iteration_number(iteration), tokenizer.tokens_of_measure(measure)))
        .collect())
}

fn budgeted_now(
    record: ThreadRecord,
    view: EventLog,
    format: RenderFormat,
    options: RenderOptions,
    budget: Budget,
    cancel: &CancellationToken,
) -> ServiceResult<BudgetedRender> {
    let cuts = ViewCuts::new(record, view);
    let measure = |count: usize| cuts.count_without(count, format, &options, budget.tokenizer, cancel).map(|(_, t)| t);
    match choose_dropped(&cuts.points.counts, budget.max_tokens, measure)? {
        BudgetChoice::Fits { dropped, tokens } => Ok(BudgetedRender {
            rendered: cuts.render_without(dropped, format, &options, cancel)?,
            dropped: cuts.points.iterations[..dropped].iter().map(|&i| iteration_number(i)).collect(),
            tokens,
        }),
        BudgetChoice::TooBig { tokens } => {
            Err(ServiceError::Limit { limit: "options.budget.maxTokens", value: tokens, max: budget.max_tokens })
        }
    }
}

/// A compacted view and the cuts a budget or a rolling round may make in it: its oldest
/// droppable iterations, left out whole, never parting a call from its answer.
pub(super) struct ViewCuts {
    record: ThreadRecord,
    view: EventLog,
    /// Each view event's iteration, and whether it is a summary (summaries are never cut).
    events: Vec<(f64, bool)>,
    pub(super) points: DropPoints,
}

impl ViewCuts {
    pub(super) fn new(record: ThreadRecord, view: EventLog) -> Self {
        let parsed: Vec<AgentEvent> = view.parse_all();
        let items: Vec<BudgetItem<'_>> = parsed.iter().map(budget_item).collect();
        let points = drop_points(&items);
        let events = items.iter().map(|item| (item.iteration, item.is_summary)).collect();
        ViewCuts { record, view, events, points }
    }

    /// The view without its `count` oldest droppable iterations.
    pub(super) fn without(&self, count: usize) -> EventLog {
        // The dropped iterations are the `count` oldest: all up to the newest of them.
        let newest_dropped = count.checked_sub(1).map(|last| self.points.iterations[last]);
        self.view.gather(self.events.iter().enumerate().filter_map(|(at, &(iteration, is_summary))| {
            let kept = is_summary || newest_dropped.is_none_or(|newest| iteration + 0.0 > newest);
            kept.then_some(at)
        }))
    }

    /// [`ViewCuts::without`], rendered.
    pub(super) fn render_without(
        &self,
        count: usize,
        format: RenderFormat,
        options: &RenderOptions,
        cancel: &CancellationToken,
    ) -> ServiceResult<Rendered> {
        let mut state = ThreadState::verbatim(self.record.clone(), self.without(count));
        render_now(&mut state, format, options.clone(), &NO_MEDIA, cancel)
    }

    /// [`ViewCuts::render_without`], and its tokens ([`tokens_of`]).
    pub(super) fn count_without(
        &self,
        count: usize,
        format: RenderFormat,
        options: &RenderOptions,
        tokenizer: Tokenizer,
        cancel: &CancellationToken,
    ) -> ServiceResult<(Rendered, u64)> {
        let mut state = ThreadState::verbatim(self.record.clone(), self.without(count));
        let rendered = render_now(&mut state, format, options.clone(), &NO_MEDIA, cancel)?;
        let tokens = tokens_of(&state, format, options, tokenizer, &rendered);
        Ok((rendered, tokens))
    }

    /// The events of iterations `first` to `last` in the view, summaries left out, in view order.
    pub(super) fn events_between(&self, first: f64, last: f64) -> Vec<AgentEvent> {
        let range = (first + 0.0)..=(last + 0.0);
        self.events
            .iter()
            .enumerate()
            .filter(|(_, &(iteration, is_summary))| !is_summary && range.contains(&(iteration + 0.0)))
            .map(|(at, _)| self.view.parse(at).expect("positions are in the view"))
            .collect()
    }
}
