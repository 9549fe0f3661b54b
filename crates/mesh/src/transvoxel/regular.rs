//! Regular cells: Lengyel's modified Marching Cubes over the chunk's own cells.
//!
//! The regular table differs from the classic one in that a case and its inverse are not
//! merged, so the two cells sharing an ambiguous face always cut it the same way; the
//! transition table cuts the fine faces of a transition face the same way again, which is what
//! lets a fine chunk meshed with these cells weld to a coarse chunk's transition cells.

use crate::buffer::MeshBuffer;
use crate::cells::for_each_surface_cell;
use crate::normals::push_triangle;

use super::tables::{
    REGULAR_CELL_CLASS, REGULAR_CELL_DATA, REGULAR_VERTEX_DATA, TV_CASE_OF_MC_CASE,
};
use super::vertex::Ctx;

/// Meshes every surface cell of the grid's cell range into `out` (vertices shifted inward
/// near transition faces by [`Ctx::coarse_vertex`]).
pub(crate) fn regular_cells(ctx: &Ctx, out: &mut MeshBuffer) {
    let mut masks = std::mem::take(&mut out.scratch.masks);
    for_each_surface_cell(ctx.grid, &mut masks, |cell, _, case| {
        let tv = TV_CASE_OF_MC_CASE[case] as usize;
        let data = REGULAR_CELL_DATA[REGULAR_CELL_CLASS[tv] as usize];
        let mut ids = [0u32; 12];
        let vertices = &REGULAR_VERTEX_DATA[tv][..data.get_vertex_count() as usize];
        for (id, &code) in ids.iter_mut().zip(vertices) {
            let (a, b) = (code >> 4 & 0xF, code & 0xF);
            let lo = u32::from(a.min(b));
            let axis = (a ^ b).trailing_zeros() as usize;
            let p = [
                cell[0] + (lo & 1),
                cell[1] + (lo >> 1 & 1),
                cell[2] + (lo >> 2 & 1),
            ];
            *id = ctx.coarse_vertex(out, p, axis);
        }
        // Counter-clockwise seen from the air as the table stands.
        let tris = &data.vertex_index[..3 * data.get_triangle_count() as usize];
        for t in tris.chunks_exact(3) {
            push_triangle(
                out,
                ids[t[0] as usize],
                ids[t[1] as usize],
                ids[t[2] as usize],
            );
        }
    });
    out.scratch.masks = masks;
}
