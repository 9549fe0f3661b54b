//! Bricks: 32³ edited samples with their material ids, aligned with chunks, held quantised.
//!
//! A brick's values are indices on the field's quantisation grid ([`Quant`], 16-bit fixed
//! point over ±band) and its materials are bytes. At rest a brick is **packed**: one index
//! and one material when all of its samples are equal, else the 32³ little-endian `i16`
//! indices then the 32³ materials compressed with LZ4 (`lz4_flex`, block format). Most
//! samples of an edited brick sit at ±band, so a packed brick takes a few KiB instead of the
//! 96 KiB of its decoded samples.
//!
//! Reading a packed brick decodes it once into [`BrickSamples`], kept in a process-wide,
//! bounded LRU keyed by the brick's id ([`decoded_cache_stats`],
//! [`set_decoded_cache_capacity`]). Bricks are immutable: an edit makes a new brick with a
//! new id, so a cached decoding never goes stale. The bricks ops wrote last stay decoded
//! (**hot**) in the field, up to [`crate::Field::set_hot_capacity`] of them (27 by default),
//! so a stroke does not pack and unpack the same bricks op after op.

mod cache;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

pub use cache::{
    DEFAULT_CAPACITY as DECODED_CACHE_DEFAULT_CAPACITY, DecodedCacheStats, decoded_cache_stats,
    set_decoded_cache_capacity,
};

use crate::coords::{BRICK_SAMPLES, BRICK_VOLUME, BrickKey};
use crate::generator::Generator;
use crate::quant::{QMAX, Quant};

/// A material id (0 ..= 255), stored per sample beside the SDF. The generator writes 0.
pub type MaterialId = u8;

/// The material the generator gives every sample.
pub const GENERATOR_MATERIAL: MaterialId = 0;

/// Index of a local sample `[x, y, z]` (each in `[0, 32)`) in a brick's arrays.
#[inline]
pub fn brick_index(local: [i32; 3]) -> usize {
    debug_assert!(local.iter().all(|v| (0..BRICK_SAMPLES).contains(v)));
    (local[0] + BRICK_SAMPLES * (local[1] + BRICK_SAMPLES * local[2])) as usize
}

/// A brick's samples decoded: grid indices (see [`Quant`]) and material ids, 32³ each, x
/// fastest, then y, then z. 96 KiB.
#[derive(Clone, PartialEq, Eq)]
pub struct BrickSamples {
    pub(crate) q: Box<[i16]>,
    pub(crate) m: Box<[MaterialId]>,
}

impl std::fmt::Debug for BrickSamples {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrickSamples").finish_non_exhaustive()
    }
}

impl BrickSamples {
    fn uniform(q: i16, m: MaterialId) -> Self {
        Self {
            q: vec![q; BRICK_VOLUME].into_boxed_slice(),
            m: vec![m; BRICK_VOLUME].into_boxed_slice(),
        }
    }

    /// The grid indices, x fastest (32³).
    pub fn quantized(&self) -> &[i16] {
        &self.q
    }

    /// The material ids, x fastest (32³).
    pub fn materials(&self) -> &[MaterialId] {
        &self.m
    }

    /// The one index and material of every sample, if all are equal.
    pub fn as_uniform(&self) -> Option<(i16, MaterialId)> {
        let (q, m) = (self.q[0], self.m[0]);
        (self.q.iter().all(|&x| x == q) && self.m.iter().all(|&x| x == m)).then_some((q, m))
    }

    /// Bytes held on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.q.len() * 2 + self.m.len()
    }
}

/// Bytes of a brick's raw samples: 32³ `i16` then 32³ materials.
const RAW_BYTES: usize = BRICK_VOLUME * 3;

#[derive(Clone)]
enum Data {
    /// Every sample the same.
    Uniform(i16, MaterialId),
    /// LZ4 of the little-endian indices then the materials.
    Packed(Box<[u8]>),
    /// Decoded: made or written by a recent op, packed when the field's hot set moves on.
    Hot(Arc<BrickSamples>),
}

/// One brick of `32³` samples: SDF values on the field's quantisation grid (metres, in
/// `±band`) and material ids, x fastest, then y, then z. Immutable; cheap to share behind an
/// `Arc`. See the module docs for how it is held.
#[derive(Clone)]
pub struct Brick {
    id: u64,
    quant: Quant,
    data: Data,
}

impl std::fmt::Debug for Brick {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Brick")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Brick {
    /// Equal samples (indices and materials) on the same grid, however each is held.
    fn eq(&self, other: &Self) -> bool {
        if self.quant != other.quant {
            return false;
        }
        match (&self.data, &other.data) {
            (Data::Uniform(a, m), Data::Uniform(b, n)) => a == b && m == n,
            _ => self.samples() == other.samples(),
        }
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn fresh_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// How a reader sees a brick: one value, or its decoded samples.
#[derive(Clone)]
pub(crate) enum BrickRead {
    Uniform(f32, MaterialId),
    Samples(Quant, Arc<BrickSamples>),
}

impl BrickRead {
    #[inline]
    pub(crate) fn value(&self, local: [i32; 3]) -> f32 {
        match self {
            Self::Uniform(v, _) => *v,
            Self::Samples(g, s) => g.value(s.q[brick_index(local)]),
        }
    }

    #[inline]
    pub(crate) fn material(&self, local: [i32; 3]) -> MaterialId {
        match self {
            Self::Uniform(_, m) => *m,
            Self::Samples(_, s) => s.m[brick_index(local)],
        }
    }
}

impl Brick {
    fn new(quant: Quant, data: Data) -> Self {
        Self {
            id: fresh_id(),
            quant,
            data,
        }
    }

    /// The brick as the generator makes it, with [`GENERATOR_MATERIAL`] everywhere (held
    /// decoded: an op is about to write it).
    pub fn generate(generator: &Generator, key: BrickKey, voxel_size: f64, band: f64) -> Self {
        let mut values = vec![0.0f32; BRICK_VOLUME];
        let n = BRICK_SAMPLES as usize;
        generator.fill(key.min_sample(), [n, n, n], voxel_size, band, &mut values);
        Self::from_generator_values(&values, band).expect("generator values are on the grid")
    }

    /// A brick with the generator's material everywhere and `values` (32³, x fastest), held
    /// decoded: for a caller that already holds the generator's values of a brick, e.g. from
    /// filling a chunk grid, and saves generating them again. They must be
    /// [`Brick::generate`]'s values bit for bit, or the field stops being a replay of its ops.
    /// `None` if `values` does not hold 32³ samples or one is not on the grid of a band of
    /// `band` metres.
    pub fn from_generator_values(values: &[f32], band: f64) -> Option<Self> {
        if values.len() != BRICK_VOLUME {
            return None;
        }
        let quant = Quant::new(band);
        let mut q = vec![0i16; BRICK_VOLUME].into_boxed_slice();
        if !quant.exact_indices(values, &mut q) {
            return None;
        }
        let m = vec![GENERATOR_MATERIAL; BRICK_VOLUME].into_boxed_slice();
        Some(Self::new(quant, Data::Hot(Arc::new(BrickSamples { q, m }))))
    }

    /// A packed brick from its 32³ grid indices and 32³ material ids (x fastest), as a store
    /// saved them, for a band of `band` metres. `None` if either slice does not hold 32³
    /// entries or an index is beyond `±32767`.
    pub fn from_quantized(band: f64, q: &[i16], materials: &[MaterialId]) -> Option<Self> {
        let ok = q.len() == BRICK_VOLUME
            && materials.len() == BRICK_VOLUME
            && q.iter().all(|&x| x >= -QMAX);
        ok.then(|| {
            let samples = BrickSamples {
                q: q.into(),
                m: materials.into(),
            };
            Self::new(Quant::new(band), pack(&samples))
        })
    }

    /// A packed brick from 32³ values in metres and 32³ material ids (x fastest), each value
    /// rounded onto the grid of a band of `band` metres (clamped to ±band, a negative value
    /// never 0): for values from before the grid (a format-1 world). `None` if either slice
    /// does not hold 32³ entries or a value is not finite.
    pub fn from_parts(values: &[f32], materials: &[MaterialId], band: f64) -> Option<Self> {
        if values.len() != BRICK_VOLUME || !values.iter().all(|v| v.is_finite()) {
            return None;
        }
        let quant = Quant::new(band);
        let q: Vec<i16> = values.iter().map(|&v| quant.index(f64::from(v))).collect();
        Self::from_quantized(band, &q, materials)
    }

    /// A number unique to this brick in this process: a brick made by an edit (or a load) gets
    /// a new one, a packed copy of a hot brick keeps it. Equal ids mean equal samples.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The quantisation grid of the brick's values.
    pub fn quant(&self) -> Quant {
        self.quant
    }

    /// The one grid index and material of every sample, if all are equal.
    pub fn uniform(&self) -> Option<(i16, MaterialId)> {
        match &self.data {
            Data::Uniform(q, m) => Some((*q, *m)),
            Data::Packed(_) => None, // packing keeps uniform bricks as one value
            Data::Hot(s) => s.as_uniform(),
        }
    }

    /// The decoded samples: shared with the decoded-brick cache (a packed brick is decoded
    /// once, then read from the cache while it is there).
    pub fn samples(&self) -> Arc<BrickSamples> {
        match &self.data {
            Data::Uniform(q, m) => Arc::new(BrickSamples::uniform(*q, *m)),
            Data::Packed(bytes) => cache::get_or_decode(self.id, || unpack(bytes)),
            Data::Hot(s) => s.clone(),
        }
    }

    /// The brick as a reader sees it (decoded at most once).
    pub(crate) fn read(&self) -> BrickRead {
        match &self.data {
            Data::Uniform(q, m) => BrickRead::Uniform(self.quant.value(*q), *m),
            _ => BrickRead::Samples(self.quant, self.samples()),
        }
    }

    /// The SDF value at local sample `local` (each axis in `[0, 32)`), metres. A packed brick
    /// is looked up in the decoded cache on every call: read many samples with
    /// [`crate::Field::fill`] or [`Brick::samples`].
    pub fn value(&self, local: [i32; 3]) -> f32 {
        self.read().value(local)
    }

    /// The material at local sample `local` (see [`Brick::value`] on cost).
    pub fn material(&self, local: [i32; 3]) -> MaterialId {
        self.read().material(local)
    }

    /// All values in metres, x fastest (`32³`), decoded into a new vector.
    pub fn values(&self) -> Vec<f32> {
        match &self.data {
            Data::Uniform(q, _) => vec![self.quant.value(*q); BRICK_VOLUME],
            _ => self
                .samples()
                .q
                .iter()
                .map(|&q| self.quant.value(q))
                .collect(),
        }
    }

    /// All materials, x fastest (`32³`), decoded into a new vector.
    pub fn materials(&self) -> Vec<MaterialId> {
        match &self.data {
            Data::Uniform(_, m) => vec![*m; BRICK_VOLUME],
            _ => self.samples().m.to_vec(),
        }
    }

    /// Bytes this brick holds on the heap: 0 when uniform, its LZ4 bytes when packed, 96 KiB
    /// when hot (decoded). Decoded copies in the cache are not counted
    /// ([`decoded_cache_stats`]).
    pub fn heap_bytes(&self) -> usize {
        match &self.data {
            Data::Uniform(..) => 0,
            Data::Packed(b) => b.len(),
            Data::Hot(s) => s.heap_bytes(),
        }
    }

    /// Whether the brick is held decoded.
    pub(crate) fn is_hot(&self) -> bool {
        matches!(self.data, Data::Hot(_))
    }

    /// The same brick packed (a copy if it is packed or uniform already), with the same id;
    /// the decoded samples of a hot brick go to the decoded cache, as they are likely read
    /// again soon. About 0.1 ms for a surface brick.
    pub fn packed(&self) -> Self {
        match &self.data {
            Data::Hot(s) => {
                let data = pack(s);
                if matches!(data, Data::Packed(_)) {
                    cache::put(self.id, s.clone());
                }
                Self {
                    id: self.id,
                    quant: self.quant,
                    data,
                }
            }
            _ => self.clone(),
        }
    }

    /// A hot brick on this brick's grid holding `samples`, with a new id.
    pub(crate) fn hot(quant: Quant, samples: BrickSamples) -> Self {
        Self::new(quant, Data::Hot(Arc::new(samples)))
    }

    /// This brick's samples to write into: moved out when nothing else holds them, else
    /// copied.
    pub(crate) fn into_samples(self: Arc<Self>) -> BrickSamples {
        match Arc::try_unwrap(self) {
            Ok(Brick {
                data: Data::Hot(s), ..
            }) => Arc::unwrap_or_clone(s),
            Ok(b) => Arc::unwrap_or_clone(b.samples()),
            Err(shared) => (*shared.samples()).clone(),
        }
    }
}

/// Packs decoded samples: one value when uniform, else LZ4 of three byte planes — the high
/// bytes, then the low bytes, of each index's difference from its prediction (the sample
/// below it, y − 1; on the bottom row of a layer the one before it, x − 1; wrapping, zigzag
/// coded), then the materials. Differences of neighbouring SDF values are small, so the
/// high-byte plane is nearly constant and compresses well (≈ 14.5 KiB for a typical edited
/// brick against ≈ 18.9 KiB for LZ4 of the plain indices).
fn pack(s: &BrickSamples) -> Data {
    if let Some((q, m)) = s.as_uniform() {
        return Data::Uniform(q, m);
    }
    let n = BRICK_SAMPLES as usize;
    let mut d = vec![0i16; BRICK_VOLUME];
    for (dz, qz) in d.chunks_exact_mut(n * n).zip(s.q.chunks_exact(n * n)) {
        let mut prev = 0i16;
        for x in 0..n {
            dz[x] = qz[x].wrapping_sub(prev);
            prev = qz[x];
        }
        for r in (n..n * n).step_by(n) {
            for x in r..r + n {
                dz[x] = qz[x].wrapping_sub(qz[x - n]);
            }
        }
    }
    let mut raw = vec![0u8; RAW_BYTES];
    let (hi, rest) = raw.split_at_mut(BRICK_VOLUME);
    let (lo, mats) = rest.split_at_mut(BRICK_VOLUME);
    for ((h, l), &d) in hi.iter_mut().zip(lo.iter_mut()).zip(&d) {
        let z = ((d << 1) ^ (d >> 15)) as u16;
        *h = (z >> 8) as u8;
        *l = z as u8;
    }
    mats.copy_from_slice(&s.m);
    let mut out = vec![0u8; lz4_flex::block::get_maximum_output_size(RAW_BYTES)];
    let len =
        lz4_flex::block::compress_into(&raw, &mut out).expect("the buffer fits the worst case");
    out.truncate(len);
    Data::Packed(out.into_boxed_slice())
}

/// Unpacks what [`pack`] wrote (never bytes from outside the process).
fn unpack(bytes: &[u8]) -> BrickSamples {
    let mut raw = vec![0u8; RAW_BYTES];
    let len = lz4_flex::block::decompress_into(bytes, &mut raw).expect("a packed brick decodes");
    assert_eq!(len, RAW_BYTES, "a packed brick holds 32³ samples");
    let (hi, rest) = raw.split_at(BRICK_VOLUME);
    let (lo, mats) = rest.split_at(BRICK_VOLUME);
    let mut q: Box<[i16]> = hi
        .iter()
        .zip(lo)
        .map(|(&h, &l)| {
            let z = u16::from(h) << 8 | u16::from(l);
            ((z >> 1) as i16) ^ -((z & 1) as i16)
        })
        .collect();
    let n = BRICK_SAMPLES as usize;
    for qz in q.chunks_exact_mut(n * n) {
        for x in 1..n {
            qz[x] = qz[x].wrapping_add(qz[x - 1]);
        }
        for r in (n..n * n).step_by(n) {
            let (below, row) = qz[r - n..r + n].split_at_mut(n);
            for (v, &b) in row.iter_mut().zip(below.iter()) {
                *v = v.wrapping_add(b);
            }
        }
    }
    BrickSamples { q, m: mats.into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample_brick() -> BrickSamples {
        // A plane through the brick: most samples at ±band, a few layers in between.
        let g = Quant::new(2.0);
        let mut q = vec![0i16; BRICK_VOLUME];
        let mut m = vec![0u8; BRICK_VOLUME];
        for z in 0..32 {
            for y in 0..32 {
                for x in 0..32 {
                    let i = brick_index([x, y, z]);
                    q[i] = g.index(f64::from(y) - 15.3 + 0.01 * f64::from(x));
                    m[i] = u8::from(y < 10) * 3;
                }
            }
        }
        BrickSamples {
            q: q.into(),
            m: m.into(),
        }
    }

    #[test]
    fn packing_round_trips_and_is_small() {
        let s = sample_brick();
        let b = Brick::hot(Quant::new(2.0), s.clone());
        let p = b.packed();
        assert_eq!(p.id(), b.id());
        assert!(!p.is_hot());
        assert!(p.heap_bytes() < 16 << 10, "{} bytes", p.heap_bytes());
        assert_eq!(*p.samples(), s);
        assert_eq!(p, b);
        let Data::Packed(bytes) = &p.data else {
            panic!("not packed")
        };
        assert!(unpack(bytes) == s, "decoded without the cache");
        assert_eq!(
            p.values()[brick_index([0, 31, 0])],
            Quant::new(2.0).value(QMAX)
        );
    }

    #[test]
    fn any_samples_round_trip() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for k in 0..6 {
            // Noise over the whole range (the worst case), then smaller and smaller spans.
            let span = [65535u64, 4000, 300, 20, 2, 1][k];
            let q: Box<[i16]> = (0..BRICK_VOLUME)
                .map(|_| ((next() % span) as i64 - (span / 2) as i64).clamp(-32767, 32767) as i16)
                .collect();
            let m: Box<[u8]> = (0..BRICK_VOLUME).map(|_| (next() % 3) as u8).collect();
            let s = BrickSamples { q, m };
            let b = Brick::hot(Quant::new(1.5), s.clone()).packed();
            match &b.data {
                Data::Packed(bytes) => assert!(unpack(bytes) == s, "span {span}"),
                Data::Uniform(..) => assert_eq!(s.as_uniform(), b.uniform()),
                Data::Hot(_) => panic!("not packed"),
            }
        }
    }

    #[test]
    fn uniform_bricks_are_one_value() {
        let b = Brick::from_quantized(2.0, &[-QMAX; BRICK_VOLUME], &[4; BRICK_VOLUME]).unwrap();
        assert_eq!(b.heap_bytes(), 0);
        assert_eq!(b.uniform(), Some((-QMAX, 4)));
        assert_eq!(b.value([3, 4, 5]), Quant::new(2.0).value(-QMAX));
        assert_eq!(b.material([3, 4, 5]), 4);
        assert!(
            Brick::from_quantized(2.0, &[i16::MIN; BRICK_VOLUME], &[0; BRICK_VOLUME]).is_none()
        );
        assert!(Brick::from_quantized(2.0, &[0; 7], &[0; 7]).is_none());
    }

    #[test]
    fn writing_a_shared_brick_copies_it() {
        let a = Arc::new(Brick::hot(Quant::new(2.0), sample_brick()));
        let keep = a.clone();
        let mut s = a.into_samples();
        s.q[0] = 7;
        assert_ne!(keep.samples().q[0], 7, "the shared brick is unchanged");
        let alone = Arc::new(Brick::hot(Quant::new(2.0), sample_brick()));
        let ptr = alone.samples().q.as_ptr();
        assert_eq!(alone.into_samples().q.as_ptr(), ptr, "moved, not copied");
    }

    #[test]
    fn ids_are_unique_and_the_cache_is_bounded() {
        let a = Brick::hot(Quant::new(2.0), sample_brick()).packed();
        let b = Brick::hot(Quant::new(2.0), sample_brick()).packed();
        assert_ne!(a.id(), b.id());
        assert_eq!(a, b);
        let stats = decoded_cache_stats();
        assert!(stats.bricks <= stats.capacity);
    }
}
