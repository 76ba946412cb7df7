//! The tokenizers a count can use.

use super::estimate::estimate_tokens;
use serde::Deserialize;

/// How tokens are counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
pub enum Tokenizer {
    /// Upstream's `ceil(length / 3.5)`, length in UTF-16 code units.
    #[default]
    #[serde(rename = "estimate")]
    Estimate,
    /// OpenAI's `o200k_base` BPE (GPT-4o and later).
    #[serde(rename = "o200k_base")]
    O200kBase,
    /// OpenAI's `cl100k_base` BPE (GPT-4, GPT-3.5).
    #[serde(rename = "cl100k_base")]
    Cl100kBase,
}

impl Tokenizer {
    pub fn name(self) -> &'static str {
        match self {
            Tokenizer::Estimate => "estimate",
            Tokenizer::O200kBase => "o200k_base",
            Tokenizer::Cl100kBase => "cl100k_base",
        }
    }

    /// The tokens of `text`.
    pub fn count(self, text: &str) -> u64 {
        match self {
            Tokenizer::Estimate => estimate_tokens(text),
            Tokenizer::O200kBase => super::bpe::o200k_count(text),
            Tokenizer::Cl100kBase => super::bpe::cl100k_count(text),
        }
    }
}
