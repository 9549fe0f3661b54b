//! The dual-contouring skeleton shared by Surface Nets and Dual Contouring: one vertex per
//! surface cell, one quad per crossed grid edge joining the four cells around it.
//!
//! Vertex normals (and Dual Contouring's crossing normals) are the gradient of the cell's
//! trilinear interpolant, read from the cell's own eight samples, as in Gibson's Surface Nets
//! and fast-surface-nets: a vertex shared by two chunks is computed from the same samples in
//! both, and no halo beyond the cell below the chunk is needed.
//!
//! Edge ownership makes chunks seamless: a grid edge belongs to the chunk owning its lower
//! end sample, so every edge is meshed by exactly one chunk. Its quad reads the cells on the
//! edge's low side too (cell −1 of the chunk), whose vertices are computed from those cells'
//! own samples, identically in both chunks.

use crate::buffer::MeshBuffer;
use crate::cells::{CASE_OF_PAIRS, for_each_shell_cell, for_each_surface_cell, shell_range};
use crate::crossings::ROW_OF_CORNER;
use crate::grid::Grid;
use crate::lanes::F32x4;
use crate::level_seams::{Class, FineEdge, SeamVertices, Seams, cube_edge};
use crate::normals::{finish, near_border, needs_shell};
use crate::pinch::OpenBorder;
use crate::tables::{CORNERS, EDGES, TRI_TABLE};

/// Runs the dual mesher: `place(corners, edges)` turns a cell patch (the cell's corner values
/// in row order, [`ROW_OF_CORNER`], and the bit set of the patch's crossed edges, see
/// [`crate::crossings::Crossings::new`]) into its vertex (cell-local grid units, inside
/// `[0, 1]³`) and the vertex normal (not normalised).
pub(crate) fn dual_mesh(
    grid: &Grid,
    out: &mut MeshBuffer,
    place: impl Fn(&[f32; 8], u16) -> ([f32; 3], [f32; 3]),
) {
    dual_mesh_with(grid, out, place, None, |_, _| unreachable!("no seams"));
}

/// [`dual_mesh`] for a grid whose neighbours may be of other levels (`seams`, see
/// [`crate::level_seams`]): the edges around its special cells are left to the seam pass,
/// which places a polyhedral cell's patch with `place_cell(corners, crossings)` (cell-local
/// crossings of the patch, corners in row order).
pub(crate) fn dual_mesh_with(
    grid: &Grid,
    out: &mut MeshBuffer,
    place: impl Fn(&[f32; 8], u16) -> ([f32; 3], [f32; 3]),
    seams: Option<&Seams>,
    place_cell: impl Fn(&[f32; 8], &[[f32; 3]]) -> ([f32; 3], [f32; 3]),
) {
    grid.check();
    out.clear();
    // A grid of one sign can still meet a finer neighbour's surface on its border.
    let finer = seams.is_some_and(|s| s.has_finer());
    if grid.is_uniform() && !finer {
        return;
    }
    out.scratch.exact_frame = true;
    out.scratch.vanished = false;
    let n = grid.len();
    out.scratch.vertex_ids.prepare(n, 0);
    out.scratch.extra_patches.clear();
    // The candidates' corners are listed as their quads are pushed (see `make_vertex`).
    out.scratch.pinch.corners.clear();
    out.scratch.pinch.recorded = true;
    let (sy, sz) = (
        grid.dims[0] as usize,
        grid.dims[0] as usize * grid.dims[1] as usize,
    );
    let corner_offset = grid.corner_offsets();
    // The cells (by sample index) whose edges the seam pass meshes, and those whose vertices
    // may lie on a seam between levels (their slivers stay).
    let (special, pin) = match seams {
        Some(s) => s.special_and_pinned(grid),
        None => (Vec::new(), Vec::new()),
    };
    let ctx = Ctx {
        grid,
        corner_offset,
        strides: [sy, sz],
        voxel_size: F32x4::splat(grid.voxel_size),
        place: &place,
        pin: &pin,
    };
    // One quad per owned crossed edge. An owned edge starts at a sample p of the cell range,
    // so it is an edge of cell p at its corner 0: only surface cells need looking at.
    let stride = [1usize, sy, sz];
    // A quad needs the cells below its edge on the two other axes: where the range starts at
    // cell 0 on an axis, a cell there has no quads along the other two.
    let low_border = grid.cells_min.contains(&0);
    let mut masks = std::mem::take(&mut out.scratch.masks);

    // One body for the range's cells and the shell's, written out at both calls (a closure
    // called from two places is not inlined into the per-cell loop).
    macro_rules! visit {
        ($out:ident, $p:ident, $base:ident, $case:ident) => {{
            let (out, p, base, case): (&mut MeshBuffer, [u32; 3], usize, usize) =
                ($out, $p, $base, $case);
            // In the cell range, visited once and before any quad reads the cell (quads read
            // cells at or below `base`), so the entry is still empty: it takes the case until the
            // vertex is made. In the shell, a quad of the range may have made its vertex already.
            if out.scratch.vertex_ids.ids[base] == u32::MAX {
                out.scratch.vertex_ids.ids[base] = LOOK_FURTHER | NO_VERTEX | case as u32;
                out.scratch.vertex_ids.written.push(base);
            }
            let inside0 = case & 1;
            let mut axes = CROSSED_AXES[case & 0xff];
            if low_border {
                let [x, y, z] = p.map(|c| u8::from(c > 0));
                axes &= (y & z) | (z & x) << 1 | (x & y) << 2;
            }
            for (a, &(b, c)) in NEXT_AXES.iter().enumerate() {
                if axes >> a & 1 == 0 {
                    continue;
                }
                let (sb, sc) = (stride[b], stride[c]);
                let e = QUAD_EDGES[a];
                // The four cells' entries, read at once: making one cell's vertex writes only
                // that cell's entry.
                let cells = [base - sb - sc, base - sc, base, base - sb];
                if !special.is_empty() && cells.iter().any(|&i| special[i]) {
                    continue;
                }
                let entries = cells.map(|i| out.scratch.vertex_ids.ids[i]);
                let ids = [
                    ctx.vertex(out, entries[0], cells[0], e[0], || back(p, b, c, 1, 1)),
                    ctx.vertex(out, entries[1], cells[1], e[1], || back(p, b, c, 0, 1)),
                    ctx.vertex(out, entries[2], cells[2], e[2], || p),
                    ctx.vertex(out, entries[3], cells[3], e[3], || back(p, b, c, 1, 0)),
                ];
                // Inside at the edge's start: the surface faces +a.
                let q = if inside0 == 1 {
                    ids
                } else {
                    [ids[3], ids[2], ids[1], ids[0]]
                };
                push_quad(out, q);
            }
        }};
    }
    for_each_surface_cell(grid, &mut masks, |p, base, case| visit!(out, p, base, case));
    if let Some(s) = seams {
        ctx.seam_polygons(out, s, &place_cell);
    }
    // Where the range's own mesh holds something for the clean-up near its border, the quads
    // of the grid edges one layer beyond the range (from the samples of its shell of cells)
    // are added as ghosts, where the grid holds them: `finish` decides what lies on the
    // border from the same triangles as the chunk across it, then drops them.
    // A vertex's quads reach the shell where it lies in cell min − 1 or max − 1.
    let shell = shell_range(grid, 1).is_some();
    // A candidate is dropped (below) only where the clean-up will neither merge vertices nor
    // split slivers, which could make it a candidate again, on fewer triangles than the
    // shell would give it.
    let near_candidate = shell && {
        let near = near_border(out, grid, [0.0, 1.0]);
        out.scratch.pinch.candidates.iter().any(|&v| near(v))
    };
    let merges = near_candidate
        && (out.scratch.has_degenerate || crate::normals::boundary_vertices_meet(out));
    let stays = |out: &MeshBuffer, v: u32| {
        !merges
            && out
                .scratch
                .pinch
                .cells
                .iter()
                .find(|c| c.0 == v)
                .is_some_and(|&(_, cell, patch)| ctx.pinch_stays(cell, patch))
    };
    if shell && needs_shell(out, grid, [0.0, 1.0], |out| ctx.twin_outside(out), stays) {
        let own = out.indices.len() / 3;
        out.scratch.shell.own_vertices = out.positions.len();
        for_each_shell_cell(grid, &mut masks, |p, base, case| visit!(out, p, base, case));
        out.scratch.shell.ghost.clear();
        out.scratch.shell.ghost.resize(own, false);
        out.scratch.shell.ghost.resize(out.indices.len() / 3, true);
        out.scratch.shell.made = out.positions.len();
        out.scratch.shell.dense = true;
        out.scratch.shell.renumbered = false;
    } else if shell {
        // The candidates whose quads reach the shell all stay as they are (`needs_shell`):
        // without the shell's triangles they must not be split, so they are no candidates.
        let gone: Vec<u32> = {
            let near = near_border(out, grid, [0.0, 1.0]);
            let cand = &out.scratch.pinch.candidates;
            cand.iter().copied().filter(|&v| near(v)).collect()
        };
        if !gone.is_empty() {
            let pinch = &mut out.scratch.pinch;
            pinch.candidates.retain(|v| !gone.contains(v));
            pinch.corners.retain(|c| !gone.contains(&c.0));
        }
    }
    out.scratch.masks = masks;
    out.scratch.vertex_ids.reset();
    if grid.materials.is_empty() {
        out.materials.resize(out.positions.len(), 0);
    }
    finish(out, OpenBorder::of(grid));
}

/// Cell `p` moved back by `db` along axis `b` and `dc` along axis `c`.
#[inline(always)]
fn back(mut p: [u32; 3], b: usize, c: usize, db: u32, dc: u32) -> [u32; 3] {
    p[b] -= db;
    p[c] -= dc;
    p
}

/// For each Marching Cubes case, bit `a` set when the cell's edge from corner 0 along axis
/// `a` is crossed (the edges whose quads the cell emits).
static CROSSED_AXES: [u8; 256] = {
    // The corner at the other end of corner 0's edge along x, y, z.
    const FAR_CORNER: [usize; 3] = [1, 3, 4];
    let mut out = [0u8; 256];
    let mut case = 0;
    while case < 256 {
        let mut a = 0;
        while a < 3 {
            if (case >> FAR_CORNER[a]) & 1 != case & 1 {
                out[case] |= 1 << a;
            }
            a += 1;
        }
        case += 1;
    }
    out
};

/// The two axes after each axis, cyclically: `(a + 1) % 3, (a + 2) % 3`.
const NEXT_AXES: [(usize, usize); 3] = [(1, 2), (2, 0), (0, 1)];

/// For a quad around an edge along axis `a` from sample `p`: the edge's local index in the
/// cells `p − e_b − e_c`, `p − e_c`, `p`, `p − e_b` (b, c the next axes), in that order.
static QUAD_EDGES: [[u8; 4]; 3] = quad_edges_table();

const fn quad_edges_table() -> [[u8; 4]; 3] {
    let mut out = [[0u8; 4]; 3];
    let mut a = 0;
    while a < 3 {
        let (b, c) = ((a + 1) % 3, (a + 2) % 3);
        // Offsets of the edge's start within each cell: e_b + e_c, e_c, 0, e_b.
        let ds = [(1, 1), (0, 1), (0, 0), (1, 0)];
        let mut k = 0;
        while k < 4 {
            let mut d = [0u8; 3];
            d[b] = ds[k].0;
            d[c] = ds[k].1;
            let mut corner = 0;
            while !(CORNERS[corner][0] == d[0]
                && CORNERS[corner][1] == d[1]
                && CORNERS[corner][2] == d[2])
            {
                corner += 1;
            }
            out[a][k] = EDGE_AT[a][corner];
            k += 1;
        }
        a += 1;
    }
    out
}

struct Ctx<'g, 'a, F> {
    grid: &'g Grid<'a>,
    corner_offset: [usize; 8],
    /// Sample index strides along y and z.
    strides: [usize; 2],
    /// The voxel size in every lane.
    voxel_size: F32x4,
    place: &'g F,
    /// Per cell (sample index), whether its vertices are pinned (`scratch.pinned`); empty
    /// without levels of detail.
    pin: &'g [bool],
}

impl<F: Fn(&[f32; 8], u16) -> ([f32; 3], [f32; 3])> Ctx<'_, '_, F> {
    /// The vertex of the surface patch through local edge `edge` of the cell at grid sample
    /// index `base` (coordinates `cell()`, only asked for when the vertex is made; `id` its
    /// `ids` entry), made on first use.
    #[inline(always)]
    fn vertex(
        &self,
        out: &mut MeshBuffer,
        id: u32,
        base: usize,
        edge: u8,
        cell: impl FnOnce() -> [u32; 3],
    ) -> u32 {
        // The common case, inline: a cell of one patch whose vertex is made (a cell is asked
        // for by up to 12 quads).
        if id & LOOK_FURTHER == 0 {
            return id;
        }
        self.make_vertex(out, base, edge, cell())
    }

    /// The corner values of the cell at sample index `base`, in row order
    /// ([`ROW_OF_CORNER`]): two samples from each of the cell's four x-rows.
    #[inline(always)]
    fn corners(&self, base: usize) -> [f32; 8] {
        let (v, [sy, sz]) = (self.grid.values, self.strides);
        let row = |i: usize| -> [f32; 2] {
            let r = &v[i..][..2];
            [r[0], r[1]]
        };
        let (r0, r1, r2, r3) = (
            row(base),
            row(base + sy),
            row(base + sz),
            row(base + sy + sz),
        );
        [r0[0], r0[1], r1[0], r1[1], r2[0], r2[1], r3[0], r3[1]]
    }

    /// [`Self::vertex`] past the common case: finds the cell's case, a further patch's
    /// vertex, or makes the vertex.
    #[inline(never)]
    fn make_vertex(&self, out: &mut MeshBuffer, base: usize, edge: u8, cell: [u32; 3]) -> u32 {
        let entry = out.scratch.vertex_ids.ids[base];
        let (grid, corner_offset) = (self.grid, &self.corner_offset);
        let corners = self.corners(base);
        // A visited cell without its vertex carries its case; other cells' (the cells below
        // the range, and cells whose patch 0 has its vertex) comes from the corners.
        let inside = if entry & NO_VERTEX != 0 && entry != u32::MAX {
            (entry & 0xff) as usize
        } else {
            case_of(&corners)
        };
        let component = PATCH_OF_EDGE[inside][edge as usize];
        debug_assert!(component != NO_PATCH, "edge not crossed");
        // Patch 0 of a cell keeps its vertex id in `ids`; the rare further patches of an
        // ambiguous cell in a short list.
        let key = base;
        let id = if component == 0 {
            if entry & NO_VERTEX != 0 {
                u32::MAX
            } else {
                entry & !LOOK_FURTHER
            }
        } else {
            out.scratch
                .extra_patches
                .get(base, component)
                .unwrap_or(u32::MAX)
        };
        if id != u32::MAX {
            if PINCH_PATCHES[inside] >> component & 1 != 0 {
                crate::pinch::list_corners(out, id);
            }
            return id;
        }
        let (local, normal) = self.place_patch(&corners, inside, component);
        // A vanished gradient (`finish` gives the vertex its triangles' normal instead).
        let l2 = normal[0] * normal[0] + normal[1] * normal[1] + normal[2] * normal[2];
        out.scratch.vanished |= !(l2 > crate::normals::MIN_LEN2 && l2.is_finite());
        let id = out.positions.len() as u32;
        // `grid.position(cell + local)`, lane by lane, exactly: the cell-local coordinate is
        // rounded to a multiple of 2⁻¹⁷ (adding and taking away 64 does it), so that the sum
        // with the cell's index from the origin (an integer below 128 in size, as in every
        // chunk grid) is exact. The vertex is then the same point in every grid that holds its
        // cell, whatever the grid's origin: both chunks that share it agree bit for bit in
        // world space (`origin + position`, where the voxel size is a power of two).
        let (q, [px, py, pz]) = self.position(cell, local);
        // A vertex on its cell's boundary may coincide with the vertex of a neighbour cell:
        // where two do, the clean-up merges vertices by position (`remove_degenerate`), which
        // is how twins made of coincident vertices are found. (Decided by the vertices alone,
        // so the same in every grid that holds them.)
        if q.iter().any(|&c| c == 0.0 || c == 1.0) {
            out.scratch.boundary.push(id);
            // In a cell whose quads reach the shell (min − 1 or max − 1 on an axis): a
            // zero-area triangle of the shell may hold it; and on a face toward a cell whose
            // vertices the range does not make (below min − 1, above max − 1), its twin may be
            // a vertex of the shell (`twin_outside`).
            let (lo, hi) = (self.grid.cells_min, self.grid.cells_max);
            if (0..3).any(|a| cell[a] + 1 == lo[a] || cell[a] + 1 == hi[a]) {
                let outward = (0..3).any(|a| {
                    (q[a] == 0.0 && cell[a] + 1 == lo[a]) || (q[a] == 1.0 && cell[a] + 1 == hi[a])
                });
                out.scratch
                    .boundary_out
                    .push((id, cell, component, outward));
            }
        }
        out.positions.push([px, py, pz]);
        out.normals.push(normal);
        // The material of the deepest inside corner (first in corner order on ties); a grid
        // without materials has material 0 everywhere, filled in at the end.
        if !grid.materials.is_empty() {
            let mut deepest = (f32::INFINITY, 0);
            for (m, &r) in ROW_OF_CORNER.iter().enumerate() {
                let v = corners[r as usize];
                if v < deepest.0 {
                    deepest = (v, m);
                }
            }
            out.materials
                .push(grid.material(base + corner_offset[deepest.1]));
        }
        // A vertex beside a seam between levels is pinned: its slivers stay and it is no
        // pinch candidate (its triangles may be partly another chunk's, which neither sees).
        let pinned = !self.pin.is_empty() && self.pin[base];
        if pinned {
            out.scratch.pinned.push(id);
        }
        let pinch = PINCH_PATCHES[inside] >> component & 1 != 0 && !pinned;
        if pinch {
            out.scratch.pinch.candidates.push(id);
            out.scratch.pinch.cells.push((id, cell, component));
            crate::pinch::list_corners(out, id);
        }
        assert!(id < NO_VERTEX, "more than 2³⁰ vertices");
        if component == 0 {
            // Flagged where the cell has further patches or a pinch candidate, so that the
            // inline lookup leaves those to this function.
            out.scratch.vertex_ids.ids[key] = if PATCH_EDGES[inside][1] != 0 || pinch {
                id | LOOK_FURTHER
            } else {
                id
            };
            if entry == u32::MAX {
                out.scratch.vertex_ids.written.push(key);
            }
        } else {
            out.scratch.extra_patches.insert(base, component, id);
        }
        id
    }
}

/// The case (inside corners, [`crate::tables::CORNERS`] bit order) of a cell with `corners`
/// in row order ([`ROW_OF_CORNER`]).
#[inline(always)]
fn case_of(corners: &[f32; 8]) -> usize {
    let [c0, c1, c2, c3, c4, c5, c6, c7] = *corners;
    let below =
        F32x4::new([c0, c1, c2, c3]).sign_mask() | F32x4::new([c4, c5, c6, c7]).sign_mask() << 4;
    CASE_OF_PAIRS[below as usize & 0xff] as usize
}

/// A dual vertex named by its cell (grid coordinates) and patch, and its position.
type Placed = (([i64; 3], u8), [f32; 3]);

impl<F: Fn(&[f32; 8], u16) -> ([f32; 3], [f32; 3])> Ctx<'_, '_, F> {
    /// The vertex (cell-local) and normal of patch `patch` of a cell of case `case` with
    /// `corners` (row order): `place`'s, except in a cell of several patches where another
    /// patch's vertex would lie on the same point of the position lattice (a tie, e.g. two
    /// patches whose crossings have the same mean): there each such vertex moves away from
    /// the others by [`SEPARATION`] of a cell at most, toward the midpoints
    /// of its own patch's edges, so that a weld by position keeps the patches apart. Decided
    /// from the cell's samples alone: the same in every grid that holds the cell.
    fn place_patch(&self, corners: &[f32; 8], case: usize, patch: u8) -> ([f32; 3], [f32; 3]) {
        place_patch_with(self.place, corners, case, patch)
    }
}

/// [`Ctx::place_patch`] with the mesher's `place`.
fn place_patch_with(
    place: &impl Fn(&[f32; 8], u16) -> ([f32; 3], [f32; 3]),
    corners: &[f32; 8],
    case: usize,
    patch: u8,
) -> ([f32; 3], [f32; 3]) {
    {
        let edges = &PATCH_EDGES[case];
        let (local, normal) = (place)(corners, edges[patch as usize]);
        if edges[1] == 0 {
            return (local, normal);
        }
        let snap = |l: [f32; 3]| l.map(|c| (c + QUANTUM_MAGIC) - QUANTUM_MAGIC);
        let at = snap(local);
        let n = edges.iter().take_while(|&&e| e != 0).count();
        let clash = (0..n)
            .filter(|&j| j != patch as usize)
            .any(|j| snap((place)(corners, edges[j]).0) == at);
        if !clash {
            return (local, normal);
        }
        // The mean of a patch's edge midpoints, in cell units (exact halves, summed in edge
        // order).
        let middle = |set: u16| {
            let (mut sum, mut k) = ([0.0f32; 3], 0.0f32);
            for (e, [c0, c1]) in EDGES.iter().enumerate() {
                if set >> e & 1 != 0 {
                    for a in 0..3 {
                        sum[a] +=
                            0.5 * f32::from(CORNERS[*c0 as usize][a] + CORNERS[*c1 as usize][a]);
                    }
                    k += 1.0;
                }
            }
            sum.map(|c| c / k)
        };
        let mut mean = [0.0f32; 3];
        for &set in &edges[..n] {
            let m = middle(set);
            for a in 0..3 {
                mean[a] += m[a] / n as f32;
            }
        }
        let own = middle(edges[patch as usize]);
        let d = [0, 1, 2].map(|a| own[a] - mean[a]);
        let big = d.iter().fold(0.0f32, |m, c| m.max(c.abs()));
        if big == 0.0 {
            return (local, normal);
        }
        let step = (SEPARATION / QUANTUM) as f32;
        let moved = [0, 1, 2]
            .map(|a| (at[a] + (d[a] / big * step).round() * QUANTUM as f32).clamp(0.0, 1.0));
        (moved, normal)
    }
}

impl<F: Fn(&[f32; 8], u16) -> ([f32; 3], [f32; 3])> Ctx<'_, '_, F> {
    /// The vertex at cell-local `local` in `cell`: the local coordinate rounded as the mesh
    /// keeps it, and the position (see `make_vertex`).
    #[inline(always)]
    fn position(&self, cell: [u32; 3], local: [f32; 3]) -> ([f32; 3], [f32; 3]) {
        let [x, y, z] = cell;
        let magic = F32x4::splat(QUANTUM_MAGIC);
        let q = (F32x4::new([local[0], local[1], local[2], 0.0]) + magic) - magic;
        let n = F32x4::new([
            (i64::from(x) - i64::from(self.grid.origin[0])) as f32,
            (i64::from(y) - i64::from(self.grid.origin[1])) as f32,
            (i64::from(z) - i64::from(self.grid.origin[2])) as f32,
            0.0,
        ]);
        let [px, py, pz, _] = ((n + q) * self.voxel_size).to_array();
        let [q0, q1, q2, _] = q.to_array();
        ([q0, q1, q2], [px, py, pz])
    }

    /// Whether a vertex the range made on a face toward a cell whose vertices it does not
    /// make (`scratch.boundary_out`) lies exactly where a vertex of such a cell would: the
    /// clean-up would merge the two (`remove_degenerate`), so the shell must be meshed.
    /// The cells' vertices are computed as `make_vertex` would, bit for bit.
    #[cold]
    #[inline(never)]
    fn twin_outside(&self, out: &MeshBuffer) -> bool {
        let g = self.grid;
        let key = |p: [f32; 3]| p.map(|c| (c + 0.0).to_bits());
        for &(id, cell, patch, outward) in &out.scratch.boundary_out {
            // Its own quads and the shell's around it as the clean-up leaves them (no
            // zero-area triangle: C11's vertex on the face has one in the shell)...
            if !self.ring_is_plain(cell, patch, false) {
                return true;
            }
            if !outward {
                continue;
            }
            // ... and no vertex of a cell around it at the same position.
            let p = out.positions[id as usize];
            // The faces of its cell the vertex lies on, per axis: −1, +1 or 0 (neither).
            let (_, lo) = self.position(cell, [0.0; 3]);
            let (_, hi) = self.position(cell, [1.0; 3]);
            let side = [0, 1, 2].map(|a| {
                if p[a] == lo[a] {
                    -1
                } else if p[a] == hi[a] {
                    1
                } else {
                    0
                }
            });
            for d in 1..27 {
                let d = [d % 3, d / 3 % 3, d / 9].map(|c| c as i64 - 1);
                if d == [0; 3] || (0..3).any(|a| d[a] != 0 && d[a] != side[a]) {
                    continue;
                }
                let c = [0, 1, 2].map(|a| i64::from(cell[a]) + d[a]);
                // Every cell around the point, also those the range makes vertices for: some
                // of their patches get theirs only from the shell's quads. (A cell needs its
                // eight samples.)
                if (0..3).any(|a| c[a] < 0 || c[a] + 1 >= i64::from(g.dims[a])) {
                    continue;
                }
                let c = c.map(|v| v as u32);
                let corners = self.corners(g.index(c[0], c[1], c[2]));
                let case = case_of(&corners);
                for patch in 0..PATCH_EDGES[case].iter().take_while(|&&e| e != 0).count() {
                    let (local, _) = self.place_patch(&corners, case, patch as u8);
                    if key(self.position(c, local).1) == key(p) {
                        return true;
                    }
                }
            }
        }
        false
    }
}

impl<F: Fn(&[f32; 8], u16) -> ([f32; 3], [f32; 3])> Ctx<'_, '_, F> {
    /// The vertex of the patch through local edge `edge` of the cell at grid coordinates
    /// `cell`, named by cell and patch and placed as `make_vertex` places it; `None` where
    /// the cell lies beyond the grid's samples or the edge is not crossed.
    fn vertex_at(&self, cell: [i64; 3], edge: u8) -> Option<Placed> {
        let g = self.grid;
        if (0..3).any(|a| cell[a] < 0 || cell[a] + 1 >= i64::from(g.dims[a])) {
            return None;
        }
        let c = cell.map(|v| v as u32);
        let corners = self.corners(g.index(c[0], c[1], c[2]));
        let case = case_of(&corners);
        let patch = PATCH_OF_EDGE[case][edge as usize];
        if patch == NO_PATCH {
            return None;
        }
        let (local, _) = self.place_patch(&corners, case, patch);
        Some(((cell, patch), self.position(c, local).1))
    }

    /// Whether the pinch candidate `v` (patch `patch` of `cell`), a vertex whose quads lie
    /// partly in the grid's shell, is left as it is by the clean-up when the shell is meshed:
    /// every quad around its patch's edges (the range's and the shell's, made here as the
    /// meshers make them) has no zero-area triangle and no two of their vertices coincide,
    /// no two of its triangles have the same three vertices, and its triangles form one fan
    /// whose every edge at `v` has one triangle each way. Then `split_pinches` finds one fan
    /// at `v`, cancels nothing there and leaves its normal; the range without its shell,
    /// which lacks some of these triangles, must only not split `v`. Anything else: `false`.
    #[cold]
    #[inline(never)]
    fn pinch_stays(&self, cell: [u32; 3], patch: u8) -> bool {
        self.ring_is_plain(cell, patch, true)
    }

    /// Whether the quads around the edges of patch `patch` of `cell` (the range's and the
    /// shell's, made here as the meshers make them) have no zero-area triangle and no two
    /// vertices at one position, so that the clean-up changes none of them; with `fan`, also
    /// whether the vertex's triangles form one fan, each edge at it used once each way, with
    /// no two triangles on the same three vertices (`pinch_stays`).
    fn ring_is_plain(&self, cell: [u32; 3], patch: u8, fan: bool) -> bool {
        let g = self.grid;
        let corners = self.corners(g.index(cell[0], cell[1], cell[2]));
        let edges = PATCH_EDGES[case_of(&corners)][patch as usize];
        let cell = cell.map(i64::from);
        let me = (cell, patch);
        let mut work: Vec<[Placed; 3]> = Vec::new();
        let mut seen: Vec<Placed> = Vec::new();
        for e in 0..12u8 {
            if edges >> e & 1 == 0 {
                continue;
            }
            let [k0, k1] = EDGES[e as usize];
            let (a0, a1) = (CORNERS[k0 as usize], CORNERS[k1 as usize]);
            let a = (0..3)
                .find(|&i| a0[i] != a1[i])
                .expect("an edge along one axis");
            let lo = if a0[a] == 0 { a0 } else { a1 };
            let p = [0, 1, 2].map(|i| cell[i] + i64::from(lo[i]));
            let (b, c) = NEXT_AXES[a];
            let back = |db: i64, dc: i64| {
                let mut q = p;
                q[b] -= db;
                q[c] -= dc;
                q
            };
            let cells = [back(1, 1), back(0, 1), p, back(1, 0)];
            let mut quad = [(me, [0.0f32; 3]); 4];
            for k in 0..4 {
                let Some(vx) = self.vertex_at(cells[k], QUAD_EDGES[a][k]) else {
                    return false;
                };
                quad[k] = vx;
            }
            let inside0 = g.values[g.index(p[0] as u32, p[1] as u32, p[2] as u32)] < 0.0;
            if !inside0 {
                quad.reverse();
            }
            let (first, flagged) = quad_split(quad.map(|(_, p)| F32x4::from_xyz(&p)));
            if flagged {
                return false;
            }
            let tris = if first {
                [[quad[0], quad[1], quad[2]], [quad[0], quad[2], quad[3]]]
            } else {
                [[quad[1], quad[2], quad[3]], [quad[1], quad[3], quad[0]]]
            };
            for t in tris {
                if t.iter().any(|x| x.0 == me) {
                    work.push(t);
                }
            }
            seen.extend(quad);
        }
        // No two distinct vertices at one position (the clean-up would merge them).
        let key = |p: [f32; 3]| p.map(|c| (c + 0.0).to_bits());
        seen.sort_by_key(|x| (key(x.1), x.0));
        seen.dedup_by_key(|x| x.0);
        if seen.windows(2).any(|w| key(w[0].1) == key(w[1].1)) {
            return false;
        }
        if !fan {
            return true;
        }
        // Each triangle at `v` as (previous, next) around it: one fan with every edge used
        // once each way is a cycle through all of them.
        let links: Vec<_> = work
            .iter()
            .map(|t| {
                let k = t.iter().position(|x| x.0 == me).expect("a triangle at v");
                (t[(k + 1) % 3].0, t[(k + 2) % 3].0)
            })
            .collect();
        let n = links.len();
        let mut sets: Vec<_> = links
            .iter()
            .map(|&(x, y)| if x < y { (x, y) } else { (y, x) })
            .collect();
        sets.sort();
        if sets.windows(2).any(|w| w[0] == w[1]) {
            return false;
        }
        let outs = |x| links.iter().filter(|l| l.0 == x).count();
        let ins = |x| links.iter().filter(|l| l.1 == x).count();
        if links
            .iter()
            .any(|l| outs(l.0) != 1 || ins(l.0) != 1 || outs(l.1) != 1 || ins(l.1) != 1)
        {
            return false;
        }
        // Follow the cycle from the first triangle.
        let mut at = 0;
        for steps in 1..=n {
            let next = links[at].1;
            at = links
                .iter()
                .position(|l| l.0 == next)
                .expect("each edge once each way");
            if at == 0 {
                return steps == n;
            }
        }
        false
    }
}

/// Adding and taking away this rounds a cell-local coordinate in `[0, 1]` to a multiple of
/// 2⁻¹⁷ (the spacing of f32 values in `[64, 128)`).
const QUANTUM_MAGIC: f32 = 64.0;

/// The step of the cell-local lattice [`QUANTUM_MAGIC`] rounds to: 2⁻¹⁷ of a cell.
const QUANTUM: f64 = 1.0 / 131_072.0;

/// How far apart two patches' vertices that would coincide move, at most, per axis: 2⁻¹² of
/// a cell (2.4e-4), far below anything drawn and far above an `f32`'s rounding of a
/// chunk-local position (3.8e-6 of a cell at 32 cells).
const SEPARATION: f64 = 1.0 / 4096.0;

/// Set in a cell's `ids` entry unless the entry is the vertex of every crossed edge of the
/// cell: where the cell has more than one patch or a pinch candidate (the entry is then
/// `LOOK_FURTHER |` patch 0's vertex), and where patch 0 has no vertex yet (with
/// [`NO_VERTEX`]). The quads' inline lookup leaves such entries to `make_vertex`.
const LOOK_FURTHER: u32 = 1 << 31;

/// Set with [`LOOK_FURTHER`] in the `ids` entry of a cell whose patch 0 has no vertex yet:
/// `u32::MAX` for a cell not visited (its case unknown), `LOOK_FURTHER | NO_VERTEX |` its
/// Marching Cubes case for a surface cell of the range, written when the cell is visited.
/// Vertex ids stay below it.
const NO_VERTEX: u32 = 1 << 30;

/// Marks an edge no patch crosses.
const NO_PATCH: u8 = u8::MAX;

/// For each Marching Cubes case and cell edge, which surface patch of the cell the edge's
/// crossing belongs to (patches numbered by their lowest edge), from the triangles of
/// [`TRI_TABLE`]. A cell gets one dual vertex per patch, not per cell, which makes the dual
/// mesh manifold where plain Surface Nets joins separate sheets in one vertex (Nielson 2004,
/// "Dual Marching Cubes").
/// (Rows padded to 16 so that an index masked with 15 needs no bounds check.)
static PATCH_OF_EDGE: [[u8; 16]; 256] = patch_table();

const fn patch_table() -> [[u8; 16]; 256] {
    let mut out = [[NO_PATCH; 16]; 256];
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

/// For each case and patch, the bit set of the cell edges whose crossings belong to it.
static PATCH_EDGES: [[u16; 4]; 256] = patch_edges_table();

const fn patch_edges_table() -> [[u16; 4]; 256] {
    let mut out = [[0u16; 4]; 256];
    let mut case = 0;
    while case < 256 {
        let mut e = 0;
        while e < 12 {
            let p = PATCH_OF_EDGE[case][e];
            if p != NO_PATCH {
                out[case][p as usize] |= 1 << e;
            }
            e += 1;
        }
        case += 1;
    }
    out
}

/// For each case, the bit set of the patches that hold all four crossings of a cell face (an
/// ambiguous face whose two segments the cell joins): where the cell across that face does
/// the same, four quads share the edge between the two vertices, which
/// [`crate::pinch::split_pinches`] then cuts.
static PINCH_PATCHES: [u8; 256] = pinch_patches_table();

const fn pinch_patches_table() -> [u8; 256] {
    let mut out = [0u8; 256];
    let mut case = 0;
    while case < 256 {
        let mut axis = 0;
        while axis < 3 {
            let mut side = 0;
            while side < 2 {
                // The four edges of the face `axis = side`, and the patch of their crossings.
                let mut patch = NO_PATCH;
                let mut count = 0;
                let mut e = 0;
                while e < 12 {
                    let [c0, c1] = EDGES[e];
                    if CORNERS[c0 as usize][axis] == side && CORNERS[c1 as usize][axis] == side {
                        let p = PATCH_OF_EDGE[case][e];
                        if p != NO_PATCH && (patch == NO_PATCH || patch == p) {
                            patch = p;
                            count += 1;
                        }
                    }
                    e += 1;
                }
                if count == 4 {
                    out[case] |= 1 << patch;
                }
                side += 1;
            }
            axis += 1;
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
/// zero-area triangle and the other does not. The four vertices are distinct (four cells'),
/// so neither triangle repeats a vertex; a zero-area one flags the mesh for
/// [`crate::normals::remove_degenerate`], as [`crate::normals::push_triangle`] would.
// Not inlined: in the cell loop it costs more in registers than the call.
#[inline(never)]
fn push_quad(out: &mut MeshBuffer, q: [u32; 4]) {
    debug_assert!(q[0] != q[1] && q[0] != q[2] && q[0] != q[3]);
    debug_assert!(q[1] != q[2] && q[1] != q[3] && q[2] != q[3]);
    let pos = &out.positions;
    let at = |i: u32| F32x4::from_xyz(&pos[i as usize]);
    let (first, flagged) = quad_split([at(q[0]), at(q[1]), at(q[2]), at(q[3])]);
    if flagged {
        out.scratch.has_degenerate = true;
    }
    let six = if first {
        [q[0], q[1], q[2], q[0], q[2], q[3]]
    } else {
        [q[1], q[2], q[3], q[1], q[3], q[0]]
    };
    out.indices.extend_from_slice(&six);
}

/// How [`push_quad`] splits the quad of corners `p`: along 0–2 (`true`) or 1–3, and whether
/// a triangle of that split has zero area.
#[inline(always)]
fn quad_split(p: [F32x4; 4]) -> (bool, bool) {
    // Squared distance, summed x, y, z in that order as the scalar form does.
    let d2 = |a: F32x4, b: F32x4| {
        let [x, y, z, _] = ((a - b) * (a - b)).to_array();
        x + y + z
    };
    // Zero area: the cross product of two sides is zero. Lanes of `u · v.yzx − u.yzx · v` are
    // the cross product's products and differences (rotated), bit for bit.
    #[inline(always)]
    fn flat(a: F32x4, b: F32x4, c: F32x4) -> bool {
        let (u, v) = (b - a, c - a);
        (u * v.rotate3() - u.rotate3() * v).xyz_zero()
    }
    #[inline(always)]
    fn degenerate(p: &[F32x4; 4], first: bool) -> bool {
        if first {
            flat(p[0], p[1], p[2]) || flat(p[0], p[2], p[3])
        } else {
            flat(p[1], p[2], p[3]) || flat(p[1], p[3], p[0])
        }
    }
    let mut first = d2(p[0], p[2]) <= d2(p[1], p[3]);
    let mut flagged = degenerate(&p, first);
    if flagged && !degenerate(&p, !first) {
        first = !first;
        flagged = false;
    }
    (first, flagged)
}

impl<F: Fn(&[f32; 8], u16) -> ([f32; 3], [f32; 3])> Ctx<'_, '_, F> {
    /// The seam pass ([`crate::level_seams`]): the polygons of the seam edges this grid
    /// meshes, each found from the first polyhedral cell around it.
    fn seam_polygons(
        &self,
        out: &mut MeshBuffer,
        seams: &Seams,
        place_cell: &impl Fn(&[f32; 8], &[[f32; 3]]) -> ([f32; 3], [f32; 3]),
    ) {
        let g = self.grid;
        let coarse = |p: [i64; 3]| g.values[g.index(p[0] as u32, p[1] as u32, p[2] as u32)];
        let value = |p: [i64; 3]| seams.sample(p, &coarse);
        let mut made = SeamVertices::default();
        let (lo, hi) = (g.cells_min.map(i64::from), g.cells_max.map(i64::from));
        for z in lo[2] - 1..=hi[2] {
            for y in lo[1] - 1..=hi[1] {
                for x in lo[0] - 1..=hi[0] {
                    let c = [x, y, z];
                    // Only cells beside the range's border can be polyhedral.
                    if (0..3).all(|a| c[a] > lo[a] && c[a] < hi[a] - 1) {
                        continue;
                    }
                    if seams.class(c) != Class::Polyhedral {
                        continue;
                    }
                    let poly = seams.polyhedron(c, &value);
                    if poly.edges.is_empty() {
                        continue;
                    }
                    let edges: Vec<FineEdge> = poly.edges.iter().map(|e| e.0).collect();
                    let n = poly.patches.len();
                    made.polyhedral.insert(c, (poly, vec![u32::MAX; n]));
                    for e in edges {
                        let cells = seams.around(e);
                        let first = [2, 3, 1, 0]
                            .map(|k| cells[k])
                            .into_iter()
                            .find(|x| x.0 == Class::Polyhedral);
                        if first.map(|x| x.1) != Some(c) || !seams.owns(&cells) {
                            continue;
                        }
                        self.seam_polygon(out, seams, &value, place_cell, &mut made, e, cells);
                    }
                }
            }
        }
    }

    /// The polygon of seam edge `e` around `cells` ([`Seams::around`]).
    #[allow(clippy::too_many_arguments)]
    fn seam_polygon(
        &self,
        out: &mut MeshBuffer,
        seams: &Seams,
        value: &impl Fn([i64; 3]) -> f32,
        place_cell: &impl Fn(&[f32; 8], &[[f32; 3]]) -> ([f32; 3], [f32; 3]),
        made: &mut SeamVertices,
        e: FineEdge,
        cells: [(Class, [i64; 3]); 4],
    ) {
        let mut hi = e.lo;
        hi[e.axis] += e.len;
        let mut ids = [0u32; 4];
        for (k, &(class, c)) in cells.iter().enumerate() {
            ids[k] = match class {
                Class::Fine => self.fine_vertex(out, seams, value, made, c, e, hi),
                Class::Polyhedral => {
                    self.polyhedral_vertex(out, seams, value, place_cell, made, c, e)
                }
                Class::Plain => {
                    let rel = |p: [i64; 3]| [0, 1, 2].map(|a| p[a] / 2 - c[a]);
                    let edge = cube_edge(rel(e.lo), rel(hi));
                    let cu = c.map(|v| v as u32);
                    let base = self.grid.index(cu[0], cu[1], cu[2]);
                    let entry = out.scratch.vertex_ids.ids[base];
                    self.vertex(out, entry, base, edge, || cu)
                }
                Class::Coarser => unreachable!("a coarser chunk's edge"),
            };
        }
        if value(e.lo) >= 0.0 {
            ids.reverse();
        }
        // A polyhedral cell holding two quarters of the edge appears twice in a row.
        let mut poly: Vec<u32> = Vec::with_capacity(4);
        for k in 0..4 {
            if ids[k] != ids[(k + 3) % 4] {
                poly.push(ids[k]);
            }
        }
        match poly.len() {
            4 => push_quad(out, [poly[0], poly[1], poly[2], poly[3]]),
            3 => crate::normals::push_triangle(out, poly[0], poly[1], poly[2]),
            _ => {}
        }
    }

    /// The vertex of fine cell `f` (fine units) through edge `e` (ending at `hi`), placed as
    /// the fine chunk places it, in this grid's frame.
    #[allow(clippy::too_many_arguments)]
    fn fine_vertex(
        &self,
        out: &mut MeshBuffer,
        seams: &Seams,
        value: &impl Fn([i64; 3]) -> f32,
        made: &mut SeamVertices,
        f: [i64; 3],
        e: FineEdge,
        hi: [i64; 3],
    ) -> u32 {
        let corner = |k: usize| [0, 1, 2].map(|a| f[a] + i64::from(CORNERS[k][a]));
        // Row order: corner x + 2y + 4z.
        let mut corners = [0.0f32; 8];
        for (k, c) in corners.iter_mut().enumerate() {
            *c = value([
                f[0] + (k & 1) as i64,
                f[1] + (k >> 1 & 1) as i64,
                f[2] + (k >> 2) as i64,
            ]);
        }
        let case = case_of(&corners);
        let rel = |p: [i64; 3]| [0, 1, 2].map(|a| p[a] - f[a]);
        let patch = PATCH_OF_EDGE[case][cube_edge(rel(e.lo), rel(hi)) as usize];
        debug_assert!(patch != NO_PATCH, "a crossed edge");
        if let Some(&id) = made.fine.get(&(f, patch)) {
            return id;
        }
        let (local, normal) = place_patch_with(self.place, &corners, case, patch);
        let q = local.map(|v| (v + QUANTUM_MAGIC) - QUANTUM_MAGIC);
        let o = self.grid.origin.map(i64::from);
        let h = self.grid.voxel_size * 0.5;
        let pos = [0, 1, 2].map(|a| ((f[a] - 2 * o[a]) as f32 + q[a]) * h);
        let id = out.positions.len() as u32;
        out.positions.push(pos);
        out.normals.push(normal);
        if !self.grid.materials.is_empty() {
            let mut deepest = (f32::INFINITY, 0);
            for (m, &r) in ROW_OF_CORNER.iter().enumerate() {
                if corners[r as usize] < deepest.0 {
                    deepest = (corners[r as usize], m);
                }
            }
            out.materials.push(seams.material(corner(deepest.1)));
        }
        made.fine.insert((f, patch), id);
        out.scratch.pinned.push(id);
        id
    }

    /// The vertex of polyhedral cell `c` through edge `e`.
    #[allow(clippy::too_many_arguments)]
    fn polyhedral_vertex(
        &self,
        out: &mut MeshBuffer,
        seams: &Seams,
        value: &impl Fn([i64; 3]) -> f32,
        place_cell: &impl Fn(&[f32; 8], &[[f32; 3]]) -> ([f32; 3], [f32; 3]),
        made: &mut SeamVertices,
        c: [i64; 3],
        e: FineEdge,
    ) -> u32 {
        let entry = made.polyhedral.entry(c).or_insert_with(|| {
            let p = seams.polyhedron(c, value);
            let n = p.patches.len();
            (p, vec![u32::MAX; n])
        });
        let patch = entry
            .0
            .edges
            .iter()
            .find(|x| x.0 == e)
            .expect("an edge of the polyhedral cell")
            .1 as usize;
        if entry.1[patch] != u32::MAX {
            return entry.1[patch];
        }
        let cu = c.map(|v| v as u32);
        let base = self.grid.index(cu[0], cu[1], cu[2]);
        let corners = self.corners(base);
        let (local, normal) = place_cell(&corners, &entry.0.patches[patch]);
        let (_, pos) = self.position(cu, local);
        let id = out.positions.len() as u32;
        out.positions.push(pos);
        out.normals.push(normal);
        if !self.grid.materials.is_empty() {
            let mut deepest = (f32::INFINITY, 0);
            for (m, &r) in ROW_OF_CORNER.iter().enumerate() {
                if corners[r as usize] < deepest.0 {
                    deepest = (corners[r as usize], m);
                }
            }
            out.materials
                .push(self.grid.material(base + self.corner_offset[deepest.1]));
        }
        entry.1[patch] = id;
        out.scratch.pinned.push(id);
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every cell with corner values in {−1, 0, 1} (6 561 cells, ties on every edge and face):
    /// the vertices of a cell's patches never lie on one point, for Surface Nets' and Dual
    /// Contouring's placements (they did in 14 and 154 of the 2 640 cells with several
    /// patches: two patches placed on one point, which a weld by position joins into a
    /// non-manifold vertex);
    /// where they would, each moved by at most [`SEPARATION`] per axis and stays in its cell;
    /// elsewhere the placement is untouched.
    #[test]
    fn patches_of_one_cell_never_share_a_vertex() {
        let values = [0.0f32; 8];
        let grid = Grid::volume(&values, [2, 2, 2], 1.0);
        let surface_nets = crate::surface_nets::projected_mean;
        let dual_contouring = crate::dual_contouring::qef_vertex;
        type Place<'a> = &'a dyn Fn(&[f32; 8], u16) -> ([f32; 3], [f32; 3]);
        let places: [(&str, Place); 2] = [("sn", &surface_nets), ("dc", &dual_contouring)];
        for (name, place) in places {
            let ctx = Ctx {
                grid: &grid,
                corner_offset: grid.corner_offsets(),
                strides: [2, 4],
                voxel_size: F32x4::splat(1.0),
                place: &place,
                pin: &[],
            };
            let snap = |l: [f32; 3]| l.map(|c| ((c + QUANTUM_MAGIC) - QUANTUM_MAGIC).to_bits());
            let (mut clashed, mut cells) = (0, 0);
            for code in 0..3usize.pow(8) {
                let corners: [f32; 8] =
                    std::array::from_fn(|k| (code / 3usize.pow(k as u32) % 3) as f32 - 1.0);
                let case = case_of(&corners);
                let n = PATCH_EDGES[case].iter().take_while(|&&e| e != 0).count();
                if n < 2 {
                    continue;
                }
                cells += 1;
                let plain: Vec<_> = (0..n)
                    .map(|j| snap(place(&corners, PATCH_EDGES[case][j]).0))
                    .collect();
                let clash = |j: usize| (0..n).any(|i| i != j && plain[i] == plain[j]);
                clashed += usize::from((0..n).any(clash));
                let mut placed: Vec<_> = (0..n)
                    .map(|j| {
                        let (local, _) = ctx.place_patch(&corners, case, j as u8);
                        let before = place(&corners, PATCH_EDGES[case][j]).0;
                        for a in 0..3 {
                            assert!((0.0..=1.0).contains(&local[a]), "{name} {corners:?}");
                            assert!(
                                f64::from((local[a] - before[a]).abs()) <= SEPARATION + QUANTUM,
                                "{name} {corners:?}: moved {local:?} from {before:?}"
                            );
                        }
                        if !clash(j) {
                            assert_eq!(local, before, "{name} {corners:?}: moved without a clash");
                        }
                        snap(local)
                    })
                    .collect();
                placed.sort_unstable();
                placed.dedup();
                assert_eq!(
                    placed.len(),
                    n,
                    "{name} {corners:?}: two patches on one point"
                );
            }
            println!("{name}: {cells} cells of several patches, {clashed} clashed");
            assert!(
                cells > 1000 && clashed > 0,
                "{name}: {cells} cells, {clashed} clashed"
            );
        }
    }
}
