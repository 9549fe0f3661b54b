//! The worker pool: threads that take the most urgent chunk job from a shared queue, fill the
//! chunk's grid from the job's field snapshot and mesh it; or, with no threads (a browser
//! page), the same builds on the caller's thread, a time budget at a time
//! ([`Pool::build_here`]).

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crate::Instant;

use crossbeam_channel::{Receiver, Sender};
use loam_field::{BrickKey, CHUNK_CELLS, Field};
use loam_mesh::{CHUNK_HALO, Grid, MeshBuffer, Mesher};

use crate::cache::{GeneratorCache, brick_from_grid};
use crate::lod::{LodBuilder, LodKey};
use crate::settings::WorldError;

/// One chunk to build: the version it is for, the field snapshot it reads and the mesher.
pub(crate) struct Job {
    pub version: u64,
    /// `Some(batch id)` for a chunk an edit changed: built before any streaming job, older
    /// batches first.
    pub rank: Option<u64>,
    pub field: Field,
    pub mesher: Mesher,
    /// With level of detail: the levels of the chunk's neighbours its seams depend on
    /// (meshed by [`LodBuilder::build_with`]); `None`: a level-0 chunk meshed with `mesher`.
    pub lod: Option<loam_mesh::LevelNeighbours>,
    /// Per-vertex colours made on the worker ([`crate::World::set_vertex_colors`]).
    pub colors: Option<VertexColors>,
}

/// Per-vertex colours for a chunk's mesh, made on the worker that built it
/// ([`crate::World::set_vertex_colors`]): `(mesh, generator, origin, size)` → one RGBA colour
/// per vertex, with `origin` the chunk's lowest corner and `size` its edge, metres (the
/// mesh's positions are relative to `origin`).
pub type VertexColors = std::sync::Arc<
    dyn Fn(&MeshBuffer, &loam_field::Generator, [f64; 3], f64) -> Vec<[f32; 4]> + Send + Sync,
>;

/// A built chunk.
pub(crate) struct JobResult {
    pub key: LodKey,
    pub version: u64,
    /// The mesher that built `mesh`.
    pub mesher: Mesher,
    pub mesh: MeshBuffer,
    /// The job's [`VertexColors`] of `mesh` (empty without).
    pub colors: Vec<[f32; 4]>,
    pub mesh_s: f64,
    pub finished: Instant,
}

#[derive(Default)]
struct Queue {
    /// At most one job per chunk: a newer version replaces a queued older one.
    jobs: BTreeMap<LodKey, Job>,
    /// Viewer positions in chunk units, for nearest-first order.
    viewers: Vec<[f64; 3]>,
    shutdown: bool,
}

impl Queue {
    /// The most urgent job: edited chunks first (oldest batch first), then the chunk nearest to
    /// a viewer, then the lowest key.
    fn pop(&mut self) -> Option<(LodKey, Job)> {
        let dist = |k: &LodKey| {
            let s = f64::from(k.stride());
            let c = k.xyz().map(|v| (f64::from(v) + 0.5) * s);
            self.viewers
                .iter()
                .map(|v| (0..3).map(|i| (c[i] - v[i]) * (c[i] - v[i])).sum::<f64>())
                .fold(f64::INFINITY, f64::min)
        };
        let key = self
            .jobs
            .iter()
            .min_by(|(ka, a), (kb, b)| {
                let ra = (a.rank.is_none(), a.rank.unwrap_or(0));
                let rb = (b.rank.is_none(), b.rank.unwrap_or(0));
                ra.cmp(&rb)
                    .then_with(|| dist(ka).total_cmp(&dist(kb)))
                    .then_with(|| ka.cmp(kb))
            })
            .map(|(k, _)| *k)?;
        self.jobs.remove(&key).map(|j| (key, j))
    }
}

type Shared = Arc<(Mutex<Queue>, Condvar)>;

/// Worker threads and the queue they share.
pub(crate) struct Pool {
    shared: Shared,
    threads: Vec<JoinHandle<()>>,
    results: Receiver<JobResult>,
    /// Without threads: the builder that runs jobs on the caller's thread, and where its
    /// results go (the channel workers report on).
    here: Option<(Builder, Sender<JobResult>)>,
}

fn lock(shared: &Shared) -> MutexGuard<'_, Queue> {
    // A worker that panicked leaves the queue consistent (it holds no lock while building).
    shared.0.lock().unwrap_or_else(|e| e.into_inner())
}

impl Pool {
    /// Starts `threads` workers for a field of `voxel_size` metres; with 0, none: jobs are
    /// built by [`Pool::build_here`].
    pub fn new(
        threads: usize,
        voxel_size: f64,
        cache: Arc<GeneratorCache>,
    ) -> Result<Self, WorldError> {
        let shared: Shared = Arc::default();
        let (tx, results) = crossbeam_channel::unbounded();
        let mut pool = Self {
            shared,
            threads: Vec::new(),
            results,
            here: None,
        };
        if threads == 0 {
            pool.here = Some((Builder::new(cache, voxel_size as f32), tx));
            return Ok(pool);
        }
        for i in 0..threads {
            let (shared, tx, cache) = (pool.shared.clone(), tx.clone(), cache.clone());
            let handle = std::thread::Builder::new()
                .name(format!("loam-mesh-{i}"))
                .spawn(move || work(&shared, &tx, Builder::new(cache, voxel_size as f32)))
                .map_err(|e| WorldError::Thread(e.to_string()))?;
            pool.threads.push(handle);
        }
        Ok(pool)
    }

    /// Without worker threads: builds the most urgent queued jobs on this thread (edited
    /// chunks first, as the workers take them) while the next one is expected to end within
    /// `budget` (expected: the running mean of the last jobs' times), at least one if any is
    /// queued; their results are on [`Pool::results`]. Returns how many it built (0 with
    /// worker threads: they build).
    pub fn build_here(&mut self, budget: std::time::Duration) -> usize {
        let Some((builder, tx)) = self.here.as_mut() else {
            return 0;
        };
        let start = Instant::now();
        let budget = budget.as_secs_f64();
        let mut built = 0;
        while built == 0 || start.elapsed().as_secs_f64() + builder.expected_s <= budget {
            let Some((key, job)) = lock(&self.shared).pop() else {
                break;
            };
            let result = builder.build(key, job);
            // A mean over about the last eight jobs.
            builder.expected_s += (result.mesh_s - builder.expected_s) / 8.0;
            // The receiver is this pool's own: it cannot be gone.
            let _ = tx.send(result);
            built += 1;
        }
        built
    }

    /// Queues `job` for `key`, replacing a queued job of the same chunk; returns whether one
    /// was replaced (it will never be built).
    pub fn push(&self, key: LodKey, job: Job) -> bool {
        let replaced = lock(&self.shared).jobs.insert(key, job).is_some();
        self.shared.1.notify_one();
        replaced
    }

    /// Removes the queued job of `key`, if any (a job already running still reports back).
    pub fn cancel(&self, key: LodKey) -> bool {
        lock(&self.shared).jobs.remove(&key).is_some()
    }

    /// Moves the queued job of `key` into batch rank `rank`.
    pub fn set_rank(&self, key: LodKey, rank: Option<u64>) {
        if let Some(j) = lock(&self.shared).jobs.get_mut(&key) {
            j.rank = rank;
        }
    }

    /// Sets the viewer positions (chunk units) that order streaming jobs.
    pub fn set_viewers(&self, viewers: Vec<[f64; 3]>) {
        lock(&self.shared).viewers = viewers;
    }

    /// Jobs waiting for a worker.
    pub fn queued(&self) -> usize {
        lock(&self.shared).jobs.len()
    }

    /// The channel workers report on.
    pub fn results(&self) -> &Receiver<JobResult> {
        &self.results
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        {
            let mut q = lock(&self.shared);
            q.shutdown = true;
            q.jobs.clear();
        }
        self.shared.1.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn work(shared: &Shared, tx: &Sender<JobResult>, mut builder: Builder) {
    loop {
        let (key, job) = {
            let mut q = lock(shared);
            loop {
                if q.shutdown {
                    return;
                }
                if let Some(j) = q.pop() {
                    break j;
                }
                q = shared.1.wait(q).unwrap_or_else(|e| e.into_inner());
            }
        };
        if tx.send(builder.build(key, job)).is_err() {
            return;
        }
    }
}

/// What builds jobs: the grid and mesh buffers it reuses, and the generator cache it reads
/// and fills. One per worker thread, or one on the caller's thread.
struct Builder {
    cache: Arc<GeneratorCache>,
    voxel_size: f32,
    values: Vec<f32>,
    materials: Vec<u8>,
    buffer: MeshBuffer,
    lod: LodBuilder,
    /// Without threads: how long the next job is expected to take, seconds.
    expected_s: f64,
}

impl Builder {
    fn new(cache: Arc<GeneratorCache>, voxel_size: f32) -> Self {
        let side = CHUNK_CELLS as usize + 1 + 2 * CHUNK_HALO as usize;
        let n = side.pow(3);
        Self {
            cache,
            voxel_size,
            values: vec![0.0; n],
            materials: vec![0; n],
            buffer: MeshBuffer::default(),
            lod: LodBuilder::default(),
            expected_s: 0.0,
        }
    }

    /// Fills `key`'s grid from the job's field snapshot and meshes it.
    fn build(&mut self, key: LodKey, job: Job) -> JobResult {
        let side = CHUNK_CELLS as usize + 1 + 2 * CHUNK_HALO as usize;
        let start = Instant::now();
        let colors = |mesh: &MeshBuffer| {
            job.colors.as_ref().map_or_else(Vec::new, |f| {
                let vs = job.field.settings().voxel_size;
                let size = f64::from(CHUNK_CELLS) * vs * f64::from(key.stride());
                f(mesh, job.field.generator(), key.origin(vs), size)
            })
        };
        if let Some(levels) = job.lod {
            let (mesh, mesher) = self.lod.build_with(&job.field, key, job.mesher, levels);
            let mesh = mesh.detach();
            let colors = colors(&mesh);
            let finished = Instant::now();
            return JobResult {
                key,
                version: job.version,
                // MC33 is drawn by Marching Cubes across levels (Transvoxel's seams).
                mesher,
                mesh,
                colors,
                mesh_s: (finished - start).as_secs_f64(),
                finished,
            };
        }
        let (lod_key, key) = (key, key.chunk());
        let cache = &self.cache;
        let min = job.field.fill_chunk_with(
            key,
            CHUNK_HALO,
            &mut self.values,
            &mut self.materials,
            &|k| cache.get(k),
        );
        // The chunk's own brick (bricks and chunks are aligned), if unedited, is generator
        // output: keep it for the edits to come.
        let own = BrickKey::new(key.x, key.y, key.z);
        if job.field.brick(own).is_none() && !cache.contains(own) {
            cache.insert(
                own,
                brick_from_grid(&self.values, side, min.to_array(), own),
            );
        }
        job.mesher.mesh(
            &Grid::chunk(&self.values, &self.materials, CHUNK_HALO, self.voxel_size),
            &mut self.buffer,
        );
        let mesh = self.buffer.detach();
        let colors = colors(&mesh);
        let finished = Instant::now();
        JobResult {
            key: lod_key,
            version: job.version,
            mesher: job.mesher,
            mesh,
            colors,
            mesh_s: (finished - start).as_secs_f64(),
            finished,
        }
    }
}
