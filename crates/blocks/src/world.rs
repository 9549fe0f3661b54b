//! The block world: held blocks, falling pieces and rubble, kept in step with one
//! [`PhysicsWorld`] (held blocks as fixed colliders, pieces as compound bodies).
//!
//! Every method that changes something takes the physics world; always pass the same one.
//! Edits (`place`, `break_block`, `chisel`, `break_off`, `terrain_changed`) and
//! [`BlockWorld::update`] (after each physics step) return what changed, in a fixed order.

use std::collections::{BTreeMap, BTreeSet};

use loam_physics::{BodyId, FixedId, PhysicsWorld};

use crate::block::{Block, BlockId, BlockPos, BlockSpec, Face, WorldBox};
use crate::chisel::ChiselShape;
use crate::error::BlockError;
use crate::ground::{BlockSettings, Ground};
use crate::material::MaterialTable;
use crate::pieces::{Piece, PieceId, block_part};
use crate::raycast::check_ray;
use crate::store::BlockStore;

/// What an edit or an update changed, in the order it happened.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Changes {
    /// Blocks placed on the grid.
    pub placed: Vec<(BlockPos, BlockId)>,
    /// Held blocks removed: broken by an op or by damage.
    pub broken: Vec<(BlockPos, BlockId)>,
    /// Held blocks whose chisel shape changed.
    pub chiselled: Vec<BlockPos>,
    /// Pieces made (blocks that lost their support, or what was left of a piece after a
    /// block broke off it), in order.
    pub new_pieces: Vec<PieceId>,
    /// Pieces gone (split after a block broke off, emptied, fallen below the limit, or
    /// buried by a terrain change).
    pub removed_pieces: Vec<PieceId>,
}

impl Changes {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        *self == Changes::default()
    }
}

/// What a ray hit in the block world ([`BlockWorld::raycast`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorldBlockHit {
    /// The block hit.
    pub target: BlockTarget,
    /// Metres from the origin along the normalised direction.
    pub distance: f64,
    /// The hit point, world metres.
    pub point: [f64; 3],
    /// The face entered, for a held block.
    pub face: Option<Face>,
}

/// A block, held or in a piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockTarget {
    /// A held block at this position.
    Held(BlockPos),
    /// A block of a piece.
    Piece(PieceId, BlockId),
}

/// Held blocks, falling pieces and rubble (see the module docs).
#[derive(Debug)]
pub struct BlockWorld {
    pub(crate) store: BlockStore,
    pub(crate) pieces: BTreeMap<PieceId, Piece>,
    pub(crate) next_piece: u64,
    pub(crate) materials: MaterialTable,
    pub(crate) settings: BlockSettings,
    /// Held block → the rubble pieces it rests on.
    pub(crate) rests_on: BTreeMap<BlockPos, BTreeSet<PieceId>>,
    /// Rubble piece → the held blocks resting on it.
    pub(crate) holds: BTreeMap<PieceId, BTreeSet<BlockPos>>,
    pub(crate) bodies: BTreeMap<PieceId, BodyId>,
    pub(crate) by_body: BTreeMap<BodyId, PieceId>,
    /// Pieces made, changed or removed since the last [`BlockWorld::take_delta`], while
    /// tracking ([`BlockWorld::set_tracking`]).
    pub(crate) touched_pieces: Option<BTreeSet<PieceId>>,
}

impl BlockWorld {
    /// An empty block world.
    ///
    /// # Errors
    /// [`BlockError::BadSetting`] for bad settings.
    pub fn new(materials: MaterialTable, settings: BlockSettings) -> Result<Self, BlockError> {
        settings.validate()?;
        Ok(Self {
            store: BlockStore::new(),
            pieces: BTreeMap::new(),
            next_piece: 0,
            materials,
            settings,
            rests_on: BTreeMap::new(),
            holds: BTreeMap::new(),
            bodies: BTreeMap::new(),
            by_body: BTreeMap::new(),
            touched_pieces: None,
        })
    }

    /// The held blocks.
    pub fn store(&self) -> &BlockStore {
        &self.store
    }

    /// The materials.
    pub fn materials(&self) -> &MaterialTable {
        &self.materials
    }

    /// The settings.
    pub fn settings(&self) -> &BlockSettings {
        &self.settings
    }

    /// Every piece, ascending by id.
    pub fn pieces(&self) -> impl Iterator<Item = &Piece> {
        self.pieces.values()
    }

    /// A piece.
    pub fn piece(&self, id: PieceId) -> Option<&Piece> {
        self.pieces.get(&id)
    }

    /// The body of a piece in the physics world.
    pub fn piece_body(&self, id: PieceId) -> Option<BodyId> {
        self.bodies.get(&id).copied()
    }

    /// The piece whose body this is.
    pub fn piece_of_body(&self, body: BodyId) -> Option<PieceId> {
        self.by_body.get(&body).copied()
    }

    /// The rubble pieces a held block rests on.
    pub fn rests_on(&self, pos: BlockPos) -> impl Iterator<Item = PieceId> + '_ {
        self.rests_on.get(&pos).into_iter().flatten().copied()
    }

    /// Places a block at `pos` if it fits: no overlap with held blocks or pieces, not
    /// deeper than `max_ground_depth` in the ground. It rests on the ground or on rubble
    /// under it, or hangs on a held neighbour; a block that has none of these falls at once
    /// (as a new piece in the returned changes).
    ///
    /// # Errors
    /// As [`BlockStore::check_place`], and [`BlockError::OverlapsPiece`]; nothing changes.
    pub fn place(
        &mut self,
        physics: &mut PhysicsWorld,
        ground: &dyn Ground,
        pos: BlockPos,
        spec: BlockSpec,
    ) -> Result<Changes, BlockError> {
        self.store.check_place(
            pos,
            &spec,
            &self.materials,
            ground,
            self.settings.max_ground_depth,
        )?;
        self.check_no_piece(physics, pos)?;
        let id = self.place_checked(physics, ground, pos, &spec)?;
        let mut changes = Changes {
            placed: vec![(pos, id)],
            ..Default::default()
        };
        self.collapse(physics, [pos], &mut changes)?;
        Ok(changes)
    }

    /// Places every block of an imported model ([`crate::import_vox`]), all or nothing:
    /// each is checked as by [`Self::place`] first. Blocks the model leaves without support
    /// (a model placed in the air) fall as pieces.
    ///
    /// # Errors
    /// The first block's error, as [`Self::place`]; nothing changes then.
    pub fn place_model(
        &mut self,
        physics: &mut PhysicsWorld,
        ground: &dyn Ground,
        model: &crate::VoxModel,
    ) -> Result<Changes, BlockError> {
        for (pos, spec) in &model.blocks {
            self.store.check_place(
                *pos,
                spec,
                &self.materials,
                ground,
                self.settings.max_ground_depth,
            )?;
            self.check_no_piece(physics, *pos)?;
        }
        let mut changes = Changes::default();
        for (pos, spec) in &model.blocks {
            let id = self.place_checked(physics, ground, *pos, spec)?;
            changes.placed.push((*pos, id));
        }
        let seeds: Vec<BlockPos> = model.blocks.iter().map(|(p, _)| *p).collect();
        self.collapse(physics, seeds, &mut changes)?;
        Ok(changes)
    }

    /// [`BlockError::OverlapsPiece`] if a piece fills part of `pos`.
    fn check_no_piece(&self, physics: &PhysicsWorld, pos: BlockPos) -> Result<(), BlockError> {
        let (c, half) = (pos.centre(), pos.size.edge() / 2.0);
        // Shrunk by 1 % so that a piece merely touching a face does not count.
        let inside =
            physics.dynamic_bodies_in_box(c.map(|v| v as f32), [(half * 0.99) as f32; 3])?;
        match inside.iter().find_map(|b| self.by_body.get(b)) {
            Some(piece) => Err(BlockError::OverlapsPiece {
                at: pos,
                piece: *piece,
            }),
            None => Ok(()),
        }
    }

    /// Places a block that passed `check_place` and `check_no_piece`: the store, rubble
    /// contacts, the fixed collider.
    fn place_checked(
        &mut self,
        physics: &mut PhysicsWorld,
        ground: &dyn Ground,
        pos: BlockPos,
        spec: &BlockSpec,
    ) -> Result<BlockId, BlockError> {
        let under = self.rubble_under(physics, pos)?;
        let id = self
            .store
            .place_unchecked(pos, spec, ground, self.settings.ground_probe);
        if !under.is_empty() {
            self.store.update(pos, |b| {
                b.on_rubble = true;
                true
            });
            for &p in &under {
                self.holds.entry(p).or_default().insert(pos);
            }
            self.rests_on.insert(pos, under);
        }
        self.add_fixed(physics, pos)?;
        Ok(id)
    }

    /// Breaks (removes) the held block at `pos`; blocks that lose their support with it
    /// fall as pieces.
    ///
    /// # Errors
    /// [`BlockError::NoBlock`]; nothing changes.
    pub fn break_block(
        &mut self,
        physics: &mut PhysicsWorld,
        pos: BlockPos,
    ) -> Result<Changes, BlockError> {
        if self.store.get(pos).is_none() {
            return Err(BlockError::NoBlock(pos));
        }
        let mut changes = Changes::default();
        let seeds = self.remove_held(physics, pos, &mut changes);
        self.collapse(physics, seeds, &mut changes)?;
        Ok(changes)
    }

    /// Sets a held block's chisel shape (its collider follows). Changing nothing (rounding
    /// a round edge) leaves the revision and reports no change. Support does not depend on
    /// the shape (blocks touch through their grid faces).
    ///
    /// # Errors
    /// [`BlockError::NoBlock`] or [`BlockError::BadShape`]; nothing changes.
    pub fn chisel(
        &mut self,
        physics: &mut PhysicsWorld,
        pos: BlockPos,
        shape: ChiselShape,
    ) -> Result<Changes, BlockError> {
        let mut changes = Changes::default();
        if self.store.set_shape(pos, shape)? {
            self.add_fixed(physics, pos)?;
            changes.chiselled.push(pos);
        }
        Ok(changes)
    }

    /// The terrain changed in `region` (a dig or build; see [`WorldBox::from_samples`]):
    /// looks at the ground again under the blocks there, and drops what lost its support.
    /// A piece there whose every block has its centre inside the ground now, by half its
    /// edge or more (terrain built over rubble or a falling piece), is buried: removed, as a
    /// piece that fell below [`crate::BlockSettings::fall_limit_y`] is. Left in, it would sink through the
    /// ground (a terrain collider is a surface, solid on neither side) down to that
    /// limit, asking for the collider of every chunk on the way. Which pieces are buried
    /// depends on where they are when the change comes: a replay that applies a terrain op
    /// after other physics steps than it came after live (terrain ops carry no step) may
    /// bury a piece that was still moving differently, as it may land it differently.
    ///
    /// # Errors
    /// [`BlockError::NonFinite`] for a region with NaN or infinite corners (nothing
    /// changes); [`BlockError::Physics`] only if the physics world is not the one this
    /// world uses.
    pub fn terrain_changed(
        &mut self,
        physics: &mut PhysicsWorld,
        ground: &dyn Ground,
        region: WorldBox,
    ) -> Result<Changes, BlockError> {
        if !region.min.iter().chain(&region.max).all(|c| c.is_finite()) {
            return Err(BlockError::NonFinite { what: "region" });
        }
        let mut lost = self
            .store
            .update_ground(ground, region, self.settings.ground_probe);
        let mut changes = Changes::default();
        for id in self.pieces_in(physics, region)? {
            // Half an edge: a block resting on a ridge, where the collider (a mesh of the
            // field) lies a little under the field's surface, is not covered.
            if self.pieces.get(&id).is_some_and(|p| p.inside(ground, 0.5)) {
                lost.extend(self.remove_piece(physics, id, &mut changes));
            }
        }
        self.collapse(physics, lost, &mut changes)?;
        Ok(changes)
    }

    /// The pieces with a part in `region` (the physics world's broad phase), ascending.
    fn pieces_in(
        &self,
        physics: &PhysicsWorld,
        region: WorldBox,
    ) -> Result<Vec<PieceId>, BlockError> {
        let mut ids: Vec<PieceId> = self
            .piece_bodies_in(physics, region.min, region.max)?
            .into_iter()
            .filter_map(|b| self.by_body.get(&b).copied())
            .collect();
        ids.sort();
        Ok(ids)
    }

    /// The bodies of pieces with a part in the box `lo..=hi` (metres; the physics world's
    /// broad phase), ascending by body.
    fn piece_bodies_in(
        &self,
        physics: &PhysicsWorld,
        lo: [f64; 3],
        hi: [f64; 3],
    ) -> Result<Vec<BodyId>, loam_physics::PhysicsError> {
        let centre = [0, 1, 2].map(|i| ((lo[i] + hi[i]) * 0.5) as f32);
        // At least a millimetre: the query wants a box of some size.
        let half = [0, 1, 2].map(|i| (((hi[i] - lo[i]) * 0.5) as f32).max(1e-3));
        let mut bodies = physics.dynamic_bodies_in_box(centre, half)?;
        bodies.retain(|b| self.by_body.contains_key(b));
        Ok(bodies)
    }

    /// The nearest block (held or in a piece) that the ray meets within `max_distance`
    /// metres: held blocks through [`BlockStore::raycast`], pieces as their blocks' boxes
    /// at their current poses. Compare with the field raycast's distance to pick what the
    /// tool aims at.
    ///
    /// # Errors
    /// [`BlockError::NonFinite`] or [`BlockError::BadRay`].
    pub fn raycast(
        &self,
        origin: [f64; 3],
        direction: [f64; 3],
        max_distance: f64,
    ) -> Result<Option<WorldBlockHit>, BlockError> {
        let d = check_ray(origin, direction, max_distance)?;
        let mut best = self
            .store
            .raycast(origin, d, max_distance)?
            .map(|h| WorldBlockHit {
                target: BlockTarget::Held(h.pos),
                distance: h.distance,
                point: h.point,
                face: Some(h.face),
            });
        for piece in self.pieces.values() {
            let max = best.map_or(max_distance, |b| b.distance);
            if let Some((i, t)) = piece.raycast(origin, d, max)
                && best.is_none_or(|b| t < b.distance)
            {
                best = Some(WorldBlockHit {
                    target: BlockTarget::Piece(piece.id, piece.blocks[i].block.id),
                    distance: t,
                    point: [0, 1, 2].map(|k| origin[k] + t * d[k]),
                    face: None,
                });
            }
        }
        Ok(best)
    }

    /// Puts a held block's fixed collider into the physics world (replacing its old one).
    pub(crate) fn add_fixed(
        &self,
        physics: &mut PhysicsWorld,
        pos: BlockPos,
    ) -> Result<(), BlockError> {
        let Some(block) = self.store.get(pos) else {
            return Ok(());
        };
        let part = block_part(pos, block, pos.min_corner(), &self.materials)?;
        physics.set_fixed(FixedId(block.id.0), [0.0; 3], &part)?;
        Ok(())
    }

    /// Removes a held block with its collider and rubble contacts; returns its face
    /// neighbours (the seeds of the support check).
    pub(crate) fn remove_held(
        &mut self,
        physics: &mut PhysicsWorld,
        pos: BlockPos,
        changes: &mut Changes,
    ) -> Vec<BlockPos> {
        let seeds = self.store.face_neighbours(pos);
        if let Some(block) = self.store.remove(pos) {
            physics.remove_fixed(FixedId(block.id.0));
            self.wake_around(physics, pos.min_corner(), pos.max_corner());
            self.forget_rubble_contacts(pos);
            changes.broken.push((pos, block.id));
        }
        seeds
    }

    /// Wakes the pieces whose bodies meet the box `lo..=hi` (world metres) grown by the
    /// ground probe: what may have rested on something just removed. Rapier wakes bodies in
    /// contact by itself, but one restored asleep ([`BlockWorld::load`]) has no contacts
    /// before its first step, and would be put to sleep again where it hangs.
    pub(crate) fn wake_around(&self, physics: &mut PhysicsWorld, lo: [f64; 3], hi: [f64; 3]) {
        let g = self.settings.ground_probe;
        if let Ok(bodies) = self.piece_bodies_in(physics, lo.map(|v| v - g), hi.map(|v| v + g)) {
            for b in bodies {
                physics.wake_body(b);
            }
        }
    }

    /// Drops a held block's rubble relations (it left the grid).
    pub(crate) fn forget_rubble_contacts(&mut self, pos: BlockPos) {
        if let Some(pieces) = self.rests_on.remove(&pos) {
            for p in pieces {
                if let Some(set) = self.holds.get_mut(&p) {
                    set.remove(&pos);
                    if set.is_empty() {
                        self.holds.remove(&p);
                    }
                }
            }
        }
    }

    /// The resting rubble pieces just under a block's bottom face (in the probe slab, inset
    /// by ⅛ of the edge).
    pub(crate) fn rubble_under(
        &self,
        physics: &PhysicsWorld,
        pos: BlockPos,
    ) -> Result<BTreeSet<PieceId>, BlockError> {
        let (c, lo) = (pos.centre(), pos.min_corner());
        let probe = self.settings.ground_probe;
        let half = pos.size.edge() * 3.0 / 8.0;
        let centre = [c[0], lo[1] - probe / 2.0, c[2]].map(|v| v as f32);
        let found = physics
            .dynamic_bodies_in_box(centre, [half as f32, (probe / 2.0) as f32, half as f32])?;
        Ok(found
            .iter()
            .filter_map(|b| self.by_body.get(b))
            .filter(|p| {
                self.pieces
                    .get(p)
                    .is_some_and(|p| matches!(p.state, crate::PieceState::Rubble { .. }))
            })
            .copied()
            .collect())
    }

    /// A held block's record (crate use).
    pub(crate) fn held(&self, pos: BlockPos) -> Option<&Block> {
        self.store.get(pos)
    }
}
