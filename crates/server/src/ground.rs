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
//! with a snapshot of the bricks they read ([`Field::snapshot_of`]: shared bricks, which a
//! later edit copies when it changes them, so only those) to this thread and goes on with
//! the ops; what comes back is checked against the field as it is by
//! then (`lumps.rs`, `colliders.rs`) before anything is ordered from it. At most one search,
//! one build of missing colliders and one refresh are under way at a time.
//!
//! Both read the field through the worker's own [`GeneratorBrickCache`] of
//! [`GROUND_CACHE_BRICKS`]: the same places are searched and rebuilt again and again, and
//! much of a fill is the generator's noise where nothing was edited (an unedited chunk's
//! collider builds in 1.95 ms instead of 3.0). What it did is counted in [`GroundWork`].
//!
//! The worker takes at most a fifth of a core: after a job of `d` it rests `4d`
//! ([`DUTY_FACTOR`]; it runs under `SCHED_IDLE` as well, in the time the CPUs would idle,
//! `crate::process::lower_thread_priority`).
//! Collider jobs are of two kinds ([`loam_session::TerrainColliders::next_builds`]): *missing*
//! chunks, which falling pieces wait for, go as soon as the worker may start a job;
//! *refreshes* of chunks that have a collider and changed since are paced more slowly
//! ([`REFRESH_FACTOR`]) and wait behind searches and missing chunks:
//!
//! ```text
//!  job of d ends ──▶ next job: not before d · DUTY_FACTOR
//!  refresh of d ends ──▶ next refresh: not before d · REFRESH_FACTOR
//!  jobs waiting ──▶ the first (in order of arrival) whose time has come
//! ```
//!
//! Under the load benchmark (64 clients × 313 ops/s, lumps on, BENCHMARKS.md's 2-core
//! machine) the worker is never idle, so these caps are what it takes:
//! - uncapped it used 70 % of one core, and the round trip's p99 was 16–22 ms;
//! - at a third of a core (rests of `2d`, no refreshes apart), 3.9 s of work per 10 s run,
//!   lumps found for 37–69 of the server's ops per run;
//! - now, 2.4 s per run for 30–69 (BENCHMARKS.md, multiplayer, 2026-12-03 third section).
//!
//! Under such load lumps fall later (about half a second after the dig) and fewer (digs
//! take more of them away before the search comes to them); the ops go first.
//!
//! A rest for a job's wall-clock time (which a starved worker stretches) is at most
//! [`MAX_REST`], though never below the factor times its CPU time; and a collider job that
//! has been with the worker for [`RESCUE_AFTER`] is taken over by the ordering thread a
//! chunk at a time: the worker's `SCHED_IDLE` gets almost no
//! CPU on a machine whose cores other processes keep busy, and pieces must not hang in the
//! air there. (Lump searches are not taken over: the lumps fall late.)

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use loam_blocks::{Island, IslandSettings, field_collider_cached, find_islands_cached};
use loam_field::{Field, GeneratorBrickCache, SampleBox};
use loam_physics::TerrainShape;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// After a job of `d`, the worker rests `DUTY_FACTOR · d`: it takes at most a fifth of a
/// core, whatever the load.
const DUTY_FACTOR: u32 = 4;

/// After a refresh (a collider job of changed chunks only, none missing) of `d`, the next
/// refresh waits `REFRESH_FACTOR · d`: refreshes take at most a ninth of a core, and lump
/// searches and missing colliders go between them.
const REFRESH_FACTOR: u32 = 8;

/// The longest rest after one job for its wall-clock time. A job's time is measured on the
/// wall clock (under load a job that waited for a CPU makes the worker back off more), so a
/// job that waited long would otherwise make the worker rest longer still: starved of CPU
/// by a busy machine, it fell further behind with every job. The rest is never shorter than
/// the factor times the job's time on a CPU, so the worker's share of a core holds.
const MAX_REST: Duration = Duration::from_millis(500);

/// A collider job (missing chunks or a refresh) with the worker this long is taken over by
/// the ordering thread, a chunk at a time ([`loam_session::TerrainColliders::rescue`]). The
/// worker runs under `SCHED_IDLE`, which gets a CPU only when no ordinary thread wants one:
/// on a machine whose cores another process keeps busy it made almost no progress, and the
/// pieces whose ground was dug away hung in the air (two busy loops on the 2-core machine:
/// a tower over a hole dug for 10 s never fell). Under the load benchmark the jobs come
/// back within a fraction of this.
pub(crate) const RESCUE_AFTER: Duration = Duration::from_secs(2);

/// Bricks of generator values the worker keeps (128 KiB each: 16 MiB), the bricks of about
/// as many collider chunks or a few dozen dig sites.
pub(crate) const GROUND_CACHE_BRICKS: usize = 128;

/// What the ground worker did since the server started ([`super::ServerStatus::ground`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GroundWork {
    /// Lump searches done (each over one or more merged digs).
    pub searches: u64,
    /// Terrain colliders built (chunks)…
    pub colliders: u64,
    /// …of them in refreshes (chunks that had a collider and changed since).
    pub refreshed: u64,
    /// Time spent on them, microseconds (the worker rests four times as long again).
    pub busy_us: u64,
    /// Unedited bricks read from the worker's generator cache…
    pub cache_hits: u64,
    /// …and generated whole and kept.
    pub cache_misses: u64,
    /// Terrain colliders the ordering thread built itself because a collider job had been
    /// with the worker for `RESCUE_AFTER` (2 s) (a worker starved of CPU; not the worker's).
    pub rescued: u64,
}

/// [`GroundWork`], counted by the worker and read by the ordering thread.
#[derive(Debug, Default)]
struct Counters {
    searches: AtomicU64,
    colliders: AtomicU64,
    refreshed: AtomicU64,
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
    /// Build the colliders of `keys` from a field of stamp `at` ([`loam_session::TerrainColliders`]).
    Colliders {
        field: Field,
        at: u64,
        keys: Vec<[i32; 3]>,
        /// Every chunk has a collider already (changed since): paced by
        /// [`REFRESH_FACTOR`], behind searches and missing colliders.
        refresh: bool,
    },
}

impl Job {
    fn is_refresh(&self) -> bool {
        matches!(self, Job::Colliders { refresh: true, .. })
    }
}

/// When the worker may start its next job: [`DUTY_FACTOR`] after any job, and
/// [`REFRESH_FACTOR`] after a refresh for the next refresh.
#[derive(Debug, Default)]
struct Pace {
    free_at: Option<Instant>,
    refresh_at: Option<Instant>,
}

impl Pace {
    /// The earliest `job` may start (`None`: now).
    fn start_at(&self, job: &Job) -> Option<Instant> {
        if job.is_refresh() {
            self.free_at.max(self.refresh_at)
        } else {
            self.free_at
        }
    }

    /// A job (a refresh or not) ended at `end` after `took` on the wall clock, `cpu` of it
    /// on a CPU. A rest is the factor times the wall clock's time, but at most [`MAX_REST`]
    /// (a starved worker's wall-clock time is mostly waiting), and never less than the
    /// factor times the CPU time (the share of a core holds whatever the wait).
    fn ended(&mut self, refresh: bool, end: Instant, took: Duration, cpu: Duration) {
        let rest = |factor: u32| (took * factor).min(MAX_REST).max(cpu * factor);
        self.free_at = Some(end + rest(DUTY_FACTOR));
        if refresh {
            self.refresh_at = Some(end + rest(REFRESH_FACTOR));
        }
    }
}

/// What the ground worker did.
pub(crate) enum Done {
    /// The islands found in the snapshot, box by box in the order given (the same island
    /// may be found from two boxes).
    Islands(Vec<Island>),
    /// The colliders built from the field of stamp `at`, key by key as asked, and whether
    /// the job was a refresh.
    Colliders {
        at: u64,
        built: Vec<([i32; 3], Option<TerrainShape>)>,
        refresh: bool,
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
        Job::Colliders {
            field,
            at,
            keys,
            refresh,
        } => Done::Colliders {
            at,
            refresh,
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
    /// When the collider job under way other than a refresh was handed over, if one is…
    building_since: Option<Instant>,
    /// …and the refresh (waiting for its turn, or under way).
    refreshing_since: Option<Instant>,
    /// Chunks the ordering thread built for a starved worker ([`GroundWork::rescued`]).
    pub(crate) rescued: u64,
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
            .name("loam-server-ground".into())
            .spawn(move || {
                crate::process::lower_thread_priority();
                worker(&rx, &tx, &theirs);
            })?;
        Ok(Self {
            jobs,
            done,
            searching: 0,
            building_since: None,
            refreshing_since: None,
            rescued: 0,
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
            refreshed: c.refreshed.load(Relaxed),
            busy_us: c.busy_us.load(Relaxed),
            cache_hits: c.cache_hits.load(Relaxed),
            cache_misses: c.cache_misses.load(Relaxed),
            rescued: self.rescued,
        }
    }

    /// Hands `job` to the worker; gives it back if the worker is gone (it panicked).
    pub(crate) fn send(&mut self, job: Job) -> Result<(), Box<Job>> {
        let (searching, refresh) = match &job {
            Job::Islands { boxes, .. } => (Some(boxes.len().max(1)), false),
            Job::Colliders { refresh, .. } => (None, *refresh),
        };
        self.jobs.send(job).map_err(|e| Box::new(e.0))?;
        match searching {
            Some(n) => self.searching = n,
            None if refresh => self.refreshing_since = Some(Instant::now()),
            None => self.building_since = Some(Instant::now()),
        }
        Ok(())
    }

    /// The worker's collider job (a refresh or not) came back, or was given up.
    pub(crate) fn collider_job_ended(&mut self, refresh: bool) {
        if refresh {
            self.refreshing_since = None;
        } else {
            self.building_since = None;
        }
    }

    /// Whether a collider job other than a refresh is under way.
    pub(crate) fn building(&self) -> bool {
        self.building_since.is_some()
    }

    /// Whether a refresh is (waiting for its turn, or under way).
    pub(crate) fn refreshing(&self) -> bool {
        self.refreshing_since.is_some()
    }

    /// Whether a collider job has been with the worker for `after` or longer at `now`.
    pub(crate) fn starved(&self, now: Instant, after: Duration) -> bool {
        [self.building_since, self.refreshing_since]
            .into_iter()
            .flatten()
            .any(|t| now.saturating_duration_since(t) >= after)
    }
}

fn worker(jobs: &std_mpsc::Receiver<Job>, done: &UnboundedSender<Done>, counters: &Counters) {
    use std::sync::mpsc::RecvTimeoutError;
    let mut cache = GeneratorBrickCache::new(GROUND_CACHE_BRICKS);
    let mut pace = Pace::default();
    // At most one search, one build of missing colliders and one refresh wait here.
    let mut queue: Vec<Job> = Vec::new();
    loop {
        queue.extend(jobs.try_iter());
        let now = Instant::now();
        let Some(i) = queue
            .iter()
            .position(|j| pace.start_at(j).is_none_or(|t| t <= now))
        else {
            // Nothing may start yet: wait for its time or for a new job.
            let next = queue.iter().filter_map(|j| pace.start_at(j)).min();
            let job = match next {
                Some(t) => match jobs.recv_timeout(t.saturating_duration_since(now)) {
                    Ok(job) => job,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => return,
                },
                None => match jobs.recv() {
                    Ok(job) => job,
                    Err(_) => return,
                },
            };
            queue.push(job);
            continue;
        };
        let job = queue.remove(i);
        let refresh = job.is_refresh();
        let start = Instant::now();
        let cpu_start = crate::process::thread_cpu_time();
        // The snapshot is dropped inside `run`, before the ordering thread hears of it.
        let result = run(job, &mut cache);
        let end = Instant::now();
        let took = end - start;
        // Without a CPU clock the wall-clock rest alone (capped) paces the worker.
        let cpu = match (cpu_start, crate::process::thread_cpu_time()) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => Duration::ZERO,
        };
        match &result {
            Done::Islands(_) => counters.searches.fetch_add(1, Relaxed),
            Done::Colliders { built, refresh, .. } => {
                let n = built.len() as u64;
                if *refresh {
                    counters.refreshed.fetch_add(n, Relaxed);
                }
                counters.colliders.fetch_add(n, Relaxed)
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
        pace.ended(refresh, end, took, cpu);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(refresh: bool) -> Job {
        let g = loam_field::Generator::noise(&Default::default(), &Default::default()).unwrap();
        let field = Field::new(Default::default(), Arc::new(g)).unwrap();
        Job::Colliders {
            field,
            at: 0,
            keys: Vec::new(),
            refresh,
        }
    }

    #[test]
    fn refreshes_wait_longer_than_other_jobs() {
        let (urgent, refresh) = (job(false), job(true));
        let mut pace = Pace::default();
        assert_eq!(
            (pace.start_at(&urgent), pace.start_at(&refresh)),
            (None, None)
        );
        let t = Instant::now();
        let ms = |n: u32| Duration::from_millis(u64::from(n));
        let (duty, slow) = (DUTY_FACTOR, REFRESH_FACTOR);
        assert!(slow > duty);
        // A missing collider's build of 10 ms: everything rests 10 · DUTY_FACTOR.
        pace.ended(false, t, ms(10), ms(10));
        assert_eq!(pace.start_at(&urgent), Some(t + ms(10 * duty)));
        assert_eq!(pace.start_at(&refresh), Some(t + ms(10 * duty)));
        // A refresh of 10 ms ending at 100: the next refresh waits 10 · REFRESH_FACTOR,
        // anything else 10 · DUTY_FACTOR.
        pace.ended(true, t + ms(100), ms(10), ms(10));
        assert_eq!(pace.start_at(&urgent), Some(t + ms(100 + 10 * duty)));
        assert_eq!(pace.start_at(&refresh), Some(t + ms(100 + 10 * slow)));
        // A search of 1 ms after it does not shorten the refresh's wait…
        pace.ended(false, t + ms(100 + 10 * duty), ms(1), ms(1));
        assert_eq!(pace.start_at(&refresh), Some(t + ms(100 + 10 * slow)));
        // …and a long one lengthens it to its own rest.
        pace.ended(false, t + ms(200), ms(50), ms(50));
        assert_eq!(pace.start_at(&urgent), Some(t + ms(200 + 50 * duty)));
        assert_eq!(pace.start_at(&refresh), Some(t + ms(200 + 50 * duty)));
        // A job that took a second of wall clock, 10 ms of it on a CPU (it waited for one):
        // the rests are capped…
        pace.ended(true, t + ms(2000), ms(1000), ms(10));
        assert_eq!(pace.start_at(&urgent), Some(t + ms(2000) + MAX_REST));
        assert_eq!(pace.start_at(&refresh), Some(t + ms(2000) + MAX_REST));
        // …but not below the factors times the CPU time: a second on a CPU rests 4 s.
        pace.ended(true, t + ms(3000), ms(1000), ms(1000));
        assert_eq!(pace.start_at(&urgent), Some(t + ms(3000 + 1000 * duty)));
        assert_eq!(pace.start_at(&refresh), Some(t + ms(3000 + 1000 * slow)));
    }

    /// A collider job is starved once the worker has held it for the given time; its end
    /// (or a refresh's, for a refresh) clears it.
    #[test]
    fn a_collider_job_held_too_long_is_starved() {
        let mut ground = Ground::start().unwrap();
        let t = Instant::now();
        assert!(!ground.starved(t + RESCUE_AFTER * 10, RESCUE_AFTER));
        ground.send(job(false)).ok().unwrap();
        ground.send(job(true)).ok().unwrap();
        let after = Instant::now() + RESCUE_AFTER;
        assert!(!ground.starved(t, RESCUE_AFTER));
        assert!(ground.starved(after, RESCUE_AFTER));
        ground.collider_job_ended(false);
        assert!(
            ground.starved(after, RESCUE_AFTER),
            "the refresh is still held"
        );
        ground.collider_job_ended(true);
        assert!(!ground.starved(after, RESCUE_AFTER));
        assert!(!ground.building() && !ground.refreshing());
    }
}
