//! Full-text search over threads, defined once for every store.
//!
//! - [`tokenize`]: how text becomes words (lowercased runs of Unicode letters and digits);
//! - [`query`]: the query language, its limits, and what a match means;
//! - [`text`]: what of an event is searched;
//! - [`snippet`]: the matching text with its matches marked;
//! - [`bm25`]: relevance for the stores that score in Rust (the memory store).
//!
//! Stores index the words [`tokenize`] yields (never their own parse of the text), and
//! translate a parsed [`query::Query`] into their engine's syntax from those words alone, so
//! a query means the same in every store and no user text reaches an engine's parser.

pub mod bm25;
pub mod query;
pub mod snippet;
pub mod text;
pub mod tokenize;

pub use query::{parse_query, Query, QueryError, Term, MAX_QUERY_CHARS, MAX_QUERY_TERMS};
pub use text::{searchable_text, SearchableEvent};
pub use tokenize::{tokens, words, Token, MAX_INDEXED_WORDS, MAX_WORD_BYTES};
