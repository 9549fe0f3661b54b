//! Support, all or nothing: a block is held if it rests on the ground or on rubble (an
//! anchor), or touches a held block through a face. After a change, only the blocks
//! around it are searched.
//!
//! ```text
//!   seeds: the blocks next to a removed one, or that lost their ground or rubble
//!   for each seed not known to be held yet:
//!       best-first search through face contacts, lowest blocks first
//!       ├─ reaches an anchor or a block found held before → all it visited are held
//!       └─ runs out → what it visited is one whole unsupported piece
//! ```
//!
//! Searching lowest-first reaches the ground in about as many steps as the block is high
//! in a wall or a tower; only blocks that really lost their support cost a search of
//! their whole piece. Pieces are listed in the order of their seeds (ascending), each
//! piece's blocks ascending: the same store and seeds always give the same pieces.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

use crate::block::{Block, BlockPos};
use crate::store::BlockStore;

/// Whether a block holds itself up: it rests on the ground or on rubble.
fn is_anchor(b: &Block) -> bool {
    b.on_ground || b.on_rubble
}

/// Moves `from` into `into`: `append` (a merge of both trees, O(|into| + |from|)) when
/// `from` is large, inserts (O(|from| · log)) when it is small, so that many small
/// searches into a large set stay cheap.
fn merge(into: &mut BTreeSet<BlockPos>, from: &mut BTreeSet<BlockPos>) {
    if from.len() * 8 >= into.len() {
        into.append(from);
    } else {
        into.extend(from.iter().copied());
        from.clear();
    }
}

impl BlockStore {
    /// The blocks that are no longer held after a change, grouped by face contact into
    /// pieces, searching only from `seeds` (the blocks next to what changed; positions
    /// without a block are skipped). See the module docs for the order.
    pub fn unsupported(&self, seeds: impl IntoIterator<Item = BlockPos>) -> Vec<Vec<BlockPos>> {
        let mut seeds: Vec<BlockPos> = seeds.into_iter().collect();
        seeds.sort();
        seeds.dedup();
        let mut held: BTreeSet<BlockPos> = BTreeSet::new();
        let mut loose: BTreeSet<BlockPos> = BTreeSet::new();
        let mut pieces = Vec::new();
        let mut heap = BinaryHeap::new();
        let mut visited = BTreeSet::new();
        for seed in seeds {
            if !self.blocks.contains_key(&seed) || held.contains(&seed) || loose.contains(&seed) {
                continue;
            }
            heap.clear();
            visited.clear();
            visited.insert(seed);
            heap.push(Reverse((seed.qbox().min[1], seed)));
            let mut found = false;
            while let Some(Reverse((_, p))) = heap.pop() {
                if held.contains(&p) || self.blocks.get(&p).is_some_and(is_anchor) {
                    found = true;
                    break;
                }
                self.for_each_neighbour(p, |n| {
                    if visited.insert(n) {
                        heap.push(Reverse((n.qbox().min[1], n)));
                    }
                });
            }
            if found {
                merge(&mut held, &mut visited);
            } else {
                pieces.push(visited.iter().copied().collect());
                merge(&mut loose, &mut visited);
            }
        }
        pieces
    }

    /// Every unsupported piece of the store, found from scratch (a flood from all anchors):
    /// what [`Self::unsupported`] must agree with. O(blocks); for tests and checks.
    pub fn unsupported_all(&self) -> Vec<Vec<BlockPos>> {
        let mut held: BTreeSet<BlockPos> = BTreeSet::new();
        let mut stack: Vec<BlockPos> = self
            .blocks
            .iter()
            .filter(|(_, b)| is_anchor(b))
            .map(|(p, _)| *p)
            .collect();
        held.extend(stack.iter().copied());
        while let Some(p) = stack.pop() {
            self.for_each_neighbour(p, |n| {
                if held.insert(n) {
                    stack.push(n);
                }
            });
        }
        let mut seen = held;
        let mut pieces = Vec::new();
        for &p in self.blocks.keys() {
            if !seen.insert(p) {
                continue;
            }
            let mut piece = vec![p];
            let mut stack = vec![p];
            while let Some(q) = stack.pop() {
                self.for_each_neighbour(q, |n| {
                    if seen.insert(n) {
                        piece.push(n);
                        stack.push(n);
                    }
                });
            }
            piece.sort();
            pieces.push(piece);
        }
        pieces
    }

    /// Whether the block at `pos` is held (a search from it; `false` without a block).
    pub fn is_held(&self, pos: BlockPos) -> bool {
        self.blocks.contains_key(&pos) && self.unsupported([pos]).is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{BlockSize, BlockSpec};
    use crate::{BlockSettings, MaterialTable};

    fn flat(p: [f64; 3]) -> f32 {
        p[1] as f32
    }

    fn full(x: i32, y: i32, z: i32) -> BlockPos {
        BlockPos::new(BlockSize::Full, [x, y, z]).unwrap()
    }

    fn build(cells: &[BlockPos]) -> BlockStore {
        let mut s = BlockStore::new();
        for &p in cells {
            s.place(
                p,
                &BlockSpec::of(MaterialTable::STONE),
                &MaterialTable::standard(),
                &flat,
                &BlockSettings::default(),
            )
            .unwrap();
        }
        s
    }

    #[test]
    fn a_lone_floating_block_is_one_piece_and_grounded_ones_are_not() {
        let s = build(&[full(0, 0, 0), full(5, 3, 0)]);
        assert!(s.get(full(0, 0, 0)).unwrap().on_ground);
        assert!(!s.get(full(5, 3, 0)).unwrap().on_ground);
        assert_eq!(
            s.unsupported([full(0, 0, 0), full(5, 3, 0)]),
            vec![vec![full(5, 3, 0)]]
        );
        assert_eq!(s.unsupported_all(), vec![vec![full(5, 3, 0)]]);
        assert!(s.is_held(full(0, 0, 0)));
        assert!(!s.is_held(full(9, 9, 9)));
    }

    #[test]
    fn a_search_finds_a_way_round_a_hole() {
        // A 5-wide wall, 5 high, with the centre of row 1 gone: the block above the hole
        // is still held through its neighbours.
        let mut cells = Vec::new();
        for y in 0..5 {
            for x in 0..5 {
                if (x, y) != (2, 1) {
                    cells.push(full(x, y, 0));
                }
            }
        }
        let s = build(&cells);
        assert!(
            s.unsupported([full(2, 2, 0), full(1, 1, 0), full(3, 1, 0)])
                .is_empty()
        );
    }
}
