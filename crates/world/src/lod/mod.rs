//! Level of detail (issue 11): chunks of several levels around the viewers, selected as a
//! balanced octree with hysteresis, sampled from the same field at the coarse spacing, and
//! meshed with Transvoxel transition cells toward finer neighbours (Eric Lengyel,
//! "Voxel-Based Terrain for Real-Time Virtual Simulations", 2010).

mod build;
mod cracks;
mod key;
mod select;

pub use build::{LodBuilder, lod_column_bounds, proven_uniform, transition_mask, uniform_in};
pub use cracks::{OpenEdges, open_edges};
pub use key::{LodKey, MAX_LEVELS};
pub use select::{LodSettings, covering, select};
