//! `threadkeeper search QUERY`: the events of a store's threads that match a query, as
//! `threadId:eventIndex` lines with their snippets (`thread/search`'s hits, or its JSON with
//! `--json`). Matches are coloured only when stdout is a terminal and `NO_COLOR` is unset.

use clap::Args;
use std::io::IsTerminal;
use threadkeeper::search::snippet::{MARK_CLOSE, MARK_OPEN};
use threadkeeper::service::{Limits, SearchOptions, SearchResults, ThreadService};
use threadkeeper::store::{open_store, StoreSpec};

#[derive(Args, Debug)]
pub struct SearchArgs {
    /// Words, "quoted phrases", prefix* and -excluded terms (see `thread/search`). A query
    /// may start with an excluded term (`-staging deploy`) without `--` before it.
    #[arg(value_name = "QUERY", allow_hyphen_values = true)]
    query: String,
    /// The store to search (default: the default store of `serve`).
    #[arg(long, env = "THREADKEEPER_STORE", value_name = "STORE")]
    store: Option<StoreSpec>,
    /// Write `thread/search`'s result as JSON instead of lines.
    #[arg(long)]
    json: bool,
    /// Hits to show, 1 to 100.
    #[arg(long, value_name = "N", default_value_t = 20)]
    limit: usize,
}

pub fn run(args: SearchArgs) -> i32 {
    super::finish(search(&args))
}

fn search(args: &SearchArgs) -> Result<String, String> {
    let runtime = super::command_runtime()?;
    let spec = args.store.clone().unwrap_or_default();
    let results = runtime.block_on(async {
        let store = open_store(&spec, 1).await.map_err(|e| format!("cannot open the store {spec}: {e}"))?;
        let service = ThreadService::new(store, Limits::default());
        let options = SearchOptions { limit: Some(args.limit), ..Default::default() };
        service.search(&args.query, options).await.map_err(|e| e.to_string())
    })?;
    if args.json {
        return Ok(serde_json::to_string_pretty(&results).expect("results serialize") + "\n");
    }
    let colour = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    Ok(lines(&results, colour))
}

/// One line per hit: `threadId:eventIndex  snippet`, matches bold red on a terminal.
fn lines(results: &SearchResults, colour: bool) -> String {
    let mut out = String::new();
    for hit in &results.hits {
        let snippet = if colour {
            hit.snippet.replace(MARK_OPEN, "\x1b[1;31m").replace(MARK_CLOSE, "\x1b[0m")
        } else {
            hit.snippet.clone()
        };
        let place = format!("{}:{}", hit.thread_id, hit.event_index);
        let place = if colour { format!("\x1b[35m{place}\x1b[0m") } else { place };
        out.push_str(&format!("{place}\t{snippet}\n"));
    }
    out
}
