//! Providers' documented prompt-caching rules, replayed on a sequence of requests, shared by
//! the context-cost benchmark and the caching tests (included with `#[path]`).
//!
//! Tokens are counted with `o200k_base` on each block's (Anthropic) or message's (OpenAI)
//! compact JSON — a stand-in for the providers' own tokenizers, the same for every strategy.
//!
//! - Anthropic: a request caches only at its `cache_control` breakpoints (at most 4); a read
//!   is the longest cached prefix that ends on a block boundary within the 20 blocks that end
//!   at a breakpoint (its own included: the documentation's "about 20", read conservatively); each breakpoint writes the prefix up to it; prefixes under 1,024 tokens
//!   are not cached. Read 0.1×, write 1.25× (5-minute TTL), the rest 1×.
//! - OpenAI: automatic; the longest prefix shared with an earlier request, when it is 1,024
//!   tokens or more, is read from the cache in 128-token steps, at 0.1× (GPT-5's cached-input
//!   price); no write premium.

use serde_json::Value;
use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

pub const MIN_CACHED_TOKENS: u64 = 1024;
pub const ANTHROPIC_LOOKBACK_BLOCKS: usize = 20;
pub const ANTHROPIC_READ: f64 = 0.1;
pub const ANTHROPIC_WRITE: f64 = 1.25;
pub const OPENAI_READ: f64 = 0.1;
pub const OPENAI_STEP_TOKENS: u64 = 128;

/// What one request, or a run of them, costs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Usage {
    pub input: u64,
    pub read: u64,
    pub written: u64,
    pub requests: u64,
    pub peak: u64,
    /// Breakpoints in the request with the most.
    pub max_breakpoints: usize,
}

impl Usage {
    fn add(&mut self, one: Usage) {
        self.input += one.input;
        self.read += one.read;
        self.written += one.written;
        self.requests += 1;
        self.peak = self.peak.max(one.input);
        self.max_breakpoints = self.max_breakpoints.max(one.max_breakpoints);
    }

    /// The run's cost relative to the same requests uncached.
    pub fn relative_cost(&self, read_price: f64, write_price: f64) -> f64 {
        let uncached = (self.input - self.read - self.written) as f64;
        let cost = uncached + self.read as f64 * read_price + self.written as f64 * write_price;
        cost / self.input.max(1) as f64
    }

    pub fn read_share(&self) -> f64 {
        self.read as f64 / self.input.max(1) as f64
    }
}

fn hash_of(text: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

fn chain(prefix: u64, item: u64) -> u64 {
    let mut hasher = DefaultHasher::new();
    (prefix, item).hash(&mut hasher);
    hasher.finish()
}

/// Token counts by text, so a block sent again is not counted again.
#[derive(Default)]
struct Counts(HashMap<u64, u64>);

impl Counts {
    fn tokens(&mut self, key: u64, text: &str) -> u64 {
        *self.0.entry(key).or_insert_with(|| bpe_openai::o200k_base().count(text) as u64)
    }
}

/// Anthropic's cache over a run of Messages API request bodies (`{system?, messages}`).
#[derive(Default)]
pub struct AnthropicCache {
    cached: HashSet<u64>,
    counts: Counts,
    pub total: Usage,
}

/// One block of an Anthropic request as a cache compares it: its role and the block without
/// `cache_control` (a string `system` is one text block), and whether it was a breakpoint.
#[derive(Clone, Debug, PartialEq)]
pub struct CachedBlock {
    pub role: String,
    pub block: Value,
    pub breakpoint: bool,
}

/// The request's blocks in order: the system prompt's, then each message's.
pub fn anthropic_blocks(request: &Value) -> Vec<CachedBlock> {
    let block_of = |role: &str, block: &Value| {
        let mut block = block.clone();
        let breakpoint = block.as_object_mut().and_then(|b| b.remove("cache_control")).is_some();
        CachedBlock { role: role.to_owned(), block, breakpoint }
    };
    let mut blocks = Vec::new();
    match &request["system"] {
        Value::String(text) => blocks.push(block_of("system", &serde_json::json!({"type": "text", "text": text}))),
        Value::Array(system) => blocks.extend(system.iter().map(|b| block_of("system", b))),
        _ => {}
    }
    for message in request["messages"].as_array().into_iter().flatten() {
        let role = message["role"].as_str().unwrap_or_default();
        blocks.extend(message["content"].as_array().into_iter().flatten().map(|b| block_of(role, b)));
    }
    blocks
}

impl AnthropicCache {
    /// Accounts one request body; returns its usage (also added to `total`).
    pub fn send(&mut self, request: &Value) -> Usage {
        // (prefix hash, prefix tokens, breakpoint) per block, in order.
        let mut blocks: Vec<(u64, u64, bool)> = Vec::new();
        let (mut prefix, mut tokens) = (0u64, 0u64);
        for CachedBlock { role, block, breakpoint } in anthropic_blocks(request) {
            let text = format!("{role}:{block}");
            let key = hash_of(&text);
            tokens += self.counts.tokens(key, &text);
            prefix = chain(prefix, key);
            blocks.push((prefix, tokens, breakpoint));
        }
        let breakpoints: Vec<usize> = (0..blocks.len()).filter(|&i| blocks[i].2).collect();
        let mut read = 0;
        for &at in &breakpoints {
            let earliest = at.saturating_sub(ANTHROPIC_LOOKBACK_BLOCKS - 1);
            if let Some(hit) = (earliest..=at).rev().find(|&p| self.cached.contains(&blocks[p].0)) {
                read = read.max(blocks[hit].1);
            }
        }
        let mut written = 0;
        if let Some(&last) = breakpoints.last() {
            if blocks[last].1 >= MIN_CACHED_TOKENS && blocks[last].1 > read {
                written = blocks[last].1 - read;
            }
        }
        for &at in &breakpoints {
            if blocks[at].1 >= MIN_CACHED_TOKENS {
                self.cached.insert(blocks[at].0);
            }
        }
        let usage =
            Usage { input: tokens, read, written, requests: 1, peak: tokens, max_breakpoints: breakpoints.len() };
        self.total.add(usage);
        usage
    }
}

/// OpenAI's automatic prefix cache over a run of Chat Completions `messages` arrays.
#[derive(Default)]
pub struct OpenAiCache {
    /// Every message-boundary prefix sent so far, with its tokens.
    seen: HashMap<u64, u64>,
    previous: Vec<String>,
    counts: Counts,
    pub total: Usage,
}

impl OpenAiCache {
    pub fn send(&mut self, messages: &Value) -> Usage {
        let texts: Vec<String> = messages.as_array().into_iter().flatten().map(|m| m.to_string()).collect();
        let (mut prefix, mut tokens, mut shared) = (0u64, 0u64, 0u64);
        let mut prefixes = Vec::with_capacity(texts.len());
        for text in &texts {
            let key = hash_of(text);
            tokens += self.counts.tokens(key, text);
            prefix = chain(prefix, key);
            prefixes.push((prefix, tokens));
            if self.seen.contains_key(&prefix) {
                shared = tokens;
            }
        }
        // Within the first message that differs from the previous request, the tokens they share.
        let same = texts.iter().zip(&self.previous).take_while(|(a, b)| a == b).count();
        if let (Some(now), Some(before)) = (texts.get(same), self.previous.get(same)) {
            let bpe = bpe_openai::o200k_base();
            let (a, b) = (bpe.encode(now), bpe.encode(before));
            let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count() as u64;
            let start = if same == 0 { 0 } else { prefixes[same - 1].1 };
            shared = shared.max(start + common);
        }
        let read = if shared >= MIN_CACHED_TOKENS { shared / OPENAI_STEP_TOKENS * OPENAI_STEP_TOKENS } else { 0 };
        for (prefix, tokens) in prefixes {
            self.seen.insert(prefix, tokens);
        }
        self.previous = texts;
        let usage = Usage { input: tokens, read, written: 0, requests: 1, peak: tokens, max_breakpoints: 0 };
        self.total.add(usage);
        usage
    }
}
