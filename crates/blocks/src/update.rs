//! After each physics step: impacts and damage, pieces coming to rest and rubble moving
//! away, then the support check for everything that changed.
//!
//! ```text
//!   physics.step(dt)            (or BlockWorld::step)
//!   BlockWorld::update(physics)
//!     1. impacts → PieceImpact; on a held block: damage += ½ m v²; broken? remove it
//!     2. poses; Falling + asleep → Rubble { rest }; Rubble moved away → Falling,
//!        what rested on it loses that support; below fall_limit_y → removed
//!     3. support check from every block next to what changed → new pieces (chain reaction)
//! ```

use loam_physics::{FixedId, HitTarget, PhysicsWorld};

use crate::block::{BlockId, BlockPos};
use crate::damage::{break_energy, impact_energy};
use crate::error::BlockError;
use crate::ground::Ground;
use crate::pieces::{PieceId, PieceState, SavedPose};
use crate::world::{BlockWorld, Changes};

/// What a piece hit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImpactTarget {
    /// The terrain.
    Terrain,
    /// A held block (at this position when it was hit).
    Held(BlockPos),
    /// Another piece.
    Piece(PieceId),
    /// A walking character.
    Character,
    /// Something else in the physics world (a body that is not a piece).
    Other,
}

/// A piece's hardest impact of a frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieceImpact {
    /// The piece.
    pub piece: PieceId,
    /// Its block that hit.
    pub block: BlockId,
    /// What it hit.
    pub target: ImpactTarget,
    /// Contact point, world metres.
    pub point: [f32; 3],
    /// Closing speed, m/s (above the impact speed).
    pub speed: f32,
    /// `½ · m · v²` with the piece's mass, joules.
    pub energy: f32,
    /// Whether it broke the held block it hit.
    pub broke: bool,
}

/// What one update found and changed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepReport {
    /// Impacts, one per piece at most, ascending by body.
    pub impacts: Vec<PieceImpact>,
    /// Pieces that came to rest (now rubble), ascending.
    pub came_to_rest: Vec<PieceId>,
    /// Rubble that moved away from where it rested, ascending.
    pub moved: Vec<PieceId>,
    /// Blocks broken, pieces made and removed.
    pub changes: Changes,
}

impl BlockWorld {
    /// [`PhysicsWorld::step`], then [`Self::update`].
    ///
    /// # Errors
    /// As both.
    pub fn step(
        &mut self,
        physics: &mut PhysicsWorld,
        dt_seconds: f32,
    ) -> Result<StepReport, BlockError> {
        physics.step(dt_seconds)?;
        self.update(physics)
    }

    /// Removes the falling pieces that sank into the ground: every block's centre a whole
    /// edge or more inside it (value < −edge). Terrain built over part of a piece (not
    /// enough to bury it, [`Self::terrain_changed`]) leaves its centre under the surface
    /// collider, a surface solid on neither side, and it sinks through it down to
    /// [`crate::BlockSettings::fall_limit_y`], asking for a collider of every chunk on its
    /// way; nothing at rest on the ground or falling through air is that deep. What rested
    /// on a removed piece falls as after any removal. Call after each step, with the ground
    /// the colliders are built from. Returns what changed (the pieces removed, ascending).
    ///
    /// # Errors
    /// [`BlockError::Physics`] only if the physics world is not the one this world uses.
    pub fn bury_sunken(
        &mut self,
        physics: &mut PhysicsWorld,
        ground: &dyn Ground,
    ) -> Result<Changes, BlockError> {
        let sunk: Vec<PieceId> = self
            .pieces
            .values()
            .filter(|p| matches!(p.state, PieceState::Falling) && p.inside(ground, 1.0))
            .map(|p| p.id)
            .collect();
        let mut changes = Changes::default();
        let mut seeds = Vec::new();
        for id in sunk {
            seeds.extend(self.remove_piece(physics, id, &mut changes));
        }
        self.collapse(physics, seeds, &mut changes)?;
        Ok(changes)
    }

    /// Reads the physics world after a step (call it after every [`PhysicsWorld::step`]
    /// that simulated anything, or impacts are missed): see the module docs.
    ///
    /// # Errors
    /// [`BlockError::Physics`] only if the physics world is not the one this world uses.
    pub fn update(&mut self, physics: &mut PhysicsWorld) -> Result<StepReport, BlockError> {
        let mut report = StepReport::default();
        let mut seeds: Vec<BlockPos> = Vec::new();

        for imp in physics.impacts().to_vec() {
            let Some(&piece) = self.by_body.get(&imp.body) else {
                continue;
            };
            let Some(p) = self.pieces.get(&piece) else {
                continue;
            };
            let block = p
                .blocks
                .get(imp.part as usize)
                .map_or(BlockId(u64::MAX), |b| b.block.id);
            let mass = physics.body_mass(imp.body).unwrap_or(0.0);
            let energy = impact_energy(mass, imp.speed);
            let target = match imp.other {
                HitTarget::Terrain(_) => ImpactTarget::Terrain,
                HitTarget::Character(_) => ImpactTarget::Character,
                HitTarget::Body(b) => self
                    .by_body
                    .get(&b)
                    .map_or(ImpactTarget::Other, |p| ImpactTarget::Piece(*p)),
                HitTarget::Fixed(FixedId(id)) => self
                    .store
                    .find(BlockId(id))
                    .map_or(ImpactTarget::Other, ImpactTarget::Held),
            };
            let mut broke = false;
            if let ImpactTarget::Held(pos) = target {
                broke = self.damage(physics, pos, energy, &mut seeds, &mut report.changes)?;
            }
            report.impacts.push(PieceImpact {
                piece,
                block,
                target,
                point: imp.point,
                speed: imp.speed,
                energy,
                broke,
            });
        }

        let ids: Vec<PieceId> = self.pieces.keys().copied().collect();
        for id in ids {
            let Some(&body) = self.bodies.get(&id) else {
                continue;
            };
            let (Some(pose), Some(state)) = (physics.body_pose(body), physics.body_state(body))
            else {
                continue;
            };
            let Some(piece) = self.pieces.get_mut(&id) else {
                continue;
            };
            // Rubble nudged in place is a real change for a replica, and so is rubble
            // whose motion changed in place (e.g. it fell asleep again: its velocity became
            // 0, which a replica reads as asleep, and which the record, hashed whole,
            // carries); a falling piece's pose is not tracked (a replica plays the fall
            // back itself).
            let nudged = matches!(piece.state, PieceState::Rubble { .. })
                && (piece.pose != SavedPose::from(pose)
                    || piece.velocity != state.linear_velocity
                    || piece.spin != state.angular_velocity);
            piece.pose = pose.into();
            piece.velocity = state.linear_velocity;
            piece.spin = state.angular_velocity;
            if f64::from(pose.position[1]) < self.settings.fall_limit_y {
                seeds.extend(self.remove_piece(physics, id, &mut report.changes));
                continue;
            }
            match piece.state {
                PieceState::Falling if state.sleeping => {
                    piece.state = PieceState::Rubble { rest: piece.pose };
                    report.came_to_rest.push(id);
                    self.touch_piece(id);
                }
                PieceState::Rubble { rest }
                    if piece.moved_from(
                        rest,
                        self.settings.rubble_tolerance,
                        self.settings.rubble_turn_deg,
                    ) =>
                {
                    piece.state = PieceState::Falling;
                    report.moved.push(id);
                    self.touch_piece(id);
                    seeds.extend(self.release(id));
                }
                _ if nudged => self.touch_piece(id),
                _ => {}
            }
        }

        self.collapse(physics, seeds, &mut report.changes)?;
        Ok(report)
    }

    /// Adds `energy` joules of damage to the held block at `pos`; if it reaches the
    /// block's break energy the block is removed and its neighbours become seeds. Returns
    /// whether it broke.
    fn damage(
        &mut self,
        physics: &mut PhysicsWorld,
        pos: BlockPos,
        energy: f32,
        seeds: &mut Vec<BlockPos>,
        changes: &mut Changes,
    ) -> Result<bool, BlockError> {
        let Some(block) = self.held(pos) else {
            return Ok(false);
        };
        let limit = break_energy(self.materials.require(block.material)?, pos.size);
        let total = block.damage + energy;
        self.store.update(pos, |b| {
            b.damage = total;
            energy > 0.0
        });
        if total < limit {
            return Ok(false);
        }
        seeds.extend(self.remove_held(physics, pos, changes));
        Ok(true)
    }
}
