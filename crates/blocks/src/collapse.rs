//! Collapse: held blocks that lost their support become pieces (compound bodies), and
//! pieces split when a block breaks off them.

use loam_physics::{PhysicsWorld, Pose};

use crate::block::{Block, BlockId, BlockPos, BlockSize};
use crate::chisel::ChiselShape;
use crate::error::BlockError;
use crate::islands::{MAX_LUMP_BLOCKS, strictly_ascending};
use crate::ops::LumpBlock;
use crate::pieces::{Piece, PieceBlock, PieceId, PieceState, SavedPose};
use crate::world::{BlockWorld, Changes};

impl BlockWorld {
    /// Finds the blocks that lost support, searching from `seeds`, and turns each group
    /// into a falling piece (in the support check's order).
    pub(crate) fn collapse(
        &mut self,
        physics: &mut PhysicsWorld,
        seeds: impl IntoIterator<Item = BlockPos>,
        changes: &mut Changes,
    ) -> Result<(), BlockError> {
        for group in self.store.unsupported(seeds) {
            // A rigid body holds at most MAX_PARTS parts: a larger group (a whole house of
            // quarter-metre blocks) falls as several pieces, cut between slabs of its
            // ascending positions, rather than not at all.
            for part in group.chunks(loam_physics::MAX_PARTS) {
                let id = self.detach(physics, part)?;
                changes.new_pieces.push(id);
            }
        }
        Ok(())
    }

    /// Takes a group of held blocks off the grid and makes them one falling piece.
    fn detach(
        &mut self,
        physics: &mut PhysicsWorld,
        group: &[BlockPos],
    ) -> Result<PieceId, BlockError> {
        let mut blocks = Vec::with_capacity(group.len());
        for &pos in group {
            if let Some(block) = self.store.remove(pos) {
                physics.remove_fixed(loam_physics::FixedId(block.id.0));
                self.forget_rubble_contacts(pos);
                blocks.push(PieceBlock { pos, block });
            }
        }
        // What rested on the group may need waking (see `wake_around`).
        if let (Some(first), Some(last)) = (group.first(), group.last()) {
            let (mut lo, mut hi) = (first.min_corner(), last.max_corner());
            for p in group {
                let (a, b) = (p.min_corner(), p.max_corner());
                for i in 0..3 {
                    lo[i] = lo[i].min(a[i]);
                    hi[i] = hi[i].max(b[i]);
                }
            }
            self.wake_around(physics, lo, hi);
        }
        let origin = blocks.first().map_or([0.0; 3], |b| b.pos.min_corner());
        let pose = SavedPose {
            position: origin.map(|c| c as f32),
            rotation: [0.0, 0.0, 0.0, 1.0],
        };
        self.spawn_piece(
            physics,
            (origin, [0.0; 3]),
            blocks,
            pose,
            PieceState::Falling,
            None,
        )
    }

    /// Makes a falling piece of a terrain lump ([`crate::BlockOp::Lump`], from
    /// [`crate::Island::lump`]): sharp blocks of `size`, block `cell` centred on
    /// `cell · edge`, new block ids, at rest until the next step. The caller takes the lump
    /// out of the field ([`crate::Island::removal_ops`]) and swaps the terrain colliders
    /// before the next physics step (the piece would start inside the old terrain), then
    /// tells the blocks ([`Self::terrain_changed`]) so that what stood on it falls too.
    ///
    /// # Errors
    /// [`BlockError::Island`] for no blocks, more than [`MAX_LUMP_BLOCKS`], or cells not
    /// strictly ascending; [`BlockError::OutOfRange`], [`BlockError::UnknownMaterial`];
    /// nothing changes then.
    pub fn place_lump(
        &mut self,
        physics: &mut PhysicsWorld,
        size: BlockSize,
        blocks: &[LumpBlock],
    ) -> Result<Changes, BlockError> {
        if blocks.is_empty() || blocks.len() > MAX_LUMP_BLOCKS {
            return Err(BlockError::Island {
                reason: format!(
                    "a lump has 1 to {MAX_LUMP_BLOCKS} blocks, not {}",
                    blocks.len()
                ),
            });
        }
        if !strictly_ascending(blocks) {
            return Err(BlockError::Island {
                reason: "lump cells must ascend strictly".into(),
            });
        }
        let first = self.store.next_id;
        let mut made = Vec::with_capacity(blocks.len());
        for (i, b) in blocks.iter().enumerate() {
            let pos = BlockPos::new(size, b.cell)?;
            self.materials.require(b.material)?;
            made.push(PieceBlock {
                pos,
                block: Block {
                    id: BlockId(first + i as u64),
                    material: b.material,
                    shape: ChiselShape::SHARP,
                    paint: b.paint,
                    damage: 0.0,
                    on_ground: false,
                    on_rubble: false,
                },
            });
        }
        let offset = [-size.edge() / 2.0; 3];
        let m = made[0].pos.min_corner();
        let origin = [0, 1, 2].map(|i| m[i] + offset[i]);
        let pose = SavedPose {
            position: origin.map(|c| c as f32),
            rotation: [0.0, 0.0, 0.0, 1.0],
        };
        let id = self.spawn_piece(
            physics,
            (origin, offset),
            made,
            pose,
            PieceState::Falling,
            None,
        )?;
        self.store.next_id = first + blocks.len() as u64;
        Ok(Changes {
            new_pieces: vec![id],
            ..Default::default()
        })
    }

    /// Makes a piece of `blocks` (ascending) with its frame at `pose` and a body for it;
    /// `frame` is its `origin` and `offset` ([`Piece`]). `motion` (linear m/s, angular
    /// rad/s) is given to the body; a rubble piece with no motion starts asleep.
    pub(crate) fn spawn_piece(
        &mut self,
        physics: &mut PhysicsWorld,
        (origin, offset): ([f64; 3], [f64; 3]),
        blocks: Vec<PieceBlock>,
        pose: SavedPose,
        state: PieceState,
        motion: Option<([f32; 3], [f32; 3])>,
    ) -> Result<PieceId, BlockError> {
        let id = PieceId(self.next_piece);
        let piece = Piece {
            id,
            origin,
            offset,
            blocks,
            pose,
            velocity: motion.map_or([0.0; 3], |m| m.0),
            spin: motion.map_or([0.0; 3], |m| m.1),
            state,
        };
        let parts = piece.parts(&self.materials)?;
        let asleep = matches!(state, PieceState::Rubble { .. }) && motion.is_none();
        let body = physics.spawn_compound(Pose::from(pose), &parts, asleep)?;
        if let Some((v, w)) = motion {
            physics.set_body_velocity(body, v, w)?;
        }
        self.next_piece += 1;
        self.bodies.insert(id, body);
        self.by_body.insert(body, id);
        self.pieces.insert(id, piece);
        self.touch_piece(id);
        Ok(id)
    }

    /// Removes a piece and its body; the blocks that rested on it lose that support and
    /// are returned (seeds).
    pub(crate) fn remove_piece(
        &mut self,
        physics: &mut PhysicsWorld,
        id: PieceId,
        changes: &mut Changes,
    ) -> Vec<BlockPos> {
        if let Some(body) = self.bodies.remove(&id) {
            physics.remove_body(body);
            self.by_body.remove(&body);
        }
        if let Some(piece) = self.pieces.remove(&id) {
            self.touch_piece(id);
            changes.removed_pieces.push(id);
            let (lo, hi) = piece.world_bounds();
            self.wake_around(physics, lo, hi);
        }
        self.release(id)
    }

    /// The held blocks resting on rubble piece `id` lose that support (it moved or is
    /// gone); returns those left with no rubble under them.
    pub(crate) fn release(&mut self, id: PieceId) -> Vec<BlockPos> {
        let mut lost = Vec::new();
        for pos in self.holds.remove(&id).unwrap_or_default() {
            let Some(set) = self.rests_on.get_mut(&pos) else {
                continue;
            };
            set.remove(&id);
            self.store.touch(pos);
            if set.is_empty() {
                self.rests_on.remove(&pos);
                self.store.update(pos, |b| {
                    let was = b.on_rubble;
                    b.on_rubble = false;
                    was
                });
                lost.push(pos);
            }
        }
        lost
    }

    /// Breaks block `block` off piece `piece` (falling or rubble). What is left splits into
    /// face-connected parts, each a new piece with the old pose and motion (rubble stays
    /// rubble until it moves). Blocks that rested on the old piece keep their support if a
    /// new rubble piece is under them, and are checked again otherwise.
    ///
    /// # Errors
    /// [`BlockError::NoPiece`] or [`BlockError::NoPieceBlock`]; nothing changes.
    pub fn break_off(
        &mut self,
        physics: &mut PhysicsWorld,
        piece: PieceId,
        block: BlockId,
    ) -> Result<Changes, BlockError> {
        let old = self.pieces.get(&piece).ok_or(BlockError::NoPiece(piece))?;
        let (index, _) = old
            .block(block)
            .ok_or(BlockError::NoPieceBlock { piece, block })?;
        let old = old.clone();
        let body = self.bodies.get(&piece).copied();
        let motion = body
            .and_then(|b| physics.body_state(b))
            .map(|s| (s.linear_velocity, s.angular_velocity));
        let sleeping = body.and_then(|b| physics.body_sleeping(b)).unwrap_or(false);
        let resting: Vec<BlockPos> = self
            .holds
            .get(&piece)
            .map(|s| s.iter().copied().collect())
            .unwrap_or_default();

        let mut changes = Changes::default();
        let mut seeds = self.remove_piece(physics, piece, &mut changes);
        let mut rest: Vec<PieceBlock> = old.blocks.clone();
        let gone = rest.remove(index);
        changes.broken.push((gone.pos, gone.block.id));
        // The parts start awake (a part the broken block held up must fall), with the old
        // motion, or none if the old piece slept.
        let motion = match (sleeping, motion) {
            (false, Some(m)) => m,
            _ => ([0.0; 3], [0.0; 3]),
        };
        for group in Piece::components(&rest) {
            let blocks: Vec<PieceBlock> = group.iter().map(|&i| rest[i].clone()).collect();
            let id = self.spawn_piece(
                physics,
                (old.origin, old.offset),
                blocks,
                old.pose,
                old.state,
                Some(motion),
            )?;
            changes.new_pieces.push(id);
        }
        // Blocks that rested on the old pile: still on one of its parts?
        for pos in resting {
            let under = self.rubble_under(physics, pos)?;
            if under.is_empty() {
                continue;
            }
            seeds.retain(|p| *p != pos);
            self.store.update(pos, |b| {
                let was = b.on_rubble;
                b.on_rubble = true;
                !was
            });
            for &p in &under {
                self.holds.entry(p).or_default().insert(pos);
            }
            self.rests_on.insert(pos, under);
            self.store.touch(pos);
        }
        self.collapse(physics, seeds, &mut changes)?;
        Ok(changes)
    }
}
