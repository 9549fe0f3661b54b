//! # loam-world
//!
//! The chunk pipeline (docs/architecture.md, "One edit, end to end"): the chunks around one or more
//! viewers, kept meshed by a pool of worker threads while the field is edited.
//!
//! - **Streaming** ([`streaming`]): chunk columns within the view radius of a viewer, from
//!   [`WorldSettings::view_depth`] layers below it up to the highest ground of each column
//!   (generated or edited); dropped only [`WorldSettings::unload_margin`] chunks further out.
//!   Chunks the column bounds prove all air or all solid are loaded without meshing.
//! - **Workers**: a job reads an immutable snapshot of the field (a [`loam_field::Field`]
//!   clone) and carries the chunk version it was started for; older results are dropped and
//!   counted. Edited chunks are built first, then the ones nearest a viewer. Without
//!   threads (a browser page), [`WorldSettings::main_thread`] builds the jobs in
//!   [`World::update`] within a time budget, in the same order.
//! - **Batches**: an op marks every chunk whose grid (halo included) holds a changed sample,
//!   loaded or newly in view; the ops applied before one [`World::update`] form one batch,
//!   delivered by [`World::pull`] only when all of its chunks are built, as one [`Group`].
//! - **Level of detail** ([`lod`], opt-in with [`WorldSettings::lod_levels`]): chunks of
//!   several levels chosen as a balanced octree around the viewers (2:1 rule, hysteresis),
//!   read from the same field at each level's spacing and meshed with Transvoxel transition
//!   cells toward finer neighbours (Lengyel 2010); a level change is one [`Group`] with the
//!   chunks it replaces in [`Group::removed`]; [`Shown::open_edges`] counts cracks.
//! - **Metrics**: [`World::metrics`].
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use loam_field::{CaveSettings, CsgMode, EditOp, Field, FieldSettings, Generator, NoiseTerrainSettings};
//! use loam_world::{PullBudget, Shown, Viewer, World, WorldSettings};
//!
//! let g = Generator::noise(&NoiseTerrainSettings::default(), &CaveSettings { enabled: false, ..Default::default() }).unwrap();
//! let field = Field::new(FieldSettings::default(), Arc::new(g)).unwrap();
//! let h = field.generator().surface_height(0.0, 0.0);
//! let settings = WorldSettings { view_radius: 1, view_depth: 1, threads: 2, ..Default::default() };
//! let mut world = World::new(field, settings).unwrap();
//! let viewer = [Viewer::at([0.0, h + 2.0, 0.0])];
//! let mut shown = Shown::default();
//! world.update(&viewer);
//! assert!(world.wait_idle(Duration::from_secs(60)));
//! shown.apply(world.pull(PullBudget::ALL)).unwrap();
//! assert!(!shown.is_empty());
//!
//! world.apply(&EditOp::Sphere { mode: CsgMode::Subtract, center: [0.0, h, 0.0], radius: 4.0, material: 0, blend: 0.0 }).unwrap();
//! world.update(&viewer); // the op's chunks become one batch
//! assert!(world.wait_idle(Duration::from_secs(60)));
//! shown.apply(world.pull(PullBudget::ALL)).unwrap();
//! assert_eq!(world.metrics().batches_delivered, 1);
//! ```
#![deny(missing_docs)]

/// The clock the pipeline times itself with: `std::time::Instant`, or on wasm32, which has
/// no clock in `std`, `web_time::Instant` (the same API over the page's
/// `performance.now()`).
#[cfg(not(target_arch = "wasm32"))]
pub use std::time::Instant;
#[cfg(target_arch = "wasm32")]
pub use web_time::Instant;

mod batch;
mod bricks;
mod cache;
mod dirty;
pub mod lod;
mod metrics;
mod pool;
mod scratch;
mod settings;
mod shown;
pub mod streaming;
mod stroke;
mod world;

pub use batch::{BatchKind, ChunkMesh, Group, PullBudget, Update};
pub use dirty::{chunk_grid_box, chunks_reading};
pub use metrics::{Metrics, Percentiles};
pub use pool::VertexColors;
pub use scratch::{ChunkBuilder, same_mesh, verify_shown, verify_shown_lod};
pub use settings::{LOD0_RADIUS_CHUNKS, WorldError, WorldSettings};
pub use shown::{Shown, StaleMesh};
pub use streaming::Viewer;
pub use stroke::{DEFAULT_REPEAT, StrokeClock};
pub use world::{IDLE_TIMEOUT, World};
