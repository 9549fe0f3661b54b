//! Replicas: a block world that follows another one's records instead of deciding for
//! itself (a network client mirroring an authoritative server).
//!
//! ```text
//!  authority: set_tracking(true); apply ops, terrain_changed, step …
//!             take_delta() ──▶ BlockDelta (records of what changed) ──▶ wire
//!  replica:   apply_delta(delta)   (upserts and removals, no support decisions)
//!             follow(dt)           (plays falling pieces back in its own physics world)
//! ```
//!
//! A delta carries whole records ([`HeldBlock`], [`Piece`]), so applying the deltas of an
//! authority in its order gives a replica the same held blocks and the same pieces, bit for
//! bit (poses and damage included), whatever its own physics does in between. Applying a
//! delta again, or a run of deltas again in order, changes nothing more: a reconnecting
//! replica may be sent a few twice.
//!
//! What is tracked: every held block placed, removed or changed (damage, shape, ground and
//! rubble contact), every piece made or removed, coming to rest, moving away from its rest,
//! or nudged while resting. A falling piece's pose is not: the replica plays the fall back in
//! its own physics world ([`BlockWorld::follow`]) and takes the authority's pose when the
//! piece comes to rest.

use std::collections::BTreeSet;

use loam_physics::{FixedId, PhysicsWorld, Pose};
use serde::{Deserialize, Serialize};

use crate::block::BlockPos;
use crate::error::BlockError;
use crate::pieces::{Piece, PieceId, PieceState};
use crate::save::HeldBlock;
use crate::world::BlockWorld;

/// What changed in a block world, as records ([`BlockWorld::take_delta`]), to be applied
/// by a replica ([`BlockWorld::apply_delta`]) in the order: `gone`, `unheld`, `pieces`,
/// `held`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockDelta {
    /// Held blocks as they are now (new or changed), ascending by position.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held: Vec<HeldBlock>,
    /// Positions that no longer hold a block, ascending.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unheld: Vec<BlockPos>,
    /// Pieces as they are now (new, come to rest, moved away, nudged), ascending by id.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pieces: Vec<Piece>,
    /// Pieces gone, ascending.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gone: Vec<PieceId>,
}

impl BlockDelta {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
            && self.unheld.is_empty()
            && self.pieces.is_empty()
            && self.gone.is_empty()
    }

    /// Counts records (blocks and pieces).
    pub fn len(&self) -> usize {
        self.held.len() + self.unheld.len() + self.pieces.len() + self.gone.len()
    }
}

impl BlockWorld {
    /// Starts (or stops) noting what changes, for [`Self::take_delta`]. Off by default: a
    /// world nobody drains would keep every position it ever changed.
    pub fn set_tracking(&mut self, on: bool) {
        if on {
            self.store.touched.0.get_or_insert_with(BTreeSet::new);
            self.touched_pieces.get_or_insert_with(BTreeSet::new);
        } else {
            self.store.touched.0 = None;
            self.touched_pieces = None;
        }
    }

    /// Notes that piece `id` was made, changed or removed, while tracking.
    pub(crate) fn touch_piece(&mut self, id: PieceId) {
        if let Some(t) = &mut self.touched_pieces {
            t.insert(id);
        }
    }

    /// The records of everything that changed since the last call (or since tracking
    /// started), as they are now; empty when not tracking.
    pub fn take_delta(&mut self) -> BlockDelta {
        let mut delta = BlockDelta::default();
        if let Some(t) = &mut self.store.touched.0 {
            for pos in std::mem::take(t) {
                match self.store.get(pos) {
                    Some(block) => delta.held.push(HeldBlock {
                        pos,
                        block: block.clone(),
                        rests_on: self.rests_on(pos).collect(),
                    }),
                    None => delta.unheld.push(pos),
                }
            }
        }
        if let Some(t) = &mut self.touched_pieces {
            for id in std::mem::take(t) {
                match self.pieces.get(&id) {
                    Some(p) => delta.pieces.push(p.clone()),
                    None => delta.gone.push(id),
                }
            }
        }
        delta
    }

    /// Applies an authority's records: removes what is gone, puts pieces (each a fresh body
    /// at the record's pose and motion, resting rubble asleep) and held blocks (replacing
    /// whatever overlaps them here) as the records say. No support check runs: the
    /// authority decided. Every record is checked first; a bad delta changes nothing.
    ///
    /// # Errors
    /// [`BlockError::BadSave`] for a record that [`BlockWorld::load`] would refuse (bad
    /// position, unknown material, bad shape, non-finite pose or damage, a piece without
    /// blocks); [`BlockError::Physics`] if the physics world refuses a body.
    pub fn apply_delta(
        &mut self,
        physics: &mut PhysicsWorld,
        delta: &BlockDelta,
    ) -> Result<(), BlockError> {
        self.check_delta(delta)?;
        for &id in &delta.gone {
            self.drop_piece(physics, id);
        }
        for &pos in &delta.unheld {
            self.drop_held(physics, pos);
        }
        for p in &delta.pieces {
            // A piece's record replaces its body, not what rests on it: the held blocks on
            // it keep that support unless their own records (applied below) say otherwise,
            // as the authority only sends those whose support changed. (Dropping it here
            // left such a block marked as on rubble with no rubble under it, which a save
            // of the replica then failed to load.)
            let held_on = self.holds.get(&p.id).cloned().unwrap_or_default();
            self.drop_piece(physics, p.id);
            let asleep = matches!(p.state, PieceState::Rubble { .. })
                && p.velocity == [0.0; 3]
                && p.spin == [0.0; 3];
            let body =
                physics.spawn_compound(Pose::from(p.pose), &p.parts(&self.materials)?, asleep)?;
            if !asleep {
                physics.set_body_velocity(body, p.velocity, p.spin)?;
            }
            self.bodies.insert(p.id, body);
            self.by_body.insert(body, p.id);
            self.next_piece = self.next_piece.max(p.id.0 + 1);
            let top = p.blocks.iter().map(|b| b.block.id.0 + 1).max().unwrap_or(0);
            self.store.next_id = self.store.next_id.max(top);
            self.pieces.insert(p.id, p.clone());
            for pos in held_on {
                if self.store.get(pos).is_some() {
                    self.holds.entry(p.id).or_default().insert(pos);
                    self.rests_on.entry(pos).or_default().insert(p.id);
                }
            }
        }
        for h in &delta.held {
            self.drop_held(physics, h.pos);
            while let Some(other) = self.store.overlapping(h.pos) {
                self.drop_held(physics, other);
            }
            self.store.insert(h.pos, h.block.clone());
            if !h.rests_on.is_empty() {
                for &p in &h.rests_on {
                    self.holds.entry(p).or_default().insert(h.pos);
                }
                self.rests_on
                    .insert(h.pos, h.rests_on.iter().copied().collect());
            }
            self.add_fixed(physics, h.pos)?;
        }
        Ok(())
    }

    /// Checks a delta's records as [`BlockWorld::load`] checks a file's.
    fn check_delta(&self, delta: &BlockDelta) -> Result<(), BlockError> {
        let bad = |reason: String| BlockError::BadSave { reason };
        let check_block = |pos: BlockPos, b: &crate::Block| -> Result<(), BlockError> {
            pos.check()?;
            self.materials.require(b.material)?;
            b.shape.validate()?;
            if !(b.damage.is_finite() && b.damage >= 0.0) {
                return Err(bad(format!("block {:?} has damage {}", b.id, b.damage)));
            }
            Ok(())
        };
        for h in &delta.held {
            check_block(h.pos, &h.block)?;
        }
        for &pos in &delta.unheld {
            pos.check()?;
        }
        for p in &delta.pieces {
            if p.blocks.is_empty() {
                return Err(bad(format!("piece {:?} has no block", p.id)));
            }
            for b in &p.blocks {
                check_block(b.pos, &b.block)?;
            }
            if !(p.is_finite() && p.offset.iter().all(|c| c.abs() <= 1.0)) {
                return Err(bad(format!(
                    "piece {:?} has a non-finite pose or motion",
                    p.id
                )));
            }
        }
        Ok(())
    }

    /// Removes a piece, its body and its rubble relations (no support check).
    fn drop_piece(&mut self, physics: &mut PhysicsWorld, id: PieceId) {
        if let Some(body) = self.bodies.remove(&id) {
            physics.remove_body(body);
            self.by_body.remove(&body);
        }
        self.pieces.remove(&id);
        for pos in self.holds.remove(&id).unwrap_or_default() {
            if let Some(set) = self.rests_on.get_mut(&pos) {
                set.remove(&id);
                if set.is_empty() {
                    self.rests_on.remove(&pos);
                }
            }
        }
    }

    /// Removes a held block and its collider (no support check).
    fn drop_held(&mut self, physics: &mut PhysicsWorld, pos: BlockPos) {
        if let Some(block) = self.store.remove(pos) {
            physics.remove_fixed(FixedId(block.id.0));
            self.forget_rubble_contacts(pos);
        }
    }

    /// A replica's frame: steps `physics` and copies the falling pieces' poses and motion
    /// out of it, so the falls play back; decides nothing (no impacts, damage, rest or
    /// support: those come from the authority's deltas). Resting rubble keeps its record
    /// whatever its body does here.
    ///
    /// # Errors
    /// [`BlockError::Physics`] for a bad `dt_seconds`.
    pub fn follow(
        &mut self,
        physics: &mut PhysicsWorld,
        dt_seconds: f32,
    ) -> Result<(), BlockError> {
        physics.step(dt_seconds)?;
        for (id, piece) in &mut self.pieces {
            if !matches!(piece.state, PieceState::Falling) {
                continue;
            }
            let Some(&body) = self.bodies.get(id) else {
                continue;
            };
            if let (Some(pose), Some(state)) = (physics.body_pose(body), physics.body_state(body)) {
                piece.pose = pose.into();
                piece.velocity = state.linear_velocity;
                piece.spin = state.angular_velocity;
            }
        }
        Ok(())
    }
}
