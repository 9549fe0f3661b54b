//! The read-only sample grid a mesher reads.

/// Samples a chunk grid carries on each side beyond its `32³` cells so that every mesher's
/// vertices, normals and clean-up decisions on a chunk border are made from the same samples
/// in both chunks: Marching Cubes' central differences read one sample beyond the chunk's
/// corners on each side; Surface Nets and Dual Contouring read the cell below the chunk (−1)
/// for their border quads and also mesh the grid edges one layer beyond the chunk as ghosts
/// (see `finish`), whose quads read the cell below those (−2). The grid is `37³` samples,
/// `32c − 2 ..= 32c + 34` (docs/architecture.md, "Chunk").
pub const CHUNK_HALO: u32 = 2;

/// Cells per chunk along each axis (docs/architecture.md, "Chunk").
pub const CHUNK_CELLS: u32 = 32;

/// A read-only grid of finite SDF samples (negative inside, `value < 0.0` is the one inside
/// predicate; a sample exactly 0 is air) and the range of cells to mesh.
///
/// `values[x + dims[0]·(y + dims[1]·z)]` is the sample at grid index `(x, y, z)`, whose
/// position is `(index − origin) · voxel_size` metres in the mesh's local space. A cell is
/// named by its lowest corner.
#[derive(Clone, Copy, Debug)]
pub struct Grid<'a> {
    /// SDF samples, x fastest, `dims[0]·dims[1]·dims[2]` of them, metres.
    pub values: &'a [f32],
    /// Material id per sample (same layout), or empty for material 0 everywhere.
    pub materials: &'a [u8],
    /// Samples per axis.
    pub dims: [u32; 3],
    /// Spacing of samples, metres.
    pub voxel_size: f32,
    /// The grid index at local position 0.
    pub origin: [u32; 3],
    /// First cell to mesh (inclusive) per axis.
    pub cells_min: [u32; 3],
    /// One past the last cell to mesh per axis.
    pub cells_max: [u32; 3],
    /// `(min, max)` of `values` if the caller kept it while filling the grid; lets an all-air
    /// or all-solid grid return at once. `None`: the mesher scans the values.
    pub range: Option<(f32, f32)>,
}

impl<'a> Grid<'a> {
    /// A chunk grid: `32 + 1 + 2·halo` samples per axis, meshing the chunk's own `32³` cells,
    /// local position 0 at the chunk's lowest corner.
    ///
    /// # Panics
    /// If `halo` is 0 or above 64, or the slices do not hold `(33 + 2·halo)³` samples
    /// (materials may be empty).
    pub fn chunk(values: &'a [f32], materials: &'a [u8], halo: u32, voxel_size: f32) -> Self {
        assert!(
            (1..=64).contains(&halo),
            "a chunk grid needs a halo of 1 to 64 samples"
        );
        let n = CHUNK_CELLS + 1 + 2 * halo;
        let g = Self {
            values,
            materials,
            dims: [n; 3],
            voxel_size,
            origin: [halo; 3],
            cells_min: [halo; 3],
            cells_max: [halo + CHUNK_CELLS; 3],
            range: None,
        };
        g.check();
        g
    }

    /// A whole volume: every cell meshed, local position 0 at sample `(0, 0, 0)`.
    ///
    /// # Panics
    /// If `values.len()` is not `dims[0]·dims[1]·dims[2]` or a dimension is below 2.
    pub fn volume(values: &'a [f32], dims: [u32; 3], voxel_size: f32) -> Self {
        assert!(
            dims.iter().all(|&d| d >= 2),
            "a volume needs at least 2 samples per axis"
        );
        let g = Self {
            values,
            materials: &[],
            dims,
            voxel_size,
            origin: [0; 3],
            cells_min: [0; 3],
            cells_max: dims.map(|d| d - 1),
            range: None,
        };
        g.check();
        g
    }

    /// Checks the grid's contract. (Samples must also be finite: NaN or infinite samples give
    /// NaN positions; they are not scanned for, since the field layer never stores them.)
    ///
    /// # Panics
    /// On a length mismatch, a cell range outside the grid, or a voxel size that is not finite
    /// and positive.
    pub fn check(&self) {
        assert!(
            self.voxel_size.is_finite() && self.voxel_size > 0.0,
            "voxel size must be finite and > 0"
        );
        let n = self.len();
        assert_eq!(self.values.len(), n, "values length != dims product");
        assert!(
            self.materials.is_empty() || self.materials.len() == n,
            "materials length"
        );
        for a in 0..3 {
            assert!(
                self.cells_min[a] <= self.cells_max[a],
                "empty or inverted cell range"
            );
            assert!(
                self.cells_max[a] < self.dims[a],
                "cell range beyond the grid"
            );
        }
    }

    /// Samples in the grid.
    pub fn len(&self) -> usize {
        self.dims.iter().map(|&d| d as usize).product()
    }

    /// Whether the grid has no samples.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Index of grid sample `(x, y, z)` in `values`.
    #[inline]
    pub fn index(&self, x: u32, y: u32, z: u32) -> usize {
        x as usize + self.dims[0] as usize * (y as usize + self.dims[1] as usize * z as usize)
    }

    /// Whether every sample is air or every sample is solid (then no mesher emits anything).
    pub fn is_uniform(&self) -> bool {
        let (lo, hi) = self.range.unwrap_or_else(|| {
            self.values
                .iter()
                .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &v| {
                    (a.min(v), b.max(v))
                })
        });
        lo >= 0.0 || hi < 0.0
    }

    /// Offsets in `values` of a cell's eight corners from its lowest one, in
    /// [`crate::tables::CORNERS`] order.
    pub fn corner_offsets(&self) -> [usize; 8] {
        let (sy, sz) = (
            self.dims[0] as usize,
            self.dims[0] as usize * self.dims[1] as usize,
        );
        crate::tables::CORNERS.map(|c| c[0] as usize + c[1] as usize * sy + c[2] as usize * sz)
    }

    /// The material at sample index `i` (0 when the grid has none).
    #[inline]
    pub fn material(&self, i: usize) -> u8 {
        self.materials.get(i).copied().unwrap_or(0)
    }

    /// Local position (metres) of grid coordinate `g` (may be fractional).
    #[inline]
    pub fn position(&self, g: [f32; 3]) -> [f32; 3] {
        [
            (g[0] - self.origin[0] as f32) * self.voxel_size,
            (g[1] - self.origin[1] as f32) * self.voxel_size,
            (g[2] - self.origin[2] as f32) * self.voxel_size,
        ]
    }

    /// The field gradient at sample `(x, y, z)` in value units per voxel ×2: central
    /// differences `f(i+1) − f(i−1)`, or twice the one-sided difference at the grid border.
    #[inline]
    pub fn gradient(&self, x: u32, y: u32, z: u32) -> [f32; 3] {
        let v = self.values;
        let i = self.index(x, y, z);
        let (sy, sz) = (
            self.dims[0] as usize,
            self.dims[0] as usize * self.dims[1] as usize,
        );
        #[inline(always)]
        fn d(v: &[f32], i: usize, s: usize, c: u32, n: u32) -> f32 {
            if c == 0 {
                2.0 * (v[i + s] - v[i])
            } else if c + 1 == n {
                2.0 * (v[i] - v[i - s])
            } else {
                v[i + s] - v[i - s]
            }
        }
        [
            d(v, i, 1, x, self.dims[0]),
            d(v, i, sy, y, self.dims[1]),
            d(v, i, sz, z, self.dims[2]),
        ]
    }
}
