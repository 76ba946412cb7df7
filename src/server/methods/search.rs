//! `thread/search`: events of every thread matching a query, best first, in pages.

use crate::server::errors::from_service;
use crate::server::table::{MethodTable, Policy};
use crate::server::wire::parse;
use crate::service::SearchOptions;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SearchParams {
    query: String,
    limit: Option<u64>,
    cursor: Option<String>,
    thread_ids: Option<Vec<String>>,
    types: Option<Vec<String>>,
    since: Option<f64>,
    until: Option<f64>,
}

pub(super) fn register(m: &mut MethodTable) {
    m.register("thread/search", Policy::SERVICE_READ, |params, ctx| async move {
        let p: SearchParams = parse(&params)?;
        let options = SearchOptions {
            // Out of usize's range is out of the limit's range: the service says which.
            limit: p.limit.map(|l| usize::try_from(l).unwrap_or(usize::MAX)),
            cursor: p.cursor,
            thread_ids: p.thread_ids,
            types: p.types,
            since: p.since,
            until: p.until,
        };
        ctx.service.search(&p.query, options).await.map_err(from_service)
    });
}
