//! Blocks over the network: where block records lie (for interest) and the block hash.
//!
//! A held block belongs to the brick of its lowest corner, a piece to the brick of its
//! pose's position (its frame's origin). The block hash over a region covers the held
//! blocks and the resting rubble there; falling pieces are left out (a client plays a fall
//! back in its own physics world, and takes the server's record when the piece comes to
//! rest), so once nothing falls the hashes of a client and the server over its region are
//! equal exactly when their records are.

use loam_blocks::{BlockDelta, BlockPos, BlockWorld, HeldBlock, Piece, PieceState, WorldBox};
use loam_field::BRICK_SAMPLES;

use crate::BrickBox;

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
    for rec in held_in(world, region, voxel_size) {
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

/// The lowest and highest brick coordinates [`brick_of_block`] gives: it clamps sample
/// indices to `i32`, so these bricks hold every block beyond them.
const FIRST_BRICK: i32 = i32::MIN.div_euclid(BRICK_SAMPLES);
const LAST_BRICK: i32 = i32::MAX.div_euclid(BRICK_SAMPLES);

/// The records of the held blocks of `world` in `region` (every one when `None`), ascending
/// by position. A region's blocks are looked up in the store's 1 m cell index
/// ([`loam_blocks::BlockStore::blocks_in`], over the region's box grown by a voxel), not
/// found by a pass over every block of the world, then kept by the brick of their lowest
/// corner exactly.
fn held_in(
    world: &BlockWorld,
    region: Option<BrickBox>,
    voxel_size: f64,
) -> Box<dyn Iterator<Item = HeldBlock> + '_> {
    let record = |pos, block: &loam_blocks::Block| HeldBlock {
        pos,
        block: block.clone(),
        rests_on: world.rests_on(pos).collect(),
    };
    let Some(r) = region else {
        return Box::new(world.store().iter().map(move |(pos, b)| record(pos, b)));
    };
    let brick_m = f64::from(BRICK_SAMPLES) * voxel_size;
    // The outermost bricks hold every block beyond them: their side of the box is open.
    let around = WorldBox {
        min: r.min.map(|b| {
            if b <= FIRST_BRICK {
                f64::NEG_INFINITY
            } else {
                f64::from(b) * brick_m - voxel_size
            }
        }),
        max: r.max.map(|b| {
            if b >= LAST_BRICK {
                f64::INFINITY
            } else {
                (f64::from(b) + 1.0) * brick_m + voxel_size
            }
        }),
    };
    let mut found = world.store().blocks_in(around);
    found.retain(|&pos| r.contains(brick_of_block(pos, voxel_size)));
    Box::new(
        found
            .into_iter()
            .filter_map(move |pos| Some(record(pos, world.store().get(pos)?))),
    )
}

/// The held blocks and pieces of `world` in `region`, as a delta (for a catch-up).
pub fn blocks_in(world: &BlockWorld, region: BrickBox, voxel_size: f64) -> BlockDelta {
    BlockDelta {
        held: held_in(world, Some(region), voxel_size).collect(),
        pieces: world
            .pieces()
            .filter(|p| region.contains(brick_of_piece(p, voxel_size)))
            .cloned()
            .collect(),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loam_blocks::{BlockSettings, BlockSize, BlockSpec, MaterialTable};
    use loam_physics::{PhysicsSettings, PhysicsWorld};

    /// A block world holding stone blocks at `cells` (all held: on flat ground at y = 0, or
    /// on each other).
    fn placed(cells: impl IntoIterator<Item = (BlockSize, [i32; 3])>) -> BlockWorld {
        let ground = |p: [f64; 3]| p[1] as f32;
        let mut physics = PhysicsWorld::new(PhysicsSettings::default()).unwrap();
        let mut w = BlockWorld::new(MaterialTable::standard(), BlockSettings::default()).unwrap();
        let stone = BlockSpec::of(MaterialTable::STONE);
        for (size, cell) in cells {
            let at = BlockPos::new(size, cell).unwrap();
            w.place(&mut physics, &ground, at, stone).unwrap();
        }
        w
    }

    /// What a pass over every block with the brick test finds in `r` (the reference).
    fn full_pass(w: &BlockWorld, r: BrickBox, vs: f64) -> Vec<BlockPos> {
        w.store()
            .iter()
            .map(|(p, _)| p)
            .filter(|&p| r.contains(brick_of_block(p, vs)))
            .collect()
    }

    /// Held blocks on flat ground (y = 0) on both sides of brick borders at every voxel
    /// size below (both signs, full and quarter blocks, some on a border), and a pillar
    /// 40 m high.
    fn world() -> BlockWorld {
        let mut cells = Vec::new();
        for x in -40i32..40 {
            for z in [-17, -16, -9, -8, -1, 0, 7, 8, 15, 16, 31] {
                if (x * 7 + z).rem_euclid(3) != 0 {
                    cells.push((BlockSize::Full, [x, 0, z]));
                }
            }
        }
        for x in [-65, -64, -63, -1, 0, 63, 64, 127, 128] {
            cells.push((BlockSize::Quarter, [x, 0, 2 * 4 + 1]));
        }
        for y in 1..40 {
            cells.push((BlockSize::Full, [5, y, 0]));
        }
        placed(cells)
    }

    /// `held_in` (the cell index) finds exactly what a pass over every block with the brick
    /// test finds, in the same order, for regions on and across brick borders.
    #[test]
    fn the_blocks_of_a_region_are_those_a_full_pass_finds() {
        let w = world();
        assert!(w.store().len() > 600, "{}", w.store().len());
        assert!(w.pieces().next().is_none(), "everything is held");
        for vs in [0.25, 0.5, 1.0, 1.5] {
            let mut seen = 0;
            for lo in -3..=1 {
                for size in 0..=2 {
                    for y in [-1, 0, 1] {
                        let r = BrickBox {
                            min: [lo, y.min(0), lo - 1],
                            max: [lo + size, y + size, lo + size],
                        };
                        let want = full_pass(&w, r, vs);
                        let got: Vec<BlockPos> = held_in(&w, Some(r), vs).map(|h| h.pos).collect();
                        assert_eq!(got, want, "voxel {vs} m, region {r:?}");
                        assert_eq!(
                            blocks_in(&w, r, vs).held.len(),
                            want.len(),
                            "voxel {vs} m, region {r:?}"
                        );
                        seen += want.len();
                    }
                }
            }
            assert!(seen > 100, "voxel {vs} m: the regions hold blocks ({seen})");
        }
        assert_eq!(held_in(&w, None, 1.0).count(), w.store().len());
        // An inverted region holds nothing.
        let inverted = BrickBox {
            min: [5, 0, 0],
            max: [3, 0, 0],
        };
        assert_eq!(held_in(&w, Some(inverted), 1.0).count(), 0);
    }

    /// At 1 mm voxels the outermost bricks (where sample indices are clamped to `i32`) hold
    /// the blocks beyond them, 3 000 km out, as a full pass finds.
    #[test]
    fn the_outermost_bricks_hold_the_blocks_beyond_them() {
        let w = placed([-3_000_000, 0, 3_000_000].map(|x| (BlockSize::Full, [x, 0, 0])));
        let vs = 0.001;
        for (x0, x1, want) in [
            (LAST_BRICK, LAST_BRICK, 1),
            (FIRST_BRICK, FIRST_BRICK, 1),
            (FIRST_BRICK, LAST_BRICK, 3),
            (1, LAST_BRICK - 1, 0),
        ] {
            let r = BrickBox {
                min: [x0, 0, 0],
                max: [x1, 0, 0],
            };
            let got: Vec<BlockPos> = held_in(&w, Some(r), vs).map(|h| h.pos).collect();
            assert_eq!(got, full_pass(&w, r, vs), "bricks {x0}..={x1}");
            assert_eq!(got.len(), want, "bricks {x0}..={x1}");
        }
    }
}
