//! Marching Cubes 33 (Chernyaev 1995), implemented after Lewiner, Lopes, Vieira & Tavares 2003,
//! "Efficient implementation of Marching Cubes' cases with topological guarantees", with their
//! lookup tables.
//!
//! Where classic Marching Cubes picks one triangulation per sign pattern, MC33 resolves the
//! ambiguous faces with the asymptotic decider and the ambiguous interiors with Chernyaev's
//! interior test, so the mesh has the topology of the trilinear interpolant's zero set (tunnels
//! included). Ambiguous faces are decided from the face's four samples alone, so the two cells
//! sharing a face agree and the mesh is watertight. Vertices are shared as in
//! [`crate::marching_cubes`]: one per crossed edge, one per sample when a crossing lands exactly
//! on a sample whose value is 0; some interior cases add one vertex inside the cell.

mod cases;

use std::cmp::Ordering;

use crate::buffer::MeshBuffer;
use crate::cells::for_each_surface_cell;
use crate::grid::Grid;
use crate::normals::{finish, push_triangle};
use crate::pinch::OpenBorder;
use crate::tables::{CORNERS, EDGE_TABLE};

/// How far (in voxels) the vertex inside a cell stays from the cell's faces.
const INNER_MARGIN: f32 = 1.0 / 16.0;

/// Meshes the grid's cell range with Marching Cubes 33 into `out` (cleared first).
///
/// Chernyaev's Marching Cubes 33 (1995) with the case tables and face tests of Lewiner et al.
/// 2003 ("Efficient implementation of Marching Cubes' cases with topological guarantees") and a
/// corrected interior test (see `mc33/cases.rs`): the mesh has the topology of the trilinear
/// interpolant of the samples, with a saddle worth exactly 0 counted as air like a sample
/// worth 0. The mesh is a consistently oriented manifold, closed where the surface does not
/// reach the grid border; surfaces that touch at samples worth exactly 0 get one
/// vertex each there, as with [`crate::marching_cubes`]. Reads the samples of the cells and
/// one more on each side for the central-difference normals (one-sided at the grid border).
/// Positions are local metres, normals unit length toward the air, triangles counter-clockwise
/// seen from the air; no triangle has zero area. A cell whose interior is ambiguous may get one vertex
/// inside it (the mean of its edge crossings, kept off its faces), whose normal is the
/// trilinearly interpolated gradient.
///
/// # Panics
/// If the grid breaks [`Grid::check`]'s contract.
pub fn mc33(grid: &Grid, out: &mut MeshBuffer) {
    grid.check();
    out.clear();
    if grid.is_uniform() {
        return;
    }
    let n = grid.len();
    out.scratch.prepare(3 * n, n);
    let corner_offset = grid.corner_offsets();
    let v = grid.values;
    // Triangles lying in a face of their cell (tunnel walls, exact zeros); kept in the
    // buffer's scratch so a reused buffer does not allocate.
    let mut flat = std::mem::take(&mut out.scratch.flat);
    flat.clear();
    let mut masks = std::mem::take(&mut out.scratch.masks);
    for_each_surface_cell(grid, &mut masks, |at, base, case| {
        let w = corner_offset.map(|off| -f64::from(v[base + off]));
        let cell = Cell {
            at,
            base,
            corner_offset: &corner_offset,
        };
        let mut inner = u32::MAX;
        let flat_start = flat.len();
        let (tiling, from_air) = cases::tiling(case, &w);
        for tri in tiling.chunks_exact(3) {
            let mut ids = [0u32; 3];
            for (id, &e) in ids.iter_mut().zip(tri) {
                *id = if e == 12 {
                    if inner == u32::MAX {
                        inner = inner_vertex(grid, out, &cell, case);
                    }
                    inner
                } else {
                    edge_vertex(grid, out, &cell, e as usize)
                };
            }
            // Like the classic tables, a tiling winds counter-clockwise seen from its
            // index's positive side: the inside, or the air for a complementary index.
            if !from_air {
                ids.swap(1, 2);
            }
            if on_a_face(grid, out, &cell, ids) {
                flat.push(ids);
            } else {
                push_triangle(out, ids[0], ids[1], ids[2]);
            }
        }
        canonical_quads(out, &mut flat[flat_start..]);
    });
    out.scratch.masks = masks;
    push_flat(out, &mut flat);
    out.scratch.flat = flat;
    out.scratch.reset();
    // Faces flat on exact zeros and tunnel walls fold sheets over the sample vertices, so
    // edges between two of their neighbours can be shared too.
    out.scratch.pinch_ring = true;
    finish(out, OpenBorder::of(grid));
}

/// Whether the triangle's three vertices lie in one face of the cell. Two kinds do: the
/// tunnel tilings of Lewiner's tables without an inner vertex (7.4.2, 10.1.2, 12.1.2, 13.5.2)
/// run the tunnel's wall along an ambiguous face as a quad of two triangles between the face's
/// four crossings, and triangles whose vertices collapsed onto samples worth 0 can land in a
/// face.
fn on_a_face(grid: &Grid, out: &MeshBuffer, cell: &Cell, ids: [u32; 3]) -> bool {
    let lo = grid.position(cell.at.map(|c| c as f32));
    let hi = grid.position(cell.at.map(|c| (c + 1) as f32));
    let p = ids.map(|i| out.positions[i as usize]);
    (0..3).any(|a| p.iter().all(|q| q[a] == lo[a]) || p.iter().all(|q| q[a] == hi[a]))
}

/// Splits each quad that a cell put in one of its faces as two triangles along the diagonal
/// through its lexicographically least vertex, so that the two cells sharing the face split a
/// common quad alike (and [`push_flat`] can cancel the pair).
fn canonical_quads(out: &MeshBuffer, flat: &mut [[u32; 3]]) {
    let pos = |i: u32| out.positions[i as usize];
    let less = |p: [f32; 3], q: [f32; 3]| {
        (p[0]
            .total_cmp(&q[0])
            .then(p[1].total_cmp(&q[1]))
            .then(p[2].total_cmp(&q[2])))
            == Ordering::Less
    };
    let least = |i: u32, j: u32| if less(pos(i), pos(j)) { pos(i) } else { pos(j) };
    for i in 0..flat.len() {
        for j in i + 1..flat.len() {
            let (t1, t2) = (flat[i], flat[j]);
            // Rotate t1 to (a, b, c) and t2 to (c, b, d): the quad is a, b, d, c.
            let quad = (0..3).find_map(|k| {
                let [a, b, c] = [t1[k], t1[(k + 1) % 3], t1[(k + 2) % 3]];
                let r = (0..3).find(|&r| t2[r] == c && t2[(r + 1) % 3] == b)?;
                let d = t2[(r + 2) % 3];
                (d != a).then_some([a, b, d, c])
            });
            if let Some([a, b, d, c]) = quad
                && less(least(a, d), least(b, c))
            {
                flat[i] = [a, b, d];
                flat[j] = [a, d, c];
            }
        }
    }
}

/// Pushes the triangles that lie in cell faces, less the pairs that cancel: the two cells that
/// share a face can each put the same triangle in it, wound opposite ways, where each has
/// solid on its side of the face (two tunnels meeting at the face, or a sheet of samples worth
/// 0 between two solids). The two are then no boundary between solid and air: both go.
fn push_flat(out: &mut MeshBuffer, flat: &mut [[u32; 3]]) {
    // Key: the sorted vertices, then the winding's parity relative to the sorted order.
    let key = |t: &[u32; 3]| {
        let mut s = *t;
        s.sort_unstable();
        let even = (t[0] == s[0] && t[1] == s[1])
            || (t[0] == s[1] && t[1] == s[2])
            || (t[0] == s[2] && t[1] == s[0]);
        (s, !even)
    };
    flat.sort_unstable_by_key(key);
    let mut i = 0;
    while i < flat.len() {
        let (s, _) = key(&flat[i]);
        let mut j = i;
        let mut balance = 0i32;
        while j < flat.len() && key(&flat[j]).0 == s {
            balance += if key(&flat[j]).1 { -1 } else { 1 };
            j += 1;
        }
        let t = if balance > 0 { s } else { [s[0], s[2], s[1]] };
        for _ in 0..balance.unsigned_abs() {
            push_triangle(out, t[0], t[1], t[2]);
        }
        i = j;
    }
}

/// The cell being meshed.
struct Cell<'a> {
    /// Grid index of its lowest corner.
    at: [u32; 3],
    /// Index of its lowest corner in `values`.
    base: usize,
    /// Offset of each corner from `base` in `values`.
    corner_offset: &'a [usize; 8],
}

/// The vertex on edge `e` of the cell, shared with [`crate::marching_cubes`]'s vertices
/// (one per crossed edge, one per zero-valued sample).
#[inline]
fn edge_vertex(grid: &Grid, out: &mut MeshBuffer, cell: &Cell, e: usize) -> u32 {
    crate::marching_cubes::edge_vertex(grid, out, cell.at, e, cell.corner_offset, cell.base)
}

/// The vertex inside the cell (Lewiner's vertex 12): the mean of the cell's edge crossings,
/// kept [`INNER_MARGIN`] off the cell's faces so that no triangle through it is flat; its normal
/// is the trilinear interpolation of the corner gradients, its material the nearest inside
/// corner's.
fn inner_vertex(grid: &Grid, out: &mut MeshBuffer, cell: &Cell, case: usize) -> u32 {
    let lo = grid.position(cell.at.map(|c| c as f32));
    let mut sum = [0.0f32; 3];
    let mut count = 0.0f32;
    for e in 0..12 {
        if EDGE_TABLE[case] & (1 << e) != 0 {
            let id = edge_vertex(grid, out, cell, e);
            let p = out.positions[id as usize];
            for a in 0..3 {
                sum[a] += p[a] - lo[a];
            }
            count += 1.0;
        }
    }
    // Cell-local coordinates in voxels, in [margin, 1 − margin].
    let u: [f32; 3] = std::array::from_fn(|a| {
        (sum[a] / count / grid.voxel_size).clamp(INNER_MARGIN, 1.0 - INNER_MARGIN)
    });
    let mut normal = [0.0f32; 3];
    let mut nearest = (f32::INFINITY, cell.base);
    for (m, c) in CORNERS.iter().enumerate() {
        let weight: f32 = (0..3)
            .map(|a| if c[a] == 1 { u[a] } else { 1.0 - u[a] })
            .product();
        let g = grid.gradient(
            cell.at[0] + u32::from(c[0]),
            cell.at[1] + u32::from(c[1]),
            cell.at[2] + u32::from(c[2]),
        );
        for a in 0..3 {
            normal[a] += weight * g[a];
        }
        let i = cell.base + cell.corner_offset[m];
        let d2: f32 = (0..3).map(|a| (u[a] - f32::from(c[a])).powi(2)).sum();
        if grid.values[i] < 0.0 && d2 < nearest.0 {
            nearest = (d2, i);
        }
    }
    let id = out.positions.len() as u32;
    out.positions
        .push(grid.position(std::array::from_fn(|a| cell.at[a] as f32 + u[a])));
    out.normals.push(normal);
    out.materials.push(grid.material(nearest.1));
    id
}
