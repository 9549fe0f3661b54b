//! A world file held in memory: made there, read from the bytes of a world file, and written
//! back to bytes. For a program without a file system (Loam in a browser keeps the bytes in
//! IndexedDB), and for a world file a user hands over as bytes (a file picked in a page).
//!
//! The bytes are the world file itself (SQLite's database image, `sqlite3_serialize` and
//! `sqlite3_deserialize`), so a world saved in a browser opens in `loam edit` and the other
//! way round; everything else (the checks, migrations, appends, bakes, loads) is the file's
//! own code. What differs: no lock (nothing else can reach the memory), no write-ahead log
//! (SQLite keeps an in-memory database's journal in memory), and durability is the caller's,
//! who keeps [`Store::image`] somewhere.

use std::io::Read;
use std::path::PathBuf;

use loam_field::FieldSettings;
use rusqlite::{Connection, MAIN_DB};

use crate::checks::{SQLITE_HEADER, check_meta};
use crate::error::StoreError;
use crate::store::Store;

/// Bytes 18 and 19 of an SQLite header: the file format's write and read versions, 2 in a
/// database in write-ahead-log mode, 1 in rollback mode (sqlite.org/fileformat.html, 1.3.4).
/// An in-memory database has no write-ahead log, so an image of a WAL-mode file is read in
/// rollback mode (what the file holds without its `-wal`: all of it, for a file closed
/// cleanly).
const VERSION_BYTES: std::ops::Range<usize> = 18..20;

impl Store {
    /// Creates a world in memory, as [`Store::create`] creates a file: the same tables and
    /// metadata. `name` names it in errors (a browser's storage key, say).
    ///
    /// # Errors
    /// SQLite failures.
    pub fn create_in_memory(
        name: &str,
        generator_json: &str,
        field: &FieldSettings,
        heightmap_blake3: Option<&str>,
    ) -> Result<Self, StoreError> {
        let path = PathBuf::from(name);
        let mut store = Self::configure(Connection::open_in_memory()?, &path, None)?;
        store.write_schema(generator_json, field, heightmap_blake3)?;
        store.ready_for_writing()?;
        Ok(store)
    }

    /// Opens the world whose file's bytes are `image` (a world file read whole, or an earlier
    /// [`Store::image`]) in memory, with the checks and migrations of [`Store::open`];
    /// `image` itself is not changed. `name` names it in errors.
    ///
    /// # Errors
    /// [`StoreError::NotSqlite`] (not an SQLite database), [`StoreError::Foreign`],
    /// [`StoreError::NewerVersion`], [`StoreError::Corrupt`], [`StoreError::Followed`] (a
    /// node's copy of a world on NATS), as [`Store::open`]; SQLite failures.
    pub fn from_image(name: &str, image: &[u8]) -> Result<Self, StoreError> {
        let path = PathBuf::from(name);
        if image.len() < 100 || image[..16] != *SQLITE_HEADER {
            return Err(StoreError::NotSqlite { path });
        }
        if let Some(why) = wrong_length(image) {
            return Err(StoreError::Corrupt { path, why });
        }
        let mut conn = Connection::open_in_memory()?;
        let patched = rollback_mode(image);
        let mut reader: &[u8] = &patched;
        conn.deserialize_read_exact(MAIN_DB, &mut reader, patched.len(), false)?;
        check_meta(&conn, &path)?;
        // Every page read once (it is all in memory): damage anywhere is found now, not at
        // some later read of the page it hit.
        let corrupt = |why: String| StoreError::Corrupt {
            path: path.clone(),
            why,
        };
        let verdict: String = conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .map_err(|e| corrupt(e.to_string()))?;
        if verdict != "ok" {
            return Err(corrupt(verdict));
        }
        let mut store = Self::configure(conn, &path, None)?;
        if let Some(followed) = store.followed()? {
            return Err(StoreError::Followed { path, followed });
        }
        store.ready_for_writing()?;
        Ok(store)
    }

    /// The world file's bytes as they are now (every appended op and bake in them): what
    /// [`Store::from_image`] opens and `loam edit` opens as a file.
    ///
    /// # Errors
    /// SQLite failures (out of memory).
    pub fn image(&mut self) -> Result<Vec<u8>, StoreError> {
        let data = self.conn.serialize(MAIN_DB)?;
        let mut bytes = Vec::with_capacity(data.len());
        (&data[..])
            .read_to_end(&mut bytes)
            .map_err(|source| StoreError::Io {
                path: self.path.clone(),
                source,
            })?;
        Ok(bytes)
    }

    /// Whether this store lives in memory ([`Store::create_in_memory`],
    /// [`Store::from_image`]) rather than in a file.
    pub fn in_memory(&self) -> bool {
        self.conn.path().is_none_or(|p| p.is_empty())
    }
}

/// Why `image` cannot be a whole database: its length is not the page count times the page
/// size its header gives (offsets 16, 28, with the count valid when offset 92 equals the
/// change counter at 24: sqlite.org/fileformat.html, 1.3.2 and 1.3.9). A database cut short
/// (a write that stopped half-way) would otherwise open and lose its last pages silently.
fn wrong_length(image: &[u8]) -> Option<String> {
    let u16_at = |i: usize| u16::from_be_bytes([image[i], image[i + 1]]);
    let u32_at =
        |i: usize| u32::from_be_bytes([image[i], image[i + 1], image[i + 2], image[i + 3]]);
    let page = match u16_at(16) {
        1 => 65_536,
        n if n >= 512 && n.is_power_of_two() => usize::from(n),
        n => return Some(format!("page size {n} in the header")),
    };
    let len = image.len();
    if !len.is_multiple_of(page) {
        return Some(format!(
            "{len} bytes is not a whole number of {page}-byte pages"
        ));
    }
    let pages = u32_at(28) as usize;
    if pages > 0 && u32_at(92) == u32_at(24) && pages * page != len {
        return Some(format!(
            "{len} bytes, but the header counts {pages} pages of {page} bytes ({} bytes)",
            pages * page
        ));
    }
    None
}

/// `image` with its header saying rollback mode (see [`VERSION_BYTES`]).
fn rollback_mode(image: &[u8]) -> Vec<u8> {
    let mut bytes = image.to_vec();
    for b in &mut bytes[VERSION_BYTES] {
        if *b == 2 {
            *b = 1;
        }
    }
    bytes
}
