//! Marching Cubes (Lorensen & Cline 1987) with the classic 256-case tables.
//!
//! Ambiguous faces are decided by the signs of the face's four samples alone (the table
//! always separates inside corners on a face), so the two cells sharing a face agree and the
//! mesh is watertight. Vertices are shared: one per crossed edge, and one per sample when a
//! crossing lands exactly on a sample whose value is 0.

use crate::buffer::MeshBuffer;
use crate::cells::for_each_surface_cell;
use crate::grid::Grid;
use crate::normals::{finish, push_triangle};
use crate::tables::{CORNERS, EDGES, TRI_TABLE};

/// Meshes the grid's cell range with Marching Cubes into `out` (cleared first).
///
/// Reads the samples of the cells and one more on each side for the central-difference
/// normals (one-sided at the grid border). Positions are local metres, normals unit length
/// toward the air, triangles counter-clockwise seen from the air; no triangle has zero area.
///
/// # Panics
/// If the grid breaks [`Grid::check`]'s contract.
pub fn marching_cubes(grid: &Grid, out: &mut MeshBuffer) {
    grid.check();
    out.clear();
    if grid.is_uniform() {
        return;
    }
    let n = grid.len();
    out.scratch.prepare(3 * n, n);
    let corner_offset = grid.corner_offsets();
    let mut masks = std::mem::take(&mut out.scratch.masks);
    for_each_surface_cell(grid, &mut masks, |[x, y, z], base, case| {
        let tris = &TRI_TABLE[case];
        let mut i = 0;
        while i < 15 && tris[i] >= 0 {
            let mut ids = [0u32; 3];
            for k in 0..3 {
                ids[k] = edge_vertex(
                    grid,
                    out,
                    [x, y, z],
                    tris[i + k] as usize,
                    &corner_offset,
                    base,
                );
            }
            // The tables wind clockwise seen from the air; reversed here so triangles are
            // counter-clockwise seen from the air.
            push_triangle(out, ids[0], ids[2], ids[1]);
            i += 3;
        }
    });
    out.scratch.masks = masks;
    out.scratch.reset();
    finish(out);
}

/// The vertex on edge `e` of the cell at `cell` (grid index `base`), made on first use.
#[inline]
pub(crate) fn edge_vertex(
    grid: &Grid,
    out: &mut MeshBuffer,
    cell: [u32; 3],
    e: usize,
    corner_offset: &[usize; 8],
    base: usize,
) -> u32 {
    // Canonical direction: from the edge's lower corner to its upper one.
    let [c0, c1] = EDGES[e];
    let (lo, hi) = if corner_offset[c0 as usize] < corner_offset[c1 as usize] {
        (c0, c1)
    } else {
        (c1, c0)
    };
    let (ia, ib) = (
        base + corner_offset[lo as usize],
        base + corner_offset[hi as usize],
    );
    let (va, vb) = (grid.values[ia], grid.values[ib]);
    let axis = (0..3)
        .find(|&a| CORNERS[lo as usize][a] != CORNERS[hi as usize][a])
        .expect("an axis");
    let ca = CORNERS[lo as usize].map(u32::from);
    let ga = [cell[0] + ca[0], cell[1] + ca[1], cell[2] + ca[2]];
    // A crossing exactly on a sample (value 0, which is air) is that sample's vertex.
    if va == 0.0 || vb == 0.0 {
        let (s, g) = if va == 0.0 {
            (ia, ga)
        } else {
            (
                ib,
                [
                    ga[0] + (axis == 0) as u32,
                    ga[1] + (axis == 1) as u32,
                    ga[2] + (axis == 2) as u32,
                ],
            )
        };
        let id = out.scratch.sample_ids[s];
        if id != u32::MAX {
            return id;
        }
        let id = out.positions.len() as u32;
        out.positions.push(grid.position(g.map(|c| c as f32)));
        out.normals.push(grid.gradient(g[0], g[1], g[2]));
        out.materials.push(inside_material(grid, ia, ib, va));
        out.scratch.sample_ids[s] = id;
        out.scratch.sample_written.push(s);
        return id;
    }
    let key = 3 * ia + axis;
    let id = out.scratch.ids[key];
    if id != u32::MAX {
        return id;
    }
    let t = va / (va - vb);
    let mut g = ga.map(|c| c as f32);
    g[axis] += t;
    let na = grid.gradient(ga[0], ga[1], ga[2]);
    let gb = [
        ga[0] + (axis == 0) as u32,
        ga[1] + (axis == 1) as u32,
        ga[2] + (axis == 2) as u32,
    ];
    let nb = grid.gradient(gb[0], gb[1], gb[2]);
    let id = out.positions.len() as u32;
    out.positions.push(grid.position(g));
    out.normals.push([
        na[0] + t * (nb[0] - na[0]),
        na[1] + t * (nb[1] - na[1]),
        na[2] + t * (nb[2] - na[2]),
    ]);
    out.materials.push(inside_material(grid, ia, ib, va));
    out.scratch.ids[key] = id;
    out.scratch.written.push(key);
    id
}

/// The material of the inside end of an edge.
#[inline]
fn inside_material(grid: &Grid, ia: usize, ib: usize, va: f32) -> u8 {
    grid.material(if va < 0.0 { ia } else { ib })
}
