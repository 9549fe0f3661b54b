//! Transvoxel (Eric Lengyel, "Voxel-Based Terrain for Real-Time Virtual Simulations", 2010):
//! chunks at several levels of detail whose meshes meet without cracks.
//!
//! A chunk at level `k` is `32³` cells of `2^k × base` metres. Where a chunk's neighbour is one
//! level finer (the 2:1 rule keeps it at most one), that face is a *transition face*: the
//! chunk's border cells there are shrunk inward by a transition width (a fraction of a cell)
//! and transition cells fill the strip, reading the field at the fine neighbour's spacing on
//! the face. Their vertices on the face are the fine chunk's own border vertices, bit for bit
//! (with power-of-two voxel sizes), so the two meshes weld with no open edge. The fine chunk
//! itself is meshed with [`transvoxel`] too (its regular cells use the same tables, which cut
//! ambiguous faces the way the transition cells do).
//!
//! ```text
//!   coarse chunk (level k+1)            fine chunks (level k)
//!   ┌───────┬───────┬──┐──────┬───┬───┬───┬───┐
//!   │       │       │ ▒│      │   │   │   │   │   ▒ transition cells (width · cell)
//!   │       │       │ ▒│ face │   │   │   │   │     between the shrunk border cells
//!   ├───────┼───────┼──┤ ──── ├───┼───┼───┼───┤     and the transition face
//!   │       │       │ ▒│      │   │   │   │   │
//!   └───────┴───────┴──┘──────┴───┴───┴───┴───┘
//! ```
//!
//! The caller supplies the coarse chunk's [`Grid`] (as for the other meshers, halo ≥ 1) and,
//! per transition face, a [`FineFace`]: a slab of samples at the fine spacing, 3 thick around
//! the face plane, `2·32 + 1 = 65` per row plus a halo of one on each side (`67 × 67 × 3`), laid
//! out by [`fine_face_dims`] and placed by [`fine_face_sample`]. Positions are chunk-local
//! metres, like every mesher's (`(grid index − origin) · voxel_size`), normals are unit
//! gradient normals toward the air, triangles are counter-clockwise seen from the air, and the
//! inside predicate is `value < 0.0`.
//!
//! Where a chunk edge joins a transition face and a face that is not one, the grid points on
//! that edge stay in place (as in the `transvoxel` crate), so the chunk still meets its
//! same-level neighbour across the second face exactly.
//!
//! ```
//! use loam_mesh::transvoxel::{Face, FineFace, Transitions, fine_face_dims, fine_face_sample, transvoxel};
//! use loam_mesh::{Grid, MeshBuffer};
//!
//! // A plane 10.3 m up, in a coarse chunk of 32³ cells of 2 m whose −X neighbour has 1 m cells.
//! let field = |y: f32| y - 10.3;
//! let (vs, halo) = (2.0f32, 1u32);
//! let n = 32 + 1 + 2 * halo;
//! let mut values = Vec::new();
//! for _z in 0..n { for y in 0..n { for _x in 0..n {
//!     values.push(field((y as f32 - halo as f32) * vs));
//! }}}
//! let grid = Grid::chunk(&values, &[], halo, vs);
//! let dims = fine_face_dims(&grid, Face::NegX);
//! let mut fine = Vec::new();
//! for c in 0..dims[2] { for b in 0..dims[1] { for a in 0..dims[0] {
//!     let p = fine_face_sample(&grid, Face::NegX, [a, b, c]); // in fine voxels (vs / 2)
//!     fine.push(field(p[1] as f32 * vs / 2.0));
//! }}}
//! let t = Transitions::default().with(Face::NegX, FineFace { values: &fine, materials: &[] });
//! let mut mesh = MeshBuffer::default();
//! transvoxel(&grid, &t, &mut mesh);
//! // 32 × 32 cells of 2 triangles, plus 32 transition cells of 3 (between the 3 vertices on
//! // the fine face and the 2 on the shrunk coarse face).
//! assert_eq!(mesh.triangle_count(), 32 * 32 * 2 + 32 * 3);
//! ```

mod face;
mod regular;
mod tables;
mod transition;
mod vertex;

pub use face::{Face, FineFace, fine_face_dims, fine_face_sample};

use crate::buffer::MeshBuffer;
use crate::grid::Grid;
use crate::normals::finish;

use face::Slab;
use vertex::Ctx;

/// The default transition width: half a cell.
pub const DEFAULT_TRANSITION_WIDTH: f32 = 0.5;

/// The transition faces of one chunk and the width of their transition cells.
#[derive(Clone, Copy, Debug)]
pub struct Transitions<'a> {
    /// Per face (`face as usize`), its fine samples when the neighbour across it is one level
    /// finer, `None` for an ordinary face.
    pub faces: [Option<FineFace<'a>>; 6],
    /// Width of the transition cells as a fraction of a cell, in `(0, 1)`; default
    /// [`DEFAULT_TRANSITION_WIDTH`]. Lengyel's scheme moves the border cells' face inward by
    /// this much; narrower strips are closer to the fine surface but make thinner triangles.
    pub width: f32,
}

impl Default for Transitions<'_> {
    /// No transition face: a plain regular mesh.
    fn default() -> Self {
        Self {
            faces: [None; 6],
            width: DEFAULT_TRANSITION_WIDTH,
        }
    }
}

impl<'a> Transitions<'a> {
    /// These transitions with `face` a transition face reading `fine`.
    pub fn with(mut self, face: Face, fine: FineFace<'a>) -> Self {
        self.faces[face as usize] = Some(fine);
        self
    }

    /// Bit `face as u8` set for each transition face.
    pub fn mask(&self) -> u8 {
        Face::ALL
            .into_iter()
            .filter(|&f| self.faces[f as usize].is_some())
            .fold(0, |m, f| m | f.bit())
    }
}

/// Meshes the grid's cell range with Transvoxel into `out` (cleared first): regular cells
/// everywhere, and for each transition face in `transitions`, the border cells shrunk by
/// `transitions.width` and a strip of transition cells reading that face's fine samples.
///
/// With no transition face this is Lengyel's modified Marching Cubes over the grid, which the
/// fine neighbours of a coarse chunk must be meshed with for the two to weld. Reads the grid's
/// cells and one sample beyond on each side for normals (one-sided at the grid border), and
/// each slab whole. Vertices are shared, one per crossed edge; positions are local metres
/// (transition face vertices at half the grid's voxel size), normals unit length toward the
/// air, triangles counter-clockwise seen from the air; no triangle has zero area and no value
/// is NaN (for finite samples).
///
/// A fine sample on a coarse grid point should equal the coarse sample there (one field, one
/// position). Where the two disagree in sign (two levels quantising a value near 0
/// differently, say), this chunk uses the fine sample instead, on a private copy of the grid,
/// so the transition still closes; a same-level neighbour sharing that point does not see the
/// change, so the world should make them agree.
///
/// # Panics
/// If the grid breaks [`Grid::check`]'s contract; if a slab's length is not
/// [`fine_face_dims`]'s product (or its materials are neither empty nor as long); if the
/// width is not in `(0, 1)`.
pub fn transvoxel(grid: &Grid, transitions: &Transitions, out: &mut MeshBuffer) {
    grid.check();
    let w = transitions.width;
    assert!(
        w > 0.0 && w < 1.0,
        "transition width {w} must be in (0, 1) cells"
    );
    out.clear();
    let mask = transitions.mask();
    let slabs = Face::ALL.map(|f| {
        transitions.faces[f as usize]
            .as_ref()
            .map(|fine| Slab::new(grid, f, fine))
    });
    // The transition table takes the half-resolution corners' states from the fine samples:
    // where a coarse sample disagrees in sign, this chunk uses the fine one (on a copy).
    let mut patched: Option<Vec<f32>> = None;
    for slab in slabs.iter().flatten() {
        for_each_face_point(grid, slab, |i, fine| {
            if (fine < 0.0) != (grid.values[i] < 0.0) {
                patched.get_or_insert_with(|| grid.values.to_vec())[i] = fine;
            }
        });
    }
    let patched_grid = patched.as_ref().map(|values| Grid {
        values,
        range: None,
        ..*grid
    });
    let grid = patched_grid.as_ref().unwrap_or(grid);
    if mask == 0 && grid.is_uniform() {
        return;
    }
    let ctx = Ctx::new(grid, mask, w, slabs);
    out.scratch.vertex_ids.prepare(ctx.cache_len(), 0);
    regular::regular_cells(&ctx, out);
    for f in Face::ALL {
        if mask & f.bit() != 0 {
            transition::transition_cells(&ctx, f, out);
        }
    }
    out.scratch.vertex_ids.reset();
    // A chunk: its halo holds the cells beyond.
    finish(out, None);
}

/// Calls `f(index in grid.values, fine sample)` for each coarse grid point of a transition
/// face, with the fine sample at the same point.
fn for_each_face_point(grid: &Grid, slab: &Slab, mut f: impl FnMut(usize, f32)) {
    let face = slab.face;
    let n = face.axis();
    let [u, v] = face.lateral();
    let cells = face::cell_counts(grid);
    for j in 0..=cells[v] {
        for i in 0..=cells[u] {
            let mut p = [0u32; 3];
            p[n] = slab.plane;
            p[u] = 2 * i;
            p[v] = 2 * j;
            let mut g = grid.cells_min;
            g[n] += p[n] / 2;
            g[u] += i;
            g[v] += j;
            f(grid.index(g[0], g[1], g[2]), slab.value(p));
        }
    }
}
