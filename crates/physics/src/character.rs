//! The walking character: a capsule moved by Rapier's kinematic character controller, with
//! gravity, jumping, step-up and a slope limit.
//!
//! ```text
//!        ___
//!       /   \   ← hemisphere, `radius`
//!      |     |  ┐
//!      |  +  |  │ cylinder, 2 · `half_height`; `+` is the centre
//!      |     |  ┘
//!       \___/   ← hemisphere
//!         ·     ← the feet: centre − (half_height + radius); `position` everywhere
//!   ~~~~~~~~~~~ ground, `skin` below the feet when standing
//! ```

use rapier3d::control::{CharacterAutostep, CharacterLength, KinematicCharacterController};
use rapier3d::math::{Pose, Vector};
use rapier3d::parry::query::ShapeCastOptions;
use rapier3d::parry::shape::Capsule;
use rapier3d::prelude::{
    ColliderBuilder, ColliderHandle, QueryFilter, RigidBodyBuilder, RigidBodyHandle,
};

use crate::error::{PhysicsError, check_finite, check_min};
use crate::world::{PhysicsWorld, arr3, character_tag, vec3};

/// A character in a [`PhysicsWorld`]; ids are never reused within a world.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CharacterId(pub(crate) u32);

/// Shape and movement of a character. Metres, seconds and degrees; plain data with
/// defaults, checked by [`PhysicsWorld::spawn_character`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CharacterSettings {
    /// Capsule radius, metres. Default 0.35. Must be > 0.
    pub radius: f32,
    /// Half the length of the capsule's cylinder part, metres. Default 0.55, giving a
    /// 1.8 m tall character. Must be >= 0.
    pub half_height: f32,
    /// Gap the controller keeps between the capsule and the world, metres. Default 0.01.
    /// Must be > 0 and below `radius`.
    pub skin: f32,
    /// Highest ledge climbed without jumping, metres. Default 0.45; 0 disables stepping.
    pub step_height: f32,
    /// Free depth a ledge's top needs to be stepped onto, metres. Default 0.2.
    pub step_min_width: f32,
    /// Steepest slope walked up, degrees from horizontal. Default 45. In `[0, 90]`.
    pub max_slope_climb_deg: f32,
    /// Slopes steeper than this make a standing character slide down, degrees. Default 45.
    /// In `[0, 90]`.
    pub min_slope_slide_deg: f32,
    /// Walking down, the character sticks to ground up to this far below its feet instead
    /// of flying off small drops, metres. Default 0.3; 0 disables.
    pub snap_to_ground: f32,
    /// Horizontal speed at full input, m/s. Default 4.5.
    pub walk_speed: f32,
    /// Speed factor while running. Default 1.8.
    pub run_multiplier: f32,
    /// Upward speed given by a jump, m/s. Default 5.5 (≈ 1.54 m high at 9.81 m/s²).
    pub jump_speed: f32,
    /// Downward acceleration, m/s² (a magnitude). Default 9.81.
    pub gravity: f32,
    /// Fastest fall, m/s. Default 50.
    pub max_fall_speed: f32,
}

impl Default for CharacterSettings {
    fn default() -> Self {
        Self {
            radius: 0.35,
            half_height: 0.55,
            skin: 0.01,
            step_height: 0.45,
            step_min_width: 0.2,
            max_slope_climb_deg: 45.0,
            min_slope_slide_deg: 45.0,
            snap_to_ground: 0.3,
            walk_speed: 4.5,
            run_multiplier: 1.8,
            jump_speed: 5.5,
            gravity: 9.81,
            max_fall_speed: 50.0,
        }
    }
}

impl CharacterSettings {
    /// Checks every field (see their docs).
    pub fn validate(&self) -> Result<(), PhysicsError> {
        check_min("radius", self.radius, 0.0, false, "> 0 metres")?;
        check_min("half_height", self.half_height, 0.0, true, ">= 0 metres")?;
        check_min("skin", self.skin, 0.0, false, "> 0 metres")?;
        if self.skin >= self.radius {
            return Err(PhysicsError::OutOfRange {
                what: "skin",
                value: self.skin,
                expected: "below the radius",
            });
        }
        check_min("step_height", self.step_height, 0.0, true, ">= 0 metres")?;
        check_min(
            "step_min_width",
            self.step_min_width,
            0.0,
            true,
            ">= 0 metres",
        )?;
        for (what, deg) in [
            ("max_slope_climb_deg", self.max_slope_climb_deg),
            ("min_slope_slide_deg", self.min_slope_slide_deg),
        ] {
            check_min(what, deg, 0.0, true, "in [0, 90] degrees")?;
            if deg > 90.0 {
                return Err(PhysicsError::OutOfRange {
                    what,
                    value: deg,
                    expected: "in [0, 90] degrees",
                });
            }
        }
        check_min(
            "snap_to_ground",
            self.snap_to_ground,
            0.0,
            true,
            ">= 0 metres",
        )?;
        check_min("walk_speed", self.walk_speed, 0.0, true, ">= 0 m/s")?;
        check_min("run_multiplier", self.run_multiplier, 0.0, true, ">= 0")?;
        check_min("jump_speed", self.jump_speed, 0.0, true, ">= 0 m/s")?;
        check_min("gravity", self.gravity, 0.0, true, ">= 0 m/s²")?;
        check_min("max_fall_speed", self.max_fall_speed, 0.0, false, "> 0 m/s")?;
        Ok(())
    }

    /// Height from the feet to the centre of the capsule, metres.
    pub fn centre_height(&self) -> f32 {
        self.half_height + self.radius
    }

    fn controller(&self) -> KinematicCharacterController {
        KinematicCharacterController {
            up: Vector::Y,
            offset: CharacterLength::Absolute(self.skin),
            slide: true,
            autostep: (self.step_height > 0.0).then_some(CharacterAutostep {
                max_height: CharacterLength::Absolute(self.step_height),
                min_width: CharacterLength::Absolute(self.step_min_width),
                include_dynamic_bodies: true,
            }),
            max_slope_climb_angle: self.max_slope_climb_deg.to_radians(),
            min_slope_slide_angle: self.min_slope_slide_deg.to_radians(),
            snap_to_ground: (self.snap_to_ground > 0.0)
                .then_some(CharacterLength::Absolute(self.snap_to_ground)),
            ..KinematicCharacterController::default()
        }
    }
}

/// One move's input.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MoveInput {
    /// Wanted horizontal direction `[x, z]` in world axes, length 0 to 1 (longer vectors
    /// are scaled down to 1); the speed is `walk_speed · |wish|` (times `run_multiplier`
    /// when running). Must be finite.
    pub wish: [f32; 2],
    /// Run instead of walk.
    pub run: bool,
    /// Jump, if standing on walkable ground. Hold it and the character jumps again on
    /// landing.
    pub jump: bool,
}

/// A character's state after a move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CharacterState {
    /// The feet (bottom of the capsule), world metres.
    pub position: [f32; 3],
    /// Displacement over the move divided by the time simulated, m/s (zero after a
    /// zero-length move or a teleport).
    pub velocity: [f32; 3],
    /// Standing on ground no steeper than `max_slope_climb_deg`.
    pub grounded: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct Character {
    body: RigidBodyHandle,
    collider: ColliderHandle,
    shape: Capsule,
    settings: CharacterSettings,
    controller: KinematicCharacterController,
    /// Capsule centre, world metres.
    centre: Vector,
    velocity: Vector,
    vertical_speed: f32,
    grounded: bool,
}

impl Character {
    fn state(&self) -> CharacterState {
        CharacterState {
            position: arr3(self.centre - Vector::Y * self.settings.centre_height()),
            velocity: arr3(self.velocity),
            grounded: self.grounded,
        }
    }
}

impl PhysicsWorld {
    /// Adds a character with its feet at `feet` (world metres). It is not grounded until
    /// its first move. Its capsule is a kinematic body: dynamic bodies collide with it, and
    /// it stands on them.
    ///
    /// # Errors
    /// Bad settings or a non-finite position ([`PhysicsError::NonFinite`],
    /// [`PhysicsError::OutOfRange`]).
    pub fn spawn_character(
        &mut self,
        feet: [f32; 3],
        settings: CharacterSettings,
    ) -> Result<CharacterId, PhysicsError> {
        check_finite("feet", &feet)?;
        settings.validate()?;
        let id = CharacterId(self.next_character);
        let centre = vec3(feet) + Vector::Y * settings.centre_height();
        let body = self.rapier.insert_body(
            RigidBodyBuilder::kinematic_position_based()
                .translation(centre)
                .user_data(character_tag(id)),
        );
        let collider = ColliderBuilder::capsule_y(settings.half_height, settings.radius)
            .user_data(character_tag(id))
            .build();
        let collider = self.insert_collider_now(collider, Some(body));
        self.next_character += 1;
        self.characters.insert(
            id.0,
            Character {
                body,
                collider,
                shape: Capsule::new_y(settings.half_height, settings.radius),
                settings,
                controller: settings.controller(),
                centre,
                velocity: Vector::ZERO,
                vertical_speed: 0.0,
                grounded: false,
            },
        );
        Ok(id)
    }

    /// Moves a character by `dt` seconds of input, at once (not at the next
    /// [`Self::step`]). `dt` is split into equal substeps no longer than
    /// `settings.timestep` (at most `settings.max_substeps`; time beyond that is dropped).
    ///
    /// Per substep: a jump starts if asked for and grounded; gravity integrates the
    /// vertical speed (exactly, for constant gravity); the controller sweeps the capsule
    /// along the wanted motion, sliding along walls, stepping up ledges up to
    /// `step_height`, refusing slopes steeper than `max_slope_climb_deg` and snapping down
    /// onto ground within `snap_to_ground`. Vertical speed is zeroed on landing and on
    /// hitting a ceiling.
    ///
    /// The capsule's collider is at the new place at once for scene queries; its body gets
    /// there during the next [`Self::step`], pushing dynamic bodies in the way.
    ///
    /// # Errors
    /// [`PhysicsError::UnknownCharacter`]; [`PhysicsError::NonFinite`] or
    /// [`PhysicsError::OutOfRange`] for a non-finite `wish` or a `dt` that is NaN, infinite
    /// or negative. Nothing moves then.
    pub fn move_character(
        &mut self,
        id: CharacterId,
        input: MoveInput,
        dt: f32,
    ) -> Result<CharacterState, PhysicsError> {
        check_finite("wish", &input.wish)?;
        check_min("dt", dt, 0.0, true, ">= 0 seconds")?;
        let ts = self.settings.timestep;
        let max_n = self.settings.max_substeps;
        let c = self
            .characters
            .get_mut(&id.0)
            .ok_or(PhysicsError::UnknownCharacter(id))?;
        if dt == 0.0 {
            c.velocity = Vector::ZERO;
            return Ok(c.state());
        }
        let n = ((dt / ts) * (1.0 - 1e-5)).ceil().clamp(1.0, max_n as f32) as u32;
        let h = dt.min(ts * max_n as f32) / n as f32;

        let s = c.settings;
        let mut wish = Vector::new(input.wish[0], 0.0, input.wish[1]);
        if wish.length_squared() > 1.0 {
            wish = wish.normalize_or_zero();
        }
        let speed = s.walk_speed * if input.run { s.run_multiplier } else { 1.0 };
        let walkable_cos = s.max_slope_climb_deg.to_radians().cos() - 1e-3;
        let start = c.centre;

        let w = &mut self.rapier;
        let queries = w.broad_phase.as_query_pipeline(
            w.narrow_phase.query_dispatcher(),
            &w.bodies,
            &w.colliders,
            QueryFilter::default().exclude_rigid_body(c.body),
        );
        for _ in 0..n {
            if input.jump && c.grounded {
                c.vertical_speed = s.jump_speed;
                c.grounded = false;
            }
            let v0 = c.vertical_speed;
            let v1 = (v0 - s.gravity * h).max(-s.max_fall_speed);
            // Two sweeps: vertical (gravity, jump), then horizontal (walking, stepping,
            // snapping down slopes). One combined sweep loses the horizontal motion
            // whenever the floor's normal is exactly +Y and the sweep touches it: Rapier's
            // slope handling then finds no horizontal tangent (`normal × up` = 0) and, with
            // the smallest downward rounding error, treats the walk as slipping and drops it.
            let mut ceiling = false;
            let vertical = Vector::Y * (0.5 * (v0 + v1) * h);
            let no_snap = KinematicCharacterController {
                snap_to_ground: None,
                ..c.controller
            };
            let mv = no_snap.move_shape(
                h,
                &queries,
                &c.shape,
                &Pose::from_translation(c.centre),
                vertical,
                // `normal1` is the obstacle's outward normal, world space.
                |hit| ceiling |= hit.hit.normal1.y < -0.3,
            );
            c.centre += mv.translation;
            c.vertical_speed = v1;
            if ceiling && v1 > 0.0 {
                c.vertical_speed = 0.0;
            }
            let horizontal = wish * (speed * h);
            // No snapping down while rising, or a jump would be pulled back to the ground.
            let walker = if c.vertical_speed > 0.0 {
                &no_snap
            } else {
                &c.controller
            };
            let mv = walker.move_shape(
                h,
                &queries,
                &c.shape,
                &Pose::from_translation(c.centre),
                horizontal,
                |_| {},
            );
            c.centre += mv.translation;

            // Walkable ground right under the capsule (Rapier's `grounded` also counts
            // slopes too steep to stand on).
            let probe = queries.cast_shape(
                &Pose::from_translation(c.centre),
                -Vector::Y,
                &c.shape,
                ShapeCastOptions {
                    target_distance: s.skin,
                    stop_at_penetration: false,
                    max_time_of_impact: s.skin + 0.05,
                    compute_impact_geometry_on_penetration: true,
                },
            );
            c.grounded = c.vertical_speed <= 0.0
                && probe.is_some_and(|(_, hit)| hit.normal1.y >= walkable_cos);
            if c.grounded {
                c.vertical_speed = 0.0;
            }
        }
        c.velocity = (c.centre - start) / (h * n as f32);
        let (centre, body, collider, state) = (c.centre, c.body, c.collider, c.state());
        self.place_capsule(body, collider, centre, false);
        Ok(state)
    }

    /// Puts a character's feet at `feet` (world metres) with zero velocity, not grounded.
    ///
    /// # Errors
    /// [`PhysicsError::UnknownCharacter`], or [`PhysicsError::NonFinite`].
    pub fn teleport_character(
        &mut self,
        id: CharacterId,
        feet: [f32; 3],
    ) -> Result<CharacterState, PhysicsError> {
        check_finite("feet", &feet)?;
        let c = self
            .characters
            .get_mut(&id.0)
            .ok_or(PhysicsError::UnknownCharacter(id))?;
        c.centre = vec3(feet) + Vector::Y * c.settings.centre_height();
        c.velocity = Vector::ZERO;
        c.vertical_speed = 0.0;
        c.grounded = false;
        let (centre, body, collider, state) = (c.centre, c.body, c.collider, c.state());
        self.place_capsule(body, collider, centre, true);
        Ok(state)
    }

    /// Moves a character's capsule to `centre`: the collider at once (scene queries see
    /// it), the kinematic body during the next step (so it pushes dynamic bodies on the
    /// way), or at once too when `teleport`.
    fn place_capsule(
        &mut self,
        body: RigidBodyHandle,
        collider: ColliderHandle,
        centre: Vector,
        teleport: bool,
    ) {
        if let Some(b) = self.rapier.bodies.get_mut(body) {
            if teleport {
                b.set_translation(centre, true);
            }
            b.set_next_kinematic_translation(centre);
        }
        if let Some(co) = self.rapier.colliders.get_mut(collider) {
            co.set_translation(centre);
        }
        self.refresh_collider_aabb(collider);
    }

    /// A character's feet, world metres, or `None` for an unknown id.
    pub fn character_position(&self, id: CharacterId) -> Option<[f32; 3]> {
        self.character_state(id).map(|s| s.position)
    }

    /// A character's state after its last move, or `None` for an unknown id.
    pub fn character_state(&self, id: CharacterId) -> Option<CharacterState> {
        self.characters.get(&id.0).map(Character::state)
    }

    /// Removes a character and its capsule. Returns whether it existed.
    pub fn remove_character(&mut self, id: CharacterId) -> bool {
        match self.characters.remove(&id.0) {
            Some(c) => {
                self.rapier.remove_body(c.body);
                true
            }
            None => false,
        }
    }

    /// Number of characters.
    pub fn character_count(&self) -> usize {
        self.characters.len()
    }
}
