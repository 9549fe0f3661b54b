//! # loam-store
//!
//! A Loam world in one SQLite file (rusqlite with its bundled SQLite): metadata, the op log,
//! baked bricks and the undo history. Inspect one with the `sqlite3` shell.
//!
//! - **Tables.** `meta(key, value)` (format, format version, generator JSON, field settings,
//!   heightmap BLAKE3, created / modified times, the sequence the bake covers); `ops(seq,
//!   stroke, op)` (MessagePack [`loam_field::LogEntry`] records); `bricks(x, y, z, seq, data)`
//!   (a brick blob, format 2: one grid index and material when uniform, else zstd of the 32³
//!   16-bit grid indices and material ids — exactly the field's quantised samples);
//!   `history(id = 1, seq, data)` (the undo history at the bake, zstd of MessagePack).
//! - **Formats.** [`FORMAT_VERSION`] is 2. A format-1 world (f32 brick blobs, from before the
//!   quantisation grid) opened read-only is read as it is; opened writable it is migrated
//!   first, in one transaction, its values rounded onto the grid.
//! - **Durability.** WAL with `synchronous = FULL`, one transaction per appended op: when
//!   [`Store::append`] returns, the op survives a crash. A bake writes its bricks, the history
//!   and the covered sequence in one transaction; only then may [`Store::compact`] drop the
//!   covered ops.
//! - **Loading** = baked bricks + saved history + newer ops replayed, equal bit for bit to a
//!   full replay from the generator.
//! - **Safety.** A file is checked read-only before anything is written (not SQLite,
//!   foreign, newer format: a typed [`StoreError`]); the file is held with an exclusive lock,
//!   so a second process gets [`StoreError::InUse`]; busy is retried.
#![deny(missing_docs)]

mod brick_blob;
mod checks;
mod error;
mod migrate;
mod store;
mod tag;

pub use error::StoreError;
pub use store::{FORMAT, FORMAT_VERSION, LoadedWorld, Store, WorldInfo};
