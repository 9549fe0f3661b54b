//! Online backups: a consistent copy of a world file while it is open and being written, made
//! a few pages at a time between appends with SQLite's online backup API
//! (`sqlite3_backup_init` / `_step` / `_finish`, <https://sqlite.org/backup.html>).
//!
//! A world is held with an exclusive lock (see [`Store`]), so no other process can read it
//! while a server has it open: not the `sqlite3` shell's `.backup`, not a replication tool.
//! The copy is therefore made through the store's own connection. Writes made through that
//! connection between two steps are carried into the copy by SQLite itself, so the finished
//! copy is the world as of the last step, whatever was appended or baked meanwhile.
//!
//! The copy is written to `PATH.part` and renamed to `PATH` once complete and synced, so a
//! file at `PATH` is always a whole world.

use std::path::{Path, PathBuf};
use std::ptr::NonNull;

use rusqlite::{Connection, OpenFlags, ffi};

use crate::error::StoreError;
use crate::store::Store;

/// A backup in progress: SQLite's backup handle and the copy's connection.
pub(crate) struct Backup {
    raw: NonNull<ffi::sqlite3_backup>,
    /// The copy's connection; outlives `raw` (finished in `Drop` first).
    dest: Option<Connection>,
    part: PathBuf,
    path: PathBuf,
    pages: u64,
}

// SAFETY: the handle is used only through `&mut Store`, on one thread at a time, with the
// store's connection and `dest`, which are both `Send` (rusqlite's connections are).
unsafe impl Send for Backup {}

impl Drop for Backup {
    fn drop(&mut self) {
        // SAFETY: `raw` came from `sqlite3_backup_init` and is finished exactly once, here,
        // while both connections are still open (the store drops its backup before its
        // connection: `Store::drop`).
        unsafe {
            ffi::sqlite3_backup_finish(self.raw.as_ptr());
        }
        // An unfinished copy is not a world: it goes (a finished one was renamed already).
        if self.dest.take().is_some() {
            crate::remove_world_files(&self.part);
        }
    }
}

/// A finished backup ([`Store::backup_step`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupDone {
    /// The copy: a whole world file.
    pub path: PathBuf,
    /// The last op it holds (the store's last op when the copy was completed).
    pub last_seq: u64,
    /// Database pages copied (the file's size in pages at the end).
    pub pages: u64,
}

fn backup_error(path: &Path, why: impl Into<String>) -> StoreError {
    StoreError::Backup {
        path: path.into(),
        why: why.into(),
    }
}

/// SQLite's message for the last error on `db`.
///
/// # Safety
/// `db` is an open connection.
unsafe fn errmsg(db: *mut ffi::sqlite3) -> String {
    // SAFETY: the caller's contract; SQLite returns a NUL-terminated string it owns.
    unsafe {
        let m = ffi::sqlite3_errmsg(db);
        if m.is_null() {
            "unknown SQLite error".into()
        } else {
            std::ffi::CStr::from_ptr(m).to_string_lossy().into_owned()
        }
    }
}

impl Store {
    /// Starts an online backup of the world into `path` (written as `path` with `.part`
    /// added, renamed to `path` once complete). Copy it with [`Store::backup_step`] between
    /// other writes; dropping the store, or [`Store::cancel_backup`], abandons it and removes
    /// the part.
    ///
    /// # Errors
    /// [`StoreError::ReadOnly`]; [`StoreError::Exists`] if `path` or its part is there;
    /// [`StoreError::Backup`] if a backup is already in progress or SQLite cannot start
    /// one; [`StoreError::Sqlite`] if the copy cannot be created. Nothing is left behind.
    pub fn begin_backup(&mut self, path: &Path) -> Result<(), StoreError> {
        self.writable()?;
        if self.backup.is_some() {
            return Err(backup_error(path, "a backup is already in progress"));
        }
        let mut part = path.as_os_str().to_owned();
        part.push(".part");
        let part = PathBuf::from(part);
        for p in [path, part.as_path()] {
            if p.exists() {
                return Err(StoreError::Exists { path: p.into() });
            }
        }
        let dest = Connection::open_with_flags(
            &part,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        // The copy needs no journal and no syncs while it is written: an unfinished part is
        // thrown away, and `BackupCopy::complete` syncs the whole file once, off the
        // writer's path (a sync inside the last step held a 44 MB world's writer 0.2 s).
        dest.execute_batch("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")?;
        // SAFETY: both handles are open connections that outlive the backup (it is dropped
        // before either: `Backup::drop`, `Store::drop`); the names are NUL-terminated.
        let raw = unsafe {
            ffi::sqlite3_backup_init(
                dest.handle(),
                c"main".as_ptr(),
                self.conn.handle(),
                c"main".as_ptr(),
            )
        };
        let Some(raw) = NonNull::new(raw) else {
            // SAFETY: `dest` is open; the error is recorded on the destination.
            let why = unsafe { errmsg(dest.handle()) };
            drop(dest);
            let _ = std::fs::remove_file(&part);
            return Err(backup_error(path, why));
        };
        self.backup = Some(Backup {
            raw,
            dest: Some(dest),
            part,
            path: path.into(),
            pages: 0,
        });
        Ok(())
    }

    /// Whether a backup is in progress.
    pub fn backing_up(&self) -> bool {
        self.backup.is_some()
    }

    /// Abandons the backup in progress, if any (its part is removed).
    pub fn cancel_backup(&mut self) {
        self.backup = None;
    }

    /// Copies up to `pages` more pages (at least 1) of the backup in progress: `Ok(None)`
    /// while pages remain (or the world is busy), `Ok(Some(copy))` once every page is
    /// copied. Ops appended between steps are in the copy. The copy is not yet synced nor
    /// renamed: [`BackupCopy::complete`] does that, on any thread (syncing a large copy
    /// takes a while, and the store is free meanwhile).
    ///
    /// # Errors
    /// [`StoreError::Backup`] with SQLite's reason; the backup is abandoned (its part
    /// removed) and the world is unchanged. `Ok(None)` without a backup in progress.
    pub fn backup_step(&mut self, pages: u32) -> Result<Option<BackupCopy>, StoreError> {
        let Some(b) = self.backup.as_mut() else {
            return Ok(None);
        };
        let n = i32::try_from(pages.max(1)).unwrap_or(i32::MAX);
        // SAFETY: `raw` is a live backup handle between two open connections.
        let rc = unsafe { ffi::sqlite3_backup_step(b.raw.as_ptr(), n) };
        // SAFETY: as above.
        b.pages =
            u64::try_from(unsafe { ffi::sqlite3_backup_pagecount(b.raw.as_ptr()) }).unwrap_or(0);
        match rc {
            ffi::SQLITE_OK | ffi::SQLITE_BUSY | ffi::SQLITE_LOCKED => Ok(None),
            ffi::SQLITE_DONE => {
                let mut b = self.backup.take().expect("checked above");
                let dest = b
                    .dest
                    .take()
                    .expect("a backup in progress has its copy open");
                let copy = BackupCopy {
                    dest: Some(dest),
                    part: b.part.clone(),
                    path: b.path.clone(),
                    pages: b.pages,
                    last_seq: self.last_seq,
                };
                // Finishes the handle; without its connection it leaves the part alone.
                drop(b);
                Ok(Some(copy))
            }
            _ => {
                // The step's own code: the destination's last message can be "not an
                // error" when the step failed on the disk (SQLITE_FULL).
                let why = match b.dest.as_ref() {
                    // SAFETY: `d` is open.
                    Some(d) if unsafe { rusqlite::ffi::sqlite3_errcode(d.handle()) } == rc => {
                        // SAFETY: `d` is open.
                        unsafe { errmsg(d.handle()) }
                    }
                    _ => rusqlite::ffi::code_to_str(rc).to_string(),
                };
                let path = b.path.clone();
                self.backup = None;
                Err(backup_error(&path, why))
            }
        }
    }
}

/// A backup whose pages are all copied ([`Store::backup_step`]), to be synced and renamed
/// into place by [`BackupCopy::complete`]. Dropped without that, its part is removed.
pub struct BackupCopy {
    dest: Option<Connection>,
    part: PathBuf,
    path: PathBuf,
    pages: u64,
    last_seq: u64,
}

impl std::fmt::Debug for BackupCopy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BackupCopy")
            .field("path", &self.path)
            .field("last_seq", &self.last_seq)
            .finish_non_exhaustive()
    }
}

impl Drop for BackupCopy {
    fn drop(&mut self) {
        if self.dest.take().is_some() {
            crate::remove_world_files(&self.part);
        }
    }
}

impl BackupCopy {
    /// The last op the copy holds.
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// Leaves the copy as one file at rest (no WAL beside it), syncs it and renames it to
    /// its path: from then on the file there is a whole world.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] or [`StoreError::Io`]; the part is removed.
    pub fn complete(mut self) -> Result<BackupDone, StoreError> {
        let dest = self
            .dest
            .take()
            .expect("a copy not yet completed has its connection");
        let (part, path) = (self.part.clone(), self.path.clone());
        let finish = (|| -> Result<(), StoreError> {
            dest.query_row("PRAGMA journal_mode = DELETE", [], |r| {
                r.get::<_, String>(0)
            })?;
            dest.close().map_err(|(_, e)| e)?;
            let io = |source| StoreError::Io {
                path: part.clone(),
                source,
            };
            std::fs::File::open(&part)
                .and_then(|f| f.sync_all())
                .map_err(io)?;
            std::fs::rename(&part, &path).map_err(io)?;
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                // The rename itself survives a crash once the folder is synced (where the
                // platform lets a folder be opened).
                if let Ok(d) = std::fs::File::open(dir) {
                    let _ = d.sync_all();
                }
            }
            Ok(())
        })();
        if let Err(e) = finish {
            crate::remove_world_files(&part);
            return Err(e);
        }
        Ok(BackupDone {
            path,
            last_seq: self.last_seq,
            pages: self.pages,
        })
    }
}
