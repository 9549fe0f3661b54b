//! SQLite connections to a world file: opened without reading the path as a URI, and busy
//! answers retried (for a while: then [`StoreError::Busy`] says what was busy and for how
//! long).

use std::path::Path;
use std::time::Duration;

use crate::clock::Instant;

use rusqlite::{Connection, ErrorCode, OpenFlags};

use crate::error::{StoreError, Writing};

/// How long a busy database is retried before giving up, unless the store is told otherwise
/// ([`crate::Store::set_busy_wait`]).
pub(crate) const BUSY: Duration = Duration::from_secs(5);

/// Opens an SQLite connection to the file at `path` with `flags` (without a mutex: one
/// thread uses it), never reading `path` as a URI: a world named `file:x.loam` is that
/// file, not the URI (the bundled SQLite would otherwise open `x.loam`).
pub(crate) fn connect(path: &Path, flags: OpenFlags) -> rusqlite::Result<Connection> {
    let plain = if path.as_os_str().as_encoded_bytes().starts_with(b"file:") {
        Path::new(".").join(path)
    } else {
        path.to_path_buf()
    };
    Connection::open_with_flags(plain, flags | OpenFlags::SQLITE_OPEN_NO_MUTEX)
}

/// Whether SQLite answered busy or locked (another connection holds the file).
pub(crate) fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// Runs `f` (a write of kind `writing` to the world at `path`) again while SQLite reports
/// the database busy, for up to `wait` in all; each try itself waits in SQLite's busy
/// handler (which looks again after 1, 2, 5, 10, … ms, at most 100 ms apart), so a write
/// goes on soon after the other connection lets go.
///
/// # Errors
/// [`StoreError::Busy`] with `writing` and the time waited, once `wait` has passed;
/// [`StoreError::Sqlite`] for any other failure.
pub(crate) fn retry<T>(
    path: &Path,
    wait: Duration,
    writing: Writing,
    mut f: impl FnMut() -> rusqlite::Result<T>,
) -> Result<T, StoreError> {
    let start = Instant::now();
    loop {
        match f() {
            Ok(t) => return Ok(t),
            Err(e) if is_busy(&e) && start.elapsed() < wait => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) if is_busy(&e) => {
                return Err(StoreError::Busy {
                    path: path.into(),
                    writing,
                    waited: start.elapsed(),
                });
            }
            Err(e) => return Err(StoreError::Sqlite(e)),
        }
    }
}
