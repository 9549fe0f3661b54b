//! What an open checks before trusting a file: the SQLite header, the metadata (format,
//! version, checksum), and a hot rollback journal left by a kill.

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OptionalExtension};

use crate::error::StoreError;
use crate::store::{FORMAT, FORMAT_VERSION, is_busy};

/// SQLITE_READONLY_ROLLBACK: a read-only connection met a hot rollback journal.
pub(crate) fn has_hot_journal(e: &StoreError) -> bool {
    matches!(e, StoreError::Sqlite(rusqlite::Error::SqliteFailure(f, _))
        if f.extended_code == rusqlite::ffi::SQLITE_READONLY_ROLLBACK)
}

/// Lets SQLite roll back a hot journal: a writable connection's first read does it.
pub(crate) fn recover_hot_journal(path: &Path) -> Result<(), StoreError> {
    let conn = crate::store::connect(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE)?;
    conn.busy_timeout(Duration::from_millis(200))?;
    conn.query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| {
        r.get::<_, i64>(0)
    })
    .map_err(|e| {
        if is_busy(&e) {
            StoreError::InUse { path: path.into() }
        } else {
            StoreError::Sqlite(e)
        }
    })?;
    Ok(())
}

pub(crate) fn wal_extension(path: &Path) -> String {
    match path.extension() {
        Some(e) => format!("{}-wal", e.to_string_lossy()),
        None => "wal".into(),
    }
}

/// A digest of every metadata row but `tag` (BLAKE3 of `key NUL value NUL` in key order, 16
/// bytes in hex): stored as `tag`, checked on open, so a damaged setting or `bake_seq` is
/// found instead of silently changing the world.
pub(crate) fn meta_digest(conn: &Connection) -> rusqlite::Result<String> {
    let mut stmt = conn.prepare("SELECT key, value FROM meta WHERE key != 'tag' ORDER BY key")?;
    let mut h = blake3::Hasher::new();
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    for row in rows {
        let (k, v) = row?;
        h.update(k.as_bytes());
        h.update(&[0]);
        h.update(v.as_bytes());
        h.update(&[0]);
    }
    Ok(h.finalize().as_bytes()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// The first 16 bytes of every SQLite 3 database.
pub(crate) const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

pub(crate) fn check_header(path: &Path) -> Result<(), StoreError> {
    let io = |source| StoreError::Io {
        path: path.into(),
        source,
    };
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(StoreError::NotFound { path: path.into() });
        }
        Err(e) => return Err(io(e)),
    };
    let mut head = [0u8; 16];
    match f.read_exact(&mut head) {
        Ok(()) if &head == SQLITE_HEADER => Ok(()),
        Ok(()) => Err(StoreError::NotSqlite { path: path.into() }),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            Err(StoreError::NotSqlite { path: path.into() })
        }
        Err(e) => Err(io(e)),
    }
}

/// Checks the metadata and returns the file's format version.
pub(crate) fn check_meta(conn: &Connection, path: &Path) -> Result<i64, StoreError> {
    let foreign = |why: &str| StoreError::Foreign {
        path: path.into(),
        why: why.into(),
    };
    let get = |key: &str| -> Result<Option<String>, StoreError> {
        match conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
        {
            Ok(v) => Ok(v),
            Err(e) if is_busy(&e) => Err(StoreError::InUse { path: path.into() }),
            Err(e) if e.sqlite_error_code() == Some(ErrorCode::NotADatabase) => {
                Err(StoreError::NotSqlite { path: path.into() })
            }
            Err(e) if e.sqlite_error_code() == Some(ErrorCode::DatabaseCorrupt) => {
                Err(StoreError::Corrupt {
                    path: path.into(),
                    why: e.to_string(),
                })
            }
            Err(e) if e.to_string().contains("no such table") => Err(foreign("no `meta` table")),
            Err(e) => Err(StoreError::Sqlite(e)),
        }
    };
    if get("format")?.as_deref() != Some(FORMAT) {
        return Err(foreign("`format` is not \"loam-world\""));
    }
    let version: i64 = get("format_version")?
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| foreign("no `format_version`"))?;
    if !(1..=FORMAT_VERSION).contains(&version) {
        return Err(StoreError::NewerVersion {
            path: path.into(),
            found: version,
            max: FORMAT_VERSION,
        });
    }
    let digest = meta_digest(conn).map_err(StoreError::Sqlite)?;
    if get("tag")?.as_deref() != Some(digest.as_str()) {
        return Err(StoreError::Corrupt {
            path: path.into(),
            why: "the metadata does not match its checksum".into(),
        });
    }
    Ok(version)
}
