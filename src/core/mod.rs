//! The pure core: the event model, every renderer and conversion, the turn documents. It does
//! no I/O and knows nothing of threads being kept, stores or the protocol; everything else in
//! the crate builds on it.
//!
//! - [`context`]: token counts, upstream's summarization rounds as a view of the log, budgets;
//! - [`event`]: events as hosts send them, validated;
//! - [`event_log`]: a thread's events as compact JSON in shared chunks, as threads hold them;
//! - [`xml`]: the `<thread>` document (seed 000), written and read back;
//! - [`messages`]: standard and XML context modes as LangChain messages (seeds 001, 002), valid
//!   for every provider;
//! - [`providers`]: those messages as OpenAI Chat / Responses and Anthropic request bodies;
//! - [`convert`]: the CLI-provider conversions (seed 003);
//! - [`turns`]: turn documents (seed 004) and the thread ↔ turn mapping;
//! - [`view`]: a thread as a self-contained HTML timeline;
//! - [`trace`]: a thread as OpenTelemetry GenAI spans (runs, model turns, tool calls);
//! - [`js_json`] and [`json_text`]: JSON written exactly as JavaScript writes it, and read as
//!   JavaScript hosts send it.

pub mod context;
pub mod convert;
pub mod event;
pub mod event_log;
pub mod js_json;
pub mod json_text;
pub mod media;
pub mod messages;
pub mod providers;
pub mod search;
pub mod trace;
pub mod turns;
pub mod view;
pub mod xml;
