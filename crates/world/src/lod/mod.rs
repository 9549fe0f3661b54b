//! Level of detail (issue 11): chunks of several levels around the viewers, selected as a
//! balanced octree with hysteresis, sampled from the same field at the coarse spacing, and
//! meshed with seams toward neighbours of other levels: Transvoxel transition cells for Marching
//! Cubes (Eric Lengyel, "Voxel-Based Terrain for Real-Time Virtual Simulations", 2010), the
//! polyhedral cells of `loam_mesh::level_seams` for Surface Nets and Dual Contouring.

mod build;
mod cracks;
mod key;
mod select;

pub use build::{
    LodBuilder, level_neighbours, lod_column_bounds, lod_mesher, proven_uniform, seams_of,
    transition_mask, uniform_in,
};
pub use cracks::{OpenEdges, open_edges};
pub use key::{LodKey, MAX_LEVELS};
pub(crate) use select::neighbour_offsets;
pub use select::{LodSettings, covering, select};
