//! Surface Nets (Gibson 1998): each surface cell's vertex is the mean of its edge crossings.

use crate::buffer::MeshBuffer;
use crate::crossings::{patch_mean, trilinear_lanes};
use crate::dual::{dual_mesh, dual_mesh_with};
use crate::grid::Grid;
use crate::lanes::F32x4;
use crate::level_seams::{FineSampler, LevelNeighbours, Seams};

/// Meshes the grid with Surface Nets into `out` (cleared first).
///
/// One vertex per surface cell at the mean of the cell's edge crossings, one quad per crossed
/// grid edge owned by the cell range (an edge belongs to the range holding its lower end),
/// split along its shorter diagonal. Reads the cells of the range and the cell below it on
/// each axis (one sample of halo below a chunk). Normals are the gradient of the cell's
/// trilinear interpolant at the crossings' mean.
///
/// # Panics
/// If the grid breaks [`Grid::check`]'s contract.
pub fn surface_nets(grid: &Grid, out: &mut MeshBuffer) {
    dual_mesh(grid, out, projected_mean);
}

/// [`surface_nets`] for a chunk of a level-of-detail tiling whose neighbours may be one
/// level finer or coarser (`levels`): the mesh meets theirs with no crack
/// ([`crate::level_seams`]). `fine` gives the field at the finer level's spacing beside the
/// finer neighbours (unused where there are none). With `levels` all plain, the same mesh as
/// [`surface_nets`].
///
/// # Panics
/// If the grid breaks [`Grid::check`]'s contract, or its halo is below 2 where `levels` is not
/// plain.
pub fn surface_nets_lod(
    grid: &Grid,
    levels: LevelNeighbours,
    fine: FineSampler,
    out: &mut MeshBuffer,
) {
    if levels.is_plain() {
        return surface_nets(grid, out);
    }
    let seams = Seams::new(levels, fine, grid);
    dual_mesh_with(grid, out, projected_mean, Some(&seams), projected_mean_of);
}

/// [`projected_mean`] of a polyhedral cell's patch: the mean of `points` (cell-local), one
/// Newton step onto the zero set of the cell's trilinear interpolant, kept in the cell.
pub(crate) fn projected_mean_of(corners: &[f32; 8], points: &[[f32; 3]]) -> ([f32; 3], [f32; 3]) {
    let mut s = [0.0f32; 3];
    for p in points {
        s = [s[0] + p[0], s[1] + p[1], s[2] + p[2]];
    }
    let inv = 1.0 / points.len() as f32;
    let m = F32x4::new([s[0] * inv, s[1] * inv, s[2] * inv, 0.0]);
    let (f, g) = trilinear_lanes(corners, m);
    let [g0, g1, g2, _] = g.to_array();
    let l2 = g0 * g0 + g1 * g1 + g2 * g2;
    let normal = [g0, g1, g2];
    if l2.is_nan() || l2 <= 1e-12 {
        let [m0, m1, m2, _] = m.to_array();
        return ([m0, m1, m2], normal);
    }
    let [p0, p1, p2, _] = (m - F32x4::splat(f / l2) * g).clamp01().to_array();
    ([p0, p1, p2], normal)
}

/// The mean of the crossings, moved by one Newton step onto the zero set of the cell's
/// trilinear interpolant and kept inside the cell. The plain mean sits inside convex
/// surfaces (a sphere of radius 10 voxels loses 1.1% of its volume); the step removes most
/// of that bias and reads only the cell's own samples, so chunks still agree bit for bit.
///
/// The normal is the interpolant's gradient at the mean, which the step follows.
#[inline(always)]
pub(crate) fn projected_mean(corners: &[f32; 8], edges: u16) -> ([f32; 3], [f32; 3]) {
    let m = patch_mean(corners, edges);
    let (f, g) = trilinear_lanes(corners, m);
    let [g0, g1, g2, _] = g.to_array();
    let l2 = g0 * g0 + g1 * g1 + g2 * g2;
    let normal = [g0, g1, g2];
    if l2.is_nan() || l2 <= 1e-12 {
        let [m0, m1, m2, _] = m.to_array();
        return ([m0, m1, m2], normal);
    }
    let s = f / l2;
    let [p0, p1, p2, _] = (m - F32x4::splat(s) * g).clamp01().to_array();
    ([p0, p1, p2], normal)
}
