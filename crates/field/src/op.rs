//! Edit operations: small serialisable records, the authority for what the world is.

use serde::{Deserialize, Serialize};

use crate::brick::MaterialId;

/// How a shape combines with the field (DESIGN.md, "CSG").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CsgMode {
    /// Build: `min(field, shape)`; the shape becomes solid. Serialised as `"build"`.
    #[serde(rename = "build")]
    Union,
    /// Dig: `max(field, −shape)`; the shape becomes air. Serialised as `"dig"`.
    #[serde(rename = "dig")]
    Subtract,
}

/// One edit. Positions are world metres (f64), sizes metres.
///
/// JSON: `{"kind": "sphere", "mode": "dig", "center": [x, y, z], "radius": r, "material": m}`;
/// `material` may be left out (default 0) and unknown fields are refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum EditOp {
    /// A ball: every sample within `radius` of `center` becomes solid (build) or air (dig).
    Sphere {
        /// Build or dig.
        mode: CsgMode,
        /// Centre, world metres.
        center: [f64; 3],
        /// Radius, metres, in `(0, max_edit_radius]`.
        radius: f64,
        /// Material written where a build wins (ignored by dig).
        #[serde(default)]
        material: MaterialId,
    },
}

/// An op was rejected; the field is unchanged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// A position or size is NaN or infinite.
    #[error("edit `{name}` is not finite ({value})")]
    NotFinite {
        /// Which parameter.
        name: &'static str,
        /// Its value.
        value: f64,
    },
    /// The radius is zero or negative.
    #[error("edit radius {radius} m must be > 0")]
    RadiusNotPositive {
        /// The radius, metres.
        radius: f64,
    },
    /// The radius is above the field's limit.
    #[error("edit radius {radius} m is above the limit of {max} m")]
    RadiusTooLarge {
        /// The radius, metres.
        radius: f64,
        /// The limit (`FieldSettings::max_edit_radius`), metres.
        max: f64,
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
}

impl EditOp {
    /// Checks the op's numbers against `max_radius` metres.
    ///
    /// # Errors
    /// [`EditError`] naming the first bad value.
    pub fn validate(&self, max_radius: f64) -> Result<(), EditError> {
        match self {
            EditOp::Sphere { center, radius, .. } => {
                for (name, v) in [
                    ("center.x", center[0]),
                    ("center.y", center[1]),
                    ("center.z", center[2]),
                    ("radius", *radius),
                ] {
                    if !v.is_finite() {
                        return Err(EditError::NotFinite { name, value: v });
                    }
                }
                if *radius <= 0.0 {
                    return Err(EditError::RadiusNotPositive { radius: *radius });
                }
                if *radius > max_radius {
                    return Err(EditError::RadiusTooLarge {
                        radius: *radius,
                        max: max_radius,
                    });
                }
                Ok(())
            }
        }
    }
}
