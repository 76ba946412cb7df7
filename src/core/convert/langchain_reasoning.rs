//! Reasoning in LangChain AI messages (`messages/toEvents`): the content blocks of reasoning
//! become reasoning records, before the message's text and calls.
//!
//! | block | reasoning event |
//! |---|---|
//! | `{type: "thinking", thinking, signature}` (Anthropic's own) | `text`, `signature`; provider `anthropic` unless the message names another |
//! | `{type: "redacted_thinking", data}` (Anthropic's own) | `redactedData`; provider as above |
//! | `{type: "reasoning", reasoning, id?, extras?: {signature?, encrypted_content?}}` (v1 standard) | `text`, `signature`, `encryptedContent`, and for OpenAI `itemId` |
//!
//! The provider is `response_metadata.model_provider` (`anthropic`, `openai`, `google_genai` /
//! `google_vertexai`, `bedrock_converse` / `bedrock`), else the block's own kind (Anthropic's
//! thinking), else the family of the model (`response_metadata.model_name` / `model` /
//! `model_id`). A block whose provider none of these names is kept as a reasoning `turn_block`
//! (`payload: {text}`), which no provider replays. Text is kept byte for byte, empty included.
//!
//! With `keepBlockForms`, each record also keeps its block's form (`langchainBlock: {block,
//! at}`, the text's string emptied at the JSON pointer `at`), which the `messages` render puts
//! back first in the AI message ([`crate::messages::reasoning_blocks`]).

use crate::event::REASONING_EVENT_TYPE;
use crate::messages::block_forms::BLOCK_FORM_KEY;
use crate::providers::reasoning::{ModelFamily, Vendor};
use crate::turns::events::TURN_BLOCK_EVENT_TYPE;
use serde_json::{json, Map, Value};

/// The event fields (without stamps) of each reasoning block of `blocks`, in order; none for
/// content without reasoning blocks.
pub fn reasoning_events(
    blocks: &[Value],
    response_metadata: Option<&Value>,
    keep_forms: bool,
) -> Vec<Map<String, Value>> {
    let metadata = response_metadata.and_then(Value::as_object);
    let meta = |key: &str| metadata.and_then(|m| m.get(key)).and_then(Value::as_str).filter(|s| !s.is_empty());
    let named = meta("model_provider").and_then(provider_of_name);
    let model = meta("model_name").or_else(|| meta("model")).or_else(|| meta("model_id"));
    let by_model = model.and_then(|model| match ModelFamily::of(model) {
        ModelFamily::Claude => Some(Vendor::Anthropic),
        ModelFamily::Gemini => Some(Vendor::Google),
        ModelFamily::OpenAi => Some(Vendor::OpenAi),
        _ => None,
    });
    blocks
        .iter()
        .filter_map(|block| {
            let fields = block.as_object()?;
            let read = ReasoningBlock::of(fields)?;
            let vendor = named.or(read.own_vendor).or(by_model);
            let mut record = match vendor {
                Some(vendor) => read.event(vendor, model),
                None => read.turn_block(),
            };
            if keep_forms {
                let mut emptied = block.clone();
                if let Some(text) = emptied.pointer_mut(read.at) {
                    *text = Value::String(String::new());
                }
                let form = json!({"block": emptied, "at": read.at});
                match record.get_mut("block").and_then(Value::as_object_mut) {
                    Some(turn_block) => turn_block.insert(BLOCK_FORM_KEY.into(), form),
                    None => record.insert(BLOCK_FORM_KEY.into(), form),
                };
            }
            Some(record)
        })
        .collect()
}

/// The provider a LangChain `model_provider` names.
fn provider_of_name(name: &str) -> Option<Vendor> {
    match name {
        "anthropic" => Some(Vendor::Anthropic),
        "openai" | "azure_openai" => Some(Vendor::OpenAi),
        "google_genai" | "google_vertexai" | "google" => Some(Vendor::Google),
        "bedrock_converse" | "bedrock" | "amazon_bedrock" => Some(Vendor::Bedrock),
        _ => None,
    }
}

fn vendor_name(vendor: Vendor) -> &'static str {
    match vendor {
        Vendor::Anthropic => "anthropic",
        Vendor::OpenAi => "openai",
        Vendor::Google => "google",
        Vendor::Bedrock => "bedrock",
    }
}

/// What one reasoning block says.
struct ReasoningBlock<'a> {
    text: Option<&'a str>,
    signature: Option<&'a str>,
    redacted: Option<&'a str>,
    encrypted: Option<&'a str>,
    id: Option<&'a str>,
    /// The provider the block's kind belongs to (Anthropic's thinking blocks).
    own_vendor: Option<Vendor>,
    /// Where the block's text (or redacted data) stands.
    at: &'static str,
}

impl<'a> ReasoningBlock<'a> {
    fn of(fields: &'a Map<String, Value>) -> Option<Self> {
        let s = |value: Option<&'a Value>| value.and_then(Value::as_str);
        let extras = fields.get("extras").and_then(Value::as_object);
        let extra = |key: &str| s(extras.and_then(|e| e.get(key))).filter(|v| !v.is_empty());
        let none = ReasoningBlock {
            text: None,
            signature: None,
            redacted: None,
            encrypted: None,
            id: None,
            own_vendor: None,
            at: "",
        };
        match s(fields.get("type"))? {
            "thinking" => Some(ReasoningBlock {
                text: Some(s(fields.get("thinking"))?),
                signature: s(fields.get("signature")).filter(|v| !v.is_empty()),
                own_vendor: Some(Vendor::Anthropic),
                at: "/thinking",
                ..none
            }),
            "redacted_thinking" => Some(ReasoningBlock {
                redacted: Some(s(fields.get("data"))?),
                own_vendor: Some(Vendor::Anthropic),
                at: "/data",
                ..none
            }),
            "reasoning" => Some(ReasoningBlock {
                text: Some(s(fields.get("reasoning"))?),
                signature: extra("signature"),
                encrypted: extra("encrypted_content"),
                id: s(fields.get("id")).filter(|v| !v.is_empty()),
                at: "/reasoning",
                ..none
            }),
            _ => None,
        }
    }

    fn event(&self, vendor: Vendor, model: Option<&str>) -> Map<String, Value> {
        let mut event = Map::new();
        event.insert("type".into(), REASONING_EVENT_TYPE.into());
        event.insert("provider".into(), vendor_name(vendor).into());
        let item_id = self.id.filter(|_| vendor == Vendor::OpenAi);
        for (key, value) in [
            ("model", model),
            ("text", self.text),
            ("signature", self.signature),
            ("redactedData", self.redacted),
            ("encryptedContent", self.encrypted),
            ("itemId", item_id),
        ] {
            if let Some(value) = value {
                event.insert(key.into(), value.into());
            }
        }
        event
    }

    /// Reasoning no provider is named for: its text alone, as a reasoning turn block.
    fn turn_block(&self) -> Map<String, Value> {
        let payload = json!({"text": self.text.unwrap_or_default()});
        let block = json!({"kind": "reasoning", "payload": payload});
        Map::from_iter([("type".to_owned(), Value::from(TURN_BLOCK_EVENT_TYPE)), ("block".to_owned(), block)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_block_kind_names_its_provider_and_keeps_its_text() {
        let blocks = json!([
            {"type": "thinking", "thinking": "", "signature": "sig"},
            {"type": "text", "text": "not reasoning"},
            {"type": "redacted_thinking", "data": "red"},
            {"type": "reasoning", "reasoning": "plain ✓"},
        ]);
        let blocks = blocks.as_array().unwrap();
        let events = reasoning_events(blocks, None, false);
        assert_eq!(events.len(), 3);
        assert_eq!(
            Value::Object(events[0].clone()),
            json!({"type": "reasoning", "provider": "anthropic", "text": "", "signature": "sig"})
        );
        assert_eq!(events[1]["redactedData"], "red");
        assert_eq!(events[2]["type"], "turn_block");
        assert_eq!(events[2]["block"]["payload"]["text"], "plain ✓");
    }

    #[test]
    fn the_message_names_provider_and_model() {
        let blocks = json!([{"type": "reasoning", "reasoning": "r", "id": "rs_1", "extras": {"signature": "s"}}]);
        let meta = json!({"model_provider": "bedrock_converse", "model_name": "claude-x"});
        let events = reasoning_events(blocks.as_array().unwrap(), Some(&meta), true);
        assert_eq!(events[0]["provider"], "bedrock");
        assert_eq!(events[0]["model"], "claude-x");
        assert_eq!(events[0].get("itemId"), None);
        assert_eq!(
            events[0][BLOCK_FORM_KEY],
            json!({"block": {"type": "reasoning", "reasoning": "", "id": "rs_1", "extras": {"signature": "s"}}, "at": "/reasoning"})
        );
        let by_model = json!({"model": "gpt-5"});
        let events = reasoning_events(blocks.as_array().unwrap(), Some(&by_model), false);
        assert_eq!(events[0]["provider"], "openai");
        assert_eq!(events[0]["itemId"], "rs_1");
    }

    proptest::proptest! {
        /// Whatever the text and signature, the kept form gives the very block back, and the
        /// form holds no copy of the text.
        #[test]
        fn any_thinking_block_comes_back_from_its_kept_form(
            text in "\\PC{0,40}", signature in "[A-Za-z0-9+/=]{0,12}", kind in 0..3usize,
        ) {
            let block = match kind {
                0 => json!({"type": "thinking", "thinking": text, "signature": signature}),
                1 => json!({"type": "redacted_thinking", "data": text}),
                _ => json!({"type": "reasoning", "reasoning": text, "extras": {"signature": signature}}),
            };
            let meta = json!({"model_provider": "anthropic"});
            let events = reasoning_events(std::slice::from_ref(&block), Some(&meta), true);
            proptest::prop_assert_eq!(events.len(), 1);
            proptest::prop_assert_eq!(crate::messages::kept_block(&events[0]), Some(block));
            if text.chars().count() > 8 {
                let quoted = Value::from(text.clone()).to_string();
                proptest::prop_assert!(!events[0][BLOCK_FORM_KEY].to_string().contains(&quoted));
            }
        }
    }
}
