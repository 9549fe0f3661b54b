//! Impacts: contacts that close faster than [`crate::PhysicsSettings::impact_speed`].
//!
//! ```text
//!   before the step: velocities v₁, ω₁ (and v₂, ω₂ of what is hit, 0 if fixed or asleep)
//!   after the step:  the contact points the narrow phase found for it
//!   closing speed at a point p = ((v₁ + ω₁ × r₁) − (v₂ + ω₂ × r₂)) · n,  n out of body 1
//! ```
//!
//! The narrow phase finds a contact at the start of the step that resolves it, so the
//! velocities from before that step are the ones the bodies met with. A speculative point
//! (still apart) counts only if the closing speed would close its gap within the step.

use std::collections::BTreeMap;

use rapier3d::math::Vector;
use rapier3d::prelude::{ColliderHandle, RigidBodyHandle};

use crate::world::{PhysicsWorld, arr3, part_of, target_of};
use crate::{BodyId, HitTarget};

/// A contact that closed faster than [`crate::PhysicsSettings::impact_speed`]
/// ([`PhysicsWorld::impacts`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Impact {
    /// The dynamic body that hit something.
    pub body: BodyId,
    /// Which part of the body hit: its index in the parts given to
    /// [`PhysicsWorld::spawn_compound`] (0 for boxes and balls).
    pub part: u32,
    /// What it hit.
    pub other: HitTarget,
    /// The contact point on the body's surface, world metres.
    pub point: [f32; 3],
    /// Unit contact normal, world axes, pointing from the body into what it hit.
    pub normal: [f32; 3],
    /// Closing speed along the normal just before the contact was resolved, m/s.
    pub speed: f32,
}

/// A body's motion before a step.
#[derive(Clone, Copy)]
struct Motion {
    linvel: Vector,
    angvel: Vector,
}

/// Slack on a speculative point's gap, metres: a point this far apart, or closer, counts.
const GAP_SLACK: f32 = 1e-3;

impl PhysicsWorld {
    /// The impacts of the steps run by the last [`Self::step`] call: for each dynamic body
    /// whose contact closed faster than `settings.impact_speed`, its hardest one (over all
    /// of the call's steps), in ascending body order. Empty when the call ran no step.
    ///
    /// Both bodies of a collision between two moving bodies report it. A body that was
    /// asleep before the step reports nothing (the one that woke it does).
    pub fn impacts(&self) -> &[Impact] {
        &self.impacts
    }

    /// One simulation step, with impact collection.
    pub(crate) fn step_once(&mut self) {
        let before: BTreeMap<BodyId, Motion> = self
            .rapier
            .bodies
            .iter()
            .filter(|(_, b)| b.is_dynamic() && !b.is_sleeping())
            .map(|(h, b)| {
                (
                    BodyId(h),
                    Motion {
                        linvel: b.linvel(),
                        angvel: b.angvel(),
                    },
                )
            })
            .collect();
        self.rapier.step();
        self.settle_new_sleepers();
        let dt = self.settings.timestep;
        let threshold = self.settings.impact_speed;
        for (&id, motion) in &before {
            let Some(hit) = self.hardest_contact(id.0, *motion, &before, dt) else {
                continue;
            };
            if hit.speed <= threshold {
                continue;
            }
            match self.impacts.binary_search_by(|i| i.body.cmp(&hit.body)) {
                Ok(i) if self.impacts[i].speed < hit.speed => self.impacts[i] = hit,
                Ok(_) => {}
                Err(i) => self.impacts.insert(i, hit),
            }
        }
    }

    /// The fastest-closing contact point of a body after a step, with the velocities it
    /// had before the step.
    fn hardest_contact(
        &self,
        handle: RigidBodyHandle,
        motion: Motion,
        before: &BTreeMap<BodyId, Motion>,
        dt: f32,
    ) -> Option<Impact> {
        let w = &self.rapier;
        let body = w.bodies.get(handle)?;
        let com = body.center_of_mass();
        let mut best: Option<Impact> = None;
        for &mine in body.colliders() {
            let Some(co) = w.colliders.get(mine) else {
                continue;
            };
            for pair in w.narrow_phase.contact_pairs_with(mine) {
                let (other, first) = if pair.collider1 == mine {
                    (pair.collider2, true)
                } else {
                    (pair.collider1, false)
                };
                let Some((target, other_motion, other_com)) =
                    self.other_side(other, handle, before)
                else {
                    continue;
                };
                for m in &pair.manifolds {
                    let local_n = if first { m.local_n1 } else { m.local_n2 };
                    let n = co.position().rotation * local_n;
                    for p in &m.points {
                        let local_p = if first { p.local_p1 } else { p.local_p2 };
                        let at = co.position().transform_point(local_p);
                        let v1 = motion.linvel + motion.angvel.cross(at - com);
                        let v2 = other_motion.linvel + other_motion.angvel.cross(at - other_com);
                        let speed = (v1 - v2).dot(n);
                        if speed.is_nan() || speed <= 0.0 || p.dist > speed * dt + GAP_SLACK {
                            continue;
                        }
                        if best.is_none_or(|b| speed > b.speed) {
                            best = Some(Impact {
                                body: BodyId(handle),
                                part: part_of(co.user_data),
                                other: target,
                                point: arr3(at),
                                normal: arr3(n),
                                speed,
                            });
                        }
                    }
                }
            }
        }
        best
    }

    /// What a contact's other collider is, with its motion before the step (zero for fixed
    /// colliders, terrain and sleeping bodies; a character's current velocity) and its
    /// centre of mass. `None` for colliders of the body itself or without a tag.
    fn other_side(
        &self,
        collider: ColliderHandle,
        me: RigidBodyHandle,
        before: &BTreeMap<BodyId, Motion>,
    ) -> Option<(HitTarget, Motion, Vector)> {
        let w = &self.rapier;
        let co = w.colliders.get(collider)?;
        let target = target_of(co.user_data)?;
        let still = Motion {
            linvel: Vector::ZERO,
            angvel: Vector::ZERO,
        };
        let Some(parent) = co.parent() else {
            return Some((target, still, Vector::ZERO));
        };
        if parent == me {
            return None;
        }
        let b = w.bodies.get(parent)?;
        let motion = match before.get(&BodyId(parent)) {
            Some(m) => *m,
            None if b.is_kinematic() => Motion {
                linvel: b.linvel(),
                angvel: b.angvel(),
            },
            None => still,
        };
        Some((target, motion, b.center_of_mass()))
    }
}
