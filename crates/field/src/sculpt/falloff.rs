//! Falloff profiles: how strongly a brush acts at a given fraction of its radius.
//!
//! A profile maps the normalised distance `d = distance / radius` (clamped to `[0, 1]`) to a
//! weight in `[0, 1]`: 1 at the brush centre, 0 at the rim, never increasing in between. The
//! profile names follow the proportional-editing falloffs of Blender; the formulas are the
//! ones written on each variant. Every formula uses only `+ − × ÷ √` and `libm::pow`
//! (docs/architecture.md, invariant 2), so weights are bit-identical on every platform.
//!
//! ```text
//!  w                                   Smooth       1 − (3d² − 2d³)
//!  1 |‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾‾|         Sphere       √(1 − d²)
//!    |  ‾‾‾--..__               |         Sharp{n}     (1 − d)ⁿ
//!    |           ‾‾--..__       |         Linear       1 − d
//!    |                   ‾‾-._  |         Constant     1, and 0 at the rim
//!  0 +--------------------------+-> d     InverseSquare (1 − d²)/(1 + 15 d²)
//!    0      (centre)            1 (rim)
//! ```

use serde::{Deserialize, Serialize};

/// Smallest exponent accepted for [`Falloff::Sharp`].
pub const SHARP_N_MIN: f64 = 2.0;
/// Largest exponent accepted for [`Falloff::Sharp`].
pub const SHARP_N_MAX: f64 = 64.0;

/// Exact maximum of `|dw/dd|` over `[0, 1]` for [`Falloff::InverseSquare`]: `6/√5`
/// (≈ 2.683 per unit of `d`), reached at `d = 1/√45`.
///
/// Derivation: for `w = (1 − d²)/(1 + 15d²)`, the quotient rule gives
/// `dw/dd = −32d / (1 + 15d²)²`; its magnitude peaks where `1 − 45d² = 0`. There
/// `(1 + 15d²)² = (4/3)² = 16/9`, so the peak is `32 · (1/√45) · 9/16 = 18/√45 = 6/√5`.
pub const INVERSE_SQUARE_MAX_SLOPE: f64 = 2.683_281_572_999_748;

/// A brush's falloff profile.
///
/// Serde (externally tagged, snake case, unknown names and fields refused): `"smooth"`,
/// `"sphere"`, `{"sharp": {"n": 3}}`, `"linear"`, `"constant"`, `"inverse_square"`.
/// Default: [`Falloff::Smooth`].
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Falloff {
    /// `1 − (3d² − 2d³)`: one minus the cubic Hermite "smoothstep" (as GLSL's
    /// `smoothstep(0, 1, d)`); flat at the centre and at the rim. Steepest slope 1.5 at
    /// `d = 0.5`.
    #[default]
    Smooth,
    /// `√(1 − d²)`: the height of a unit hemisphere at `d`, a dome; vertical at the rim.
    Sphere,
    /// `(1 − d)ⁿ` (power law, computed with `libm::pow`); `n` must be finite and in
    /// `[SHARP_N_MIN, SHARP_N_MAX]` = `[2, 64]` (see [`Falloff::validate`]). Larger `n` gives a
    /// narrower peak.
    Sharp {
        /// The exponent, dimensionless, in `[2, 64]`.
        n: f64,
    },
    /// `1 − d`: a cone.
    Linear,
    /// `1` for `d < 1` and `0` at `d = 1`: a flat-topped step.
    Constant,
    /// An inverse-square law `1/(1 + 15 d²)` shifted and scaled so that it is 1 at the centre
    /// and 0 at the rim: `(1 − d²)/(1 + 15 d²)`. A sharp central peak with a long, shallow
    /// tail.
    InverseSquare,
}

/// A falloff was rejected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FalloffError {
    /// The exponent of [`Falloff::Sharp`] is NaN, infinite or outside `[2, 64]`.
    #[error("sharp falloff exponent n = {} must be finite and in [{min}, {max}]", crate::num(.n))]
    SharpExponent {
        /// The exponent given.
        n: f64,
        /// [`SHARP_N_MIN`].
        min: f64,
        /// [`SHARP_N_MAX`].
        max: f64,
    },
}

impl Falloff {
    /// The weight in `[0, 1]` at normalised distance `d = distance / radius` (dimensionless).
    ///
    /// `d` is clamped to `[0, 1]` first; NaN counts as 1 (the rim), so its weight is 0. The
    /// formula of each profile is on its variant. Weights are 1 at `d = 0` and 0 at `d = 1`,
    /// and never increase with `d`. For a [`Falloff::Sharp`] that failed
    /// [`validate`](Self::validate) the result is still clamped into `[0, 1]` (NaN → 0), but is
    /// otherwise unspecified.
    #[must_use]
    pub fn weight(&self, d: f64) -> f64 {
        let d = if d.is_nan() || d >= 1.0 {
            1.0
        } else {
            d.max(0.0)
        };
        match *self {
            Falloff::Smooth => 1.0 - (3.0 * d * d - 2.0 * d * d * d),
            Falloff::Sphere => {
                // 1 − d² ≥ 0 for d in [0, 1]; `max` guards the sqrt anyway.
                (1.0 - d * d).max(0.0).sqrt()
            }
            Falloff::Sharp { n } => {
                let w = libm::pow(1.0 - d, n);
                if w.is_nan() { 0.0 } else { w.clamp(0.0, 1.0) }
            }
            Falloff::Linear => 1.0 - d,
            Falloff::Constant => {
                if d < 1.0 {
                    1.0
                } else {
                    0.0
                }
            }
            Falloff::InverseSquare => {
                let d2 = d * d;
                (1.0 - d2) / (1.0 + 15.0 * d2)
            }
        }
    }

    /// Checks the profile's parameters: [`Falloff::Sharp`]'s `n` must be finite and in
    /// `[SHARP_N_MIN, SHARP_N_MAX]` = `[2, 64]`. The other profiles have none and always pass.
    ///
    /// # Errors
    /// [`FalloffError::SharpExponent`] with the bad exponent.
    pub fn validate(&self) -> Result<(), FalloffError> {
        match *self {
            Falloff::Sharp { n } if !(SHARP_N_MIN..=SHARP_N_MAX).contains(&n) => {
                // NaN and ±∞ are outside the range too.
                Err(FalloffError::SharpExponent {
                    n,
                    min: SHARP_N_MIN,
                    max: SHARP_N_MAX,
                })
            }
            _ => Ok(()),
        }
    }

    /// An upper bound of `|dw/dd|` over `d` in `[0, 1]` (weight per unit of normalised
    /// distance; divide by the radius for weight per metre).
    ///
    /// - Smooth: `1.5` exactly (`dw/dd = −6d(1 − d)`, largest at `d = 0.5`).
    /// - Sphere: `f64::INFINITY` (`dw/dd = −d/√(1 − d²)` is unbounded at the rim).
    /// - Sharp: `n` exactly (`dw/dd = −n(1 − d)ⁿ⁻¹`, largest at `d = 0`, for `n ≥ 1`);
    ///   `f64::INFINITY` for an exponent below 1 or NaN (unbounded slope at the rim).
    /// - Linear: `1` exactly.
    /// - Constant: `f64::INFINITY` (a step at the rim).
    /// - InverseSquare: [`INVERSE_SQUARE_MAX_SLOPE`] = `6/√5` exactly (derivation there).
    #[must_use]
    pub fn max_slope(&self) -> f64 {
        match *self {
            Falloff::Smooth => 1.5,
            Falloff::Sphere | Falloff::Constant => f64::INFINITY,
            Falloff::Sharp { n } => {
                if n >= 1.0 {
                    n
                } else {
                    f64::INFINITY
                }
            }
            Falloff::Linear => 1.0,
            Falloff::InverseSquare => INVERSE_SQUARE_MAX_SLOPE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Falloff; 8] = [
        Falloff::Smooth,
        Falloff::Sphere,
        Falloff::Sharp { n: 2.0 },
        Falloff::Sharp { n: 3.0 },
        Falloff::Sharp { n: 64.0 },
        Falloff::Linear,
        Falloff::Constant,
        Falloff::InverseSquare,
    ];

    const DS: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

    fn check(f: Falloff, expected: [f64; 5]) {
        for (d, e) in DS.into_iter().zip(expected) {
            assert_eq!(f.weight(d), e, "{f:?} at d = {d}");
        }
    }

    #[test]
    fn smooth_exact() {
        check(Falloff::Smooth, [1.0, 0.84375, 0.5, 0.15625, 0.0]);
    }

    #[test]
    fn sphere_exact() {
        check(
            Falloff::Sphere,
            [1.0, 0.9375f64.sqrt(), 0.75f64.sqrt(), 0.4375f64.sqrt(), 0.0],
        );
    }

    #[test]
    fn sharp_exact() {
        check(Falloff::Sharp { n: 2.0 }, [1.0, 0.5625, 0.25, 0.0625, 0.0]);
        check(
            Falloff::Sharp { n: 3.0 },
            [1.0, 0.421875, 0.125, 0.015625, 0.0],
        );
        check(
            Falloff::Sharp { n: 64.0 },
            [
                1.0,
                libm::pow(0.75, 64.0),
                0.5f64.powi(64),
                0.25f64.powi(64),
                0.0,
            ],
        );
        // 0.5⁶⁴ = 2⁻⁶⁴ is exact.
        assert_eq!(Falloff::Sharp { n: 64.0 }.weight(0.5), 2f64.powi(-64));
    }

    #[test]
    fn linear_exact() {
        check(Falloff::Linear, [1.0, 0.75, 0.5, 0.25, 0.0]);
    }

    #[test]
    fn constant_exact() {
        check(Falloff::Constant, [1.0, 1.0, 1.0, 1.0, 0.0]);
        assert_eq!(Falloff::Constant.weight(1.0 - f64::EPSILON), 1.0);
    }

    #[test]
    fn inverse_square_exact() {
        check(
            Falloff::InverseSquare,
            [1.0, 0.9375 / 1.9375, 0.75 / 4.75, 0.4375 / 9.4375, 0.0],
        );
    }

    #[test]
    fn clamps_and_nan() {
        for f in ALL {
            assert_eq!(f.weight(-0.5), 1.0, "{f:?}");
            assert_eq!(f.weight(-0.0), 1.0, "{f:?}");
            assert_eq!(f.weight(f64::NEG_INFINITY), 1.0, "{f:?}");
            assert_eq!(f.weight(1.5), 0.0, "{f:?}");
            assert_eq!(f.weight(f64::INFINITY), 0.0, "{f:?}");
            assert_eq!(f.weight(f64::NAN), 0.0, "{f:?}");
        }
    }

    #[test]
    fn unvalidated_sharp_stays_in_range() {
        for n in [f64::NAN, f64::INFINITY, -3.0, 0.0, 0.5, 1e300] {
            for i in 0..=100 {
                let w = Falloff::Sharp { n }.weight(f64::from(i) / 100.0);
                assert!((0.0..=1.0).contains(&w), "n = {n}: {w}");
            }
        }
    }

    #[test]
    fn monotone_non_increasing_and_in_range() {
        const N: u32 = 100_000;
        for f in ALL {
            let mut prev = f.weight(0.0);
            assert_eq!(prev, 1.0);
            for i in 1..=N {
                let w = f.weight(f64::from(i) / f64::from(N));
                assert!((0.0..=1.0).contains(&w), "{f:?}: {w}");
                assert!(w <= prev, "{f:?} increases at i = {i}: {prev} -> {w}");
                prev = w;
            }
            assert_eq!(prev, 0.0);
        }
    }

    #[test]
    fn slopes_are_bounds() {
        const N: u32 = 200_000;
        for f in ALL {
            let bound = f.max_slope();
            let mut max: f64 = 0.0;
            for i in 0..N {
                let (d0, d1) = (f64::from(i) / f64::from(N), f64::from(i + 1) / f64::from(N));
                let s = (f.weight(d0) - f.weight(d1)) / (d1 - d0);
                max = max.max(s.abs());
            }
            // A difference quotient is a mean of the derivative, so it never exceeds the bound
            // (beyond rounding).
            assert!(max <= bound * (1.0 + 1e-9), "{f:?}: {max} > {bound}");
            if bound.is_finite() {
                assert!(max >= bound * (1.0 - 1e-3), "{f:?}: {max} not near {bound}");
            }
        }
        assert_eq!(Falloff::Smooth.max_slope(), 1.5);
        assert_eq!(Falloff::Linear.max_slope(), 1.0);
        assert_eq!(Falloff::Sharp { n: 3.0 }.max_slope(), 3.0);
        assert_eq!(Falloff::Sphere.max_slope(), f64::INFINITY);
        assert_eq!(Falloff::Constant.max_slope(), f64::INFINITY);
        assert_eq!(Falloff::Sharp { n: 0.5 }.max_slope(), f64::INFINITY);
        assert_eq!(Falloff::Sharp { n: f64::NAN }.max_slope(), f64::INFINITY);
    }

    #[test]
    fn inverse_square_max_slope_by_dense_sampling() {
        // The analytic derivative −32d/(1 + 15d²)², sampled densely.
        const N: u32 = 1_000_000;
        let mut max: f64 = 0.0;
        for i in 0..=N {
            let d = f64::from(i) / f64::from(N);
            let q = 1.0 + 15.0 * d * d;
            max = max.max(32.0 * d / (q * q));
        }
        assert!(max <= INVERSE_SQUARE_MAX_SLOPE, "{max}");
        assert!(INVERSE_SQUARE_MAX_SLOPE - max < 1e-9, "{max}");
        assert!((INVERSE_SQUARE_MAX_SLOPE - 6.0 / 5f64.sqrt()).abs() <= f64::EPSILON * 4.0);
        // And the peak is where the docs say.
        let d = 1.0 / 45f64.sqrt();
        let q = 1.0 + 15.0 * d * d;
        assert!((32.0 * d / (q * q) - INVERSE_SQUARE_MAX_SLOPE).abs() < 1e-15);
    }

    #[test]
    fn serde_spellings() {
        let cases: [(&str, Falloff); 6] = [
            ("\"smooth\"", Falloff::Smooth),
            ("\"sphere\"", Falloff::Sphere),
            ("{\"sharp\": {\"n\": 3}}", Falloff::Sharp { n: 3.0 }),
            ("\"linear\"", Falloff::Linear),
            ("\"constant\"", Falloff::Constant),
            ("\"inverse_square\"", Falloff::InverseSquare),
        ];
        for (json, f) in cases {
            assert_eq!(serde_json::from_str::<Falloff>(json).unwrap(), f, "{json}");
            let written = serde_json::to_string(&f).unwrap();
            assert_eq!(written, json.replace(' ', "").replace("3}", "3.0}"));
        }
        assert_eq!(Falloff::default(), Falloff::Smooth);
    }

    #[test]
    fn serde_round_trip() {
        for f in ALL.into_iter().chain([Falloff::Sharp { n: 2.5 }]) {
            let json = serde_json::to_string(&f).unwrap();
            assert_eq!(serde_json::from_str::<Falloff>(&json).unwrap(), f, "{json}");
        }
    }

    #[test]
    fn serde_refuses_unknown() {
        for json in [
            "\"gaussian\"",
            "\"Smooth\"",
            "\"inverseSquare\"",
            "{\"sharp\": {\"n\": 3, \"m\": 1}}",
            "{\"sharp\": {}}",
            "\"sharp\"",
            "{\"smooth\": {}}",
            "3",
        ] {
            assert!(serde_json::from_str::<Falloff>(json).is_err(), "{json}");
        }
    }

    #[test]
    fn validate() {
        for f in ALL.into_iter().chain([Falloff::Sharp { n: 2.5 }]) {
            assert_eq!(f.validate(), Ok(()), "{f:?}");
        }
        for n in [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1.999_999,
            0.0,
            -2.0,
            64.000_001,
            1e9,
        ] {
            match (Falloff::Sharp { n }).validate() {
                Err(FalloffError::SharpExponent { n: got, min, max }) => {
                    assert!(got.to_bits() == n.to_bits(), "{n}");
                    assert_eq!((min, max), (2.0, 64.0));
                }
                other => panic!("n = {n}: {other:?}"),
            }
        }
        let msg = (Falloff::Sharp { n: 1.0 })
            .validate()
            .unwrap_err()
            .to_string();
        assert_eq!(
            msg,
            "sharp falloff exponent n = 1 must be finite and in [2, 64]"
        );
    }
}
