//! The ground worker: the field work of the block game, on snapshots of the field, beside
//! the ordering of ops.
//!
//! Two kinds of work read the field around digs and pieces and change nothing:
//! - the **search for lumps** a dig cut loose ([`find_islands`]: one fill of the dig's box
//!   grown by 12 samples, the generator's values where nothing was edited, and a search of
//!   its solid samples), and
//! - **terrain colliders** ([`field_collider`]: a chunk's samples meshed with Surface Nets
//!   and built into a trimesh, a few milliseconds a chunk).
//!
//! On the ordering thread they held every op behind them: at 64 clients × 313 ops/s with
//! lumps on, a profile of that thread showed 44 % of its time in `find_islands` and 23 % in
//! collider builds, and the round trip's p50 was 35 ms. Now the ordering thread hands them
//! with a clone of the field (shared bricks: a later edit copies what it changes) to this
//! thread and goes on with the ops; what comes back is checked against the field as it is by
//! then (`lumps.rs`, `colliders.rs`) before anything is ordered from it. One job of each kind
//! is under way at a time.
//!
//! Both read the field through the worker's own [`GeneratorBrickCache`] of
//! [`GROUND_CACHE_BRICKS`]: the same places are searched and rebuilt again and again, and
//! most of a fill is the generator's noise where nothing was edited (about half of the
//! worker's time without it). What it did is counted in [`GroundWork`].
//!
//! The worker takes at most a third of a core: after a job of `d` it rests `2d`
//! ([`DUTY_FACTOR`]; the hasher's turns are spaced the same way). Uncapped, at 64 clients ×
//! 313 ops/s with lumps on, it used 70 % of one of the two cores of BENCHMARKS.md's machine,
//! and though it ran at a lower priority (it still does: nice +10, `crate::process::lower_thread_priority`) the
//! round trip's p50 was 2.3–2.9 ms and its p99 16–22 ms; capped, p50 1.3–1.9 ms and p99
//! 7.7–15.7 ms (BENCHMARKS.md, multiplayer, 2026-12-03 later). Under such load lumps fall
//! later (about half a second after the dig) and fewer (digs take more of them away before
//! the search comes to them); the ops go first.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::mpsc as std_mpsc;
use std::time::Instant;

use loam_blocks::{Island, IslandSettings, field_collider_cached, find_islands_cached};
use loam_field::{Field, GeneratorBrickCache, SampleBox};
use loam_physics::TerrainShape;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// After a job of `d`, the worker rests `DUTY_FACTOR · d`: it takes at most a third of a
/// core, whatever the load.
const DUTY_FACTOR: u32 = 2;

/// Bricks of generator values the worker keeps (128 KiB each: 16 MiB), the bricks of about
/// as many collider chunks or a few dozen dig sites.
pub(crate) const GROUND_CACHE_BRICKS: usize = 128;

/// What the ground worker did since the server started ([`super::ServerStatus::ground`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GroundWork {
    /// Lump searches done (each over one or more merged digs).
    pub searches: u64,
    /// Terrain colliders built (chunks).
    pub colliders: u64,
    /// Time spent on them, microseconds (the worker rests twice as long again).
    pub busy_us: u64,
    /// Unedited bricks read from the worker's generator cache…
    pub cache_hits: u64,
    /// …and generated whole and kept.
    pub cache_misses: u64,
}

/// [`GroundWork`], counted by the worker and read by the ordering thread.
#[derive(Debug, Default)]
struct Counters {
    searches: AtomicU64,
    colliders: AtomicU64,
    busy_us: AtomicU64,
    cache_hits: AtomicU64,
    cache_misses: AtomicU64,
}

/// Work for the ground worker.
pub(crate) enum Job {
    /// Search for lumps around each changed box.
    Islands {
        field: Field,
        boxes: Vec<SampleBox>,
        settings: IslandSettings,
    },
    /// Build the colliders of `keys` from a field of stamp `at` ([`super::colliders`]).
    Colliders {
        field: Field,
        at: u64,
        keys: Vec<[i32; 3]>,
    },
}

/// What the ground worker did.
pub(crate) enum Done {
    /// The islands found in the snapshot, box by box in the order given (the same island
    /// may be found from two boxes).
    Islands(Vec<Island>),
    /// The colliders built from the field of stamp `at`, key by key as asked.
    Colliders {
        at: u64,
        built: Vec<([i32; 3], Option<TerrainShape>)>,
    },
}

/// Does one job (on whichever thread calls it), reading the field through `cache`.
pub(crate) fn run(job: Job, cache: &mut GeneratorBrickCache) -> Done {
    match job {
        Job::Islands {
            field,
            boxes,
            settings,
        } => {
            let mut found = Vec::new();
            for b in boxes {
                // Only bad settings fail, and the server checked them at start.
                if let Ok(s) = find_islands_cached(&field, b, &settings, cache) {
                    found.extend(s.islands);
                }
            }
            Done::Islands(found)
        }
        Job::Colliders { field, at, keys } => Done::Colliders {
            at,
            built: keys
                .into_iter()
                .map(|k| (k, field_collider_cached(&field, k, cache)))
                .collect(),
        },
    }
}

/// Does one job on the ordering thread (the worker is gone), without a generator cache.
pub(crate) fn run_here(job: Job) -> Done {
    run(job, &mut GeneratorBrickCache::new(0))
}

/// The ground worker's ends: jobs in, results out, and what is under way.
pub(crate) struct Ground {
    jobs: std_mpsc::Sender<Job>,
    pub(crate) done: UnboundedReceiver<Done>,
    /// Changed boxes the search under way covers (0: none under way).
    pub(crate) searching: usize,
    /// Whether a collider build is under way.
    pub(crate) building: bool,
    /// Whether the worker runs (else its jobs are done on the ordering thread).
    pub(crate) alive: bool,
    counters: Arc<Counters>,
}

impl Ground {
    /// Starts the worker thread; it ends when the `Ground` is dropped (after the job it is
    /// doing, if any).
    ///
    /// # Errors
    /// The thread could not be started.
    pub(crate) fn start() -> std::io::Result<Self> {
        let (jobs, rx) = std_mpsc::channel::<Job>();
        let (tx, done) = unbounded_channel();
        let counters = Arc::new(Counters::default());
        let theirs = Arc::clone(&counters);
        std::thread::Builder::new()
            .name("loam-net-ground".into())
            .spawn(move || {
                crate::process::lower_thread_priority();
                worker(&rx, &tx, &theirs);
            })?;
        Ok(Self {
            jobs,
            done,
            searching: 0,
            building: false,
            alive: true,
            counters,
        })
    }

    /// What the worker did so far.
    pub(crate) fn work(&self) -> GroundWork {
        let c = &self.counters;
        GroundWork {
            searches: c.searches.load(Relaxed),
            colliders: c.colliders.load(Relaxed),
            busy_us: c.busy_us.load(Relaxed),
            cache_hits: c.cache_hits.load(Relaxed),
            cache_misses: c.cache_misses.load(Relaxed),
        }
    }

    /// Hands `job` to the worker; gives it back if the worker is gone (it panicked).
    pub(crate) fn send(&mut self, job: Job) -> Result<(), Box<Job>> {
        let boxes = match &job {
            Job::Islands { boxes, .. } => Some(boxes.len()),
            Job::Colliders { .. } => None,
        };
        self.jobs.send(job).map_err(|e| Box::new(e.0))?;
        match boxes {
            Some(n) => self.searching = n.max(1),
            None => self.building = true,
        }
        Ok(())
    }
}

fn worker(jobs: &std_mpsc::Receiver<Job>, done: &UnboundedSender<Done>, counters: &Counters) {
    let mut cache = GeneratorBrickCache::new(GROUND_CACHE_BRICKS);
    while let Ok(job) = jobs.recv() {
        let start = Instant::now();
        // The snapshot is dropped inside `run`, before the ordering thread hears of it.
        let result = run(job, &mut cache);
        let took = start.elapsed();
        match &result {
            Done::Islands(_) => counters.searches.fetch_add(1, Relaxed),
            Done::Colliders { built, .. } => {
                counters.colliders.fetch_add(built.len() as u64, Relaxed)
            }
        };
        let (hits, misses) = cache.hits_and_misses();
        counters.cache_hits.store(hits, Relaxed);
        counters.cache_misses.store(misses, Relaxed);
        let us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        counters.busy_us.fetch_add(us, Relaxed);
        if done.send(result).is_err() {
            return;
        }
        std::thread::sleep(took * DUTY_FACTOR);
    }
}
