//! Baking (the bricks changed since the last bake, the undo history and, for a world with
//! blocks, the blocks snapshot, in one transaction) and compaction.

use std::collections::BTreeMap;

use loam_field::{BrickKey, Field, History};
use rusqlite::params;

use crate::blocks::snapshot_blob;
use crate::brick_blob;
use crate::checks::meta_digest;
use crate::error::StoreError;
use crate::store::{Store, now_unix, retry};

/// The ids of a store's bricks as last baked ([`Store::baked_bricks`]): what
/// [`Store::prepare_bake`] leaves out.
#[derive(Debug, Clone, Default)]
pub struct BakedBricks(BTreeMap<BrickKey, u64>);

/// A bake encoded by [`Store::prepare_bake`], to be written by [`Store::commit_bake`].
#[derive(Debug)]
pub struct PreparedBake {
    seq: u64,
    /// Each changed brick's key, id and blob.
    blobs: Vec<(BrickKey, u64, Vec<u8>)>,
    history: Vec<u8>,
    snapshot: Option<(u64, Vec<u8>)>,
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
}

impl Store {
    /// Bakes `field` and `history` as they are after op `seq`: the bricks that changed since
    /// the last bake of this session (all of them the first time), the history and the
    /// covered sequence number, in one transaction. Busy is retried. A world with blocks
    /// bakes with [`Store::bake_with_blocks`].
    ///
    /// # Errors
    /// [`StoreError::OutOfOrder`] if `seq` is beyond the logged ops;
    /// [`StoreError::BlocksNotBaked`] if the world has a blocks snapshot or a block op at or
    /// before `seq` (the bake would leave them behind); SQLite failures (nothing is written
    /// then).
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
        let prepared = Self::prepare_bake(&self.baked_bricks(), field, history, seq, blocks);
        self.commit_bake(prepared)
    }

    /// The ids of the bricks as last baked, for [`Store::prepare_bake`] on another thread.
    pub fn baked_bricks(&self) -> BakedBricks {
        BakedBricks(self.baked.clone())
    }

    /// The first half of a bake, with no access to the file so that it can run on another
    /// thread while the store goes on appending ops: encodes the bricks of `field` that
    /// changed since `baked` (quantised, zstd-compressed, checksummed blobs), the history and,
    /// for a world with blocks, the blocks snapshot `(step, data)` as
    /// [`Store::bake_with_blocks`] takes it. [`Store::commit_bake`] writes the result. Most
    /// of a bake's time is here.
    pub fn prepare_bake(
        baked: &BakedBricks,
        field: &Field,
        history: &History,
        seq: u64,
        blocks: Option<(u64, &[u8])>,
    ) -> PreparedBake {
        let snapshot = blocks.map(|(step, data)| (step, snapshot_blob(seq, step, data)));
        let blobs = field
            .bricks()
            .filter(|(k, b)| baked.0.get(k) != Some(&b.id()))
            .map(|(k, b)| (k, b.id(), brick_blob::encode([k.x, k.y, k.z], b)))
            .collect();
        let history = crate::tag::seal(
            &crate::tag::key(&[seq as i64]),
            zstd::bulk::compress(
                &rmp_serde::to_vec(history).expect("a history serialises"),
                3,
            )
            .expect("compressing to memory"),
        );
        PreparedBake {
            seq,
            blobs,
            history,
            snapshot,
        }
    }

    /// The second half of a bake: writes a [`PreparedBake`] in one transaction (busy is
    /// retried) and returns how many bricks it wrote. Ops appended after the prepared
    /// sequence number stay in the log, so a load replays them over the baked bricks.
    ///
    /// # Errors
    /// As [`Store::bake_with_blocks`] ([`StoreError::BlocksNotBaked`] when the bake was
    /// prepared without blocks as [`Store::bake`] would refuse it); SQLite failures (nothing
    /// is written then).
    pub fn commit_bake(&mut self, prepared: PreparedBake) -> Result<usize, StoreError> {
        self.writable()?;
        self.check_bake(prepared.seq, prepared.snapshot.is_some())?;
        let PreparedBake {
            seq,
            blobs,
            history,
            snapshot,
        } = prepared;
        let now = now_unix().to_string();
        retry(|| {
            let tx = self.conn.transaction()?;
            {
                let mut put = tx.prepare(
                    "INSERT OR REPLACE INTO bricks (x, y, z, seq, data) VALUES (?1, ?2, ?3, ?4, ?5)",
                )?;
                for (k, _, blob) in &blobs {
                    put.execute(params![k.x, k.y, k.z, seq as i64, blob])?;
                }
            }
            tx.execute(
                "INSERT OR REPLACE INTO history (id, seq, data) VALUES (1, ?1, ?2)",
                params![seq as i64, history],
            )?;
            if let Some((step, blob)) = &snapshot {
                tx.execute(
                    "INSERT OR REPLACE INTO blocks (id, seq, step, data) VALUES (1, ?1, ?2, ?3)",
                    params![seq as i64, *step as i64, blob],
                )?;
            }
            tx.execute(
                "UPDATE meta SET value = ?1 WHERE key = 'bake_seq'",
                [seq.to_string()],
            )?;
            tx.execute("UPDATE meta SET value = ?1 WHERE key = 'modified'", [&now])?;
            let digest = meta_digest(&tx)?;
            tx.execute("UPDATE meta SET value = ?1 WHERE key = 'tag'", [digest])?;
            tx.commit()
        })?;
        for (k, id, _) in &blobs {
            self.baked.insert(*k, *id);
        }
        Ok(blobs.len())
    }

    /// Whether a bake after op `seq` (with or without a blocks snapshot) may be written.
    fn check_bake(&self, seq: u64, with_blocks: bool) -> Result<(), StoreError> {
        if seq > self.last_seq {
            return Err(StoreError::OutOfOrder {
                last: self.last_seq,
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
        let n = retry(|| {
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
        retry(|| {
            self.conn.execute_batch("VACUUM")?;
            self.conn
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        })?;
        Ok(())
    }
}
