//! Surface Nets (Gibson 1998): each surface cell's vertex is the mean of its edge crossings.

use crate::buffer::MeshBuffer;
use crate::dual::{Crossings, dual_mesh};
use crate::grid::Grid;

/// Meshes the grid with Surface Nets into `out` (cleared first).
///
/// One vertex per surface cell at the mean of the cell's edge crossings, one quad per crossed
/// grid edge owned by the cell range (an edge belongs to the range holding its lower end),
/// split along its shorter diagonal. Reads the cells of the range, the cell below it on each
/// axis, and one sample more for central-difference normals: chunk grids need
/// [`crate::CHUNK_HALO`] = 2. Normals are the mean of the crossings' unit gradients.
///
/// # Panics
/// If the grid breaks [`Grid::check`]'s contract.
pub fn surface_nets(grid: &Grid, out: &mut MeshBuffer) {
    dual_mesh(grid, out, projected_mean);
}

/// The mean of the crossings, moved by one Newton step onto the zero set of the cell's
/// trilinear interpolant and kept inside the cell. The plain mean sits inside convex
/// surfaces (a sphere of radius 10 voxels loses 1.1% of its volume); the step removes most
/// of that bias and reads only the cell's own samples, so chunks still agree bit for bit.
fn projected_mean(c: &Crossings) -> [f32; 3] {
    let m = mean_point(c);
    let (f, g) = trilinear(&c.corners, m);
    let l2 = g[0] * g[0] + g[1] * g[1] + g[2] * g[2];
    if l2.is_nan() || l2 <= 1e-12 {
        return m;
    }
    let s = f / l2;
    [0, 1, 2].map(|i| (m[i] - s * g[i]).clamp(0.0, 1.0))
}

/// Value and gradient of the trilinear interpolant of a cell's corners at `p` in `[0, 1]³`.
fn trilinear(v: &[f32; 8], p: [f32; 3]) -> (f32, [f32; 3]) {
    let [x, y, z] = p;
    // Corners in tables::CORNERS order: 0 (0,0,0) 1 (1,0,0) 2 (1,1,0) 3 (0,1,0), 4..7 at z = 1.
    let lerp = |a: f32, b: f32, t: f32| a + t * (b - a);
    let (c00, c10, c01, c11) = (v[0], v[1], v[3], v[2]);
    let (d00, d10, d01, d11) = (v[4], v[5], v[7], v[6]);
    let bottom = lerp(lerp(c00, c10, x), lerp(c01, c11, x), y);
    let top = lerp(lerp(d00, d10, x), lerp(d01, d11, x), y);
    let f = lerp(bottom, top, z);
    let dx_b = lerp(c10 - c00, c11 - c01, y);
    let dx_t = lerp(d10 - d00, d11 - d01, y);
    let dy_b = lerp(c01 - c00, c11 - c10, x);
    let dy_t = lerp(d01 - d00, d11 - d10, x);
    (f, [lerp(dx_b, dx_t, z), lerp(dy_b, dy_t, z), top - bottom])
}

pub(crate) fn mean_point(c: &Crossings) -> [f32; 3] {
    let mut s = [0.0f32; 3];
    for p in &c.points[..c.len] {
        s = [s[0] + p[0], s[1] + p[1], s[2] + p[2]];
    }
    let inv = 1.0 / c.len as f32;
    [s[0] * inv, s[1] * inv, s[2] * inv]
}
