//! The six faces of a chunk and the layout of the fine samples a transition face reads.
//!
//! A transition face reads a slab of samples at the fine neighbour's spacing (half the chunk's
//! voxel size), three samples thick, centred on the face plane, with one extra fine sample on
//! each side in the plane for central-difference normals:
//!
//! ```text
//!   slab of the −X face of a chunk of N cells, seen along +X (u = y, v = z):
//!
//!   v (z)  −1  0   1   2  …  2N  2N+1   fine index in the face
//!   2N+1   ·   ·   ·   ·      ·   ·     halo row
//!   2N     ·   o   o   o      o   ·     o: fine samples of the face (2N + 1 per row)
//!   …
//!   0      ·   o   o   o      o   ·
//!   −1     ·   ·   ·   ·      ·   ·     halo row                      → u (y)
//!
//!   and along the face normal three layers: the plane − ½ voxel, the plane, the plane + ½ voxel
//! ```

use crate::grid::Grid;

/// One of a chunk's six faces, named by its outward normal. `face as usize` indexes
/// [`super::Transitions::faces`]; bit `face as u8` is its bit in a face mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Face {
    /// The face at the lowest x (the grid's first x cell).
    NegX = 0,
    /// The face at the highest x.
    PosX = 1,
    /// The face at the lowest y.
    NegY = 2,
    /// The face at the highest y.
    PosY = 3,
    /// The face at the lowest z.
    NegZ = 4,
    /// The face at the highest z.
    PosZ = 5,
}

impl Face {
    /// Every face, in index order.
    pub const ALL: [Face; 6] = [
        Face::NegX,
        Face::PosX,
        Face::NegY,
        Face::PosY,
        Face::NegZ,
        Face::PosZ,
    ];

    /// The axis of the face normal (0 = x, 1 = y, 2 = z).
    #[inline]
    pub fn axis(self) -> usize {
        self as usize / 2
    }

    /// Whether the face is on the high side of its axis.
    #[inline]
    pub fn is_high(self) -> bool {
        self as usize % 2 == 1
    }

    /// The face's bit in a face mask: `1 << (face as u8)`.
    #[inline]
    pub fn bit(self) -> u8 {
        1 << self as u8
    }

    /// The two axes in the face plane, ascending: `(u, v)`.
    #[inline]
    pub fn lateral(self) -> [usize; 2] {
        match self.axis() {
            0 => [1, 2],
            1 => [0, 2],
            _ => [0, 1],
        }
    }
}

/// The fine samples of one transition face (see the module docs for the picture).
///
/// The slab is `fine_face_dims(grid, face)` samples, x fastest, in the chunk's axes: 3 along the
/// face normal and `2·cells + 3` along each axis in the face plane, where `cells` is the grid's
/// cell count on that axis (65 + 2 = 67 for a 32-cell chunk). Slab index `[a, b, c]` lies at
/// fine lattice offset [`fine_face_sample`]`(grid, face, [a, b, c])` from the grid's local
/// origin, in fine voxels (half the grid's voxel size): sample it from the same field as the
/// coarse grid. The samples at even fine offsets on the face plane are at the coarse grid's
/// points and should equal the coarse samples there (see [`super::transvoxel`]).
#[derive(Clone, Copy, Debug)]
pub struct FineFace<'a> {
    /// SDF samples in metres, negative inside.
    pub values: &'a [f32],
    /// Material id per sample (same layout), or empty for material 0.
    pub materials: &'a [u8],
}

/// Cells of the grid's cell range per axis.
#[inline]
pub(crate) fn cell_counts(grid: &Grid) -> [u32; 3] {
    [0, 1, 2].map(|a| grid.cells_max[a] - grid.cells_min[a])
}

/// The dimensions of a [`FineFace`] slab for `face` of `grid`: 3 along the face normal and
/// `2·cells + 3` along the other two axes (`[3, 67, 67]` for the −X face of a 32³-cell chunk).
pub fn fine_face_dims(grid: &Grid, face: Face) -> [u32; 3] {
    let n = cell_counts(grid);
    let mut d = n.map(|c| 2 * c + 3);
    d[face.axis()] = 3;
    d
}

/// The fine lattice offset of slab index `index` of `face` from the grid's local origin, in
/// fine voxels (half the grid's voxel size): the sample's local position is
/// `offset · voxel_size / 2` metres. For a 32³-cell chunk grid (`Grid::chunk`) the offsets along
/// the face plane run from −1 to 65, and along the normal from −1 to 1 (low faces) or 63 to 65
/// (high faces).
pub fn fine_face_sample(grid: &Grid, face: Face, index: [u32; 3]) -> [i32; 3] {
    let n = cell_counts(grid);
    let mut out = [0i32; 3];
    for a in 0..3 {
        let base = 2 * (grid.cells_min[a] as i32 - grid.origin[a] as i32);
        let plane = if a == face.axis() && face.is_high() {
            2 * n[a] as i32
        } else {
            0
        };
        out[a] = base + plane + index[a] as i32 - 1;
    }
    out
}

/// A checked view of one face's slab: reads samples by fine lattice point relative to the
/// grid's first cell corner.
#[derive(Clone, Copy)]
pub(crate) struct Slab<'a> {
    pub(crate) face: Face,
    pub(crate) values: &'a [f32],
    pub(crate) materials: &'a [u8],
    /// Index strides per axis.
    stride: [usize; 3],
    /// The plane's fine coordinate along the normal (0 or 2·cells).
    pub(crate) plane: u32,
}

impl<'a> Slab<'a> {
    /// # Panics
    /// If the slices do not match `fine_face_dims(grid, face)`.
    pub(crate) fn new(grid: &Grid, face: Face, fine: &FineFace<'a>) -> Self {
        let d = fine_face_dims(grid, face);
        let len = d.iter().map(|&v| v as usize).product::<usize>();
        assert_eq!(
            fine.values.len(),
            len,
            "fine samples of face {face:?}: expected {d:?} = {len} values"
        );
        assert!(
            fine.materials.is_empty() || fine.materials.len() == len,
            "fine materials of face {face:?}: expected 0 or {len}"
        );
        let n = cell_counts(grid)[face.axis()];
        Self {
            face,
            values: fine.values,
            materials: fine.materials,
            stride: [1, d[0] as usize, d[0] as usize * d[1] as usize],
            plane: if face.is_high() { 2 * n } else { 0 },
        }
    }

    /// Slab index of fine point `p` (fine coordinates from the grid's first cell corner, `p`
    /// on the face plane along the normal) moved `dn` fine samples along the normal.
    #[inline]
    pub(crate) fn index(&self, p: [u32; 3], dn: i32) -> usize {
        let n = self.face.axis();
        p.iter()
            .zip(self.stride)
            .enumerate()
            .map(|(a, (&c, stride))| {
                let s = if a == n {
                    (1 + dn) as usize
                } else {
                    c as usize + 1
                };
                s * stride
            })
            .sum()
    }

    /// Index offsets of one fine step along each axis.
    #[inline]
    pub(crate) fn strides(&self) -> [usize; 3] {
        self.stride
    }

    /// The sample at fine point `p` on the face plane.
    #[inline]
    pub(crate) fn value(&self, p: [u32; 3]) -> f32 {
        self.values[self.index(p, 0)]
    }

    /// The field gradient at fine point `p` on the plane, central differences over fine
    /// samples (value units per fine voxel ×2), like [`Grid::gradient`] inside a grid.
    #[inline]
    pub(crate) fn gradient(&self, p: [u32; 3]) -> [f32; 3] {
        let i = self.index(p, 0);
        let v = self.values;
        let n = self.face.axis();
        [0, 1, 2].map(|a| {
            if a == n {
                v[self.index(p, 1)] - v[self.index(p, -1)]
            } else {
                v[i + self.stride[a]] - v[i - self.stride[a]]
            }
        })
    }

    /// The material at fine point `p` on the plane (0 when the slab has none).
    #[inline]
    pub(crate) fn material(&self, p: [u32; 3]) -> u8 {
        self.materials.get(self.index(p, 0)).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_slab_layout() {
        let v = vec![0.0f32; 35 * 35 * 35];
        let g = Grid::chunk(&v, &[], 1, 2.0);
        assert_eq!(fine_face_dims(&g, Face::NegX), [3, 67, 67]);
        assert_eq!(fine_face_dims(&g, Face::PosY), [67, 3, 67]);
        assert_eq!(fine_face_sample(&g, Face::NegX, [0, 0, 0]), [-1, -1, -1]);
        assert_eq!(fine_face_sample(&g, Face::NegX, [1, 1, 66]), [0, 0, 65]);
        assert_eq!(fine_face_sample(&g, Face::PosZ, [1, 2, 1]), [0, 1, 64]);
        assert_eq!(fine_face_sample(&g, Face::PosZ, [1, 2, 2]), [0, 1, 65]);
    }
}
