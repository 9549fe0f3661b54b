//! A bounded cache of the generator's values per brick, for one thread that fills the same
//! places again and again ([`Field::fill_cached`]): a server's ground worker rebuilds the
//! colliders of the chunks around falling pieces and searches around digs for lumps, and
//! most of each fill is the generator's noise where nothing was edited (about half of that
//! worker's time at 64 clients × 313 ops/s, BENCHMARKS.md).
//!
//! ```text
//!  fill_cached(region) ──▶ each brick the region meets:
//!     edited (the field has a brick) ──────────────▶ copied from the brick, as in fill
//!     cached ──────────────────────────────────────▶ copied from the cache
//!     a quarter of its columns or more, not cached ─▶ generated whole (32³), kept, copied
//!     a thin part (fewer columns) ─────────────────▶ generated in place, not kept
//! ```
//!
//! The generator's cost is mostly its ground height, computed once per column (x, z), so a
//! brick generated whole costs about as much as any part of it that spans most of its
//! columns; a sliver along a side (a chunk's halo) is cheaper in place.
//!
//! Values are the generator's, bit for bit (the same [`Generator::fill`] per sample), so a
//! fill through the cache equals [`Field::fill`]. The cache serves fields of one generator
//! and one voxel size and band: a fill of another field empties it first. Least recently
//! used bricks are evicted beyond the capacity.

use std::sync::Arc;

use crate::brick::MaterialId;
use crate::coords::{BRICK_SAMPLES, BRICK_VOLUME, BrickKey, SampleBox, SamplePos};
use crate::field::{Field, for_bricks_in};
use crate::generator::Generator;
use crate::lru::Lru;

/// Columns (of a brick's 32 × 32) a fill must cover for the brick to be generated whole
/// and kept.
const MIN_COLUMNS: u64 = (BRICK_SAMPLES * BRICK_SAMPLES / 4) as u64;

/// The generator's values of up to `capacity` bricks (32³ `f32`, 128 KiB each), least
/// recently used evicted first; see the module docs. Owned by one thread (`&mut` to fill).
#[derive(Debug)]
pub struct GeneratorBrickCache {
    /// The generator, voxel size and band (bits) the values are of.
    source: Option<(Arc<Generator>, u64, u64)>,
    bricks: Lru<BrickKey, Arc<[f32]>>,
    hits: u64,
    misses: u64,
}

impl GeneratorBrickCache {
    /// A cache of at most `capacity` bricks (0: nothing is kept, and
    /// [`Field::fill_cached`] is [`Field::fill`]).
    pub fn new(capacity: usize) -> Self {
        Self {
            source: None,
            bricks: Lru::new(capacity),
            hits: 0,
            misses: 0,
        }
    }

    /// Most bricks kept.
    pub fn capacity(&self) -> usize {
        self.bricks.capacity()
    }

    /// Bricks kept now.
    pub fn len(&self) -> usize {
        self.bricks.len()
    }

    /// Whether no brick is kept.
    pub fn is_empty(&self) -> bool {
        self.bricks.len() == 0
    }

    /// Unedited bricks found in the cache, and those generated whole and kept, since it was
    /// made.
    pub fn hits_and_misses(&self) -> (u64, u64) {
        (self.hits, self.misses)
    }

    /// Empties the cache unless it holds values of `field`'s generator and settings.
    fn serve(&mut self, field: &Field) {
        let s = field.settings();
        let same = self.source.as_ref().is_some_and(|(g, v, b)| {
            Arc::ptr_eq(g, field.generator_arc())
                && *v == s.voxel_size.to_bits()
                && *b == s.band().to_bits()
        });
        if !same {
            self.bricks.clear();
            self.source = Some((
                field.generator_arc().clone(),
                s.voxel_size.to_bits(),
                s.band().to_bits(),
            ));
        }
    }
}

impl Field {
    /// [`Field::fill`] through `cache`: the generator's values of unedited bricks are read
    /// from it where it has them, and bricks the box covers a quarter of the columns of or
    /// more are generated whole and kept (see [`GeneratorBrickCache`]). Equal to
    /// [`Field::fill`] bit for bit.
    ///
    /// # Panics
    /// As [`Field::fill`].
    pub fn fill_cached(
        &self,
        min: SamplePos,
        dims: [usize; 3],
        values: &mut [f32],
        materials: &mut [MaterialId],
        cache: &mut GeneratorBrickCache,
    ) {
        if cache.capacity() == 0 || dims.contains(&0) {
            self.fill(min, dims, values, materials);
            return;
        }
        cache.serve(self);
        let (vs, band) = (self.settings.voxel_size, self.settings.band());
        let n = BRICK_SAMPLES as usize;
        for_bricks_in(SampleBox::from_min_dims(min, dims), |key, part| {
            if self.bricks.contains_key(&key) {
                return;
            }
            if cache.bricks.get(&key).is_some() {
                cache.hits += 1;
                return;
            }
            let columns =
                (part.max.x - part.min.x + 1) as u64 * (part.max.z - part.min.z + 1) as u64;
            if columns < MIN_COLUMNS {
                return;
            }
            let mut whole = vec![0.0f32; BRICK_VOLUME];
            self.generator
                .fill(key.min_sample(), [n; 3], vs, band, &mut whole);
            cache.misses += 1;
            cache.bricks.insert(key, whole.into());
        });
        let cache = &*cache;
        self.fill_with(min, dims, values, materials, &|k| {
            cache.bricks.peek(&k).cloned()
        });
    }
}
