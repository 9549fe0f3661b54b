//! What the world tells about its chunks and itself: loaded chunks of every level, versions,
//! whether the front end is current, the view, metrics.

use std::collections::BTreeSet;

use loam_field::ChunkKey;

use super::World;
use crate::lod::LodKey;
use crate::metrics::{Metrics, Percentiles, Recorder};

impl World {
    /// Loaded chunks whose current version is not built yet.
    pub fn waiting(&self) -> usize {
        self.batches.values().map(|b| b.waiting.len()).sum()
    }

    /// Batches not yet pulled (being built, or ready).
    pub fn pending_batches(&self) -> usize {
        self.batches.len()
    }

    /// Loaded level-0 chunks, ascending.
    pub fn loaded(&self) -> impl Iterator<Item = ChunkKey> + '_ {
        self.chunks
            .keys()
            .filter(|k| k.level == 0)
            .map(|k| k.chunk())
    }

    /// Loaded chunks of every level, ascending (level, then z, y, x).
    pub fn loaded_lod(&self) -> impl Iterator<Item = LodKey> + '_ {
        self.chunks.keys().copied()
    }

    /// The chunks in view, all levels: with level of detail the current selection (a tiling,
    /// [`crate::lod::select`]), otherwise the loaded level-0 chunks. Pass it to
    /// [`crate::Shown::open_edges`].
    pub fn view(&self) -> BTreeSet<LodKey> {
        match self.lod.settings {
            Some(_) => self.lod.view.clone(),
            None => self.chunks.keys().copied().collect(),
        }
    }

    /// The levels of chunk `key`'s neighbours its mesh is built for (the part its mesher's
    /// seams depend on, [`crate::lod::seams_of`]), if loaded.
    pub fn level_neighbours(&self, key: LodKey) -> Option<loam_mesh::LevelNeighbours> {
        self.chunks.get(&key).map(|c| c.levels)
    }

    /// Whether level-0 chunk `key` is loaded and the front end has its current state: its
    /// newest mesh was handed over, or it is known all air or all solid (nothing to mesh).
    /// False while a build of it is waiting or not yet pulled, and for chunks not loaded.
    pub fn is_current(&self, key: ChunkKey) -> bool {
        self.is_current_lod(LodKey::level0(key))
    }

    /// [`World::is_current`] for a chunk of any level.
    pub fn is_current_lod(&self, key: LodKey) -> bool {
        self.chunks.get(&key).is_some_and(|c| c.batch.is_none())
    }

    /// The current version of a loaded level-0 chunk.
    pub fn version(&self, key: ChunkKey) -> Option<u64> {
        self.version_lod(LodKey::level0(key))
    }

    /// The current version of a loaded chunk of any level.
    pub fn version_lod(&self, key: LodKey) -> Option<u64> {
        self.chunks.get(&key).map(|c| c.version)
    }

    /// The measurements so far.
    pub fn metrics(&self) -> Metrics {
        let r = &self.rec;
        Metrics {
            edit_latency_ms: Percentiles::of(&r.edit_latency_ms),
            mesh_ms_per_chunk: Percentiles::of(&r.mesh_ms),
            samples_changed_per_edit: Percentiles::of(&r.samples_changed),
            stale_dropped: r.stale_dropped,
            jobs_superseded: r.jobs_superseded,
            queue_depth_max: r.queue_depth_max,
            queue_depth: self.pool.queued(),
            chunks_loaded: self.chunks.len(),
            chunks_waiting: self.waiting(),
            chunks_built: r.chunks_built,
            batches_delivered: r.batches_delivered,
            batches_released: r.batches_released,
            edits_deferred: r.edits_deferred,
            edits: self.rec.edits,
            initial_load_s: r.initial_load_s,
            generator_cache_bricks: self.cache.len(),
        }
    }

    /// Forgets the measurements so far (latencies, build times, counters; the initial load
    /// time is kept), so a benchmark can measure one phase.
    pub fn reset_metrics(&mut self) {
        let r = &self.rec;
        self.rec = Recorder {
            initial_load_s: r.initial_load_s,
            started: r.started,
            last_built: r.last_built,
            ..Recorder::default()
        };
    }
}
