//! Blocks in the world file (loam-store format 3), as the editor keeps them.
//!
//! - **As it happens:** every op, terrain or block, is appended to the op log in the order it
//!   was applied, under one sequence numbering ([`flush`], every frame). A terrain op takes
//!   its number in [`World::apply`], a block op in [`LoamBlocks::apply`]
//!   ([`World::reserve_seq`]); the ops that drop a loose lump of terrain are logged with it.
//! - **At a save** (Ctrl+S, and when the editor closes): [`bake`] writes the bricks, the
//!   history and the block world's snapshot (held blocks, shapes, damage, pieces and rubble
//!   poses exactly) in one transaction.
//! - **At a load:** [`load`] restores the last snapshot, then replays the log after it in
//!   order: terrain ops through the field, block ops on the ground of their time. Held blocks
//!   come back exactly (support is decided by the field and the ops alone). The falls are
//!   not re-simulated: the live falls depended on when the app's terrain colliders arrived,
//!   which the log does not record, so a piece that fell after the last save starts falling
//!   again from where its op left it, and ends as rubble near, not at, where it lay. Saving
//!   (which closing the editor does) keeps rubble poses exactly.

use loam_blocks::{BlockError, BlockOp, BlockWorld, BlocksFile, FieldGround, WorldBox};
use loam_field::Field;
use loam_store::{BlockLogEntry, LoadedWorld, Replayed, Store, StoreError};
use loam_world::World;

use super::LoamBlocks;
use crate::walk::Physics;

/// A world file's blocks, restored for the app.
pub struct Restored {
    /// The block world (journaling on), its step numbering carried on from the file.
    pub blocks: LoamBlocks,
    /// The physics world holding its pieces and held blocks' colliders (no terrain colliders
    /// yet: the app builds them from the shown chunks, and holds the pieces until then).
    pub physics: Physics,
    /// Ops of the log whose block side could not be replayed (sequence number, reason): a
    /// block op that no longer applies is skipped, and the world opens without it.
    pub skipped: Vec<(u64, String)>,
}

/// Loads the world in `store` over `base` (a fresh field of its generator and settings): the
/// field as [`Store::load`] does, and its blocks as the module docs say.
///
/// # Errors
/// As [`Store::load`]; [`StoreError::Visit`] when the blocks snapshot cannot be decoded or
/// restored (a damaged file is refused rather than opened without its blocks, which the next
/// save would make final).
pub fn load(store: &mut Store, base: Field) -> Result<(LoadedWorld, Restored), StoreError> {
    let saved = store.blocks()?;
    let mut physics = Physics::new();
    let mut blocks: Option<LoamBlocks> = None;
    let mut skipped = Vec::new();
    let mut step = saved.as_ref().map_or(0, |s| s.step);
    let loaded = store.load_with(base, |field, rec| -> Result<(), BlockError> {
        match rec {
            Replayed::Baked { .. } => {
                let world = match &saved {
                    Some(s) => BlockWorld::load(BlocksFile::decode(&s.data)?, &mut physics.world)?,
                    None => LoamBlocks::new().world,
                };
                blocks = Some(LoamBlocks::with(world));
            }
            Replayed::Terrain(e, out) => {
                let b = blocks.as_mut().expect("the snapshot comes first");
                if let Some(c) = out.changed {
                    let region = WorldBox::from_samples(c, field.settings().voxel_size);
                    if let Err(err) =
                        b.world
                            .terrain_changed(&mut physics.world, &FieldGround(field), region)
                    {
                        skipped.push((e.seq, format!("blocks after the terrain op: {err}")));
                    }
                }
            }
            Replayed::Block(e) => {
                let b = blocks.as_mut().expect("the snapshot comes first");
                step = step.max(e.step);
                let applied = BlockOp::decode(&e.op).and_then(|op| {
                    b.world
                        .apply(&mut physics.world, &FieldGround(field), &op)
                        .map(|_| ())
                });
                match applied {
                    Ok(()) => b.ops += 1,
                    Err(err) => skipped.push((e.seq, err.to_string())),
                }
            }
        }
        Ok(())
    })?;
    let mut blocks = blocks.expect("load_with always visits the bake");
    blocks.step_base = step;
    blocks.journaling = true;
    Ok((
        loaded,
        Restored {
            blocks,
            physics,
            skipped,
        },
    ))
}

/// Appends to `store` every op applied since the last flush, terrain (`world`'s log) and
/// block (`journal`, [`LoamBlocks::journal`], drained) merged in sequence order. Returns how
/// many were written.
///
/// # Errors
/// As [`Store::append`] and [`Store::append_block`]; [`StoreError::OutOfOrder`] when an op's
/// number is missing. The ops before the failing one stay written; the rest are kept for
/// the next flush.
pub fn flush(
    store: &mut Store,
    world: &World,
    journal: &mut Vec<BlockLogEntry>,
) -> Result<usize, StoreError> {
    let last = store.last_seq();
    let log = world.log();
    let start = log.partition_point(|e| e.seq <= last);
    let mut terrain = log[start..].iter().peekable();
    let mut block = std::mem::take(journal).into_iter().peekable();
    let mut written = 0;
    let result = loop {
        let take_block = match (terrain.peek(), block.peek()) {
            (Some(t), Some(b)) => b.seq < t.seq,
            (None, Some(_)) => true,
            (Some(_), None) => false,
            (None, None) => break Ok(written),
        };
        let r = if take_block {
            let e: &BlockLogEntry = block.peek().expect("peeked");
            store.append_block(e).map(|()| {
                block.next();
            })
        } else {
            store.append(terrain.next().expect("peeked"))
        };
        if let Err(e) = r {
            break Err(e);
        }
        written += 1;
    };
    *journal = block.collect();
    result
}

/// Flushes (see [`flush`]) and bakes the world as it is now into `store`: bricks, history
/// and the block world's snapshot at the current physics step, covering every op so far.
/// Returns the number of bricks written.
///
/// # Errors
/// As [`flush`] and [`Store::bake_with_blocks`]; nothing is baked when the flush fails.
pub fn bake(
    store: &mut Store,
    world: &World,
    blocks: &mut LoamBlocks,
    physics: &Physics,
) -> Result<usize, StoreError> {
    flush(store, world, &mut blocks.journal)?;
    let seq = store.last_seq();
    let file = blocks.world.save().encode();
    store.bake_with_blocks(
        world.field(),
        world.history(),
        seq,
        blocks.step(physics),
        &file,
    )
}
