//! `threadkeeper mcp`: the store's threads for agents, over MCP on stdin/stdout.

use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;
use threadkeeper::mcp::{serve_stdio, AllowedDirs, McpServer};
use threadkeeper::service::{Limits, ThreadService};
use threadkeeper::store::{open_store_with, PostgresOptions, StoreSpec};

#[derive(Args, Debug)]
pub struct McpArgs {
    /// Where threads live, as `serve` takes it: `memory`, `sqlite` (the default database),
    /// `sqlite:PATH`, or `postgres://USER@HOST/DATABASE`.
    #[arg(long, env = "THREADKEEPER_STORE", value_name = "STORE")]
    store: Option<StoreSpec>,
    /// Let agents import host session files (the `import_session` tool) from this directory
    /// and below; repeatable. Without it the server never writes to the store.
    #[arg(long = "allow-import", value_name = "DIR")]
    allow_import: Vec<PathBuf>,
    /// Most threads held in memory (the least recently read are let go).
    #[arg(long, default_value_t = Limits::default().max_threads_in_memory, value_name = "N")]
    max_threads_in_memory: usize,
    /// Log filter for stderr, e.g. `info` or `threadkeeper=debug` (overrides RUST_LOG).
    #[arg(long, value_name = "FILTER")]
    log_level: Option<String>,
}

pub fn run(args: McpArgs) -> i32 {
    // stdout carries MCP messages only: logs go to stderr.
    super::serve::init_logging(args.log_level.as_deref());
    let allowed = match AllowedDirs::new(&args.allow_import) {
        Ok(allowed) => allowed,
        Err(reason) => {
            eprintln!("threadkeeper: {reason}");
            return 2;
        }
    };
    let runtime = match super::serving_runtime() {
        Ok(runtime) => runtime,
        Err(message) => {
            eprintln!("threadkeeper: {message}");
            return 1;
        }
    };
    let spec = args.store.unwrap_or_default();
    let limits = Limits { max_threads_in_memory: args.max_threads_in_memory, ..Limits::default() };
    let status = runtime.block_on(async {
        let store = match open_store_with(&spec, limits.max_threads_in_memory as u64, PostgresOptions::default()).await
        {
            Ok(store) => store,
            Err(e) => {
                eprintln!("threadkeeper: {}", super::cannot_open_store(&spec, e));
                return 2;
            }
        };
        tracing::info!(store = %spec, imports = !allowed.is_empty(), "MCP server ready");
        let server = McpServer::new(Arc::new(ThreadService::new(store, limits)), allowed);
        match serve_stdio(server).await {
            Ok(()) => 0,
            Err(reason) => {
                eprintln!("threadkeeper: mcp: {reason}");
                1
            }
        }
    });
    // Blocking work still running (a page being rendered) must not hold the exit up.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    status
}
