//! Where the server's time goes, op by op: the server's part of each round trip and the part
//! of it queued for the ordering thread, the ordering thread's work per op, the writer's
//! group commits and the wake-up that brings each one's report back, and the ordering
//! thread's other work that ops wait behind (the periodic tick, the physics steps, the bakes'
//! snapshots, the ground worker's results taken in), as histograms (HdrHistogram,
//! microseconds) that [`ServerStatus`](super::ServerStatus) reports as percentiles.
//!
//! A client's round trip is the server's part plus the network and the client itself; on a
//! machine that runs the clients too (the load benchmark on loopback), the difference is what
//! the clients' own work and the scheduling of both cost. Those are measured apart from the
//! server's part so that a long tail can be put where it is.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

/// Percentiles of one kind of server work, in milliseconds (HdrHistogram with three
/// significant digits: each figure within 0.1 % of the recorded value it stands for).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Percentiles {
    /// How many were recorded.
    pub count: u64,
    /// Median, ms.
    pub p50_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
    /// Longest, ms.
    pub max_ms: f64,
    /// Mean, ms.
    pub mean_ms: f64,
}

/// Where the server's time went since it started
/// ([`ServerStatus::latency`](super::ServerStatus::latency)).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ServerLatency {
    /// Each client op the server accepted (terrain or block), from its arrival (read off the
    /// connection, before it is decoded) to its release (acknowledged to its author and
    /// broadcast, after it was synced to disk): the server's part of the author's round trip.
    /// Ops the server made itself (lumps) are not counted, nor refused ones.
    pub ops: Percentiles,
    /// Each client op from its arrival to the moment the ordering thread takes it up: its
    /// decoding on the connection, then the wait in the command queue, behind other commands
    /// and the thread's other work, or for a CPU (refused ops included, and ops deferred
    /// behind a bake's drain).
    pub queued: Percentiles,
    /// The ordering thread's work to take one client op: validate, apply, number, and hand it
    /// on (refused ops included).
    pub apply: Percentiles,
    /// Each group commit of the writer: one transaction and one sync of the ops that queued
    /// up while the last one synced.
    pub appends: Percentiles,
    /// Ops (records) per group commit, mean.
    pub ops_per_append: f64,
    /// Each group commit from the writer's report (its sync done) to the ordering thread
    /// taking it, which releases the group: a wake-up across threads.
    pub acks: Percentiles,
    /// Each tick of the ordering thread (every 50 ms): lumps cut loose, the physics steps
    /// due worked out, sequence and presence messages. Ops that arrive meanwhile wait.
    pub ticks: Percentiles,
    /// Each physics step of the block world, with its events (run one at a time between
    /// commands, so an op waits for one step at most).
    pub steps: Percentiles,
    /// Each bake's snapshot on the ordering thread (the field, the history and the block
    /// world, for the writer to encode and write beside the next groups). Ops wait for it,
    /// and before it for every op in flight to be released.
    pub bakes: Percentiles,
    /// Each result of the ground worker taken in on the ordering thread: the lumps a search
    /// found (the server's ops that take them out of the field, the pieces that drop) or
    /// the terrain colliders it built (swapped into the physics world). Ops wait for it.
    pub ground: Percentiles,
}

/// The histograms of one window.
#[derive(Clone)]
struct Window {
    ops: Histogram<u64>,
    queued: Histogram<u64>,
    apply: Histogram<u64>,
    appends: Histogram<u64>,
    appended: u64,
    acks: Histogram<u64>,
    ticks: Histogram<u64>,
    steps: Histogram<u64>,
    bakes: Histogram<u64>,
    ground: Histogram<u64>,
}

/// The histograms, kept by the ordering thread: the current window (since the last
/// [`Latency::take`]), where each record goes, and the windows before it, added together.
pub(crate) struct Latency {
    /// The windows taken so far.
    all: Window,
    window: Window,
    /// Accepted client ops not yet released: (sequence number, arrival), ascending.
    waiting: VecDeque<(u64, Instant)>,
}

/// Longest time recorded, µs (a minute); longer times count as this.
const HIGHEST_US: u64 = 60_000_000;

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST_US, 3).expect("constant bounds are valid")
}

fn record(h: &mut Histogram<u64>, d: Duration) {
    let us = u64::try_from(d.as_micros()).unwrap_or(HIGHEST_US);
    h.saturating_record(us.clamp(1, HIGHEST_US));
}

fn percentiles(h: &Histogram<u64>) -> Percentiles {
    if h.is_empty() {
        return Percentiles::default();
    }
    let ms = |us: u64| us as f64 / 1000.0;
    Percentiles {
        count: h.len(),
        p50_ms: ms(h.value_at_quantile(0.5)),
        p99_ms: ms(h.value_at_quantile(0.99)),
        max_ms: ms(h.max()),
        mean_ms: h.mean() / 1000.0,
    }
}

impl Window {
    fn new() -> Self {
        Self {
            ops: histogram(),
            queued: histogram(),
            apply: histogram(),
            appends: histogram(),
            appended: 0,
            acks: histogram(),
            ticks: histogram(),
            steps: histogram(),
            bakes: histogram(),
            ground: histogram(),
        }
    }

    /// Adds `other`'s records to these (same bounds, so nothing is lost).
    fn add(&mut self, other: &Window) {
        for (h, o) in [
            (&mut self.ops, &other.ops),
            (&mut self.queued, &other.queued),
            (&mut self.apply, &other.apply),
            (&mut self.appends, &other.appends),
            (&mut self.acks, &other.acks),
            (&mut self.ticks, &other.ticks),
            (&mut self.steps, &other.steps),
            (&mut self.bakes, &other.bakes),
            (&mut self.ground, &other.ground),
        ] {
            h.add(o).expect("histograms of the same bounds add");
        }
        self.appended += other.appended;
    }

    fn summary(&self) -> ServerLatency {
        let appends = percentiles(&self.appends);
        ServerLatency {
            ops: percentiles(&self.ops),
            queued: percentiles(&self.queued),
            apply: percentiles(&self.apply),
            ops_per_append: if appends.count == 0 {
                0.0
            } else {
                self.appended as f64 / appends.count as f64
            },
            appends,
            acks: percentiles(&self.acks),
            ticks: percentiles(&self.ticks),
            steps: percentiles(&self.steps),
            bakes: percentiles(&self.bakes),
            ground: percentiles(&self.ground),
        }
    }
}

impl Latency {
    pub fn new() -> Self {
        Self {
            all: Window::new(),
            window: Window::new(),
            waiting: VecDeque::new(),
        }
    }

    /// Client op `seq` (above every one noted before) arrived at `at`.
    pub fn arrived(&mut self, seq: u64, at: Instant) {
        debug_assert!(self.waiting.back().is_none_or(|&(s, _)| s < seq));
        self.waiting.push_back((seq, at));
    }

    /// Every op up to `seq` was released at `now`.
    pub fn released(&mut self, seq: u64, now: Instant) {
        while let Some(&(s, at)) = self.waiting.front()
            && s <= seq
        {
            record(&mut self.window.ops, now.saturating_duration_since(at));
            self.waiting.pop_front();
        }
    }

    /// A client op waited `d` from its arrival until the ordering thread took it up.
    pub fn queued(&mut self, d: Duration) {
        record(&mut self.window.queued, d);
    }

    /// The writer's report of a group commit reached the ordering thread `d` after it was
    /// sent.
    pub fn acked(&mut self, d: Duration) {
        record(&mut self.window.acks, d);
    }

    /// The ordering thread took `d` over one client op.
    pub fn applied(&mut self, d: Duration) {
        record(&mut self.window.apply, d);
    }

    /// The writer committed `records` in one transaction that took `d`.
    pub fn appended(&mut self, records: usize, d: Duration) {
        record(&mut self.window.appends, d);
        self.window.appended += records as u64;
    }

    /// One tick took `d`.
    pub fn ticked(&mut self, d: Duration) {
        record(&mut self.window.ticks, d);
    }

    /// A physics step took `d`.
    pub fn stepped(&mut self, d: Duration) {
        record(&mut self.window.steps, d);
    }

    /// A bake's snapshot took `d`.
    pub fn snapshotted(&mut self, d: Duration) {
        record(&mut self.window.bakes, d);
    }

    /// Taking in a result of the ground worker took `d`.
    pub fn grounded(&mut self, d: Duration) {
        record(&mut self.window.ground, d);
    }

    /// Since the start: the windows taken so far and the current one.
    pub fn summary(&self) -> ServerLatency {
        let mut all = self.all.clone();
        all.add(&self.window);
        all.summary()
    }

    /// Since the last call (or the start); starts a new window. Ops in flight count in the
    /// next one.
    pub fn take(&mut self) -> ServerLatency {
        let window = std::mem::replace(&mut self.window, Window::new());
        self.all.add(&window);
        window.summary()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Within HdrHistogram's three significant digits.
    fn close(got: f64, want: f64) -> bool {
        (got - want).abs() <= want * 1e-3
    }

    #[test]
    fn an_ops_time_runs_from_its_arrival_to_its_release() {
        let mut l = Latency::new();
        let t0 = Instant::now();
        // Ops 1..=100 arrive 1 ms apart; all are released together 100 ms after the first
        // arrived: op k waited (101 - k) ms.
        for k in 1..=100u64 {
            l.arrived(k, t0 + Duration::from_millis(k - 1));
        }
        l.released(100, t0 + Duration::from_millis(100));
        // One more arrives and is still waiting: not counted.
        l.arrived(101, t0 + Duration::from_millis(100));
        let s = l.summary();
        assert_eq!(s.ops.count, 100);
        assert!(close(s.ops.p50_ms, 50.0), "{s:?}");
        assert!(close(s.ops.p99_ms, 99.0), "{s:?}");
        assert!(close(s.ops.max_ms, 100.0), "{s:?}");
        assert!(close(s.ops.mean_ms, 50.5), "{s:?}");
        // Released later, up to an op that was never a client's (a lump the server made).
        l.released(105, t0 + Duration::from_millis(103));
        let s = l.summary();
        assert_eq!(s.ops.count, 101);
        assert!(close(s.ops.max_ms, 100.0));
    }

    #[test]
    fn appends_report_the_mean_group() {
        let mut l = Latency::new();
        assert_eq!(l.summary(), ServerLatency::default());
        l.appended(10, Duration::from_micros(300));
        l.appended(30, Duration::from_micros(500));
        l.applied(Duration::from_micros(12));
        l.queued(Duration::from_micros(700));
        l.acked(Duration::from_micros(40));
        l.ticked(Duration::ZERO);
        l.stepped(Duration::from_micros(900));
        l.snapshotted(Duration::from_millis(9));
        l.grounded(Duration::from_micros(2500));
        let s = l.summary();
        assert_eq!(s.bakes.count, 1);
        assert!(close(s.steps.p99_ms, 0.9), "{s:?}");
        assert_eq!(s.ground.count, 1);
        assert!(close(s.ground.max_ms, 2.5), "{s:?}");
        assert!(close(s.bakes.p50_ms, 9.0), "{s:?}");
        assert_eq!(s.appends.count, 2);
        assert_eq!(s.ops_per_append, 20.0);
        assert!(
            close(s.appends.max_ms, 0.5) && close(s.appends.p50_ms, 0.3),
            "{s:?}"
        );
        assert!(close(s.apply.p50_ms, 0.012), "{s:?}");
        assert!(close(s.queued.max_ms, 0.7), "{s:?}");
        assert_eq!((s.queued.count, s.acks.count), (1, 1));
        assert!(close(s.acks.p50_ms, 0.04), "{s:?}");
        // A tick under a microsecond counts as one.
        assert_eq!(s.ticks.count, 1);
        assert!(close(s.ticks.max_ms, 0.001), "{s:?}");
        assert_eq!(l.take(), s);
    }

    #[test]
    fn a_window_holds_what_came_after_the_last_take() {
        let mut l = Latency::new();
        let t0 = Instant::now();
        l.arrived(1, t0);
        l.released(1, t0 + Duration::from_millis(40));
        l.arrived(2, t0 + Duration::from_millis(50));
        let first = l.take();
        assert_eq!(first.ops.count, 1);
        assert!(close(first.ops.max_ms, 40.0));
        // Op 2 was in flight at the take: it counts in the next window.
        l.released(2, t0 + Duration::from_millis(52));
        l.appended(5, Duration::from_millis(1));
        let second = l.take();
        assert_eq!((second.ops.count, second.appends.count), (1, 1));
        assert!(close(second.ops.max_ms, 2.0), "{second:?}");
        assert_eq!(second.ops_per_append, 5.0);
        // The start's figures hold both.
        let all = l.summary();
        assert_eq!(all.ops.count, 2);
        assert!(
            close(all.ops.max_ms, 40.0) && close(all.ops.p50_ms, 2.0),
            "{all:?}"
        );
        assert_eq!(l.take(), ServerLatency::default());
    }
}
