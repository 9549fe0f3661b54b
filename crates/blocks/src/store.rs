//! The block store: the held blocks on the grid, a revision counter, placement checks
//! and face contacts. Pure data: no physics (that is [`crate::BlockWorld`]).

use std::collections::{BTreeMap, BTreeSet};

use crate::block::{Block, BlockId, BlockPos, BlockSpec, WorldBox};
use crate::chisel::ChiselShape;
use crate::error::BlockError;
use crate::ground::{Ground, check_not_buried, touches_ground};
use crate::material::MaterialTable;

/// The blocks held on the grid.
///
/// Every block lies inside one 1 m cell; an index from those cells to their blocks makes
/// overlap tests, face contacts and ray steps a handful of map lookups. Everything is kept
/// in `BTreeMap`s, so every iteration is in a fixed order.
///
/// The revision counts real changes: a call that changes nothing leaves it as it was.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BlockStore {
    pub(crate) blocks: BTreeMap<BlockPos, Block>,
    /// 1 m cell → the blocks in it, ascending.
    coarse: BTreeMap<[i32; 3], Vec<BlockPos>>,
    ids: BTreeMap<BlockId, BlockPos>,
    pub(crate) next_id: u64,
    revision: u64,
    /// Positions changed since the last [`crate::BlockWorld::take_delta`], while tracking.
    pub(crate) touched: Touched,
}

/// Positions whose block changed, kept only while a [`crate::BlockWorld`] tracks its changes
/// for replicas. Bookkeeping, not state: two stores compare equal whatever they hold.
#[derive(Clone, Debug, Default)]
pub(crate) struct Touched(pub(crate) Option<BTreeSet<BlockPos>>);

impl PartialEq for Touched {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl BlockStore {
    /// An empty store at revision 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts real changes (placements, removals, shape and damage changes, ground and
    /// rubble contact changes).
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Notes that the block at `pos` (or its absence) changed, while tracking.
    pub(crate) fn touch(&mut self, pos: BlockPos) {
        if let Some(t) = &mut self.touched.0 {
            t.insert(pos);
        }
    }

    /// Restores a saved revision.
    pub(crate) fn set_revision(&mut self, revision: u64) {
        self.revision = revision;
    }

    /// Number of blocks.
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// Whether there is no block.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The block at `pos`.
    pub fn get(&self, pos: BlockPos) -> Option<&Block> {
        self.blocks.get(&pos)
    }

    /// Where the block `id` is, if it is held on the grid.
    pub fn find(&self, id: BlockId) -> Option<BlockPos> {
        self.ids.get(&id).copied()
    }

    /// Every block, in ascending position order.
    pub fn iter(&self) -> impl Iterator<Item = (BlockPos, &Block)> {
        self.blocks.iter().map(|(p, b)| (*p, b))
    }

    /// The block that fills `point` (world metres; a point on a border belongs to the
    /// block above it), if any.
    pub fn block_at(&self, point: [f64; 3]) -> Option<BlockPos> {
        let q = BlockPos::containing(crate::block::BlockSize::Quarter, point).ok()?;
        let qb = q.qbox();
        self.in_coarse(q.coarse()).find(|p| p.qbox().overlaps(&qb))
    }

    fn in_coarse(&self, cell: [i32; 3]) -> impl Iterator<Item = BlockPos> + '_ {
        self.coarse.get(&cell).into_iter().flatten().copied()
    }

    /// The block overlapping `pos`'s box, if any (the lowest position first).
    pub fn overlapping(&self, pos: BlockPos) -> Option<BlockPos> {
        let qb = pos.qbox();
        self.in_coarse(pos.coarse())
            .find(|p| p.qbox().overlaps(&qb))
    }

    /// Checks that a block could be placed at `pos`: in range, no overlap, a known
    /// material, a valid shape, and not deeper than `max_ground_depth` in the ground.
    ///
    /// # Errors
    /// [`BlockError::OutOfRange`], [`BlockError::Overlaps`],
    /// [`BlockError::UnknownMaterial`], [`BlockError::BadShape`] or
    /// [`BlockError::InsideGround`].
    pub fn check_place(
        &self,
        pos: BlockPos,
        spec: &BlockSpec,
        materials: &MaterialTable,
        ground: &dyn Ground,
        max_ground_depth: f64,
    ) -> Result<(), BlockError> {
        pos.check()?;
        materials.require(spec.material)?;
        spec.shape.validate()?;
        if let Some(other) = self.overlapping(pos) {
            return Err(BlockError::Overlaps { at: pos, other });
        }
        check_not_buried(ground, pos, max_ground_depth)
    }

    /// Places a block after [`Self::check_place`], notes whether it touches the ground
    /// (`ground_probe` metres below its bottom face), and gives it the next id.
    ///
    /// # Errors
    /// As [`Self::check_place`]; nothing changes then.
    pub fn place(
        &mut self,
        pos: BlockPos,
        spec: &BlockSpec,
        materials: &MaterialTable,
        ground: &dyn Ground,
        settings: &crate::BlockSettings,
    ) -> Result<BlockId, BlockError> {
        self.check_place(pos, spec, materials, ground, settings.max_ground_depth)?;
        Ok(self.place_unchecked(pos, spec, ground, settings.ground_probe))
    }

    /// Places a block that [`Self::check_place`] accepted: notes whether it touches the
    /// ground and gives it the next id.
    pub(crate) fn place_unchecked(
        &mut self,
        pos: BlockPos,
        spec: &BlockSpec,
        ground: &dyn Ground,
        ground_probe: f64,
    ) -> BlockId {
        let id = BlockId(self.next_id);
        let block = Block {
            id,
            material: spec.material,
            shape: spec.shape,
            paint: spec.paint,
            damage: 0.0,
            on_ground: touches_ground(ground, pos, ground_probe),
            on_rubble: false,
        };
        self.insert(pos, block);
        id
    }

    /// Inserts a block record as it is (loading, re-attaching). The caller has checked
    /// that nothing overlaps.
    pub(crate) fn insert(&mut self, pos: BlockPos, block: Block) {
        self.next_id = self.next_id.max(block.id.0 + 1);
        self.ids.insert(block.id, pos);
        let list = self.coarse.entry(pos.coarse()).or_default();
        if let Err(i) = list.binary_search(&pos) {
            list.insert(i, pos);
        }
        self.blocks.insert(pos, block);
        self.revision += 1;
        self.touch(pos);
    }

    /// Removes the block at `pos` and returns it (`None` if there is none; the revision
    /// then stays).
    pub fn remove(&mut self, pos: BlockPos) -> Option<Block> {
        let block = self.blocks.remove(&pos)?;
        self.ids.remove(&block.id);
        let cell = pos.coarse();
        if let Some(list) = self.coarse.get_mut(&cell) {
            list.retain(|p| *p != pos);
            if list.is_empty() {
                self.coarse.remove(&cell);
            }
        }
        self.revision += 1;
        self.touch(pos);
        Some(block)
    }

    /// Sets a block's chisel shape. Returns whether it changed (the revision counts only
    /// a change: rounding a round edge changes nothing).
    ///
    /// # Errors
    /// [`BlockError::NoBlock`] or [`BlockError::BadShape`]; nothing changes then.
    pub fn set_shape(&mut self, pos: BlockPos, shape: ChiselShape) -> Result<bool, BlockError> {
        shape.validate()?;
        let b = self.blocks.get_mut(&pos).ok_or(BlockError::NoBlock(pos))?;
        if b.shape == shape {
            return Ok(false);
        }
        b.shape = shape;
        self.revision += 1;
        self.touch(pos);
        Ok(true)
    }

    /// Mutable access for the crate's own bookkeeping (damage, rubble contact); bumps the
    /// revision when `f` reports a change.
    pub(crate) fn update(&mut self, pos: BlockPos, f: impl FnOnce(&mut Block) -> bool) -> bool {
        let Some(b) = self.blocks.get_mut(&pos) else {
            return false;
        };
        let changed = f(b);
        if changed {
            self.revision += 1;
            self.touch(pos);
        }
        changed
    }

    /// The blocks that touch `pos`'s block through a face (positive contact area), in
    /// ascending order. `pos` need not hold a block.
    pub fn face_neighbours(&self, pos: BlockPos) -> Vec<BlockPos> {
        let mut out = Vec::new();
        self.for_each_neighbour(pos, |n| out.push(n));
        out.sort();
        out
    }

    /// Calls `f` for each face neighbour of `pos` (in no fixed order).
    pub(crate) fn for_each_neighbour(&self, pos: BlockPos, mut f: impl FnMut(BlockPos)) {
        let qb = pos.qbox();
        for face in crate::block::Face::ALL {
            // The one-quarter-thick slab just outside the face lies in one 1 m cell.
            let axis = face.axis();
            let mut slab = qb;
            if face.positive() {
                slab.min[axis] = qb.max[axis];
                slab.max[axis] = qb.max[axis] + 1;
            } else {
                slab.max[axis] = qb.min[axis];
                slab.min[axis] = qb.min[axis] - 1;
            }
            let cell = slab.min.map(|m| m.div_euclid(4));
            for p in self.in_coarse(cell) {
                if p != pos && p.qbox().overlaps(&slab) {
                    f(p);
                }
            }
        }
    }

    /// Blocks whose box meets `region` (world metres, borders included), ascending. An
    /// empty region (`min > max` on an axis) holds none.
    pub fn blocks_in(&self, region: WorldBox) -> Vec<BlockPos> {
        let cell = |c: f64| (c as i64).clamp(i32::MIN as i64, i32::MAX as i64) as i32;
        // A block lies inside one 1 m cell, so one that meets the region lies in a cell
        // from ⌈min⌉ − 1 (its top face on `min`) to ⌊max⌋.
        let lo = region.min.map(|c| cell(c.ceil() - 1.0));
        let hi = region.max.map(|c| cell(c.floor()));
        if (0..3).any(|i| lo[i] > hi[i]) {
            return Vec::new();
        }
        let mut out = Vec::new();
        let start = [lo[0], i32::MIN, i32::MIN];
        let end = [hi[0], i32::MAX, i32::MAX];
        for (cell, list) in self.coarse.range(start..=end) {
            if (1..3).any(|i| cell[i] < lo[i] || cell[i] > hi[i]) {
                continue;
            }
            for &p in list {
                let (a, b) = (p.min_corner(), p.max_corner());
                if (0..3).all(|i| a[i] <= region.max[i] && region.min[i] <= b[i]) {
                    out.push(p);
                }
            }
        }
        out.sort();
        out
    }

    /// Looks at the ground again under every block whose ground probes may lie in
    /// `region` (a changed part of the terrain): updates each one's `on_ground` and
    /// returns the blocks that lost it, ascending.
    pub fn update_ground(
        &mut self,
        ground: &dyn Ground,
        region: WorldBox,
        probe: f64,
    ) -> Vec<BlockPos> {
        // A block's probes are at most `probe` below it.
        let mut grown = region;
        grown.max[1] += probe;
        let mut lost = Vec::new();
        for pos in self.blocks_in(grown) {
            let now = touches_ground(ground, pos, probe);
            let before = self.blocks[&pos].on_ground;
            if now != before {
                self.update(pos, |b| {
                    b.on_ground = now;
                    true
                });
                if before {
                    lost.push(pos);
                }
            }
        }
        lost
    }

    /// The 1 m cells that hold blocks, for the ray walk.
    pub(crate) fn coarse_cell(&self, cell: [i32; 3]) -> Option<&[BlockPos]> {
        self.coarse.get(&cell).map(Vec::as_slice)
    }

    /// Whether the quarter box overlaps any block (crate tests).
    #[cfg(test)]
    pub(crate) fn any_overlap(&self, qb: crate::block::QBox) -> bool {
        let cell = qb.min.map(|m| m.div_euclid(4));
        self.in_coarse(cell).any(|p| p.qbox().overlaps(&qb))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::BlockSize;
    use crate::ground::NoGround;
    use crate::{BlockSettings, MaterialTable};

    fn pos(size: BlockSize, cell: [i32; 3]) -> BlockPos {
        BlockPos::new(size, cell).unwrap()
    }

    fn place(s: &mut BlockStore, p: BlockPos) -> Result<BlockId, BlockError> {
        s.place(
            p,
            &BlockSpec::of(MaterialTable::STONE),
            &MaterialTable::standard(),
            &NoGround,
            &BlockSettings::default(),
        )
    }

    /// A block whose face lies on the region's lowest side meets it (borders included);
    /// one a hair beyond does not; an inverted region holds nothing (and does not panic).
    #[test]
    fn blocks_in_counts_a_face_on_the_border_and_an_empty_region_holds_none() {
        let mut s = BlockStore::new();
        let full = pos(BlockSize::Full, [0, 0, 0]); // x 0..1 m
        let quarter = pos(BlockSize::Quarter, [7, 0, 0]); // x 1.75..2 m
        place(&mut s, full).unwrap();
        place(&mut s, quarter).unwrap();
        let r = |x0: f64, x1: f64| WorldBox {
            min: [x0, 0.0, 0.0],
            max: [x1, 1.0, 1.0],
        };
        assert_eq!(s.blocks_in(r(1.0, 1.5)), [full]);
        let mut both = vec![full, quarter];
        both.sort();
        assert_eq!(s.blocks_in(r(1.0, 1.75)), both);
        assert_eq!(s.blocks_in(r(1.01, 1.74)), []);
        assert_eq!(s.blocks_in(r(-3.0, -0.01)), []);
        assert_eq!(s.blocks_in(r(-3.0, 0.0)), [full]);
        assert_eq!(s.blocks_in(r(5.0, 3.0)), []);
        assert_eq!(s.blocks_in(r(f64::NEG_INFINITY, f64::INFINITY)), both);
    }

    #[test]
    fn overlap_is_refused_across_sizes_and_changes_nothing() {
        let mut s = BlockStore::new();
        place(&mut s, pos(BlockSize::Full, [0, 0, 0])).unwrap();
        let r = s.revision();
        let e = place(&mut s, pos(BlockSize::Quarter, [3, 3, 3])).unwrap_err();
        assert!(matches!(e, BlockError::Overlaps { .. }));
        assert!(place(&mut s, pos(BlockSize::Half, [1, 1, 1])).is_err());
        assert_eq!(s.revision(), r);
        assert_eq!(s.len(), 1);
        // Next to it is fine, at all sizes.
        place(&mut s, pos(BlockSize::Half, [2, 0, 0])).unwrap();
        place(&mut s, pos(BlockSize::Quarter, [4, 2, 0])).unwrap();
        assert!(s.any_overlap(pos(BlockSize::Quarter, [4, 2, 0]).qbox()));
        assert_eq!(
            s.block_at([0.99, 0.5, 0.1]),
            Some(pos(BlockSize::Full, [0, 0, 0]))
        );
        assert_eq!(
            s.block_at([1.1, 0.6, 0.1]),
            Some(pos(BlockSize::Quarter, [4, 2, 0]))
        );
        assert_eq!(s.block_at([1.1, 0.9, 0.1]), None);
    }

    #[test]
    fn face_neighbours_across_sizes() {
        let mut s = BlockStore::new();
        let big = pos(BlockSize::Full, [0, 0, 0]);
        let half_right = pos(BlockSize::Half, [2, 1, 1]);
        let quarter_top = pos(BlockSize::Quarter, [0, 4, 0]);
        let edge_only = pos(BlockSize::Full, [1, 1, 0]);
        let far = pos(BlockSize::Full, [3, 0, 0]);
        for p in [big, half_right, quarter_top, edge_only, far] {
            place(&mut s, p).unwrap();
        }
        assert_eq!(s.face_neighbours(big), vec![half_right, quarter_top]);
        // The half block (x 1–1.5, y 0.5–1, z 0.5–1) carries the block at (1, 1, 0) on its
        // top face, which touches the big block only along an edge.
        assert_eq!(s.face_neighbours(half_right), vec![big, edge_only]);
        assert_eq!(s.face_neighbours(edge_only), vec![half_right]);
        assert!(s.face_neighbours(far).is_empty());
    }

    #[test]
    fn shape_changes_count_only_when_real() {
        let mut s = BlockStore::new();
        let p = pos(BlockSize::Full, [0, 0, 0]);
        place(&mut s, p).unwrap();
        let r = s.revision();
        let edge = crate::chisel::Edge::new(0, true, true);
        assert!(s.set_shape(p, ChiselShape::SHARP.with_round(edge)).unwrap());
        assert_eq!(s.revision(), r + 1);
        assert!(!s.set_shape(p, ChiselShape::SHARP.with_round(edge)).unwrap());
        assert_eq!(s.revision(), r + 1);
        assert!(s.remove(pos(BlockSize::Full, [5, 5, 5])).is_none());
        assert_eq!(s.revision(), r + 1);
    }
}
