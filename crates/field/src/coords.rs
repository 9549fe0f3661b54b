//! World, sample, chunk and brick coordinates (docs/architecture.md, "Coordinates").
//!
//! ```text
//!  world (f64 metres) --snap+floor--> sample (i32) --div_euclid 32--> chunk / brick (i32)
//!                                            |
//!                                            +--rem_euclid 32--> local index in [0, 32)
//! ```
//!
//! Every conversion to a coarser space uses floor division (`div_euclid`), never
//! truncation: sample −1 is in chunk −1 at local index 31.

use serde::{Deserialize, Serialize};

/// Cells per chunk along each axis. Chunk `c` owns cells `[32c, 32c + 32)`, whose corners are
/// the samples `32c ..= 32c + 32`.
pub const CHUNK_CELLS: i32 = 32;

/// Samples per brick along each axis. Brick `b` holds the samples `[32b, 32b + 32)`, so bricks
/// are aligned with chunks.
pub const BRICK_SAMPLES: i32 = 32;

/// Samples in one brick (`32³`).
pub const BRICK_VOLUME: usize = (BRICK_SAMPLES * BRICK_SAMPLES * BRICK_SAMPLES) as usize;

/// A world position within this many samples of an integer is snapped to that integer before
/// flooring (docs/architecture.md, "Coordinates"), so `0.96 m` at `0.03 m` voxels is sample 32,
/// not 31.
pub const SNAP_EPSILON_SAMPLES: f64 = 1e-9;

/// Integer sample coordinates. The sample `(x, y, z)` sits at world position
/// `(x, y, z) · voxel_size` metres.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct SamplePos {
    /// X index (east).
    pub x: i32,
    /// Y index (up).
    pub y: i32,
    /// Z index (south).
    pub z: i32,
}

impl SamplePos {
    /// A sample position from its three indices.
    pub const fn new(x: i32, y: i32, z: i32) -> Self {
        Self { x, y, z }
    }

    /// The indices as an array `[x, y, z]`.
    pub const fn to_array(self) -> [i32; 3] {
        [self.x, self.y, self.z]
    }

    /// The chunk whose cells have this sample as their lowest corner, and the sample's local
    /// index in `[0, 32)` per axis. Samples on a chunk's upper face (local 32) belong to the next
    /// chunk here; they are still read by this chunk as corners.
    pub fn chunk(self) -> (ChunkKey, [i32; 3]) {
        let (c, l) = split(self, CHUNK_CELLS);
        (ChunkKey::new(c[0], c[1], c[2]), l)
    }

    /// The brick holding this sample, and the sample's local index in `[0, 32)` per axis.
    pub fn brick(self) -> (BrickKey, [i32; 3]) {
        let (b, l) = split(self, BRICK_SAMPLES);
        (BrickKey::new(b[0], b[1], b[2]), l)
    }
}

fn split(p: SamplePos, n: i32) -> ([i32; 3], [i32; 3]) {
    let a = p.to_array();
    (a.map(|v| v.div_euclid(n)), a.map(|v| v.rem_euclid(n)))
}

/// Chunk coordinates: chunk `(x, y, z)` owns cells `[32x, 32x + 32)` along x, and so on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct ChunkKey {
    /// Chunk index along x.
    pub x: i32,
    /// Chunk index along y.
    pub y: i32,
    /// Chunk index along z.
    pub z: i32,
}

impl ChunkKey {
    /// A chunk key from its three indices.
    pub const fn new(x: i32, y: i32, z: i32) -> Self {
        Self { x, y, z }
    }

    /// The chunk's lowest corner sample, `32 · key`.
    ///
    /// # Panics
    /// If the key is outside the sample range (|key| > 2²⁶).
    pub fn min_sample(self) -> SamplePos {
        let m = |v: i32| {
            v.checked_mul(CHUNK_CELLS)
                .expect("chunk key outside the sample range")
        };
        SamplePos::new(m(self.x), m(self.y), m(self.z))
    }
}

/// Brick coordinates: brick `(x, y, z)` holds samples `[32x, 32x + 32)` along x, and so on.
///
/// Bricks order by `(z, y, x)` ascending, the order the field hash uses (docs/architecture.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct BrickKey {
    /// Brick index along x.
    pub x: i32,
    /// Brick index along y.
    pub y: i32,
    /// Brick index along z.
    pub z: i32,
}

impl BrickKey {
    /// A brick key from its three indices.
    pub const fn new(x: i32, y: i32, z: i32) -> Self {
        Self { x, y, z }
    }

    /// The brick's lowest sample, `32 · key`.
    pub fn min_sample(self) -> SamplePos {
        SamplePos::new(
            self.x * BRICK_SAMPLES,
            self.y * BRICK_SAMPLES,
            self.z * BRICK_SAMPLES,
        )
    }
}

impl Ord for BrickKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.z, self.y, self.x).cmp(&(other.z, other.y, other.x))
    }
}

impl PartialOrd for BrickKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Chunks order by `(z, y, x)` ascending, like bricks.
impl Ord for ChunkKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.z, self.y, self.x).cmp(&(other.z, other.y, other.x))
    }
}

impl PartialOrd for ChunkKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// An inclusive box of samples, `min ..= max` on every axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SampleBox {
    /// Lowest corner (inclusive).
    pub min: SamplePos,
    /// Highest corner (inclusive).
    pub max: SamplePos,
}

impl SampleBox {
    /// The box holding one sample.
    pub fn point(p: SamplePos) -> Self {
        Self { min: p, max: p }
    }

    /// The box of `dims` samples (each ≥ 1) starting at `min`.
    ///
    /// # Panics
    /// If a dimension is 0 or the box reaches outside the `i32` sample range.
    pub fn from_min_dims(min: SamplePos, dims: [usize; 3]) -> Self {
        let end = |m: i32, d: usize| -> i32 {
            assert!(d >= 1, "empty box");
            i32::try_from(d - 1)
                .ok()
                .and_then(|d| m.checked_add(d))
                .expect("box outside the i32 sample range")
        };
        Self {
            min,
            max: SamplePos::new(
                end(min.x, dims[0]),
                end(min.y, dims[1]),
                end(min.z, dims[2]),
            ),
        }
    }

    /// Grows the box to hold `p`.
    pub fn include(&mut self, p: SamplePos) {
        self.min = SamplePos::new(
            self.min.x.min(p.x),
            self.min.y.min(p.y),
            self.min.z.min(p.z),
        );
        self.max = SamplePos::new(
            self.max.x.max(p.x),
            self.max.y.max(p.y),
            self.max.z.max(p.z),
        );
    }

    /// Whether `p` lies in the box.
    pub fn contains(&self, p: SamplePos) -> bool {
        (self.min.x..=self.max.x).contains(&p.x)
            && (self.min.y..=self.max.y).contains(&p.y)
            && (self.min.z..=self.max.z).contains(&p.z)
    }

    /// The smallest box holding both.
    pub fn union(self, other: Self) -> Self {
        let mut b = self;
        b.include(other.min);
        b.include(other.max);
        b
    }

    /// Samples in the box.
    pub fn volume(&self) -> u64 {
        let d = |a: i32, b: i32| (i64::from(b) - i64::from(a) + 1) as u64;
        d(self.min.x, self.max.x) * d(self.min.y, self.max.y) * d(self.min.z, self.max.z)
    }
}

/// A world coordinate could not be turned into a sample index.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CoordError {
    /// The coordinate is NaN or infinite.
    #[error("coordinate {value} is not finite")]
    NotFinite {
        /// The offending value, in metres.
        value: f64,
    },
    /// The coordinate maps to a sample index outside `i32`.
    #[error("coordinate {} m is outside the sample range at voxel size {voxel_size} m", crate::num(.value))]
    OutOfRange {
        /// The offending value, in metres.
        value: f64,
        /// The voxel size used, in metres.
        voxel_size: f64,
    },
}

/// Converts one world coordinate (metres) to a sample index, flooring, with the snap of
/// docs/architecture.md: a value within [`SNAP_EPSILON_SAMPLES`] of an integer sample is that
/// sample.
///
/// # Errors
/// [`CoordError`] for NaN, infinities and indices outside `i32`.
pub fn world_to_sample_floor(value: f64, voxel_size: f64) -> Result<i32, CoordError> {
    to_index(value, voxel_size, f64::floor)
}

/// Like [`world_to_sample_floor`] but rounding up: the lowest sample at or above `value`.
///
/// # Errors
/// [`CoordError`] for NaN, infinities and indices outside `i32`.
pub fn world_to_sample_ceil(value: f64, voxel_size: f64) -> Result<i32, CoordError> {
    to_index(value, voxel_size, f64::ceil)
}

fn to_index(value: f64, voxel_size: f64, round: fn(f64) -> f64) -> Result<i32, CoordError> {
    if !value.is_finite() {
        return Err(CoordError::NotFinite { value });
    }
    let s = value / voxel_size;
    let nearest = s.round();
    let s = if (s - nearest).abs() <= SNAP_EPSILON_SAMPLES {
        nearest
    } else {
        round(s)
    };
    if s < f64::from(i32::MIN) || s > f64::from(i32::MAX) {
        return Err(CoordError::OutOfRange { value, voxel_size });
    }
    Ok(s as i32)
}

/// Converts a world position (metres) to the sample at or below it on each axis.
///
/// # Errors
/// [`CoordError`] for NaN, infinities and indices outside `i32`.
pub fn world_to_sample(p: [f64; 3], voxel_size: f64) -> Result<SamplePos, CoordError> {
    Ok(SamplePos::new(
        world_to_sample_floor(p[0], voxel_size)?,
        world_to_sample_floor(p[1], voxel_size)?,
        world_to_sample_floor(p[2], voxel_size)?,
    ))
}

/// The one conversion from a world position (metres) to a chunk: the sample at or below it
/// ([`world_to_sample`], with its snap), then floor division by 32 ([`SamplePos::chunk`]).
/// Streaming's viewer chunk, the level-of-detail selection and the crack metric all go
/// through it (cases C07, C13).
///
/// # Errors
/// [`CoordError`] for NaN, infinities and positions outside the sample range.
pub fn world_to_chunk(p: [f64; 3], voxel_size: f64) -> Result<ChunkKey, CoordError> {
    Ok(world_to_sample(p, voxel_size)?.chunk().0)
}

/// The chunk of level `level` (`32 · 2^level` samples per side, level 0 being
/// [`world_to_chunk`]'s) holding a world position: [`world_to_sample`], then floor division
/// by `32 · 2^level`. The key of a level's chunk in that level's chunk units.
///
/// # Errors
/// [`CoordError`] for NaN, infinities and positions outside the sample range.
///
/// # Panics
/// If `level` is above 30.
pub fn world_to_level_chunk(
    p: [f64; 3],
    voxel_size: f64,
    level: u8,
) -> Result<[i32; 3], CoordError> {
    assert!(level <= 30, "level {level} above 30");
    let side = i64::from(CHUNK_CELLS) << level;
    let s = world_to_sample(p, voxel_size)?;
    // |sample| < 2³¹ and side ≥ 32: the quotient fits an i32.
    Ok(s.to_array().map(|v| i64::from(v).div_euclid(side) as i32))
}

/// The world position (metres) of a sample: `index · voxel_size`.
pub fn sample_to_world(p: SamplePos, voxel_size: f64) -> [f64; 3] {
    p.to_array().map(|i| f64::from(i) * voxel_size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_c07_chunk_of_sample() {
        let expect = [
            (-65, -3, 31),
            (-64, -2, 0),
            (-63, -2, 1),
            (-33, -2, 31),
            (-32, -1, 0),
            (-31, -1, 1),
            (-1, -1, 31),
            (0, 0, 0),
            (31, 0, 31),
            (32, 1, 0),
            (63, 1, 31),
            (64, 2, 0),
        ];
        for (x, chunk, local) in expect {
            let (c, l) = SamplePos::new(x, x, x).chunk();
            assert_eq!(
                (c, l),
                (ChunkKey::new(chunk, chunk, chunk), [local; 3]),
                "x = {x}"
            );
            let (b, bl) = SamplePos::new(x, 0, 0).brick();
            assert_eq!((b.x, bl[0]), (chunk, local), "brick of x = {x}");
        }
    }

    #[test]
    fn case_c07_snapping_at_small_voxels() {
        let vs = 0.03;
        let s = |w: f64| world_to_sample_floor(w, vs).unwrap();
        assert_eq!(s(0.96), 32);
        // A few ulps either side of 0.96 still snap to 32.
        let mut w = 0.96f64;
        for _ in 0..4 {
            w = f64::from_bits(w.to_bits() + 1);
            assert_eq!(s(w), 32);
        }
        let mut w = 0.96f64;
        for _ in 0..4 {
            w = f64::from_bits(w.to_bits() - 1);
            assert_eq!(s(w), 32);
        }
        assert_eq!(s(-0.96), -32);
        assert_eq!(s(1.92), 64);
        assert_eq!(s(0.959), 31);
        let (c, l) = SamplePos::new(s(0.96), 0, 0).chunk();
        assert_eq!((c.x, l[0]), (1, 0));
        let (c, l) = SamplePos::new(s(-0.96), 0, 0).chunk();
        assert_eq!((c.x, l[0]), (-1, 0));
        let (c, _) = SamplePos::new(s(1.92), 0, 0).chunk();
        assert_eq!(c.x, 2);
        let (c, l) = SamplePos::new(s(0.959), 0, 0).chunk();
        assert_eq!((c.x, l[0]), (0, 31));
        assert_eq!(world_to_sample_ceil(0.959, vs).unwrap(), 32);
        assert_eq!(world_to_sample_ceil(0.96, vs).unwrap(), 32);
    }

    #[test]
    fn case_c07_sample_world_round_trip() {
        for vs in [0.03, 0.25, 1.0, 0.1] {
            for i in -1_000_000..=1_000_000 {
                let p = SamplePos::new(i, 0, 0);
                let w = sample_to_world(p, vs);
                assert_eq!(world_to_sample(w, vs).unwrap().x, i, "vs {vs} i {i}");
            }
        }
    }

    #[test]
    fn world_to_chunk_is_sample_then_floor_division() {
        assert_eq!(
            world_to_chunk([10.559999999999999, -34.56, 0.96], 0.03).unwrap(),
            ChunkKey::new(11, -36, 1)
        );
        assert_eq!(world_to_chunk([137.6, 0.0, -0.1], 0.1).unwrap().x, 43);
        assert_eq!(world_to_chunk([0.0, 0.0, -0.1], 0.1).unwrap().z, -1);
        assert_eq!(
            world_to_level_chunk([-1.0, 63.9, 64.0], 1.0, 1).unwrap(),
            [-1, 0, 1]
        );
        assert_eq!(
            world_to_level_chunk([-4096.0, 4095.0, 0.0], 1.0, 7).unwrap(),
            [-1, 0, 0]
        );
        assert!(matches!(
            world_to_chunk([f64::NAN, 0.0, 0.0], 1.0),
            Err(CoordError::NotFinite { .. })
        ));
    }

    #[test]
    fn far_from_origin() {
        for w in [1e6, -1e6, 1e6 + 0.5, -1e6 - 0.5] {
            let s = world_to_sample_floor(w, 1.0).unwrap();
            assert_eq!(s, w.floor() as i32);
        }
        let (c, l) = SamplePos::new(-1_000_000, 0, 0).chunk();
        assert_eq!((c.x, l[0]), (-31_250, 0));
        let (c, l) = SamplePos::new(-1_000_001, 0, 0).chunk();
        assert_eq!((c.x, l[0]), (-31_251, 31));
    }

    #[test]
    fn bad_coordinates_are_errors() {
        assert!(matches!(
            world_to_sample_floor(f64::NAN, 1.0),
            Err(CoordError::NotFinite { .. })
        ));
        assert!(matches!(
            world_to_sample_floor(f64::INFINITY, 1.0),
            Err(CoordError::NotFinite { .. })
        ));
        assert!(matches!(
            world_to_sample_floor(1e12, 1.0),
            Err(CoordError::OutOfRange { .. })
        ));
    }

    #[test]
    fn brick_order_is_zyx() {
        let mut keys = vec![
            BrickKey::new(1, 0, 0),
            BrickKey::new(0, 1, 0),
            BrickKey::new(0, 0, 1),
            BrickKey::new(-1, 0, 0),
        ];
        keys.sort();
        assert_eq!(
            keys,
            vec![
                BrickKey::new(-1, 0, 0),
                BrickKey::new(1, 0, 0),
                BrickKey::new(0, 1, 0),
                BrickKey::new(0, 0, 1),
            ]
        );
    }
}
