//! What can go wrong with a world file.

use std::path::PathBuf;

use loam_field::{DecodeError, EditError};

/// A world file could not be created, opened, read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// No file at the path.
    #[error("{path:?}: no such world file")]
    NotFound {
        /// The file.
        path: PathBuf,
    },
    /// `create` found a file already there.
    #[error("{path:?} already exists")]
    Exists {
        /// The file.
        path: PathBuf,
    },
    /// `create` found the write-ahead log (or rollback journal) of an earlier world of the
    /// same name, left by a crash: SQLite would take its pages into the new world.
    #[error(
        "{log:?} is left from an earlier world named {path:?} (its last ops after a crash): move it away together with that world's file, or delete it, before creating a new world there"
    )]
    LeftoverLog {
        /// The world file to be created.
        path: PathBuf,
        /// The leftover log.
        log: PathBuf,
    },
    /// The file is not an SQLite database (it was not written to).
    #[error("{path:?} is not an SQLite database")]
    NotSqlite {
        /// The file.
        path: PathBuf,
    },
    /// An SQLite database, but not a Loam world.
    #[error("{path:?} is an SQLite database but not a Loam world: {why}")]
    Foreign {
        /// The file.
        path: PathBuf,
        /// What was missing or wrong.
        why: String,
    },
    /// Written by a newer build.
    #[error("{path:?} is world format {found}; this build reads formats 1 to {max}")]
    NewerVersion {
        /// The file.
        path: PathBuf,
        /// Its format version.
        found: i64,
        /// The newest this build reads.
        max: i64,
    },
    /// Another process has the world open.
    #[error(
        "{path:?} is in use by another process (an editor, `loam serve` or a replay has it open; a world is opened by one process at a time, also to read)"
    )]
    InUse {
        /// The file.
        path: PathBuf,
    },
    /// The file is a Loam node's copy of a world on NATS JetStream
    /// ([`Store::append_records_followed`]): only its node writes it (an op appended
    /// elsewhere would part it from the stream for good). [`Store::open_followed`] opens it
    /// for the node; [`Store::open_read_only`] for anyone.
    ///
    /// [`Store::append_records_followed`]: crate::Store::append_records_followed
    /// [`Store::open_followed`]: crate::Store::open_followed
    /// [`Store::open_read_only`]: crate::Store::open_read_only
    #[error(
        "{path:?} is a node's copy of a world on NATS JetStream (at {followed:?}): only its node writes it; serve it with `loam serve --nats URL --world-id NAME --world FILE`, or export the world (`loam world export --nats`) for a copy to open"
    )]
    Followed {
        /// The file.
        path: PathBuf,
        /// Where it stands in the log it follows, as saved.
        followed: String,
    },
    /// A baked brick's blob does not decode.
    #[error("brick ({}, {}, {}) is corrupt", key[0], key[1], key[2])]
    CorruptBrick {
        /// Its brick coordinate.
        key: [i32; 3],
    },
    /// The saved undo history does not decode.
    #[error(
        "the saved undo history is corrupt: {0} (the terrain and blocks are not: `loam world compact --discard-history` keeps them and drops the undo history)"
    )]
    CorruptHistory(String),
    /// A logged op does not decode.
    #[error("op {seq} is corrupt")]
    CorruptOp {
        /// Its sequence number.
        seq: u64,
        /// Why.
        #[source]
        source: DecodeError,
    },
    /// A logged block op's checksum fails.
    #[error("block op {seq} is corrupt (checksum mismatch)")]
    CorruptBlockOp {
        /// Its sequence number.
        seq: u64,
    },
    /// The saved blocks snapshot is corrupt (checksum, compression, or not the bake's).
    #[error("the saved blocks are corrupt: {0}")]
    CorruptBlocks(String),
    /// A bake without blocks of a world that has them (a snapshot, or a block op at or
    /// before the bake): it would leave them behind, and compaction would lose them.
    #[error("the world has blocks (since op {seq}): bake it with Store::bake_with_blocks")]
    BlocksNotBaked {
        /// The snapshot's sequence number, or the first block op's.
        seq: u64,
    },
    /// The caller's visit of a replayed record failed ([`crate::Store::load_with`]).
    #[error("replaying op {seq} failed")]
    Visit {
        /// The record's sequence number.
        seq: u64,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A metadata value is missing or malformed.
    #[error("metadata `{key}` is missing or malformed")]
    CorruptMeta {
        /// The key.
        key: &'static str,
    },
    /// The op log has a gap or an op out of order.
    #[error("op {got} does not follow op {last} (the log must have no gaps)")]
    OutOfOrder {
        /// The last sequence number stored.
        last: u64,
        /// The one offered or found.
        got: u64,
    },
    /// A logged op failed when replayed.
    #[error("op {seq} fails on replay")]
    Replay {
        /// Its sequence number.
        seq: u64,
        /// Why.
        #[source]
        source: EditError,
    },
    /// The file is damaged: SQLite reports its pages malformed (truncated, overwritten).
    #[error("{path:?} is damaged: {why}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What SQLite said.
        why: String,
    },
    /// The folder a new world was to be created in does not exist.
    #[error("folder {path:?} does not exist")]
    NoFolder {
        /// The folder.
        path: PathBuf,
    },
    /// A write to a world opened read-only.
    #[error("{path:?} is open read-only")]
    ReadOnly {
        /// The file.
        path: PathBuf,
    },
    /// An online backup could not be started or went wrong (the world is unchanged).
    #[error("backup to {path:?}: {why}")]
    Backup {
        /// The backup's file.
        path: PathBuf,
        /// What SQLite said.
        why: String,
    },
    /// Another connection to the file held SQLite's write lock for longer than the store
    /// waits ([`crate::Store::set_busy_wait`], 5 s unless set): an `sqlite3` shell or
    /// another program with a transaction open on the world. Nothing of the write is in the
    /// file; trying again once the other connection lets go succeeds.
    #[error(
        "{path:?} was busy for {:.1} s while {writing}: another connection to it holds SQLite's write lock (an `sqlite3` shell or another program with a transaction open on the world)",
        .waited.as_secs_f64()
    )]
    Busy {
        /// The world file.
        path: PathBuf,
        /// What the store was writing.
        writing: Writing,
        /// How long the write waited for the lock before giving up.
        waited: std::time::Duration,
    },
    /// An append refused because the log after the bake does not read whole (an op that
    /// does not decode, whose checksum fails, or a gap): an op written after it would follow
    /// ops no load replays. Nothing was appended. The source says which op and why.
    #[error(
        "{path:?}: nothing appended: the op log after the bake does not read whole, and a load would stop before the new op"
    )]
    UnreadableLog {
        /// The world file.
        path: PathBuf,
        /// Why the log does not read ([`StoreError::CorruptOp`],
        /// [`StoreError::CorruptBlockOp`] or [`StoreError::OutOfOrder`]).
        #[source]
        source: Box<StoreError>,
    },
    /// SQLite failed (after retries where retrying helps). The message names the common
    /// causes a user can act on (a full disk, a read-only file or folder, a file that cannot
    /// be opened); SQLite's own text is its source.
    #[error("{}", sqlite_summary(.0))]
    Sqlite(#[from] rusqlite::Error),
    /// Reading or renaming the file failed.
    #[error("{path:?}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// What a store was writing when another connection held the file's write lock too long
/// ([`StoreError::Busy`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Writing {
    /// Appending ops to the log (`Store::append`, `append_batch`, `append_block`,
    /// `append_records`).
    Append,
    /// Writing a part of a bake's rows ahead of its commit (`Store::write_bake_part`).
    BakePart,
    /// Committing a bake (`Store::commit_bake`, `Store::bake`).
    BakeCommit,
    /// Deleting what a committed bake replaced (`Store::tidy_bake`).
    BakeTidy,
    /// Dropping the ops a bake covers (`Store::compact`).
    Compact,
    /// Rebuilding the file and checkpointing its write-ahead log (`Store::vacuum`).
    Vacuum,
    /// Opening the world writable: its index, and deleting rows no load reads.
    Open,
    /// Migrating the world to the newest format.
    Migrate,
}

impl std::fmt::Display for Writing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Writing::Append => "appending ops",
            Writing::BakePart => "writing a bake's rows ahead",
            Writing::BakeCommit => "committing a bake",
            Writing::BakeTidy => "deleting what a bake replaced",
            Writing::Compact => "compacting the op log",
            Writing::Vacuum => "vacuuming and checkpointing",
            Writing::Open => "opening the world",
            Writing::Migrate => "migrating the world's format",
        })
    }
}

/// What a user can do about an SQLite failure, when its code says.
fn sqlite_summary(e: &rusqlite::Error) -> &'static str {
    use rusqlite::ErrorCode;
    match e.sqlite_error_code() {
        Some(ErrorCode::DiskFull) => "SQLite failed: the disk is full",
        Some(ErrorCode::ReadOnly) => {
            "SQLite failed: the world file or its folder is read-only (a world is written to \
             as it is opened, and its folder holds its write-ahead log: both must be writable)"
        }
        Some(ErrorCode::CannotOpen) => {
            "SQLite failed: the file cannot be opened (does its folder exist, and may this user \
             read and write in it?)"
        }
        _ => "SQLite failed",
    }
}

#[cfg(test)]
mod tests {
    use super::StoreError;
    use rusqlite::ffi;

    fn failure(code: i32) -> StoreError {
        StoreError::Sqlite(rusqlite::Error::SqliteFailure(ffi::Error::new(code), None))
    }

    /// SQLite failures a user can act on say what to do; the rest stay "SQLite failed".
    #[test]
    fn sqlite_failures_name_what_a_user_can_do() {
        assert_eq!(
            failure(ffi::SQLITE_FULL).to_string(),
            "SQLite failed: the disk is full"
        );
        for code in [ffi::SQLITE_READONLY, ffi::SQLITE_READONLY_DIRECTORY] {
            let m = failure(code).to_string();
            assert!(
                m.contains("read-only") && m.contains("both must be writable"),
                "{m}"
            );
        }
        assert!(
            failure(ffi::SQLITE_CANTOPEN)
                .to_string()
                .contains("cannot be opened")
        );
        assert_eq!(failure(ffi::SQLITE_ERROR).to_string(), "SQLite failed");
    }
}
