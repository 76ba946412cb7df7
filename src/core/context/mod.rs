//! Context-window management as deep-factor-agent does it, without ever rewriting the log.
//!
//! - [`estimate`]: upstream's token estimate, `ceil(length / 3.5)` with JavaScript's length;
//! - [`upstream`]: an event exactly as upstream holds it (`JSON.stringify` text), and the marker
//!   that tells a compaction round's summaries apart;
//! - [`view`]: the event list upstream would hold after its rewrites, rebuilt from the log;
//! - [`plan`]: which iterations upstream would summarize next, with its summarizer prompts;
//! - [`budget`]: which iterations a render leaves out to fit a token budget;
//! - [`rolling`]: the rolling strategy, whose summaries keep the prefix and merge to stay bounded;
//! - [`media_tokens`]: what media parts cost, by each provider's published rule.

pub mod bpe;
pub mod budget;
pub mod estimate;
pub mod media_tokens;
pub mod plan;
pub mod rolling;
pub mod tokenizer;
pub mod upstream;
pub mod view;
pub mod view_item;

pub use budget::{advance_cut, choose_dropped, drop_points, BudgetChoice, BudgetItem, CutStep, DropPoints};
pub use estimate::{estimate_from_len, estimate_tokens, utf16_len};
pub use media_tokens::MediaTokenRule;
pub use plan::{plan_compaction, summarizer_prompt, summary_event, CompactionPlan, IterationKey, PlannedIteration};
pub use tokenizer::Tokenizer;
pub use upstream::{
    compaction_marker, iteration_number, upstream_json, upstream_json_len, CompactionMarker, COMPACTION_FIELD,
};
pub use view::{CompactedView, ViewChange};
