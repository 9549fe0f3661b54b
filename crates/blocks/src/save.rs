//! Saving and restoring a block world: plain serde data ([`BlocksFile`]), checked on the
//! way in, then put back into a physics world exactly (held blocks as fixed colliders,
//! pieces as bodies at their saved poses, resting rubble asleep).

use std::collections::{BTreeMap, BTreeSet};

use loam_physics::{FixedId, PhysicsWorld};
use serde::{Deserialize, Serialize};

use crate::block::{Block, BlockPos};
use crate::error::BlockError;
use crate::ground::BlockSettings;
use crate::material::MaterialTable;
use crate::pieces::{Piece, PieceId, PieceState, block_part};
use crate::store::BlockStore;
use crate::world::BlockWorld;

/// The format version written by [`BlockWorld::save`].
pub const BLOCKS_FILE_VERSION: u32 = 1;

/// A held block as saved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeldBlock {
    /// Where it is.
    pub pos: BlockPos,
    /// The block.
    pub block: Block,
    /// The rubble pieces it rests on (empty for most blocks).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rests_on: Vec<PieceId>,
}

/// A block world as saved: everything needed to restore it exactly.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlocksFile {
    /// Format version ([`BLOCKS_FILE_VERSION`]).
    pub version: u32,
    /// The materials.
    pub materials: MaterialTable,
    /// The settings.
    pub settings: BlockSettings,
    /// The store's revision.
    pub revision: u64,
    /// The next block id to give out.
    pub next_block: u64,
    /// The next piece id to give out.
    pub next_piece: u64,
    /// Held blocks, ascending.
    pub blocks: Vec<HeldBlock>,
    /// Pieces, ascending.
    pub pieces: Vec<Piece>,
}

impl BlockWorld {
    /// The world as plain data (deterministic: same world, same file).
    pub fn save(&self) -> BlocksFile {
        BlocksFile {
            version: BLOCKS_FILE_VERSION,
            materials: self.materials.clone(),
            settings: self.settings,
            revision: self.store.revision(),
            next_block: self.store.next_id,
            next_piece: self.next_piece,
            blocks: self
                .store
                .iter()
                .map(|(pos, block)| HeldBlock {
                    pos,
                    block: block.clone(),
                    rests_on: self.rests_on(pos).collect(),
                })
                .collect(),
            pieces: self.pieces.values().cloned().collect(),
        }
    }

    /// Restores a saved world into `physics` (which should not hold another block world's
    /// colliders). Every record is checked first: a bad file changes nothing.
    ///
    /// # Errors
    /// [`BlockError::BadSave`] for a newer version, overlapping or duplicate blocks, ids at
    /// or above the next ids, unknown pieces or materials, bad shapes or poses;
    /// [`BlockError::BadSetting`] for bad settings.
    pub fn load(file: BlocksFile, physics: &mut PhysicsWorld) -> Result<Self, BlockError> {
        let bad = |reason: String| BlockError::BadSave { reason };
        if file.version > BLOCKS_FILE_VERSION {
            return Err(bad(format!(
                "version {} is newer than this build reads ({BLOCKS_FILE_VERSION})",
                file.version
            )));
        }
        let mut world = BlockWorld::new(file.materials, file.settings)?;
        let piece_ids: BTreeSet<PieceId> = file.pieces.iter().map(|p| p.id).collect();
        if piece_ids.len() != file.pieces.len() {
            return Err(bad("two pieces share an id".into()));
        }
        let mut block_ids = BTreeSet::new();
        let mut check_block = |pos: BlockPos, b: &Block, world: &BlockWorld| {
            pos.check()?;
            world.materials.require(b.material)?;
            b.shape.validate()?;
            if !(b.damage.is_finite() && b.damage >= 0.0) {
                return Err(bad(format!("block {:?} has damage {}", b.id, b.damage)));
            }
            if b.id.0 >= file.next_block || !block_ids.insert(b.id) {
                return Err(bad(format!(
                    "block id {:?} is reused or not below next_block",
                    b.id
                )));
            }
            Ok(())
        };
        let mut store = BlockStore::new();
        let mut rests_on: BTreeMap<BlockPos, BTreeSet<PieceId>> = BTreeMap::new();
        for h in &file.blocks {
            check_block(h.pos, &h.block, &world)?;
            if let Some(other) = store.overlapping(h.pos) {
                return Err(bad(format!("{:?} overlaps {other:?}", h.pos)));
            }
            if let Some(p) = h.rests_on.iter().find(|p| !piece_ids.contains(p)) {
                return Err(bad(format!("{:?} rests on unknown piece {p:?}", h.pos)));
            }
            if h.rests_on.is_empty() == h.block.on_rubble {
                return Err(bad(format!(
                    "{:?}: on_rubble disagrees with rests_on",
                    h.pos
                )));
            }
            store.insert(h.pos, h.block.clone());
            if !h.rests_on.is_empty() {
                rests_on.insert(h.pos, h.rests_on.iter().copied().collect());
            }
        }
        for p in &file.pieces {
            if p.id.0 >= file.next_piece {
                return Err(bad(format!("piece id {:?} is not below next_piece", p.id)));
            }
            if p.blocks.is_empty() {
                return Err(bad(format!("piece {:?} has no block", p.id)));
            }
            for b in &p.blocks {
                check_block(b.pos, &b.block, &world)?;
            }
            if !p.offset.iter().all(|c| c.is_finite() && c.abs() <= 1.0) {
                return Err(bad(format!("piece {:?} has offset {:?}", p.id, p.offset)));
            }
            if !p.is_finite() {
                return Err(bad(format!(
                    "piece {:?} has a non-finite pose or motion",
                    p.id
                )));
            }
            // Overlap inside a piece (in its frame: grid positions).
            for (i, a) in p.blocks.iter().enumerate() {
                if p.blocks[..i]
                    .iter()
                    .any(|b| b.pos.qbox().overlaps(&a.pos.qbox()))
                {
                    return Err(bad(format!("piece {:?} has overlapping blocks", p.id)));
                }
            }
            p.parts(&world.materials)?;
        }

        // Everything checked: build the physics side, held blocks first (a fixed collider
        // put in wakes the bodies it touches). A failure here would be a physics refusal
        // of checked data; what was made is removed again.
        let mut made = Vec::new();
        let result = (|| {
            for (pos, block) in store.iter() {
                let part = block_part(pos, block, pos.min_corner(), &world.materials)?;
                physics.set_fixed(FixedId(block.id.0), [0.0; 3], &part)?;
            }
            for p in &file.pieces {
                let asleep = matches!(p.state, PieceState::Rubble { .. })
                    && p.velocity == [0.0; 3]
                    && p.spin == [0.0; 3];
                let body =
                    physics.spawn_compound(p.pose.into(), &p.parts(&world.materials)?, asleep)?;
                made.push(body);
                if !asleep {
                    physics.set_body_velocity(body, p.velocity, p.spin)?;
                }
                world.bodies.insert(p.id, body);
                world.by_body.insert(body, p.id);
            }
            Ok::<(), BlockError>(())
        })();
        if let Err(e) = result {
            for b in made {
                physics.remove_body(b);
            }
            for (_, block) in store.iter() {
                physics.remove_fixed(FixedId(block.id.0));
            }
            return Err(e);
        }
        world.store = store;
        for (&pos, set) in &rests_on {
            for &p in set {
                world.holds.entry(p).or_default().insert(pos);
            }
        }
        world.rests_on = rests_on;
        world.pieces = file.pieces.into_iter().map(|p| (p.id, p)).collect();
        world.next_piece = file.next_piece;
        world.store.next_id = file.next_block;
        world.store.set_revision(file.revision);
        Ok(world)
    }
}
