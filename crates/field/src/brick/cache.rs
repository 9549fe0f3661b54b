//! The decoded-brick cache: a bounded, thread-safe LRU of decoded samples, keyed by brick id.
//!
//! Bricks are immutable and every brick's id is unique to its content, so an entry never goes
//! stale: it is only evicted. One cache serves the whole process (every field and snapshot,
//! every worker thread), so its bound is the memory that decoded bricks may take. It is a
//! cache of derived data only: what it holds never changes a value that is read.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use super::BrickSamples as Samples;

/// Decoded bricks kept by default: 16 × 96 KiB = 1.5 MiB.
pub const DEFAULT_CAPACITY: usize = 16;

struct Lru {
    /// id → (samples, last use).
    map: BTreeMap<u64, (Arc<Samples>, u64)>,
    tick: u64,
    capacity: usize,
    hits: u64,
    misses: u64,
}

static CACHE: Mutex<Lru> = Mutex::new(Lru {
    map: BTreeMap::new(),
    tick: 0,
    capacity: DEFAULT_CAPACITY,
    hits: 0,
    misses: 0,
});

fn lock() -> std::sync::MutexGuard<'static, Lru> {
    // A panic while holding the lock leaves the map consistent (every update is one call).
    CACHE.lock().unwrap_or_else(|e| e.into_inner())
}

impl Lru {
    fn insert(&mut self, id: u64, samples: Arc<Samples>) {
        if self.capacity == 0 {
            return;
        }
        while self.map.len() >= self.capacity && !self.map.contains_key(&id) {
            let oldest = self
                .map
                .iter()
                .min_by_key(|(_, (_, t))| *t)
                .map(|(k, _)| *k)
                .expect("not empty");
            self.map.remove(&oldest);
        }
        self.tick += 1;
        self.map.insert(id, (samples, self.tick));
    }
}

/// The samples of brick `id`, decoded by `decode` if the cache does not hold them. `decode`
/// runs outside the lock, so threads decoding different bricks do not wait for each other.
pub(crate) fn get_or_decode(id: u64, decode: impl FnOnce() -> Samples) -> Arc<Samples> {
    {
        let mut c = lock();
        c.tick += 1;
        let t = c.tick;
        if let Some((s, used)) = c.map.get_mut(&id) {
            *used = t;
            let s = s.clone();
            c.hits += 1;
            return s;
        }
        c.misses += 1;
    }
    let s = Arc::new(decode());
    lock().insert(id, s.clone());
    s
}

/// Puts decoded samples of brick `id` in the cache (a brick just packed from samples that are
/// likely to be read again soon).
pub(crate) fn put(id: u64, samples: Arc<Samples>) {
    lock().insert(id, samples);
}

/// What the decoded-brick cache holds and has done, process-wide.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DecodedCacheStats {
    /// Decoded bricks held.
    pub bricks: usize,
    /// Bytes they hold on the heap.
    pub bytes: usize,
    /// Most decoded bricks held.
    pub capacity: usize,
    /// Lookups that found their brick decoded.
    pub hits: u64,
    /// Lookups that decoded it.
    pub misses: u64,
}

/// The decoded-brick cache's contents and counters.
pub fn decoded_cache_stats() -> DecodedCacheStats {
    let c = lock();
    DecodedCacheStats {
        bricks: c.map.len(),
        bytes: c.map.values().map(|(s, _)| s.heap_bytes()).sum(),
        capacity: c.capacity,
        hits: c.hits,
        misses: c.misses,
    }
}

/// Sets how many decoded bricks the process-wide cache keeps (default
/// [`DEFAULT_CAPACITY`], 96 KiB each; 0 turns it off, so every read of a packed brick decodes
/// it). Evicts the least recently used beyond the new bound. Values read never depend on it.
pub fn set_decoded_cache_capacity(bricks: usize) {
    let mut c = lock();
    c.capacity = bricks;
    while c.map.len() > bricks {
        let oldest = c
            .map
            .iter()
            .min_by_key(|(_, (_, t))| *t)
            .map(|(k, _)| *k)
            .expect("not empty");
        c.map.remove(&oldest);
    }
}
