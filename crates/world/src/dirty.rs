//! Which chunks read a changed sample (docs/architecture.md, "One edit, end to end", step 5; case
//! C04).

use std::collections::BTreeSet;

use loam_field::{CHUNK_CELLS, ChunkKey, SampleBox};
use loam_mesh::CHUNK_HALO;

/// Adds to `out` every chunk whose grid — its cells' corners `32c ..= 32c + 32` plus
/// [`CHUNK_HALO`] samples on each side — holds a sample of `changed`. A sample on a chunk face
/// is read by both chunks, one on a corner shared by 8 chunks by all 8, and the halo makes
/// the chunks next to those read it too.
pub fn chunks_reading(changed: &SampleBox, out: &mut BTreeSet<ChunkKey>) {
    let (n, h) = (CHUNK_CELLS, CHUNK_HALO as i32);
    // Chunk c reads samples 32c − h ..= 32c + 32 + h, so it reads some sample of lo..=hi
    // exactly when 32c − h ≤ hi and 32c + 32 + h ≥ lo.
    let (n, h) = (i64::from(n), i64::from(h));
    let range = |lo: i32, hi: i32| {
        let first = -((n + h - i64::from(lo)).div_euclid(n)); // ceil((lo − 32 − h) / 32)
        first as i32..=(i64::from(hi) + h).div_euclid(n) as i32
    };
    for z in range(changed.min.z, changed.max.z) {
        for y in range(changed.min.y, changed.max.y) {
            for x in range(changed.min.x, changed.max.x) {
                out.insert(ChunkKey::new(x, y, z));
            }
        }
    }
}

/// The box of samples chunk `key`'s grid reads (its cells' corners and the halo).
pub fn chunk_grid_box(key: ChunkKey) -> SampleBox {
    let (m, h) = (key.min_sample(), CHUNK_HALO as i32);
    SampleBox {
        min: loam_field::SamplePos::new(m.x - h, m.y - h, m.z - h),
        max: loam_field::SamplePos::new(
            m.x + CHUNK_CELLS + h,
            m.y + CHUNK_CELLS + h,
            m.z + CHUNK_CELLS + h,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loam_field::SamplePos;

    fn reading(p: SamplePos) -> Vec<ChunkKey> {
        let mut s = BTreeSet::new();
        chunks_reading(&SampleBox::point(p), &mut s);
        s.into_iter().collect()
    }

    /// Brute force: every chunk near `p` whose grid box contains it.
    fn brute(p: SamplePos) -> Vec<ChunkKey> {
        let (c, _) = p.chunk();
        let mut v = Vec::new();
        for z in c.z - 2..=c.z + 2 {
            for y in c.y - 2..=c.y + 2 {
                for x in c.x - 2..=c.x + 2 {
                    let k = ChunkKey::new(x, y, z);
                    if chunk_grid_box(k).contains(p) {
                        v.push(k);
                    }
                }
            }
        }
        v.sort();
        v
    }

    #[test]
    fn case_c04_border_samples_reach_every_reader() {
        // Sample 32 is chunk 1's first corner and chunk 0's last corner.
        assert_eq!(
            reading(SamplePos::new(32, 5, 5)),
            vec![ChunkKey::new(0, 0, 0), ChunkKey::new(1, 0, 0)]
        );
        // Sample 31 is chunk 0's and, through the halo (32 − 1), chunk 1's.
        assert_eq!(
            reading(SamplePos::new(31, 5, 5)),
            vec![ChunkKey::new(0, 0, 0), ChunkKey::new(1, 0, 0)]
        );
        // The corners of case C04 are read by 8 chunks each.
        assert_eq!(reading(SamplePos::new(31, 31, 31)).len(), 8);
        assert_eq!(reading(SamplePos::new(32, 32, 32)).len(), 8);
        assert_eq!(
            reading(SamplePos::new(16, 16, 16)),
            vec![ChunkKey::new(0, 0, 0)]
        );
    }

    #[test]
    fn matches_brute_force_around_borders_and_negative_coordinates() {
        let coords = [
            -66, -65, -64, -63, -34, -33, -32, -31, -1, 0, 1, 30, 31, 32, 33, 34, 63, 64, 65,
        ];
        for &x in &coords {
            for &y in &[-33, -1, 0, 31, 32] {
                let p = SamplePos::new(x, y, x / 2);
                assert_eq!(reading(p), brute(p), "{p:?}");
            }
        }
        // A box: the union of its corners' readers and everything between.
        let b = SampleBox {
            min: SamplePos::new(-40, -1, 30),
            max: SamplePos::new(31, 33, 31),
        };
        let mut s = BTreeSet::new();
        chunks_reading(&b, &mut s);
        let xs: BTreeSet<i32> = s.iter().map(|k| k.x).collect();
        let ys: BTreeSet<i32> = s.iter().map(|k| k.y).collect();
        let zs: BTreeSet<i32> = s.iter().map(|k| k.z).collect();
        assert_eq!(xs.into_iter().collect::<Vec<_>>(), vec![-2, -1, 0, 1]);
        assert_eq!(ys.into_iter().collect::<Vec<_>>(), vec![-1, 0, 1]);
        assert_eq!(zs.into_iter().collect::<Vec<_>>(), vec![0, 1]);
    }
}
