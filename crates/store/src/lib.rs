//! # loam-store
//!
//! A Loam world in one SQLite file (rusqlite with its bundled SQLite): metadata, the op log,
//! baked bricks and the undo history. Inspect one with the `sqlite3` shell.
//!
//! - **Tables.** `meta(key, value)` (format, format version, generator JSON, field settings,
//!   heightmap BLAKE3, created / modified times, the sequence the bake covers); `ops(seq,
//!   stroke, op)` (MessagePack [`loam_field::LogEntry`] records); `block_ops(seq, step, op)`
//!   (block ops, opaque bytes from loam-blocks, with the physics step they were applied at:
//!   one sequence numbering across `ops` and `block_ops`); `bricks(x, y, z, seq, data)` (a
//!   brick blob as the bake at op `seq` wrote it, format 2: one grid index and material when
//!   uniform, else zstd of the 32³ 16-bit grid indices and material ids — exactly the
//!   field's quantised samples); `history(id = 1, seq, data)` (the undo history's header at
//!   the bake) and `strokes(seq, first, last, data)` (its strokes in rows, each written by
//!   the bake that first saw it as it is: see `strokes.rs`); `blocks(id = 1, seq, step,
//!   data)` (the block world at the bake, zstd of loam-blocks' opaque snapshot bytes).
//! - **Formats.** [`FORMAT_VERSION`] is 4. Older worlds opened read-only are read as they are
//!   (format 1: f32 brick blobs; 2: no block tables, so no blocks; 3: the history in one
//!   blob, one row per brick); opened writable they are migrated first, one transaction per
//!   step.
//! - **Blocks** stay opaque here (no Rapier, no loam-blocks): [`Store::append_block`] logs
//!   a block op, [`Store::bake_with_blocks`] bakes the block world with the field (a world
//!   with blocks must: [`Store::bake`] refuses it), [`Store::load_with`] replays both kinds
//!   in order.
//! - **Durability.** WAL with `synchronous = FULL`, one transaction per appended op: when
//!   [`Store::append`] returns, the op survives a crash. A bake writes the bricks and history
//!   strokes that changed since the last bake, then the history header and the covered
//!   sequence in one small transaction; its bricks and strokes may be written ahead in
//!   parts ([`Store::write_bake_part`], between appends), and no load reads them before that
//!   transaction. Only then may [`Store::compact`] drop the covered ops. No op is appended
//!   on top of a log that does not read whole ([`StoreError::UnreadableLog`]): it would
//!   follow ops no load replays.
//! - **Loading** = baked bricks + saved history + newer ops replayed, equal bit for bit to a
//!   full replay from the generator.
//! - **Backups** while the world is open and written ([`Store::begin_backup`],
//!   [`Store::backup_step`]): SQLite's online backup through the store's own connection, a
//!   few pages at a time between appends (no other process can read a world a server
//!   holds).
//! - **Safety.** A file is checked read-only before anything is written (not SQLite,
//!   foreign, newer format: a typed [`StoreError`]); the file is held with an exclusive lock,
//!   so a second process gets [`StoreError::InUse`]. On Linux that lock is the store's own
//!   (`flock`), which lets [`Store::checkpoint_in_background`] copy the log into the file on
//!   a second connection; elsewhere it is SQLite's exclusive locking mode. Another
//!   program's SQLite connection (an `sqlite3` shell, which takes no `flock`) holding the
//!   write lock is waited for up to [`Store::set_busy_wait`] (5 s); then
//!   [`StoreError::Busy`] says what was being written and for how long, and nothing of it is
//!   in the file.
#![deny(missing_docs)]

mod backup;
mod bake;
mod blocks;
mod brick_blob;
mod checkpoint;
mod checks;
mod clock;
mod error;
mod image;
mod load;
mod lock;
mod migrate;
mod sqlite;
mod store;
mod strokes;
mod tag;

pub use backup::{BackupCopy, BackupDone};
pub use bake::{BakeTidy, Baked, PreparedBake};
pub use blocks::{BlockLogEntry, LogRecord, Replayed, SavedBlocks};
pub use error::{StoreError, Writing};
pub use store::{FORMAT, FORMAT_VERSION, LoadedWorld, Store, WorldInfo};

/// Removes world file `path` and SQLite's companions of it (`-wal`, `-shm`, `-journal`), as
/// far as they exist; errors are ignored (for clearing away a file that failed or was
/// abandoned, where there is nothing better to do with them).
pub fn remove_world_files(path: &std::path::Path) {
    let _ = std::fs::remove_file(path);
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
}
