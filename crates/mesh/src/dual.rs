//! The dual-contouring skeleton shared by Surface Nets and Dual Contouring: one vertex per
//! surface cell, one quad per crossed grid edge joining the four cells around it.
//!
//! Edge ownership makes chunks seamless: a grid edge belongs to the chunk owning its lower
//! end sample, so every edge is meshed by exactly one chunk. Its quad reads the cells on the
//! edge's low side too (cell −1 of the chunk), whose vertices are computed from those cells'
//! own samples, identically in both chunks.

use crate::buffer::MeshBuffer;
use crate::grid::Grid;
use crate::normals::{cross, finish, push_triangle};
use crate::tables::{CORNERS, EDGES, TRI_TABLE};

/// The surface crossings of one cell, in cell-local grid units (`[0, 1]³`).
pub(crate) struct Crossings {
    /// Crossing points.
    pub points: [[f32; 3]; 12],
    /// Field gradient at each crossing (not normalised).
    pub normals: [[f32; 3]; 12],
    /// Number of crossings.
    pub len: usize,
    /// The cell's corner values in [`CORNERS`] order.
    pub corners: [f32; 8],
}

/// Runs the dual mesher: `place` turns a cell's crossings into its vertex (cell-local grid
/// units, inside `[0, 1]³`).
pub(crate) fn dual_mesh(grid: &Grid, out: &mut MeshBuffer, place: impl Fn(&Crossings) -> [f32; 3]) {
    grid.check();
    out.clear();
    if grid.is_uniform() {
        return;
    }
    let n = grid.len();
    out.scratch.prepare(4 * n, 0);
    if out.scratch.cases.len() < n {
        out.scratch.cases.resize(n, NO_CASE);
    }
    let (sy, sz) = (
        grid.dims[0] as usize,
        grid.dims[0] as usize * grid.dims[1] as usize,
    );
    let corner_offset = CORNERS.map(|c| c[0] as usize + c[1] as usize * sy + c[2] as usize * sz);
    let ctx = Ctx {
        grid,
        corner_offset,
        place: &place,
    };
    // One quad per owned crossed edge.
    let stride = [1usize, sy, sz];
    for z in grid.cells_min[2]..grid.cells_max[2] {
        for y in grid.cells_min[1]..grid.cells_max[1] {
            for x in grid.cells_min[0]..grid.cells_max[0] {
                let p = [x, y, z];
                let base = grid.index(x, y, z);
                let v0 = grid.values[base];
                for a in 0..3 {
                    let (b, c) = ((a + 1) % 3, (a + 2) % 3);
                    if p[b] == 0 || p[c] == 0 {
                        continue;
                    }
                    let v1 = grid.values[base + stride[a]];
                    if (v0 < 0.0) == (v1 < 0.0) {
                        continue;
                    }
                    // The edge starts at cell-local corner d of the cell p − d.
                    let mut cell = |d: [u32; 3], i: usize| {
                        let q = [p[0] - d[0], p[1] - d[1], p[2] - d[2]];
                        ctx.vertex(out, q, i, EDGE_AT[a][corner_index(d)])
                    };
                    let (eb, ec) = (unit(b), unit(c));
                    let ids = [
                        cell(
                            [eb[0] + ec[0], eb[1] + ec[1], eb[2] + ec[2]],
                            base - stride[b] - stride[c],
                        ),
                        cell(ec, base - stride[c]),
                        cell([0; 3], base),
                        cell(eb, base - stride[b]),
                    ];
                    let q = if v0 < 0.0 {
                        ids
                    } else {
                        [ids[3], ids[2], ids[1], ids[0]]
                    };
                    push_quad(out, q);
                }
            }
        }
    }
    out.scratch.reset();
    finish(out);
}

fn unit(a: usize) -> [u32; 3] {
    let mut e = [0; 3];
    e[a] = 1;
    e
}

struct Ctx<'g, 'a, F> {
    grid: &'g Grid<'a>,
    corner_offset: [usize; 8],
    place: &'g F,
}

impl<F: Fn(&Crossings) -> [f32; 3]> Ctx<'_, '_, F> {
    /// The vertex of the surface patch through local edge `edge` of cell `cell` (grid sample
    /// index `base`), made on first use.
    fn vertex(&self, out: &mut MeshBuffer, cell: [u32; 3], base: usize, edge: u8) -> u32 {
        let (grid, corner_offset) = (self.grid, &self.corner_offset);
        // The cell's case is cached: a cell is asked for by up to 12 quads.
        let mut inside = out.scratch.cases[base] as usize;
        if inside == NO_CASE as usize {
            inside = 0;
            for (m, off) in corner_offset.iter().enumerate() {
                if grid.values[base + off] < 0.0 {
                    inside |= 1 << m;
                }
            }
            out.scratch.cases[base] = inside as u16;
            out.scratch.case_written.push(base);
        }
        let component = PATCH_OF_EDGE[inside][edge as usize];
        debug_assert!(component != NO_PATCH, "edge not crossed");
        let key = 4 * base + component as usize;
        let id = out.scratch.ids[key];
        if id != u32::MAX {
            return id;
        }
        let mut cr = Crossings {
            points: [[0.0; 3]; 12],
            normals: [[0.0; 3]; 12],
            len: 0,
            corners: [0.0; 8],
        };
        for (m, off) in corner_offset.iter().enumerate() {
            cr.corners[m] = grid.values[base + off];
        }
        let [x, y, z] = cell;
        let mut grads: [Option<[f32; 3]>; 8] = [None; 8];
        // The material of the deepest inside corner (first in corner order on ties).
        let mut deepest = (f32::INFINITY, base);
        for off in corner_offset {
            let v = grid.values[base + off];
            if v < deepest.0 {
                deepest = (v, base + off);
            }
        }
        for (e, [c0, c1]) in EDGES.into_iter().enumerate() {
            let (a, b) = (c0 as usize, c1 as usize);
            if PATCH_OF_EDGE[inside][e] != component {
                continue;
            }
            let (a, b) = if corner_offset[a] < corner_offset[b] {
                (a, b)
            } else {
                (b, a)
            };
            let (va, vb) = (cr.corners[a], cr.corners[b]);
            let t = va / (va - vb);
            let (ca, cb) = (CORNERS[a].map(f32::from), CORNERS[b].map(f32::from));
            let mut at = |c: usize| {
                *grads[c].get_or_insert_with(|| {
                    grid.gradient(
                        x + u32::from(CORNERS[c][0]),
                        y + u32::from(CORNERS[c][1]),
                        z + u32::from(CORNERS[c][2]),
                    )
                })
            };
            let (ga, gb) = (at(a), at(b));
            let k = cr.len;
            for i in 0..3 {
                cr.points[k][i] = ca[i] + t * (cb[i] - ca[i]);
                cr.normals[k][i] = ga[i] + t * (gb[i] - ga[i]);
            }
            cr.len += 1;
        }
        let local = (self.place)(&cr);
        let mut normal = [0.0f32; 3];
        for g in &cr.normals[..cr.len] {
            let l = (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt();
            if l > 0.0 && l.is_finite() {
                normal = [
                    normal[0] + g[0] / l,
                    normal[1] + g[1] / l,
                    normal[2] + g[2] / l,
                ];
            }
        }
        let id = out.positions.len() as u32;
        out.positions.push(grid.position([
            x as f32 + local[0],
            y as f32 + local[1],
            z as f32 + local[2],
        ]));
        out.normals.push(normal);
        out.materials.push(grid.material(deepest.1));
        out.scratch.ids[key] = id;
        out.scratch.written.push(key);
        id
    }
}

/// Marks a cell whose case is not cached yet.
pub(crate) const NO_CASE: u16 = u16::MAX;

/// Marks an edge no patch crosses.
const NO_PATCH: u8 = u8::MAX;

/// For each Marching Cubes case and cell edge, which surface patch of the cell the edge's
/// crossing belongs to (patches numbered by their lowest edge), from the triangles of
/// [`TRI_TABLE`]. A cell gets one dual vertex per patch, not per cell, which makes the dual
/// mesh manifold where plain Surface Nets joins separate sheets in one vertex (Nielson 2004,
/// "Dual Marching Cubes").
static PATCH_OF_EDGE: [[u8; 12]; 256] = patch_table();

const fn patch_table() -> [[u8; 12]; 256] {
    let mut out = [[NO_PATCH; 12]; 256];
    let mut case = 0;
    while case < 256 {
        // Union-find over the 12 edges, joined by shared triangles.
        let mut parent = [0u8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11];
        let mut used = [false; 12];
        let t = &TRI_TABLE[case];
        let mut i = 0;
        while i < 15 && t[i] >= 0 {
            let (a, b, c) = (t[i] as usize, t[i + 1] as usize, t[i + 2] as usize);
            used[a] = true;
            used[b] = true;
            used[c] = true;
            let ra = root(&parent, a);
            let rb = root(&parent, b);
            parent[rb] = ra as u8;
            let ra = root(&parent, a);
            let rc = root(&parent, c);
            parent[rc] = ra as u8;
            i += 3;
        }
        // Number the patches in order of their lowest edge.
        let mut label = [NO_PATCH; 12];
        let mut next = 0u8;
        let mut e = 0;
        while e < 12 {
            if used[e] {
                let r = root(&parent, e);
                if label[r] == NO_PATCH {
                    label[r] = next;
                    next += 1;
                }
                out[case][e] = label[r];
            }
            e += 1;
        }
        case += 1;
    }
    out
}

const fn root(parent: &[u8; 12], mut i: usize) -> usize {
    while parent[i] as usize != i {
        i = parent[i] as usize;
    }
    i
}

/// Local index of the cell corner at offset `d` (each 0 or 1), in [`CORNERS`] order.
fn corner_index(d: [u32; 3]) -> usize {
    CORNERS
        .iter()
        .position(|c| c.map(u32::from) == d)
        .expect("a corner")
}

/// `EDGE_AT[axis][corner]`: the local edge leaving `corner` along `+axis` (only meaningful
/// where the corner has 0 on that axis).
static EDGE_AT: [[u8; 8]; 3] = edge_at_table();

const fn edge_at_table() -> [[u8; 8]; 3] {
    let mut out = [[u8::MAX; 8]; 3];
    let mut e = 0;
    while e < 12 {
        let [c0, c1] = EDGES[e];
        let (a, b) = (CORNERS[c0 as usize], CORNERS[c1 as usize]);
        let mut axis = 0;
        while axis < 3 {
            if a[axis] != b[axis] {
                let lo = if a[axis] < b[axis] { c0 } else { c1 };
                out[axis][lo as usize] = e as u8;
            }
            axis += 1;
        }
        e += 1;
    }
    out
}

/// Splits a quad along its shorter diagonal (ties: 0–2), unless that split makes a
/// zero-area triangle and the other does not.
fn push_quad(out: &mut MeshBuffer, q: [u32; 4]) {
    let p = |i: u32| out.positions[i as usize];
    let d2 = |a: [f32; 3], b: [f32; 3]| {
        (a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)
    };
    let flat = |a: u32, b: u32, c: u32| {
        let (pa, pb, pc) = (p(a), p(b), p(c));
        let n = cross(
            [pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2]],
            [pc[0] - pa[0], pc[1] - pa[1], pc[2] - pa[2]],
        );
        n == [0.0; 3]
    };
    let mut first = d2(p(q[0]), p(q[2])) <= d2(p(q[1]), p(q[3]));
    let degenerate = |first: bool| {
        if first {
            flat(q[0], q[1], q[2]) || flat(q[0], q[2], q[3])
        } else {
            flat(q[1], q[2], q[3]) || flat(q[1], q[3], q[0])
        }
    };
    if degenerate(first) && !degenerate(!first) {
        first = !first;
    }
    if first {
        push_triangle(out, q[0], q[1], q[2]);
        push_triangle(out, q[0], q[2], q[3]);
    } else {
        push_triangle(out, q[1], q[2], q[3]);
        push_triangle(out, q[1], q[3], q[0]);
    }
}
