//! `threadkeeper mcp`: the store's threads for agents, over the Model Context Protocol (stdio).
//!
//! Built on the official Rust SDK (`rmcp`), which owns the wire: framing, the `initialize`
//! handshake and version negotiation for 2024-11-05 … 2025-11-25, `server/discover` and
//! per-request `_meta` for 2026-07-28. This module adds what is threadkeeper's own:
//!
//! - [`tools`]: `list_threads`, `read_thread`, `get_event`, `search_threads`
//!   (`thread/search`), and `import_session` (only with allowed directories);
//! - [`resources`]: each thread as `thread://{threadId}`;
//! - [`page`]: a thread's events rendered in pages that never pass a token budget, so a long
//!   thread cannot flood an agent's context;
//! - [`import_guard`]: which session files `import_session` may read.
//!
//! The server is read-only unless import is allowed; nothing else writes to the store.

pub mod cursor;
pub mod event_text;
pub mod import_guard;
pub mod listing;
pub mod page;
pub mod resources;
mod server;
pub mod tools;

pub use import_guard::AllowedDirs;
pub use server::{serve_stdio, McpServer};
