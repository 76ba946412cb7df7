//! `thread/planCompaction` and `thread/compact` with `strategy: "rolling"`: params, checks and
//! result shapes (the strategy itself is [`crate::context::rolling`]).

use super::super::params::{render_args, Format, RenderOptionsParams};
use super::RpcResult;
use crate::context::{iteration_number, Tokenizer};
use crate::server::cancel;
use crate::server::errors::{from_service, invalid_params};
use crate::server::table::Context;
use crate::server::wire::parse;
use crate::service::{PlannedStep, RollingBudget, RollingStep};
use jsonrpsee::types::Params;
use serde::Deserialize;
use serde_json::{json, Number, Value};

/// `strategy: "rolling"`.
#[derive(Deserialize)]
enum RollingTag {
    #[serde(rename = "rolling")]
    Rolling,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PlanParams {
    thread_id: String,
    #[serde(rename = "strategy")]
    _strategy: RollingTag,
    max_tokens: u64,
    compact_to: u64,
    summary_tokens: Option<u64>,
    #[serde(default)]
    format: Format,
    #[serde(default)]
    options: Option<RenderOptionsParams>,
    #[serde(default)]
    tokenizer: Tokenizer,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CompactParams {
    thread_id: String,
    #[serde(rename = "strategy")]
    _strategy: RollingTag,
    step: StepParams,
    summary: String,
    expected_version: Option<u64>,
}

/// A step as `thread/planCompaction` answered it; its `prompt` is not needed back.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StepParams {
    kind: StepKind,
    iterations: Option<[Number; 2]>,
    rounds: Option<Vec<u64>>,
    #[serde(rename = "prompt")]
    _prompt: Option<String>,
    /// Echoed from the plan, not needed back.
    #[serde(rename = "media")]
    _media: Option<Value>,
    version: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum StepKind {
    Summarize,
    Merge,
}

pub(super) async fn plan(params: &Params<'static>, ctx: &Context) -> RpcResult<Value> {
    let p: PlanParams = parse(params)?;
    if p.compact_to > p.max_tokens {
        let reason = format!("{} is more than maxTokens ({})", p.compact_to, p.max_tokens);
        return Err(invalid_params("compactTo", &reason));
    }
    let options = p.options.unwrap_or_default();
    if options.budget.is_some() {
        return Err(invalid_params("options.budget", "applies to thread/render only"));
    }
    let (format, options) = render_args(p.format, options)?;
    if options.from_event.is_some() {
        return Err(invalid_params("options.fromEvent", "a plan measures whole renderings; leave it out"));
    }
    let budget = RollingBudget {
        max_tokens: p.max_tokens,
        compact_to: p.compact_to,
        summary_tokens: p.summary_tokens,
        tokenizer: p.tokenizer,
        format,
        options,
    };
    let plan = ctx.service.plan_rolling(&p.thread_id, budget, &cancel::current()).await.map_err(from_service)?;
    let mut result = json!({
        "strategy": "rolling",
        "needed": plan.needed,
        "tokens": plan.tokens,
        "version": plan.version,
        "summaryTokens": plan.summary_tokens,
    });
    if let Some(step) = plan.step {
        result["step"] = step_json(step, plan.version);
    }
    Ok(result)
}

fn step_json(planned: PlannedStep, version: u64) -> Value {
    let mut step = match planned.step {
        RollingStep::Summarize { first, last } => json!({
            "kind": "summarize",
            "iterations": [iteration_number(first), iteration_number(last)],
            "prompt": planned.prompt,
            "version": version,
        }),
        RollingStep::Merge { rounds } => json!({
            "kind": "merge",
            "rounds": rounds,
            "prompt": planned.prompt,
            "version": version,
        }),
    };
    // Only threads with media get the list, so other plans keep their bytes.
    if !planned.media.is_empty() {
        step["media"] = Value::Array(planned.media);
    }
    step
}

pub(super) async fn compact(params: &Params<'static>, ctx: &Context) -> RpcResult<Value> {
    let p: CompactParams = parse(params)?;
    let expected_version = match (p.step.version, p.expected_version) {
        (Some(planned), Some(expected)) if planned != expected => {
            let reason = format!("the step was planned on version {planned}, but expectedVersion is {expected}");
            return Err(invalid_params("step.version", &reason));
        }
        (planned, expected) => planned.or(expected),
    };
    let step = match (p.step.kind, p.step.iterations, p.step.rounds) {
        (StepKind::Summarize, Some([first, last]), None) => {
            let (first, last) = (first.as_f64().unwrap_or(0.0), last.as_f64().unwrap_or(0.0));
            if first > last {
                return Err(invalid_params("step.iterations", "expected [first, last] with first <= last"));
            }
            RollingStep::Summarize { first, last }
        }
        (StepKind::Summarize, None, _) => return Err(invalid_params("step.iterations", "missing")),
        (StepKind::Summarize, Some(_), Some(_)) => {
            return Err(invalid_params("step.rounds", "a summarize step names iterations, not rounds"))
        }
        (StepKind::Merge, None, Some(rounds)) => RollingStep::Merge { rounds },
        (StepKind::Merge, _, None) => return Err(invalid_params("step.rounds", "missing")),
        (StepKind::Merge, Some(_), Some(_)) => {
            return Err(invalid_params("step.iterations", "a merge step names rounds, not iterations"))
        }
    };
    let (record, round) =
        ctx.service.compact_rolling(&p.thread_id, step, &p.summary, expected_version).await.map_err(from_service)?;
    Ok(json!({
        "threadId": record.thread_id,
        "version": record.version,
        "eventCount": record.event_count,
        "round": round,
    }))
}
