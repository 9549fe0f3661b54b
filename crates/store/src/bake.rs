//! Baking (the bricks changed since the last bake, the undo history and, for a world with
//! blocks, the blocks snapshot, in one transaction) and compaction.

use std::sync::Arc;

use loam_field::{Brick, BrickKey, Field, History};
use rusqlite::params;

use crate::blocks::snapshot_blob;
use crate::brick_blob;
use crate::checks::meta_digest;
use crate::error::StoreError;
use crate::store::{Store, now_unix, retry};

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
        if seq > self.last_seq {
            return Err(StoreError::OutOfOrder {
                last: self.last_seq,
                got: seq,
            });
        }
        if blocks.is_none()
            && let Some(at) = self.bake_needs_blocks(seq)?
        {
            return Err(StoreError::BlocksNotBaked { seq: at });
        }
        let snapshot = blocks.map(|(step, data)| (step, snapshot_blob(seq, step, data)));
        let changed: Vec<(BrickKey, Arc<Brick>)> = field
            .bricks()
            .filter(|(k, b)| self.baked.get(k) != Some(&b.id()))
            .map(|(k, b)| (k, b.clone()))
            .collect();
        let blobs: Vec<(BrickKey, Vec<u8>)> = changed
            .iter()
            .map(|(k, b)| (*k, brick_blob::encode([k.x, k.y, k.z], b)))
            .collect();
        let hist = crate::tag::seal(
            &crate::tag::key(&[seq as i64]),
            zstd::bulk::compress(
                &rmp_serde::to_vec(history).expect("a history serialises"),
                3,
            )
            .expect("compressing to memory"),
        );
        let now = now_unix().to_string();
        retry(|| {
            let tx = self.conn.transaction()?;
            {
                let mut put = tx.prepare(
                    "INSERT OR REPLACE INTO bricks (x, y, z, seq, data) VALUES (?1, ?2, ?3, ?4, ?5)",
                )?;
                for (k, blob) in &blobs {
                    put.execute(params![k.x, k.y, k.z, seq as i64, blob])?;
                }
            }
            tx.execute(
                "INSERT OR REPLACE INTO history (id, seq, data) VALUES (1, ?1, ?2)",
                params![seq as i64, hist],
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
        for (k, b) in changed {
            self.baked.insert(k, b.id());
        }
        Ok(blobs.len())
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
