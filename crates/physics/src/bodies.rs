//! Dynamic bodies: boxes and balls that fall, collide with terrain, each other and
//! characters (falling blocks and rubble build on these, issue 8).

use rapier3d::prelude::{ColliderBuilder, RigidBodyBuilder, RigidBodyHandle};

use crate::error::{PhysicsError, check_finite, check_min};
use crate::world::{PhysicsWorld, arr3, body_tag, vec3};

/// A dynamic body in a [`PhysicsWorld`]. An id of a removed body stays invalid (handles
/// carry a generation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BodyId(pub(crate) RigidBodyHandle);

impl BodyId {
    /// The id as one number (slot index in the high half, generation in the low half):
    /// equal ids give equal numbers, and the order is the order of [`Ord`].
    pub fn to_bits(self) -> u64 {
        let (i, g) = self.0.into_raw_parts();
        (u64::from(i) << 32) | u64::from(g)
    }
}

impl Ord for BodyId {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.to_bits().cmp(&other.to_bits())
    }
}

impl PartialOrd for BodyId {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Where a body is and how it moves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BodyState {
    /// Centre of the body's shape, world metres.
    pub position: [f32; 3],
    /// Orientation as a unit quaternion `[x, y, z, w]`.
    pub rotation: [f32; 4],
    /// Velocity of the centre, m/s.
    pub linear_velocity: [f32; 3],
    /// Angular velocity, radians per second about each world axis.
    pub angular_velocity: [f32; 3],
    /// The body is asleep: at rest and not simulated until something touches it.
    pub sleeping: bool,
}

impl PhysicsWorld {
    /// Adds a dynamic box centred at `center` (metres) with half-extents `half_extents`
    /// (metres, each > 0) and `density` (kg/m³, > 0), axis-aligned. Continuous collision
    /// detection is on, so a fast small box does not pass through thin terrain.
    ///
    /// # Errors
    /// [`PhysicsError::NonFinite`] or [`PhysicsError::OutOfRange`].
    pub fn spawn_dynamic_cuboid(
        &mut self,
        center: [f32; 3],
        half_extents: [f32; 3],
        density: f32,
    ) -> Result<BodyId, PhysicsError> {
        check_finite("center", &center)?;
        for e in half_extents {
            check_min("half_extents", e, 0.0, false, "> 0 metres")?;
        }
        check_min("density", density, 0.0, false, "> 0 kg/m³")?;
        let [x, y, z] = half_extents;
        Ok(self.spawn_dynamic(center, ColliderBuilder::cuboid(x, y, z).density(density)))
    }

    /// Adds a dynamic ball centred at `center` (metres) with `radius` (metres, > 0) and
    /// `density` (kg/m³, > 0). Continuous collision detection is on.
    ///
    /// # Errors
    /// [`PhysicsError::NonFinite`] or [`PhysicsError::OutOfRange`].
    pub fn spawn_dynamic_ball(
        &mut self,
        center: [f32; 3],
        radius: f32,
        density: f32,
    ) -> Result<BodyId, PhysicsError> {
        check_finite("center", &center)?;
        check_min("radius", radius, 0.0, false, "> 0 metres")?;
        check_min("density", density, 0.0, false, "> 0 kg/m³")?;
        Ok(self.spawn_dynamic(center, ColliderBuilder::ball(radius).density(density)))
    }

    /// Marks a new dynamic body as ours (its user data, [`body_tag`]) and gives it the
    /// world's sleep speed ([`crate::PhysicsSettings::sleep_speed`]); returns the tag.
    pub(crate) fn tag_dynamic(&mut self, handle: RigidBodyHandle) -> u128 {
        let tag = body_tag(handle);
        let sleep_speed = self.settings.sleep_speed;
        if let Some(b) = self.rapier.bodies.get_mut(handle) {
            b.user_data = tag;
            // Rapier lets a body sleep while half its step's drift is under threshold × dt
            // (the threshold scaled by the length unit, 1 here: metres): a speed of twice
            // the threshold.
            b.activation_mut().normalized_linear_threshold = sleep_speed / 2.0;
        }
        tag
    }

    fn spawn_dynamic(&mut self, center: [f32; 3], collider: ColliderBuilder) -> BodyId {
        let handle = self.rapier.insert_body(
            RigidBodyBuilder::dynamic()
                .translation(vec3(center))
                .ccd_enabled(true),
        );
        let id = BodyId(handle);
        let tag = self.tag_dynamic(handle);
        self.insert_collider_now(collider.user_data(tag).build(), Some(handle));
        id
    }

    /// A body's centre, world metres, or `None` for an unknown or removed id.
    pub fn body_position(&self, id: BodyId) -> Option<[f32; 3]> {
        self.rapier.bodies.get(id.0).map(|b| arr3(b.translation()))
    }

    /// A body's full state, or `None` for an unknown or removed id.
    pub fn body_state(&self, id: BodyId) -> Option<BodyState> {
        self.rapier.bodies.get(id.0).map(|b| BodyState {
            position: arr3(b.translation()),
            rotation: b.rotation().to_array(),
            linear_velocity: arr3(b.linvel()),
            angular_velocity: arr3(b.angvel()),
            sleeping: b.is_sleeping(),
        })
    }

    /// Sets a body's velocities (m/s and rad/s) and wakes it.
    ///
    /// # Errors
    /// [`PhysicsError::UnknownBody`] or [`PhysicsError::NonFinite`].
    pub fn set_body_velocity(
        &mut self,
        id: BodyId,
        linear: [f32; 3],
        angular: [f32; 3],
    ) -> Result<(), PhysicsError> {
        check_finite("linear", &linear)?;
        check_finite("angular", &angular)?;
        if self.rapier.bodies.get(id.0).is_some_and(|b| b.is_dynamic()) {
            self.cancel_sleep(id);
        }
        let b = self
            .rapier
            .bodies
            .get_mut(id.0)
            .filter(|b| b.is_dynamic())
            .ok_or(PhysicsError::UnknownBody(id))?;
        b.set_linvel(vec3(linear), true);
        b.set_angvel(vec3(angular), true);
        Ok(())
    }

    /// Removes a body and its collider, waking what touched it. Returns whether it existed.
    pub fn remove_body(&mut self, id: BodyId) -> bool {
        let is_ours = self.rapier.bodies.get(id.0).is_some_and(|b| b.is_dynamic());
        is_ours && self.rapier.remove_body(id.0).is_some()
    }

    /// Ids of every dynamic body, in handle order (deterministic).
    pub fn body_ids(&self) -> impl Iterator<Item = BodyId> + '_ {
        self.rapier
            .bodies
            .iter()
            .filter(|(_, b)| b.is_dynamic())
            .map(|(h, _)| BodyId(h))
    }

    /// Number of dynamic bodies.
    pub fn body_count(&self) -> usize {
        self.body_ids().count()
    }
}
