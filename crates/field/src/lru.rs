//! A small least-recently-used map for loam-field's caches (decoded bricks, generator
//! bricks): entries stamped with their last use, the oldest evicted beyond the capacity.
//! Eviction scans every entry, which suits the few dozen to few hundred bricks these hold.

use std::collections::BTreeMap;

/// Up to `capacity` entries, least recently used evicted first (0: nothing is kept).
#[derive(Debug)]
pub(crate) struct Lru<K, V> {
    /// key → (value, last use).
    map: BTreeMap<K, (V, u64)>,
    tick: u64,
    capacity: usize,
}

impl<K: Ord + Copy, V> Lru<K, V> {
    pub const fn new(capacity: usize) -> Self {
        Self {
            map: BTreeMap::new(),
            tick: 0,
            capacity,
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// The value of `key`, marked as used now.
    pub fn get(&mut self, key: &K) -> Option<&V> {
        self.tick += 1;
        let t = self.tick;
        self.map.get_mut(key).map(|(v, used)| {
            *used = t;
            &*v
        })
    }

    /// The value of `key`, not marked as used.
    pub fn peek(&self, key: &K) -> Option<&V> {
        self.map.get(key).map(|(v, _)| v)
    }

    /// Keeps `value` for `key`, used now, evicting the least recently used beyond the
    /// capacity (with capacity 0, keeps nothing).
    pub fn insert(&mut self, key: K, value: V) {
        if self.capacity == 0 {
            return;
        }
        while self.map.len() >= self.capacity && !self.map.contains_key(&key) {
            self.evict_oldest();
        }
        self.tick += 1;
        self.map.insert(key, (value, self.tick));
    }

    /// Sets the capacity, evicting the least recently used beyond it.
    pub fn set_capacity(&mut self, capacity: usize) {
        self.capacity = capacity;
        while self.map.len() > capacity {
            self.evict_oldest();
        }
    }

    pub fn clear(&mut self) {
        self.map.clear();
    }

    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.map.values().map(|(v, _)| v)
    }

    fn evict_oldest(&mut self) {
        let oldest = self
            .map
            .iter()
            .min_by_key(|(_, (_, t))| *t)
            .map(|(k, _)| *k);
        if let Some(k) = oldest {
            self.map.remove(&k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Lru;

    #[test]
    fn the_least_recently_used_goes_first() {
        let mut l = Lru::new(2);
        l.insert(1, 'a');
        l.insert(2, 'b');
        assert_eq!(l.get(&1), Some(&'a'));
        l.insert(3, 'c'); // 2 was used last longest ago
        assert_eq!(
            (l.peek(&1), l.peek(&2), l.peek(&3)),
            (Some(&'a'), None, Some(&'c'))
        );
        l.insert(1, 'A'); // present: replaced, nothing evicted
        assert_eq!((l.len(), l.peek(&1)), (2, Some(&'A')));
        l.set_capacity(1);
        assert_eq!((l.len(), l.peek(&1)), (1, Some(&'A')));
        let mut none = Lru::new(0);
        none.insert(1, 'a');
        assert_eq!(none.len(), 0);
    }
}
