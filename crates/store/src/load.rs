//! Loading a world: the baked bricks and history, then the log after the bake replayed in
//! sequence order (terrain ops applied, block ops handed back).

use std::collections::BTreeMap;

use loam_field::{BrickKey, Field, History};

use crate::blocks::{LogRecord, Replayed};
use crate::brick_blob;
use crate::error::StoreError;
use crate::store::{LoadedWorld, Store};

/// Bricks a load's replay keeps decoded (96 KiB each, so at most 96 MiB while loading).
const REPLAY_HOT_BRICKS: usize = 1024;

impl Store {
    /// Loads the world over `base` (a fresh field of the world's generator and settings):
    /// the baked bricks, the saved history, then every newer terrain op replayed through it.
    /// Equal bit for bit to replaying the whole log from the generator. The blocks snapshot
    /// and the newer block ops come back as they are, for loam-blocks to restore and replay
    /// (or use [`Store::load_with`] to see each record in turn).
    ///
    /// # Errors
    /// [`StoreError::CorruptBrick`], [`StoreError::CorruptHistory`], [`StoreError::CorruptOp`],
    /// [`StoreError::CorruptBlocks`], [`StoreError::CorruptBlockOp`],
    /// [`StoreError::OutOfOrder`] for a gap in the log, [`StoreError::Replay`]; SQLite failures.
    pub fn load(&mut self, base: Field) -> Result<LoadedWorld, StoreError> {
        self.load_with(base, |_, _| Ok::<(), StoreError>(()))
    }

    /// [`Store::load`], calling `visit` with the field: first as baked
    /// ([`Replayed::Baked`]), then with each record after the bake in sequence order: a
    /// terrain op just after it was applied (with what it changed), a block op with the
    /// field as the terrain ops before it left it. So a caller can replay the block ops
    /// against the terrain of their time (ground under blocks, colliders, islands).
    ///
    /// # Errors
    /// As [`Store::load`]; [`StoreError::Visit`] with the record's sequence number when
    /// `visit` fails (the load stops there).
    pub fn load_with<E>(
        &mut self,
        base: Field,
        mut visit: impl FnMut(&Field, Replayed<'_>) -> Result<(), E>,
    ) -> Result<LoadedWorld, StoreError>
    where
        E: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let bake = self.meta_u64("bake_seq")?;
        let blocks = self.blocks()?;
        let mut field = base;
        let band = field.settings().band();
        let mut bricks = Vec::new();
        {
            // Each brick's version of the highest sequence up to the bake (format 4 keeps
            // one per bake until the older are deleted, and a bake's rows written ahead).
            let mut stmt = self.conn.prepare(
                "SELECT x, y, z, data FROM bricks AS b WHERE seq = (SELECT MAX(n.seq) \
                 FROM bricks AS n WHERE n.z = b.z AND n.y = b.y AND n.x = b.x AND n.seq <= ?1)",
            )?;
            let rows = stmt.query_map([bake as i64], |r| {
                Ok((
                    r.get::<_, i32>(0)?,
                    r.get::<_, i32>(1)?,
                    r.get::<_, i32>(2)?,
                    r.get::<_, Vec<u8>>(3)?,
                ))
            })?;
            for row in rows {
                let (x, y, z, blob) = row?;
                let brick = brick_blob::decode_version(self.version, [x, y, z], &blob, band)
                    .ok_or(StoreError::CorruptBrick { key: [x, y, z] })?;
                bricks.push((BrickKey::new(x, y, z), brick));
            }
        }
        field.insert_bricks(bricks);
        // What the file holds now: the baked bricks, before the newer ops change any. (Taken
        // after the replay, a later bake would skip bricks only the replayed ops changed and
        // still move `bake_seq` past them, losing those ops once compacted.)
        let baked: BTreeMap<BrickKey, u64> = field.bricks().map(|(k, b)| (k, b.id())).collect();
        let saved = if self.version >= 4 {
            crate::strokes::load(&self.conn, bake).map(|(h, kept, stale)| (h, Some(kept), stale))
        } else {
            crate::strokes::load_whole(&self.conn, bake).map(|h| (h, None, 0))
        };
        let (mut history, baked_strokes, stale, history_discarded) = match saved {
            Ok((h, kept, stale)) => (h, kept, stale, None),
            Err(StoreError::CorruptHistory(why)) if self.discard_corrupt_history => {
                // The file's strokes are unknown: the next bake writes the history whole.
                (History::default(), None, 0, Some(why))
            }
            Err(e) => return Err(e),
        };
        // The replay keeps up to REPLAY_HOT_BRICKS bricks decoded instead of packing and
        // unpacking them op after op, then packs back to the field's own working set.
        let keep = field.hot_capacity();
        field.set_hot_capacity(keep.max(REPLAY_HOT_BRICKS));
        visit(&field, Replayed::Baked { seq: bake }).map_err(|e| StoreError::Visit {
            seq: bake,
            source: e.into(),
        })?;
        let mut last = bake;
        let mut block_ops = Vec::new();
        for record in self.log_after(bake)? {
            let seq = record.seq();
            if seq != last + 1 {
                return Err(StoreError::OutOfOrder { last, got: seq });
            }
            let visited = match record {
                LogRecord::Terrain(e) => {
                    let outcome = history
                        .apply(&mut field, e.stroke, &e.op)
                        .map_err(|source| StoreError::Replay { seq, source })?;
                    visit(&field, Replayed::Terrain(&e, outcome))
                }
                LogRecord::Block(e) => {
                    let r = visit(&field, Replayed::Block(&e));
                    block_ops.push(e);
                    r
                }
            };
            visited.map_err(|e| StoreError::Visit {
                seq,
                source: e.into(),
            })?;
            last = seq;
        }
        field.set_hot_capacity(keep);
        // Every record after the bake read, in order: appends may go on top of them.
        self.log_read = true;
        self.baked = baked;
        self.baked_strokes = baked_strokes;
        self.stale_strokes = stale;
        Ok(LoadedWorld {
            field,
            history,
            last_seq: last,
            blocks,
            block_ops,
            history_discarded,
        })
    }
}
