//! SQLite connections to a world file: opened without reading the path as a URI, and busy
//! answers retried.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags};

/// How long a busy database is retried before giving up.
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

/// Runs `f` again while SQLite reports the database busy, up to [`BUSY`].
pub(crate) fn retry<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let start = std::time::Instant::now();
    loop {
        match f() {
            Err(e) if is_busy(&e) && start.elapsed() < BUSY => {
                std::thread::sleep(Duration::from_millis(5));
            }
            r => return r,
        }
    }
}
