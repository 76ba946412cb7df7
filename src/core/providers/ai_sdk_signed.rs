//! The AI SDK's `providerOptions` for signed reasoning and Gemini's thought signatures, made
//! from a thread's own fields when no `aiSdk` kept the part's options (a thread written by
//! another importer, or by hand): the inverse of [`crate::convert`]'s AI SDK reasoning reader.
//!
//! | thread | part's `providerOptions` |
//! |---|---|
//! | reasoning of `anthropic` / `bedrock` | `{anthropic|bedrock: {signature?, redactedData?}}` |
//! | reasoning of `google` | `{google: {thoughtSignature}}` |
//! | reasoning of `openai` | `{openai: {itemId?, reasoningEncryptedContent?}}` |
//! | `thoughtSignature` on a message or call | `{google: {thoughtSignature}}` |

use super::reasoning::{Reasoning, Vendor};
use serde_json::{json, Map, Value};

/// The options a reasoning part gives back its signature in; `None` when nothing signed it.
pub fn reasoning_options(reasoning: &Reasoning<'_>) -> Option<Value> {
    let mut fields = Map::new();
    let mut put = |key: &str, value: Option<&str>| {
        if let Some(value) = value {
            fields.insert(key.to_owned(), Value::from(value));
        }
    };
    let key = match reasoning.vendor? {
        Vendor::Anthropic | Vendor::Bedrock => {
            put("signature", reasoning.signature);
            put("redactedData", reasoning.redacted_data);
            if reasoning.vendor == Some(Vendor::Anthropic) {
                "anthropic"
            } else {
                "bedrock"
            }
        }
        Vendor::Google => {
            put("thoughtSignature", reasoning.signature);
            "google"
        }
        Vendor::OpenAi => {
            put("itemId", reasoning.item_id);
            put("reasoningEncryptedContent", reasoning.encrypted_content);
            "openai"
        }
    };
    (!fields.is_empty()).then(|| Value::Object(Map::from_iter([(key.to_owned(), Value::Object(fields))])))
}

/// The options of a text or tool-call part that carries Gemini's signature.
pub fn thought_signature_options(signature: Option<&Value>) -> Option<Value> {
    let signature = signature?.as_str().filter(|s| !s.is_empty())?;
    Some(json!({"google": {"thoughtSignature": signature}}))
}

/// A reasoning part's text: its own, else its summary's (OpenAI's reasoning carries only that).
pub fn reasoning_text(reasoning: &Reasoning<'_>) -> String {
    match reasoning.text {
        Some(text) => text.to_owned(),
        None => reasoning.summary_texts().join("\n\n"),
    }
}
