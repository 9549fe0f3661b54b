//! The world: settings, the fixed-step clock, ray casts, and the bookkeeping that keeps
//! scene queries current between steps.

use std::collections::BTreeMap;

use rapier3d::math::Vector;
use rapier3d::parry::bounding_volume::Aabb;
use rapier3d::pipeline::PhysicsWorld as RapierWorld;
use rapier3d::prelude::{
    Collider, ColliderHandle, QueryFilter, Ray, RigidBodyHandle, RigidBodyType,
};

use crate::character::Character;
use crate::error::{PhysicsError, check_finite, check_min};
use crate::impacts::Impact;
use crate::{BodyId, CharacterId, FixedId};

/// Settings of a [`PhysicsWorld`]. Plain data with defaults; checked by
/// [`PhysicsWorld::new`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PhysicsSettings {
    /// Acceleration of gravity on dynamic bodies, m/s², world axes (Y up). Default
    /// `[0, −9.81, 0]`. Characters carry their own gravity ([`crate::CharacterSettings`]).
    pub gravity: [f32; 3],
    /// Length of one simulation step, seconds. Default `1/60`. Must be > 0.
    pub timestep: f32,
    /// Most steps one [`PhysicsWorld::step`] call runs (and most substeps one
    /// [`PhysicsWorld::move_character`] call splits into). Time beyond
    /// `max_substeps · timestep` in one call is dropped, so a slow frame slows the
    /// simulation down instead of making the next frame slower still. Default 4; at least 1.
    pub max_substeps: u32,
    /// Closing speed above which a contact is an [`crate::Impact`], m/s (the speed at which
    /// a contact point of a dynamic body approaches what it touches, along the contact
    /// normal, before the step resolves it). Default 2. Must be >= 0.
    pub impact_speed: f32,
    /// Speed below which a dynamic body may fall asleep, m/s: once every body of a group
    /// in contact has moved slower than this at its farthest point (its pose's drift over
    /// a step, turning included, divided by the step) for half a second, the group sleeps
    /// until something touches it. Default 0.3; Rapier's own (0.1 m/s by this measure)
    /// let a pile of some 40 blocks creep at a few cm/s for minutes, stepped all the
    /// while. In `[0, 2]`; 0 keeps every body awake.
    pub sleep_speed: f32,
}

impl Default for PhysicsSettings {
    fn default() -> Self {
        Self {
            gravity: [0.0, -9.81, 0.0],
            timestep: 1.0 / 60.0,
            max_substeps: 4,
            impact_speed: 2.0,
            sleep_speed: 0.3,
        }
    }
}

impl PhysicsSettings {
    /// Checks every field (see their docs).
    pub fn validate(&self) -> Result<(), PhysicsError> {
        check_finite("gravity", &self.gravity)?;
        check_min("timestep", self.timestep, 0.0, false, "> 0 seconds")?;
        check_min("impact_speed", self.impact_speed, 0.0, true, ">= 0 m/s")?;
        check_min("sleep_speed", self.sleep_speed, 0.0, true, "in [0, 2] m/s")?;
        if self.sleep_speed > 2.0 {
            return Err(PhysicsError::OutOfRange {
                what: "sleep_speed",
                value: self.sleep_speed,
                expected: "in [0, 2] m/s",
            });
        }
        if self.max_substeps == 0 {
            return Err(PhysicsError::OutOfRange {
                what: "max_substeps",
                value: 0.0,
                expected: "at least 1",
            });
        }
        Ok(())
    }
}

/// What a ray (or an [`crate::Impact`]) hit: a terrain chunk, a dynamic body, a character
/// or a fixed collider.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HitTarget {
    /// The terrain collider of the chunk with this key.
    Terrain([i32; 3]),
    /// A dynamic body.
    Body(BodyId),
    /// A character's capsule.
    Character(CharacterId),
    /// A fixed collider ([`PhysicsWorld::set_fixed`]), by the caller's id.
    Fixed(FixedId),
}

/// Which kinds of colliders a ray can hit ([`PhysicsWorld::cast_ray`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RayMask {
    /// Terrain chunk colliders.
    pub terrain: bool,
    /// Dynamic bodies.
    pub bodies: bool,
    /// Character capsules.
    pub characters: bool,
    /// Fixed colliders ([`PhysicsWorld::set_fixed`]).
    pub fixed: bool,
}

impl RayMask {
    /// Everything.
    pub const ALL: RayMask = RayMask {
        terrain: true,
        bodies: true,
        characters: true,
        fixed: true,
    };
    /// Terrain only (the ground under a point, whatever stands on it).
    pub const TERRAIN: RayMask = RayMask {
        terrain: true,
        bodies: false,
        characters: false,
        fixed: false,
    };

    fn admits(self, tag: u128) -> bool {
        match tag & TAG_MASK {
            TAG_TERRAIN => self.terrain,
            TAG_BODY => self.bodies,
            TAG_CHARACTER => self.characters,
            TAG_FIXED => self.fixed,
            _ => false,
        }
    }
}

/// The first thing a ray hit ([`PhysicsWorld::cast_ray`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RayHit {
    /// Distance from the ray's origin to the hit, metres.
    pub distance: f32,
    /// The hit point, world metres.
    pub point: [f32; 3],
    /// Unit surface normal at the hit, facing the ray's origin side of the surface.
    pub normal: [f32; 3],
    /// What was hit.
    pub target: HitTarget,
}

/// The tag kept in a collider's `user_data` (top byte: kind).
const TAG_TERRAIN: u128 = 1 << 120;
const TAG_BODY: u128 = 2 << 120;
const TAG_CHARACTER: u128 = 3 << 120;
const TAG_FIXED: u128 = 4 << 120;
const TAG_MASK: u128 = 0xff << 120;

pub(crate) fn terrain_tag(key: [i32; 3]) -> u128 {
    TAG_TERRAIN
        | (u128::from(key[0] as u32) << 64)
        | (u128::from(key[1] as u32) << 32)
        | u128::from(key[2] as u32)
}

pub(crate) fn body_tag(handle: RigidBodyHandle) -> u128 {
    let (i, g) = handle.into_raw_parts();
    TAG_BODY | (u128::from(i) << 32) | u128::from(g)
}

pub(crate) fn character_tag(id: CharacterId) -> u128 {
    TAG_CHARACTER | u128::from(id.0)
}

pub(crate) fn fixed_tag(id: FixedId) -> u128 {
    TAG_FIXED | u128::from(id.0)
}

/// The part index kept in bits 64..96 of a body collider's tag (0 for simple bodies).
pub(crate) fn part_of(tag: u128) -> u32 {
    (tag >> 64) as u32
}

pub(crate) fn target_of(tag: u128) -> Option<HitTarget> {
    let lo = |shift: u32| (tag >> shift) as u32;
    match tag & TAG_MASK {
        TAG_TERRAIN => Some(HitTarget::Terrain([
            lo(64) as i32,
            lo(32) as i32,
            lo(0) as i32,
        ])),
        TAG_BODY => Some(HitTarget::Body(BodyId(RigidBodyHandle::from_raw_parts(
            lo(32),
            lo(0),
        )))),
        TAG_CHARACTER => Some(HitTarget::Character(CharacterId(lo(0)))),
        TAG_FIXED => Some(HitTarget::Fixed(FixedId(tag as u64))),
        _ => None,
    }
}

pub(crate) fn vec3(v: [f32; 3]) -> Vector {
    Vector::new(v[0], v[1], v[2])
}

pub(crate) fn arr3(v: Vector) -> [f32; 3] {
    [v.x, v.y, v.z]
}

/// One Rapier world: terrain colliders per chunk, characters and dynamic bodies.
///
/// Owned by one thread (the physics owner: the editor's main thread, later a server's tick).
/// Expensive terrain work ([`crate::TerrainShape::build`]) runs elsewhere; everything here is
/// cheap. Everything is deterministic: chunks live in a `BTreeMap`, characters are moved in
/// call order, and the same calls on the same build give bit-equal results.
///
/// Scene queries (character moves, [`PhysicsWorld::cast_ray`]) see colliders added or
/// removed since the last step at once, not only after the next [`PhysicsWorld::step`].
pub struct PhysicsWorld {
    pub(crate) rapier: RapierWorld,
    pub(crate) settings: PhysicsSettings,
    /// Simulated time owed to `step`, seconds (below one timestep between calls).
    accumulator: f64,
    /// Steps run since creation.
    steps: u64,
    pub(crate) chunks: BTreeMap<[i32; 3], ColliderHandle>,
    pub(crate) characters: BTreeMap<u32, Character>,
    pub(crate) next_character: u32,
    pub(crate) fixed: BTreeMap<FixedId, ColliderHandle>,
    /// The impacts of the last `step` call, one per body, ascending body order.
    pub(crate) impacts: Vec<Impact>,
    /// Bodies spawned asleep, to be put to sleep after their first step.
    pub(crate) to_sleep: Vec<RigidBodyHandle>,
}

impl std::fmt::Debug for PhysicsWorld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PhysicsWorld")
            .field("settings", &self.settings)
            .field("steps", &self.steps)
            .field("chunks", &self.chunks.len())
            .field("characters", &self.characters.len())
            .field("fixed", &self.fixed.len())
            .field("bodies", &self.rapier.bodies.len())
            .finish()
    }
}

impl PhysicsWorld {
    /// An empty world.
    ///
    /// # Errors
    /// [`PhysicsError::NonFinite`] or [`PhysicsError::OutOfRange`] for bad settings.
    pub fn new(settings: PhysicsSettings) -> Result<Self, PhysicsError> {
        settings.validate()?;
        let mut rapier = RapierWorld::new();
        rapier.gravity = vec3(settings.gravity);
        rapier.integration_parameters.dt = settings.timestep;
        // No contact clustering: Rapier merges the manifolds of a pair whose normals agree
        // within ~5° into one, solved along the normal of whichever manifold came first. A
        // block on terrain touches several triangles of a curved surface whose normals differ
        // by a few degrees; the merged normal then jumps between them as the block rocks,
        // pushing it off the surface's own normals: a block could rock on a gentle slope for
        // as long as it was stepped, every swing above `sleep_speed` (5 of 12 variants of
        // loam-blocks' hundred-block drop; all 12 settle within 14 s without clustering).
        rapier.integration_parameters.contact_clustering = false;
        Ok(Self {
            rapier,
            settings,
            accumulator: 0.0,
            steps: 0,
            chunks: BTreeMap::new(),
            characters: BTreeMap::new(),
            next_character: 0,
            fixed: BTreeMap::new(),
            impacts: Vec::new(),
            to_sleep: Vec::new(),
        })
    }

    /// The settings this world was made with.
    pub fn settings(&self) -> &PhysicsSettings {
        &self.settings
    }

    /// Steps run since creation.
    pub fn step_count(&self) -> u64 {
        self.steps
    }

    /// Simulated time owed to the next [`Self::step`] call, as a fraction of a timestep in
    /// `[0, 1)`: blend body poses by it to draw between steps.
    pub fn pending_fraction(&self) -> f32 {
        (self.accumulator / f64::from(self.settings.timestep)) as f32
    }

    /// Advances dynamic bodies by `dt_seconds` of simulated time in fixed steps of
    /// `settings.timestep`, carrying the remainder to the next call. Runs at most
    /// `settings.max_substeps` steps; time beyond that is dropped. Returns the number of
    /// steps run (0 when less than one timestep is owed).
    ///
    /// Characters are not moved here: they move in [`Self::move_character`]. Their
    /// kinematic bodies reach the pose of their last move during the next step, pushing
    /// dynamic bodies.
    ///
    /// The impacts of the steps run are collected for [`Self::impacts`] (replacing those of
    /// the previous call): each dynamic body reports at most one, its hardest.
    ///
    /// # Errors
    /// [`PhysicsError::NonFinite`] / [`PhysicsError::OutOfRange`] if `dt_seconds` is NaN,
    /// infinite or negative (nothing is stepped).
    pub fn step(&mut self, dt_seconds: f32) -> Result<u32, PhysicsError> {
        check_min("dt_seconds", dt_seconds, 0.0, true, ">= 0 seconds")?;
        let ts = f64::from(self.settings.timestep);
        self.accumulator += f64::from(dt_seconds);
        let mut n = 0;
        self.impacts.clear();
        // A relative tolerance so that `dt == timestep` always runs exactly one step.
        while self.accumulator >= ts * (1.0 - 1e-6) && n < self.settings.max_substeps {
            self.step_once();
            self.accumulator = (self.accumulator - ts).max(0.0);
            self.steps += 1;
            n += 1;
        }
        if self.accumulator >= ts {
            // The spiral guard: drop what could not be simulated in this call.
            self.accumulator %= ts;
        }
        Ok(n)
    }

    /// The first collider of a kind in `mask` hit by the ray from `origin` along
    /// `direction` (need not be unit length) within `max_distance` metres, or `None`. Rays
    /// starting inside a body or capsule hit it at distance 0; terrain trimeshes are
    /// surfaces (a ray from below the ground hits its underside).
    ///
    /// # Errors
    /// [`PhysicsError::NonFinite`] for non-finite input, [`PhysicsError::OutOfRange`] for a
    /// zero direction or a negative `max_distance`.
    pub fn cast_ray(
        &self,
        origin: [f32; 3],
        direction: [f32; 3],
        max_distance: f32,
        mask: RayMask,
    ) -> Result<Option<RayHit>, PhysicsError> {
        check_finite("origin", &origin)?;
        check_finite("direction", &direction)?;
        check_min("max_distance", max_distance, 0.0, true, ">= 0 metres")?;
        let d = vec3(direction);
        let len = d.length();
        if len.is_nan() || len <= 1e-12 {
            return Err(PhysicsError::OutOfRange {
                what: "direction",
                value: len,
                expected: "a non-zero vector",
            });
        }
        let ray = Ray::new(vec3(origin), d / len);
        let admits = |_, co: &Collider| mask.admits(co.user_data);
        let filter = QueryFilter {
            predicate: Some(&admits),
            ..QueryFilter::default()
        };
        let hit = self
            .rapier
            .cast_ray_and_get_normal(&ray, max_distance, true, filter);
        Ok(hit.and_then(|(handle, hit)| {
            let co = self.rapier.colliders.get(handle)?;
            Some(RayHit {
                distance: hit.time_of_impact,
                point: arr3(ray.point_at(hit.time_of_impact)),
                normal: arr3(hit.normal),
                target: target_of(co.user_data)?,
            })
        }))
    }

    /// Inserts a collider and puts it into the broad phase's tree at once, so scene
    /// queries see it before the next step (the pipeline would only add it during the
    /// step). Rapier documents `set_aabb` for this; the next step's broad-phase update
    /// takes it into account.
    pub(crate) fn insert_collider_now(
        &mut self,
        collider: Collider,
        parent: Option<RigidBodyHandle>,
    ) -> ColliderHandle {
        let handle = self.rapier.insert_collider(collider, parent);
        self.refresh_collider_aabb(handle);
        handle
    }

    /// Re-reads a collider's AABB into the broad phase's tree (see
    /// [`Self::insert_collider_now`]).
    pub(crate) fn refresh_collider_aabb(&mut self, handle: ColliderHandle) {
        let w = &mut self.rapier;
        if let Some(co) = w.colliders.get(handle) {
            let aabb = co.compute_broad_phase_aabb(&w.integration_parameters, &w.bodies);
            if aabb.mins.is_finite() && aabb.maxs.is_finite() {
                w.broad_phase
                    .set_aabb(&w.integration_parameters, handle, aabb);
            }
        }
    }

    /// Wakes every dynamic body whose collider's AABB meets `aabb`: terrain appearing under
    /// or inside a sleeping body must push it (removal wakes the bodies it touched already).
    pub(crate) fn wake_bodies_in(&mut self, aabb: Aabb) {
        let w = &mut self.rapier;
        let sleeping: Vec<RigidBodyHandle> = w
            .query_pipeline()
            .intersect_aabb_conservative(aabb)
            .filter_map(|(_, co)| co.parent())
            .filter(|&b| {
                w.bodies
                    .get(b)
                    .is_some_and(|rb| rb.body_type() == RigidBodyType::Dynamic && rb.is_sleeping())
            })
            .collect();
        for b in sleeping {
            w.wake_up(b, true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip() {
        for id in [0, 7, u64::MAX] {
            let t = fixed_tag(FixedId(id));
            assert_eq!(target_of(t), Some(HitTarget::Fixed(FixedId(id))));
        }
        let h = RigidBodyHandle::from_raw_parts(9, 2);
        let with_part = body_tag(h) | (u128::from(5u32) << 64);
        assert_eq!(target_of(with_part), Some(HitTarget::Body(BodyId(h))));
        assert_eq!(part_of(with_part), 5);
        for key in [[0, 0, 0], [-1, 2, -3], [i32::MIN, i32::MAX, -7]] {
            assert_eq!(target_of(terrain_tag(key)), Some(HitTarget::Terrain(key)));
        }
        let h = RigidBodyHandle::from_raw_parts(7, 3);
        assert_eq!(target_of(body_tag(h)), Some(HitTarget::Body(BodyId(h))));
        let c = CharacterId(42);
        assert_eq!(target_of(character_tag(c)), Some(HitTarget::Character(c)));
        assert_eq!(target_of(0), None);
    }

    #[test]
    fn settings_are_checked() {
        let bad = [
            PhysicsSettings {
                timestep: 0.0,
                ..Default::default()
            },
            PhysicsSettings {
                timestep: f32::NAN,
                ..Default::default()
            },
            PhysicsSettings {
                gravity: [0.0, f32::INFINITY, 0.0],
                ..Default::default()
            },
            PhysicsSettings {
                max_substeps: 0,
                ..Default::default()
            },
            PhysicsSettings {
                impact_speed: -1.0,
                ..Default::default()
            },
        ];
        for s in bad {
            assert!(PhysicsWorld::new(s).is_err(), "{s:?}");
        }
    }

    #[test]
    fn accumulator_runs_whole_steps_and_bounds_them() {
        let mut w = PhysicsWorld::new(PhysicsSettings::default()).unwrap();
        let ts = w.settings().timestep;
        assert_eq!(w.step(ts).unwrap(), 1);
        assert_eq!(w.step(ts * 0.5).unwrap(), 0);
        assert_eq!(w.step(ts * 0.5).unwrap(), 1);
        // A 2 s hitch runs only `max_substeps` steps and keeps less than one step owed.
        assert_eq!(w.step(2.0).unwrap(), 4);
        assert!(w.pending_fraction() < 1.0);
        assert_eq!(w.step_count(), 6);
        assert!(w.step(f32::NAN).is_err());
        assert!(w.step(-1.0).is_err());
        assert_eq!(w.step_count(), 6);
    }
}
