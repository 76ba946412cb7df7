//! One event of the compaction view: what the planners (upstream's and the rolling one) and the
//! view itself know of it, in a module of its own so that each can name it without the others.

/// One event of the view.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ViewItem {
    /// Where the event is in the log.
    pub position: usize,
    pub iteration: f64,
    pub is_summary: bool,
    /// Upstream's estimate of the event: `estimateTokens(JSON.stringify(event))`.
    pub upstream_tokens: u64,
    /// The round of a live rolling summary (see [`super::rolling`]).
    pub rolling_round: Option<u64>,
}
