//! The editor's tool: which brush, how big, how strong, which material, and the op one click
//! makes at a hit point. Plain data and a function, so it is tested without a window.

use loam_field::{CsgMode, EditOp, Falloff, MaterialId};

/// Smallest tool radius, metres.
pub const MIN_RADIUS: f64 = 1.5;
/// Largest tool radius, metres.
pub const MAX_RADIUS: f64 = 8.0;
/// Radius change per wheel notch, metres.
pub const RADIUS_STEP: f64 = 0.5;

/// What a click does. Left applies the brush, right its opposite (dig/build, raise/lower,
/// subtract/union for shapes); smooth, flatten, noise and paint do the same with both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Brush {
    /// Dig (left) or build (right) a ball.
    Ball,
    /// Raise (left) or lower (right) the surface along its normal.
    Raise,
    /// Smooth the surface.
    Smooth,
    /// Pull the surface toward the plane under the cursor when the stroke started.
    Flatten,
    /// Add value noise to the surface.
    Noise,
    /// Paint a material on the surface.
    Paint,
    /// A cube of edge 2·radius: dig (left) or build (right).
    Cube,
    /// An upright cylinder of radius and height 2·radius.
    Cylinder,
    /// A capsule lying along the view's horizontal direction.
    Capsule,
    /// A flat torus (major radius = radius, minor radius = radius / 3).
    Torus,
}

impl Brush {
    /// Every brush, in palette order.
    pub const ALL: [Brush; 10] = [
        Brush::Ball,
        Brush::Raise,
        Brush::Smooth,
        Brush::Flatten,
        Brush::Noise,
        Brush::Paint,
        Brush::Cube,
        Brush::Cylinder,
        Brush::Capsule,
        Brush::Torus,
    ];

    /// The palette's name.
    pub fn name(self) -> &'static str {
        match self {
            Brush::Ball => "dig / build",
            Brush::Raise => "raise / lower",
            Brush::Smooth => "smooth",
            Brush::Flatten => "flatten",
            Brush::Noise => "noise",
            Brush::Paint => "paint",
            Brush::Cube => "cube",
            Brush::Cylinder => "cylinder",
            Brush::Capsule => "capsule",
            Brush::Torus => "torus",
        }
    }

    /// Whether the brush is a CSG shape (its ops carry a soft blend).
    pub fn is_shape(self) -> bool {
        matches!(
            self,
            Brush::Ball | Brush::Cube | Brush::Cylinder | Brush::Capsule | Brush::Torus
        )
    }
}

/// The tool's settings, as the palette edits them.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSettings {
    /// The brush.
    pub brush: Brush,
    /// Radius, metres, in [`MIN_RADIUS`]..=[`MAX_RADIUS`].
    pub radius: f64,
    /// Brush strength, metres per op at the centre (raise, lower, noise) or blend fraction
    /// (smooth, flatten), 0.05..=1.
    pub strength: f64,
    /// Falloff of the brushes.
    pub falloff: Falloff,
    /// Material written by build and paint.
    pub material: MaterialId,
    /// Soft-blend radius of shapes, metres (0: sharp CSG).
    pub blend: f64,
}

impl Default for ToolSettings {
    fn default() -> Self {
        Self {
            brush: Brush::Ball,
            radius: 3.0,
            strength: 0.5,
            falloff: Falloff::Smooth,
            material: 0,
            blend: 0.0,
        }
    }
}

impl ToolSettings {
    /// Resizes by `notches` wheel notches (positive grows), half a metre each, clamped to
    /// [`MIN_RADIUS`]..=[`MAX_RADIUS`] and kept on the half-metre grid.
    pub fn scroll(&mut self, notches: i32) {
        let r = self.radius + f64::from(notches) * RADIUS_STEP;
        self.radius = ((r / RADIUS_STEP).round() * RADIUS_STEP).clamp(MIN_RADIUS, MAX_RADIUS);
    }

    /// The op a click makes at `hit` (a surface point, world metres) with surface normal
    /// `normal`; `primary` is the left button. `plane` is the stroke's flatten plane (point,
    /// normal; taken at the press) and `forward` the camera's horizontal view direction (unit,
    /// for the capsule).
    pub fn op(
        &self,
        hit: [f64; 3],
        normal: [f64; 3],
        primary: bool,
        plane: ([f64; 3], [f64; 3]),
        forward: [f64; 3],
    ) -> EditOp {
        let r = self.radius;
        let mode = if primary {
            CsgMode::Subtract
        } else {
            CsgMode::Union
        };
        // A build grows out of the surface: centre half a radius outside it.
        let lift = |k: f64| -> [f64; 3] {
            if primary {
                hit
            } else {
                [0, 1, 2].map(|i| hit[i] + normal[i] * r * k)
            }
        };
        let (material, blend, falloff) = (self.material, self.blend, self.falloff);
        let strength = self.strength;
        match self.brush {
            Brush::Ball => EditOp::Sphere {
                mode,
                center: lift(0.5),
                radius: r,
                material,
                blend,
            },
            Brush::Raise if primary => EditOp::Raise {
                center: hit,
                radius: r,
                strength,
                falloff,
            },
            Brush::Raise => EditOp::Lower {
                center: hit,
                radius: r,
                strength,
                falloff,
            },
            Brush::Smooth => EditOp::Smooth {
                center: hit,
                radius: r,
                strength,
                falloff,
            },
            Brush::Flatten => EditOp::Flatten {
                center: hit,
                radius: r,
                strength,
                falloff,
                plane_point: plane.0,
                plane_normal: plane.1,
            },
            Brush::Noise => EditOp::Noise {
                center: hit,
                radius: r,
                strength,
                falloff,
                seed: 0,
                wavelength: (r / 2.0).max(0.5),
            },
            Brush::Paint => EditOp::Paint {
                center: hit,
                radius: r,
                material,
                falloff,
                threshold: 0.5,
            },
            Brush::Cube => EditOp::Cuboid {
                mode,
                center: lift(0.5),
                half_extents: [r * 0.8; 3],
                rotation: [0.0, 0.0, 0.0, 1.0],
                material,
                blend,
            },
            Brush::Cylinder => {
                let c = lift(0.5);
                EditOp::Cylinder {
                    mode,
                    a: [c[0], c[1] - r, c[2]],
                    b: [c[0], c[1] + r, c[2]],
                    radius: r * 0.7,
                    material,
                    blend,
                }
            }
            Brush::Capsule => {
                let c = lift(0.4);
                let h = r;
                EditOp::Capsule {
                    mode,
                    a: [0, 1, 2].map(|i| c[i] - forward[i] * h),
                    b: [0, 1, 2].map(|i| c[i] + forward[i] * h),
                    radius: r * 0.5,
                    material,
                    blend,
                }
            }
            Brush::Torus => EditOp::Torus {
                mode,
                center: lift(0.3),
                axis: [0.0, 1.0, 0.0],
                major_radius: r,
                minor_radius: r / 3.0,
                material,
                blend,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wheel_steps_half_metres_within_limits() {
        let mut t = ToolSettings::default();
        t.scroll(1);
        assert_eq!(t.radius, 3.5);
        t.scroll(-100);
        assert_eq!(t.radius, MIN_RADIUS);
        t.scroll(100);
        assert_eq!(t.radius, MAX_RADIUS);
        t.radius = 2.3;
        t.scroll(0);
        assert_eq!(t.radius, 2.5);
    }

    #[test]
    fn left_digs_at_the_hit_and_right_builds_out_of_the_surface() {
        let t = ToolSettings::default();
        let plane = ([0.0; 3], [0.0, 1.0, 0.0]);
        let f = [1.0, 0.0, 0.0];
        let dig = t.op([1.0, 2.0, 3.0], [0.0, 1.0, 0.0], true, plane, f);
        assert_eq!(
            dig,
            EditOp::Sphere {
                mode: CsgMode::Subtract,
                center: [1.0, 2.0, 3.0],
                radius: 3.0,
                material: 0,
                blend: 0.0
            }
        );
        let build = t.op([1.0, 2.0, 3.0], [0.0, 1.0, 0.0], false, plane, f);
        assert_eq!(
            build,
            EditOp::Sphere {
                mode: CsgMode::Union,
                center: [1.0, 3.5, 3.0],
                radius: 3.0,
                material: 0,
                blend: 0.0
            }
        );
    }

    #[test]
    fn every_brush_makes_a_valid_op_both_ways() {
        let plane = ([0.0, 10.0, 0.0], [0.0, 1.0, 0.0]);
        for brush in Brush::ALL {
            for primary in [true, false] {
                let t = ToolSettings {
                    brush,
                    material: 3,
                    blend: 0.5,
                    ..Default::default()
                };
                let op = t.op(
                    [5.0, 10.0, -2.0],
                    [0.0, 1.0, 0.0],
                    primary,
                    plane,
                    [0.0, 0.0, 1.0],
                );
                assert!(op.validate(64.0).is_ok(), "{brush:?} {primary}: {op:?}");
            }
        }
    }
}
