//! Keeping other processes out of a world while it is open.
//!
//! On Linux a writable store holds an exclusive `flock(2)` on the world file, and a read-only
//! store a shared one, for the store's life: a second process (or a second store in this
//! process) gets [`StoreError::InUse`]. Linux keeps `flock` locks apart from the POSIX
//! record locks SQLite takes on the same file (`flock(2)`, "NOTES"), so SQLite runs in its
//! normal locking mode and the store may open a second connection of its own (the
//! background checkpointer, `checkpoint.rs`). On NFS, Linux emulates `flock` with record
//! locks; a world on NFS is not supported.
//!
//! Elsewhere (BSD and macOS may merge the two kinds of lock; Windows' locks are mandatory)
//! there is no such lock, and SQLite's exclusive locking mode keeps other processes out
//! instead: then the store has one connection only.

use std::fs::{File, TryLockError};
use std::path::Path;
use std::time::Duration;

use crate::clock::Instant;
use crate::error::StoreError;

/// Whether a store holds its own lock and SQLite runs in normal locking mode, so that more
/// than one of the store's connections may use the file.
pub(crate) const OWN_LOCK: bool = cfg!(target_os = "linux");

/// How long a lock held elsewhere is waited for before [`StoreError::InUse`], as SQLite's
/// busy timeout was for its exclusive lock. A `flock` belongs to the open file, and a process
/// forked between its `fork` and `exec` holds a copy of every open file: a store dropped and
/// opened again while another thread spawns a process can find its own old lock still held
/// for that moment (seen in this crate's tests, which spawn processes in parallel).
const WAIT: Duration = Duration::from_millis(200);

/// Locks the world file at `path`: exclusively for a writer, shared for a reader. `None`
/// where the store relies on SQLite's exclusive locking mode instead ([`OWN_LOCK`]).
///
/// # Errors
/// [`StoreError::InUse`] if another store holds a conflicting lock for longer than [`WAIT`]; [`StoreError::Io`] if
/// the file cannot be opened or locked.
pub(crate) fn hold(path: &Path, exclusive: bool) -> Result<Option<File>, StoreError> {
    if !OWN_LOCK {
        return Ok(None);
    }
    let io = |source| StoreError::Io {
        path: path.into(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    let start = Instant::now();
    loop {
        let locked = if exclusive {
            file.try_lock()
        } else {
            file.try_lock_shared()
        };
        match locked {
            Ok(()) => return Ok(Some(file)),
            Err(TryLockError::WouldBlock) if start.elapsed() < WAIT => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(TryLockError::WouldBlock) => return Err(StoreError::InUse { path: path.into() }),
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
    }
}
