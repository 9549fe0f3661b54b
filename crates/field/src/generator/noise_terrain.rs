//! Fractal-noise ground: rolling hills, ridges and fine detail from Perlin noise (`noise` 0.9).
//!
//! The octave sums are written out here, with `+ − ×` only, so that the field is bit-identical
//! on every platform (docs/architecture.md, invariant 2); `noise` supplies the Perlin primitive.

use noise::{NoiseFn, Perlin};
use serde::{Deserialize, Serialize};

use super::{GeneratorError, check, wrap_noise};

/// Measured maximum of `|∇perlin_2d|` for `noise` 0.9 (3.89 over 4·10⁶ random points), with a
/// margin of about 16%.
pub(crate) const PERLIN2_GRADIENT_BOUND: f64 = 4.5;

/// One fractal layer: `octaves` Perlin octaves, each of half the amplitude and half the
/// wavelength of the previous one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoiseLayer {
    /// Amplitude of the first octave in metres (≥ 0).
    pub amplitude: f64,
    /// Wavelength of the first octave in metres, in `[0.01, 10⁷]`.
    pub wavelength: f64,
    /// Number of octaves, 0 ..= 12 (0 turns the layer off).
    pub octaves: u32,
}

/// Noise terrain settings (serde: the `generator` object of a session with `"kind": "noise"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NoiseTerrainSettings {
    /// Seed of the ground noises. Default 0.
    pub seed: u32,
    /// Mean ground height in metres. Default 16.
    pub base_height: f64,
    /// Rolling hills, `±` amplitude. Default 24 m at 256 m, 4 octaves.
    pub hills: NoiseLayer,
    /// Ridges, `amplitude · (1 − |n|)²`, from 0 up. Default 40 m at 512 m, 2 octaves.
    pub ridges: NoiseLayer,
    /// Fine detail, `±` amplitude. Default 0.75 m at 8 m, 1 octave.
    pub detail: NoiseLayer,
}

impl Default for NoiseTerrainSettings {
    fn default() -> Self {
        Self {
            seed: 0,
            base_height: 16.0,
            hills: NoiseLayer {
                amplitude: 24.0,
                wavelength: 256.0,
                octaves: 4,
            },
            ridges: NoiseLayer {
                amplitude: 40.0,
                wavelength: 512.0,
                octaves: 2,
            },
            detail: NoiseLayer {
                amplitude: 0.75,
                wavelength: 8.0,
                octaves: 1,
            },
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct NoiseGround {
    s: NoiseTerrainSettings,
    hills: Perlin,
    ridges: Perlin,
    detail: Perlin,
    slope: f64,
    range: (f64, f64),
}

/// Offsets that decorrelate octaves of one layer (metres in noise units; arbitrary).
const OCTAVE_OFFSET: [f64; 2] = [37.53, 11.29];

fn layer_sum(p: &Perlin, l: &NoiseLayer, x: f64, z: f64, ridged: bool) -> f64 {
    let mut amp = l.amplitude;
    let mut f = 1.0 / l.wavelength;
    let mut sum = 0.0;
    for i in 0..l.octaves {
        let o = f64::from(i);
        let n = p.get([
            wrap_noise(x * f + o * OCTAVE_OFFSET[0]),
            wrap_noise(z * f + o * OCTAVE_OFFSET[1]),
        ]);
        let v = if ridged {
            let r = 1.0 - n.abs();
            r * r
        } else {
            n
        };
        sum += amp * v;
        amp *= 0.5;
        f *= 2.0;
    }
    sum
}

/// `Σ 0.5^i` over the octaves: the amplitude sum relative to the first octave.
fn amp_sum(l: &NoiseLayer) -> f64 {
    let (mut a, mut sum) = (1.0, 0.0);
    for _ in 0..l.octaves {
        sum += a;
        a *= 0.5;
    }
    sum
}

fn check_layer(name: &'static str, l: &NoiseLayer) -> Result<(), GeneratorError> {
    check(
        name,
        l.amplitude,
        l.amplitude >= 0.0 && l.amplitude <= 1e5,
        "amplitude in [0, 1e5] m",
    )?;
    check(
        name,
        l.wavelength,
        l.wavelength >= 0.01 && l.wavelength <= 1e7,
        "wavelength in [0.01, 1e7] m",
    )?;
    check(
        name,
        f64::from(l.octaves),
        l.octaves <= 12,
        "octaves in 0..=12",
    )
}

impl NoiseGround {
    pub(crate) fn new(s: &NoiseTerrainSettings) -> Result<Self, GeneratorError> {
        check(
            "base_height",
            s.base_height,
            s.base_height.abs() <= 1e6,
            "|h| <= 1e6 m",
        )?;
        check_layer("hills", &s.hills)?;
        check_layer("ridges", &s.ridges)?;
        check_layer("detail", &s.detail)?;
        // Octave i contributes at most amplitude·0.5^i · G · 2^i / wavelength to |∇h|: every
        // octave adds amplitude · G / wavelength. A ridge (1 − |n|)² doubles it.
        let per = |l: &NoiseLayer| f64::from(l.octaves) * l.amplitude / l.wavelength;
        let slope =
            PERLIN2_GRADIENT_BOUND * (per(&s.hills) + 2.0 * per(&s.ridges) + per(&s.detail));
        let h = s.hills.amplitude * amp_sum(&s.hills);
        let d = s.detail.amplitude * amp_sum(&s.detail);
        let r = s.ridges.amplitude * amp_sum(&s.ridges);
        Ok(Self {
            hills: Perlin::new(s.seed),
            ridges: Perlin::new(s.seed.wrapping_add(1)),
            detail: Perlin::new(s.seed.wrapping_add(2)),
            slope,
            range: (s.base_height - h - d, s.base_height + h + d + r),
            s: s.clone(),
        })
    }

    pub(crate) fn height(&self, x: f64, z: f64) -> f64 {
        self.s.base_height
            + layer_sum(&self.hills, &self.s.hills, x, z, false)
            + layer_sum(&self.ridges, &self.s.ridges, x, z, true)
            + layer_sum(&self.detail, &self.s.detail, x, z, false)
    }

    pub(crate) fn slope_bound(&self) -> f64 {
        self.slope
    }

    /// Bounds of `h` over a rectangle: `h` on a grid of at most 4 m spacing, widened by the
    /// slope bound times half the grid diagonal, and clipped to the layers' absolute range.
    pub(crate) fn height_range(&self, x: [f64; 2], z: [f64; 2]) -> (f64, f64) {
        const SPACING: f64 = 4.0;
        let n = |a: [f64; 2]| (((a[1] - a[0]) / SPACING).ceil().clamp(1.0, 64.0)) as u32;
        let (nx, nz) = (n(x), n(z));
        let (sx, sz) = ((x[1] - x[0]) / f64::from(nx), (z[1] - z[0]) / f64::from(nz));
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for i in 0..=nx {
            for k in 0..=nz {
                let h = self.height(x[0] + sx * f64::from(i), z[0] + sz * f64::from(k));
                lo = lo.min(h);
                hi = hi.max(h);
            }
        }
        let margin = self.slope * 0.5 * (sx * sx + sz * sz).sqrt();
        (
            (lo - margin).max(self.range.0),
            (hi + margin).min(self.range.1),
        )
    }
}
