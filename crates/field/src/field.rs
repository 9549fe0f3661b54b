//! The editable field: a generator with edit bricks laid over it, shared copy-on-write.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::brick::{Brick, BrickRead, GENERATOR_MATERIAL, MaterialId, brick_index};
use crate::coords::{
    BRICK_SAMPLES, BRICK_VOLUME, BrickKey, CHUNK_CELLS, ChunkKey, CoordError, SampleBox, SamplePos,
};
use crate::generator::{ColumnBounds, Generator};

/// Settings of a field (serde: the `field` object of a session). Every field has a default.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FieldSettings {
    /// Spacing of samples in metres, in `[0.001, 1000]`. Default 1.
    pub voxel_size: f64,
    /// Narrow band and edit margin in voxels, in `[1, 16]`: values are clamped to
    /// `±band_voxels · voxel_size` metres. Default 2.
    pub band_voxels: f64,
    /// Largest edit radius accepted, metres, in `(0, 4096]`. Default 64.
    pub max_edit_radius: f64,
    /// Most samples one op may visit (its reach box), in `[1, 2³¹]`. Default 2²⁴ (a ball of
    /// radius ≈ 126 voxels); bounds the time and memory of one op at small voxel sizes. Near
    /// the maximum it no longer does: an op of 2³¹ samples takes about 20 GB.
    pub max_edit_samples: u64,
}

impl Default for FieldSettings {
    fn default() -> Self {
        Self {
            voxel_size: 1.0,
            band_voxels: 2.0,
            max_edit_radius: 64.0,
            max_edit_samples: 1 << 24,
        }
    }
}

/// Field settings were rejected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// A setting is NaN, infinite or out of range.
    #[error("field setting `{name}` = {value} is out of range {range}")]
    OutOfRange {
        /// The setting's name.
        name: &'static str,
        /// Its value.
        value: f64,
        /// The allowed range.
        range: &'static str,
    },
}

impl FieldSettings {
    /// The narrow band (and edit margin) in metres.
    pub fn band(&self) -> f64 {
        self.band_voxels * self.voxel_size
    }

    /// Checks every setting.
    ///
    /// # Errors
    /// [`SettingsError::OutOfRange`] naming the first bad setting.
    pub fn validate(&self) -> Result<(), SettingsError> {
        let ok = |name, value: f64, good: bool, range| {
            if value.is_finite() && good {
                Ok(())
            } else {
                Err(SettingsError::OutOfRange { name, value, range })
            }
        };
        let (v, b, r) = (self.voxel_size, self.band_voxels, self.max_edit_radius);
        ok(
            "voxel_size",
            v,
            (0.001..=1000.0).contains(&v),
            "[0.001, 1000]",
        )?;
        ok("band_voxels", b, (1.0..=16.0).contains(&b), "[1, 16]")?;
        ok("max_edit_radius", r, r > 0.0 && r <= 4096.0, "(0, 4096]")?;
        let m = self.max_edit_samples as f64;
        ok(
            "max_edit_samples",
            m,
            (1.0..=2147483648.0).contains(&m),
            "[1, 2^31]",
        )
    }
}

/// The editable SDF: the generator where nothing was edited, bricks where something was.
///
/// Cloning is cheap (a few `Arc`s) and gives an immutable snapshot: a later edit of the
/// original copies what it changes and never touches what a snapshot reads.
#[derive(Debug, Clone)]
pub struct Field {
    pub(crate) settings: FieldSettings,
    pub(crate) generator: Arc<Generator>,
    pub(crate) bricks: Arc<BTreeMap<BrickKey, Arc<Brick>>>,
    /// Lowest and highest brick layer with a brick, per brick column `(x, z)`.
    pub(crate) columns: Arc<BTreeMap<(i32, i32), (i32, i32)>>,
    /// The bricks held decoded (hot), least recently written first.
    pub(crate) hot: Vec<BrickKey>,
    /// Most bricks held hot; the least recently written beyond it are packed.
    pub(crate) hot_capacity: usize,
    /// Changes at every write: a clone shares it until either side is written, and two
    /// fields share it only if they hold the same samples (a number no other field state has
    /// had, or the one a [`crate::PlannedEdit`] gives every field that commits it from the
    /// same revision). [`crate::PlannedEdit`] checks it.
    pub(crate) revision: u64,
    /// Which bricks differ from the generator, by key (see `generated.rs`). Shared by clones:
    /// they have the same generator and settings, and a brick id names its samples.
    pub(crate) differs: Arc<Mutex<BTreeMap<BrickKey, crate::generated::Decided>>>,
}

/// The next field revision, unique in the process.
pub(crate) fn next_revision() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Bricks held decoded (hot, 96 KiB each) by default: the last few ops' (a 3 × 3 × 3 block).
pub const DEFAULT_HOT_BRICKS: usize = 27;

/// Halo (samples) that [`Field::column_bounds`] covers on each side of a chunk column.
pub const COLUMN_HALO: i32 = 2;

impl Field {
    /// A field with no edits.
    ///
    /// # Errors
    /// [`SettingsError`] if a setting is out of range.
    pub fn new(settings: FieldSettings, generator: Arc<Generator>) -> Result<Self, SettingsError> {
        settings.validate()?;
        Ok(Self {
            settings,
            generator,
            bricks: Arc::default(),
            columns: Arc::default(),
            hot: Vec::new(),
            hot_capacity: DEFAULT_HOT_BRICKS,
            revision: next_revision(),
            differs: Arc::default(),
        })
    }

    /// The settings.
    pub fn settings(&self) -> &FieldSettings {
        &self.settings
    }

    /// The generator.
    pub fn generator(&self) -> &Generator {
        &self.generator
    }

    /// The generator, shared: fields built on one `Arc` share it ([`Arc::ptr_eq`]).
    pub fn generator_arc(&self) -> &Arc<Generator> {
        &self.generator
    }

    /// The field's value at world point `p` (metres; negative in solid, zero or positive in
    /// air, within `±band`), trilinearly interpolated between the 8 samples around it (the
    /// samples at or below `p` by [`crate::coords::world_to_sample`], and the next ones). A
    /// game asking "is this point solid?" asks `value_at(p)? < 0.0`, the one inside
    /// predicate (a value of exactly 0 is air, on the surface).
    ///
    /// # Errors
    /// [`CoordError`] for a non-finite point or one beyond the sample grid (`i32` indices).
    pub fn value_at(&self, p: [f64; 3]) -> Result<f32, CoordError> {
        let vs = self.settings.voxel_size;
        let lo = crate::coords::world_to_sample(p, vs)?.to_array();
        // The samples one step up on each axis; past `i32::MAX` the point is out of range.
        let mut hi = [0; 3];
        for a in 0..3 {
            hi[a] = lo[a].checked_add(1).ok_or(CoordError::OutOfRange {
                value: p[a],
                voxel_size: vs,
            })?;
        }
        let t = [0, 1, 2].map(|a| (p[a] / vs - f64::from(lo[a])).clamp(0.0, 1.0));
        let corner = |x: bool, y: bool, z: bool| {
            let pick = |a: usize, up: bool| if up { hi[a] } else { lo[a] };
            f64::from(self.sample(SamplePos::new(pick(0, x), pick(1, y), pick(2, z))))
        };
        let lerp = |a: f64, b: f64, t: f64| a + (b - a) * t;
        let along_x = |y: bool, z: bool| lerp(corner(false, y, z), corner(true, y, z), t[0]);
        let along_y = |z: bool| lerp(along_x(false, z), along_x(true, z), t[1]);
        Ok(lerp(along_y(false), along_y(true), t[2]) as f32)
    }

    /// The value at sample `p`, metres, in `±band`. Under a packed brick this looks the brick
    /// up in the decoded cache on every call: read many samples with [`Field::fill`].
    pub fn sample(&self, p: SamplePos) -> f32 {
        let (key, local) = p.brick();
        match self.bricks.get(&key) {
            Some(b) => b.value(local),
            None => self
                .generator
                .sample(p, self.settings.voxel_size, self.settings.band()),
        }
    }

    /// The material at sample `p`.
    pub fn material(&self, p: SamplePos) -> MaterialId {
        let (key, local) = p.brick();
        self.bricks
            .get(&key)
            .map_or(GENERATOR_MATERIAL, |b| b.material(local))
    }

    /// The brick at `key`, if an edit made one.
    pub fn brick(&self, key: BrickKey) -> Option<&Arc<Brick>> {
        self.bricks.get(&key)
    }

    /// Every brick, in ascending `(z, y, x)` order.
    pub fn bricks(&self) -> impl Iterator<Item = (BrickKey, &Arc<Brick>)> {
        self.bricks.iter().map(|(k, b)| (*k, b))
    }

    /// Every brick with `min ≤ key ≤ max` on every axis, in ascending `(z, y, x)` order
    /// (none if `min` exceeds `max` on an axis).
    ///
    /// Cost: for each brick layer `z` of the box, the bricks from `(min.x, min.y, z)` to
    /// `(max.x, max.y, z)` in `(z, y, x)` order are visited (whole rows of the box's `y`
    /// range); a box with more layers than the field has bricks is visited as one range.
    /// [`Field::bricks`] filtered by the box visits every brick.
    pub fn bricks_in(
        &self,
        min: BrickKey,
        max: BrickKey,
    ) -> impl Iterator<Item = (BrickKey, &Arc<Brick>)> {
        let empty = min.x > max.x || min.y > max.y || min.z > max.z;
        let layers = i64::from(max.z) - i64::from(min.z) + 1;
        let per_layer = !empty && layers <= self.bricks.len() as i64;
        let slab = (!empty && !per_layer).then(|| self.bricks.range(min..=max));
        let by_layer = per_layer.then(|| {
            (min.z..=max.z).flat_map(move |z| {
                let (a, b) = (
                    BrickKey::new(min.x, min.y, z),
                    BrickKey::new(max.x, max.y, z),
                );
                self.bricks.range(a..=b)
            })
        });
        slab.into_iter()
            .flatten()
            .chain(by_layer.into_iter().flatten())
            .filter(move |(k, _)| (min.x..=max.x).contains(&k.x) && (min.y..=max.y).contains(&k.y))
            .map(|(k, b)| (*k, b))
    }

    /// Number of bricks.
    pub fn brick_count(&self) -> usize {
        self.bricks.len()
    }

    /// Fills the box of `dims` samples starting at `min`, x fastest, then y, then z: the
    /// brick samples copied, the generator's
    /// computed only where there is no brick. Equal to [`Field::sample`] and
    /// [`Field::material`] sample for sample.
    ///
    /// # Panics
    /// If `values.len()` or `materials.len()` is not `dims[0] · dims[1] · dims[2]`, or the box
    /// reaches outside the `i32` sample range.
    pub fn fill(
        &self,
        min: SamplePos,
        dims: [usize; 3],
        values: &mut [f32],
        materials: &mut [MaterialId],
    ) {
        self.fill_with(min, dims, values, materials, &|_| None);
    }

    /// [`Field::fill`], reading the generator's values of an unedited brick from
    /// `generated(key)` where it has them (32³ values, x fastest, equal to the generator's bit
    /// for bit — a cache of earlier fills) instead of computing them.
    ///
    /// # Panics
    /// As [`Field::fill`], or if `generated` returns other than 32³ values.
    pub fn fill_with(
        &self,
        min: SamplePos,
        dims: [usize; 3],
        values: &mut [f32],
        materials: &mut [MaterialId],
        generated: &dyn Fn(BrickKey) -> Option<Arc<[f32]>>,
    ) {
        let n = dims
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .expect("dims overflow");
        assert_eq!(values.len(), n, "values length");
        assert_eq!(materials.len(), n, "materials length");
        if n == 0 {
            return;
        }
        let (vs, band) = (self.settings.voxel_size, self.settings.band());
        let region = SampleBox::from_min_dims(min, dims);
        // Brick by brick: a brick's samples are copied, the generator fills the rest.
        for_bricks_in(region, |key, sub| {
            // Decoded once per brick per call.
            let brick = self.bricks.get(&key).map(|b| b.read());
            let cached = match brick {
                Some(_) => None,
                None => generated(key),
            };
            if let Some(c) = &cached {
                assert_eq!(c.len(), BRICK_VOLUME, "a generated brick holds 32³ values");
            } else if brick.is_none() {
                self.generator.fill_part(min, dims, sub, vs, band, values);
            }
            let b0 = key.min_sample();
            let (a, b) = ((sub.min.x - min.x) as usize, (sub.max.x - min.x) as usize);
            for z in sub.min.z..=sub.max.z {
                for y in sub.min.y..=sub.max.y {
                    let row = dims[0] * ((y - min.y) as usize + dims[1] * (z - min.z) as usize);
                    let (dst, len) = (row + a..=row + b, b - a + 1);
                    match &brick {
                        Some(BrickRead::Uniform(v, m)) => {
                            values[dst.clone()].fill(*v);
                            materials[dst].fill(*m);
                        }
                        Some(BrickRead::Samples(g, s)) => {
                            let src = brick_index([sub.min.x - b0.x, y - b0.y, z - b0.z]);
                            for (v, &q) in values[dst.clone()].iter_mut().zip(&s.q[src..src + len])
                            {
                                *v = g.value(q);
                            }
                            materials[dst].copy_from_slice(&s.m[src..src + len]);
                        }
                        None => {
                            if let Some(c) = &cached {
                                let src = brick_index([sub.min.x - b0.x, y - b0.y, z - b0.z]);
                                values[dst.clone()].copy_from_slice(&c[src..src + len]);
                            }
                            materials[dst].fill(GENERATOR_MATERIAL)
                        }
                    }
                }
            }
        });
    }

    /// Fills a chunk's grid: samples `32c − halo ..= 32c + 32 + halo` per axis
    /// (`33 + 2·halo` per axis), x fastest. Returns the grid's lowest sample.
    ///
    /// # Panics
    /// If the slices do not hold `(33 + 2·halo)³` samples.
    pub fn fill_chunk(
        &self,
        chunk: ChunkKey,
        halo: u32,
        values: &mut [f32],
        materials: &mut [MaterialId],
    ) -> SamplePos {
        self.fill_chunk_with(chunk, halo, values, materials, &|_| None)
    }

    /// [`Field::fill_chunk`] with [`Field::fill_with`]'s cache of generated bricks.
    ///
    /// # Panics
    /// As both.
    pub fn fill_chunk_with(
        &self,
        chunk: ChunkKey,
        halo: u32,
        values: &mut [f32],
        materials: &mut [MaterialId],
        generated: &dyn Fn(BrickKey) -> Option<Arc<[f32]>>,
    ) -> SamplePos {
        let h = halo as i32;
        let m = chunk.min_sample();
        let min = SamplePos::new(m.x - h, m.y - h, m.z - h);
        let n = (CHUNK_CELLS + 1 + 2 * h) as usize;
        self.fill_with(min, [n; 3], values, materials, generated);
        min
    }

    /// Lowest and highest brick layer (`y` brick index) holding a brick in brick column
    /// `(x, z)`, if any: a tower built into the sky is streamed from this.
    pub fn edited_layers(&self, x: i32, z: i32) -> Option<(i32, i32)> {
        self.columns.get(&(x, z)).copied()
    }

    /// Where chunk column `(cx, cz)` (with [`COLUMN_HALO`] samples around it) is certainly
    /// air or solid: the generator's bounds widened by every brick the column's samples read.
    pub fn column_bounds(&self, cx: i32, cz: i32) -> ColumnBounds {
        let vs = self.settings.voxel_size;
        let lo = |c: i32| f64::from(c * CHUNK_CELLS - COLUMN_HALO) * vs;
        let hi = |c: i32| f64::from(c * CHUNK_CELLS + CHUNK_CELLS + COLUMN_HALO) * vs;
        let mut b =
            self.generator
                .column_bounds([lo(cx), hi(cx)], [lo(cz), hi(cz)], self.settings.band());
        for bz in cz - 1..=cz + 1 {
            for bx in cx - 1..=cx + 1 {
                if let Some((l, h)) = self.edited_layers(bx, bz) {
                    b.solid_below = b.solid_below.min(f64::from(l * BRICK_SAMPLES) * vs);
                    b.air_above = b
                        .air_above
                        .max(f64::from(h * BRICK_SAMPLES + (BRICK_SAMPLES - 1)) * vs);
                }
            }
        }
        b
    }

    /// Puts `bricks` into the field, replacing any at the same keys, packed: a store restoring
    /// a bake (the bricks must come from this field's generator and log, or the field stops
    /// being a replay of its ops).
    ///
    /// # Panics
    /// If a brick is on another quantisation grid than this field's band.
    pub fn insert_bricks(&mut self, bricks: impl IntoIterator<Item = (BrickKey, Brick)>) {
        let quant = crate::Quant::new(self.settings.band());
        self.revision = next_revision();
        let map = Arc::make_mut(&mut self.bricks);
        let cols = Arc::make_mut(&mut self.columns);
        let hot = &mut self.hot;
        for (key, brick) in bricks {
            hot.retain(|k| *k != key);
            assert_eq!(brick.quant(), quant, "a brick of another band");
            widen_column(cols, key);
            let brick = if brick.is_hot() {
                brick.packed()
            } else {
                brick
            };
            map.insert(key, Arc::new(brick));
        }
    }

    /// Bytes held by bricks on the heap: packed bricks' bytes, plus 96 KiB for each brick held
    /// hot (at most [`Field::hot_capacity`]). Decoded copies in the process-wide cache are not
    /// counted ([`crate::decoded_cache_stats`]).
    pub fn brick_bytes(&self) -> usize {
        self.bricks.values().map(|b| b.heap_bytes()).sum()
    }

    /// How many bricks ops leave decoded (hot, 96 KiB each), least recently written packed
    /// first (default [`DEFAULT_HOT_BRICKS`]). A stroke writes the same bricks op after op
    /// without packing them in between; a replay of many ops over many bricks (loading a
    /// world) runs faster with a larger working set, then packs. Lowering it packs the
    /// excess now. Values read never depend on it.
    pub fn set_hot_capacity(&mut self, bricks: usize) {
        self.hot_capacity = bricks;
        self.pack_beyond(bricks);
    }

    /// See [`Field::set_hot_capacity`].
    pub fn hot_capacity(&self) -> usize {
        self.hot_capacity
    }

    /// Packs the least recently written hot bricks until at most `keep` are hot.
    pub(crate) fn pack_beyond(&mut self, keep: usize) {
        self.pack_hot_with(keep, |bricks| bricks.iter().map(|b| b.packed()).collect());
    }

    /// Packs the least recently written hot bricks until at most `keep` are hot, with
    /// `pack`, which must return [`Brick::packed`] of each brick it is given, in order — on
    /// several threads, say (a world packs after an edit's jobs are queued, off the edit's
    /// path, with [`Field::set_hot_capacity`] raised so that ops do not pack).
    ///
    /// # Panics
    /// If `pack` returns another number of bricks, or a brick with another id.
    pub fn pack_hot_with(&mut self, keep: usize, pack: impl FnOnce(&[Arc<Brick>]) -> Vec<Brick>) {
        if self.hot.len() <= keep {
            return;
        }
        let cold: Vec<(BrickKey, Arc<Brick>)> = self
            .hot
            .drain(..self.hot.len() - keep)
            .filter_map(|k| {
                self.bricks
                    .get(&k)
                    .filter(|b| b.is_hot())
                    .map(|b| (k, b.clone()))
            })
            .collect();
        if cold.is_empty() {
            return;
        }
        let arcs: Vec<Arc<Brick>> = cold.iter().map(|(_, b)| b.clone()).collect();
        let packed = pack(&arcs);
        assert_eq!(packed.len(), cold.len(), "one packed brick per hot brick");
        drop(arcs);
        let map = Arc::make_mut(&mut self.bricks);
        for ((key, old), new) in cold.into_iter().zip(packed) {
            assert_eq!(new.id(), old.id(), "a packed brick keeps its id");
            map.insert(key, Arc::new(new));
        }
    }

    /// Packs every hot brick, so the field holds only packed bricks; reads see the same
    /// values. An idle editor, a loader after its replay or a benchmark measuring memory
    /// calls this.
    pub fn pack_bricks(&mut self) {
        let hot = std::mem::take(&mut self.hot);
        if hot.is_empty() {
            return;
        }
        let map = Arc::make_mut(&mut self.bricks);
        for key in hot {
            if let Some(b) = map.get_mut(&key)
                && b.is_hot()
            {
                *b = Arc::new(b.packed());
            }
        }
    }
}

/// Reads single samples, decoding each brick once while consecutive reads stay in it (the
/// raycast and undo read sample by sample).
pub(crate) struct SampleReader<'a> {
    field: &'a Field,
    last: Option<(BrickKey, BrickRead)>,
}

impl<'a> SampleReader<'a> {
    pub(crate) fn new(field: &'a Field) -> Self {
        Self { field, last: None }
    }

    fn brick(&mut self, key: BrickKey) -> Option<&BrickRead> {
        if self.last.as_ref().is_none_or(|(k, _)| *k != key) {
            let read = self.field.bricks.get(&key)?.read();
            self.last = Some((key, read));
        }
        self.last.as_ref().map(|(_, r)| r)
    }

    /// [`Field::sample`].
    pub(crate) fn sample(&mut self, p: SamplePos) -> f32 {
        let (key, local) = p.brick();
        match self.brick(key) {
            Some(r) => r.value(local),
            None => {
                let s = &self.field.settings;
                self.field.generator.sample(p, s.voxel_size, s.band())
            }
        }
    }

    /// [`Field::material`].
    pub(crate) fn material(&mut self, p: SamplePos) -> MaterialId {
        let (key, local) = p.brick();
        self.brick(key)
            .map_or(GENERATOR_MATERIAL, |r| r.material(local))
    }
}

/// Widens the layer range of `key`'s brick column in `columns` (lowest and highest brick
/// layer holding a brick, per column `(x, z)`) to take in `key`.
pub(crate) fn widen_column(columns: &mut BTreeMap<(i32, i32), (i32, i32)>, key: BrickKey) {
    let e = columns.entry((key.x, key.z)).or_insert((key.y, key.y));
    *e = (e.0.min(key.y), e.1.max(key.y));
}

/// Calls `f(key, sub_box)` for every brick overlapping `region`, in ascending `(z, y, x)`
/// order, with the part of `region` inside that brick.
pub(crate) fn for_bricks_in(region: SampleBox, mut f: impl FnMut(BrickKey, SampleBox)) {
    let (kmin, _) = region.min.brick();
    let (kmax, _) = region.max.brick();
    for bz in kmin.z..=kmax.z {
        for by in kmin.y..=kmax.y {
            for bx in kmin.x..=kmax.x {
                let key = BrickKey::new(bx, by, bz);
                let b0 = key.min_sample();
                let sub = SampleBox {
                    min: SamplePos::new(
                        region.min.x.max(b0.x),
                        region.min.y.max(b0.y),
                        region.min.z.max(b0.z),
                    ),
                    max: SamplePos::new(
                        region.max.x.min(b0.x + (BRICK_SAMPLES - 1)),
                        region.max.y.min(b0.y + (BRICK_SAMPLES - 1)),
                        region.max.z.min(b0.z + (BRICK_SAMPLES - 1)),
                    ),
                };
                f(key, sub);
            }
        }
    }
}
