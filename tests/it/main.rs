//! Every integration test, in one binary: a change relinks once, not once per file.
//!
//! `cargo test --test it` runs them all; a module name filters, e.g.
//! `cargo test --test it providers::` or `cargo test --test it store_`.

#[macro_use]
mod support;
mod strategies;

mod adapter_reasoning;
mod ai_sdk;
mod big_documents;
mod caching;
mod cli;
mod context;
mod convert;
mod framing_props;
mod fresh_fork;
mod host_session_media;
mod host_sessions;
mod inverse;
mod keep_images;
mod kept_media;
mod langchain_reasoning;
mod mcp;
mod media;
mod media_renders;
mod messages;
mod prompt;
mod protocol;
mod providers;
mod pydantic_ai;
mod reasoning;
mod rolling;
mod rolling_props;
mod schemas;
mod store_conformance;
mod store_postgres;
mod store_postgres_search;
mod store_postgres_signal;
mod store_sqlite;
mod tracing;
mod transport;
mod turns_golden;
mod turns_props;
mod undo_branch;
mod vectors;
mod view;
mod viewer;
mod viewer_media;
mod xml_golden;
mod xml_props;
