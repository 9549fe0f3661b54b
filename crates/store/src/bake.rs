//! Baking (the bricks and history strokes changed since the last bake, the history header
//! and, for a world with blocks, the blocks snapshot) and compaction.
//!
//! A bake's rows carry its sequence number and a load reads, per brick and per stroke, the
//! version of the highest sequence up to the bake the meta table names. So the big rows of a
//! bake (bricks, strokes) may be written ahead in small transactions between op appends
//! ([`Store::write_bake_part`]): until the bake's last, small transaction moves `bake_seq`,
//! no load reads them. A crash in between leaves them behind; the next writable open deletes
//! them.

use std::collections::BTreeMap;
use std::sync::Arc;

use loam_field::{BrickKey, Field, History, SharedStroke};
use rusqlite::params;

use crate::blocks::snapshot_blob;
use crate::brick_blob;
use crate::checks::meta_digest;
use crate::error::StoreError;
use crate::error::Writing;
use crate::store::{Store, now_unix, retry};
use crate::strokes::{self, StrokeRow};

/// What a store's file holds as of its last bake ([`Store::baked`]), for
/// [`Store::prepare_bake`] to leave out: each baked brick's id, and the history's strokes as
/// written (shared with the history they came from; unknown until the store has loaded or
/// baked once).
#[derive(Debug, Clone, Default)]
pub struct Baked {
    pub(crate) bricks: BTreeMap<BrickKey, u64>,
    pub(crate) strokes: Option<Arc<[SharedStroke]>>,
    /// Stroke versions the file's rows hold that a later row replaced (unread, kept until
    /// their row goes; at most this many).
    pub(crate) stale: usize,
    /// The sequence number the file's bake covers.
    pub(crate) seq: u64,
}

/// What a committed bake replaced, to delete when it suits the caller
/// ([`Store::commit_bake_untidied`], [`Store::tidy_bake`]): the older versions of the bricks
/// it wrote and the stroke rows older than its oldest kept stroke. Never read, so leaving
/// them changes nothing a load sees; the next writable open deletes stale bricks, the next
/// bake's tidying stale strokes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BakeTidy {
    /// The bake's sequence number: versions of `keys` older than it go.
    seq: u64,
    /// The bricks the bake wrote.
    keys: Vec<BrickKey>,
    /// The oldest kept stroke id (`None`: no stroke is kept).
    first: Option<u64>,
}

/// A bake encoded by [`Store::prepare_bake`], to be written by [`Store::write_bake_part`]
/// (optionally) and [`Store::commit_bake`].
#[derive(Debug)]
pub struct PreparedBake {
    seq: u64,
    /// Each changed brick's key, id and blob.
    blobs: Vec<(BrickKey, u64, Vec<u8>)>,
    /// The new and changed strokes, in rows.
    rows: Vec<StrokeRow>,
    /// How many strokes the rows hold.
    strokes: usize,
    /// How many of them replace a version the file holds.
    rewritten: usize,
    /// Every stroke row of the file is replaced (the store did not know them, or the history
    /// dropped strokes other than its oldest).
    full: bool,
    header: Vec<u8>,
    /// The first kept stroke id.
    first: Option<u64>,
    kept: Arc<[SharedStroke]>,
    snapshot: Option<(u64, Vec<u8>)>,
    /// Bricks, then stroke rows, written ahead so far.
    ahead: usize,
    /// The bake the prepared one follows.
    after: u64,
}

impl PreparedBake {
    /// The op the bake covers: the world as it was after it.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Bricks it will write.
    pub fn bricks(&self) -> usize {
        self.blobs.len()
    }

    /// History strokes it will write (new ones, and those changed since the last bake).
    pub fn strokes(&self) -> usize {
        self.strokes
    }

    /// Bytes of stroke rows it will write.
    pub fn stroke_bytes(&self) -> usize {
        self.rows.iter().map(|r| r.2.len()).sum()
    }

    fn items(&self) -> usize {
        self.blobs.len() + self.rows.len()
    }
}

/// The strokes of `now` to write, given those `old` the file holds, and how many of them
/// replace a version the file holds (which then lies unread in its row); or `None` when every
/// row must be replaced instead: the history dropped a stroke other than its oldest, or has
/// strokes older than every one the file reads (rows may still hold forgotten strokes there).
fn changed_strokes(
    old: &[SharedStroke],
    now: &[SharedStroke],
    first: Option<u64>,
) -> Option<(Vec<SharedStroke>, usize)> {
    match (old.first(), now.first()) {
        (_, None) => {}
        (None, Some(_)) => return None,
        (Some(o), Some(n)) if n.id() < o.id() => return None,
        _ => {}
    }
    let mut changed = Vec::new();
    let mut rewritten = 0;
    let mut j = 0;
    // A dropped stroke must be older than every kept one: the load reads from `first` on.
    let evicted = |id: u64| first.is_none_or(|f| id < f);
    for s in now {
        while j < old.len() && old[j].id() < s.id() {
            if !evicted(old[j].id()) {
                return None;
            }
            j += 1;
        }
        if j < old.len() && old[j].id() == s.id() {
            if !old[j].same(s) {
                changed.push(s.clone());
                rewritten += 1;
            }
            j += 1;
        } else {
            changed.push(s.clone());
        }
    }
    if old[j..].iter().any(|s| !evicted(s.id())) {
        return None;
    }
    Some((changed, rewritten))
}

impl Store {
    /// Bakes `field` and `history` as they are after op `seq`: the bricks and history strokes
    /// that changed since the last bake of this session (all of them the first time), the
    /// history header and the covered sequence number, in one transaction; then deletes the
    /// versions it replaced. Busy is retried. A world with blocks bakes with
    /// [`Store::bake_with_blocks`].
    ///
    /// # Errors
    /// [`StoreError::OutOfOrder`] if `seq` is beyond the logged ops or before the last bake;
    /// [`StoreError::BlocksNotBaked`] if the world has a blocks snapshot or a block op at or
    /// before `seq` (the bake would leave them behind); [`StoreError::Busy`] if another
    /// connection held the write lock too long; SQLite failures (nothing is written then).
    pub fn bake(
        &mut self,
        field: &Field,
        history: &History,
        seq: u64,
    ) -> Result<usize, StoreError> {
        self.bake_inner(field, history, seq, None)
    }

    /// [`Store::bake`] with the block world as it is after op `seq` and physics step `step`
    /// (`blocks`: loam-blocks' `BlocksFile::encode`, kept as given, zstd-compressed and
    /// checksummed), in the same transaction: the snapshot covers every block op up to
    /// `seq`, so compaction may drop them.
    ///
    /// # Errors
    /// As [`Store::bake`], less [`StoreError::BlocksNotBaked`].
    pub fn bake_with_blocks(
        &mut self,
        field: &Field,
        history: &History,
        seq: u64,
        step: u64,
        blocks: &[u8],
    ) -> Result<usize, StoreError> {
        self.bake_inner(field, history, seq, Some((step, blocks)))
    }

    fn bake_inner(
        &mut self,
        field: &Field,
        history: &History,
        seq: u64,
        blocks: Option<(u64, &[u8])>,
    ) -> Result<usize, StoreError> {
        self.writable()?;
        // Checked before the encoding too, so that a refused bake costs nothing.
        self.check_bake(seq, blocks.is_some())?;
        let prepared = Self::prepare_bake(&self.baked(), field, history, seq, blocks);
        self.commit_bake(prepared)
    }

    /// What the file holds as of the last bake, for [`Store::prepare_bake`] on another
    /// thread.
    pub fn baked(&self) -> Baked {
        Baked {
            bricks: self.baked.clone(),
            strokes: self.baked_strokes.clone(),
            stale: self.stale_strokes,
            seq: self.bake_seq,
        }
    }

    /// The first half of a bake, with no access to the file so that it can run on another
    /// thread while the store goes on appending ops: encodes the bricks of `field` that
    /// changed since `baked` (quantised, zstd-compressed, checksummed blobs), the history's
    /// new and changed strokes and its header and, for a world with blocks, the blocks
    /// snapshot `(step, data)` as [`Store::bake_with_blocks`] takes it.
    /// [`Store::write_bake_part`] and [`Store::commit_bake`] write the result. Most of a
    /// bake's time is here.
    pub fn prepare_bake(
        baked: &Baked,
        field: &Field,
        history: &History,
        seq: u64,
        blocks: Option<(u64, &[u8])>,
    ) -> PreparedBake {
        let snapshot = blocks.map(|(step, data)| (step, snapshot_blob(seq, step, data)));
        let blobs = field
            .bricks()
            .filter(|(k, b)| baked.bricks.get(k) != Some(&b.id()))
            .map(|(k, b)| (k, b.id(), brick_blob::encode([k.x, k.y, k.z], b)))
            .collect();
        let header = history.header();
        let kept: Arc<[SharedStroke]> = history.shared_strokes().collect();
        let changed = baked
            .strokes
            .as_deref()
            .and_then(|old| changed_strokes(old, &kept, header.first))
            // Rows at the file's own bake sequence would replace rows it reads: all anew then.
            .filter(|(c, _)| c.is_empty() || seq > baked.seq)
            // Replaced versions pile up in rows that also hold live strokes: once they
            // outnumber the live strokes, every row is written anew.
            .filter(|&(_, r)| baked.stale + r <= kept.len());
        let full = changed.is_none();
        let (written, rewritten) = match &changed {
            Some((c, r)) => (c.as_slice(), *r),
            None => (&kept[..], 0),
        };
        let rows = strokes::encode_rows(seq, written);
        PreparedBake {
            seq,
            blobs,
            rows,
            strokes: written.len(),
            rewritten,
            full,
            header: strokes::encode_header(seq, &header),
            first: header.first,
            kept,
            snapshot,
            ahead: 0,
            after: baked.seq,
        }
    }

    /// Writes the next rows of `prepared` (bricks, then history strokes) ahead of its commit,
    /// about `bytes` of them in one transaction, between op appends; a load does not read
    /// them until [`Store::commit_bake`]. Returns whether every row is written. Optional:
    /// the commit writes what is left. (A bake at the sequence number the file's bake
    /// already covers writes everything in its commit.)
    ///
    /// # Errors
    /// [`StoreError::OutOfOrder`] if the file was baked since `prepared` was;
    /// [`StoreError::Busy`] and SQLite failures (the rows of the part are not written then:
    /// the call may be made again).
    pub fn write_bake_part(
        &mut self,
        prepared: &mut PreparedBake,
        bytes: usize,
    ) -> Result<bool, StoreError> {
        self.writable()?;
        if prepared.after != self.bake_seq {
            return Err(StoreError::OutOfOrder {
                last: self.bake_seq,
                got: prepared.seq,
            });
        }
        if prepared.seq <= self.bake_seq || prepared.ahead == prepared.items() {
            return Ok(true);
        }
        let (from, mut to, mut sum) = (prepared.ahead, prepared.ahead, 0);
        while to < prepared.items() && (to == from || sum < bytes) {
            sum += match prepared.blobs.get(to) {
                Some(b) => b.2.len(),
                None => prepared.rows[to - prepared.blobs.len()].2.len(),
            };
            to += 1;
        }
        retry(&self.path, self.busy_wait, Writing::BakePart, || {
            let tx = self.conn.transaction()?;
            put_items(&tx, prepared, from..to)?;
            tx.commit()
        })?;
        prepared.ahead = to;
        Ok(to == prepared.items())
    }

    /// The second half of a bake: writes what [`Store::write_bake_part`] did not, the history
    /// header, the blocks snapshot and the covered sequence number in one transaction (busy is
    /// retried), then deletes the versions it replaced ([`Store::tidy_bake`]); returns how
    /// many bricks it wrote. Ops appended after the prepared `seq` stay in the log, newer
    /// than the bake.
    ///
    /// # Errors
    /// As [`Store::bake`], and [`StoreError::OutOfOrder`] if the file was baked since
    /// `prepared` was.
    pub fn commit_bake(&mut self, prepared: PreparedBake) -> Result<usize, StoreError> {
        let (bricks, tidy) = self.commit_bake_untidied(&prepared)?;
        self.tidy_bake(&tidy);
        Ok(bricks)
    }

    /// [`Store::commit_bake`] without deleting what the bake replaced: that is handed back,
    /// for [`Store::tidy_bake`] when the caller has time (the server's writer does it after
    /// the next group of ops, so that the ops behind a bake do not wait for its tidying too:
    /// 2.7–4 ms of the 5.4–11.8 ms a bake's commit held them, measured at 64 clients × 313
    /// ops/s). Returns how many bricks it wrote, and what to tidy. Takes the bake by
    /// reference: one that failed (a [`StoreError::Busy`] file) can be committed again.
    ///
    /// # Errors
    /// As [`Store::commit_bake`].
    pub fn commit_bake_untidied(
        &mut self,
        prepared: &PreparedBake,
    ) -> Result<(usize, BakeTidy), StoreError> {
        self.writable()?;
        self.check_bake(prepared.seq, prepared.snapshot.is_some())?;
        if prepared.after != self.bake_seq {
            return Err(StoreError::OutOfOrder {
                last: self.bake_seq,
                got: prepared.seq,
            });
        }
        let p = prepared;
        let seq = p.seq as i64;
        let now = now_unix().to_string();
        retry(&self.path, self.busy_wait, Writing::BakeCommit, || {
            let tx = self.conn.transaction()?;
            if p.full {
                // Every stroke is in this bake's rows, so no other row is kept: those written
                // ahead are the only ones at this bake's sequence (it is past the file's).
                if p.ahead > p.blobs.len() {
                    tx.execute("DELETE FROM strokes WHERE seq <> ?1", [seq])?;
                } else {
                    tx.execute("DELETE FROM strokes", [])?;
                }
            }
            put_items(&tx, p, p.ahead..p.items())?;
            tx.execute(
                "INSERT OR REPLACE INTO history (id, seq, data) VALUES (1, ?1, ?2)",
                params![seq, p.header],
            )?;
            if let Some((step, blob)) = &p.snapshot {
                tx.execute(
                    "INSERT OR REPLACE INTO blocks (id, seq, step, data) VALUES (1, ?1, ?2, ?3)",
                    params![seq, *step as i64, blob],
                )?;
            }
            tx.execute(
                "UPDATE meta SET value = ?1 WHERE key = 'bake_seq'",
                [p.seq.to_string()],
            )?;
            tx.execute("UPDATE meta SET value = ?1 WHERE key = 'modified'", [&now])?;
            let digest = meta_digest(&tx)?;
            tx.execute("UPDATE meta SET value = ?1 WHERE key = 'tag'", [digest])?;
            tx.commit()
        })?;
        self.bake_seq = p.seq;
        for (k, id, _) in &p.blobs {
            self.baked.insert(*k, *id);
        }
        self.baked_strokes = Some(Arc::clone(&p.kept));
        self.stale_strokes = if p.full {
            0
        } else {
            self.stale_strokes + p.rewritten
        };
        Ok((
            p.blobs.len(),
            BakeTidy {
                seq: p.seq,
                keys: p.blobs.iter().map(|(k, _, _)| *k).collect(),
                first: p.first,
            },
        ))
    }

    /// Deletes what a committed bake replaced (its [`BakeTidy`]): older versions of its
    /// bricks, stroke rows older than its oldest kept stroke, in one transaction. Never
    /// read, so this is tidying only: a failure, a crash or a tidy never done leaves them to
    /// the next bake's tidying (strokes) or the next writable open (bricks), and the bake
    /// stands; nothing is reported. A late tidy (after the next bake's rows are written
    /// ahead, or after its commit) deletes nothing the newer bake wrote.
    pub fn tidy_bake(&mut self, tidy: &BakeTidy) {
        if self.writable().is_err() {
            return;
        }
        let seq = tidy.seq as i64;
        let _ = retry(&self.path, self.busy_wait, Writing::BakeTidy, || {
            let tx = self.conn.transaction()?;
            {
                let mut drop_old = tx.prepare_cached(
                    "DELETE FROM bricks WHERE z = ?1 AND y = ?2 AND x = ?3 AND seq < ?4",
                )?;
                for k in &tidy.keys {
                    drop_old.execute(params![k.z, k.y, k.x, seq])?;
                }
            }
            match tidy.first {
                Some(first) => tx.execute("DELETE FROM strokes WHERE last < ?1", [first as i64])?,
                None => tx.execute("DELETE FROM strokes WHERE seq < ?1", [seq])?,
            };
            tx.commit()
        });
    }

    /// Whether a bake after op `seq` (with or without a blocks snapshot) may be written.
    fn check_bake(&self, seq: u64, with_blocks: bool) -> Result<(), StoreError> {
        if seq > self.last_seq {
            return Err(StoreError::OutOfOrder {
                last: self.last_seq,
                got: seq,
            });
        }
        if seq < self.bake_seq {
            return Err(StoreError::OutOfOrder {
                last: self.bake_seq,
                got: seq,
            });
        }
        if !with_blocks && let Some(at) = self.bake_needs_blocks(seq)? {
            return Err(StoreError::BlocksNotBaked { seq: at });
        }
        Ok(())
    }

    /// Drops the ops (terrain and block) the bake covers (undo and redo of earlier strokes
    /// read the saved history, not the ops; the blocks snapshot holds what the block ops
    /// did). Returns how many were dropped.
    ///
    /// # Errors
    /// SQLite failures.
    pub fn compact(&mut self) -> Result<u64, StoreError> {
        self.writable()?;
        let bake = self.meta_u64("bake_seq")?;
        let n = retry(&self.path, self.busy_wait, Writing::Compact, || {
            let tx = self.conn.transaction()?;
            let mut n = tx.execute("DELETE FROM ops WHERE seq <= ?1", [bake as i64])?;
            n += tx.execute("DELETE FROM block_ops WHERE seq <= ?1", [bake as i64])?;
            tx.commit()?;
            Ok(n)
        })?;
        Ok(n as u64)
    }

    /// Gives the space of dropped ops and replaced bricks back to the file system: SQLite's
    /// `VACUUM` (rebuilds the file from its live pages), then a truncating WAL checkpoint.
    /// Without it a [`Store::compact`] after a bake leaves the freed pages in the file, which
    /// then grows. Takes time in proportion to the file's live size.
    ///
    /// # Errors
    /// SQLite failures (the file is unchanged then).
    pub fn vacuum(&mut self) -> Result<(), StoreError> {
        self.writable()?;
        retry(&self.path, self.busy_wait, Writing::Vacuum, || {
            self.conn.execute_batch("VACUUM")?;
            self.conn
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        })?;
        Ok(())
    }
}

/// Writes bricks and stroke rows `range` of `p` (bricks first, then stroke rows).
fn put_items(
    tx: &rusqlite::Transaction<'_>,
    p: &PreparedBake,
    range: std::ops::Range<usize>,
) -> rusqlite::Result<()> {
    let n = p.blobs.len();
    {
        let mut put = tx.prepare_cached(
            "INSERT OR REPLACE INTO bricks (x, y, z, seq, data) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        for (k, _, blob) in &p.blobs[range.start.min(n)..range.end.min(n)] {
            put.execute(params![k.x, k.y, k.z, p.seq as i64, blob])?;
        }
    }
    let rows = range.start.max(n) - n..range.end.max(n) - n;
    strokes::put_rows(tx, p.seq, &p.rows[rows])
}
