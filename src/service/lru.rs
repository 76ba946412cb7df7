//! A least-recently-used map of open threads, bounded by count.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// Keys are shared between the two maps, so marking an entry as used allocates nothing.
pub struct Lru<V> {
    capacity: usize,
    tick: u64,
    entries: HashMap<Arc<str>, (V, u64, Arc<str>)>,
    by_age: BTreeMap<u64, Arc<str>>,
}

impl<V: Clone> Lru<V> {
    pub fn new(capacity: usize) -> Self {
        Lru { capacity: capacity.max(1), tick: 0, entries: HashMap::new(), by_age: BTreeMap::new() }
    }

    /// The value, marked as most recently used.
    pub fn get(&mut self, key: &str) -> Option<V> {
        self.tick += 1;
        let tick = self.tick;
        let (value, age, shared_key) = self.entries.get_mut(key)?;
        self.by_age.remove(age);
        *age = tick;
        self.by_age.insert(tick, shared_key.clone());
        Some(value.clone())
    }

    /// Inserts the value; returns the entries evicted to stay within capacity.
    pub fn insert(&mut self, key: String, value: V) -> Vec<(String, V)> {
        self.remove(&key);
        self.tick += 1;
        let key: Arc<str> = key.into();
        self.by_age.insert(self.tick, key.clone());
        self.entries.insert(key.clone(), (value, self.tick, key));
        let mut evicted = Vec::new();
        while self.entries.len() > self.capacity {
            let Some((_, oldest)) = self.by_age.pop_first() else { break };
            if let Some((value, _, _)) = self.entries.remove(&oldest) {
                evicted.push((oldest.to_string(), value));
            }
        }
        evicted
    }

    pub fn remove(&mut self, key: &str) -> Option<V> {
        let (value, age, _) = self.entries.remove(key)?;
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
