//! WAL checkpoints on a thread of their own.
//!
//! SQLite copies the write-ahead log back into the database file (a checkpoint) inside the
//! commit that takes the log past `wal_autocheckpoint` pages (1 000 by default): that commit
//! then also writes megabytes and syncs the database file. On a server every client's edits
//! wait for that commit; measured on the 2-core VM, 64 clients at 20 000 ops/s, the commit
//! after a bake's rows took 12–18 ms that way (BENCHMARKS.md, multiplayer, 2026-12-03). The checkpointer runs a `PASSIVE` checkpoint every few
//! hundred milliseconds on its own connection, beside the appends (a passive checkpoint
//! waits for no writer and no writer waits for it: <https://sqlite.org/wal.html>,
//! "Checkpointing", and `sqlite3_wal_checkpoint_v2`). The store's own connection keeps an
//! automatic checkpoint at a high mark ([`WRITER_CHECKPOINT_PAGES`]) only as a fallback: if
//! the checkpointer fell behind or failed, the log still stops growing there.

use std::path::Path;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::OpenFlags;

use crate::error::StoreError;
use crate::store::{Store, connect};

/// The store connection's own automatic checkpoint while a checkpointer runs: 16 384 pages
/// (64 MiB at SQLite's default 4 KiB page). The checkpointer normally keeps the log far
/// below it.
pub(crate) const WRITER_CHECKPOINT_PAGES: u32 = 16_384;

impl Store {
    /// Moves SQLite's WAL checkpoints off the thread that appends: a thread of the store's
    /// runs one every `every` on a connection of its own, and an append no longer copies the
    /// log into the file inside its commit (12–18 ms after a bake, under a server's load).
    /// Returns `false`, changing nothing, where the store has only one connection (every
    /// system but Linux, `lock.rs`). Stopped when the store is dropped; a second call
    /// changes nothing.
    ///
    /// # Errors
    /// [`StoreError::ReadOnly`]; SQLite failures opening the second connection or raising
    /// the store's own checkpoint mark; [`StoreError::Io`] if the thread cannot start. The
    /// store is unchanged then.
    pub fn checkpoint_in_background(&mut self, every: Duration) -> Result<bool, StoreError> {
        self.writable()?;
        if self.lock.is_none() {
            return Ok(false);
        }
        if self.checkpointer.is_none() {
            // Started first, kept only once the mark is raised (dropping it stops it).
            let started = Checkpointer::start(&self.path, every)?;
            self.conn.execute_batch(&format!(
                "PRAGMA wal_autocheckpoint = {WRITER_CHECKPOINT_PAGES};"
            ))?;
            self.checkpointer = Some(started);
        }
        Ok(true)
    }
}

/// A thread running passive checkpoints on its own connection until dropped.
pub(crate) struct Checkpointer {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Opens a second connection to the world at `path` and starts checkpointing it every
    /// `every`.
    ///
    /// # Errors
    /// SQLite failures opening the connection; [`StoreError::Io`] if the thread cannot start.
    pub(crate) fn start(path: &Path, every: Duration) -> Result<Self, StoreError> {
        let conn = connect(path, OpenFlags::SQLITE_OPEN_READ_WRITE)?;
        // It never commits, so its own automatic checkpoint never runs; a busy checkpoint is
        // skipped, not waited for: the next one comes soon.
        conn.busy_timeout(Duration::ZERO)?;
        let (stop, rx) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("loam-store-checkpoint".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(every) {
                    // Errors (busy, a full disk) leave the frames in the log for the next
                    // try, or for the store's own fallback checkpoint.
                    let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
                }
            })
            .map_err(|source| StoreError::Io {
                path: path.into(),
                source,
            })?;
        Ok(Self {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Checkpointer {
    /// Stops the thread and closes its connection (so that the store's connection is the
    /// last one and its close folds the log into the file).
    fn drop(&mut self) {
        self.stop = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
