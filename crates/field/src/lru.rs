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
    /// capacity (with capacity 0, keeps nothing). Returns the value it let go (the evicted
    /// or the replaced one, or `value` itself with capacity 0), so that a caller holding a
    /// lock can drop it after unlocking: a decoded brick is 96 KiB to free.
    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        if self.capacity == 0 {
            return Some(value);
        }
        // Never more than `capacity` entries (`set_capacity` trims): one eviction at most.
        let evicted = if self.map.len() >= self.capacity && !self.map.contains_key(&key) {
            self.evict_oldest()
        } else {
            None
        };
        self.tick += 1;
        let replaced = self.map.insert(key, (value, self.tick)).map(|(v, _)| v);
        evicted.or(replaced)
    }

    /// Sets the capacity, evicting the least recently used beyond it.
    pub fn set_capacity(&mut self, capacity: usize) {
        self.capacity = capacity;
        while self.map.len() > capacity {
            drop(self.evict_oldest());
        }
    }

    pub fn clear(&mut self) {
        self.map.clear();
    }

    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.map.values().map(|(v, _)| v)
    }

    fn evict_oldest(&mut self) -> Option<V> {
        let oldest = self
            .map
            .iter()
            .min_by_key(|(_, (_, t))| *t)
            .map(|(k, _)| *k)?;
        self.map.remove(&oldest).map(|(v, _)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::Lru;

    #[test]
    fn the_least_recently_used_goes_first() {
        let mut l = Lru::new(2);
        assert_eq!(l.insert(1, 'a'), None);
        assert_eq!(l.insert(2, 'b'), None);
        assert_eq!(l.get(&1), Some(&'a'));
        // 2 was used last longest ago: it is let go, to the caller.
        assert_eq!(l.insert(3, 'c'), Some('b'));
        assert_eq!(
            (l.peek(&1), l.peek(&2), l.peek(&3)),
            (Some(&'a'), None, Some(&'c'))
        );
        // Present: replaced (the old value handed back), nothing evicted.
        assert_eq!(l.insert(1, 'A'), Some('a'));
        assert_eq!((l.len(), l.peek(&1)), (2, Some(&'A')));
        l.set_capacity(1);
        assert_eq!((l.len(), l.peek(&1)), (1, Some(&'A')));
        let mut none = Lru::new(0);
        assert_eq!(none.insert(1, 'a'), Some('a'));
        assert_eq!(none.len(), 0);
    }
}
