//! Tool call ids in the characters and length a provider accepts, mapped deterministically.
//!
//! Standard mode maps ids into [`IdRule::OPENAI`] (LangChain's Anthropic converter fixes the
//! characters, not the length or an empty id); each projection then maps into its own rule.
//!
//! An id the provider accepts is kept as it is. Any other becomes its allowed characters
//! (others replaced by `_`), cut to leave room, then `_` and 16 hex digits of its FNV-1a hash,
//! so different ids stay different and the same id always maps the same way. Should a mapped
//! id still meet one already given out (a thread could hold both `a b` and its mapping), it
//! gets a further `_2`, `_3`, … The map lives for one rendering, so a call and the message
//! answering it always agree.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

/// What a provider allows in a tool call id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdRule {
    pub max_len: usize,
    /// Only `[A-Za-z0-9_-]` when set; any character otherwise.
    pub word_chars_only: bool,
}

impl IdRule {
    /// Anthropic: `^[a-zA-Z0-9_-]+$`, at most 64 characters.
    pub const ANTHROPIC: IdRule = IdRule { max_len: 64, word_chars_only: true };
    /// OpenAI (Chat Completions and Responses): non-empty, at most 40 characters.
    pub const OPENAI: IdRule = IdRule { max_len: 40, word_chars_only: false };

    fn allows_char(self, c: char) -> bool {
        !self.word_chars_only || c.is_ascii_alphanumeric() || c == '_' || c == '-'
    }

    pub fn allows(self, id: &str) -> bool {
        !id.is_empty() && id.chars().count() <= self.max_len && id.chars().all(|c| self.allows_char(c))
    }
}

/// Ids of one rendering, as the provider will see them.
#[derive(Debug)]
pub struct IdMap<'a> {
    rule: IdRule,
    mapped: HashMap<&'a str, Cow<'a, str>>,
    given: HashSet<Cow<'a, str>>,
}

impl<'a> IdMap<'a> {
    pub fn new(rule: IdRule) -> Self {
        IdMap { rule, mapped: HashMap::new(), given: HashSet::new() }
    }

    /// The provider's id for the thread's `id`.
    pub fn get(&mut self, id: &'a str) -> Cow<'a, str> {
        if let Some(mapped) = self.mapped.get(id) {
            return mapped.clone();
        }
        let mut candidate: Cow<'a, str> = if self.rule.allows(id) { Cow::Borrowed(id) } else { self.rewrite(id, "") };
        let mut n = 2u64;
        while self.given.contains(&candidate) {
            candidate = self.rewrite(id, &format!("_{n}"));
            n += 1;
        }
        self.given.insert(candidate.clone());
        self.mapped.insert(id, candidate.clone());
        candidate
    }

    fn rewrite(&self, id: &str, suffix: &str) -> Cow<'a, str> {
        Cow::Owned(self.rule.rewrite(id, suffix))
    }
}

impl IdRule {
    /// `id` in this rule's characters, cut to leave room for the hash of `id` and `suffix`.
    pub fn rewrite(self, id: &str, suffix: &str) -> String {
        let tail = format!("_{:016x}{suffix}", fnv1a(id.as_bytes()));
        let room = self.max_len.saturating_sub(tail.len());
        let mut out: String = id.chars().map(|c| if self.allows_char(c) { c } else { '_' }).take(room).collect();
        out.push_str(&tail);
        out
    }
}

/// 64-bit FNV-1a: tiny, stable across versions and platforms, and good enough to tell ids apart.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_ids_are_kept() {
        let mut ids = IdMap::new(IdRule::ANTHROPIC);
        assert_eq!(ids.get("call_1-A"), "call_1-A");
        let mut ids = IdMap::new(IdRule::OPENAI);
        assert_eq!(ids.get("call 1.x"), "call 1.x");
    }

    #[test]
    fn other_ids_map_deterministically_into_the_rule() {
        let long = "x".repeat(100);
        for id in ["a b", "", "call.1", "émoji🎉", long.as_str()] {
            let first = IdMap::new(IdRule::ANTHROPIC).get(id).into_owned();
            assert!(IdRule::ANTHROPIC.allows(&first), "{first:?}");
            assert_eq!(IdMap::new(IdRule::ANTHROPIC).get(id), first);
        }
        assert_eq!(IdMap::new(IdRule::ANTHROPIC).get("a b"), format!("a_b_{:016x}", fnv1a(b"a b")));
        assert!(IdRule::OPENAI.allows(&IdMap::new(IdRule::OPENAI).get(&long)));
    }

    #[test]
    fn mapped_ids_never_collide() {
        let mut ids = IdMap::new(IdRule::ANTHROPIC);
        let mapped = ids.get("a b").into_owned();
        // A thread that also holds the mapped form as a real id.
        let natural = ids.get(Box::leak(mapped.clone().into_boxed_str()));
        assert_ne!(natural, mapped);
        assert!(IdRule::ANTHROPIC.allows(&natural));
        assert_eq!(ids.get("a b"), mapped);
    }
}
