//! The decoded-brick cache: a bounded, thread-safe LRU of decoded samples, keyed by brick id.
//!
//! Bricks are immutable and every brick's id is unique to its content, so an entry never goes
//! stale: it is only evicted. One cache serves the whole process (every field and snapshot,
//! every worker thread), so its bound is the memory that decoded bricks may take. It is a
//! cache of derived data only: what it holds never changes a value that is read.

use std::sync::{Arc, Mutex};

use super::BrickSamples as Samples;
use crate::lru::Lru;

/// Decoded bricks kept by default: 16 × 96 KiB = 1.5 MiB.
pub const DEFAULT_CAPACITY: usize = 16;

struct Cache {
    /// Brick id → its decoded samples.
    lru: Lru<u64, Arc<Samples>>,
    hits: u64,
    misses: u64,
}

static CACHE: Mutex<Cache> = Mutex::new(Cache {
    lru: Lru::new(DEFAULT_CAPACITY),
    hits: 0,
    misses: 0,
});

fn lock() -> std::sync::MutexGuard<'static, Cache> {
    // A panic while holding the lock leaves the map consistent (every update is one call).
    CACHE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The samples of brick `id`, decoded by `decode` if the cache does not hold them. `decode`
/// runs outside the lock, so threads decoding different bricks do not wait for each other.
pub(crate) fn get_or_decode(id: u64, decode: impl FnOnce() -> Samples) -> Arc<Samples> {
    {
        let mut c = lock();
        if let Some(s) = c.lru.get(&id).cloned() {
            c.hits += 1;
            return s;
        }
        c.misses += 1;
    }
    let s = Arc::new(decode());
    // What the insert lets go is freed after the lock is given up: a decoded brick is 96 KiB,
    // and the server's ground worker and baker, which take this lock too, run under
    // `SCHED_IDLE` (a thread of theirs preempted inside it holds up the ordering thread).
    let gone = lock().lru.insert(id, s.clone());
    drop(gone);
    s
}

/// Puts decoded samples of brick `id` in the cache (a brick just packed from samples that are
/// likely to be read again soon).
pub(crate) fn put(id: u64, samples: Arc<Samples>) {
    // Freed after unlocking, as in `get_or_decode`.
    let gone = lock().lru.insert(id, samples);
    drop(gone);
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
        bricks: c.lru.len(),
        bytes: c.lru.values().map(|s| s.heap_bytes()).sum(),
        capacity: c.lru.capacity(),
        hits: c.hits,
        misses: c.misses,
    }
}

/// Sets how many decoded bricks the process-wide cache keeps (default
/// [`DEFAULT_CAPACITY`], 96 KiB each; 0 turns it off, so every read of a packed brick decodes
/// it). Evicts the least recently used beyond the new bound. Values read never depend on it.
pub fn set_decoded_cache_capacity(bricks: usize) {
    lock().lru.set_capacity(bricks);
}
