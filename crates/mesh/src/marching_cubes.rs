//! Marching Cubes (Lorensen & Cline 1987) with the classic 256-case tables.
//!
//! Ambiguous faces are decided by the signs of the face's four samples alone (the table
//! always separates inside corners on a face), so the two cells sharing a face agree and the
//! mesh is watertight. Vertices are shared: one per crossed edge, and one per sample when a
//! crossing lands exactly on a sample whose value is 0. Where two sheets of surface touch on
//! such a sample, its vertex is then split into one per sheet ([`crate::pinch`]), so the mesh
//! is also manifold.

use crate::buffer::MeshBuffer;
use crate::cells::{
    LayerMasks, for_each_shell_cell, for_each_surface_cell, shell_range, surface_cells_by_layer,
};
use crate::grid::Grid;
use crate::normals::{finish, flag_zero_area, needs_shell, push_triangle};
use crate::pinch::OpenBorder;
use crate::tables::{CORNERS, EDGES, TRI_TABLE};

/// Meshes the grid's cell range with Marching Cubes into `out` (cleared first).
///
/// Reads the samples of the cells and one more on each side for the central-difference
/// normals (one-sided at the grid border). Positions are local metres, normals unit length
/// toward the air, triangles counter-clockwise seen from the air; no triangle has zero area.
/// The mesh is a consistently oriented manifold, closed where the surface does not reach the
/// grid border: surfaces that touch at samples worth exactly 0 get one vertex each there
/// (several vertices at one position), not a shared edge.
///
/// # Panics
/// If the grid breaks [`Grid::check`]'s contract.
pub fn marching_cubes(grid: &Grid, out: &mut MeshBuffer) {
    grid.check();
    out.clear();
    if grid.is_uniform() {
        return;
    }
    layered(grid, out);
    // A vertex's triangles reach the shell only where it lies on the border planes.
    if shell_range(grid, 0).is_some() && needs_shell(out, grid, [0.0; 2], |_| false, |_, _| false) {
        // Something for the clean-up near the border: the shell of cells around the range is
        // meshed too, as ghosts, so that what lies on the border (a flat pair split across
        // it, case C10; a pinch; a sliver) is decided as in the chunk across it (`finish`).
        let own = out.indices.len() / 3;
        out.scratch.shell.own_vertices = out.positions.len();
        by_volume_ids(grid, out, true);
        share_border_vertices(out, grid, own);
        out.scratch.shell.ghost.clear();
        out.scratch.shell.ghost.resize(own, false);
        out.scratch.shell.ghost.resize(out.indices.len() / 3, true);
    }
    finish(out, OpenBorder::of(grid));
}

/// Marching Cubes over the grid's cell range (or, with `shell`, over the shell of cells
/// around it), with vertex ids kept per grid edge of the whole grid.
fn by_volume_ids(grid: &Grid, out: &mut MeshBuffer, shell: bool) {
    let n = grid.len();
    out.scratch.vertex_ids.prepare(3 * n, n);
    let corner_offset = grid.corner_offsets();
    let mut masks = std::mem::take(&mut out.scratch.masks);
    // One body for both loops, written out in each (a closure called from two places is
    // not inlined into the per-cell loop).
    macro_rules! cell {
        ($out:ident, $p:ident, $base:ident, $case:ident) => {{
            let (out, [x, y, z], base, case): (&mut MeshBuffer, [u32; 3], usize, usize) =
                ($out, $p, $base, $case);
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
        }};
    }
    if shell {
        for_each_shell_cell(grid, &mut masks, |p, base, case| cell!(out, p, base, case));
    } else {
        for_each_surface_cell(grid, &mut masks, |p, base, case| cell!(out, p, base, case));
    }
    out.scratch.masks = masks;
    out.scratch.vertex_ids.reset();
}

/// After the shell's cells were meshed (triangles from the `own`-th on) with their own
/// vertices: their vertices on the range's border planes, which the range's cells made too
/// (the same edge, the same arithmetic, so the same bits), are replaced by the range's.
fn share_border_vertices(out: &mut MeshBuffer, grid: &Grid, own: usize) {
    let n_own = out.scratch.shell.own_vertices;
    let (lo, hi) = (
        grid.position(grid.cells_min.map(|c| c as f32)),
        grid.position(grid.cells_max.map(|c| c as f32)),
    );
    let on_plane = |p: &[f32; 3]| (0..3).any(|a| p[a] == lo[a] || p[a] == hi[a]);
    let bits = |p: &[f32; 3]| p.map(|c| (c + 0.0).to_bits());
    let mut keys = std::mem::take(&mut out.scratch.shell.border_keys);
    keys.clear();
    keys.extend(
        out.positions[..n_own]
            .iter()
            .enumerate()
            .filter(|(_, p)| on_plane(p))
            .map(|(i, p)| (bits(p), i as u32)),
    );
    keys.sort_unstable();
    let mut remap = std::mem::take(&mut out.scratch.cleanup.remap);
    remap.clear();
    remap.extend(n_own as u32..out.positions.len() as u32);
    for (k, p) in out.positions[n_own..].iter().enumerate() {
        if on_plane(p) {
            let b = bits(p);
            if let Ok(j) = keys.binary_search_by(|e| e.0.cmp(&b)) {
                remap[k] = keys[j].1;
            }
        }
    }
    let fix = |i: &mut u32| {
        if *i as usize >= n_own {
            *i = remap[*i as usize - n_own];
        }
    };
    out.indices[3 * own..].iter_mut().for_each(fix);
    out.scratch.pinch.candidates.iter_mut().for_each(fix);
    out.scratch.pinch.candidates.sort_unstable();
    out.scratch.pinch.candidates.dedup();
    out.scratch.shell.border_keys = keys;
    out.scratch.cleanup.remap = remap;
}

/// A case's crossed edges in the order its triangles first use them, and its triangles as
/// indices into that order, counter-clockwise seen from the air.
#[derive(Clone, Copy)]
struct Case {
    edges: [u8; 12],
    edge_count: u8,
    tris: [[u8; 3]; 5],
    tri_count: u8,
}

/// [`Case`] of every case index, from [`TRI_TABLE`].
static CASES: [Case; 256] = case_table();

const fn case_table() -> [Case; 256] {
    let mut out = [Case {
        edges: [0; 12],
        edge_count: 0,
        tris: [[0; 3]; 5],
        tri_count: 0,
    }; 256];
    let mut case = 0;
    while case < 256 {
        let t = &TRI_TABLE[case];
        let c = &mut out[case];
        let mut slot = [u8::MAX; 12];
        let mut i = 0;
        while i < 15 && t[i] >= 0 {
            let mut k = 0;
            while k < 3 {
                let e = t[i + k] as usize;
                if slot[e] == u8::MAX {
                    slot[e] = c.edge_count;
                    c.edges[c.edge_count as usize] = e as u8;
                    c.edge_count += 1;
                }
                k += 1;
            }
            // Reversed: the tables wind clockwise seen from the air.
            let n = c.tri_count as usize;
            c.tris[n] = [
                slot[t[i] as usize],
                slot[t[i + 2] as usize],
                slot[t[i + 1] as usize],
            ];
            c.tri_count += 1;
            i += 3;
        }
        case += 1;
    }
    out
}

/// Per cell edge: its axis and its lower corner (the corner with 0 on that axis).
static EDGE_AXIS_LO: [(u8, u8); 12] = edge_axis_lo();

const fn edge_axis_lo() -> [(u8, u8); 12] {
    let mut out = [(0u8, 0u8); 12];
    let mut e = 0;
    while e < 12 {
        let [c0, c1] = EDGES[e];
        let (a, b) = (CORNERS[c0 as usize], CORNERS[c1 as usize]);
        let mut axis = 0;
        while a[axis] == b[axis] {
            axis += 1;
        }
        out[e] = (axis as u8, if a[axis] == 0 { c0 } else { c1 });
        e += 1;
    }
    out
}

/// The edges whose vertex a cell makes (uses first), by whether the cell is the first of the
/// cell range along x (bit 0), y (bit 1), z (bit 2). Every cell around a crossed edge is a
/// surface cell that uses the edge's vertex, and cells are visited in z, y, x order (by
/// segments of x first), so the first user is the cell around the edge with the lowest
/// coordinates in the range: the edge lies on that cell's upper side along both axes across
/// it, unless the cell is the range's first along one of them.
static CREATES: [u16; 8] = creates_table();

const fn creates_table() -> [u16; 8] {
    let mut out = [0u16; 8];
    let mut first = 0;
    while first < 8 {
        let mut e = 0;
        while e < 12 {
            let (axis, lo) = EDGE_AXIS_LO[e];
            let c = CORNERS[lo as usize];
            let mut creates = true;
            let mut a = 0;
            while a < 3 {
                if a != axis as usize && c[a] == 0 && first >> a & 1 == 0 {
                    creates = false;
                }
                a += 1;
            }
            if creates {
                out[first] |= 1 << e;
            }
            e += 1;
        }
        first += 1;
    }
    out
}

/// Kinds of vertex kept per sample of a layer: the crossings of the edges leaving it along x,
/// y and z, and the sample itself (a crossing exactly on a sample worth 0).
const KINDS: usize = 4;

/// Marching Cubes over the cell range, visited layer by layer ([`surface_cells_by_layer`]):
/// vertex ids are kept for two layers of samples only (the cells of one z layer read no
/// others), so the cache stays small and warm and a large volume needs no per-sample table
/// (a 256² plane: 2 MiB, where one id per grid edge of a 256 × 256 × 160 volume took
/// 168 MiB). Vertices are made with the same arithmetic as [`by_volume_ids`] (the shell's
/// pass), and in its order for a range at most [`crate::cells::SEGMENT`] cells wide.
fn layered(grid: &Grid, out: &mut MeshBuffer) {
    let v = grid.values;
    let sy = grid.dims[0] as usize;
    let plane = sy * grid.dims[1] as usize;
    let layer = KINDS * plane;
    let corner_offset = grid.corner_offsets();
    // Per edge: offsets of its ends in `values`, its z step, and its id's offset in a layer.
    let mut edge = [EdgeGeom::default(); 12];
    for (e, g) in edge.iter_mut().enumerate() {
        let (axis, lo) = EDGE_AXIS_LO[e];
        let c = CORNERS[lo as usize];
        let mut step = [0u32; 3];
        step[axis as usize] = 1;
        let hi_off = corner_offset[lo as usize] + [1, sy, plane][axis as usize];
        let xy = c[0] as usize + c[1] as usize * sy;
        let hi_c = [
            c[0] as u32 + step[0],
            c[1] as u32 + step[1],
            c[2] as u32 + step[2],
        ];
        *g = EdgeGeom {
            axis: axis as usize,
            lo: [c[0] as u32, c[1] as u32, c[2] as u32],
            lo_off: corner_offset[lo as usize],
            hi_off,
            key: [c[2] as usize, axis as usize * plane + xy],
            lo_sample: [c[2] as usize, 3 * plane + xy],
            hi_sample: [
                hi_c[2] as usize,
                3 * plane + hi_c[0] as usize + hi_c[1] as usize * sy,
            ],
        };
    }
    // Old contents need no clearing: edge ids are written before they are read, and the sample
    // planes are cleared layer by layer below. A new cache is zeroed memory, which the system
    // hands out without writing it.
    let mut ids = std::mem::take(&mut out.scratch.layers);
    if ids.len() < 2 * layer {
        ids = vec![0; 2 * layer];
    }
    let mut masks = std::mem::take(&mut out.scratch.masks);
    let mut cur_z = u32::MAX;
    let mut dropped_triangle = false;
    let [cx0, cy0, cz0] = grid.cells_min;
    let reserve = |out: &mut MeshBuffer, s: &LayerMasks| {
        // A vertex per crossed edge at most, about two triangles per vertex: room for the
        // mesh up front saves growing (and copying) the buffers of a fresh mesh.
        let v = s.crossed_edges();
        out.positions.reserve(v);
        out.normals.reserve(v);
        out.materials.reserve(v);
        out.indices.reserve(3 * (2 * v + 16));
    };
    surface_cells_by_layer(
        grid,
        &mut masks,
        out,
        reserve,
        |out, [x, y, z], base, case| {
            if z != cur_z {
                // Sample vertices of layer z + 1 take the slot of layer z − 1. (Edge ids need no
                // clearing: an edge's id is always written by its creating cell before it is read.)
                let s = (z as usize + 1) % 2 * layer + 3 * plane;
                ids[s..s + plane].fill(u32::MAX);
                if cur_z == u32::MAX || z != cur_z + 1 {
                    let s = z as usize % 2 * layer + 3 * plane;
                    ids[s..s + plane].fill(u32::MAX);
                }
                cur_z = z;
            }
            let local = base - z as usize * plane;
            let slot = [
                z as usize % 2 * layer + local,
                (z as usize + 1) % 2 * layer + local,
            ];
            let c = &CASES[case];
            // Every corner's central differences lie inside the grid: no border cases.
            let interior = x >= 1
                && y >= 1
                && z >= 1
                && x + 2 < grid.dims[0]
                && y + 2 < grid.dims[1]
                && z + 2 < grid.dims[2];
            let creates = CREATES
                [usize::from(x == cx0) | usize::from(y == cy0) << 1 | usize::from(z == cz0) << 2];
            let mut vid = [0u32; 12];
            let mut on_sample = false;
            let n = c.edge_count as usize;
            for (vertex, &e) in vid.iter_mut().zip(&c.edges[..n]) {
                let e = e as usize;
                let g = &edge[e];
                let (ia, ib) = (base + g.lo_off, base + g.hi_off);
                let (va, vb) = (v[ia], v[ib]);
                let ga = [x + g.lo[0], y + g.lo[1], z + g.lo[2]];
                *vertex = if va == 0.0 || vb == 0.0 {
                    // A crossing exactly on a sample (value 0, which is air) is that sample's
                    // vertex.
                    on_sample = true;
                    let (key, gs) = if va == 0.0 {
                        (slot[g.lo_sample[0]] + g.lo_sample[1], ga)
                    } else {
                        let mut gb = ga;
                        gb[g.axis] += 1;
                        (slot[g.hi_sample[0]] + g.hi_sample[1], gb)
                    };
                    let id = ids[key];
                    if id != u32::MAX {
                        id
                    } else {
                        let id = out.positions.len() as u32;
                        out.positions.push(grid.position(gs.map(|c| c as f32)));
                        out.normals.push(grid.gradient(gs[0], gs[1], gs[2]));
                        out.materials.push(sample_material(grid, gs));
                        out.scratch.pinch.candidates.push(id);
                        ids[key] = id;
                        id
                    }
                } else {
                    let key = slot[g.key[0]] + g.key[1];
                    if creates >> e & 1 == 0 {
                        ids[key]
                    } else {
                        let t = va / (va - vb);
                        let mut p = ga.map(|c| c as f32);
                        p[g.axis] += t;
                        let (na, nb) = if interior {
                            (central(v, ia, sy, plane), central(v, ib, sy, plane))
                        } else {
                            let mut gb = ga;
                            gb[g.axis] += 1;
                            (
                                grid.gradient(ga[0], ga[1], ga[2]),
                                grid.gradient(gb[0], gb[1], gb[2]),
                            )
                        };
                        let id = out.positions.len() as u32;
                        out.positions.push(grid.position(p));
                        out.normals.push([
                            na[0] + t * (nb[0] - na[0]),
                            na[1] + t * (nb[1] - na[1]),
                            na[2] + t * (nb[2] - na[2]),
                        ]);
                        out.materials.push(inside_material(grid, ia, ib, va));
                        ids[key] = id;
                        id
                    }
                };
            }
            for t in &c.tris[..c.tri_count as usize] {
                let [a, b, d] = t.map(|k| vid[k as usize]);
                if on_sample && (a == b || b == d || a == d) {
                    // Its vertices may now be unused: let the clean-up compact them.
                    dropped_triangle = true;
                    continue;
                }
                out.indices.extend_from_slice(&[a, b, d]);
            }
        },
    );
    out.scratch.masks = masks;
    out.scratch.layers = ids;
    out.scratch.dropped_triangle |= dropped_triangle;
    flag_zero_area(out, 0);
}

/// [`Grid::gradient`] at sample index `i` away from the grid's border.
#[inline(always)]
fn central(v: &[f32], i: usize, sy: usize, sz: usize) -> [f32; 3] {
    [
        v[i + 1] - v[i - 1],
        v[i + sy] - v[i - sy],
        v[i + sz] - v[i - sz],
    ]
}

/// Where an edge of a cell lies, for [`layered`].
#[derive(Clone, Copy, Default)]
struct EdgeGeom {
    /// Its axis.
    axis: usize,
    /// Its lower end, relative to the cell's lowest corner.
    lo: [u32; 3],
    /// Offsets of its lower and upper ends in `values` from the cell's lowest corner.
    lo_off: usize,
    hi_off: usize,
    /// Its vertex id's place: (z step of the layer, offset in the layer).
    key: [usize; 2],
    /// The places of its ends' sample vertices.
    lo_sample: [usize; 2],
    hi_sample: [usize; 2],
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
        let id = out.scratch.vertex_ids.sample_ids[s];
        if id != u32::MAX {
            return id;
        }
        let id = out.positions.len() as u32;
        out.positions.push(grid.position(g.map(|c| c as f32)));
        out.normals.push(grid.gradient(g[0], g[1], g[2]));
        out.materials.push(sample_material(grid, g));
        out.scratch.vertex_ids.sample_ids[s] = id;
        out.scratch.vertex_ids.sample_written.push(s);
        out.scratch.pinch.candidates.push(id);
        return id;
    }
    let key = 3 * ia + axis;
    let id = out.scratch.vertex_ids.ids[key];
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
    out.scratch.vertex_ids.ids[key] = id;
    out.scratch.vertex_ids.written.push(key);
    id
}

/// The material of the inside end of an edge.
#[inline]
fn inside_material(grid: &Grid, ia: usize, ib: usize, va: f32) -> u8 {
    grid.material(if va < 0.0 { ia } else { ib })
}

/// The material of the vertex on sample `g` (worth exactly 0, so air, with a crossed edge to
/// an inside neighbour): that of its deepest inside axis neighbour (the least value; the first
/// in the order −x, +x, −y, +y, −z, +z on a tie). It depends on the samples alone, not on
/// which of the sample's edges a traversal reaches first, so every pass (layered, per edge,
/// a chunk or the whole volume) gives the vertex the same material.
#[cold]
fn sample_material(grid: &Grid, g: [u32; 3]) -> u8 {
    if grid.materials.is_empty() {
        return 0;
    }
    let mut best: Option<(f32, usize)> = None;
    for a in 0..3 {
        for up in [false, true] {
            let mut n = g;
            if up {
                if n[a] + 1 >= grid.dims[a] {
                    continue;
                }
                n[a] += 1;
            } else {
                if n[a] == 0 {
                    continue;
                }
                n[a] -= 1;
            }
            let i = grid.index(n[0], n[1], n[2]);
            let v = grid.values[i];
            if v < 0.0 && best.is_none_or(|(b, _)| v < b) {
                best = Some((v, i));
            }
        }
    }
    best.map_or(0, |(_, i)| grid.material(i))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A triangle corner: position, normal and material bits.
    type Corner = ([u32; 3], [u32; 3], u8);

    /// The mesh as a sorted list of triangles, each its corners' position, normal and
    /// material bits, rotated to start at its least corner (the orientation is kept).
    fn triangles(out: &MeshBuffer) -> Vec<[Corner; 3]> {
        let corner = |i: u32| {
            let i = i as usize;
            (
                out.positions[i].map(f32::to_bits),
                out.normals[i].map(f32::to_bits),
                out.materials.get(i).copied().unwrap_or(0),
            )
        };
        let mut t: Vec<_> = out
            .indices
            .chunks_exact(3)
            .map(|t| {
                let c = [corner(t[0]), corner(t[1]), corner(t[2])];
                let k = (0..3).min_by_key(|&k| c[k]).expect("three corners");
                [c[k], c[(k + 1) % 3], c[(k + 2) % 3]]
            })
            .collect();
        t.sort_unstable();
        t
    }

    /// The layered pass, which visits a grid wider than one segment layer by layer with two
    /// layers of vertex ids, makes the triangles of the pass with one id per grid edge
    /// (`by_volume_ids`), bit for bit, on wide grids of small integers with many exact zeros
    /// (vertices on samples), with materials and a cell range inside the grid.
    #[test]
    fn layers_of_a_wide_grid_make_the_per_edge_pass_mesh() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for case in 0..40 {
            let dims = [
                64 + next(140) as u32,
                2 + next(7) as u32,
                2 + next(7) as u32,
            ];
            let n = dims.iter().product::<u32>() as usize;
            let values: Vec<f32> = (0..n).map(|_| next(5) as f32 - 2.0).collect();
            let materials: Vec<u8> = (0..n).map(|_| next(4) as u8).collect();
            let mut grid = Grid::volume(&values, dims, 0.5);
            grid.materials = &materials;
            if case % 2 == 1 {
                grid.cells_min = [1, 0, 0];
                grid.cells_max = [dims[0] - 2, dims[1] - 1, dims[2] - 1];
            }
            let (mut a, mut b) = (MeshBuffer::default(), MeshBuffer::default());
            a.clear();
            layered(&grid, &mut a);
            b.clear();
            by_volume_ids(&grid, &mut b, false);
            flag_zero_area(&mut b, 0);
            assert!(!a.indices.is_empty(), "case {case}: a surface");
            let (ta, tb) = (triangles(&a), triangles(&b));
            if ta != tb {
                let only_a: Vec<_> = ta.iter().filter(|t| !tb.contains(t)).take(3).collect();
                let only_b: Vec<_> = tb.iter().filter(|t| !ta.contains(t)).take(3).collect();
                panic!(
                    "case {case}: dims {dims:?}: {} vs {} triangles; only layered {only_a:?}; only per edge {only_b:?}",
                    ta.len(),
                    tb.len()
                );
            }
        }
    }
}
