//! The one loader of a world file with its blocks.
//!
//! A world file holds the last bake (bricks, undo history, and the block world's snapshot
//! at a physics step) and the op log after it, terrain and block ops under one numbering,
//! each block op with the physics step it was taken at. [`load`] restores the bake and
//! replays the log in sequence order:
//!
//! ```text
//!  bake ──▶ field (Store::load_with), BlockWorld::load(snapshot) at step S
//!  terrain op ──▶ applied to the field ──▶ terrain_changed: what it undermines falls,
//!                 the colliders it meets marked stale
//!  block op at step T ──▶ physics stepped (fixed timestep, colliders from the field) until
//!                 S + steps = T ──▶ BlockWorld::apply (refused: skipped, reported)
//! ```
//!
//! This is the server's rule, and the one rule now: it makes the blocks of a world the same
//! wherever it is loaded, because everything it reads is in the file (the field, the ops,
//! their steps) and the colliders are built from the field alone. The editor's loader of
//! before did not step the physics (a piece that fell after the last save lay where its op
//! left it, and a later block op met the ground of a different moment), so the same file
//! opened in the editor and in `loam serve` could differ. A piece that was still falling in
//! the editor when the log ends keeps falling from where the replay leaves it.

use loam_blocks::{
    BlockError, BlockOp, BlockSettings, BlockWorld, BlocksFile, FieldGround, MaterialTable,
};
use loam_field::Field;
use loam_physics::{PhysicsSettings, PhysicsWorld};
use loam_store::{LoadedWorld, Replayed, Store, StoreError};

use crate::colliders::TerrainColliders;
use crate::simulation::{step_replay, terrain_changed};

/// A world file loaded: its field, history and log position ([`LoadedWorld`]), and its
/// blocks.
pub struct LoadedSession {
    /// The field, history and last sequence number, as [`Store::load`] gives them.
    pub world: LoadedWorld,
    /// The blocks, their physics and colliders, as the log left them.
    pub blocks: LoadedBlocks,
}

/// The block side of a loaded world.
pub struct LoadedBlocks {
    /// The block world (not tracking its changes; turn it on with
    /// [`BlockWorld::set_tracking`] where deltas are sent).
    pub world: BlockWorld,
    /// The physics world holding its held blocks and pieces, and the terrain colliders the
    /// replay built.
    pub physics: PhysicsWorld,
    /// Which terrain chunks have colliders in `physics`, and which the log made stale.
    pub colliders: TerrainColliders,
    /// The world file's physics step of `physics`' step 0 (the bake's step): the world's step
    /// now is `step_base + physics.step_count()`.
    pub step_base: u64,
    /// Ops of the log whose block side did not replay, in order. The world opens without
    /// them (the field is unaffected: terrain ops always apply).
    pub skipped: Vec<SkippedOp>,
}

impl LoadedBlocks {
    /// The world file's physics step now.
    pub fn step(&self) -> u64 {
        self.step_base + self.physics.step_count()
    }
}

/// An op of the log whose block side did not replay.
#[derive(Debug)]
pub struct SkippedOp {
    /// The op's sequence number.
    pub seq: u64,
    /// Why: a block op that no longer applies (the replayed falls ended slightly
    /// differently), or blocks that could not follow a terrain op.
    pub error: BlockError,
}

/// Loads the world in `store` over `base` (a fresh field of its generator and settings), as
/// the module docs say.
///
/// # Errors
/// As [`Store::load_with`]; [`StoreError::Visit`] when the blocks snapshot cannot be decoded
/// or restored, or a physics step fails (a damaged file is refused rather than opened
/// without its blocks, which the next save would make final). A block op that no longer
/// applies is not an error: it is skipped and reported in [`LoadedBlocks::skipped`].
pub fn load(store: &mut Store, base: Field) -> Result<LoadedSession, StoreError> {
    let saved = store.blocks()?;
    let step_base = saved.as_ref().map_or(0, |s| s.step);
    let mut physics = PhysicsWorld::new(PhysicsSettings::default())
        .expect("the default physics settings are valid");
    let mut colliders = TerrainColliders::default();
    let mut world: Option<BlockWorld> = None;
    let mut skipped = Vec::new();
    let loaded = store.load_with(base, |field, rec| -> Result<(), BlockError> {
        match rec {
            Replayed::Baked { .. } => {
                let w = match &saved {
                    Some(s) => BlockWorld::load(BlocksFile::decode(&s.data)?, &mut physics)?,
                    None => BlockWorld::new(MaterialTable::standard(), BlockSettings::default())?,
                };
                for (pos, _) in w.store().iter() {
                    colliders.ensure(field, pos.min_corner());
                }
                for p in w.pieces() {
                    colliders.ensure(field, p.pose.position.map(f64::from));
                }
                world = Some(w);
            }
            Replayed::Terrain(e, out) => {
                let w = world.as_mut().expect("load_with visits the bake first");
                if let Some(c) = out.changed
                    && let Err(error) = terrain_changed(w, &mut physics, &mut colliders, field, c)
                {
                    skipped.push(SkippedOp { seq: e.seq, error });
                }
            }
            Replayed::Block(e) => {
                let w = world.as_mut().expect("load_with visits the bake first");
                while step_base + physics.step_count() < e.step {
                    step_replay(w, &mut physics, &mut colliders, field)?;
                }
                let applied = BlockOp::decode(&e.op).and_then(|op| {
                    if let Some(at) = op_point(w, &op) {
                        colliders.ensure(field, at);
                    }
                    w.apply(&mut physics, &FieldGround(field), &op)
                });
                match applied {
                    Ok(_) => {
                        for p in w.pieces() {
                            colliders.ensure(field, p.pose.position.map(f64::from));
                        }
                    }
                    Err(error) => skipped.push(SkippedOp { seq: e.seq, error }),
                }
            }
        }
        Ok(())
    })?;
    let world = world.expect("load_with always visits the bake");
    Ok(LoadedSession {
        world: loaded,
        blocks: LoadedBlocks {
            world,
            physics,
            colliders,
            step_base,
            skipped,
        },
    })
}

/// Where a block op acts, metres: the block it places, breaks or chisels, or the piece it
/// breaks off. `None` for a lump (its blocks are its own) and for a piece that is gone.
fn op_point(world: &BlockWorld, op: &BlockOp) -> Option<[f64; 3]> {
    let p = match op {
        BlockOp::Place { at, .. } | BlockOp::Break { at } | BlockOp::Chisel { at, .. } => {
            at.min_corner()
        }
        BlockOp::BreakOff { piece, .. } => world.piece(*piece)?.pose.position.map(f64::from),
        BlockOp::Lump { .. } => return None,
    };
    p.iter().all(|c| c.is_finite()).then_some(p)
}

/// A world file's own terrain could not be rebuilt ([`base_field`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BaseFieldError {
    /// The file could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The generator JSON the file keeps is not a generator spec.
    #[error("the world's generator settings do not read")]
    Spec(#[source] serde_json::Error),
    /// The generator could not be built (its DEM unreadable, its settings out of range).
    #[error("the world's generator")]
    Build(#[from] crate::GeneratorSpecError),
    /// The DEM file the world names is not the one it was made on.
    #[error(
        "the heightmap changed since the world was made (BLAKE3 {held} expected, {found} found)"
    )]
    OtherHeightmap {
        /// The BLAKE3 the world file records ("" for none).
        held: String,
        /// The BLAKE3 of the DEM read now ("" for none).
        found: String,
    },
    /// The field settings the file keeps are out of range.
    #[error("the world's field settings")]
    Field(#[from] loam_field::SettingsError),
}

/// The field of a world file's own generator and field settings, with no edits: what
/// [`load`] applies the file's bricks and ops over. The generator is rebuilt from the JSON
/// the file keeps ([`crate::GeneratorSpec`]); a DEM it names by path is read relative to
/// `dir` (a DEM carried in the spec needs no file) and must have the BLAKE3 the file
/// records.
///
/// # Errors
/// [`BaseFieldError`].
pub fn base_field(store: &Store, dir: &std::path::Path) -> Result<Field, BaseFieldError> {
    let spec: crate::GeneratorSpec =
        serde_json::from_str(&store.generator_json()?).map_err(BaseFieldError::Spec)?;
    let (generator, found) = spec.build(dir)?;
    let held = store.heightmap_blake3()?;
    if found != held {
        return Err(BaseFieldError::OtherHeightmap {
            held: held.unwrap_or_default(),
            found: found.unwrap_or_default(),
        });
    }
    Ok(Field::new(
        store.field_settings()?,
        std::sync::Arc::new(generator),
    )?)
}
