//! Context-window methods (issue 13): `thread/tokens`, `thread/planCompaction`,
//! `thread/compact` (`thread/render`'s `budget` option is in `render`). The two compaction
//! methods serve upstream's strategy here and the rolling one in [`rolling`], chosen by
//! their `strategy` param.

mod rolling;

use super::params::{render_args, Format, RenderOptionsParams};
use crate::context::Tokenizer;
use crate::server::cancel;
use crate::server::errors::from_service;
use crate::server::errors::invalid_params;
use crate::server::table::{MethodTable, Policy};
use crate::server::wire::parse;
use jsonrpsee::types::ErrorObjectOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Number};

type RpcResult<T> = Result<T, ErrorObjectOwned>;

/// Upstream's defaults (deep-factor-agent's `ContextManager`).
const DEFAULT_MAX_CONTEXT_TOKENS: u64 = 150_000;
const DEFAULT_KEEP_RECENT_ITERATIONS: u64 = 3;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct TokensParams {
    thread_id: String,
    #[serde(default)]
    format: Format,
    #[serde(default)]
    options: Option<RenderOptionsParams>,
    #[serde(default)]
    tokenizer: Tokenizer,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PlanParams {
    thread_id: String,
    #[serde(default, rename = "strategy")]
    _strategy: UpstreamTag,
    #[serde(default = "default_max_context_tokens")]
    max_context_tokens: u64,
    #[serde(default = "default_keep_recent_iterations")]
    keep_recent_iterations: u64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CompactParams {
    thread_id: String,
    #[serde(default, rename = "strategy")]
    _strategy: UpstreamTag,
    summaries: Vec<SummaryParams>,
    #[serde(default = "default_keep_recent_iterations")]
    keep_recent_iterations: u64,
    expected_version: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SummaryParams {
    iteration: Number,
    summary: String,
}

/// `strategy: "upstream"`, the default.
#[derive(Deserialize, Default)]
enum UpstreamTag {
    #[default]
    #[serde(rename = "upstream")]
    Upstream,
}

/// The compaction strategy a request names.
enum Strategy {
    Upstream,
    Rolling,
}

/// Reads `strategy` alone (the rest is read by the strategy's own params).
fn strategy(params: &jsonrpsee::types::Params<'_>) -> RpcResult<Strategy> {
    #[derive(Deserialize)]
    struct Only {
        strategy: Option<serde_json::Value>,
    }
    let only: Only = parse(params)?;
    match only.strategy {
        None => Ok(Strategy::Upstream),
        Some(serde_json::Value::String(name)) if name == "upstream" => Ok(Strategy::Upstream),
        Some(serde_json::Value::String(name)) if name == "rolling" => Ok(Strategy::Rolling),
        Some(other) => Err(invalid_params("strategy", &format!("expected \"upstream\" or \"rolling\", found {other}"))),
    }
}

fn default_max_context_tokens() -> u64 {
    DEFAULT_MAX_CONTEXT_TOKENS
}

fn default_keep_recent_iterations() -> u64 {
    DEFAULT_KEEP_RECENT_ITERATIONS
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct IterationTokens {
    iteration: Number,
    tokens: u64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TokensResult {
    tokens: u64,
    tokenizer: &'static str,
    by_iteration: Vec<IterationTokens>,
}

#[derive(Serialize)]
struct PlannedPrompt {
    iteration: Number,
    prompt: String,
}

#[derive(Serialize)]
struct PlanResult {
    needed: bool,
    tokens: u64,
    iterations: Vec<PlannedPrompt>,
}

pub(super) fn register(m: &mut MethodTable) {
    m.register("thread/tokens", Policy::THREAD_READ, |params, ctx| async move {
        let p: TokensParams = parse(&params)?;
        let options = p.options.unwrap_or_default();
        if options.budget.is_some() {
            return Err(crate::server::errors::invalid_params("options.budget", "applies to thread/render only"));
        }
        let (format, options) = render_args(p.format, options)?;
        let count = ctx
            .service
            .tokens(&p.thread_id, format, options, p.tokenizer, &cancel::current())
            .await
            .map_err(from_service)?;
        RpcResult::Ok(TokensResult {
            tokens: count.tokens,
            tokenizer: count.tokenizer.name(),
            by_iteration: count
                .by_iteration
                .into_iter()
                .map(|(iteration, tokens)| IterationTokens { iteration, tokens })
                .collect(),
        })
    });

    m.register("thread/planCompaction", Policy::THREAD_READ, |params, ctx| async move {
        if let Strategy::Rolling = strategy(&params)? {
            return rolling::plan(&params, &ctx).await;
        }
        let p: PlanParams = parse(&params)?;
        let plan = ctx
            .service
            .plan_compaction(&p.thread_id, p.max_context_tokens, p.keep_recent_iterations as f64)
            .await
            .map_err(from_service)?;
        let result = PlanResult {
            needed: plan.needed,
            tokens: plan.tokens,
            iterations: plan
                .iterations
                .into_iter()
                .map(|(iteration, prompt)| PlannedPrompt { iteration, prompt })
                .collect(),
        };
        RpcResult::Ok(serde_json::to_value(result).expect("a plan serializes"))
    });

    m.register("thread/compact", Policy::THREAD_WRITE, |params, ctx| async move {
        if let Strategy::Rolling = strategy(&params)? {
            return rolling::compact(&params, &ctx).await;
        }
        let p: CompactParams = parse(&params)?;
        let summaries = p.summaries.into_iter().map(|s| (s.iteration.as_f64().unwrap_or(0.0), s.summary)).collect();
        let record = ctx
            .service
            .compact(&p.thread_id, summaries, p.keep_recent_iterations as f64, p.expected_version)
            .await
            .map_err(from_service)?;
        RpcResult::Ok(json!({
            "threadId": record.thread_id,
            "version": record.version,
            "eventCount": record.event_count,
        }))
    });
}
