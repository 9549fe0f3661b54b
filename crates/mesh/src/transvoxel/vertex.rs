//! Edge vertices: where a crossed edge is cut, shared by every cell that uses the edge.
//!
//! Both kinds of vertex (on a coarse grid edge, on a fine edge of a transition face) are cut
//! the same way, always interpolating from the edge's lower-coordinate sample, with the cut
//! parameter rounded to 1/65536 of the edge. The rounding makes `(lattice index + t)` exact in
//! f32 for lattice indices below 256, so a fine chunk and the coarse chunk next to it place a
//! vertex on their shared face at the same world position bit for bit, although their local
//! origins differ (with power-of-two voxel sizes, the usual case). It also keeps every cut off
//! the samples (`t` in `[1/65536, 1 − 1/65536]`), so no two vertices coincide and no triangle
//! collapses, without special cases for samples that are exactly 0.

use crate::buffer::MeshBuffer;
use crate::grid::Grid;

use super::face::{Face, Slab, cell_counts};

/// The rounding step of the cut parameter along an edge.
const T_STEP: f32 = 1.0 / 65536.0;

/// Where edge `a → b` (lower-coordinate sample first) crosses the surface, as a fraction of the
/// edge in `[T_STEP, 1 − T_STEP]`, rounded to a multiple of `T_STEP`. The edge must be crossed
/// (`(va < 0) != (vb < 0)`), so `va − vb` is not zero.
#[inline]
pub(crate) fn cut(va: f32, vb: f32) -> f32 {
    let t = va / (va - vb);
    // Round half up by truncation (t ≥ 0): one instruction, where `round` is a libm call.
    (((t * 65536.0 + 0.5) as u32) as f32 * T_STEP).clamp(T_STEP, 1.0 - T_STEP)
}

/// What a mesher pass needs to place vertices: the coarse grid, the transition faces and the
/// vertex caches' layout.
pub(crate) struct Ctx<'a> {
    pub(crate) grid: &'a Grid<'a>,
    /// Cells per axis.
    pub(crate) cells: [u32; 3],
    /// Bit `face as u8` set for transition faces.
    pub(crate) mask: u8,
    /// Transition width, fraction of a coarse cell.
    pub(crate) width: f32,
    /// The slabs of the transition faces.
    pub(crate) slabs: [Option<Slab<'a>>; 6],
    /// First cache key of fine face edges (after the coarse grid's `3·len` edge keys).
    fine_base: usize,
    /// Fine lattice points per row of the largest face.
    fine_row: usize,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(
        grid: &'a Grid<'a>,
        mask: u8,
        width: f32,
        slabs: [Option<Slab<'a>>; 6],
    ) -> Self {
        let cells = cell_counts(grid);
        let fine_row = 2 * *cells.iter().max().expect("3 axes") as usize + 1;
        Self {
            grid,
            cells,
            mask,
            width,
            slabs,
            fine_base: 3 * grid.len(),
            fine_row,
        }
    }

    /// Vertex cache entries a pass needs: coarse edges, then two fine edges per fine point of
    /// each face.
    pub(crate) fn cache_len(&self) -> usize {
        self.fine_base + 6 * 2 * self.fine_row * self.fine_row
    }

    #[inline]
    fn flagged(&self, face: usize) -> bool {
        self.mask >> face & 1 == 1
    }

    /// The inward shift (in cells) of coarse grid point `g` (cell coordinates from the first
    /// cell corner): points on a transition face move inward by the transition width, unless
    /// they also lie on a face that is not a transition face (those stay put so the chunk still
    /// meets its same-level neighbours there).
    #[inline]
    fn shift(&self, g: [u32; 3]) -> [f32; 3] {
        let mut s = [0.0f32; 3];
        if self.mask == 0 {
            return s;
        }
        for a in 0..3 {
            let lo = g[a] == 0;
            let hi = g[a] == self.cells[a];
            if (lo && !self.flagged(2 * a)) || (hi && !self.flagged(2 * a + 1)) {
                return [0.0; 3];
            }
            if lo {
                s[a] = self.width;
            } else if hi {
                s[a] = -self.width;
            }
        }
        s
    }

    /// The vertex on the coarse grid edge from grid sample `lo` one step along `axis`, made on
    /// first use. The edge must be crossed.
    pub(crate) fn coarse_vertex(&self, out: &mut MeshBuffer, lo: [u32; 3], axis: usize) -> u32 {
        let g = self.grid;
        let ia = g.index(lo[0], lo[1], lo[2]);
        let key = 3 * ia + axis;
        let id = out.scratch.vertex_ids.ids[key];
        if id != u32::MAX {
            return id;
        }
        let mut hi = lo;
        hi[axis] += 1;
        let ib = g.index(hi[0], hi[1], hi[2]);
        let (va, vb) = (g.values[ia], g.values[ib]);
        let t = cut(va, vb);
        let mut c = [0, 1, 2].map(|a| (lo[a] as i64 - g.origin[a] as i64) as f32);
        c[axis] += t;
        if self.mask != 0 {
            let rel = |p: [u32; 3]| [0, 1, 2].map(|a| p[a] - g.cells_min[a]);
            let (sa, sb) = (self.shift(rel(lo)), self.shift(rel(hi)));
            for a in 0..3 {
                if sa[a] != 0.0 || sb[a] != 0.0 {
                    c[a] += (1.0 - t) * sa[a] + t * sb[a];
                }
            }
        }
        let na = g.gradient(lo[0], lo[1], lo[2]);
        let nb = g.gradient(hi[0], hi[1], hi[2]);
        let id = out.positions.len() as u32;
        out.positions.push(c.map(|v| v * g.voxel_size));
        out.normals.push(lerp(na, nb, t));
        out.materials
            .push(g.material(if va < 0.0 { ia } else { ib }));
        out.scratch.vertex_ids.ids[key] = id;
        out.scratch.vertex_ids.written.push(key);
        id
    }

    /// The vertex on the fine edge of transition face `face` from fine point `p` (fine
    /// coordinates from the first cell corner, on the face plane) one step along `axis` (in the
    /// plane), made on first use; an edge on the line where two transition faces meet is made
    /// once, from the first of them. The edge must be crossed.
    pub(crate) fn fine_vertex(
        &self,
        out: &mut MeshBuffer,
        face: Face,
        p: [u32; 3],
        axis: usize,
    ) -> u32 {
        let key = self.fine_key(p, axis);
        let id = out.scratch.vertex_ids.ids[key];
        if id != u32::MAX {
            return id;
        }
        let slab = self.slabs[face as usize].expect("a transition face");
        let mut q = p;
        q[axis] += 1;
        let (va, vb) = (slab.value(p), slab.value(q));
        let t = cut(va, vb);
        let g = self.grid;
        let mut c = [0, 1, 2]
            .map(|a| (2 * (g.cells_min[a] as i64 - g.origin[a] as i64) + p[a] as i64) as f32);
        c[axis] += t;
        let half = 0.5 * g.voxel_size;
        let id = out.positions.len() as u32;
        out.positions.push(c.map(|v| v * half));
        out.normals
            .push(lerp(slab.gradient(p), slab.gradient(q), t));
        out.materials
            .push(slab.material(if va < 0.0 { p } else { q }));
        out.scratch.vertex_ids.ids[key] = id;
        out.scratch.vertex_ids.written.push(key);
        id
    }

    /// The cache key of a fine edge: numbered on the first transition face whose plane holds
    /// it, so faces meeting at a chunk edge share the vertices on it.
    fn fine_key(&self, p: [u32; 3], axis: usize) -> usize {
        let face = Face::ALL
            .into_iter()
            .find(|&f| {
                let n = f.axis();
                self.flagged(f as usize)
                    && n != axis
                    && p[n] == if f.is_high() { 2 * self.cells[n] } else { 0 }
            })
            .expect("a fine edge lies on a transition face");
        let [u, v] = face.lateral();
        let plane = 2 * self.fine_row * self.fine_row;
        self.fine_base
            + face as usize * plane
            + 2 * (p[u] as usize + self.fine_row * p[v] as usize)
            + usize::from(axis == v)
    }
}

/// `a + t·(b − a)` per component.
#[inline]
fn lerp(a: [f32; 3], b: [f32; 3], t: f32) -> [f32; 3] {
    [
        a[0] + t * (b[0] - a[0]),
        a[1] + t * (b[1] - a[1]),
        a[2] + t * (b[2] - a[2]),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_are_rounded_and_off_the_samples() {
        assert_eq!(cut(-1.0, 1.0), 0.5);
        assert_eq!(cut(0.0, -1.0), T_STEP);
        assert_eq!(cut(-1.0, 0.0), 1.0 - T_STEP);
        let t = cut(-0.3, 0.7);
        assert_eq!((t * 65536.0).fract(), 0.0);
        assert!((t - 0.3).abs() <= T_STEP);
        // Lattice index + cut is exact in f32 below 256.
        assert_eq!(((200.0f32 + t) - 200.0), t);
    }
}
