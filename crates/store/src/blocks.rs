//! Blocks in the world file (format 3): a snapshot of the block world written at each bake,
//! and block ops in the op log beside terrain ops, one sequence numbering for both. The
//! store never reads these bytes (it does not depend on loam-blocks or Rapier): each is an
//! opaque, versioned blob that loam-blocks encodes and decodes, kept with a checksum.

use std::io::Read;

use loam_field::{EditOutcome, LogEntry};
use rusqlite::{OptionalExtension, params};

use crate::error::StoreError;
use crate::error::Writing;
use crate::store::{Store, retry};

/// The tables format 3 adds (created by a new world and by the migration from format 2).
pub(crate) const BLOCK_SCHEMA: &str = "
CREATE TABLE block_ops (seq INTEGER PRIMARY KEY, step INTEGER NOT NULL, op BLOB NOT NULL);
CREATE TABLE blocks (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    seq INTEGER NOT NULL, step INTEGER NOT NULL, data BLOB NOT NULL
);
";

/// The first format with block tables.
pub(crate) const BLOCKS_SINCE: i64 = 3;

/// A block op in the log: its sequence number (shared with terrain ops), the physics step
/// it was applied at, and the op as loam-blocks encodes it (`BlockOp::encode`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockLogEntry {
    /// Sequence number: its place in the log, after the op before it of either kind.
    pub seq: u64,
    /// The physics step it was applied at (steps run before it).
    pub step: u64,
    /// The encoded op (opaque to the store).
    pub op: Vec<u8>,
}

/// One record of the op log, of either kind, in sequence order ([`Store::log_after`]).
#[derive(Debug, Clone, PartialEq)]
pub enum LogRecord {
    /// A terrain op.
    Terrain(LogEntry),
    /// A block op.
    Block(BlockLogEntry),
}

impl LogRecord {
    /// Its sequence number.
    pub fn seq(&self) -> u64 {
        match self {
            LogRecord::Terrain(e) => e.seq,
            LogRecord::Block(e) => e.seq,
        }
    }
}

/// The blocks snapshot of the last bake ([`Store::bake_with_blocks`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedBlocks {
    /// The sequence number the bake covers.
    pub seq: u64,
    /// The physics step the snapshot was taken at.
    pub step: u64,
    /// The block world as loam-blocks encodes it (`BlocksFile::encode`), as given.
    pub data: Vec<u8>,
}

/// A record as [`Store::load_with`] replays the log.
#[derive(Debug, Clone, Copy)]
pub enum Replayed<'a> {
    /// First, once: the field as baked (after op `seq`), before any newer op; the time to
    /// restore the blocks snapshot and build colliders from the baked terrain.
    Baked {
        /// The sequence number the bake covers (0 for none).
        seq: u64,
    },
    /// A terrain op, just applied to the field, and what it changed.
    Terrain(&'a LogEntry, EditOutcome),
    /// A block op; the field is as the ops before it left it.
    Block(&'a BlockLogEntry),
}

fn op_context(seq: u64, step: u64) -> Vec<u8> {
    let mut c = b"block-op".to_vec();
    c.extend(crate::tag::key(&[seq as i64, step as i64]));
    c
}

fn snapshot_context(seq: u64, step: u64) -> Vec<u8> {
    let mut c = b"blocks".to_vec();
    c.extend(crate::tag::key(&[seq as i64, step as i64]));
    c
}

/// The sealed, compressed snapshot row for a bake.
pub(crate) fn snapshot_blob(seq: u64, step: u64, data: &[u8]) -> Vec<u8> {
    crate::tag::seal(
        &snapshot_context(seq, step),
        zstd::bulk::compress(data, 3).expect("compressing to memory"),
    )
}

/// One record of the op log, sealed for its table.
pub(crate) struct LogRow {
    /// In `block_ops` (else `ops`).
    block: bool,
    seq: u64,
    /// The terrain op's stroke, or the block op's physics step.
    n: u64,
    /// The sealed record (`tag::seal` with its row's context).
    bytes: Vec<u8>,
}

impl LogRow {
    /// A terrain op's row: sealed with its sequence number and stroke.
    pub(crate) fn terrain(e: &LogEntry) -> Self {
        let ctx = crate::tag::key(&[e.seq as i64, e.stroke as i64]);
        Self {
            block: false,
            seq: e.seq,
            n: e.stroke,
            bytes: crate::tag::seal(&ctx, e.encode()),
        }
    }

    /// A block op's row: sealed with its sequence number and step.
    pub(crate) fn block(e: &BlockLogEntry) -> Self {
        Self {
            block: true,
            seq: e.seq,
            n: e.step,
            bytes: crate::tag::seal(&op_context(e.seq, e.step), e.op.clone()),
        }
    }
}

impl Store {
    /// Whether the file has the block tables (format 3 and later; older formats are only
    /// read, with no blocks).
    pub(crate) fn has_block_tables(&self) -> bool {
        self.version >= BLOCKS_SINCE
    }

    /// Appends a block op to the op log; durable when this returns `Ok`, as
    /// [`Store::append`]. Terrain and block ops share one sequence numbering.
    ///
    /// # Errors
    /// As [`Store::append`].
    pub fn append_block(&mut self, entry: &BlockLogEntry) -> Result<(), StoreError> {
        self.write_rows(vec![LogRow::block(entry)], None)
    }

    /// Appends terrain and block records (consecutive sequence numbers following the log)
    /// in one transaction: all or none, durable when this returns `Ok`, at the cost of one
    /// sync ([`Store::append_batch`] for a log of both kinds; a server commits the ops that
    /// arrived together as a group). An empty slice writes nothing.
    ///
    /// # Errors
    /// As [`Store::append`]; [`StoreError::OutOfOrder`] for the first record that does not
    /// follow the one before (nothing is appended then).
    pub fn append_records(&mut self, records: &[LogRecord]) -> Result<(), StoreError> {
        self.write_rows(rows_of(records), None)
    }

    /// As [`Store::append_records`], and records in the same transaction where the world
    /// stands in the log it follows: `followed` is that log's position in its own terms
    /// (a Loam node's JetStream stream sequence and open stroke, `loam-server`'s
    /// `cluster`), kept as given. A node that restarts goes on after it, and the records
    /// and the position can never disagree. Read back with [`Store::followed`].
    ///
    /// # Errors
    /// As [`Store::append_records`].
    pub fn append_records_followed(
        &mut self,
        records: &[LogRecord],
        followed: &str,
    ) -> Result<(), StoreError> {
        self.write_rows(rows_of(records), Some(followed))
    }

    /// Where the world stands in the log it follows, as last given to
    /// [`Store::append_records_followed`]; `None` for a world that follows no log.
    ///
    /// # Errors
    /// SQLite failures.
    pub fn followed(&self) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'followed'", [], |r| {
                r.get(0)
            })
            .optional()?)
    }

    /// The one writer of the op log: checks that `rows` follow the log (consecutive
    /// sequence numbers from the last plus one) and appends them in one transaction, all or
    /// none, retrying while busy. Every `append*` method calls it.
    ///
    /// # Errors
    /// As [`Store::append`].
    pub(crate) fn write_rows(
        &mut self,
        rows: Vec<LogRow>,
        followed: Option<&str>,
    ) -> Result<(), StoreError> {
        self.appendable()?;
        let mut last = self.last_seq;
        for r in &rows {
            if r.seq != last + 1 {
                return Err(StoreError::OutOfOrder { last, got: r.seq });
            }
            last = r.seq;
        }
        if rows.is_empty() && followed.is_none() {
            return Ok(());
        }
        retry(&self.path, self.busy_wait, Writing::Append, || {
            let tx = self.conn.transaction()?;
            for r in &rows {
                let sql = if r.block {
                    "INSERT INTO block_ops (seq, step, op) VALUES (?1, ?2, ?3)"
                } else {
                    "INSERT INTO ops (seq, stroke, op) VALUES (?1, ?2, ?3)"
                };
                tx.prepare_cached(sql)?
                    .execute(params![r.seq as i64, r.n as i64, r.bytes])?;
            }
            if let Some(f) = followed {
                // The meta table is sealed by its digest (`tag`): both change together.
                tx.execute(
                    "INSERT INTO meta (key, value) VALUES ('followed', ?1) \
                     ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    [f],
                )?;
                let digest = crate::checks::meta_digest(&tx)?;
                tx.execute("UPDATE meta SET value = ?1 WHERE key = 'tag'", [digest])?;
            }
            tx.commit()
        })?;
        self.last_seq = last;
        Ok(())
    }

    /// The logged block ops with a sequence number above `seq`, in order (none for a file
    /// older than format 3).
    ///
    /// # Errors
    /// [`StoreError::CorruptBlockOp`] for a record whose checksum fails; SQLite failures.
    pub fn block_ops_after(&self, seq: u64) -> Result<Vec<BlockLogEntry>, StoreError> {
        if !self.has_block_tables() {
            return Ok(Vec::new());
        }
        let mut stmt = self
            .conn
            .prepare("SELECT seq, step, op FROM block_ops WHERE seq > ?1 ORDER BY seq")?;
        let rows = stmt.query_map([seq as i64], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, Vec<u8>>(2)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (s, step, blob) = row?;
            let (s, step) = (s as u64, step as u64);
            let op = crate::tag::open(&op_context(s, step), &blob)
                .ok_or(StoreError::CorruptBlockOp { seq: s })?;
            out.push(BlockLogEntry {
                seq: s,
                step,
                op: op.to_vec(),
            });
        }
        Ok(out)
    }

    /// Every logged op (terrain and block) with a sequence number above `seq`, in order.
    ///
    /// # Errors
    /// As [`Store::ops_after`] and [`Store::block_ops_after`].
    pub fn log_after(&self, seq: u64) -> Result<Vec<LogRecord>, StoreError> {
        let terrain = self.ops_after(seq)?;
        let blocks = self.block_ops_after(seq)?;
        let mut out = Vec::with_capacity(terrain.len() + blocks.len());
        let (mut t, mut b) = (
            terrain.into_iter().peekable(),
            blocks.into_iter().peekable(),
        );
        loop {
            let take_terrain = match (t.peek(), b.peek()) {
                (Some(x), Some(y)) => x.seq < y.seq,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => return Ok(out),
            };
            out.push(if take_terrain {
                LogRecord::Terrain(t.next().expect("peeked"))
            } else {
                LogRecord::Block(b.next().expect("peeked"))
            });
        }
    }

    /// The blocks snapshot of the last bake, if one was written.
    ///
    /// # Errors
    /// [`StoreError::CorruptBlocks`] for a snapshot whose checksum or compression fails or
    /// that does not cover the bake's sequence number; SQLite failures.
    pub fn blocks(&self) -> Result<Option<SavedBlocks>, StoreError> {
        if !self.has_block_tables() {
            return Ok(None);
        }
        let Some((seq, step, blob)) = self
            .conn
            .query_row("SELECT seq, step, data FROM blocks WHERE id = 1", [], |r| {
                Ok((
                    r.get::<_, i64>(0)? as u64,
                    r.get::<_, i64>(1)? as u64,
                    r.get::<_, Vec<u8>>(2)?,
                ))
            })
            .optional()?
        else {
            return Ok(None);
        };
        let bake = self.meta_u64("bake_seq")?;
        if seq != bake {
            return Err(StoreError::CorruptBlocks(format!(
                "saved at op {seq}, the bake covers op {bake}"
            )));
        }
        let payload = crate::tag::open(&snapshot_context(seq, step), &blob)
            .ok_or_else(|| StoreError::CorruptBlocks("checksum mismatch".into()))?;
        let mut data = Vec::new();
        zstd::stream::read::Decoder::new(payload)
            .and_then(|mut d| d.read_to_end(&mut data))
            .map_err(|e| StoreError::CorruptBlocks(e.to_string()))?;
        Ok(Some(SavedBlocks { seq, step, data }))
    }

    /// Whether a bake up to `seq` needs a blocks snapshot: the file has one, or a block op
    /// at or before `seq`.
    pub(crate) fn bake_needs_blocks(&self, seq: u64) -> Result<Option<u64>, StoreError> {
        if !self.has_block_tables() {
            return Ok(None);
        }
        let snapshot: Option<i64> = self
            .conn
            .query_row("SELECT seq FROM blocks WHERE id = 1", [], |r| r.get(0))
            .optional()?;
        if let Some(s) = snapshot {
            return Ok(Some(s as u64));
        }
        let first: Option<i64> = self.conn.query_row(
            "SELECT MIN(seq) FROM block_ops WHERE seq <= ?1",
            [seq as i64],
            |r| r.get(0),
        )?;
        Ok(first.map(|s| s as u64))
    }
}

/// The log rows of `records`, in order.
fn rows_of(records: &[LogRecord]) -> Vec<LogRow> {
    records
        .iter()
        .map(|r| match r {
            LogRecord::Terrain(e) => LogRow::terrain(e),
            LogRecord::Block(e) => LogRow::block(e),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use loam_field::{
        CaveSettings, CsgMode, EditOp, Field, FieldSettings, Generator, LogEntry,
        NoiseTerrainSettings,
    };

    use super::*;

    #[test]
    fn the_followed_position_is_written_with_the_records_and_survives_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.loam");
        let mut store = Store::create(&path, "flat", &FieldSettings::default(), None).unwrap();
        assert_eq!(store.followed().unwrap(), None);
        let dig = |seq| {
            LogRecord::Terrain(LogEntry::new(
                seq,
                1,
                EditOp::Sphere {
                    mode: CsgMode::Subtract,
                    center: [0.0; 3],
                    radius: 2.0,
                    material: 0,
                    blend: 0.0,
                },
            ))
        };
        store
            .append_records_followed(&[dig(1), dig(2)], "7")
            .unwrap();
        assert_eq!(store.followed().unwrap().as_deref(), Some("7"));
        // Only the position moves (refused messages leave no record).
        store.append_records_followed(&[], "9 open").unwrap();
        // A plain append keeps it.
        store.append_records(&[dig(3)]).unwrap();
        drop(store);
        // Only the node opens it to write; the sealed meta table still checks out.
        match Store::open(&path) {
            Err(StoreError::Followed { followed, .. }) => assert_eq!(followed, "9 open"),
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("a node's file opened for any writer"),
        }
        let store = Store::open_followed(&path).unwrap();
        assert_eq!(store.followed().unwrap().as_deref(), Some("9 open"));
        assert_eq!(store.last_seq(), 3);
        // Out of order: nothing is written, the position included.
        let mut store = store;
        assert!(store.append_records_followed(&[dig(5)], "12").is_err());
        assert_eq!(store.followed().unwrap().as_deref(), Some("9 open"));
    }

    #[test]
    fn records_of_both_kinds_append_in_one_group_and_read_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.loam");
        let g =
            Generator::noise(&NoiseTerrainSettings::default(), &CaveSettings::default()).unwrap();
        let field = Field::new(FieldSettings::default(), Arc::new(g)).unwrap();
        let mut store = Store::create(&path, "flat", field.settings(), None).unwrap();
        let dig = EditOp::Sphere {
            mode: CsgMode::Subtract,
            center: [0.0; 3],
            radius: 2.0,
            material: 0,
            blend: 0.0,
        };
        let records = vec![
            LogRecord::Terrain(LogEntry::new(1, 1, dig.clone())),
            LogRecord::Block(BlockLogEntry {
                seq: 2,
                step: 7,
                op: vec![1, 2, 3],
            }),
            LogRecord::Terrain(LogEntry::new(3, 2, dig)),
        ];
        store.append_records(&records).unwrap();
        assert_eq!(store.last_seq(), 3);
        // A gap is refused and writes nothing.
        let gap = [LogRecord::Block(BlockLogEntry {
            seq: 5,
            step: 0,
            op: vec![],
        })];
        assert!(matches!(
            store.append_records(&gap),
            Err(StoreError::OutOfOrder { last: 3, got: 5 })
        ));
        drop(store);
        let store = Store::open(&path).unwrap();
        assert_eq!(store.log_after(0).unwrap(), records);
    }
}
