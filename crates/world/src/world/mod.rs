//! The world: the live field, the chunks the viewers need, and the batches on their way to the
//! front end (docs/architecture.md, "One edit, end to end").

mod handover;
mod lod;
mod query;
mod stream;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use crate::Instant;

use loam_field::{
    BRICK_SAMPLES, CHUNK_CELLS, ChunkKey, DEFAULT_HOT_BRICKS, EditError, EditOp, EditOutcome,
    Field, History, Journal, LogEntry, RayHit, RaycastError, SampleBox,
};
use loam_mesh::{LevelNeighbours, Mesher};

use crate::batch::{Batch, BatchKind, ChunkMesh};
use crate::bricks::{HOT_BRICKS_BETWEEN_UPDATES, make_bricks, pack_bricks};
use crate::cache::GeneratorCache;
use crate::dirty::chunks_reading;
use crate::lod::LodKey;
use crate::metrics::{Recorder, record};
use crate::pool::{Job, JobResult, Pool};
use crate::settings::{WorldError, WorldSettings};
use crate::streaming::{ColumnLayers, Viewer, wanted_in_column};

#[derive(Debug)]
struct Chunk {
    /// Current version; a mesh built for another one is never shown.
    version: u64,
    /// The batch that waits for (or holds) this chunk's current mesh.
    batch: Option<u64>,
    /// Whether the front end was handed a mesh of it.
    shown: bool,
    /// The levels of its neighbours that its mesh depends on (level of detail, see
    /// [`crate::lod::seams_of`]; all plain otherwise).
    levels: LevelNeighbours,
}

impl Chunk {
    fn new(levels: LevelNeighbours) -> Self {
        Self {
            version: 0,
            batch: None,
            shown: false,
            levels,
        }
    }
}

/// Ops applied since the last update: they form one batch.
#[derive(Debug, Default)]
struct FrameEdit {
    keys: BTreeSet<LodKey>,
    times: Vec<Instant>,
}

#[derive(Debug, Clone, Copy)]
enum Out {
    Batch(u64),
    Removed(ChunkKey),
}

/// Chunks around viewers, kept meshed by worker threads while the field is edited.
///
/// Drive it with one [`World::update`] per frame, apply edits with [`World::apply`], and take
/// what is ready with [`World::pull`]. Every chunk has a version that grows when its input
/// changes; a job carries the version it was started for and its result is dropped (and
/// counted) if the chunk has moved on. All chunks an edit changed are delivered as one group.
pub struct World {
    settings: WorldSettings,
    field: Field,
    pool: Pool,
    cache: Arc<GeneratorCache>,
    chunks: BTreeMap<LodKey, Chunk>,
    /// Level of detail: its settings (none when off) and the view selected for the viewers.
    lod: lod::LodView,
    batches: BTreeMap<u64, Batch>,
    outbox: VecDeque<Out>,
    columns: BTreeMap<(i32, i32), ColumnLayers>,
    viewers: Option<Vec<[i32; 3]>>,
    restream: bool,
    /// Columns whose bounds an edit changed since the last update.
    dirty_columns: BTreeSet<(i32, i32)>,
    frame_edit: Option<FrameEdit>,
    /// Ops of earlier frames waiting for an older edit's builds to finish before they form
    /// their batch (see [`World::seal`]).
    deferred: Option<FrameEdit>,
    next_version: u64,
    next_batch: u64,
    rec: Recorder,
    /// Numbers the ops, strokes them and keeps their undo history.
    journal: Journal,
    /// The ops applied since this world was made or resumed, as the journal numbered them.
    log: Vec<LogEntry>,
    /// Per-vertex colours made on the workers ([`World::set_vertex_colors`]).
    vertex_colors: Option<crate::pool::VertexColors>,
}

impl World {
    /// A world over `field`, with its worker threads started.
    ///
    /// # Errors
    /// [`WorldError`] for a bad setting or a thread that could not start.
    pub fn new(mut field: Field, settings: WorldSettings) -> Result<Self, WorldError> {
        settings.validate()?;
        // Ops leave their bricks decoded; `update` packs the excess on threads, after the
        // edit's jobs are queued, instead of each op packing older bricks on its own path.
        field.set_hot_capacity(HOT_BRICKS_BETWEEN_UPDATES);
        let cache = Arc::new(GeneratorCache::new(settings.generator_cache_bricks));
        let voxel_size = field.settings().voxel_size;
        let pool = Pool::new(
            settings.worker_count(),
            field.settings().voxel_size,
            cache.clone(),
        )?;
        Ok(Self {
            settings,
            field,
            pool,
            cache,
            chunks: BTreeMap::new(),
            lod: lod::LodView {
                settings: settings.lod(voxel_size),
                ..lod::LodView::default()
            },
            batches: BTreeMap::new(),
            outbox: VecDeque::new(),
            columns: BTreeMap::new(),
            viewers: None,
            restream: true,
            dirty_columns: BTreeSet::new(),
            frame_edit: None,
            deferred: None,
            journal: Journal::new(History::new(settings.history_budget), 0),
            log: Vec::new(),
            vertex_colors: None,
            next_version: 1,
            next_batch: 1,
            rec: Recorder::default(),
        })
    }

    /// A world that carries on from a saved one: `field` and `history` as they were after op
    /// `last_seq` (e.g. loaded by loam-store). The log holds only the ops applied from now
    /// on, numbered from `last_seq + 1`, and new strokes get ids above every stroke the
    /// history has seen.
    ///
    /// # Errors
    /// As [`World::new`].
    pub fn resume(
        field: Field,
        history: History,
        last_seq: u64,
        settings: WorldSettings,
    ) -> Result<Self, WorldError> {
        let mut world = Self::new(field, settings)?;
        world.journal = Journal::new(history, last_seq);
        Ok(world)
    }

    /// The live field (every op applied so far).
    pub fn field(&self) -> &Field {
        &self.field
    }

    /// Picking on the field (not on a possibly stale mesh): [`Field::raycast`] over the
    /// current field, every applied op included. `origin` in world metres, `direction` any
    /// non-zero vector, `max_distance` in metres.
    ///
    /// # Errors
    /// [`RaycastError`] for NaN or infinite numbers, a zero direction, or a ray too long or
    /// outside the sample range (case C08); never a hang.
    pub fn raycast(
        &self,
        origin: [f64; 3],
        direction: [f64; 3],
        max_distance: f64,
    ) -> Result<Option<RayHit>, RaycastError> {
        self.field.raycast(origin, direction, max_distance)
    }

    /// The op log: every applied op (undo and redo included) with its sequence number and
    /// stroke (for a [`World::resume`]d world, the ops since it resumed). Replaying it through a fresh [`History`] over the same generator gives this
    /// field bit for bit.
    pub fn log(&self) -> &[LogEntry] {
        &self.log
    }

    /// Takes the next sequence number for an op of another kind that shares this world's
    /// numbering (a block op, logged beside terrain ops by loam-store): the next terrain op
    /// is numbered after it.
    pub fn reserve_seq(&mut self) -> u64 {
        self.journal.reserve_seq()
    }

    /// The sequence number of the newest op numbered so far, of either kind (0 for none).
    pub fn last_seq(&self) -> u64 {
        self.journal.last_seq()
    }

    /// The undo history.
    pub fn history(&self) -> &History {
        self.journal.history()
    }

    /// The id [`World::apply`] gives its next stroke.
    pub fn next_stroke(&self) -> u64 {
        self.journal.next_stroke()
    }

    /// The settings.
    pub fn settings(&self) -> &WorldSettings {
        &self.settings
    }

    /// Has every chunk mesh built from now on carry per-vertex colours made by `colors` on
    /// the worker thread that built it ([`ChunkMesh::colors`]), so that a renderer does not
    /// spend its frame on them (a game's look: slope, depth, material, noise). `None` stops
    /// it. Meshes already built keep what they have.
    pub fn set_vertex_colors(&mut self, colors: Option<crate::VertexColors>) {
        self.vertex_colors = colors;
    }

    /// Applies `op` as a stroke of its own (see [`World::apply_in_stroke`]).
    ///
    /// # Errors
    /// As [`World::apply_in_stroke`].
    pub fn apply(&mut self, op: &EditOp) -> Result<EditOutcome, EditError> {
        self.apply_in_stroke(self.journal.next_stroke(), op)
    }

    /// Applies `op` to the field as part of stroke `stroke` (the ops of one held button;
    /// a new stroke needs an id above every earlier one), records it in the undo history
    /// and appends it to the op log. Undo and redo are ops too. The chunks it changed are
    /// bumped and batched at the next [`World::update`]; ops applied before the same update
    /// share one batch.
    ///
    /// # Errors
    /// [`EditError`] for a rejected op, an op for a closed stroke, or undo / redo of a stroke
    /// the history does not hold (or in the wrong state); nothing changes then.
    pub fn apply_in_stroke(&mut self, stroke: u64, op: &EditOp) -> Result<EditOutcome, EditError> {
        let now = Instant::now();
        let threads = self.settings.worker_count();
        let cache = &self.cache;
        let mut asked = Vec::new();
        let (entry, out) =
            self.journal
                .apply_with(&mut self.field, stroke, op, |generator, keys, vs, band| {
                    asked.extend_from_slice(keys);
                    make_bricks(cache, generator, keys, vs, band, threads)
                })?;
        self.log.push(entry);
        // An edit brick now stands where a created brick's generator values were cached.
        for key in asked {
            if self.field.brick(key).is_some() {
                self.cache.remove(key);
            }
        }
        self.rec.edits += 1;
        record(&mut self.rec.samples_changed, out.samples_changed as f64);
        if let Some(b) = out.changed {
            self.invalidate(&b, now);
        }
        Ok(out)
    }

    /// Marks the chunks that read samples in `b` for this frame's batch, and the column
    /// bounds around it for recomputation.
    fn invalidate(&mut self, b: &SampleBox, now: Instant) {
        let mut keys = BTreeSet::new();
        if self.lod.settings.is_some() {
            self.lod_reading(b, &mut keys);
        } else {
            let mut level0 = BTreeSet::new();
            chunks_reading(b, &mut level0);
            keys.extend(level0.into_iter().map(LodKey::level0));
        }
        let frame = self.frame_edit.get_or_insert_with(FrameEdit::default);
        frame.keys.extend(keys);
        frame.times.push(now);
        // A brick column's edited layers widen the bounds of the chunk columns around it.
        let bx = b.min.x.div_euclid(BRICK_SAMPLES) - 1..=b.max.x.div_euclid(BRICK_SAMPLES) + 1;
        for x in bx {
            for z in b.min.z.div_euclid(BRICK_SAMPLES) - 1..=b.max.z.div_euclid(BRICK_SAMPLES) + 1 {
                self.columns.remove(&(x, z));
                self.dirty_columns.insert((x, z));
            }
        }
    }

    /// One frame: takes in finished jobs, follows the viewers (loading and dropping chunks),
    /// and turns the ops applied since the last update into one batch whose chunks go to the
    /// front of the queue.
    pub fn update(&mut self, viewers: &[Viewer]) {
        let now = Instant::now();
        self.rec.started.get_or_insert(now);
        self.drain();
        let vs = self.field.settings().voxel_size;
        let chunks: Vec<[i32; 3]> = viewers.iter().filter_map(|v| v.chunk(vs)).collect();
        if self.viewers.as_ref() != Some(&chunks) {
            self.viewers = Some(chunks);
            self.restream = true;
        }
        let size = f64::from(CHUNK_CELLS) * vs;
        if self.restream {
            self.lod.viewers = viewers.iter().map(|v| v.position).collect();
        }
        let positions: Vec<[f64; 3]> = viewers
            .iter()
            .map(|v| v.position.map(|p| p / size))
            .collect();
        self.cache.set_viewers(positions.clone());
        self.pool.set_viewers(positions);
        // Edits first, so their jobs start before the streaming bookkeeping. Ops of earlier
        // frames still waiting for an older edit's builds join this frame's.
        let frame = match (self.deferred.take(), self.frame_edit.take()) {
            (Some(mut older), Some(newer)) => {
                older.keys.extend(newer.keys);
                older.times.extend(newer.times);
                Some(older)
            }
            (older, newer) => older.or(newer),
        };
        if let Some(frame) = frame {
            self.seal(frame, now);
        }
        let threads = self.settings.worker_count();
        self.field
            .pack_hot_with(DEFAULT_HOT_BRICKS, |bricks| pack_bricks(bricks, threads));
        if self.restream && self.lod.settings.is_some() {
            self.restream_lod(now);
        } else if self.restream {
            self.restream();
        } else if !self.dirty_columns.is_empty() {
            self.restream_columns();
        }
        let depth = self.pool.queued();
        self.rec.queue_depth_max = self.rec.queue_depth_max.max(depth);
        // No worker threads: this frame's share of the jobs, edited chunks first, so an
        // edit whose chunks fit the budget is ready to pull now.
        if let Some(budget) = self.settings.main_thread {
            self.pool.build_here(budget);
            self.drain();
        }
        self.check_initial_load();
    }

    /// Changes the time each [`World::update`] builds jobs for, in a world without worker
    /// threads ([`WorldSettings::main_thread`]): a page whose frames are slow (a software
    /// renderer) can build more in each, and less again when they are fast.
    ///
    /// # Errors
    /// [`WorldError::OutOfRange`] (`main_thread`) for a budget outside [0.1 ms, 1 s], or for
    /// a world with worker threads (value 0: it has no budget to change); the world is
    /// unchanged.
    pub fn set_main_thread_budget(&mut self, budget: Duration) -> Result<(), crate::WorldError> {
        if self.settings.main_thread.is_none() {
            return Err(crate::WorldError::OutOfRange {
                name: "main_thread",
                value: 0,
                range: "a world without worker threads",
            });
        }
        let mut settings = self.settings;
        settings.main_thread = Some(budget);
        settings.validate()?;
        self.settings.main_thread = Some(budget);
        Ok(())
    }

    /// Switches the mesher: every chunk with a surface is rebuilt, all in one batch (with the
    /// batches still pending merged into it), so the view keeps its old meshes until every
    /// new one is built and then shows them in one frame: meshes of two meshers never meet at
    /// a seam (they do not weld).
    pub fn set_mesher(&mut self, mesher: Mesher) {
        if mesher == self.settings.mesher {
            return;
        }
        let before = self.settings.mesher;
        self.settings.mesher = mesher;
        if self.lod.settings.is_some() {
            if crate::lod::lod_mesher(before) == crate::lod::lod_mesher(mesher) {
                // MC33 and Marching Cubes draw the same across levels (Transvoxel).
                return;
            }
            // The seams each chunk depends on change with the mesher.
            for (&key, c) in self.chunks.iter_mut() {
                let all = crate::lod::level_neighbours(&self.lod.view, key);
                c.levels = crate::lod::seams_of(mesher, all);
            }
        }
        let id = self.new_batch(BatchKind::Rebuild);
        let pending: BTreeSet<u64> = self.chunks.values().filter_map(|c| c.batch).collect();
        let mut edits = Vec::new();
        for b in pending {
            if self.batches[&b].kind == BatchKind::Edit {
                self.batches.get_mut(&id).expect("new").kind = BatchKind::Edit;
            }
            self.merge(b, id, &mut edits);
        }
        let keys: Vec<LodKey> = self.chunks.keys().copied().collect();
        for key in keys {
            let c = &self.chunks[&key];
            // Never built: known all air or all solid, empty under every mesher.
            if c.batch.is_some() || c.shown {
                self.bump(key, id);
            }
        }
        self.close_batch(id, edits, Instant::now());
    }

    /// Gives new batch `id` the edits of the batches merged into it (sorted) once its chunks
    /// are bumped: dropped when it holds nothing, complete at `now` when every chunk it holds
    /// is built already (taken over from a merged batch).
    fn close_batch(&mut self, id: u64, mut edits: Vec<Instant>, now: Instant) {
        edits.sort();
        let batch = self.batches.get_mut(&id).expect("new");
        batch.edits = edits;
        if batch.waiting.is_empty() && batch.ready.is_empty() && batch.removed.is_empty() {
            self.batches.remove(&id);
        } else if batch.waiting.is_empty() {
            self.complete(id, now);
        }
    }

    /// Blocks until every loaded chunk's current version is built (and the batches are ready
    /// to pull), or `timeout` passes; returns whether it got there. Call after
    /// [`World::update`]. With [`WorldSettings::main_thread`] it builds the jobs itself.
    pub fn wait_idle(&mut self, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        loop {
            self.drain();
            if self.waiting() == 0 {
                // Ops waiting for an older edit's builds: those are done now.
                if let Some(frame) = self.deferred.take() {
                    self.seal(frame, Instant::now());
                    continue;
                }
                self.check_initial_load();
                return true;
            }
            let left = end.saturating_duration_since(Instant::now());
            if self.settings.main_thread.is_some() {
                // The jobs are built here: as many as the time left allows.
                if left.is_zero() || self.pool.build_here(left) == 0 {
                    return false;
                }
                continue;
            }
            match self.pool.results().recv_timeout(left) {
                Ok(r) => self.on_result(r),
                Err(_) => return false,
            }
        }
    }

    fn check_initial_load(&mut self) {
        if self.rec.initial_load_s.is_none()
            && !self.restream
            && !self.chunks.is_empty()
            && self.waiting() == 0
            && let Some(start) = self.rec.started
        {
            let end = self.rec.last_built.unwrap_or(start).max(start);
            self.rec.initial_load_s = Some((end - start).as_secs_f64());
        }
    }

    fn drain(&mut self) {
        while let Ok(r) = self.pool.results().try_recv() {
            self.on_result(r);
        }
    }

    fn on_result(&mut self, r: JobResult) {
        self.rec.chunks_built += 1;
        record(&mut self.rec.mesh_ms, r.mesh_s * 1e3);
        let current = self
            .chunks
            .get(&r.key)
            .filter(|c| c.version == r.version)
            .and_then(|c| c.batch);
        let Some(id) = current else {
            self.rec.stale_dropped += 1;
            return;
        };
        let batch = self.batches.get_mut(&id).expect("a chunk's batch exists");
        if !batch.waiting.remove(&r.key) {
            self.rec.stale_dropped += 1;
            return;
        }
        let vs = self.field.settings().voxel_size;
        let origin = r.key.origin(vs);
        batch.ready.insert(
            r.key,
            ChunkMesh {
                key: r.key.chunk(),
                level: r.key.level,
                version: r.version,
                origin,
                mesher: r.mesher,
                mesh: Arc::new(r.mesh),
                colors: r.colors.into(),
            },
        );
        self.rec.last_built = Some(
            self.rec
                .last_built
                .map_or(r.finished, |t| t.max(r.finished)),
        );
        if batch.waiting.is_empty() {
            self.complete(id, r.finished);
        }
    }

    fn complete(&mut self, id: u64, at: Instant) {
        let batch = self.batches.get_mut(&id).expect("batch");
        let first = batch.completed_once.is_none();
        batch.complete = Some(at);
        batch.completed_once.get_or_insert(at);
        for &t in batch.edits.iter().filter(|_| first) {
            record(
                &mut self.rec.edit_latency_ms,
                at.saturating_duration_since(t).as_secs_f64() * 1e3,
            );
        }
        self.outbox.push_back(Out::Batch(id));
    }

    fn new_batch(&mut self, kind: BatchKind) -> u64 {
        let id = self.next_batch;
        self.next_batch += 1;
        self.batches.insert(id, Batch::new(kind));
        id
    }

    /// Gives the chunk a new version and a job, waiting in batch `target` (its own batch or,
    /// if it has none, a new one).
    fn bump(&mut self, key: LodKey, target: u64) {
        let version = self.next_version;
        self.next_version += 1;
        let c = self.chunks.get_mut(&key).expect("loaded");
        debug_assert!(c.batch.is_none() || c.batch == Some(target));
        c.version = version;
        c.batch = Some(target);
        let lod = self.lod.settings.map(|_| c.levels);
        let batch = self.batches.get_mut(&target).expect("batch");
        if batch.ready.remove(&key).is_some() {
            self.rec.stale_dropped += 1;
        }
        batch.waiting.insert(key);
        batch.complete = None;
        let rank = (batch.kind == BatchKind::Edit).then_some(target);
        let job = Job {
            version,
            rank,
            field: self.field.clone(),
            mesher: self.settings.mesher,
            lod,
            colors: self.vertex_colors.clone(),
        };
        if self.pool.push(key, job) {
            self.rec.jobs_superseded += 1;
        }
    }

    /// Takes `key` out of its batch; a batch left with nothing to wait for is complete, one
    /// left with nothing at all is gone.
    fn release(&mut self, key: LodKey, now: Instant) -> Vec<Instant> {
        let Some(c) = self.chunks.get_mut(&key) else {
            return Vec::new();
        };
        let Some(id) = c.batch.take() else {
            return Vec::new();
        };
        let batch = self.batches.get_mut(&id).expect("batch");
        let was_waiting = batch.waiting.remove(&key);
        if batch.ready.remove(&key).is_some() {
            self.rec.stale_dropped += 1;
        }
        if batch.kind == BatchKind::Edit {
            self.rec.batches_released += 1;
        }
        if batch.ready.is_empty() && batch.waiting.is_empty() && batch.removed.is_empty() {
            // Nothing left to show: its ops' changes are shown by whoever took its chunks.
            return self
                .batches
                .remove(&id)
                .map(|b| b.edits)
                .unwrap_or_default();
        }
        if was_waiting && batch.waiting.is_empty() {
            self.complete(id, now);
        }
        Vec::new()
    }

    /// Turns the ops of one frame into one batch of every loaded chunk they changed.
    ///
    /// Where an older edit's batch not yet pulled holds some of those chunks:
    /// - built: it is frozen ([`Batch::frozen`]) and handed over as it is, before the new
    ///   batch, which builds the chunks again. A stroke shows each step it finished.
    /// - still building: the ops wait (kept for the next update, or [`World::wait_idle`])
    ///   until it is built, so a newer op never takes over its chunks and a stroke of one op
    ///   per frame is not shown only at its end; after waiting
    ///   [`WorldSettings::merge_window`](crate::WorldSettings::merge_window) they merge with
    ///   it instead (shown together), so no edit waits on a slow one for long.
    ///
    /// Either way no edit batch gives a chunk up to a newer edit: no crack between them.
    fn seal(&mut self, frame: FrameEdit, now: Instant) {
        // Loaded chunks, and chunks now in view that were not loaded (a tower rising into air).
        let viewers = self.viewers.clone().unwrap_or_default();
        let mut targets = Vec::new();
        for &key in &frame.keys {
            if !self.chunks.contains_key(&key) {
                if self.lod.settings.is_some() {
                    // Every chunk in view is loaded: this one is out of view.
                    continue;
                }
                let column = (key.x, key.z);
                let want = wanted_in_column(
                    &self.field,
                    &self.settings,
                    &viewers,
                    &mut self.columns,
                    column,
                );
                if !want.contains(&key.chunk()) {
                    continue;
                }
                self.chunks
                    .insert(key, Chunk::new(LevelNeighbours::default()));
            }
            targets.push(key);
        }
        let older: BTreeSet<u64> = targets
            .iter()
            .filter_map(|k| self.chunks[k].batch)
            .collect();
        let waited = frame
            .times
            .iter()
            .min()
            .map_or(Duration::ZERO, |t| now.saturating_duration_since(*t));
        let building_edit = older.iter().any(|id| {
            let b = &self.batches[id];
            b.kind == BatchKind::Edit && !b.waiting.is_empty()
        });
        if building_edit && waited <= self.settings.merge_window {
            self.rec.edits_deferred += 1;
            self.deferred = Some(frame);
            return;
        }
        let id = self.new_batch(BatchKind::Edit);
        let mut edits = frame.times;
        for old in older {
            let b = &self.batches[&old];
            if b.kind == BatchKind::Edit && b.waiting.is_empty() {
                self.freeze(old);
                continue;
            }
            // With level of detail a pending view change is merged too, whatever its age, so
            // its level change and transition faces show together with the edit (giving a
            // chunk up would show the view change with a hole or a crack where it was), unless
            // it only adds chunks where nothing is shown (see `restream_lod`).
            let view_change = self.lod.settings.is_some()
                && (!b.removed.is_empty()
                    || (b.kind == BatchKind::Stream
                        && targets.iter().any(|k| {
                            let c = &self.chunks[k];
                            c.batch == Some(old) && c.shown
                        })));
            if b.kind == BatchKind::Edit || view_change {
                self.merge(old, id, &mut edits);
            }
        }
        for &key in &targets {
            if self.chunks[&key].batch != Some(id) {
                edits.extend(self.release(key, now));
            }
        }
        edits.sort();
        self.batches.get_mut(&id).expect("new").edits = edits;
        for key in targets {
            self.bump(key, id);
        }
        if self.batches[&id].waiting.is_empty() && self.batches[&id].ready.is_empty() {
            // Every chunk it changed is out of view: nothing to show.
            self.batches.remove(&id);
        }
    }

    /// Hands built edit batch `id` over as it is: its chunks count as shown (it is pulled
    /// before anything that follows it) and belong to no batch, free for a newer edit.
    fn freeze(&mut self, id: u64) {
        let batch = self.batches.get_mut(&id).expect("batch");
        debug_assert!(batch.waiting.is_empty() && batch.complete.is_some());
        batch.frozen = true;
        for key in batch.ready.keys() {
            let c = self.chunks.get_mut(key).expect("a ready chunk is loaded");
            c.batch = None;
            c.shown = true;
        }
    }

    /// Moves batch `old` (still being built or not yet pulled) into `new`.
    fn merge(&mut self, old: u64, new: u64, edits: &mut Vec<Instant>) {
        let b = self.batches.remove(&old).expect("batch");
        edits.extend(b.edits);
        for &key in b.waiting.iter().chain(b.ready.keys()) {
            self.chunks.get_mut(&key).expect("loaded").batch = Some(new);
        }
        for &key in &b.waiting {
            self.pool.set_rank(key, Some(new));
        }
        let n = self.batches.get_mut(&new).expect("batch");
        n.waiting.extend(b.waiting);
        n.ready.extend(b.ready);
        n.removed.extend(b.removed);
    }
}

impl std::fmt::Debug for World {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("World")
            .field("settings", &self.settings)
            .field("chunks", &self.chunks.len())
            .field("batches", &self.batches.len())
            .finish_non_exhaustive()
    }
}

/// How long [`World::wait_idle`] callers usually allow: long enough for a cold load on a slow
/// machine.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(120);
