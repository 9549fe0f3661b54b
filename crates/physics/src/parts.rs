//! Compound bodies: one dynamic body made of several parts (the blocks of a falling piece),
//! each a box or a convex hull with its own density; and the queries rubble needs.

use rapier3d::math::{Pose as RapierPose, Rotation, Vector};
use rapier3d::parry::shape::Cuboid;
use rapier3d::prelude::{ColliderBuilder, LockedAxes, QueryFilter, RigidBodyBuilder};

use crate::BodyId;
use crate::error::{PhysicsError, check_finite, check_min};
use crate::world::{PhysicsWorld, arr3, vec3};

/// Most parts one compound body may have.
pub const MAX_PARTS: usize = 1 << 16;

/// Most points one convex hull part may have.
pub const MAX_HULL_POINTS: usize = 256;

/// The shape of a part, in the part's own frame (metres).
#[derive(Clone, Debug, PartialEq)]
pub enum PartShape {
    /// A box centred on the part's origin, axis-aligned in the body's frame, with these
    /// half extents (each > 0), metres.
    Cuboid {
        /// Half extents along x, y, z, metres.
        half_extents: [f32; 3],
    },
    /// The convex hull of these points (4 to [`MAX_HULL_POINTS`], not all in one plane),
    /// metres from the part's origin.
    ConvexHull {
        /// The points.
        points: Vec<[f32; 3]>,
    },
}

/// One part of a compound body or a fixed collider.
#[derive(Clone, Debug, PartialEq)]
pub struct Part {
    /// Where the part's origin sits in the body's frame, metres.
    pub offset: [f32; 3],
    /// Its shape.
    pub shape: PartShape,
    /// Density, kg/m³ (> 0); ignored for fixed colliders. A part's mass is its shape's
    /// volume times this.
    pub density: f32,
}

/// A rigid pose: where a body's frame is and how it is turned.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    /// Position of the frame's origin, world metres.
    pub position: [f32; 3],
    /// Orientation as a unit quaternion `[x, y, z, w]`.
    pub rotation: [f32; 4],
}

impl Pose {
    /// A pose at `position` with no rotation.
    pub fn at(position: [f32; 3]) -> Self {
        Self {
            position,
            rotation: [0.0, 0.0, 0.0, 1.0],
        }
    }

    pub(crate) fn check(&self) -> Result<RapierPose, PhysicsError> {
        check_finite("pose.position", &self.position)?;
        check_finite("pose.rotation", &self.rotation)?;
        let [x, y, z, w] = self.rotation;
        let len = (x * x + y * y + z * z + w * w).sqrt();
        if (len - 1.0).abs() > 1e-3 {
            return Err(PhysicsError::OutOfRange {
                what: "pose.rotation",
                value: len,
                expected: "a unit quaternion (length 1)",
            });
        }
        let q = Rotation::from_xyzw(x / len, y / len, z / len, w / len);
        Ok(RapierPose::from_parts(vec3(self.position), q))
    }
}

impl Part {
    /// Checks the part and builds its collider (without density when `fixed`).
    pub(crate) fn collider(&self, fixed: bool) -> Result<ColliderBuilder, PhysicsError> {
        check_finite("part.offset", &self.offset)?;
        if !fixed {
            check_min("part.density", self.density, 0.0, false, "> 0 kg/m³")?;
        }
        let builder = match &self.shape {
            PartShape::Cuboid { half_extents } => {
                for &e in half_extents {
                    check_min("part.half_extents", e, 0.0, false, "> 0 metres")?;
                }
                let [x, y, z] = *half_extents;
                ColliderBuilder::cuboid(x, y, z)
            }
            PartShape::ConvexHull { points } => {
                if points.len() < 4 || points.len() > MAX_HULL_POINTS {
                    return Err(PhysicsError::OutOfRange {
                        what: "part.points",
                        value: points.len() as f32,
                        expected: "between 4 and 256 points",
                    });
                }
                for p in points {
                    check_finite("part.points", p)?;
                }
                let pts: Vec<_> = points.iter().map(|&p| vec3(p)).collect();
                let flat = PhysicsError::OutOfRange {
                    what: "part.points",
                    value: points.len() as f32,
                    expected: "points spanning a volume (not all in one plane)",
                };
                if !spans_volume(&pts) {
                    return Err(flat);
                }
                ColliderBuilder::convex_hull(&pts).ok_or(flat)?
            }
        };
        let builder = builder.translation(vec3(self.offset));
        Ok(if fixed {
            builder
        } else {
            builder.density(self.density)
        })
    }
}

/// Whether points span a volume: the farthest point from the plane through three spread
/// points is more than 10⁻⁴ of the points' extent away from it.
fn spans_volume(points: &[Vector]) -> bool {
    let p0 = points[0];
    let farthest = |f: &dyn Fn(Vector) -> f32| {
        points.iter().copied().fold(
            (p0, 0.0f32),
            |(bp, bd), p| if f(p) > bd { (p, f(p)) } else { (bp, bd) },
        )
    };
    let (p1, extent) = farthest(&|p| (p - p0).length());
    if extent.is_nan() || extent <= 0.0 {
        return false;
    }
    let axis = (p1 - p0) / extent;
    let (p2, _) = farthest(&|p| (p - p0).cross(axis).length());
    let normal = (p1 - p0).cross(p2 - p0);
    let len = normal.length();
    if len.is_nan() || len <= 0.0 {
        return false;
    }
    let normal = normal / len;
    let (_, height) = farthest(&|p| (p - p0).dot(normal).abs());
    height > 1e-4 * extent
}

impl PhysicsWorld {
    /// Puts the bodies spawned `asleep` since the last step to sleep at their spawn pose
    /// (called right after a step).
    pub(crate) fn settle_new_sleepers(&mut self) {
        for handle in std::mem::take(&mut self.to_sleep) {
            if let Some(b) = self.rapier.bodies.get_mut(handle) {
                b.set_locked_axes(LockedAxes::empty(), false);
                b.set_linvel(Vector::ZERO, false);
                b.set_angvel(Vector::ZERO, false);
                b.sleep();
            }
        }
    }

    /// Adds a dynamic body made of `parts` (1 to [`MAX_PARTS`]), its frame at `pose`. Its
    /// mass and inertia come from the parts' volumes and densities; the parts never collide
    /// with each other. Continuous collision detection is on.
    ///
    /// `asleep` (restoring rubble from a file): the body takes part in the next step
    /// locked in place, so that its contacts are found without it moving, and is then put
    /// to sleep at `pose`, bit for bit; it wakes when something touches it (or
    /// [`Self::wake_body`], [`Self::set_body_velocity`]). A body inserted asleep in Rapier
    /// would find no contacts when woken until it had moved a few centimetres (its broad
    /// phase skips the pairs of a sleeping new body) and would sink into what it rests on.
    ///
    /// Part `i`'s collider carries `i`, so [`crate::Impact::part`] names the part that hit.
    ///
    /// # Errors
    /// [`PhysicsError::NonFinite`] or [`PhysicsError::OutOfRange`] for a bad pose or part
    /// (nothing is added).
    pub fn spawn_compound(
        &mut self,
        pose: Pose,
        parts: &[Part],
        asleep: bool,
    ) -> Result<BodyId, PhysicsError> {
        let pose = pose.check()?;
        if parts.is_empty() || parts.len() > MAX_PARTS {
            return Err(PhysicsError::OutOfRange {
                what: "parts",
                value: parts.len() as f32,
                expected: "between 1 and 65 536 parts",
            });
        }
        let colliders = parts
            .iter()
            .map(|p| p.collider(false))
            .collect::<Result<Vec<_>, _>>()?;
        let handle = self.rapier.insert_body(
            RigidBodyBuilder::dynamic()
                .pose(pose)
                .ccd_enabled(true)
                .locked_axes(if asleep {
                    LockedAxes::all()
                } else {
                    LockedAxes::empty()
                }),
        );
        let tag = self.tag_dynamic(handle);
        for (i, c) in colliders.into_iter().enumerate() {
            let part_tag = tag | (u128::from(i as u32) << 64);
            self.insert_collider_now(c.user_data(part_tag).build(), Some(handle));
        }
        if asleep {
            self.to_sleep.push(handle);
        }
        Ok(BodyId(handle))
    }

    /// A body's frame pose (for a box or ball: its centre), or `None` for an unknown id.
    pub fn body_pose(&self, id: BodyId) -> Option<Pose> {
        self.rapier.bodies.get(id.0).map(|b| Pose {
            position: arr3(b.translation()),
            rotation: b.rotation().to_array(),
        })
    }

    /// A body's mass, kg, or `None` for an unknown id.
    pub fn body_mass(&self, id: BodyId) -> Option<f32> {
        self.rapier.bodies.get(id.0).map(|b| b.mass())
    }

    /// Whether a body is asleep (`None` for an unknown id).
    pub fn body_sleeping(&self, id: BodyId) -> Option<bool> {
        self.rapier.bodies.get(id.0).map(|b| b.is_sleeping())
    }

    /// Wakes a sleeping body (and cancels the sleep of one spawned `asleep`). Returns
    /// whether the body exists.
    pub fn wake_body(&mut self, id: BodyId) -> bool {
        let exists = self.rapier.bodies.get(id.0).is_some_and(|b| b.is_dynamic());
        if exists {
            self.cancel_sleep(id);
            self.rapier.wake_up(id.0, true);
        }
        exists
    }

    /// Drops a body from the ones to put to sleep after the next step, giving it its
    /// gravity back.
    pub(crate) fn cancel_sleep(&mut self, id: BodyId) {
        if let Some(i) = self.to_sleep.iter().position(|h| *h == id.0) {
            self.to_sleep.swap_remove(i);
            if let Some(b) = self.rapier.bodies.get_mut(id.0) {
                b.set_locked_axes(LockedAxes::empty(), true);
            }
        }
    }

    /// The dynamic bodies with a part whose shape intersects the axis-aligned box of
    /// `half_extents` (metres, each > 0) around `center` (world metres), each once, in
    /// ascending order. Sees bodies added since the last step.
    ///
    /// # Errors
    /// [`PhysicsError::NonFinite`] or [`PhysicsError::OutOfRange`].
    pub fn dynamic_bodies_in_box(
        &self,
        center: [f32; 3],
        half_extents: [f32; 3],
    ) -> Result<Vec<BodyId>, PhysicsError> {
        check_finite("center", &center)?;
        for e in half_extents {
            check_min("half_extents", e, 0.0, false, "> 0 metres")?;
        }
        let shape = Cuboid::new(vec3(half_extents));
        let pos = RapierPose::from_translation(vec3(center));
        let filter = QueryFilter::only_dynamic();
        let mut out: Vec<BodyId> = self
            .rapier
            .intersect_shape(pos, &shape, filter)
            .filter_map(|(_, co)| co.parent().map(BodyId))
            .collect();
        out.sort();
        out.dedup();
        Ok(out)
    }
}
