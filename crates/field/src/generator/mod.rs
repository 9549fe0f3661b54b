//! Procedural base terrain: the field where no edit has been made.
//!
//! A generator is a ground height `h(x, z)` (fractal noise, or a real DEM) with caves carved
//! out of it by 3D noise. Its value at a world point `p` is
//!
//! ```text
//! ground(p) = (p.y − h(p.x, p.z)) / √(1 + Lh²)        Lh: Lipschitz bound of h
//! value(p)  = Q(clamp(max(ground(p), −cave(p)), −band, band))
//! ```
//!
//! where `Q` rounds onto the field's 16-bit quantisation grid ([`crate::Quant`]).
//!
//! Dividing by `√(1 + Lh²)` makes the height field's raw value a true distance bound
//! (docs/architecture.md, "Narrow band"); the cave SDF is scaled the same way, and the max of
//! 1-Lipschitz functions stays 1-Lipschitz.

mod caves;
mod heightmap;
mod noise_terrain;

pub use caves::CaveSettings;
pub use heightmap::{
    Heightmap, HeightmapError, HeightmapMeta, HeightmapPlacement, MAX_HEIGHTMAP_SAMPLES,
};
pub use noise_terrain::{NoiseLayer, NoiseTerrainSettings};

use crate::coords::{SampleBox, SamplePos};
use crate::quant::Quant;
use caves::Caves;
use heightmap::HeightmapGround;
use noise_terrain::NoiseGround;

/// Settings of a generator were rejected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum GeneratorError {
    /// A setting is NaN, infinite or out of its range.
    #[error("generator setting `{name}` = {value} is invalid: {why}")]
    InvalidSetting {
        /// The setting's name as in the session format.
        name: &'static str,
        /// Its value.
        value: f64,
        /// The allowed range.
        why: &'static str,
    },
}

pub(crate) fn check(
    name: &'static str,
    value: f64,
    ok: bool,
    why: &'static str,
) -> Result<(), GeneratorError> {
    if value.is_finite() && ok {
        Ok(())
    } else {
        Err(GeneratorError::InvalidSetting { name, value, why })
    }
}

#[derive(Debug, Clone)]
enum Ground {
    Noise(Box<NoiseGround>),
    Heightmap(HeightmapGround),
}

/// Where a chunk column is certainly air or certainly solid, in world metres.
///
/// Every sample above `air_above` reads exactly `+band` and every sample below `solid_below`
/// reads exactly `−band`, so whole-air and whole-solid chunks need no sampling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ColumnBounds {
    /// Lowest y (metres) above which every sample of the column is air at `+band`.
    pub air_above: f64,
    /// Highest y (metres) below which every sample of the column is solid at `−band`.
    pub solid_below: f64,
}

/// A deterministic base terrain. Cheap to share behind an `Arc`; all methods take `&self`.
#[derive(Debug, Clone)]
pub struct Generator {
    ground: Ground,
    caves: Option<Caves>,
    /// `1 / √(1 + Lh²)`, computed once: every sample multiplies by it.
    inv_scale: f64,
}

impl Generator {
    fn with(ground: Ground, caves: Option<Caves>) -> Self {
        let mut g = Self {
            ground,
            caves,
            inv_scale: 1.0,
        };
        g.inv_scale = 1.0 / g.ground_scale();
        g
    }

    /// Fractal-noise terrain (hills, ridges, detail) with caves.
    ///
    /// # Errors
    /// [`GeneratorError::InvalidSetting`] for a non-finite or out-of-range setting.
    pub fn noise(
        settings: &NoiseTerrainSettings,
        caves: &CaveSettings,
    ) -> Result<Self, GeneratorError> {
        Ok(Self::with(
            Ground::Noise(Box::new(NoiseGround::new(settings)?)),
            Caves::new(caves)?,
        ))
    }

    /// A real heightmap (DEM) as ground, bilinearly interpolated, centred on the origin, with
    /// caves.
    ///
    /// # Errors
    /// [`GeneratorError::InvalidSetting`] for a non-finite or out-of-range placement.
    pub fn heightmap(
        map: &Heightmap,
        placement: &HeightmapPlacement,
        caves: &CaveSettings,
    ) -> Result<Self, GeneratorError> {
        Ok(Self::with(
            Ground::Heightmap(HeightmapGround::new(map, placement)?),
            Caves::new(caves)?,
        ))
    }

    /// Ground height `h(x, z)` in metres, before caves.
    pub fn surface_height(&self, x: f64, z: f64) -> f64 {
        match &self.ground {
            Ground::Noise(g) => g.height(x, z),
            Ground::Heightmap(g) => g.height(x, z),
        }
    }

    /// Upper bound of `|∇h|`, the ground's slope (dimensionless).
    pub fn slope_bound(&self) -> f64 {
        match &self.ground {
            Ground::Noise(g) => g.slope_bound(),
            Ground::Heightmap(g) => g.slope_bound(),
        }
    }

    fn height_range(&self, x: [f64; 2], z: [f64; 2]) -> (f64, f64) {
        match &self.ground {
            Ground::Noise(g) => g.height_range(x, z),
            Ground::Heightmap(g) => g.height_range(x, z),
        }
    }

    /// Conservative bounds of the ground over the rectangle `x[0]..=x[1]`, `z[0]..=z[1]`
    /// (metres), for a field clamped to `±band` metres.
    pub fn column_bounds(&self, x: [f64; 2], z: [f64; 2], band: f64) -> ColumnBounds {
        let (lo, hi) = self.height_range(x, z);
        let scale = self.ground_scale();
        let mut solid_below = lo - band * scale;
        if let Some(c) = &self.caves {
            solid_below = solid_below.min(c.y_min - band);
        }
        ColumnBounds {
            air_above: hi + band * scale,
            solid_below,
        }
    }

    fn ground_scale(&self) -> f64 {
        let l = self.slope_bound();
        (1.0 + l * l).sqrt()
    }

    /// The field value at world point `p` (metres), clamped to `±band` and rounded onto the
    /// quantisation grid ([`Quant::quantize`], which clamps). `h` is `surface_height(p.x, p.z)` and `inv_scale` is `1 / √(1 + Lh²)`; they are
    /// passed in so a column is computed once.
    #[inline]
    fn value_with(&self, p: [f64; 3], h: f64, inv_scale: f64, band: f64, grid: &Quant) -> f32 {
        let ground = (p[1] - h) * inv_scale;
        let mut v = ground;
        if ground < band
            && let Some(c) = &self.caves
            && p[1] >= c.y_min - band
            && p[1] <= c.y_max + band
        {
            v = v.max(-c.sdf(p));
        }
        grid.quantize(v)
    }

    /// The field value at any world point `p` (metres) for a band of `band` metres: the
    /// function the samples are taken from, on the quantisation grid ([`Quant`]):
    /// 1-Lipschitz up to one grid step.
    pub fn value(&self, p: [f64; 3], band: f64) -> f32 {
        let h = self.surface_height(p[0], p[2]);
        self.value_with(p, h, self.inv_scale, band, &Quant::new(band))
    }

    /// The field value at sample `s` for `voxel_size` metres and a band of `band` metres.
    pub fn sample(&self, s: SamplePos, voxel_size: f64, band: f64) -> f32 {
        let p = crate::coords::sample_to_world(s, voxel_size);
        let h = self.surface_height(p[0], p[2]);
        self.value_with(p, h, self.inv_scale, band, &Quant::new(band))
    }

    /// Fills `out` with the samples of the box starting at `min` with `dims` samples per axis,
    /// x fastest, then y, then z. Equal sample for sample to [`Generator::sample`]; the ground
    /// height is computed once per column.
    ///
    /// # Panics
    /// If `out.len()` is not `dims[0] · dims[1] · dims[2]`, or the box reaches outside the
    /// `i32` sample range.
    pub fn fill(
        &self,
        min: SamplePos,
        dims: [usize; 3],
        voxel_size: f64,
        band: f64,
        out: &mut [f32],
    ) {
        let n = dims
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .expect("dims overflow");
        assert_eq!(out.len(), n, "output length");
        if out.is_empty() {
            return;
        }
        self.fill_part(
            min,
            dims,
            SampleBox::from_min_dims(min, dims),
            voxel_size,
            band,
            out,
        );
    }

    /// Fills only the samples of `part` in `out`, a grid of `dims` samples starting at
    /// `grid_min` (x fastest). `part` must lie inside the grid.
    pub(crate) fn fill_part(
        &self,
        grid_min: SamplePos,
        dims: [usize; 3],
        part: SampleBox,
        voxel_size: f64,
        band: f64,
        out: &mut [f32],
    ) {
        let inv = self.inv_scale;
        let grid = Quant::new(band);
        let (nx, ny) = (dims[0], dims[1]);
        for z in part.min.z..=part.max.z {
            let wz = f64::from(z) * voxel_size;
            let k = (z - grid_min.z) as usize;
            for x in part.min.x..=part.max.x {
                let wx = f64::from(x) * voxel_size;
                let i = (x - grid_min.x) as usize;
                let h = self.surface_height(wx, wz);
                for y in part.min.y..=part.max.y {
                    let j = (y - grid_min.y) as usize;
                    out[i + nx * (j + ny * k)] =
                        self.value_with([wx, f64::from(y) * voxel_size, wz], h, inv, band, &grid);
                }
            }
        }
    }
}

/// Wraps a noise-space coordinate into `[0, 256)`. `noise`'s Perlin hashes lattice points
/// modulo 256, so this leaves the noise unchanged in exact arithmetic, and keeps its
/// float-to-integer conversion in range for any world coordinate (also on 32-bit targets).
#[inline]
pub(crate) fn wrap_noise(q: f64) -> f64 {
    q - 256.0 * (q * (1.0 / 256.0)).floor()
}

impl Generator {
    /// Fills `out` with the samples at `min + stride · i` for `i` in the box of `dims` lattice
    /// points (x fastest, then y, then z): a coarse level of detail's samples. Equal sample
    /// for sample to [`Generator::sample`] at those positions; the ground height is computed
    /// once per column.
    ///
    /// # Panics
    /// If `stride < 1`, `out.len()` is not `dims[0] · dims[1] · dims[2]`, or a lattice point
    /// lies outside the `i32` sample range.
    pub fn fill_strided(
        &self,
        min: SamplePos,
        stride: i32,
        dims: [usize; 3],
        voxel_size: f64,
        band: f64,
        out: &mut [f32],
    ) {
        assert!(stride >= 1, "stride {stride} must be at least 1");
        assert_eq!(out.len(), dims.iter().product::<usize>(), "output length");
        let at = |m: i32, i: usize| -> i32 {
            i32::try_from(i64::from(m) + i64::from(stride) * i as i64)
                .expect("lattice point outside the sample range")
        };
        let inv = self.inv_scale;
        let grid = Quant::new(band);
        let (nx, ny) = (dims[0], dims[1]);
        for k in 0..dims[2] {
            let wz = f64::from(at(min.z, k)) * voxel_size;
            for i in 0..nx {
                let wx = f64::from(at(min.x, i)) * voxel_size;
                let h = self.surface_height(wx, wz);
                for j in 0..ny {
                    let wy = f64::from(at(min.y, j)) * voxel_size;
                    out[i + nx * (j + ny * k)] = self.value_with([wx, wy, wz], h, inv, band, &grid);
                }
            }
        }
    }
}
