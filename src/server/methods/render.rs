//! A render's result, shared by `thread/render` and its `budget` option.

use super::params::{render_args, BudgetParams, Format, RenderOptionsParams};
use crate::server::cancel;
use crate::server::errors::from_service;
use crate::server::table::Context;
use crate::service::{Budget, BudgetedRender, Rendered};
use jsonrpsee::types::ErrorObjectOwned;
use serde::Serialize;
use serde_json::value::RawValue;
use std::sync::Arc;

type RpcResult<T> = Result<T, ErrorObjectOwned>;

/// A render's result as JSON text: what the renderer wrote is spliced in, never parsed into a
/// tree or copied message by message.
pub(super) fn render_result(rendered: Rendered) -> Box<RawValue> {
    let text = match rendered {
        Rendered::Xml { version, text } => to_json(&json_shapes::Text { format: "xml", version, text: &text }),
        Rendered::Text { version, text } => to_json(&json_shapes::Text { format: "text", version, text: &text }),
        Rendered::XmlDelta { version, event_count, from_event, lines, tail } => to_json(&json_shapes::XmlDelta {
            format: "xml",
            version,
            event_count,
            from_event,
            lines: &lines,
            tail: &tail,
        }),
        Rendered::Messages { version, context_mode, json } => {
            format!(
                r#"{{"format":"messages","version":{version},"contextMode":"{}","messages":{json}}}"#,
                context_mode.as_str()
            )
        }
        Rendered::Provider { version, context_mode, provider, json } => {
            let fields = json.strip_prefix('{').expect("a request body is a JSON object");
            format!(
                r#"{{"format":"{}","version":{version},"contextMode":"{}",{fields}"#,
                provider.name(),
                context_mode.as_str()
            )
        }
    };
    RawValue::from_string(text).expect("renderers write JSON")
}

fn to_json(value: &impl Serialize) -> String {
    serde_json::to_string(value).expect("results serialize")
}

/// `thread/render` with `options.budget`: the render's result plus what was dropped to fit.
pub(super) async fn render_within_budget(
    ctx: &Arc<Context>,
    thread_id: String,
    format: Format,
    options: RenderOptionsParams,
    budget: BudgetParams,
) -> RpcResult<Box<RawValue>> {
    let (format, options) = render_args(format, options)?;
    if let Some(drop_to) = budget.drop_to.filter(|&drop_to| drop_to > budget.max_tokens) {
        let reason = format!("{drop_to} is more than maxTokens ({})", budget.max_tokens);
        return Err(crate::server::errors::invalid_params("options.budget.dropTo", &reason));
    }
    let budget = Budget { max_tokens: budget.max_tokens, tokenizer: budget.tokenizer, drop_to: budget.drop_to };
    let BudgetedRender { rendered, dropped, tokens } = ctx
        .service
        .render_within_budget(&thread_id, format, options, budget, &cancel::current())
        .await
        .map_err(from_service)?;
    let body = render_result(rendered);
    let fields = body.get().strip_suffix('}').expect("a render's result is a JSON object");
    let dropped = serde_json::to_string(&dropped).expect("numbers serialize");
    let text = format!(r#"{fields},"dropped":{{"iterations":{dropped}}},"tokens":{tokens}}}"#);
    Ok(RawValue::from_string(text).expect("spliced JSON stays JSON"))
}

/// Result shapes serialized straight from borrowed text.
mod json_shapes {
    use serde::Serialize;

    #[derive(Serialize)]
    pub struct Text<'a> {
        pub format: &'static str,
        pub version: u64,
        pub text: &'a str,
    }

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct XmlDelta<'a> {
        pub format: &'static str,
        pub version: u64,
        pub event_count: u64,
        pub from_event: u64,
        pub lines: &'a str,
        pub tail: &'a str,
    }
}
