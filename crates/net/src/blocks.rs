//! Blocks over the network: where block records lie (for interest), the block hash, and
//! the terrain colliders the server's physics world needs.
//!
//! A held block belongs to the brick of its lowest corner, a piece to the brick of its
//! pose's position (its frame's origin). The block hash over a region covers the held
//! blocks and the resting rubble there; falling pieces are left out (a client plays a fall
//! back in its own physics world, and takes the server's record when the piece comes to
//! rest), so once nothing falls the hashes of a client and the server over its region are
//! equal exactly when their records are.

use std::collections::BTreeSet;

use loam_blocks::{BlockDelta, BlockPos, BlockWorld, HeldBlock, Piece, PieceState, field_collider};
use loam_field::{BRICK_SAMPLES, Field};
use loam_mesh::{CHUNK_CELLS, CHUNK_HALO};
use loam_physics::PhysicsWorld;

use crate::protocol::BrickBox;

fn brick_of_point(p: [f64; 3], voxel_size: f64) -> [i32; 3] {
    p.map(|c| {
        let s = (c / voxel_size).floor();
        (s.clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i32).div_euclid(BRICK_SAMPLES)
    })
}

/// The brick a held block belongs to (that of its lowest corner).
pub fn brick_of_block(pos: BlockPos, voxel_size: f64) -> [i32; 3] {
    brick_of_point(pos.min_corner(), voxel_size)
}

/// The brick a piece belongs to (that of its pose's position).
pub fn brick_of_piece(piece: &Piece, voxel_size: f64) -> [i32; 3] {
    brick_of_point(piece.pose.position.map(f64::from), voxel_size)
}

/// The box of bricks holding every record of `delta` (`None` when it names no place: it is
/// empty or only removes pieces, which every client is told).
pub fn delta_box(delta: &BlockDelta, voxel_size: f64) -> Option<BrickBox> {
    let keys = delta
        .held
        .iter()
        .map(|h| brick_of_block(h.pos, voxel_size))
        .chain(delta.unheld.iter().map(|&p| brick_of_block(p, voxel_size)))
        .chain(delta.pieces.iter().map(|p| brick_of_piece(p, voxel_size)));
    let mut out: Option<BrickBox> = None;
    for k in keys {
        let b = out.get_or_insert(BrickBox { min: k, max: k });
        b.min = [0, 1, 2].map(|i| b.min[i].min(k[i]));
        b.max = [0, 1, 2].map(|i| b.max[i].max(k[i]));
    }
    out
}

/// BLAKE3 over the held blocks and the resting rubble of `world` in `region` (every one
/// when `None`): `loam-blocks-hash-v1`, then each held block ascending by position as the
/// MessagePack of its [`HeldBlock`] record, then each rubble piece ascending by id as the
/// MessagePack of its [`Piece`] record (poses as f32 bits, damage, contacts: everything).
/// Falling pieces are left out (see the module docs).
pub fn block_hash(world: &BlockWorld, region: Option<BrickBox>, voxel_size: f64) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(b"loam-blocks-hash-v1");
    for (pos, block) in world.store().iter() {
        if region.is_some_and(|r| !r.contains(brick_of_block(pos, voxel_size))) {
            continue;
        }
        let rec = HeldBlock {
            pos,
            block: block.clone(),
            rests_on: world.rests_on(pos).collect(),
        };
        h.update(&rmp_serde::to_vec_named(&rec).expect("records serialise"));
    }
    for p in world.pieces() {
        if !matches!(p.state, PieceState::Rubble { .. })
            || region.is_some_and(|r| !r.contains(brick_of_piece(p, voxel_size)))
        {
            continue;
        }
        h.update(&rmp_serde::to_vec_named(p).expect("records serialise"));
    }
    *h.finalize().as_bytes()
}

/// The held blocks and pieces of `world` in `region`, as a delta (for a catch-up).
pub fn blocks_in(world: &BlockWorld, region: BrickBox, voxel_size: f64) -> BlockDelta {
    BlockDelta {
        held: world
            .store()
            .iter()
            .filter(|(pos, _)| region.contains(brick_of_block(*pos, voxel_size)))
            .map(|(pos, block)| HeldBlock {
                pos,
                block: block.clone(),
                rests_on: world.rests_on(pos).collect(),
            })
            .collect(),
        pieces: world
            .pieces()
            .filter(|p| region.contains(brick_of_piece(p, voxel_size)))
            .cloned()
            .collect(),
        ..Default::default()
    }
}

/// The chunk holding a world point.
pub(crate) fn chunk_of(p: [f64; 3], voxel_size: f64) -> [i32; 3] {
    let chunk_m = f64::from(CHUNK_CELLS) * voxel_size;
    p.map(|c| (c / chunk_m).floor().clamp(-1e9, 1e9) as i32)
}

/// How near a chunk's border a block or piece brings in the neighbour's collider, metres.
const NEAR_M: f64 = 8.0;

/// Terrain colliders of the server's physics world: the chunks around blocks and pieces,
/// meshed with Surface Nets from the field (a few milliseconds a chunk). Nothing is built
/// where it is asked for: a chunk wanted near a block or piece is `missing`, a loaded chunk
/// a terrain op changed is `dirty`, and the server builds them between physics steps within
/// a time budget ([`Colliders::refresh_until`]), missing ones first; it steps only once no
/// chunk a piece needs is missing. So a burst of digs near blocks costs one rebuild per chunk
/// and tick at most, and never more than the budget of the ordering thread's time.
#[derive(Debug, Default)]
pub(crate) struct Colliders {
    loaded: BTreeSet<[i32; 3]>,
    missing: BTreeSet<[i32; 3]>,
    dirty: BTreeSet<[i32; 3]>,
    /// The changed chunk last rebuilt by [`Colliders::refresh_until`]: the next is the one
    /// after it, so chunks changed again every tick cannot keep the others waiting.
    last_dirty: Option<[i32; 3]>,
}

impl Colliders {
    /// Asks for the colliders of the chunks within [`NEAR_M`] of `point` (its own and the
    /// neighbours across faces, edges and corners that near) that are not there yet.
    pub fn ensure(&mut self, field: &Field, point: [f64; 3]) {
        let vs = field.settings().voxel_size;
        let chunk_m = f64::from(CHUNK_CELLS) * vs;
        let c = chunk_of(point, vs);
        let span = |i: usize| {
            let local = point[i] - f64::from(c[i]) * chunk_m;
            let lo = if local < NEAR_M { -1 } else { 0 };
            let hi = if local > chunk_m - NEAR_M { 1 } else { 0 };
            lo..=hi
        };
        for dz in span(2) {
            for dy in span(1) {
                for dx in span(0) {
                    let k = [c[0] + dx, c[1] + dy, c[2] + dz];
                    if self.loaded.insert(k) {
                        self.missing.insert(k);
                    }
                }
            }
        }
    }

    /// Asks for the colliders around every held block and piece a delta names.
    pub fn ensure_delta(&mut self, field: &Field, d: &BlockDelta) {
        for h in &d.held {
            self.ensure(field, h.pos.min_corner());
        }
        for p in &d.pieces {
            self.ensure(field, p.pose.position.map(f64::from));
        }
    }

    /// Whether a chunk waits to be built or rebuilt.
    pub fn stale(&self) -> bool {
        !self.dirty.is_empty() || !self.missing.is_empty()
    }

    /// Whether a wanted chunk has no collider yet (pieces must not step then).
    pub fn ready(&self) -> bool {
        self.missing.is_empty()
    }

    /// Builds every missing and changed chunk (the bodies touching them wake).
    pub fn refresh(&mut self, physics: &mut PhysicsWorld, field: &Field) {
        for k in std::mem::take(&mut self.missing) {
            physics.set_chunk(k, field_collider(field, k));
        }
        for k in std::mem::take(&mut self.dirty) {
            physics.set_chunk(k, field_collider(field, k));
        }
    }

    /// Builds missing, then changed chunks until `deadline`; returns [`Self::ready`].
    pub fn refresh_until(
        &mut self,
        physics: &mut PhysicsWorld,
        field: &Field,
        deadline: std::time::Instant,
    ) -> bool {
        while std::time::Instant::now() < deadline {
            let Some(k) = self.missing.pop_first().or_else(|| self.next_dirty()) else {
                break;
            };
            physics.set_chunk(k, field_collider(field, k));
        }
        self.ready()
    }

    /// Takes the changed chunk after the last one rebuilt (round robin, in key order).
    fn next_dirty(&mut self) -> Option<[i32; 3]> {
        use std::ops::Bound::{Excluded, Unbounded};
        let after = self
            .last_dirty
            .and_then(|l| self.dirty.range((Excluded(l), Unbounded)).next().copied());
        let k = after.or_else(|| self.dirty.first().copied())?;
        self.dirty.remove(&k);
        self.last_dirty = Some(k);
        Some(k)
    }

    /// The loaded chunks whose samples (halo included) meet the samples `lo..=hi`.
    fn meeting(&self, lo: [i32; 3], hi: [i32; 3]) -> Vec<[i32; 3]> {
        let cells = CHUNK_CELLS as i32;
        let halo = CHUNK_HALO as i32;
        let from = lo.map(|v| (v - cells - halo - 1).div_euclid(cells) + 1);
        let to = hi.map(|v| (v + halo).div_euclid(cells));
        self.loaded
            .iter()
            .filter(|k| (0..3).all(|i| from[i] <= k[i] && k[i] <= to[i]))
            .copied()
            .collect()
    }

    /// Marks the loaded chunks that the changed samples `lo..=hi` meet for a rebuild.
    pub fn changed(&mut self, lo: [i32; 3], hi: [i32; 3]) {
        for k in self.meeting(lo, hi) {
            if !self.missing.contains(&k) {
                self.dirty.insert(k);
            }
        }
    }

    /// Marks the loaded chunks that the changed samples `lo..=hi` meet as missing: no
    /// piece steps until they are rebuilt (a lump is about to fall from where the terrain
    /// was, and must not start inside the old collider).
    pub fn invalidate(&mut self, lo: [i32; 3], hi: [i32; 3]) {
        for k in self.meeting(lo, hi) {
            self.dirty.remove(&k);
            self.missing.insert(k);
        }
    }
}
