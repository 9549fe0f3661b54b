//! Chunks at a level of detail: level `k` has the same 32³ cells as level 0, each `2^k` level-0
//! voxels wide (Lengyel 2010, "Voxel-Based Terrain for Real-Time Virtual Simulations", §4).

use loam_field::{CHUNK_CELLS, ChunkKey, SamplePos};

/// The most levels of detail a world may have (level 0 to `MAX_LEVELS − 1`): a level-11 chunk
/// is 65 536 samples wide.
pub const MAX_LEVELS: u8 = 12;

/// A chunk at level of detail `level`: it covers level-0 samples
/// `32·2^level · [x, y, z] ..= 32·2^level · ([x, y, z] + 1)` with 32³ cells of `2^level`
/// voxels; `x, y, z` are in level-`level` chunk units. Level 0 is an ordinary [`ChunkKey`].
/// Keys order by level, then z, y, x.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LodKey {
    /// Level of detail, 0 = finest.
    pub level: u8,
    /// Index along z, in level-`level` chunks.
    pub z: i32,
    /// Index along y.
    pub y: i32,
    /// Index along x.
    pub x: i32,
}

impl LodKey {
    /// The chunk at `level` with indices `[x, y, z]` (level-`level` chunk units).
    pub const fn new(level: u8, [x, y, z]: [i32; 3]) -> Self {
        Self { level, z, y, x }
    }

    /// The level-0 chunk `key`.
    pub const fn level0(key: ChunkKey) -> Self {
        Self::new(0, [key.x, key.y, key.z])
    }

    /// Indices `[x, y, z]`.
    pub const fn xyz(self) -> [i32; 3] {
        [self.x, self.y, self.z]
    }

    /// The indices as a [`ChunkKey`] (in this level's chunk units; the level-0 chunk for level 0).
    pub const fn chunk(self) -> ChunkKey {
        ChunkKey::new(self.x, self.y, self.z)
    }

    /// Level-0 samples per cell: `2^level`.
    pub const fn stride(self) -> i32 {
        1 << self.level
    }

    /// Width in level-0 samples: `32 · 2^level`.
    pub const fn size(self) -> i64 {
        (CHUNK_CELLS as i64) << self.level
    }

    /// The lowest corner, level-0 samples (`size · [x, y, z]`).
    ///
    /// # Panics
    /// If the corner lies outside the `i32` sample range.
    pub fn min_sample(self) -> SamplePos {
        let m = self.xyz().map(|c| {
            i32::try_from(i64::from(c) * self.size()).expect("chunk outside the sample range")
        });
        SamplePos::new(m[0], m[1], m[2])
    }

    /// The lowest corner in metres for voxels of `voxel_size` metres.
    pub fn origin(self, voxel_size: f64) -> [f64; 3] {
        self.xyz()
            .map(|c| (i64::from(c) * self.size()) as f64 * voxel_size)
    }

    /// Cell width in metres for level-0 voxels of `voxel_size` metres: `2^level · voxel_size`.
    pub fn cell_size(self, voxel_size: f64) -> f64 {
        f64::from(self.stride()) * voxel_size
    }

    /// The chunk one level coarser that holds this one (`None` at `MAX_LEVELS − 1`).
    pub fn parent(self) -> Option<Self> {
        (self.level + 1 < MAX_LEVELS)
            .then(|| Self::new(self.level + 1, self.xyz().map(|c| c.div_euclid(2))))
    }

    /// The chunk at `level` (≥ this one's) that holds this one.
    pub fn ancestor(self, level: u8) -> Self {
        let s = level - self.level;
        Self::new(level, self.xyz().map(|c| c >> s))
    }

    /// The eight chunks one level finer that tile this one, ascending (`None` at level 0).
    pub fn children(self) -> Option<[Self; 8]> {
        let l = self.level.checked_sub(1)?;
        let [x, y, z] = self.xyz().map(|c| 2 * c);
        Some(std::array::from_fn(|i| {
            let i = i as i32;
            Self::new(l, [x + (i & 1), y + ((i >> 1) & 1), z + (i >> 2)])
        }))
    }

    /// The chunk at the same level offset by `d` chunks.
    pub fn offset(self, d: [i32; 3]) -> Self {
        let p = self.xyz();
        Self::new(self.level, [0, 1, 2].map(|a| p[a] + d[a]))
    }

    /// Euclidean distance in metres from `p` (metres) to the chunk's box (0 inside).
    pub fn distance(self, p: [f64; 3], voxel_size: f64) -> f64 {
        let o = self.origin(voxel_size);
        let w = self.size() as f64 * voxel_size;
        (0..3)
            .map(|a| {
                let d = (o[a] - p[a]).max(p[a] - (o[a] + w)).max(0.0);
                d * d
            })
            .sum::<f64>()
            .sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_of_levels() {
        let k = LodKey::new(3, [-1, 0, 2]);
        assert_eq!(k.size(), 256);
        assert_eq!(k.stride(), 8);
        assert_eq!(k.min_sample(), SamplePos::new(-256, 0, 512));
        assert_eq!(k.origin(0.5), [-128.0, 0.0, 256.0]);
        assert_eq!(k.parent(), Some(LodKey::new(4, [-1, 0, 1])));
        assert_eq!(k.ancestor(5), LodKey::new(5, [-1, 0, 0]));
        let ch = k.children().expect("children");
        assert_eq!(ch[0], LodKey::new(2, [-2, 0, 4]));
        assert_eq!(ch[7], LodKey::new(2, [-1, 1, 5]));
        assert!(ch.iter().all(|c| c.parent() == Some(k)));
        assert_eq!(LodKey::new(0, [1, 2, 3]).children(), None);
        assert_eq!(k.distance([-100.0, 5.0, 600.0], 1.0), 0.0);
        assert_eq!(k.distance([-300.0, 5.0, 600.0], 1.0), 44.0);
    }
}
