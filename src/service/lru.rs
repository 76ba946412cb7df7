//! A least-recently-used map of open threads, bounded by count.

use std::collections::{BTreeMap, HashMap};

pub struct Lru<V> {
    capacity: usize,
    tick: u64,
    entries: HashMap<String, (V, u64)>,
    by_age: BTreeMap<u64, String>,
}

impl<V: Clone> Lru<V> {
    pub fn new(capacity: usize) -> Self {
        Lru { capacity: capacity.max(1), tick: 0, entries: HashMap::new(), by_age: BTreeMap::new() }
    }

    /// The value, marked as most recently used.
    pub fn get(&mut self, key: &str) -> Option<V> {
        self.tick += 1;
        let tick = self.tick;
        let (value, age) = self.entries.get_mut(key)?;
        self.by_age.remove(age);
        *age = tick;
        self.by_age.insert(tick, key.to_owned());
        Some(value.clone())
    }

    /// Inserts the value; returns the entries evicted to stay within capacity.
    pub fn insert(&mut self, key: String, value: V) -> Vec<(String, V)> {
        self.remove(&key);
        self.tick += 1;
        self.by_age.insert(self.tick, key.clone());
        self.entries.insert(key, (value, self.tick));
        let mut evicted = Vec::new();
        while self.entries.len() > self.capacity {
            let Some((_, oldest)) = self.by_age.pop_first() else { break };
            if let Some((value, _)) = self.entries.remove(&oldest) {
                evicted.push((oldest, value));
            }
        }
        evicted
    }

    pub fn remove(&mut self, key: &str) -> Option<V> {
        let (value, age) = self.entries.remove(key)?;
        self.by_age.remove(&age);
        Some(value)
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_least_recently_used() {
        let mut lru = Lru::new(2);
        assert!(lru.insert("a".into(), 1).is_empty());
        assert!(lru.insert("b".into(), 2).is_empty());
        assert_eq!(lru.get("a"), Some(1));
        assert_eq!(lru.insert("c".into(), 3), vec![("b".to_string(), 2)]);
        assert_eq!(lru.get("b"), None);
        assert_eq!(lru.len(), 2);
        assert_eq!(lru.remove("a"), Some(1));
        assert_eq!(lru.len(), 1);
    }
}
