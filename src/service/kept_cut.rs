//! Renders within a budget that keep their cut (`options.budget.dropTo`).
//!
//! The cut is replayed over the view's droppable iterations in order ([`advance_cut`]): at
//! each one, the thread as it stood when that iteration was the newest is rendered from the
//! current cut, and the cut moves only when that rendering is over `maxTokens`. So the cut is
//! a function of the events and the options alone, and renders between two moves share
//! everything but their new end — the prefix a provider caches.
//!
//! The thread's state keeps where the replay stands ([`KeptCut`]): the steps settled so far,
//! the cut after them, and the window's own state with its renderers. A render after an
//! append replays only the new steps, each one rendering the window incrementally.

use super::budget::{budget_item, tokens_of};
use super::state::ThreadState;
use super::{render_with_renderers, Budget, BudgetedRender, RenderFormat, RenderOptions, Rendered};
use super::{ServiceError, ServiceResult};
use crate::context::Tokenizer;
use crate::context::{advance_cut, drop_points, iteration_number, BudgetItem, DropPoints};
use crate::event::AgentEvent;
use crate::media::bytes::NO_MEDIA;
use crate::store::{Appended, ThreadSettings};
use tokio_util::sync::CancellationToken;

/// How many budgets' replays a thread keeps (one per format and options a host renders).
const KEPT_CUTS: usize = 4;

/// What a kept replay was made for; any difference starts it again.
#[derive(Clone, Debug)]
struct CutKey {
    format: RenderFormat,
    options: RenderOptions,
    budget: Budget,
    settings: ThreadSettings,
}

impl CutKey {
    fn is_for(&self, format: RenderFormat, options: &RenderOptions, budget: Budget, settings: &ThreadSettings) -> bool {
        self.format == format && self.options == *options && self.budget == budget && self.settings == *settings
    }
}

/// What the budget needs of one view event, owned so the replay outlives a render.
#[derive(Clone, Debug)]
struct Item {
    iteration: f64,
    is_summary: bool,
    tool_call_id: Option<Box<str>>,
}

impl From<BudgetItem<'_>> for Item {
    fn from(item: BudgetItem<'_>) -> Self {
        Item { iteration: item.iteration, is_summary: item.is_summary, tool_call_id: item.tool_call_id.map(Box::from) }
    }
}

impl<'a> From<&'a Item> for BudgetItem<'a> {
    fn from(item: &'a Item) -> Self {
        BudgetItem {
            iteration: item.iteration,
            is_summary: item.is_summary,
            tool_call_id: item.tool_call_id.as_deref(),
        }
    }
}

/// The replays a thread keeps, the most recently used first (attached to its state).
#[derive(Default)]
struct KeptCuts(Vec<KeptCut>);

/// Where the replay of one budget stands, kept in the thread's state between renders.
struct KeptCut {
    key: CutKey,
    /// The view events seen so far, in view order.
    items: Vec<Item>,
    /// The view's rounds and its last event's log position when the items were taken: a round
    /// rewrites the view, and the items are then stale.
    rounds: u64,
    last_position: Option<usize>,
    /// Steps replayed for good (all but the newest, which new events may still join).
    settled_steps: usize,
    settled_cut: usize,
    /// The droppable iterations and allowed cuts the settled steps relied on.
    settled_iterations: Vec<f64>,
    settled_counts: Vec<usize>,
    /// The window rendered last: its view indices and its state, renderers kept.
    window: Option<(Vec<usize>, ThreadState)>,
}

impl KeptCut {
    fn new(key: CutKey) -> Self {
        KeptCut {
            key,
            items: Vec::new(),
            rounds: 0,
            last_position: None,
            settled_steps: 0,
            settled_cut: 0,
            settled_iterations: Vec::new(),
            settled_counts: Vec::new(),
            window: None,
        }
    }

    /// Whether the view only grew at its end since the items were taken.
    fn view_extends(&self, state: &ThreadState) -> bool {
        let view = state.view().items();
        view.len() >= self.items.len()
            && state.view().rounds() == self.rounds
            && self.items.len().checked_sub(1).map(|last| view[last].position) == self.last_position
    }

    /// Takes the view events appended since, forgetting settled steps they would change: an
    /// event of a settled iteration, or a summary (it is in every window).
    fn take_new_items(&mut self, state: &ThreadState) {
        let settled_max = self.settled_iterations.last().copied();
        let view = state.view().items();
        for item in &view[self.items.len()..] {
            let event = state.events.parse(item.position).expect("view positions are in the log");
            let item = Item::from(budget_item(&event));
            if item.is_summary || settled_max.is_some_and(|max| item.iteration <= max) {
                self.unsettle();
            }
            self.items.push(item);
        }
        self.rounds = state.view().rounds();
        self.last_position = view.last().map(|item| item.position);
    }

    fn unsettle(&mut self) {
        self.settled_steps = 0;
        self.settled_cut = 0;
        self.settled_iterations.clear();
        self.settled_counts.clear();
    }

    /// The view indices of the window of `step` from `cut`: summaries, and the events of the
    /// iterations after the dropped ones up to the step's own.
    fn window_of(&self, points: &DropPoints, cut: usize, step: Option<usize>) -> Vec<usize> {
        let newest_dropped = cut.checked_sub(1).map(|last| points.iterations[last]);
        let newest_kept = step.map(|step| points.iterations[step]);
        (0..self.items.len())
            .filter(|&at| {
                let item = &self.items[at];
                item.is_summary
                    || (newest_dropped.is_none_or(|dropped| item.iteration + 0.0 > dropped)
                        && newest_kept.is_none_or(|kept| item.iteration + 0.0 <= kept))
            })
            .collect()
    }

    /// Renders the window, growing the kept window's state when it is a prefix of this one.
    fn render_window(
        &mut self,
        state: &ThreadState,
        window: Vec<usize>,
        cancel: &CancellationToken,
        tokenizer: Tokenizer,
    ) -> ServiceResult<(Rendered, u64)> {
        let positions = |indices: &[usize]| -> Vec<usize> {
            let view = state.view().items();
            indices.iter().map(|&at| view[at].position).collect()
        };
        let grows = matches!(&self.window, Some((kept, _)) if window.starts_with(kept));
        if grows {
            let (kept, window_state) = self.window.as_mut().expect("checked above");
            if kept.len() < window.len() {
                let stored = state.events.gather(positions(&window[kept.len()..]));
                let events: Vec<AgentEvent> = stored.parse_all();
                let appended = Appended {
                    version: state.record.version,
                    event_count: window.len() as u64,
                    updated_at: state.record.updated_at,
                };
                window_state.apply(&events, &stored, None, appended);
                *kept = window;
            }
        } else {
            let events = state.events.gather(positions(&window));
            self.window = Some((window, ThreadState::verbatim(state.record.clone(), events)));
        }
        let (_, window_state) = self.window.as_mut().expect("set above");
        window_state.record.version = state.record.version;
        let rendered =
            render_with_renderers(window_state, self.key.format, self.key.options.clone(), &NO_MEDIA, cancel)?;
        let tokens = tokens_of(window_state, self.key.format, &self.key.options, tokenizer, &rendered);
        Ok((rendered, tokens))
    }
}

/// Whether a render with these options continues a kept replay by a few events only, so it is
/// cheap enough to run in place; a replay from the start renders once per iteration.
pub(super) fn replays_little(
    state: &ThreadState,
    format: RenderFormat,
    options: &RenderOptions,
    budget: Budget,
) -> bool {
    const FEW_NEW_EVENTS: usize = 64;
    let kept_cuts = state.attached.get::<KeptCuts>().map_or(&[][..], |cuts| &cuts.0);
    kept_cuts.iter().any(|kept| {
        kept.key.is_for(format, options, budget, &state.record.settings)
            && kept.view_extends(state)
            && state.view().len() - kept.items.len() <= FEW_NEW_EVENTS
    })
}

/// `thread/render` within `budget`, keeping the cut until the rendering would exceed
/// `maxTokens`, then dropping to `budget.drop_to` (see the module's docs).
pub(super) fn render_keeping_cut(
    state: &mut ThreadState,
    format: RenderFormat,
    options: RenderOptions,
    budget: Budget,
    cancel: &CancellationToken,
) -> ServiceResult<BudgetedRender> {
    let kept_cuts = &mut state.attached.get_or_default::<KeptCuts>().0;
    let settings = &state.record.settings;
    let kept = kept_cuts.iter().position(|kept| kept.key.is_for(format, &options, budget, settings));
    let mut kept = match kept.map(|at| kept_cuts.remove(at)) {
        Some(kept) if kept.view_extends(state) => kept,
        _ => KeptCut::new(CutKey { format, options, budget, settings: state.record.settings.clone() }),
    };
    let rendered = replay(&mut kept, state, cancel);
    // The most recently used first; the oldest goes when more are kept than a host needs.
    let kept_cuts = &mut state.attached.get_or_default::<KeptCuts>().0;
    kept_cuts.insert(0, kept);
    kept_cuts.truncate(KEPT_CUTS);
    rendered
}

fn replay(kept: &mut KeptCut, state: &ThreadState, cancel: &CancellationToken) -> ServiceResult<BudgetedRender> {
    kept.take_new_items(state);
    let items: Vec<BudgetItem<'_>> = kept.items.iter().map(BudgetItem::from).collect();
    let points = drop_points(&items);
    drop(items);
    // An answer in a later iteration can forbid a cut the settled steps used: replay anew then.
    let settled = kept.settled_steps;
    let still_allowed = points.iterations.get(..settled) == Some(&kept.settled_iterations[..])
        && points.counts.iter().copied().filter(|&count| count <= settled).eq(kept.settled_counts.iter().copied());
    if !still_allowed {
        kept.unsettle();
    }
    let Budget { max_tokens, tokenizer, drop_to } = kept.key.budget;
    // Without `dropTo` the cut drops as few as it can: `dropTo` is `maxTokens` then.
    let drop_to = drop_to.unwrap_or(max_tokens);
    let steps = points.iterations.len();
    let mut cut = kept.settled_cut;
    // The rendering measured last: advance_cut always measures the cut it returns last.
    let mut last: Option<(Rendered, u64)> = None;
    for step in kept.settled_steps..steps {
        if cancel.is_cancelled() {
            return Err(ServiceError::Cancelled);
        }
        let measure = |count: usize| -> ServiceResult<u64> {
            let window = kept.window_of(&points, count, Some(step));
            let (rendered, tokens) = kept.render_window(state, window, cancel, tokenizer)?;
            last = Some((rendered, tokens));
            Ok(tokens)
        };
        cut = advance_cut(&points.counts, cut, step, max_tokens, drop_to, measure)?.cut;
        if step + 1 < steps {
            kept.settled_steps = step + 1;
            kept.settled_cut = cut;
        }
    }
    kept.settled_iterations = points.iterations[..kept.settled_steps].to_vec();
    kept.settled_counts = points.counts.iter().copied().filter(|&count| count <= kept.settled_steps).collect();
    let (rendered, tokens) = match last {
        Some(last) => last,
        // No droppable iteration: the view as it is.
        None => kept.render_window(state, kept.window_of(&points, 0, None), cancel, tokenizer)?,
    };
    if tokens > max_tokens {
        return Err(ServiceError::Limit { limit: "options.budget.maxTokens", value: tokens, max: max_tokens });
    }
    let dropped = points.iterations[..cut].iter().map(|&i| iteration_number(i)).collect();
    Ok(BudgetedRender { rendered, dropped, tokens })
}
