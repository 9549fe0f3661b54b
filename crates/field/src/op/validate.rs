//! Checking an op's numbers before it touches anything (docs/architecture.md, invariant 6).

use super::{EditError, EditOp};
use crate::sculpt::falloff::Falloff;

fn finite(name: &'static str, v: f64) -> Result<(), EditError> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(EditError::NotFinite { name, value: v })
    }
}

fn point(names: [&'static str; 3], p: &[f64; 3]) -> Result<(), EditError> {
    for (n, v) in names.into_iter().zip(p) {
        finite(n, *v)?;
    }
    Ok(())
}

fn radius(name: &'static str, r: f64, max: f64) -> Result<(), EditError> {
    finite(name, r)?;
    if r <= 0.0 {
        return Err(if name == "radius" {
            EditError::RadiusNotPositive { radius: r }
        } else {
            EditError::OutOfRangeValue {
                name,
                value: r,
                range: "(0, max_edit_radius]",
            }
        });
    }
    if r > max {
        return Err(if name == "radius" {
            EditError::RadiusTooLarge { radius: r, max }
        } else {
            EditError::SizeTooLarge {
                name,
                value: r,
                max,
            }
        });
    }
    Ok(())
}

fn range(name: &'static str, v: f64, ok: bool, range: &'static str) -> Result<(), EditError> {
    finite(name, v)?;
    if ok {
        Ok(())
    } else {
        Err(EditError::OutOfRangeValue {
            name,
            value: v,
            range,
        })
    }
}

fn nonzero(name: &'static str, v: &[f64]) -> Result<(), EditError> {
    for &c in v {
        finite(name, c)?;
    }
    let n2: f64 = v.iter().map(|c| c * c).sum();
    if !n2.is_finite() {
        // Components so large that the squared length overflows: not degenerate, too long.
        let big = v.iter().fold(0.0f64, |m, c| m.max(c.abs()));
        return range(
            name,
            big,
            false,
            "components whose squares sum below f64::MAX",
        );
    }
    if n2 > 1e-24 {
        Ok(())
    } else {
        Err(EditError::Degenerate { name })
    }
}

fn falloff(f: &Falloff) -> Result<(), EditError> {
    if f.validate().is_ok() {
        return Ok(());
    }
    let n = match f {
        Falloff::Sharp { n } => *n,
        _ => f64::NAN,
    };
    Err(EditError::OutOfRangeValue {
        name: "falloff.sharp.n",
        value: n,
        range: "[2, 64]",
    })
}

fn blend(b: f64, max: f64) -> Result<(), EditError> {
    range("blend", b, (0.0..=max).contains(&b), "[0, max_edit_radius]")
}

/// `|b − a|`, scaled so that the squares do not overflow (points 1e300 m apart are 1e300 m
/// apart, not infinitely far); infinite only when a difference is.
fn length(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    let d = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
    let m = d.iter().fold(0.0f64, |m, c| m.max(c.abs()));
    if m == 0.0 || !m.is_finite() {
        return m;
    }
    m * d.iter().map(|c| (c / m) * (c / m)).sum::<f64>().sqrt()
}

/// The checks every falloff brush shares: its centre, its radius, its amount (`name`,
/// `value`, in `(0, max]`, described as `text`) and its falloff.
fn brush(
    center: &[f64; 3],
    r: f64,
    (name, value, max, text): (&'static str, f64, f64, &'static str),
    f: &Falloff,
    max_radius: f64,
) -> Result<(), EditError> {
    point(C, center)?;
    radius("radius", r, max_radius)?;
    range(name, value, value > 0.0 && value <= max, text)?;
    falloff(f)
}

const C: [&str; 3] = ["center.x", "center.y", "center.z"];
const A: [&str; 3] = ["a.x", "a.y", "a.z"];
const B: [&str; 3] = ["b.x", "b.y", "b.z"];

impl EditOp {
    /// Checks the op's numbers against `max_radius` metres (the field's
    /// `max_edit_radius`): every number finite, sizes in `(0, max_radius]` (a capsule's or
    /// cylinder's axis at most `2 · max_radius` long), strengths and thresholds in their
    /// ranges, directions not zero, a sharp falloff's exponent in `[2, 64]`.
    ///
    /// # Errors
    /// [`EditError`] naming the first bad value.
    pub fn validate(&self, max_radius: f64) -> Result<(), EditError> {
        match self {
            EditOp::Sphere {
                center,
                radius: r,
                blend: k,
                ..
            } => {
                point(C, center)?;
                radius("radius", *r, max_radius)?;
                blend(*k, max_radius)
            }
            EditOp::Cuboid {
                center,
                half_extents,
                rotation,
                blend: k,
                ..
            } => {
                point(C, center)?;
                for (n, h) in ["half_extents.x", "half_extents.y", "half_extents.z"]
                    .into_iter()
                    .zip(half_extents)
                {
                    radius(n, *h, max_radius)?;
                }
                nonzero("rotation", rotation)?;
                blend(*k, max_radius)
            }
            EditOp::Capsule {
                a,
                b,
                radius: r,
                blend: k,
                ..
            }
            | EditOp::Cylinder {
                a,
                b,
                radius: r,
                blend: k,
                ..
            } => {
                point(A, a)?;
                point(B, b)?;
                radius("radius", *r, max_radius)?;
                let len = length(a, b);
                if len > 2.0 * max_radius {
                    return Err(EditError::SizeTooLarge {
                        name: "length",
                        value: len,
                        max: 2.0 * max_radius,
                    });
                }
                if matches!(self, EditOp::Cylinder { .. }) && len < 1e-9 {
                    return Err(EditError::Degenerate { name: "b − a" });
                }
                blend(*k, max_radius)
            }
            EditOp::Torus {
                center,
                axis,
                major_radius,
                minor_radius,
                blend: k,
                ..
            } => {
                point(C, center)?;
                nonzero("axis", axis)?;
                radius("major_radius", *major_radius, max_radius)?;
                radius("minor_radius", *minor_radius, max_radius)?;
                range(
                    "minor_radius",
                    *minor_radius,
                    minor_radius <= major_radius,
                    "(0, major_radius]",
                )?;
                blend(*k, max_radius)
            }
            EditOp::Raise {
                center,
                radius: r,
                strength,
                falloff: f,
            }
            | EditOp::Lower {
                center,
                radius: r,
                strength,
                falloff: f,
            } => brush(
                center,
                *r,
                ("strength", *strength, *r, "(0, radius]"),
                f,
                max_radius,
            ),
            EditOp::Smooth {
                center,
                radius: r,
                strength,
                falloff: f,
            } => brush(
                center,
                *r,
                ("strength", *strength, 1.0, "(0, 1]"),
                f,
                max_radius,
            ),
            EditOp::Flatten {
                center,
                radius: r,
                strength,
                falloff: f,
                plane_point,
                plane_normal,
            } => {
                point(
                    ["plane_point.x", "plane_point.y", "plane_point.z"],
                    plane_point,
                )?;
                nonzero("plane_normal", plane_normal)?;
                brush(
                    center,
                    *r,
                    ("strength", *strength, 1.0, "(0, 1]"),
                    f,
                    max_radius,
                )
            }
            EditOp::Noise {
                center,
                radius: r,
                strength,
                falloff: f,
                wavelength,
                ..
            } => {
                range(
                    "wavelength",
                    *wavelength,
                    (0.01..=1e4).contains(wavelength),
                    "[0.01, 10⁴] m",
                )?;
                brush(
                    center,
                    *r,
                    ("strength", *strength, *r, "(0, radius]"),
                    f,
                    max_radius,
                )
            }
            EditOp::Paint {
                center,
                radius: r,
                falloff: f,
                threshold,
                ..
            } => brush(
                center,
                *r,
                ("threshold", *threshold, 1.0, "(0, 1]"),
                f,
                max_radius,
            ),
            EditOp::Undo { .. } | EditOp::Redo { .. } => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{CsgMode, EditError, EditOp};

    fn cuboid(rotation: [f64; 4]) -> EditOp {
        EditOp::Cuboid {
            mode: CsgMode::Union,
            center: [0.0; 3],
            half_extents: [1.0; 3],
            rotation,
            material: 0,
            blend: 0.0,
        }
    }

    /// A rotation of zero length is degenerate; one whose squared length overflows is too
    /// long, and the refusal says so (it said "zero length" before; found by an
    /// adversarial trial). Large ones whose squared length is finite are taken.
    #[test]
    fn a_rotation_too_long_is_not_called_degenerate() {
        assert_eq!(
            cuboid([0.0; 4]).validate(64.0),
            Err(EditError::Degenerate { name: "rotation" })
        );
        assert_eq!(
            cuboid([1e308, 0.0, 0.0, 1.0]).validate(64.0),
            Err(EditError::OutOfRangeValue {
                name: "rotation",
                value: 1e308,
                range: "components whose squares sum below f64::MAX",
            })
        );
        assert_eq!(cuboid([1e153, 0.0, 0.0, 1e153]).validate(64.0), Ok(()));
    }
}
