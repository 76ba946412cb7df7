//! Reasoning a model produced, and which render may give it back.
//!
//! A thread keeps reasoning in two forms, read here as one [`Reasoning`]:
//!
//! - a `reasoning` event: `{type: "reasoning", provider, model?, text?, signature?,
//!   redactedData?, encryptedContent?, itemId?, summary?}`;
//! - a `turn_block` event whose block is of kind `reasoning` (turn documents, and the
//!   importers): its `payload` holds `{text, signature}` (Anthropic's thinking, as the Claude
//!   Code importer keeps it), `{item_id, summary, encrypted_content}` (an OpenAI reasoning
//!   item) or `{text}` alone (reasoning no provider signed, which no provider replays).
//!
//! A provider takes back only what it produced: its signature or encrypted form is checked
//! against its own keys. So each render replays the reasoning of its own provider
//! ([`Vendor`]) and leaves the rest out; when the render names its model, reasoning a model of
//! another family produced is left out too ([`ModelFamily`]). `reasoning: "none"` leaves all
//! of it out.

use crate::event::REASONING_EVENT_TYPE;
use crate::turns::events::TURN_BLOCK_EVENT_TYPE;
use serde_json::{Map, Value};

/// Whose reasoning it is: the provider whose keys its signature or encrypted form answers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Vendor {
    Anthropic,
    OpenAi,
    Google,
    Bedrock,
}

impl Vendor {
    /// The vendor a reasoning event's `provider` names.
    pub fn from_name(name: &str) -> Option<Vendor> {
        match name {
            "anthropic" => Some(Vendor::Anthropic),
            "openai" => Some(Vendor::OpenAi),
            "google" => Some(Vendor::Google),
            "bedrock" => Some(Vendor::Bedrock),
            _ => None,
        }
    }
}

/// Model families, as far as replay cares: a signature minted for one family is not checked by
/// another. A model this table does not know is [`ModelFamily::Unknown`], which filters nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ModelFamily {
    #[default]
    Unknown,
    Claude,
    Gemini,
    /// OpenAI's reasoning models: `gpt-*`, `o1`, `o3`, `o4-*`, `codex-*`.
    OpenAi,
    /// Amazon's own models on Bedrock.
    Nova,
    DeepSeek,
}

impl ModelFamily {
    /// The family of a model id, Bedrock's forms included: `claude-opus-4-7`,
    /// `anthropic.claude-sonnet-4-5-20250929-v1:0`, `us.anthropic.claude-…`, `gemini-3-pro`,
    /// `models/gemini-2.5-flash`, `gpt-5`, `o3`, `amazon.nova-pro-v1:0`, `deepseek.r1-v1:0`.
    pub fn of(model: &str) -> ModelFamily {
        let model = model.to_ascii_lowercase();
        let model = model.rsplit('/').next().unwrap_or_default();
        // Bedrock ids put the vendor, and inference profiles a region, before the model's name.
        let named = |name: &str| model.starts_with(name) || model.contains(&format!(".{name}"));
        if named("claude") {
            ModelFamily::Claude
        } else if named("gemini") {
            ModelFamily::Gemini
        } else if named("gpt") || named("codex") || is_o_series(model) {
            ModelFamily::OpenAi
        } else if named("nova") {
            ModelFamily::Nova
        } else if named("deepseek") {
            ModelFamily::DeepSeek
        } else {
            ModelFamily::Unknown
        }
    }
}

/// `o1`, `o3-mini`, `o4-mini-high`: an `o` and a digit.
fn is_o_series(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next() == Some('o') && chars.next().is_some_and(|c| c.is_ascii_digit())
}

/// `options.reasoning`: give back what the provider requires, or nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningReplay {
    #[default]
    Auto,
    None,
}

/// Which reasoning a render gives back: `options.reasoning` and the family of `options.model`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Replay {
    pub reasoning: ReasoningReplay,
    pub model: ModelFamily,
}

impl Replay {
    /// The reasoning of `record` (a reasoning event, or a reasoning turn block's block), when a
    /// render for `vendor` gives it back.
    pub fn of<'a>(&self, record: &'a Map<String, Value>, vendor: Vendor) -> Option<Reasoning<'a>> {
        if self.reasoning == ReasoningReplay::None {
            return None;
        }
        let reasoning = Reasoning::of(record)?;
        let family = reasoning.model.map(ModelFamily::of).unwrap_or_default();
        let same_family = self.model == ModelFamily::Unknown || family == ModelFamily::Unknown || family == self.model;
        (reasoning.vendor == Some(vendor) && same_family).then_some(reasoning)
    }
}

/// One piece of reasoning, whichever form the thread keeps it in. Empty strings count as
/// absent except `text`: a signed block with empty text (Anthropic's `display: "omitted"`) is
/// a real block and goes back as it came.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Reasoning<'a> {
    /// `None` for reasoning no provider signed (an AI SDK reasoning part's text).
    pub vendor: Option<Vendor>,
    pub model: Option<&'a str>,
    pub text: Option<&'a str>,
    pub signature: Option<&'a str>,
    pub redacted_data: Option<&'a str>,
    pub encrypted_content: Option<&'a str>,
    pub item_id: Option<&'a str>,
    pub summary: Option<&'a Value>,
}

impl<'a> Reasoning<'a> {
    /// Reads a reasoning event's fields, or a reasoning turn block's block.
    pub fn of(record: &'a Map<String, Value>) -> Option<Reasoning<'a>> {
        if record.get("type").and_then(Value::as_str) == Some(REASONING_EVENT_TYPE) {
            return Some(Reasoning::of_event(record));
        }
        if record.get("kind").and_then(Value::as_str) == Some("reasoning") {
            return Some(Reasoning::of_block(record));
        }
        None
    }

    fn of_event(fields: &'a Map<String, Value>) -> Reasoning<'a> {
        Reasoning {
            vendor: fields.get("provider").and_then(Value::as_str).and_then(Vendor::from_name),
            model: non_empty(fields.get("model")),
            text: fields.get("text").and_then(Value::as_str),
            signature: non_empty(fields.get("signature")),
            redacted_data: non_empty(fields.get("redactedData")),
            encrypted_content: non_empty(fields.get("encryptedContent")),
            item_id: non_empty(fields.get("itemId")),
            summary: fields.get("summary"),
        }
    }

    /// A turn block's reasoning: whose it is follows from what its payload carries.
    fn of_block(block: &'a Map<String, Value>) -> Reasoning<'a> {
        let payload = block.get("payload").and_then(Value::as_object);
        let field = |key: &str| payload.and_then(|p| p.get(key));
        let encrypted_content = non_empty(field("encrypted_content"));
        let signature = non_empty(field("signature"));
        let redacted_data = non_empty(field("data"));
        let vendor = if encrypted_content.is_some() || non_empty(field("item_id")).is_some() {
            Some(Vendor::OpenAi)
        } else if signature.is_some() || redacted_data.is_some() {
            Some(Vendor::Anthropic)
        } else {
            None
        };
        Reasoning {
            vendor,
            model: non_empty(field("model")),
            text: field("text").and_then(Value::as_str),
            signature,
            redacted_data,
            encrypted_content,
            item_id: non_empty(field("item_id")).or_else(|| non_empty(block.get("id"))),
            summary: field("summary"),
        }
    }

    /// The summary's texts, non-empty ones, in order: `summary` is a string, or a list of
    /// strings or `{text}` parts as OpenAI returns it.
    pub fn summary_texts(&self) -> Vec<&'a str> {
        let texts: Vec<&'a str> = match self.summary {
            Some(Value::Array(parts)) => parts.iter().filter_map(summary_part).collect(),
            Some(single) => summary_part(single).into_iter().collect(),
            None => Vec::new(),
        };
        texts.into_iter().filter(|text| !text.is_empty()).collect()
    }
}

fn non_empty(value: Option<&Value>) -> Option<&str> {
    value.and_then(Value::as_str).filter(|s| !s.is_empty())
}

/// A summary part: a string, or an object with `text`.
fn summary_part(value: &Value) -> Option<&str> {
    match value {
        Value::String(text) => Some(text),
        Value::Object(part) => part.get("text").and_then(Value::as_str),
        _ => None,
    }
}

/// Whether an event's fields are a reasoning record a render may replay: a reasoning event,
/// or a `turn_block` whose block is of kind `reasoning`; gives the record [`Reasoning::of`] reads.
pub fn record_of(fields: &Map<String, Value>) -> Option<&Map<String, Value>> {
    match fields.get("type").and_then(Value::as_str)? {
        REASONING_EVENT_TYPE => Some(fields),
        TURN_BLOCK_EVENT_TYPE => {
            let block = fields.get("block")?.as_object()?;
            (block.get("kind")?.as_str()? == "reasoning").then_some(block)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn model_families_cover_the_providers_id_forms() {
        for (model, family) in [
            ("claude-opus-4-7", ModelFamily::Claude),
            ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", ModelFamily::Claude),
            ("gemini-3-pro-preview", ModelFamily::Gemini),
            ("models/gemini-2.5-flash", ModelFamily::Gemini),
            ("gpt-5", ModelFamily::OpenAi),
            ("o4-mini", ModelFamily::OpenAi),
            ("amazon.nova-pro-v1:0", ModelFamily::Nova),
            ("us.deepseek.r1-v1:0", ModelFamily::DeepSeek),
            ("llama-4", ModelFamily::Unknown),
            ("omni", ModelFamily::Unknown),
        ] {
            assert_eq!(ModelFamily::of(model), family, "{model}");
        }
    }

    #[test]
    fn turn_blocks_are_attributed_by_what_they_carry() {
        let claude = map(json!({"kind": "reasoning", "payload": {"text": "", "signature": "sig"}}));
        let openai = map(json!({"kind": "reasoning", "payload": {"item_id": "rs_1", "encrypted_content": "e"}}));
        let plain = map(json!({"kind": "reasoning", "payload": {"text": "hm"}}));
        assert_eq!(Reasoning::of(&claude).unwrap().vendor, Some(Vendor::Anthropic));
        assert_eq!(Reasoning::of(&claude).unwrap().text, Some(""));
        assert_eq!(Reasoning::of(&openai).unwrap().vendor, Some(Vendor::OpenAi));
        assert_eq!(Reasoning::of(&plain).unwrap().vendor, None);
    }

    #[test]
    fn replay_keeps_its_own_vendor_and_model_family() {
        let event =
            map(json!({"type": "reasoning", "provider": "anthropic", "model": "claude-sonnet-4-5", "signature": "s"}));
        let auto = Replay::default();
        assert!(auto.of(&event, Vendor::Anthropic).is_some());
        assert!(auto.of(&event, Vendor::Google).is_none());
        let opus = Replay { model: ModelFamily::of("claude-opus-4-7"), ..auto };
        assert!(opus.of(&event, Vendor::Anthropic).is_some());
        let gemini = Replay { model: ModelFamily::of("gemini-3-pro"), ..auto };
        assert!(gemini.of(&event, Vendor::Anthropic).is_none());
        let none = Replay { reasoning: ReasoningReplay::None, ..auto };
        assert!(none.of(&event, Vendor::Anthropic).is_none());
    }
}
