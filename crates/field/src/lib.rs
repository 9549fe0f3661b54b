//! # loam-field
//!
//! Loam's editable terrain as a signed distance field (SDF): negative inside solid ground,
//! positive in air, the surface at zero, values in metres clamped to a narrow band of
//! `±band` (default 2 voxels). A sample exactly 0 is air (`value < 0.0` is the one inside
//! predicate).
//!
//! - [`coords`]: world (f64 metres) → sample (i32) → chunk / brick (i32) by floor division.
//! - [`Generator`]: the base terrain, fractal noise or a real DEM, with caves; a safe
//!   distance bound (1-Lipschitz) by construction.
//! - [`Field`]: the generator with edit bricks (`32³` samples, chunk-aligned) laid over it,
//!   shared copy-on-write so a clone is an immutable snapshot.
//! - [`EditOp`] and [`Field::apply`]: dig and build balls with exact CSG; only samples within
//!   reach change, and the box of changed samples is returned.
//! - [`History`] and [`Journal`]: strokes with undo and redo (a sample shows its newest done
//!   stroke), and the one place ops are numbered and stroked for a world being edited.
//! - [`FieldHash`]: the one field hash (docs/architecture.md).
//! - [`Field::raycast`]: the one field raycast (sphere tracing, then bisection).
//!
//! No threads, files or clocks: the crate builds for `wasm32-unknown-unknown`.
//!
//! ```
//! use std::sync::Arc;
//! use loam_field::{CaveSettings, CsgMode, EditOp, Field, FieldSettings, Generator, NoiseTerrainSettings, SamplePos};
//!
//! let generator = Generator::noise(&NoiseTerrainSettings::default(), &CaveSettings::default()).unwrap();
//! let mut field = Field::new(FieldSettings::default(), Arc::new(generator)).unwrap();
//! let h = field.generator().surface_height(0.0, 0.0);
//! let before = field.clone(); // a snapshot
//! let out = field
//!     .apply(&EditOp::Sphere { mode: CsgMode::Subtract, center: [0.0, h, 0.0], radius: 3.0, material: 0, blend: 0.0 })
//!     .unwrap();
//! assert!(out.samples_changed > 0);
//! let p = SamplePos::new(0, h.round() as i32, 0);
//! assert!(field.sample(p) > 0.0); // dug out: air
//! assert_ne!(before.sample(p), field.sample(p)); // the snapshot still reads the old value
//! println!("field-hash: {}", field.hash());
//! ```
#![deny(missing_docs)]

mod brick;
pub mod coords;
mod edit;
mod field;
mod generated;
mod generator;
mod generator_cache;
mod hash;
mod history;
mod journal;
mod lru;
mod num;
mod op;
mod patch;
mod quant;
mod raycast;
pub mod sculpt;
mod snapshot;
mod strided;
mod write;

pub use brick::{
    Brick, BrickSamples, DECODED_CACHE_DEFAULT_CAPACITY, DecodedCacheStats, GENERATOR_MATERIAL,
    MaterialId, brick_index, decoded_cache_stats, set_decoded_cache_capacity,
};
pub use coords::{
    BRICK_SAMPLES, BrickKey, CHUNK_CELLS, ChunkKey, CoordError, SampleBox, SamplePos,
    world_to_chunk, world_to_level_chunk,
};
pub use edit::{EditOutcome, PlannedEdit};
pub use field::{COLUMN_HALO, DEFAULT_HOT_BRICKS, Field, FieldSettings, SettingsError};
pub use generator::{
    CaveSettings, ColumnBounds, Generator, GeneratorError, Heightmap, HeightmapError,
    HeightmapMeta, HeightmapPlacement, MAX_HEIGHTMAP_SAMPLES, NoiseLayer, NoiseTerrainSettings,
};
pub use generator_cache::GeneratorBrickCache;
pub use hash::FieldHash;
pub use history::{History, HistoryHeader, HistoryPartsError, SharedStroke};
pub use journal::Journal;
pub use num::{Num, num};
pub use op::{CsgMode, DecodeError, EditError, EditOp, LOG_VERSION, LogEntry};
pub use patch::{BrickPatch, PatchError};
pub use quant::{QMAX, Quant};
pub use raycast::{
    RAY_MAX_DISTANCE_VOXELS, RAY_MIN_STEP_VOXELS, RAY_TOLERANCE_VOXELS, RayHit, RaycastError,
};
pub use sculpt::falloff::Falloff;
pub use sculpt::plan::edit_samples;
pub use write::{MAX_WRITE_SAMPLES, SampleWriteError};
