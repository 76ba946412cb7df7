//! `thread/view` (issue 14): a thread as one self-contained HTML page.

use super::params::{render_args, Format, RenderOptionsParams};
use crate::server::cancel;
use crate::server::errors::{from_service, invalid_params};
use crate::server::table::{MethodTable, Policy};
use crate::server::wire::parse;
use jsonrpsee::types::ErrorObjectOwned;
use serde::{Deserialize, Serialize};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ViewParams {
    thread_id: String,
    #[serde(default)]
    options: Option<RenderOptionsParams>,
}

#[derive(Serialize)]
struct ViewResult {
    html: String,
}

pub(super) fn register(m: &mut MethodTable) {
    m.register("thread/view", Policy::THREAD_READ, |params, ctx| async move {
        let p: ViewParams = parse(&params)?;
        let options = p.options.unwrap_or_default();
        if options.budget.is_some() {
            return Err(invalid_params("options.budget", "applies to thread/render only"));
        }
        let (_, options) = render_args(Format::Xml, options)?;
        if options.from_event.is_some() {
            return Err(invalid_params("options.fromEvent", "applies to thread/render only"));
        }
        let html = ctx.service.view_page(&p.thread_id, options, &cancel::current()).await.map_err(from_service)?;
        Ok::<_, ErrorObjectOwned>(ViewResult { html })
    });
}
