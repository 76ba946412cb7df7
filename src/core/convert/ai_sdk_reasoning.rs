//! Signed reasoning in AI SDK parts: which provider signed a `reasoning` part, read from its
//! `providerOptions`, and Gemini's `thoughtSignature` on text and tool-call parts.
//!
//! | `providerOptions` key | fields | reasoning event |
//! |---|---|---|
//! | `anthropic` | `signature`, `redactedData` | `provider: "anthropic"`, `signature`, `redactedData` |
//! | `bedrock` / `amazonBedrock` | `signature`, `redactedData` | `provider: "bedrock"`, same |
//! | `google` / `vertex` | `thoughtSignature` | `provider: "google"`, `signature` |
//! | `openai` | `itemId`, `reasoningEncryptedContent` | `provider: "openai"`, `itemId`, `encryptedContent` |
//!
//! A reasoning part none of these signed stays a `turn_block` (no provider replays it).

use serde_json::{Map, Value};

/// The reasoning event fields of a signed reasoning part (`provider` and what it signed), or
/// `None` when no provider signed it.
pub fn signed_reasoning(provider_options: Option<&Value>) -> Option<Map<String, Value>> {
    let options = provider_options?.as_object()?;
    let text = |fields: &Map<String, Value>, key: &str| {
        fields.get(key).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_owned)
    };
    let mut out = Map::new();
    for (key, provider) in [("anthropic", "anthropic"), ("bedrock", "bedrock"), ("amazonBedrock", "bedrock")] {
        let Some(fields) = options.get(key).and_then(Value::as_object) else { continue };
        let signature = text(fields, "signature");
        let redacted = text(fields, "redactedData");
        if signature.is_none() && redacted.is_none() {
            continue;
        }
        out.insert("provider".into(), provider.into());
        out.extend(signature.map(|s| ("signature".to_owned(), Value::String(s))));
        out.extend(redacted.map(|r| ("redactedData".to_owned(), Value::String(r))));
        return Some(out);
    }
    if let Some(signature) = thought_signature(provider_options) {
        out.insert("provider".into(), "google".into());
        out.insert("signature".into(), signature.into());
        return Some(out);
    }
    let openai = options.get("openai").and_then(Value::as_object)?;
    let encrypted = text(openai, "reasoningEncryptedContent");
    let item_id = text(openai, "itemId");
    if encrypted.is_none() && item_id.is_none() {
        return None;
    }
    out.insert("provider".into(), "openai".into());
    out.extend(encrypted.map(|e| ("encryptedContent".to_owned(), Value::String(e))));
    out.extend(item_id.map(|i| ("itemId".to_owned(), Value::String(i))));
    Some(out)
}

/// Gemini's signature of a part (`google`, or `vertex` for Vertex AI), when it has one.
pub fn thought_signature(provider_options: Option<&Value>) -> Option<&str> {
    let options = provider_options?.as_object()?;
    ["google", "vertex"]
        .into_iter()
        .find_map(|key| options.get(key)?.get("thoughtSignature")?.as_str().filter(|s| !s.is_empty()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_providers_signature_names_its_provider() {
        let of = |options: Value| signed_reasoning(Some(&options)).map(Value::Object);
        assert_eq!(
            of(json!({"anthropic": {"signature": "s"}})),
            Some(json!({"provider": "anthropic", "signature": "s"}))
        );
        assert_eq!(
            of(json!({"anthropic": {"redactedData": "r"}})),
            Some(json!({"provider": "anthropic", "redactedData": "r"}))
        );
        assert_eq!(
            of(json!({"amazonBedrock": {"signature": "b"}})),
            Some(json!({"provider": "bedrock", "signature": "b"}))
        );
        assert_eq!(
            of(json!({"bedrock": {"redactedData": "x"}})),
            Some(json!({"provider": "bedrock", "redactedData": "x"}))
        );
        assert_eq!(
            of(json!({"google": {"thoughtSignature": "g"}})),
            Some(json!({"provider": "google", "signature": "g"}))
        );
        assert_eq!(
            of(json!({"openai": {"itemId": "rs_1", "reasoningEncryptedContent": "e"}})),
            Some(json!({"provider": "openai", "encryptedContent": "e", "itemId": "rs_1"}))
        );
        assert_eq!(of(json!({"anthropic": {"cacheControl": {}}})), None);
        assert_eq!(signed_reasoning(None), None);
    }
}
