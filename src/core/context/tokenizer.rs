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

    /// What a count of `text` adds up over pieces: its UTF-16 length for the estimate (which
    /// rounds only the total), its tokens for a BPE. The measures of pieces that the BPE's
    /// pretokenizer splits apart anyway (whole `<event>` lines) add up to the measure of their
    /// concatenation, so counts can be kept per piece.
    pub fn measure(self, text: &str) -> u64 {
        match self {
            Tokenizer::Estimate => super::estimate::utf16_len(text),
            _ => self.count(text),
        }
    }

    /// The tokens of text whose pieces' measures add up to `measure`.
    pub fn tokens_of_measure(self, measure: u64) -> u64 {
        match self {
            Tokenizer::Estimate => super::estimate::estimate_from_len(measure),
            _ => measure,
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
