//! Transition cells: the strip between a transition face (at the fine neighbour's resolution)
//! and the chunk's border cells, which are shrunk inward by the transition width.
//!
//! ```text
//!   a transition cell, seen edge-on (face normal →, inward to the right):
//!
//!   fine face   half-res face
//!      6 ─────────── B        the 9 fine samples 0..8 lie on the chunk's face, the 4
//!      3 ╲           │        half-resolution corners 9..C (= samples 0, 2, 6, 8) on the
//!      0 ─────────── 9        coarse cell's face, moved inward by `width` cells
//!      |← width →|
//! ```

use crate::buffer::MeshBuffer;
use crate::normals::push_triangle;

use super::face::Face;
use super::tables::{
    HALF_RES_CORNER, TRANSITION_CASE_BIT, TRANSITION_CELL_CLASS, TRANSITION_CELL_DATA,
    TRANSITION_VERTEX_DATA,
};
use super::vertex::Ctx;

/// Meshes the transition cells of transition face `face` into `out`.
pub(crate) fn transition_cells(ctx: &Ctx, face: Face, out: &mut MeshBuffer) {
    let slab = ctx.slabs[face as usize].expect("a transition face");
    let g = ctx.grid;
    let n = face.axis();
    let [u, v] = face.lateral();
    // The table winds its triangles for a frame (u, v, inward normal) that is right-handed
    // when the class's high bit is clear; the other faces' frames are mirrored.
    let right_handed = matches!(face, Face::NegX | Face::PosY | Face::NegZ);
    let coarse_plane = g.cells_min[n] + if face.is_high() { ctx.cells[n] } else { 0 };
    let stride = slab.strides();
    // Offsets of the nine full-resolution samples from the cell's first one.
    let offsets: [usize; 9] = std::array::from_fn(|k| (k % 3) * stride[u] + (k / 3) * stride[v]);
    for cv in 0..ctx.cells[v] {
        let mut p0 = [0u32; 3];
        p0[n] = slab.plane;
        p0[v] = 2 * cv;
        let row = slab.index(p0, 0);
        for cu in 0..ctx.cells[u] {
            let first = row + 2 * cu as usize * stride[u];
            let fine = |k: u8| {
                let k = u32::from(k);
                let mut p = [0u32; 3];
                p[n] = slab.plane;
                p[u] = 2 * cu + k % 3;
                p[v] = 2 * cv + k / 3;
                p
            };
            let mut case = 0usize;
            for (&off, &bit) in offsets.iter().zip(&TRANSITION_CASE_BIT) {
                if slab.values[first + off] < 0.0 {
                    case |= usize::from(bit);
                }
            }
            if case == 0 || case == 511 {
                continue;
            }
            let class = TRANSITION_CELL_CLASS[case];
            let data = TRANSITION_CELL_DATA[usize::from(class & 0x7F)];
            let mut ids = [0u32; 12];
            let vertices = &TRANSITION_VERTEX_DATA[case][..data.get_vertex_count() as usize];
            for (id, &code) in ids.iter_mut().zip(vertices) {
                let (a, b) = ((code >> 4 & 0xF) as u8, (code & 0xF) as u8);
                let (lo, hi) = (a.min(b), a.max(b));
                *id = if hi <= 8 {
                    // A fine edge: neighbours in a row (along u) or a column (along v).
                    let axis = if hi - lo == 1 { u } else { v };
                    ctx.fine_vertex(out, face, fine(lo), axis)
                } else {
                    let (ca, cb) = (
                        HALF_RES_CORNER[usize::from(lo - 9)],
                        HALF_RES_CORNER[usize::from(hi - 9)],
                    );
                    let axis = if ca[1] == cb[1] { u } else { v };
                    let mut p = [0u32; 3];
                    p[n] = coarse_plane;
                    p[u] = g.cells_min[u] + cu + ca[0];
                    p[v] = g.cells_min[v] + cv + ca[1];
                    ctx.coarse_vertex(out, p, axis)
                };
            }
            let table_order = (class & 0x80 == 0) == right_handed;
            let tris = &data.vertex_index[..3 * data.get_triangle_count() as usize];
            for t in tris.chunks_exact(3) {
                let [a, b, c] = [t[0], t[1], t[2]].map(|i| ids[usize::from(i)]);
                if table_order {
                    push_triangle(out, a, b, c);
                } else {
                    push_triangle(out, c, b, a);
                }
            }
        }
    }
}
