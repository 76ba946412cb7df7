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
//! - Bedrock Converse, Claude models ([`BedrockCache`]): Anthropic's rules at `cachePoint`
//!   blocks (at most 4 checkpoints, 1,024 tokens at least for Claude Sonnet and Opus, read
//!   0.1×, write 1.25×).
//! - Images carried as base64 bytes count as Anthropic counts them (`⌈w·h/750⌉` after fitting,
//!   from the header's size), not as their base64 text ([`image_tokens`]).
//! - OpenAI: automatic; the longest prefix shared with an earlier request, when it is 1,024
//!   tokens or more, is read from the cache in 128-token steps, at 0.1× (GPT-5's cached-input
//!   price); no write premium.
//! - OpenAI, GPT-5.6 and later ([`OpenAiBreakpointCache`]): a read is an exact match at a
//!   breakpoint written before — one of the latest 80 of the conversation (its
//!   `prompt_cache_key`), at any distance; a request writes its implicit breakpoint (the end
//!   of the newest system, user or tool message, unless `prompt_cache_options.mode` is
//!   `"explicit"`) and its latest explicit ones (`prompt_cache_breakpoint`), four in all;
//!   prefixes under 1,024 tokens are not cached. Read 0.1×, write 1.25×, the rest 1×. Blocks
//!   are each message's fields but its content, then each content part (a string content is
//!   one), counted like Anthropic's.

use serde_json::Value;
use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::{Hash, Hasher};

pub const MIN_CACHED_TOKENS: u64 = 1024;
pub const ANTHROPIC_LOOKBACK_BLOCKS: usize = 20;
pub const ANTHROPIC_READ: f64 = 0.1;
pub const ANTHROPIC_WRITE: f64 = 1.25;
pub const OPENAI_READ: f64 = 0.1;
pub const OPENAI_STEP_TOKENS: u64 = 128;
pub const OPENAI_WRITE: f64 = 1.25;
pub const OPENAI_LATEST_BREAKPOINTS: usize = 80;
pub const OPENAI_WRITTEN_BREAKPOINTS: usize = 4;

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

    /// A block's tokens: its JSON text's, but an image's bytes count as the image, by
    /// Anthropic's rule from the size its header states ([`image_tokens`]), not as base64 text.
    fn block_tokens(&mut self, key: u64, role: &str, block: &Value) -> u64 {
        *self.0.entry(key).or_insert_with(|| {
            let mut block = block.clone();
            let images = image_tokens(&mut block);
            bpe_openai::o200k_base().count(&format!("{role}:{block}")) as u64 + images
        })
    }
}

/// The tokens of the images `value` carries as base64 bytes (an Anthropic `source.data`, a
/// Bedrock `source.bytes`, …), each by Anthropic's rule for its header's width and height; their
/// strings are emptied so the text count leaves them out.
pub fn image_tokens(value: &mut Value) -> u64 {
    match value {
        Value::Object(fields) => {
            let mut tokens = 0;
            for (key, field) in fields.iter_mut() {
                if let (true, Some(size)) =
                    (key == "data" || key == "bytes", field.as_str().and_then(base64_image_size))
                {
                    tokens += threadkeeper::context::MediaTokenRule::Anthropic.image_tokens(Some(size), false);
                    *field = Value::String(String::new());
                } else {
                    tokens += image_tokens(field);
                }
            }
            tokens
        }
        Value::Array(items) => items.iter_mut().map(image_tokens).sum(),
        _ => 0,
    }
}

/// The width and height of the image whose base64 bytes are `data`, from its header.
fn base64_image_size(data: &str) -> Option<(u64, u64)> {
    use base64::Engine as _;
    let head = data.get(..data.len().min(64) / 4 * 4)?;
    let bytes = base64::engine::general_purpose::STANDARD.decode(head).ok()?;
    let (width, height) = threadkeeper::media::sniff::image_size(&bytes)?;
    Some((u64::from(width), u64::from(height)))
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

/// A Bedrock Converse request's blocks in order (`{system?, messages}`): each `system` entry,
/// then each message's content blocks; a `cachePoint` block is no block of its own but makes
/// the block before it a breakpoint, as Anthropic's `cache_control` does on the block itself.
pub fn bedrock_blocks(request: &Value) -> Vec<CachedBlock> {
    let mut blocks: Vec<CachedBlock> = Vec::new();
    let mut push = |role: &str, block: &Value| {
        if block.get("cachePoint").is_some() {
            if let Some(before) = blocks.last_mut() {
                before.breakpoint = true;
            }
            return;
        }
        blocks.push(CachedBlock { role: role.to_owned(), block: block.clone(), breakpoint: false });
    };
    for block in request["system"].as_array().into_iter().flatten() {
        push("system", block);
    }
    for message in request["messages"].as_array().into_iter().flatten() {
        let role = message["role"].as_str().unwrap_or_default();
        for block in message["content"].as_array().into_iter().flatten() {
            push(role, block);
        }
    }
    blocks
}

/// Bedrock's cache for Claude models over a run of Converse request bodies: Anthropic's rules
/// (the same checkpoints, minimum, lookback and prices), at its `cachePoint` blocks.
#[derive(Default)]
pub struct BedrockCache(pub AnthropicCache);

impl BedrockCache {
    pub fn send(&mut self, request: &Value) -> Usage {
        self.0.send_blocks(bedrock_blocks(request))
    }
}

impl AnthropicCache {
    /// Accounts one request body; returns its usage (also added to `total`).
    pub fn send(&mut self, request: &Value) -> Usage {
        self.send_blocks(anthropic_blocks(request))
    }

    /// Accounts one request given as its blocks.
    pub fn send_blocks(&mut self, request_blocks: Vec<CachedBlock>) -> Usage {
        // (prefix hash, prefix tokens, breakpoint) per block, in order.
        let mut blocks: Vec<(u64, u64, bool)> = Vec::new();
        let (mut prefix, mut tokens) = (0u64, 0u64);
        for CachedBlock { role, block, breakpoint } in request_blocks {
            let text = format!("{role}:{block}");
            let key = hash_of(&text);
            tokens += self.counts.block_tokens(key, &role, &block);
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

/// One block of an OpenAI request (Chat Completions or Responses) as the GPT-5.6 cache
/// compares it: its role (`tool` for a tool output), the block without
/// `prompt_cache_breakpoint`, whether it carried one, and whether it ends a message.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenAiBlock {
    pub role: String,
    pub block: Value,
    pub breakpoint: bool,
    pub message_end: bool,
}

impl OpenAiBlock {
    /// Whether its message can hold a breakpoint: a system, developer, user or tool message.
    pub fn eligible(&self) -> bool {
        matches!(self.role.as_str(), "system" | "developer" | "user" | "tool")
    }
}

/// The blocks of a Chat Completions (`{messages}`) or Responses (`{instructions?, input}`)
/// request body, in order.
pub fn openai_blocks(request: &Value) -> Vec<OpenAiBlock> {
    let mut blocks = Vec::new();
    let mut push_message = |role: &str, header: Value, content: Option<&Value>| {
        let mut parts: Vec<(Value, bool)> = vec![(header, false)];
        match content {
            Some(Value::Array(list)) => parts.extend(list.iter().map(|part| {
                let mut part = part.clone();
                let breakpoint = part.as_object_mut().and_then(|p| p.remove("prompt_cache_breakpoint")).is_some();
                (part, breakpoint)
            })),
            Some(Value::Null) | None => {}
            Some(other) => parts.push((other.clone(), false)),
        }
        let last = parts.len() - 1;
        for (at, (block, breakpoint)) in parts.into_iter().enumerate() {
            blocks.push(OpenAiBlock { role: role.to_owned(), block, breakpoint, message_end: at == last });
        }
    };
    if let Some(instructions) = request.get("instructions").filter(|i| !i.is_null()) {
        push_message("system", serde_json::json!({"instructions": true}), Some(instructions));
    }
    let items = request.get("messages").or_else(|| request.get("input"));
    for item in items.and_then(Value::as_array).into_iter().flatten() {
        let mut header = item.clone();
        let fields = header.as_object_mut().expect("messages and items are objects");
        let content = fields.remove("content").or_else(|| fields.remove("output"));
        let role = match (fields.get("role").and_then(Value::as_str), fields.get("type").and_then(Value::as_str)) {
            (Some(role), _) => role.to_owned(),
            (None, Some("function_call_output")) => "tool".to_owned(),
            (None, _) => "assistant".to_owned(),
        };
        push_message(&role, header, content.as_ref());
    }
    blocks
}

/// OpenAI's cache for GPT-5.6 and later over a run of request bodies (see the module's docs).
#[derive(Default)]
pub struct OpenAiBreakpointCache {
    /// Prefix hashes of the breakpoints written, newest last, per key.
    latest: HashMap<String, VecDeque<u64>>,
    counts: Counts,
    pub total: Usage,
}

impl OpenAiBreakpointCache {
    pub fn send(&mut self, request: &Value) -> Usage {
        let key = request["prompt_cache_key"].as_str().unwrap_or_default().to_owned();
        let blocks = openai_blocks(request);
        let (mut prefix, mut tokens) = (hash_of(&key), 0u64);
        let mut prefixes = Vec::with_capacity(blocks.len());
        for OpenAiBlock { role, block, .. } in &blocks {
            let text = format!("{role}:{block}");
            let hash = hash_of(&text);
            tokens += self.counts.tokens(hash, &text);
            prefix = chain(prefix, hash);
            prefixes.push((prefix, tokens));
        }
        let latest = self.latest.entry(key).or_default();
        let read = prefixes.iter().filter(|(hash, _)| latest.contains(hash)).map(|&(_, t)| t).max().unwrap_or(0);
        let implicit = request["prompt_cache_options"]["mode"] != "explicit";
        let explicit: Vec<usize> = (0..blocks.len()).filter(|&at| blocks[at].breakpoint).collect();
        let mut written: Vec<usize> =
            explicit.iter().rev().take(OPENAI_WRITTEN_BREAKPOINTS - usize::from(implicit)).copied().collect();
        if implicit {
            let newest = (0..blocks.len()).rev().find(|&at| blocks[at].eligible() && blocks[at].message_end);
            written.extend(newest);
        }
        let mut write = 0;
        for at in written {
            let (hash, at_tokens) = prefixes[at];
            if at_tokens < MIN_CACHED_TOKENS {
                continue;
            }
            write = write.max(at_tokens.saturating_sub(read));
            latest.retain(|&h| h != hash);
            latest.push_back(hash);
            if latest.len() > OPENAI_LATEST_BREAKPOINTS {
                latest.pop_front();
            }
        }
        let usage =
            Usage { input: tokens, read, written: write, requests: 1, peak: tokens, max_breakpoints: explicit.len() };
        self.total.add(usage);
        usage
    }
}
