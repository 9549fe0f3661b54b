//! The world's streaming: which chunks load and drop as viewers move and edits raise columns.

use crate::Instant;

use loam_field::ChunkKey;
use loam_mesh::LevelNeighbours;

use super::{Chunk, Out, World};
use crate::batch::BatchKind;
use crate::lod::LodKey;
use crate::streaming::{wanted, wanted_in_column};

impl World {
    /// Loads what the viewers now need in the columns edits changed (a tower raises a
    /// column's top); dropping waits for the next full pass.
    pub(super) fn restream_columns(&mut self) {
        if self.lod.settings.is_some() {
            // Every chunk in view is loaded whatever its column's bounds.
            self.dirty_columns.clear();
            return;
        }
        let viewers = self.viewers.clone().unwrap_or_default();
        for col in std::mem::take(&mut self.dirty_columns) {
            let want = wanted_in_column(
                &self.field,
                &self.settings,
                &viewers,
                &mut self.columns,
                col,
            );
            for key in want {
                self.load(key);
            }
        }
    }

    /// Loads chunk `key` if it is not loaded: known all air or all solid from its column's
    /// bounds, or queued as a streaming batch of one.
    pub(super) fn load(&mut self, key: ChunkKey) {
        let lk = LodKey::level0(key);
        if self.chunks.contains_key(&lk) {
            return;
        }
        let col = self.columns[&(key.x, key.z)];
        self.chunks
            .insert(lk, Chunk::new(LevelNeighbours::default()));
        if key.y > col.solid_top && key.y <= col.top {
            let b = self.new_batch(BatchKind::Stream);
            self.bump(lk, b);
        }
    }

    pub(super) fn restream(&mut self) {
        self.restream = false;
        self.dirty_columns.clear();
        let Some(viewers) = self.viewers.clone() else {
            return;
        };
        let want = wanted(&self.field, &self.settings, &viewers, &mut self.columns);
        let now = Instant::now();
        let gone: Vec<LodKey> = self
            .chunks
            .keys()
            .filter(|k| !want.keep.contains(&k.chunk()))
            .copied()
            .collect();
        for key in gone {
            self.pool.cancel(key);
            self.release(key, now);
            if self.chunks.remove(&key).is_some_and(|c| c.shown) {
                self.outbox.push_back(Out::Removed(key.chunk()));
            }
        }
        for key in want.load {
            self.load(key);
        }
    }
}
