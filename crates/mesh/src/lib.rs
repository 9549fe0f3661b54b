//! # loam-mesh
//!
//! Meshers that turn a grid of SDF samples into triangles: Marching Cubes (Lorensen & Cline
//! 1987), the topology-correct MC33 (Chernyaev 1995, with Lewiner et al. 2003's tables),
//! Surface Nets (Gibson 1998), Dual Contouring (Ju et al. 2002) and, for levels of detail,
//! Transvoxel (Lengyel 2010, in [`transvoxel`]). Negative is inside;
//! `value < 0.0` is the one inside predicate, so a sample exactly 0 is air.
//!
//! Speed on the bench's 32³ terrain chunk of the quantised field (2-core x86_64 under the load
//! of a concurrent build, best of 15 × 40 meshings, every mesher and fast-surface-nets in one
//! run): Marching Cubes 284 µs, MC33 371 µs, Dual Contouring 1.29 ms (fast-surface-nets: 228
//! µs on the same samples); Surface Nets, since its chunks take the ghost shell only where
//! the clean-up has something to decide there, 166–178 µs beside fast-surface-nets' 248–268
//! µs (criterion means, two later runs): 1.5× as fast. Figures and peers: BENCHMARKS.md.
//!
//! Every mesher reads a [`Grid`] and writes into a caller-owned [`MeshBuffer`] that keeps its
//! capacity, so meshing does not allocate once the buffer has grown. Meshes of neighbouring
//! chunks cut from one field share their border vertices bit for bit. Away from the grid
//! border (where a chunk's mesh is open), meshes are closed and consistently oriented. Every
//! mesher's mesh is manifold, also where solids touch on samples worth exactly 0 or on an
//! ambiguous face (a pinched vertex is split into one per sheet, `pinch.rs`), and where a
//! volume's surface is cut by the end of its samples (none of 240 000 random grids of only
//! −1 and 0 in air, nor of 80 000 random grids reaching the border, fails; BENCHMARKS.md).
//! A chunk's mesh is open at the chunk's border, where its neighbour's mesh continues it.
//!
//! No dependencies, threads, files or clocks: the crate builds for
//! `wasm32-unknown-unknown`.
//!
//! ```
//! use loam_mesh::{Grid, MeshBuffer, marching_cubes, mesh_stats};
//!
//! // A sphere of radius 10 voxels in a 24³ grid.
//! let n = 24u32;
//! let mut values = Vec::new();
//! for z in 0..n { for y in 0..n { for x in 0..n {
//!     let d = [x, y, z].map(|c| c as f32 - 11.5);
//!     values.push((d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() - 10.0);
//! }}}
//! let mut mesh = MeshBuffer::default();
//! marching_cubes(&Grid::volume(&values, [n; 3], 1.0), &mut mesh);
//! let s = mesh_stats(&mesh.positions, &mesh.indices);
//! assert_eq!(s.boundary_edges, 0);
//! assert!((s.volume.unwrap() / (4.0 / 3.0 * std::f64::consts::PI * 1000.0) - 1.0).abs() < 0.01);
//! ```
#![deny(missing_docs)]

mod buffer;
mod cells;
mod crossings;
mod dual;
mod dual_contouring;
mod grid;
mod lanes;
pub mod level_seams;
mod marching_cubes;
mod mc33;
mod mc33_tables;
mod normals;
mod patch_table;
mod pinch;
mod slivers;
mod stats;
mod surface_nets;
pub mod tables;
pub mod transvoxel;

pub use buffer::MeshBuffer;
pub use dual_contouring::{dual_contouring, dual_contouring_lod};
pub use grid::{CHUNK_CELLS, CHUNK_HALO, Grid};
pub use level_seams::{FineSampler, LevelNeighbours};
pub use marching_cubes::marching_cubes;
pub use mc33::mc33;
pub use stats::{MeshStats, Point, WeldPart, boundary_edges, mesh_stats, nonmanifold_edges, weld};
pub use surface_nets::{surface_nets, surface_nets_lod};

/// The meshers, for callers that choose one at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mesher {
    /// [`marching_cubes`].
    MarchingCubes,
    /// [`mc33`].
    Mc33,
    /// [`surface_nets`].
    SurfaceNets,
    /// [`dual_contouring`].
    DualContouring,
}

impl Mesher {
    /// Every mesher.
    pub const ALL: [Mesher; 4] = [
        Mesher::MarchingCubes,
        Mesher::Mc33,
        Mesher::SurfaceNets,
        Mesher::DualContouring,
    ];

    /// Meshes `grid` into `out` with this mesher.
    pub fn mesh(self, grid: &Grid, out: &mut MeshBuffer) {
        match self {
            Mesher::MarchingCubes => marching_cubes(grid, out),
            Mesher::Mc33 => mc33(grid, out),
            Mesher::SurfaceNets => surface_nets(grid, out),
            Mesher::DualContouring => dual_contouring(grid, out),
        }
    }

    /// Short name: `mc`, `mc33`, `sn`, `dc`.
    pub fn name(self) -> &'static str {
        match self {
            Mesher::MarchingCubes => "mc",
            Mesher::Mc33 => "mc33",
            Mesher::SurfaceNets => "sn",
            Mesher::DualContouring => "dc",
        }
    }

    /// The mesher of a short name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }
}
