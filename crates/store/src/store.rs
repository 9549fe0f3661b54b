//! The world file: schema, opening with checks, durable appends, bakes, loads, compaction.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::clock::{SystemTime, UNIX_EPOCH};

use loam_field::{BrickKey, DecodeError, Field, FieldSettings, History, LogEntry, SharedStroke};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::blocks::{BLOCK_SCHEMA, BlockLogEntry, LogRow, SavedBlocks};
use crate::checkpoint::Checkpointer;
use crate::checks::{
    check_header, check_meta, has_hot_journal, meta_digest, recover_hot_journal, wal_extension,
};
use crate::error::{StoreError, Writing};
use crate::migrate::MIGRATIONS;
use crate::sqlite::BUSY;
pub(crate) use crate::sqlite::{connect, is_busy, retry};
use crate::strokes::STROKES_SCHEMA;

/// The `format` metadata value of every Loam world.
pub const FORMAT: &str = "loam-world";

/// The newest world format this build writes and reads. 4: the undo history in a header and
/// rows of strokes, and bricks and strokes kept per bake sequence (a bake writes only what
/// changed, ahead of its commit); 3: blocks (a snapshot at each bake, block ops in the op
/// log); 2: bricks hold quantised samples (16-bit grid indices); 1: f32 samples. Older
/// formats are read as they are and migrated on a writable open.
pub const FORMAT_VERSION: i64 = 4;

const SCHEMA: &str = "
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE ops (seq INTEGER PRIMARY KEY, stroke INTEGER NOT NULL, op BLOB NOT NULL);
CREATE TABLE bricks (
    x INTEGER NOT NULL, y INTEGER NOT NULL, z INTEGER NOT NULL,
    seq INTEGER NOT NULL, data BLOB NOT NULL,
    PRIMARY KEY (z, y, x, seq)
) WITHOUT ROWID;
CREATE TABLE history (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL, data BLOB NOT NULL);
";

/// An index of the bricks by sequence number. It covers every key column (a WITHOUT ROWID
/// table's index holds the primary key), so the tidying on open reads it instead of the
/// bricks' rows and their blobs: on 50 000 bricks of 16 KB, 0.2–0.3 s instead of 2.5–4.8 s
/// (BENCHMARKS.md, "World files"). Made on a writable open where it is missing (files made
/// before it); readers never need it, so the format version is unchanged.
const BRICKS_SEQ_INDEX: &str = "CREATE INDEX IF NOT EXISTS bricks_seq ON bricks (seq);";

/// What a world file says about itself ([`Store::info`]).
#[derive(Debug, Clone, PartialEq)]
pub struct WorldInfo {
    /// World format version.
    pub format_version: i64,
    /// The generator, as the JSON the world was created with.
    pub generator_json: String,
    /// Field settings.
    pub field: FieldSettings,
    /// BLAKE3 of the heightmap file the world was built on, if any.
    pub heightmap_blake3: Option<String>,
    /// Creation and last bake, seconds since the Unix epoch.
    pub created_unix: i64,
    /// Last bake (or creation), seconds since the Unix epoch.
    pub modified_unix: i64,
    /// Terrain ops in the log (after compaction, only those newer than the bake).
    pub ops: u64,
    /// Block ops in the log (format 3; after compaction, only those newer than the bake).
    pub block_ops: u64,
    /// The last op's sequence number (0 for none).
    pub last_seq: u64,
    /// Baked bricks.
    pub bricks: u64,
    /// The sequence number the bake covers (0 for none).
    pub bake_seq: u64,
    /// Bytes of the database file and its write-ahead log.
    pub file_bytes: u64,
}

/// A world loaded from its file ([`Store::load`]).
#[derive(Debug)]
pub struct LoadedWorld {
    /// The field: baked bricks, then every newer op replayed.
    pub field: Field,
    /// The undo history as it was after the last op.
    pub history: History,
    /// The last op's sequence number (of either kind).
    pub last_seq: u64,
    /// The blocks snapshot of the bake, if the world has blocks.
    pub blocks: Option<SavedBlocks>,
    /// The block ops after the bake, in order (their place among the terrain ops is their
    /// sequence number; [`Store::load_with`] replays both kinds in order).
    pub block_ops: Vec<BlockLogEntry>,
    /// Why the saved undo history was left out, when it was corrupt and the store was told
    /// to go on without it ([`Store::set_discard_corrupt_history`]); `None` otherwise.
    pub history_discarded: Option<String>,
}

/// An open world file, held exclusively by this process.
pub struct Store {
    pub(crate) conn: Connection,
    /// An online backup in progress (`backup.rs`); dropped before `conn`.
    pub(crate) backup: Option<crate::backup::Backup>,
    pub(crate) path: PathBuf,
    pub(crate) last_seq: u64,
    /// The ids of the bricks of the last bake, to write only what changed since (an edited
    /// brick is a new brick with a new id).
    pub(crate) baked: BTreeMap<BrickKey, u64>,
    /// The history's strokes as the file holds them (shared with the history they came
    /// from), once known: after a load or a bake.
    pub(crate) baked_strokes: Option<Arc<[SharedStroke]>>,
    /// Stroke versions in the file's rows that later rows replaced (see [`crate::Baked`]).
    pub(crate) stale_strokes: usize,
    /// The sequence number the file's bake covers.
    pub(crate) bake_seq: u64,
    /// Whether a load goes on with an empty history when the saved one is corrupt.
    pub(crate) discard_corrupt_history: bool,
    /// How long a write waits for a write lock another connection holds
    /// ([`Store::set_busy_wait`]).
    pub(crate) busy_wait: Duration,
    /// Whether the log after the bake is known to read whole (a load read it, or the first
    /// append checked it): appends go on top of it only then.
    pub(crate) log_read: bool,
    read_only: bool,
    /// The file's format version (older than [`FORMAT_VERSION`] only when opened read-only).
    pub(crate) version: i64,
    /// The background checkpointer, once started; stopped before the connection closes.
    pub(crate) checkpointer: Option<Checkpointer>,
    /// The store's own lock on the file (`lock.rs`), released after the connection closes:
    /// the last field.
    pub(crate) lock: Option<std::fs::File>,
}

impl Drop for Store {
    /// A clean close leaves one file at rest (the WAL folded in, rollback journal mode), so it
    /// opens read-only anywhere; after a crash the WAL is recovered on the next open.
    fn drop(&mut self) {
        // A backup's handle must be finished while the connection is open, and the
        // checkpointer's connection closed before the switch out of WAL (which needs the file
        // to itself).
        self.backup = None;
        self.checkpointer = None;
        if !self.read_only {
            let _ = self
                .conn
                .query_row("PRAGMA journal_mode = DELETE", [], |r| {
                    r.get::<_, String>(0)
                });
        }
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.path)
            .field("last_seq", &self.last_seq)
            .finish_non_exhaustive()
    }
}

/// Puts the finished new world `tmp` at `path`, never over a file that got there meanwhile
/// (two processes creating one world): a hard link fails if `path` exists. On a file system
/// without hard links, a rename after one more check.
fn put_in_place(tmp: &Path, path: &Path) -> Result<(), StoreError> {
    let io = |source| StoreError::Io {
        path: path.into(),
        source,
    };
    match std::fs::hard_link(tmp, path) {
        Ok(()) => std::fs::remove_file(tmp).map_err(io),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let _ = std::fs::remove_file(tmp);
            Err(StoreError::Exists { path: path.into() })
        }
        Err(_) if path.exists() => {
            let _ = std::fs::remove_file(tmp);
            Err(StoreError::Exists { path: path.into() })
        }
        Err(_) => std::fs::rename(tmp, path).map_err(io),
    }
}

pub(crate) fn now_unix() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

impl Store {
    /// Creates a world file at `path` for a generator (its JSON, kept as given, for the caller
    /// to rebuild it) and field settings.
    ///
    /// # Errors
    /// [`StoreError::Exists`] if a file is there; SQLite failures.
    pub fn create(
        path: &Path,
        generator_json: &str,
        field: &FieldSettings,
        heightmap_blake3: Option<&str>,
    ) -> Result<Self, StoreError> {
        if path.exists() {
            return Err(StoreError::Exists { path: path.into() });
        }
        for suffix in ["-wal", "-journal"] {
            let mut log = path.as_os_str().to_owned();
            log.push(suffix);
            if Path::new(&log).exists() {
                return Err(StoreError::LeftoverLog {
                    path: path.into(),
                    log: log.into(),
                });
            }
        }
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty())
            && !parent.is_dir()
        {
            return Err(StoreError::NoFolder {
                path: parent.into(),
            });
        }
        // Built under a temporary name and renamed into place once complete, so a crash during
        // creation never leaves a half-made world at `path`.
        // Named per process and per call: two creations never share it.
        static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let tmp = path.with_file_name(format!(
            ".{}.creating-{}-{}",
            path.file_name()
                .map_or("world".into(), |n| n.to_string_lossy()),
            std::process::id(),
            CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let _ = std::fs::remove_file(&tmp);
        {
            let conn = connect(
                &tmp,
                OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
            )?;
            let lock = crate::lock::hold(&tmp, true)?;
            let mut store = Self::configure(conn, &tmp, lock)?;
            store.write_schema(generator_json, field, heightmap_blake3)?;
            // Closing folds the write-ahead log into the file.
            drop(store);
        }
        put_in_place(&tmp, path)?;
        Self::open(path)
    }

    /// Writes a new world's tables and metadata (`create`, `create_in_memory`).
    pub(crate) fn write_schema(
        &mut self,
        generator_json: &str,
        field: &FieldSettings,
        heightmap_blake3: Option<&str>,
    ) -> Result<(), StoreError> {
        let now = now_unix().to_string();
        let field_json = serde_json::to_string(field).expect("settings serialise");
        // Freed pages go back to the file at compaction (`incremental_vacuum`).
        self.conn
            .execute_batch("PRAGMA auto_vacuum = INCREMENTAL;")?;
        let tx = self.conn.transaction()?;
        tx.execute_batch(SCHEMA)?;
        tx.execute_batch(BLOCK_SCHEMA)?;
        tx.execute_batch(STROKES_SCHEMA)?;
        tx.execute_batch(BRICKS_SEQ_INDEX)?;
        {
            let mut put = tx.prepare("INSERT INTO meta (key, value) VALUES (?1, ?2)")?;
            for (k, v) in [
                ("format", FORMAT),
                ("format_version", &FORMAT_VERSION.to_string()),
                ("generator", generator_json),
                ("field", &field_json),
                ("heightmap_blake3", heightmap_blake3.unwrap_or("")),
                ("created", &now),
                ("modified", &now),
                ("bake_seq", "0"),
            ] {
                put.execute(params![k, v])?;
            }
        }
        let digest = meta_digest(&tx)?;
        tx.execute("INSERT INTO meta (key, value) VALUES ('tag', ?1)", [digest])?;
        tx.commit()?;
        Ok(())
    }

    /// Opens an existing world file, checking it before anything is written: an SQLite file
    /// (by its header), a Loam world of a format this build reads. Holds the file exclusively
    /// until dropped.
    ///
    /// A world of an older format is migrated to [`FORMAT_VERSION`] first, each step in one
    /// exclusive transaction (format 1 → 2: every baked brick's f32 values rounded onto the
    /// quantisation grid and rewritten as 16-bit indices; 2 → 3: the empty block tables); a
    /// migration that fails leaves the file as it was.
    ///
    /// # Errors
    /// [`StoreError::NotFound`], [`StoreError::NotSqlite`], [`StoreError::Foreign`],
    /// [`StoreError::NewerVersion`], [`StoreError::InUse`], [`StoreError::Followed`] (a
    /// node's copy of a world on NATS: [`Store::open_followed`]); none of them writes to
    /// the file.
    /// [`StoreError::CorruptBrick`] or [`StoreError::CorruptMeta`] if a migration meets a
    /// damaged brick or setting (rolled back).
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        Self::open_writable(path, false)
    }

    /// [`Store::open`] for the Loam node whose copy of a world on NATS JetStream the file
    /// is (it may also be a plain world file, or new).
    ///
    /// # Errors
    /// As [`Store::open`], less [`StoreError::Followed`].
    pub fn open_followed(path: &Path) -> Result<Self, StoreError> {
        Self::open_writable(path, true)
    }

    fn open_writable(path: &Path, followed_ok: bool) -> Result<Self, StoreError> {
        check_header(path)?;
        let lock = crate::lock::hold(path, true)?;
        // Read-only first: a foreign or newer file, or a node's, is never written to.
        let first = match Self::read_only_with(path, None) {
            Ok(s) => s,
            Err(e) if has_hot_journal(&e) => {
                // Killed inside a rollback-journal transaction (the switch to WAL): a read-only
                // connection cannot roll it back. SQLite's own recovery on a writable
                // connection restores the file as it was before that transaction; then check.
                recover_hot_journal(path)?;
                Self::read_only_with(path, None)?
            }
            Err(e) => return Err(e),
        };
        if !followed_ok && let Some(followed) = first.followed()? {
            return Err(StoreError::Followed {
                path: path.to_path_buf(),
                followed,
            });
        }
        drop(first);
        let conn = connect(path, OpenFlags::SQLITE_OPEN_READ_WRITE)?;
        let mut store = Self::configure(conn, path, lock)?;
        store.ready_for_writing()?;
        Ok(store)
    }

    /// The last steps of a writable open, on a checked world: migrated to this build's
    /// format, the bricks' index made where missing, a bake that did not commit dropped, the
    /// log's end found.
    pub(crate) fn ready_for_writing(&mut self) -> Result<(), StoreError> {
        let store = self;
        store.migrate()?;
        retry(&store.path, store.busy_wait, Writing::Open, || {
            store.conn.execute_batch(BRICKS_SEQ_INDEX)
        })?;
        store.bake_seq = store.meta_u64("bake_seq")?;
        store.drop_unbaked()?;
        store.last_seq = store.find_last_seq()?;
        Ok(())
    }

    /// Deletes what no load reads: rows of a bake that was not committed (a crash while its
    /// rows were written ahead, or before its old versions were deleted).
    fn drop_unbaked(&mut self) -> Result<(), StoreError> {
        let bake = self.bake_seq as i64;
        retry(&self.path, self.busy_wait, Writing::Open, || {
            let tx = self.conn.transaction()?;
            tx.execute("DELETE FROM bricks WHERE seq > ?1", [bake])?;
            // Older versions of a brick: found in the covering index, never in the rows.
            tx.execute(
                "DELETE FROM bricks WHERE (z, y, x, seq) IN (SELECT z, y, x, seq FROM \
                 (SELECT z, y, x, seq, MAX(seq) OVER (PARTITION BY z, y, x) AS newest \
                 FROM bricks INDEXED BY bricks_seq) WHERE seq < newest)",
                [],
            )?;
            tx.execute("DELETE FROM strokes WHERE seq > ?1", [bake])?;
            tx.commit()
        })?;
        Ok(())
    }

    /// Opens a world file for reading only (`info`, `load`, `ops_after`, `export`): the same
    /// checks as [`Store::open`], no lock taken and nothing written, so a world on read-only
    /// storage can be inspected. Appends, bakes and compaction then fail with
    /// [`StoreError::ReadOnly`].
    ///
    /// # Errors
    /// As [`Store::open`].
    pub fn open_read_only(path: &Path) -> Result<Self, StoreError> {
        check_header(path)?;
        let lock = crate::lock::hold(path, false)?;
        Self::read_only_with(path, lock)
    }

    /// [`Store::open_read_only`] holding `lock` (`None`: the caller holds the file).
    pub(crate) fn read_only_with(
        path: &Path,
        lock: Option<std::fs::File>,
    ) -> Result<Self, StoreError> {
        let conn = connect(path, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
        conn.busy_timeout(Duration::from_millis(200))?;
        let version = check_meta(&conn, path)?;
        let mut store = Self {
            backup: None,
            conn,
            path: path.into(),
            last_seq: 0,
            baked: BTreeMap::new(),
            baked_strokes: None,
            stale_strokes: 0,
            bake_seq: 0,
            discard_corrupt_history: false,
            busy_wait: BUSY,
            log_read: false,
            read_only: true,
            version,
            checkpointer: None,
            lock,
        };
        store.bake_seq = store.meta_u64("bake_seq")?;
        store.last_seq = store.find_last_seq()?;
        Ok(store)
    }

    /// The last sequence number in the log (terrain or block ops) or covered by the bake.
    fn find_last_seq(&self) -> Result<u64, StoreError> {
        let max = |table: &str| -> Result<i64, StoreError> {
            Ok(self.conn.query_row(
                &format!("SELECT COALESCE(MAX(seq), 0) FROM {table}"),
                [],
                |r| r.get::<_, i64>(0),
            )?)
        };
        let mut last = max("ops")?.max(self.meta_u64("bake_seq")? as i64);
        if self.has_block_tables() {
            last = last.max(max("block_ops")?);
        }
        Ok(last as u64)
    }

    /// Runs the migrations from the file's format to [`FORMAT_VERSION`], one transaction each.
    fn migrate(&mut self) -> Result<(), StoreError> {
        loop {
            let found: i64 =
                self.meta("format_version")?
                    .parse()
                    .map_err(|_| StoreError::CorruptMeta {
                        key: "format_version",
                    })?;
            if found >= FORMAT_VERSION {
                self.version = found;
                return Ok(());
            }
            let step = MIGRATIONS[(found - 1) as usize];
            let settings = self.field_settings()?;
            let mut result = Ok(());
            retry(&self.path, self.busy_wait, Writing::Migrate, || {
                let tx = self
                    .conn
                    .transaction_with_behavior(rusqlite::TransactionBehavior::Exclusive)?;
                result = step(&tx, &settings);
                if result.is_err() {
                    return tx.rollback();
                }
                tx.execute(
                    "UPDATE meta SET value = ?1 WHERE key = 'format_version'",
                    [(found + 1).to_string()],
                )?;
                let digest = meta_digest(&tx)?;
                tx.execute("UPDATE meta SET value = ?1 WHERE key = 'tag'", [digest])?;
                tx.commit()
            })?;
            result?;
        }
    }

    /// The file's format version as opened: [`FORMAT_VERSION`] once opened writable (older
    /// worlds are migrated), the file's own when opened read-only.
    pub fn format_version(&self) -> i64 {
        self.version
    }

    /// How long a write waits for a write lock another connection to the file holds (an
    /// `sqlite3` shell with a transaction open) before it fails with [`StoreError::Busy`]:
    /// 5 s unless set. SQLite looks again after 1, 2, 5, 10, … ms, at most 100 ms apart, so a
    /// write goes on soon after the lock is let go.
    ///
    /// # Errors
    /// SQLite failures setting the connection's busy timeout (the wait is unchanged then).
    pub fn set_busy_wait(&mut self, wait: Duration) -> Result<(), StoreError> {
        self.conn.busy_timeout(wait)?;
        self.busy_wait = wait;
        Ok(())
    }

    /// Whether ops may be appended: the store is writable and the log after the bake reads
    /// whole. Read once, on the first append of a store that has not loaded the world (a
    /// load reads it anyway): every op decodes and its checksum holds, and the sequence
    /// numbers follow the bake's without a gap. An op appended on top of a log that does not
    /// read would follow ops no load replays (a load stops at the first it cannot read).
    ///
    /// # Errors
    /// [`StoreError::ReadOnly`]; [`StoreError::UnreadableLog`] with the first record that
    /// does not read as its source; SQLite failures reading the log.
    pub(crate) fn appendable(&mut self) -> Result<(), StoreError> {
        self.writable()?;
        if self.log_read {
            return Ok(());
        }
        let unreadable = |source| StoreError::UnreadableLog {
            path: self.path.clone(),
            source: Box::new(source),
        };
        let records = match self.log_after(self.bake_seq) {
            Ok(r) => r,
            Err(e @ (StoreError::CorruptOp { .. } | StoreError::CorruptBlockOp { .. })) => {
                return Err(unreadable(e));
            }
            Err(e) => return Err(e),
        };
        let mut last = self.bake_seq;
        for r in &records {
            if r.seq() != last + 1 {
                return Err(unreadable(StoreError::OutOfOrder { last, got: r.seq() }));
            }
            last = r.seq();
        }
        self.log_read = true;
        Ok(())
    }

    pub(crate) fn writable(&self) -> Result<(), StoreError> {
        if self.read_only {
            Err(StoreError::ReadOnly {
                path: self.path.clone(),
            })
        } else {
            Ok(())
        }
    }

    /// WAL with synchronous FULL (an acknowledged append survives a crash). Other processes
    /// are kept out ([`StoreError::InUse`]) by `lock`, the store's own lock (`lock.rs`), or
    /// where there is none by SQLite's exclusive locking mode for the connection's life.
    pub(crate) fn configure(
        conn: Connection,
        path: &Path,
        lock: Option<std::fs::File>,
    ) -> Result<Self, StoreError> {
        let in_use = |e: rusqlite::Error| {
            if is_busy(&e) {
                StoreError::InUse { path: path.into() }
            } else {
                StoreError::Sqlite(e)
            }
        };
        conn.busy_timeout(Duration::from_millis(200))?;
        if lock.is_none() {
            conn.execute_batch("PRAGMA locking_mode = EXCLUSIVE;")
                .map_err(in_use)?;
        }
        conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0))
            .map_err(in_use)?;
        conn.execute_batch("PRAGMA synchronous = FULL; BEGIN EXCLUSIVE; COMMIT;")
            .map_err(in_use)?;
        conn.busy_timeout(BUSY)?;
        Ok(Self {
            conn,
            backup: None,
            path: path.into(),
            last_seq: 0,
            baked: BTreeMap::new(),
            baked_strokes: None,
            stale_strokes: 0,
            bake_seq: 0,
            discard_corrupt_history: false,
            busy_wait: BUSY,
            log_read: false,
            read_only: false,
            version: FORMAT_VERSION,
            checkpointer: None,
            lock,
        })
    }

    pub(crate) fn meta(&self, key: &'static str) -> Result<String, StoreError> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()?
            .ok_or(StoreError::CorruptMeta { key })
    }

    pub(crate) fn meta_u64(&self, key: &'static str) -> Result<u64, StoreError> {
        self.meta(key)?
            .parse()
            .map_err(|_| StoreError::CorruptMeta { key })
    }

    /// The generator's JSON, as given to [`Store::create`].
    ///
    /// # Errors
    /// [`StoreError::CorruptMeta`] if missing.
    pub fn generator_json(&self) -> Result<String, StoreError> {
        self.meta("generator")
    }

    /// The field settings.
    ///
    /// # Errors
    /// [`StoreError::CorruptMeta`] if missing or malformed.
    pub fn field_settings(&self) -> Result<FieldSettings, StoreError> {
        serde_json::from_str(&self.meta("field")?)
            .map_err(|_| StoreError::CorruptMeta { key: "field" })
    }

    /// BLAKE3 of the heightmap the world was built on, if any.
    ///
    /// # Errors
    /// [`StoreError::CorruptMeta`] if missing.
    pub fn heightmap_blake3(&self) -> Result<Option<String>, StoreError> {
        Ok(Some(self.meta("heightmap_blake3")?).filter(|s| !s.is_empty()))
    }

    /// The last op's sequence number (0 for none).
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// Appends `entry` to the op log. When this returns `Ok` the op is durable: it survives a
    /// crash or power loss (WAL, synchronous FULL, one transaction per op). Busy is retried
    /// (up to [`Store::set_busy_wait`]). The first append of a store that has not loaded the
    /// world reads the log after the bake first, and appends nothing on top of a log that
    /// does not read whole ([`StoreError::UnreadableLog`]).
    ///
    /// # Errors
    /// [`StoreError::UnreadableLog`] if the log after the bake does not read whole;
    /// [`StoreError::OutOfOrder`] unless `entry.seq` is the last plus one;
    /// [`StoreError::Busy`]; SQLite failures (nothing is appended then).
    pub fn append(&mut self, entry: &LogEntry) -> Result<(), StoreError> {
        self.write_rows(vec![LogRow::terrain(entry)], None)
    }

    /// Appends `entries` (consecutive sequence numbers following the log) in one transaction:
    /// all of them or none, durable when this returns `Ok`, at the cost of one sync (a server
    /// commits the ops that arrived together as a group). An empty slice writes nothing.
    ///
    /// # Errors
    /// As [`Store::append`]; [`StoreError::OutOfOrder`] for the first entry that does not
    /// follow the one before (nothing is appended then).
    pub fn append_batch(&mut self, entries: &[LogEntry]) -> Result<(), StoreError> {
        self.write_rows(entries.iter().map(LogRow::terrain).collect(), None)
    }

    /// The logged terrain ops with a sequence number above `seq`, in order (block ops:
    /// [`Store::block_ops_after`]; both kinds: [`Store::log_after`]).
    ///
    /// # Errors
    /// [`StoreError::CorruptOp`] for a record that does not decode; SQLite failures.
    pub fn ops_after(&self, seq: u64) -> Result<Vec<LogEntry>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT seq, stroke, op FROM ops WHERE seq > ?1 ORDER BY seq")?;
        let rows = stmt.query_map([seq as i64], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, Vec<u8>>(2)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (s, stroke, bytes) = row?;
            let corrupt = |source| StoreError::CorruptOp {
                seq: s as u64,
                source,
            };
            let payload = crate::tag::open(&crate::tag::key(&[s, stroke]), &bytes)
                .ok_or_else(|| corrupt(DecodeError::Malformed("checksum mismatch".into())))?;
            let e = LogEntry::decode(payload).map_err(corrupt)?;
            out.push(e);
        }
        Ok(out)
    }

    /// What the world file holds.
    ///
    /// # Errors
    /// [`StoreError::CorruptMeta`]; SQLite failures.
    pub fn info(&self) -> Result<WorldInfo, StoreError> {
        let count = |sql: &str| -> Result<u64, StoreError> {
            Ok(self.conn.query_row(sql, [], |r| r.get::<_, i64>(0))? as u64)
        };
        let file = std::fs::metadata(&self.path).map_or(0, |m| m.len());
        let wal = std::fs::metadata(self.path.with_extension(wal_extension(&self.path)))
            .map_or(0, |m| m.len());
        Ok(WorldInfo {
            format_version: self.meta("format_version")?.parse().map_err(|_| {
                StoreError::CorruptMeta {
                    key: "format_version",
                }
            })?,
            generator_json: self.generator_json()?,
            field: self.field_settings()?,
            heightmap_blake3: self.heightmap_blake3()?,
            created_unix: self.meta("created")?.parse().unwrap_or(0),
            modified_unix: self.meta("modified")?.parse().unwrap_or(0),
            ops: count("SELECT COUNT(*) FROM ops")?,
            block_ops: if self.has_block_tables() {
                count("SELECT COUNT(*) FROM block_ops")?
            } else {
                0
            },
            last_seq: self.last_seq,
            bricks: count(
                "SELECT COUNT(*) FROM (SELECT DISTINCT z, y, x FROM bricks \
                 WHERE seq <= (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'bake_seq'))",
            )?,
            bake_seq: self.meta_u64("bake_seq")?,
            file_bytes: file + wal,
        })
    }

    /// Whether a load ([`Store::load`]) goes on without the saved undo history when it is
    /// corrupt ([`StoreError::CorruptHistory`] otherwise), reporting why in
    /// [`LoadedWorld::history_discarded`]: the terrain and blocks come back whole, only undo
    /// and redo of the strokes before the load are lost. A terrain op after the bake that
    /// undoes or redoes such a stroke then fails its replay ([`StoreError::Replay`]). The
    /// next bake saves the empty history in its place. Off by default.
    pub fn set_discard_corrupt_history(&mut self, discard: bool) {
        self.discard_corrupt_history = discard;
    }

    /// `PRAGMA integrity_check`: `Ok(())` or the problems SQLite lists.
    ///
    /// # Errors
    /// SQLite failures.
    pub fn integrity_check(&self) -> Result<Result<(), String>, StoreError> {
        let msg: String = self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
        Ok(if msg == "ok" { Ok(()) } else { Err(msg) })
    }
}
