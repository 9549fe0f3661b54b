//! The vertex ids of dual cells' further patches (an ambiguous cell's second to fourth
//! surface patch), looked up by (cell index, patch).
//!
//! An open-addressing table with linear probing, kept in the mesh buffer's scratch: once it
//! has grown, a call allocates nothing (`tests/alloc.rs`). Noisy scans have thousands of
//! ambiguous cells; the linear list this replaces was 43 % of Surface Nets' time on the MR
//! head. Only looked up, never iterated, so its layout cannot reach a mesh.

/// `(cell index, patch)` → vertex id.
#[derive(Default, Clone, Debug)]
pub(crate) struct PatchTable {
    /// `(key + 1, id)`; key 0 marks an empty slot. Length 0 or a power of two.
    slots: Vec<(u64, u32)>,
    len: usize,
}

impl PatchTable {
    fn key(cell: usize, patch: u8) -> u64 {
        debug_assert!(patch < 4);
        ((cell as u64) << 2 | u64::from(patch)) + 1
    }

    /// The first slot to probe for `key` (Fibonacci hashing, Knuth, TAOCP vol. 3, 6.4).
    fn home(&self, key: u64) -> usize {
        let bits = self.slots.len().trailing_zeros();
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - bits)) as usize
    }

    /// Empties the table, keeping its capacity.
    pub(crate) fn clear(&mut self) {
        if self.len > 0 {
            self.slots.fill((0, 0));
            self.len = 0;
        }
    }

    /// The id stored for `(cell, patch)`.
    pub(crate) fn get(&self, cell: usize, patch: u8) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        let key = Self::key(cell, patch);
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let (k, id) = self.slots[i];
            if k == key {
                return Some(id);
            }
            if k == 0 {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Stores `id` for `(cell, patch)`, which must not be stored yet.
    pub(crate) fn insert(&mut self, cell: usize, patch: u8, id: u32) {
        // At most half full, so probes stay short and always end on an empty slot.
        if 2 * (self.len + 1) > self.slots.len() {
            self.grow();
        }
        self.put(Self::key(cell, patch), id);
        self.len += 1;
    }

    fn put(&mut self, key: u64, id: u32) {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        while self.slots[i].0 != 0 {
            debug_assert!(self.slots[i].0 != key, "stored twice");
            i = (i + 1) & mask;
        }
        self.slots[i] = (key, id);
    }

    fn grow(&mut self) {
        let cap = (2 * self.slots.len()).max(64);
        let old = std::mem::replace(&mut self.slots, vec![(0, 0); cap]);
        for (k, id) in old {
            if k != 0 {
                self.put(k, id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::PatchTable;

    #[test]
    fn finds_what_was_stored_and_nothing_else_across_growth_and_clears() {
        let mut t = PatchTable::default();
        assert_eq!(t.get(0, 1), None);
        for round in 0..3u32 {
            // Cells spaced like a grid's layers, patches 1..=3: collisions on the low bits.
            let stored: Vec<(usize, u8, u32)> = (0..5000u32)
                .map(|i| ((i as usize / 3) * 4096 + 7, (i % 3 + 1) as u8, i + round))
                .collect();
            for &(c, p, id) in &stored {
                assert_eq!(t.get(c, p), None);
                t.insert(c, p, id);
            }
            for &(c, p, id) in &stored {
                assert_eq!(t.get(c, p), Some(id));
                assert_eq!(t.get(c, 0), None);
                assert_eq!(t.get(c + 1, p), None);
            }
            let cap = t.slots.len();
            t.clear();
            assert_eq!(t.slots.len(), cap, "a clear keeps the capacity");
            assert_eq!(t.get(stored[0].0, stored[0].1), None);
        }
    }
}
