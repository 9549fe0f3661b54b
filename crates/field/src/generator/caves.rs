//! Caves: tunnels where two 3D Perlin noises are both near zero, inside a slab of heights.

use noise::{NoiseFn, Perlin};
use serde::{Deserialize, Serialize};

use super::{GeneratorError, check, wrap_noise};

/// Measured maximum of `|∇perlin_3d|` for `noise` 0.9 (3.60 over 4·10⁶ random points), with a
/// margin of about 17%, so `n / PERLIN3_GRADIENT_BOUND` is 1-Lipschitz.
pub(crate) const PERLIN3_GRADIENT_BOUND: f64 = 4.2;

/// Cave carving (serde: the `caves` object of a session).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CaveSettings {
    /// Whether caves are carved. Default true.
    pub enabled: bool,
    /// Seed of the two cave noises. Default 1.
    pub seed: u32,
    /// Wavelength of the cave noise in metres, in `[0.01, 10⁷]` (larger: longer, straighter
    /// tunnels). Default 48.
    pub wavelength: f64,
    /// Half-width of a tunnel in noise units, in (0, 1); about `width · wavelength / 2`
    /// metres of radius. Default 0.1.
    pub width: f64,
    /// Lowest y of cave space in metres. Default −96.
    pub y_min: f64,
    /// Highest y of cave space in metres. Tunnels open to the surface where the ground is
    /// below it. Default 4.
    pub y_max: f64,
}

impl Default for CaveSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            seed: 1,
            wavelength: 48.0,
            width: 0.1,
            y_min: -96.0,
            y_max: 4.0,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Caves {
    a: Perlin,
    b: Perlin,
    inv_wavelength: f64,
    width: f64,
    scale: f64,
    pub(crate) y_min: f64,
    pub(crate) y_max: f64,
}

impl Caves {
    pub(crate) fn new(s: &CaveSettings) -> Result<Option<Self>, GeneratorError> {
        if !s.enabled {
            return Ok(None);
        }
        check(
            "caves.wavelength",
            s.wavelength,
            (0.01..=1e7).contains(&s.wavelength),
            "in [0.01, 1e7] m",
        )?;
        check(
            "caves.width",
            s.width,
            s.width > 0.0 && s.width < 1.0,
            "in (0, 1)",
        )?;
        check("caves.y_min", s.y_min, s.y_min.abs() < 1e7, "|y| < 1e7 m")?;
        check(
            "caves.y_max",
            s.y_max,
            s.y_max >= s.y_min && s.y_max.abs() < 1e7,
            ">= y_min",
        )?;
        Ok(Some(Self {
            a: Perlin::new(s.seed),
            b: Perlin::new(s.seed.wrapping_add(0x9E37)),
            inv_wavelength: 1.0 / s.wavelength,
            width: s.width,
            scale: s.wavelength / PERLIN3_GRADIENT_BOUND,
            y_min: s.y_min,
            y_max: s.y_max,
        }))
    }

    /// A 1-Lipschitz bound of the distance to cave space, negative inside a tunnel (metres).
    pub(crate) fn sdf(&self, p: [f64; 3]) -> f64 {
        let q = p.map(|v| wrap_noise(v * self.inv_wavelength));
        let n1 = self.a.get(q).abs();
        let n2 = self.b.get([q[2], q[0], q[1]]).abs();
        let tunnel = (n1.max(n2) - self.width) * self.scale;
        let slab = (self.y_min - p[1]).max(p[1] - self.y_max);
        tunnel.max(slab)
    }
}
