//! Blocks in the world file, as the editor keeps them: the app's resources ([`LoamBlocks`],
//! [`Physics`]) handed to the session layer's one loader and writer ([`loam_session::load`],
//! [`loam_session::flush`], [`loam_session::bake`], whose docs give the rules).
//!
//! - **As it happens:** every op, terrain or block, is appended to the op log in the order it
//!   was applied, under one sequence numbering ([`flush`], every frame). A terrain op takes
//!   its number in [`World::apply`], a block op in [`LoamBlocks::apply`]
//!   ([`World::reserve_seq`]); the ops that drop a loose lump of terrain are logged with it.
//! - **At a save** (Ctrl+S, and when the editor closes): [`bake`] writes the bricks, the
//!   history and the block world's snapshot in one transaction.
//! - **At a load:** [`load`] restores the last snapshot, then replays the log after it: block
//!   ops at the physics step they were taken at, the physics stepped at its fixed timestep
//!   between them on colliders built from the field, the same in the editor, the server and
//!   `loam world`.

use loam_field::Field;
use loam_session::LoadedBlocks;
use loam_store::{BlockLogEntry, LoadedWorld, Store, StoreError};
use loam_world::World;

use super::LoamBlocks;
use crate::walk::Physics;

/// A world file's blocks, restored for the app.
pub struct Restored {
    /// The block world (journaling on), its step numbering carried on from the file.
    pub blocks: LoamBlocks,
    /// The physics world holding its pieces and held blocks' colliders, and the terrain
    /// colliders the replay built from the field (the app replaces them with those of the
    /// shown chunks, and holds the pieces until then).
    pub physics: Physics,
    /// Ops of the log whose block side could not be replayed (sequence number, reason): a
    /// block op that no longer applies is skipped, and the world opens without it.
    pub skipped: Vec<(u64, String)>,
}

/// Loads the world in `store` over `base` (a fresh field of its generator and settings):
/// [`loam_session::load`], its blocks wrapped in the app's resources.
///
/// # Errors
/// As [`loam_session::load`].
pub fn load(store: &mut Store, base: Field) -> Result<(LoadedWorld, Restored), StoreError> {
    let loaded = loam_session::load(store, base)?;
    Ok((loaded.world, Restored::from(loaded.blocks)))
}

impl From<LoadedBlocks> for Restored {
    /// The loaded blocks in the app's resources: journaling on, the physics world's steps
    /// counting on from the replay's.
    fn from(b: LoadedBlocks) -> Self {
        let mut blocks = LoamBlocks::with(b.world);
        blocks.step_base = b.step_base;
        blocks.journaling = true;
        let mut physics = Physics::with(b.physics);
        physics.colliders = b.colliders;
        let skipped = b
            .skipped
            .into_iter()
            .map(|s| (s.seq, s.error.to_string()))
            .collect();
        Self {
            blocks,
            physics,
            skipped,
        }
    }
}

/// Appends to `store` every op applied since the last flush, terrain (`world`'s log) and
/// block (`journal`, [`LoamBlocks::journal`], drained), as [`loam_session::flush`]. Returns
/// how many were written.
///
/// # Errors
/// As [`loam_session::flush`]: the ops not written are kept for the next flush.
pub fn flush(
    store: &mut Store,
    world: &World,
    journal: &mut Vec<BlockLogEntry>,
) -> Result<usize, StoreError> {
    loam_session::flush(store, world.log(), journal)
}

/// Flushes and bakes the world as it is now into `store` ([`loam_session::bake`]): bricks,
/// history and the block world's snapshot at the current physics step. Returns the number
/// of bricks written.
///
/// # Errors
/// As [`loam_session::bake`]; nothing is baked when the flush fails.
pub fn bake(
    store: &mut Store,
    world: &World,
    blocks: &mut LoamBlocks,
    physics: &Physics,
) -> Result<usize, StoreError> {
    let step = blocks.step(physics);
    let what = loam_session::Bake {
        log: world.log(),
        field: world.field(),
        history: world.history(),
        blocks: &blocks.world,
        step,
    };
    loam_session::bake(store, what, &mut blocks.journal)
}
