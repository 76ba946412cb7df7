//! What an assistant event may carry about the model call that made it.
//!
//! Read from the event's own fields (`model`, `provider`, `usage: {inputTokens, outputTokens}`,
//! `finishReason`), else from the LangChain data `messages/toEvents` keeps in `messageFields`
//! (`response_metadata.model_name` / `model` / `model_provider` / `finish_reason` /
//! `stop_reason`, `usage_metadata.input_tokens` / `output_tokens`).

use serde_json::{Map, Value};

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Carried {
    pub model: Option<String>,
    pub provider: Option<String>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub finish_reason: Option<String>,
}

impl Carried {
    pub fn of(fields: &Map<String, Value>) -> Carried {
        let meta = fields.get("messageFields").and_then(Value::as_object);
        let response = meta.and_then(|m| m.get("response_metadata")).and_then(Value::as_object);
        let usage_metadata = meta.and_then(|m| m.get("usage_metadata")).and_then(Value::as_object);
        let usage = fields.get("usage").and_then(Value::as_object);
        let text = |map: Option<&Map<String, Value>>, key: &str| {
            map.and_then(|m| m.get(key)).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned)
        };
        let count = |map: Option<&Map<String, Value>>, keys: &[&str]| {
            keys.iter().find_map(|key| map.and_then(|m| m.get(*key)).and_then(Value::as_i64))
        };
        Carried {
            model: text(Some(fields), "model")
                .or_else(|| text(response, "model_name"))
                .or_else(|| text(response, "model")),
            provider: text(Some(fields), "provider").or_else(|| text(response, "model_provider")),
            input_tokens: count(usage, &["inputTokens", "input_tokens"])
                .or_else(|| count(usage_metadata, &["input_tokens"])),
            output_tokens: count(usage, &["outputTokens", "output_tokens"])
                .or_else(|| count(usage_metadata, &["output_tokens"])),
            finish_reason: text(Some(fields), "finishReason")
                .or_else(|| text(response, "finish_reason"))
                .or_else(|| text(response, "stop_reason")),
        }
    }

    /// Fills what this one lacks from `other` (the events of one turn describe one response:
    /// LangChain copies a message's data onto each event made from it, so nothing is summed).
    pub fn fill_from(&mut self, other: Carried) {
        self.model = self.model.take().or(other.model);
        self.provider = self.provider.take().or(other.provider);
        self.input_tokens = self.input_tokens.or(other.input_tokens);
        self.output_tokens = self.output_tokens.or(other.output_tokens);
        self.finish_reason = self.finish_reason.take().or(other.finish_reason);
    }
}
