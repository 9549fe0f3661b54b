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
use crate::cells::{for_each_shell_cell, for_each_surface_cell, shell_range};
use crate::grid::Grid;
use crate::normals::{finish, near_border, needs_shell, push_triangle};
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
    tile(grid, out);
    // Faces flat on exact zeros and tunnel walls fold sheets over the sample vertices, so
    // edges between two of their neighbours can be shared too.
    out.scratch.pinch.ring = true;
    finish(out, OpenBorder::of(grid));
}

/// Tiles the cells of the grid's range, then, where the range holds something for the
/// clean-up near its border or triangles in cell faces there (which may cancel with the cell
/// across), those of the shell around it too, as ghosts flagged for `finish`, so that what
/// lies on the border (a flat pair split across it, case C10; a pinch; a sliver) is decided
/// as in the chunk across it.
fn tile(grid: &Grid, out: &mut MeshBuffer) {
    let n = grid.len();
    out.scratch.vertex_ids.prepare(3 * n, n);
    let corner_offset = grid.corner_offsets();
    let v = grid.values;
    // Triangles lying in a face of their cell (tunnel walls, exact zeros), each with whether
    // a shell cell made it; kept in the buffer's scratch so a reused buffer does not allocate.
    let mut flat = std::mem::take(&mut out.scratch.flat);
    flat.clear();
    let mut masks = std::mem::take(&mut out.scratch.masks);
    // One body for the range's cells and the shell's, written out at both calls (a closure
    // called from two places is not inlined into the per-cell loop).
    macro_rules! cell_fn {
        ($out:ident, $flat:expr, $at:ident, $base:ident, $case:ident, $ghost:expr) => {{
            let (out, flat, at, base, case, ghost): (
                &mut MeshBuffer,
                &mut Vec<([u32; 3], bool)>,
                [u32; 3],
                usize,
                usize,
                bool,
            ) = ($out, $flat, $at, $base, $case, $ghost);
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
                    flat.push((ids, ghost));
                } else {
                    push_triangle(out, ids[0], ids[1], ids[2]);
                }
            }
            canonical_quads(out, &mut flat[flat_start..]);
        }};
    }
    for_each_surface_cell(grid, &mut masks, |at, base, case| {
        cell_fn!(out, &mut flat, at, base, case, false)
    });
    let (own, mut shell_end) = (out.indices.len() / 3, 0);
    let near_flat = {
        let near = near_border(out, grid, [1.0; 2]);
        flat.iter().any(|(t, _)| t.iter().any(|&i| near(i)))
    };
    // Within a cell of the border: MC33 also splits the neighbours of pinch candidates.
    let shell = shell_range(grid, 0).is_some()
        && (near_flat || needs_shell(out, grid, [1.0; 2], |_| false, |_, _| false));
    if shell {
        out.scratch.shell.own_vertices = out.positions.len();
        for_each_shell_cell(grid, &mut masks, |at, base, case| {
            cell_fn!(out, &mut flat, at, base, case, true)
        });
        shell_end = out.indices.len() / 3;
    }
    out.scratch.masks = masks;
    let mut tags = std::mem::take(&mut out.scratch.shell.ghost);
    tags.clear();
    if shell {
        tags.resize(own, false);
        tags.resize(shell_end, true);
    }
    push_flat(out, &mut flat, shell.then_some(&mut tags));
    out.scratch.shell.ghost = tags;
    out.scratch.flat = flat;
    out.scratch.vertex_ids.reset();
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
fn canonical_quads(out: &MeshBuffer, flat: &mut [([u32; 3], bool)]) {
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
            let (t1, t2) = (flat[i].0, flat[j].0);
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
                flat[i].0 = [a, b, d];
                flat[j].0 = [a, d, c];
            }
        }
    }
}

/// Pushes the triangles that lie in cell faces, less the pairs that cancel: the two cells that
/// share a face can each put the same triangle in it, wound opposite ways, where each has
/// solid on its side of the face (two tunnels meeting at the face, or a sheet of samples worth
/// 0 between two solids). The two are then no boundary between solid and air: both go.
///
/// With `tags` (one per triangle pushed so far), each flat triangle's flag (made by a shell
/// cell: a ghost) is pushed with it. Which of a pair's copies stays then matters: ghosts pair
/// among themselves first, then the range's own triangles, then across, ghosts first (as
/// `pinch::cancel_twins` does), so that the chunk across the border, whose own and ghost
/// triangles are these swapped, keeps exactly what this one drops.
fn push_flat(
    out: &mut MeshBuffer,
    flat: &mut [([u32; 3], bool)],
    mut tags: Option<&mut Vec<bool>>,
) {
    // Key: the sorted vertices, then the winding's parity relative to the sorted order.
    let key = |t: &[u32; 3]| {
        let mut s = *t;
        s.sort_unstable();
        let even = (t[0] == s[0] && t[1] == s[1])
            || (t[0] == s[1] && t[1] == s[2])
            || (t[0] == s[2] && t[1] == s[0]);
        (s, !even)
    };
    flat.sort_unstable_by_key(|f| (key(&f.0), f.1));
    let mut i = 0;
    while i < flat.len() {
        let (s, _) = key(&flat[i].0);
        let mut j = i;
        // Per winding (0: even, 1: odd) and flag (0: own, 1: ghost), how many.
        let mut count = [[0i32; 2]; 2];
        while j < flat.len() && key(&flat[j].0).0 == s {
            count[usize::from(key(&flat[j].0).1)][usize::from(flat[j].1)] += 1;
            j += 1;
        }
        let balance = count[0][0] + count[0][1] - count[1][0] - count[1][1];
        let t = if balance > 0 { s } else { [s[0], s[2], s[1]] };
        let (major, minor) = if balance > 0 {
            (count[0], count[1])
        } else {
            (count[1], count[0])
        };
        // The major winding's ghosts that stay: those not paired with a ghost, less those
        // paired across with an own triangle of the minor winding left over.
        let across = (minor[0] - major[0].min(minor[0])) + (minor[1] - major[1].min(minor[1]));
        let ghosts_left = major[1] - major[1].min(minor[1]);
        let ghosts_kept = ghosts_left - across.min(ghosts_left);
        for k in 0..balance.unsigned_abs() as i32 {
            let before = out.indices.len();
            push_triangle(out, t[0], t[1], t[2]);
            if let Some(tags) = tags.as_deref_mut()
                && out.indices.len() > before
            {
                tags.push(k < ghosts_kept);
            }
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
