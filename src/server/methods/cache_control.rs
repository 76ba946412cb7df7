//! `options.cacheControl` of a render: Anthropic's breakpoints, or OpenAI's key, breakpoints
//! and options, each read for the formats it applies to.

use crate::providers::anthropic::{self, CacheTtl};
use crate::providers::openai_cache::{self, Breakpoints, CacheKey, Caching, Ttl, MAX_KEY_BYTES};
use crate::providers::{bedrock_converse, ProviderOptions};
use crate::server::errors::invalid_params;
use jsonrpsee::types::ErrorObjectOwned;
use serde_json::{Map, Value};

type RpcResult<T> = Result<T, ErrorObjectOwned>;

const PATH: &str = "options.cacheControl";

/// Which provider's caching a format's `cacheControl` means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum CacheFormat {
    Anthropic,
    OpenAi,
    /// `bedrock-converse`: `"none"` or `"auto"` (cache points).
    Bedrock,
    /// A format no provider caches: any `cacheControl` is refused.
    Other,
}

/// The provider options `value` asks for, for a render of `format`.
pub(super) fn provider_options(format: CacheFormat, value: Option<&Value>) -> RpcResult<ProviderOptions> {
    let Some(value) = value else { return Ok(ProviderOptions::default()) };
    match format {
        CacheFormat::Anthropic => Ok(ProviderOptions { cache_control: anthropic(value)?, ..Default::default() }),
        CacheFormat::OpenAi => Ok(ProviderOptions { openai_cache: openai(value)?, ..Default::default() }),
        CacheFormat::Bedrock => Ok(ProviderOptions { bedrock_cache: bedrock(value)?, ..Default::default() }),
        CacheFormat::Other => Err(invalid_params(
            PATH,
            "applies to formats \"anthropic\", \"openai-chat\", \"openai-responses\" and \"bedrock-converse\" only",
        )),
    }
}

/// `"none"` or `"auto"`.
fn bedrock(value: &Value) -> RpcResult<bedrock_converse::CacheControl> {
    match value {
        Value::String(name) if name == "none" => Ok(bedrock_converse::CacheControl::None),
        Value::String(name) if name == "auto" => Ok(bedrock_converse::CacheControl::Auto),
        other => Err(invalid_params(PATH, &format!("expected \"none\" or \"auto\", found {other}"))),
    }
}

/// `"none"`, `"auto"`, or `{"ttl": "5m" | "1h"}` (auto with that TTL).
fn anthropic(value: &Value) -> RpcResult<anthropic::CacheControl> {
    const EXPECTED: &str = "expected \"none\", \"auto\" or {\"ttl\": \"5m\" | \"1h\"}";
    match value {
        Value::String(name) if name == "none" => Ok(anthropic::CacheControl::None),
        Value::String(name) if name == "auto" => Ok(anthropic::CacheControl::Auto { ttl: None }),
        Value::Object(fields) => {
            if let Some(key) = fields.keys().find(|key| *key != "ttl") {
                return Err(invalid_params(&format!("{PATH}.{key}"), "unknown field; expected ttl"));
            }
            let ttl = match fields.get("ttl") {
                Some(Value::String(ttl)) if ttl == "5m" => CacheTtl::FiveMinutes,
                Some(Value::String(ttl)) if ttl == "1h" => CacheTtl::OneHour,
                Some(other) => {
                    let reason = format!("expected \"5m\" or \"1h\", found {other}");
                    return Err(invalid_params(&format!("{PATH}.ttl"), &reason));
                }
                None => return Err(invalid_params(&format!("{PATH}.ttl"), "missing")),
            };
            Ok(anthropic::CacheControl::Auto { ttl: Some(ttl) })
        }
        other => Err(invalid_params(PATH, &format!("{EXPECTED}, found {other}"))),
    }
}

/// `"none"`, `"auto"`, or `{key?, breakpoints?, ttl?}` (auto with those parts overridden).
fn openai(value: &Value) -> RpcResult<openai_cache::CacheControl> {
    const EXPECTED: &str =
        "expected \"none\", \"auto\" or {\"key\"?, \"breakpoints\"?: \"explicit\" | \"implicit\" | \"none\", \"ttl\"?: \"30m\"}";
    let auto = Caching { key: None, breakpoints: Breakpoints::Auto, ttl: None };
    match value {
        Value::String(name) if name == "none" => Ok(openai_cache::CacheControl::None),
        Value::String(name) if name == "auto" => Ok(openai_cache::CacheControl::On(auto)),
        Value::Object(fields) => openai_object(fields, auto).map(openai_cache::CacheControl::On),
        other => Err(invalid_params(PATH, &format!("{EXPECTED}, found {other}"))),
    }
}

fn openai_object(fields: &Map<String, Value>, mut caching: Caching) -> RpcResult<Caching> {
    if let Some(key) = fields.keys().find(|key| !matches!(key.as_str(), "key" | "breakpoints" | "ttl")) {
        return Err(invalid_params(&format!("{PATH}.{key}"), "unknown field; expected key, breakpoints or ttl"));
    }
    if let Some(key) = fields.get("key") {
        let text = key.as_str().unwrap_or_default();
        caching.key = Some(CacheKey::new(text).ok_or_else(|| {
            let reason = format!("expected a string of 1 to {MAX_KEY_BYTES} bytes, found {}", brief(key));
            invalid_params(&format!("{PATH}.key"), &reason)
        })?);
    }
    if let Some(breakpoints) = fields.get("breakpoints") {
        caching.breakpoints = match breakpoints.as_str() {
            Some("explicit") => Breakpoints::Explicit,
            Some("implicit") => Breakpoints::Implicit,
            Some("none") => Breakpoints::None,
            _ => {
                let reason = format!("expected \"explicit\", \"implicit\" or \"none\", found {breakpoints}");
                return Err(invalid_params(&format!("{PATH}.breakpoints"), &reason));
            }
        };
    }
    if let Some(ttl) = fields.get("ttl") {
        caching.ttl = Some(match ttl.as_str() {
            Some("30m") => Ttl::ThirtyMinutes,
            _ => {
                return Err(invalid_params(
                    &format!("{PATH}.ttl"),
                    &format!("expected \"30m\" (the one request TTL OpenAI takes), found {ttl}"),
                ))
            }
        });
        if caching.breakpoints == Breakpoints::None {
            let reason = "is sent in prompt_cache_options, which breakpoints \"none\" leaves out (models before GPT-5.6 take prompt_cache_retention instead)";
            return Err(invalid_params(&format!("{PATH}.ttl"), reason));
        }
    }
    Ok(caching)
}

/// A value as an error message shows it: short strings whole, anything long cut.
fn brief(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(80) {
        Some((at, _)) => format!("{}… ({} bytes)", &text[..at], text.len()),
        None => text,
    }
}
