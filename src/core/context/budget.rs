//! Which iterations a render within a token budget leaves out.
//!
//! The oldest iterations go first, whole, and only at points where no tool call is parted
//! from its result (or error): a call and its answer in different iterations drop together.
//! Summaries are never dropped (they are the system message's), and neither is the newest
//! iteration: when even it alone does not fit, the caller says so instead of truncating.

use std::collections::HashMap;

/// What the budget needs to know of one event of the view.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BudgetItem<'a> {
    pub iteration: f64,
    pub is_summary: bool,
    /// The `toolCallId` of a `tool_call`, `tool_result` or `error` event.
    pub tool_call_id: Option<&'a str>,
}

/// The droppable iterations, oldest first, and how many of them may be dropped together:
/// every count at which no tool call is parted from its answer, from 0 up to all but the
/// newest.
#[derive(Clone, Debug, PartialEq)]
pub struct DropPoints {
    pub iterations: Vec<f64>,
    pub counts: Vec<usize>,
}

pub fn drop_points(items: &[BudgetItem<'_>]) -> DropPoints {
    let mut iterations: Vec<f64> = items.iter().filter(|i| !i.is_summary).map(|i| i.iteration + 0.0).collect();
    iterations.sort_by(f64::total_cmp);
    iterations.dedup();
    let rank = |iteration: f64| iterations.partition_point(|&i| i < iteration + 0.0);
    // For each call id, the ranks of the oldest and newest iteration it appears in.
    let mut spans: HashMap<&str, (usize, usize)> = HashMap::new();
    for item in items.iter().filter(|i| !i.is_summary) {
        if let Some(id) = item.tool_call_id {
            let r = rank(item.iteration);
            let span = spans.entry(id).or_insert((r, r));
            span.0 = span.0.min(r);
            span.1 = span.1.max(r);
        }
    }
    // Dropping `count` iterations cuts between ranks count-1 and count: not inside a span.
    let mut crossing = vec![0i64; iterations.len() + 1];
    for &(first, last) in spans.values() {
        if first < last {
            crossing[first + 1] += 1;
            crossing[last + 1] -= 1;
        }
    }
    let mut open = 0;
    let counts = crossing
        .iter()
        .take(iterations.len().max(1))
        .enumerate()
        .filter_map(|(count, delta)| {
            open += delta;
            (open == 0).then_some(count)
        })
        .collect();
    DropPoints { iterations, counts }
}

/// The outcome of fitting a rendering into `max_tokens`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetChoice {
    /// Drop this many of the oldest iterations; the rendering then takes `tokens`.
    Fits { dropped: usize, tokens: u64 },
    /// Even with every droppable iteration dropped the rendering takes `tokens`.
    TooBig { tokens: u64 },
}

/// Finds the fewest iterations to drop. `measure(count)` renders without the `count` oldest
/// and counts its tokens. Dropping events never lengthens a rendering, so the counts are
/// searched by bisection: O(log n) renders.
pub fn choose_dropped<E>(
    counts: &[usize],
    max_tokens: u64,
    mut measure: impl FnMut(usize) -> Result<u64, E>,
) -> Result<BudgetChoice, E> {
    let first = counts.first().copied().unwrap_or(0);
    let tokens = measure(first)?;
    if tokens <= max_tokens {
        return Ok(BudgetChoice::Fits { dropped: first, tokens });
    }
    let last = counts.len() - 1;
    let most = measure(counts[last])?;
    if most > max_tokens {
        return Ok(BudgetChoice::TooBig { tokens: most });
    }
    // Invariant: counts[low] does not fit, counts[high] fits with `best` tokens.
    let (mut low, mut high, mut best) = (0, last, most);
    while high - low > 1 {
        let mid = (low + high) / 2;
        let tokens = measure(counts[mid])?;
        if tokens <= max_tokens {
            (high, best) = (mid, tokens);
        } else {
            low = mid;
        }
    }
    Ok(BudgetChoice::Fits { dropped: counts[high], tokens: best })
}

/// Where a kept cut stands after one step of the replay (see [`advance_cut`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CutStep {
    /// How many of the oldest droppable iterations are left out.
    pub cut: usize,
    /// The tokens of the step's rendering from that cut.
    pub tokens: u64,
}

/// One step of the replay that keeps a cut (`options.budget.dropTo`): the thread as it stood
/// when its droppable iteration `step` (0-based, oldest first) was the newest, rendered from
/// the cut `cut`. When that rendering is at most `max_tokens` the cut stays. Otherwise it
/// advances, through the allowed `counts` above it that keep the step's own iteration, to the
/// first whose rendering is at most `drop_to` — or, when none is, to the last of them. The
/// caller renders (`measure(cut)`); every process replaying the same events takes the same
/// steps, so the cut is a function of the events and the options alone.
pub fn advance_cut<E>(
    counts: &[usize],
    cut: usize,
    step: usize,
    max_tokens: u64,
    drop_to: u64,
    mut measure: impl FnMut(usize) -> Result<u64, E>,
) -> Result<CutStep, E> {
    let tokens = measure(cut)?;
    let mut best = CutStep { cut, tokens };
    if tokens <= max_tokens {
        return Ok(best);
    }
    for &count in counts.iter().filter(|&&count| count > cut && count <= step) {
        best = CutStep { cut: count, tokens: measure(count)? };
        if best.tokens <= drop_to {
            break;
        }
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn item(iteration: f64, call: Option<&str>) -> BudgetItem<'_> {
        BudgetItem { iteration, is_summary: false, tool_call_id: call }
    }

    #[test]
    fn a_call_answered_in_a_later_iteration_drops_with_it() {
        let items = [item(1.0, None), item(2.0, Some("a")), item(3.0, Some("a")), item(4.0, None)];
        let points = drop_points(&items);
        assert_eq!(points.iterations, vec![1.0, 2.0, 3.0, 4.0]);
        assert_eq!(points.counts, vec![0, 1, 3]);
    }

    #[test]
    fn summaries_are_not_droppable_iterations() {
        let items = [BudgetItem { iteration: 1.0, is_summary: true, tool_call_id: None }, item(5.0, None)];
        assert_eq!(drop_points(&items), DropPoints { iterations: vec![5.0], counts: vec![0] });
        assert_eq!(drop_points(&[]), DropPoints { iterations: vec![], counts: vec![0] });
    }

    #[test]
    fn says_when_even_the_newest_iteration_does_not_fit() {
        let choice = choose_dropped::<()>(&[0, 1, 2], 5, |d| Ok(10 - d as u64));
        assert_eq!(choice, Ok(BudgetChoice::TooBig { tokens: 8 }));
    }

    #[test]
    fn a_cut_advances_to_drop_to_and_then_stays() {
        // Each iteration costs 10; the step's rendering holds iterations cut..=step.
        let size = |step: usize| move |cut: usize| Ok::<_, ()>(((step + 1 - cut) * 10) as u64);
        let counts: Vec<usize> = (0..10).collect();
        let mut cut = 0;
        let mut cuts = Vec::new();
        for step in 0..10 {
            cut = advance_cut(&counts, cut, step, 50, 20, size(step)).unwrap().cut;
            cuts.push(cut);
        }
        // Over 50 at step 5 (60): dropped to 20 (4 dropped); stays until over 50 again.
        assert_eq!(cuts, vec![0, 0, 0, 0, 0, 4, 4, 4, 4, 8]);
    }

    #[test]
    fn a_cut_never_drops_the_steps_own_iteration() {
        let step = advance_cut(&[0, 1, 2, 3], 0, 1, 5, 5, |cut| Ok::<_, ()>(100 - cut as u64)).unwrap();
        assert_eq!(step, CutStep { cut: 1, tokens: 99 });
    }

    proptest! {
        #[test]
        fn with_drop_to_equal_to_max_the_replay_drops_the_fewest(sizes in prop::collection::vec(1u64..50, 1..20), max in 0u64..400) {
            // Growing renderings: the replay's last cut is the bisection's choice on the whole.
            let counts: Vec<usize> = (0..sizes.len()).collect();
            let mut cut = 0;
            let mut last = CutStep { cut: 0, tokens: 0 };
            for step in 0..sizes.len() {
                last = advance_cut(&counts, cut, step, max, max, |d| Ok::<_, ()>(sizes[d..=step].iter().sum::<u64>())).unwrap();
                cut = last.cut;
            }
            let whole = |d: usize| Ok::<_, ()>(sizes[d..].iter().sum::<u64>());
            match choose_dropped(&counts, max, whole).unwrap() {
                BudgetChoice::Fits { dropped, tokens } => prop_assert_eq!(last, CutStep { cut: dropped, tokens }),
                BudgetChoice::TooBig { .. } => prop_assert!(last.tokens > max),
            }
        }

        #[test]
        fn bisection_finds_the_fewest_drops(sizes in prop::collection::vec(1u64..50, 1..20), max in 0u64..400) {
            let counts: Vec<usize> = (0..sizes.len()).collect();
            let measure = |d: usize| Ok::<_, ()>(sizes[d..].iter().sum::<u64>());
            let linear = counts.iter().map(|&d| (d, measure(d).unwrap())).find(|&(_, t)| t <= max);
            let choice = choose_dropped(&counts, max, measure).unwrap();
            match linear {
                Some((dropped, tokens)) => prop_assert_eq!(choice, BudgetChoice::Fits { dropped, tokens }),
                None => prop_assert_eq!(choice, BudgetChoice::TooBig { tokens: measure(sizes.len() - 1).unwrap() }),
            }
        }
    }
}
