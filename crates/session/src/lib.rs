//! Loam's session layer: what the editor, the server and the command line share about a
//! world being edited, above the field, the store, the blocks and physics and below the app,
//! the network and the CLI (docs/architecture.md, "Layers").
//!
//! - [`load`]: **the one loader** of a world file with its blocks. The field is the store's
//!   (baked bricks, then the log replayed, [`loam_store::Store::load_with`]); the blocks are
//!   the last bake's snapshot, then the log after it in order: terrain ops through the field
//!   (what they undermine falls), block ops at the physics step they were taken at, the
//!   physics stepped at its fixed timestep between them with colliders built from the field
//!   ([`TerrainColliders`]). The editor (loam-bevy's `WorldFile`), the server and
//!   `loam world` all open worlds through it.
//! - [`flush`] and [`bake`]: appending a session's ops, terrain and block, to the store in
//!   sequence order, and baking bricks, history and the block snapshot in one transaction.
//! - [`TerrainColliders`]: which terrain chunks have, need or wait for a physics collider,
//!   built from the field (Surface Nets of a chunk's samples,
//!   [`loam_blocks::field_collider`]) here or on another thread, used by the server, by
//!   replays and by the editor's blocks.
//!
//! - [`GeneratorSpec`]: the generator of a world as JSON (noise, or a DEM read from a file
//!   or carried in the spec), what world files record and every program rebuilds.
//! - [`EditBudgets`]: each client's terrain ops charged by the samples they cover, where
//!   ops are ordered (a server, a node owning cells).
//! - [`UndoJournal`]: **the one undo order** over a player's terrain strokes and block
//!   edits, with the block ops' inverses ([`block_inverse`], from the log alone after a
//!   reopen: [`loam_blocks::LogInverses`]).
//!
//! Op numbering, strokes and the terrain undo rule are [`loam_field::Journal`] and
//! [`loam_field::History`]: one implementation each, which every layer above calls.
//!
//! The world file parts (`load`, `flush`, `bake`, [`UndoJournal::from_store`] and
//! `from_log`) need the default feature `store` (`loam-store`, SQLite in C); without it the
//! crate builds for wasm32 (a browser keeps its world elsewhere), which CI checks.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod budget;
mod colliders;
pub mod generator;
#[cfg(feature = "store")]
mod load;
#[cfg(feature = "store")]
mod persist;
mod simulation;
mod undo;

pub use budget::{Bucket, EditBudgetError, EditBudgets};
pub use colliders::{NEAR_M, TerrainColliders, pieces_near};
pub use generator::{GeneratorSpec, GeneratorSpecError};
#[cfg(feature = "store")]
pub use load::{BaseFieldError, LoadedBlocks, LoadedSession, SkippedOp, base_field, load};
#[cfg(feature = "store")]
pub use persist::{Bake, bake, flush};
pub use simulation::{pieces_awake, step_replay, terrain_changed};
pub use undo::{Action, Step, UndoJournal, block_inverse, block_step};
