//! Edit operations: small serialisable records, the authority for what the world is.
//!
//! JSON and MessagePack share one shape: `{"kind": "<kind>", ...fields}` with unknown fields
//! refused. Positions are world metres (f64), sizes metres, strengths as documented per kind.

mod codec;
mod validate;

pub use codec::{DecodeError, LOG_VERSION, LogEntry};

use serde::{Deserialize, Serialize};

use crate::brick::MaterialId;
use crate::sculpt::falloff::Falloff;

/// How a shape combines with the field (docs/architecture.md, "CSG").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CsgMode {
    /// Build: `min(field, shape)`; the shape becomes solid. Serialised as `"build"`.
    #[serde(rename = "build")]
    Union,
    /// Dig: `max(field, −shape)`; the shape becomes air. Serialised as `"dig"`.
    #[serde(rename = "dig")]
    Subtract,
    /// Keep only what lies inside the shape: `max(field, shape)`, applied within the shape's
    /// bounding box grown by the band and the blend radius (samples beyond are left as they
    /// are, so the cut ends there). Serialised as `"intersect"`.
    #[serde(rename = "intersect")]
    Intersect,
}

fn identity() -> [f64; 4] {
    [0.0, 0.0, 0.0, 1.0]
}

fn up() -> [f64; 3] {
    [0.0, 1.0, 0.0]
}

fn default_wavelength() -> f64 {
    4.0
}

fn default_threshold() -> f64 {
    0.5
}

/// One edit. Shapes combine with the field by [`CsgMode`], hard (`blend` 0) or soft (a smooth
/// minimum / maximum with a blend radius in metres). Brushes change the field by a
/// [`Falloff`] of the distance from `center` over `radius`. `material` is written where a
/// build (union) wins, or by `paint`. Undo and redo name the stroke they revert.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum EditOp {
    /// A ball of `radius` around `center`.
    Sphere {
        /// Build, dig or intersect.
        mode: CsgMode,
        /// Centre, world metres.
        center: [f64; 3],
        /// Radius, metres, in `(0, max_edit_radius]`.
        radius: f64,
        /// Material written where a build wins (ignored otherwise).
        #[serde(default)]
        material: MaterialId,
        /// Blend radius, metres, `[0, max_edit_radius]`; 0 is a hard CSG.
        #[serde(default)]
        blend: f64,
    },
    /// A box (`"kind": "box"`) with half extents along its local axes, rotated by a unit
    /// quaternion.
    #[serde(rename = "box")]
    Cuboid {
        /// Build, dig or intersect.
        mode: CsgMode,
        /// Centre, world metres.
        center: [f64; 3],
        /// Half extents along the box's local x, y, z, metres, each in `(0, max_edit_radius]`.
        half_extents: [f64; 3],
        /// Rotation of the box's axes into the world, quaternion `[x, y, z, w]` (normalised
        /// on use; not zero). Default: none.
        #[serde(default = "identity")]
        rotation: [f64; 4],
        /// Material written where a build wins.
        #[serde(default)]
        material: MaterialId,
        /// Blend radius, metres.
        #[serde(default)]
        blend: f64,
    },
    /// A capsule: every point within `radius` of the segment `a`–`b`.
    Capsule {
        /// Build, dig or intersect.
        mode: CsgMode,
        /// One end of the axis, world metres.
        a: [f64; 3],
        /// The other end, world metres.
        b: [f64; 3],
        /// Radius, metres.
        radius: f64,
        /// Material written where a build wins.
        #[serde(default)]
        material: MaterialId,
        /// Blend radius, metres.
        #[serde(default)]
        blend: f64,
    },
    /// A cylinder with flat caps whose axis runs from `a` to `b` (`a ≠ b`).
    Cylinder {
        /// Build, dig or intersect.
        mode: CsgMode,
        /// Centre of one cap, world metres.
        a: [f64; 3],
        /// Centre of the other cap, world metres.
        b: [f64; 3],
        /// Radius, metres.
        radius: f64,
        /// Material written where a build wins.
        #[serde(default)]
        material: MaterialId,
        /// Blend radius, metres.
        #[serde(default)]
        blend: f64,
    },
    /// A torus: a tube of `minor_radius` around a ring of `major_radius` in the plane through
    /// `center` perpendicular to `axis`.
    Torus {
        /// Build, dig or intersect.
        mode: CsgMode,
        /// Centre of the ring, world metres.
        center: [f64; 3],
        /// Axis of the ring (normalised on use; not zero). Default up, `[0, 1, 0]`.
        #[serde(default = "up")]
        axis: [f64; 3],
        /// Ring radius, metres.
        major_radius: f64,
        /// Tube radius, metres, `≤ major_radius`.
        minor_radius: f64,
        /// Material written where a build wins.
        #[serde(default)]
        material: MaterialId,
        /// Blend radius, metres.
        #[serde(default)]
        blend: f64,
    },
    /// Raise: moves the surface outward by `falloff · strength` metres (the field gets
    /// smaller), the same distance at any voxel size.
    Raise {
        /// Centre, world metres.
        center: [f64; 3],
        /// Radius, metres.
        radius: f64,
        /// Metres per application, `(0, radius]`.
        strength: f64,
        /// Falloff profile (default smooth).
        #[serde(default)]
        falloff: Falloff,
    },
    /// Lower: moves the surface inward by `falloff · strength` metres (the field gets larger).
    Lower {
        /// Centre, world metres.
        center: [f64; 3],
        /// Radius, metres.
        radius: f64,
        /// Metres per application, `(0, radius]`.
        strength: f64,
        /// Falloff profile (default smooth).
        #[serde(default)]
        falloff: Falloff,
    },
    /// Smooth: blends each sample toward the mean of its 3×3×3 neighbourhood by
    /// `falloff · strength`.
    Smooth {
        /// Centre, world metres.
        center: [f64; 3],
        /// Radius, metres.
        radius: f64,
        /// Fraction per application, `(0, 1]`.
        strength: f64,
        /// Falloff profile (default smooth).
        #[serde(default)]
        falloff: Falloff,
    },
    /// Flatten: pulls samples toward the plane through `plane_point` with normal
    /// `plane_normal` (taken at the start of a stroke and held for all of it) by
    /// `falloff · strength`.
    Flatten {
        /// Centre, world metres.
        center: [f64; 3],
        /// Radius, metres.
        radius: f64,
        /// Fraction per application, `(0, 1]`.
        strength: f64,
        /// Falloff profile (default smooth).
        #[serde(default)]
        falloff: Falloff,
        /// A point of the plane, world metres.
        plane_point: [f64; 3],
        /// The plane's normal toward the air (normalised on use; not zero).
        plane_normal: [f64; 3],
    },
    /// Noise: adds seeded 3D Perlin noise (values in about ±1) times `falloff · strength`.
    Noise {
        /// Centre, world metres.
        center: [f64; 3],
        /// Radius, metres.
        radius: f64,
        /// Metres per application, `(0, radius]`.
        strength: f64,
        /// Falloff profile (default smooth).
        #[serde(default)]
        falloff: Falloff,
        /// Seed of the noise.
        #[serde(default)]
        seed: u32,
        /// Wavelength of the noise, metres, `[0.01, 10⁴]`. Default 4.
        #[serde(default = "default_wavelength")]
        wavelength: f64,
    },
    /// Paint: sets `material` on every sample whose falloff weight is at least `threshold`.
    Paint {
        /// Centre, world metres.
        center: [f64; 3],
        /// Radius, metres.
        radius: f64,
        /// The material id.
        material: MaterialId,
        /// Falloff profile (default smooth).
        #[serde(default)]
        falloff: Falloff,
        /// Weight from which a sample is painted, `(0, 1]`. Default 0.5.
        #[serde(default = "default_threshold")]
        threshold: f64,
    },
    /// Undo: restores every sample a stroke changed to its value and material from before
    /// the stroke.
    Undo {
        /// The stroke.
        stroke: u64,
    },
    /// Redo: writes back what an undo of the stroke reverted.
    Redo {
        /// The stroke.
        stroke: u64,
    },
}

impl EditOp {
    /// Where the op acts, world metres: its centre, or the middle of its axis (capsule,
    /// cylinder); `None` for undo and redo, which act where their stroke did. (What a first
    /// view looks at: the last edit of a world.)
    pub fn center(&self) -> Option<[f64; 3]> {
        match *self {
            EditOp::Sphere { center, .. }
            | EditOp::Cuboid { center, .. }
            | EditOp::Torus { center, .. }
            | EditOp::Raise { center, .. }
            | EditOp::Lower { center, .. }
            | EditOp::Smooth { center, .. }
            | EditOp::Flatten { center, .. }
            | EditOp::Noise { center, .. }
            | EditOp::Paint { center, .. } => Some(center),
            EditOp::Capsule { a, b, .. } | EditOp::Cylinder { a, b, .. } => {
                Some([0, 1, 2].map(|i| (a[i] + b[i]) * 0.5))
            }
            EditOp::Undo { .. } | EditOp::Redo { .. } => None,
        }
    }

    /// The op's kind as written in JSON (`"sphere"`, `"box"`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            EditOp::Sphere { .. } => "sphere",
            EditOp::Cuboid { .. } => "box",
            EditOp::Capsule { .. } => "capsule",
            EditOp::Cylinder { .. } => "cylinder",
            EditOp::Torus { .. } => "torus",
            EditOp::Raise { .. } => "raise",
            EditOp::Lower { .. } => "lower",
            EditOp::Smooth { .. } => "smooth",
            EditOp::Flatten { .. } => "flatten",
            EditOp::Noise { .. } => "noise",
            EditOp::Paint { .. } => "paint",
            EditOp::Undo { .. } => "undo",
            EditOp::Redo { .. } => "redo",
        }
    }

    /// Every kind, as written in JSON.
    pub const KINDS: [&'static str; 13] = [
        "sphere", "box", "capsule", "cylinder", "torus", "raise", "lower", "smooth", "flatten",
        "noise", "paint", "undo", "redo",
    ];
}

/// An op was rejected; the field is unchanged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// A position or size is NaN or infinite.
    #[error("edit `{name}` is not finite ({})", crate::num(.value))]
    NotFinite {
        /// Which parameter.
        name: &'static str,
        /// Its value.
        value: f64,
    },
    /// The radius is zero or negative.
    #[error("edit radius {} m must be > 0", crate::num(.radius))]
    RadiusNotPositive {
        /// The radius, metres.
        radius: f64,
    },
    /// The radius is above the field's limit.
    #[error("edit radius {} m is above the limit of {max} m", crate::num(.radius))]
    RadiusTooLarge {
        /// The radius, metres.
        radius: f64,
        /// The limit (`FieldSettings::max_edit_radius`), metres.
        max: f64,
    },
    /// A size other than the radius (a box's half extent, a torus's radii, a capsule's or
    /// cylinder's axis length) is above its limit.
    #[error("edit `{name}` = {} m is above the limit of {} m", crate::num(.value), crate::num(.max))]
    SizeTooLarge {
        /// Which parameter.
        name: &'static str,
        /// Its value, metres.
        value: f64,
        /// The limit, metres (`FieldSettings::max_edit_radius`; twice that for an axis).
        max: f64,
    },
    /// Another parameter is out of its range.
    #[error("edit `{name}` = {} is out of range: {range}", crate::num(.value))]
    OutOfRangeValue {
        /// Which parameter.
        name: &'static str,
        /// Its value.
        value: f64,
        /// The allowed range.
        range: &'static str,
    },
    /// A direction (rotation, axis, normal) is zero, or two points that must differ coincide.
    #[error("edit `{name}` is degenerate (zero length)")]
    Degenerate {
        /// Which parameter.
        name: &'static str,
    },
    /// The op would visit more samples than the field allows.
    #[error(
        "edit visits {samples} samples, above the limit of {max} (smaller radius, or raise max_edit_samples)"
    )]
    TooManySamples {
        /// Samples in the op's reach box.
        samples: u64,
        /// `FieldSettings::max_edit_samples`.
        max: u64,
    },
    /// The edit reaches outside the sample range (`i32` indices).
    #[error("edit at {center:?} reaches outside the sample range")]
    OutOfRange {
        /// The centre, metres.
        center: [f64; 3],
    },
    /// A [`crate::PlannedEdit`] was committed to a field written since it was planned.
    #[error("the field was written since the edit was planned")]
    FieldChanged,
    /// Undo and redo need a stroke history ([`crate::History`]); [`crate::Field::apply`]
    /// alone has none.
    #[error("`{kind}` needs the stroke history")]
    NeedsHistory {
        /// `undo` or `redo`.
        kind: &'static str,
    },
    /// Undo or redo of a stroke the history does not hold (never applied, or dropped for the
    /// memory budget).
    #[error("stroke {stroke} is not in the history")]
    UnknownStroke {
        /// The stroke.
        stroke: u64,
    },
    /// Undo of a stroke already undone, or redo of one that is not undone.
    #[error("stroke {stroke} cannot be {action}: it is {state}")]
    WrongStrokeState {
        /// The stroke.
        stroke: u64,
        /// `undone` or `redone`.
        action: &'static str,
        /// `done` or `undone`.
        state: &'static str,
    },
    /// An op was added to a stroke that is closed (a later stroke began, or it was undone).
    #[error("stroke {stroke} is closed; a new op needs a new stroke id")]
    StrokeClosed {
        /// The stroke.
        stroke: u64,
    },
}
