//! Bricks: 32³ edited samples with their material ids, aligned with chunks.

use crate::coords::{BRICK_SAMPLES, BRICK_VOLUME, BrickKey};
use crate::generator::Generator;

/// A material id (0 ..= 255), stored per sample beside the SDF. The generator writes 0.
pub type MaterialId = u8;

/// The material the generator gives every sample.
pub const GENERATOR_MATERIAL: MaterialId = 0;

/// One brick of `32³` samples: SDF values (metres, clamped to `±band`) and material ids,
/// x fastest, then y, then z.
///
/// The storage is private so that it can become quantised later without changing callers.
#[derive(Clone, PartialEq)]
pub struct Brick {
    values: Box<[f32]>,
    materials: Box<[MaterialId]>,
}

impl std::fmt::Debug for Brick {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Brick").finish_non_exhaustive()
    }
}

/// Index of a local sample `[x, y, z]` (each in `[0, 32)`) in a brick's arrays.
#[inline]
pub fn brick_index(local: [i32; 3]) -> usize {
    debug_assert!(local.iter().all(|v| (0..BRICK_SAMPLES).contains(v)));
    (local[0] + BRICK_SAMPLES * (local[1] + BRICK_SAMPLES * local[2])) as usize
}

impl Brick {
    /// The brick as the generator makes it, with [`GENERATOR_MATERIAL`] everywhere.
    pub fn generate(generator: &Generator, key: BrickKey, voxel_size: f64, band: f64) -> Self {
        let mut values = vec![0.0f32; BRICK_VOLUME].into_boxed_slice();
        let n = BRICK_SAMPLES as usize;
        generator.fill(key.min_sample(), [n, n, n], voxel_size, band, &mut values);
        Self {
            values,
            materials: vec![GENERATOR_MATERIAL; BRICK_VOLUME].into_boxed_slice(),
        }
    }

    /// A brick with the generator's material everywhere and `values` (32³, x fastest): for a
    /// caller that already holds the generator's values of a brick, e.g. from filling a chunk
    /// grid, and saves generating them again. They must be [`Brick::generate`]'s values bit
    /// for bit, or the field stops being a replay of its ops. `None` if `values` does not hold
    /// 32³ samples.
    pub fn from_generator_values(values: &[f32]) -> Option<Self> {
        (values.len() == BRICK_VOLUME).then(|| Self {
            values: values.into(),
            materials: vec![GENERATOR_MATERIAL; BRICK_VOLUME].into_boxed_slice(),
        })
    }

    /// A brick from its 32³ values and 32³ material ids (x fastest), as a store saved them.
    /// `None` if either slice does not hold 32³ entries or a value is not finite.
    pub fn from_parts(values: &[f32], materials: &[MaterialId]) -> Option<Self> {
        (values.len() == BRICK_VOLUME
            && materials.len() == BRICK_VOLUME
            && values.iter().all(|v| v.is_finite()))
        .then(|| Self {
            values: values.into(),
            materials: materials.into(),
        })
    }

    /// The SDF value at local sample `local` (each axis in `[0, 32)`), metres.
    #[inline]
    pub fn value(&self, local: [i32; 3]) -> f32 {
        self.values[brick_index(local)]
    }

    /// The material at local sample `local`.
    #[inline]
    pub fn material(&self, local: [i32; 3]) -> MaterialId {
        self.materials[brick_index(local)]
    }

    /// All values, x fastest (`32³`).
    pub fn values(&self) -> &[f32] {
        &self.values
    }

    /// All materials, x fastest (`32³`).
    pub fn materials(&self) -> &[MaterialId] {
        &self.materials
    }

    /// Writes sample `index` (see [`brick_index`]).
    #[inline]
    pub(crate) fn set(&mut self, index: usize, value: f32, material: MaterialId) {
        self.values[index] = value;
        self.materials[index] = material;
    }

    /// Bytes this brick holds on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.values.len() * 4 + self.materials.len()
    }
}
