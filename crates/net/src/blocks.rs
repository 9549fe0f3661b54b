//! Blocks over the network: where block records lie (for interest) and the block hash.
//!
//! A held block belongs to the brick of its lowest corner, a piece to the brick of its
//! pose's position (its frame's origin). The block hash over a region covers the held
//! blocks and the resting rubble there; falling pieces are left out (a client plays a fall
//! back in its own physics world, and takes the server's record when the piece comes to
//! rest), so once nothing falls the hashes of a client and the server over its region are
//! equal exactly when their records are.

use loam_blocks::{BlockDelta, BlockPos, BlockWorld, HeldBlock, Piece, PieceState};
use loam_field::BRICK_SAMPLES;

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
