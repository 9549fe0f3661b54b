//! Crash safety: a child process appends ops and bakes (and compacts) in a loop and is killed
//! with SIGKILL at random moments; after every kill the world must reopen, pass
//! `PRAGMA integrity_check`, hold every op the child acknowledged, and load to the same field
//! (and history) as a replay of the child's deterministic op sequence. A second process opening
//! a world in use gets [`StoreError::InUse`].
//!
//! The child is this test binary itself, run as `crash::crash_child` with `LOAM_CRASH_CHILD`
//! naming the world file (without it that test returns at once). It prints `ack <seq>` after
//! each [`Store::append`] returns, `bake <seq>` / `compact <seq>` after those. The op for
//! sequence number `s` is a pure function of the seed and `s` ([`op_for`]), its stroke is `s`,
//! so the parent can rebuild the expected world from nothing but the last sequence number.
//!
//! CI runs 200 kills (`LOAM_CRASH_ITERATIONS`, default 200). A longer soak:
//!
//! ```text
//! LOAM_CRASH_ITERATIONS=2000 cargo test -p loam-store --test integration crash -- --nocapture
//! ```
//!
//! `LOAM_CRASH_SEED` picks another op sequence and kill schedule (default 1).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use loam_field::{
    CaveSettings, CsgMode, EditOp, Field, FieldSettings, Generator, History, LogEntry, NoiseLayer,
    NoiseTerrainSettings,
};
use loam_store::{Store, StoreError};

const CHILD_ENV: &str = "LOAM_CRASH_CHILD";
const SEED_ENV: &str = "LOAM_CRASH_SEED";
const ITERATIONS_ENV: &str = "LOAM_CRASH_ITERATIONS";
const DEFAULT_ITERATIONS: u64 = 200;

/// What the world file records as its generator (the tests build it directly).
const GEN_JSON: &str = r#"{"kind": "noise", "terrain": {"base_height": 0.0, "hills": null, "ridges": null, "detail": null}, "caves": {"enabled": false}}"#;

/// A small undo budget, so that the saved history (written by every bake) stays small.
const HISTORY_BUDGET: usize = 1 << 20;
const BAKE_EVERY: u64 = 7;
const COMPACT_EVERY: u64 = 20;

/// How long the parent waits for the child to say something before calling it stuck.
const CHILD_TIMEOUT: Duration = Duration::from_secs(60);

const OFF: NoiseLayer = NoiseLayer {
    amplitude: 0.0,
    wavelength: 1.0,
    octaves: 0,
};

/// Flat ground at y = 0, no caves, 1 m voxels.
fn base_field() -> Field {
    let terrain = NoiseTerrainSettings {
        base_height: 0.0,
        hills: OFF,
        ridges: OFF,
        detail: OFF,
        ..Default::default()
    };
    let caves = CaveSettings {
        enabled: false,
        ..Default::default()
    };
    let generator = Generator::noise(&terrain, &caves).unwrap();
    Field::new(FieldSettings::default(), Arc::new(generator)).unwrap()
}

/// SplitMix64.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The op with sequence number `seq` (its stroke is `seq`): digs and builds of radius 1–4 m
/// around the origin; every 11th op undoes the op before it, and every other such undo is
/// redone by the next op. A pure function of `seed` and `seq`.
fn op_for(seed: u64, seq: u64) -> EditOp {
    if seq.is_multiple_of(11) {
        return EditOp::Undo { stroke: seq - 1 };
    }
    if seq > 22 && seq % 22 == 1 {
        return EditOp::Redo { stroke: seq - 2 };
    }
    let r = mix(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) ^ seq);
    let unit = |i: u64| (mix(r.wrapping_add(i)) >> 11) as f64 / (1u64 << 53) as f64;
    let center = [
        -6.0 + 12.0 * unit(0),
        -2.5 + 5.0 * unit(1),
        -6.0 + 12.0 * unit(2),
    ];
    let radius = 1.0 + 3.0 * unit(3);
    if unit(4) < 0.6 {
        EditOp::Sphere {
            mode: CsgMode::Subtract,
            center,
            radius,
            material: 0,
            blend: 0.0,
        }
    } else {
        EditOp::Sphere {
            mode: CsgMode::Union,
            center,
            radius,
            material: 1 + (r % 7) as u8,
            blend: 0.0,
        }
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// Child mode (run by the parent with `LOAM_CRASH_CHILD` set): open or create the world,
/// load it, then append, bake and compact forever, acknowledging each durable append on
/// stdout. Ignored in a plain test run, where it would have nothing to check.
#[test]
#[ignore = "the crash test's child process; the parent runs it"]
fn crash_child() {
    let path = std::env::var_os(CHILD_ENV).expect("LOAM_CRASH_CHILD names the world file");
    let path = PathBuf::from(path);
    let seed = env_u64(SEED_ENV, 1);
    let mut store = if path.exists() {
        Store::open(&path).expect("child: open")
    } else {
        let mut s =
            Store::create(&path, GEN_JSON, &FieldSettings::default(), None).expect("child: create");
        // Saves the history with its budget before any op.
        s.bake(&base_field(), &History::new(HISTORY_BUDGET), 0)
            .expect("child: first bake");
        s
    };
    let loaded = store.load(base_field()).expect("child: load");
    let mut field = loaded.field;
    let mut history = if loaded.last_seq == 0 && loaded.history.is_empty() {
        History::new(HISTORY_BUDGET)
    } else {
        loaded.history
    };
    let mut seq = loaded.last_seq;
    let mut out = std::io::stdout().lock();
    // The harness has printed "test crash::crash_child ... " without a newline.
    writeln!(out, "\nready {seq}").unwrap();
    out.flush().unwrap();
    loop {
        seq += 1;
        let op = op_for(seed, seq);
        history
            .apply(&mut field, seq, &op)
            .unwrap_or_else(|e| panic!("child: op {seq} {op:?}: {e}"));
        store
            .append(&LogEntry::new(seq, seq, op))
            .unwrap_or_else(|e| panic!("child: append {seq}: {e}"));
        writeln!(out, "ack {seq}").unwrap();
        out.flush().unwrap();
        if seq.is_multiple_of(BAKE_EVERY) {
            store
                .bake(&field, &history, seq)
                .unwrap_or_else(|e| panic!("child: bake {seq}: {e}"));
            writeln!(out, "bake {seq}").unwrap();
            out.flush().unwrap();
        }
        if seq.is_multiple_of(COMPACT_EVERY) {
            store
                .compact()
                .unwrap_or_else(|e| panic!("child: compact {seq}: {e}"));
            writeln!(out, "compact {seq}").unwrap();
            out.flush().unwrap();
        }
    }
}

/// What the child said.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Event {
    Ready(u64),
    Ack(u64),
    Bake(u64),
}

/// A running child with a thread reading its stdout.
struct Running {
    child: Child,
    events: Receiver<Event>,
    reader: JoinHandle<()>,
    stderr: PathBuf,
}

fn spawn_child(world: &Path, seed: u64, stderr: &Path) -> Running {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "crash::crash_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, world)
        .env(SEED_ENV, seed.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(stderr).unwrap())
        .spawn()
        .expect("spawn the child");
    let stdout = child.stdout.take().unwrap();
    let (tx, events) = channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let num = |rest: &str| rest.trim().parse::<u64>().ok();
            let event = if let Some(rest) = line.strip_prefix("ack ") {
                num(rest).map(Event::Ack)
            } else if let Some(rest) = line.strip_prefix("ready ") {
                num(rest).map(Event::Ready)
            } else if let Some(rest) = line.strip_prefix("bake ") {
                num(rest).map(Event::Bake)
            } else {
                None
            };
            if let Some(e) = event {
                let _ = tx.send(e);
            }
        }
    });
    Running {
        child,
        events,
        reader,
        stderr: stderr.into(),
    }
}

impl Running {
    /// Waits for the first event matching `pred` (the events before it are returned too).
    fn wait_for(&self, pred: impl Fn(Event) -> bool) -> Vec<Event> {
        let start = Instant::now();
        let mut seen = Vec::new();
        loop {
            match self.events.recv_timeout(Duration::from_millis(50)) {
                Ok(e) => {
                    seen.push(e);
                    if pred(e) {
                        return seen;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("the child ended early; stderr:\n{}", self.stderr_text())
                }
            }
            assert!(
                start.elapsed() < CHILD_TIMEOUT,
                "the child said nothing in time; stderr:\n{}",
                self.stderr_text()
            );
        }
    }

    fn stderr_text(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// SIGKILL (on Unix), reap, and everything the child printed.
    fn kill(mut self, mut seen: Vec<Event>) -> (ExitStatus, Vec<Event>) {
        // An error means it already exited (checked below through its status).
        let _ = self.child.kill();
        let status = self.child.wait().unwrap();
        self.reader.join().unwrap();
        seen.extend(self.events.try_iter());
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(
                status.signal(),
                Some(9),
                "the child was not killed by SIGKILL but ended with {status}; stderr:\n{}",
                std::fs::read_to_string(&self.stderr).unwrap_or_default()
            );
        }
        (status, seen)
    }
}

/// Opens the world, retrying briefly while it reads as in use (a killed process's lock goes
/// with it, so this should not happen). Returns the store and how many retries it took.
fn open_after_kill(path: &Path) -> (Store, u32) {
    let start = Instant::now();
    let mut retries = 0;
    loop {
        match Store::open(path) {
            Ok(s) => return (s, retries),
            Err(StoreError::InUse { .. }) if start.elapsed() < Duration::from_secs(3) => {
                retries += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => panic!("reopening {} after a kill: {e} ({e:?})", path.display()),
        }
    }
}

/// The expected world: the deterministic ops replayed, advanced as the log grows.
struct Reference {
    seed: u64,
    field: Field,
    history: History,
    seq: u64,
}

impl Reference {
    fn new(seed: u64) -> Self {
        Self {
            seed,
            field: base_field(),
            history: History::new(HISTORY_BUDGET),
            seq: 0,
        }
    }

    fn advance_to(&mut self, seq: u64) {
        assert!(
            seq >= self.seq,
            "the world went back from op {} to op {seq}",
            self.seq
        );
        while self.seq < seq {
            self.seq += 1;
            let op = op_for(self.seed, self.seq);
            self.history.apply(&mut self.field, self.seq, &op).unwrap();
        }
    }
}

/// Checks a world after its writer was killed; returns its last sequence number.
fn check_world(path: &Path, acked: u64, reference: &mut Reference, what: &str) -> (u64, u32) {
    let (mut store, retries) = open_after_kill(path);
    assert_eq!(
        store.integrity_check().unwrap(),
        Ok(()),
        "{what}: integrity_check failed"
    );
    let info = store.info().unwrap();
    assert!(
        info.last_seq >= acked,
        "{what}: op {acked} was acknowledged but the world ends at op {} ({info:?})",
        info.last_seq
    );
    assert!(info.bake_seq <= info.last_seq, "{what}: {info:?}");
    // The logged ops are exactly the ones the child made.
    for e in store.ops_after(0).unwrap() {
        assert_eq!(
            e,
            LogEntry::new(e.seq, e.seq, op_for(reference.seed, e.seq)),
            "{what}: logged op {} differs",
            e.seq
        );
    }
    let loaded = store
        .load(base_field())
        .unwrap_or_else(|e| panic!("{what}: load: {e} ({e:?})"));
    assert_eq!(loaded.last_seq, info.last_seq, "{what}: load's last op");
    reference.advance_to(loaded.last_seq);
    assert_eq!(
        loaded.field.hash(),
        reference.field.hash(),
        "{what}: the loaded field differs from a replay of ops 1..={}",
        loaded.last_seq
    );
    assert!(
        loaded.history == reference.history,
        "{what}: the loaded undo history differs from a replay of ops 1..={}",
        loaded.last_seq
    );
    (loaded.last_seq, retries)
}

/// A deterministic LCG for the kill schedule.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

#[test]
fn killed_at_random_moments_loses_nothing_acknowledged() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let iterations = env_u64(ITERATIONS_ENV, DEFAULT_ITERATIONS);
    let seed = env_u64(SEED_ENV, 1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("world.loam");
    let stderr = dir.path().join("child-stderr.txt");
    let mut lcg = Lcg(seed ^ 0x5eed);
    let mut reference = Reference::new(seed);
    let start = Instant::now();
    let (mut last_seq, mut acks, mut bakes, mut retries) = (0u64, 0u64, 0u64, 0u32);
    let (mut before_ready, mut before_ack, mut in_bake) = (0u64, 0u64, 0u64);
    for i in 0..iterations {
        let delay = Duration::from_millis(5 + lcg.below(56));
        // One kill in four counts from the spawn (it lands in the child's start: opening, WAL
        // recovery, loading); the rest from the child's "ready" (appends, bakes, compactions).
        let from_spawn = i > 0 && lcg.below(4) == 0;
        let running = spawn_child(&path, seed, &stderr);
        let mut seen = if i == 0 {
            // The first child creates the world: never kill it before it is made.
            running.wait_for(|e| matches!(e, Event::Ack(_)))
        } else if !from_spawn {
            running.wait_for(|e| matches!(e, Event::Ready(_)))
        } else {
            Vec::new()
        };
        std::thread::sleep(delay);
        seen.extend(running.events.try_iter());
        let (_, seen) = running.kill(seen);

        let what = format!(
            "iteration {i} (killed {delay:?} after the {})",
            if from_spawn {
                "spawn"
            } else {
                "child was ready"
            }
        );
        let mut max_ack = last_seq;
        let mut ready = None;
        for e in &seen {
            match *e {
                Event::Ready(s) => ready = Some(s),
                Event::Ack(s) => {
                    assert_eq!(s, max_ack + 1, "{what}: acks out of order: {seen:?}");
                    max_ack = s;
                    acks += 1;
                }
                Event::Bake(_) => bakes += 1,
            }
        }
        if let Some(Event::Ack(s)) = seen.last()
            && s.is_multiple_of(BAKE_EVERY)
        {
            in_bake += 1;
        }
        match ready {
            None => before_ready += 1,
            Some(s) => {
                assert_eq!(s, last_seq, "{what}: the child loaded a different world");
                if max_ack == last_seq {
                    before_ack += 1;
                }
            }
        }
        let (seq, r) = check_world(&path, max_ack, &mut reference, &what);
        last_seq = seq;
        retries += r;
    }
    println!(
        "crash: {iterations} kills in {:.1} s: {acks} acknowledged ops (world at op {last_seq}), \
         {bakes} bakes seen; {before_ready} kills before the child loaded, {before_ack} after \
         loading but before an ack, {in_bake} likely inside a bake; {retries} in-use retries on \
         reopen",
        start.elapsed().as_secs_f64()
    );
    assert!(
        acks > 0 && bakes > 0,
        "the children never got to append and bake"
    );
}

#[test]
fn second_process_gets_in_use() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let seed = env_u64(SEED_ENV, 1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("world.loam");
    let running = spawn_child(&path, seed, &dir.path().join("child-stderr.txt"));
    let seen = running.wait_for(|e| matches!(e, Event::Ack(_)));
    let started = Instant::now();
    match Store::open(&path) {
        Err(StoreError::InUse { path: p }) => assert_eq!(p, path),
        other => panic!("a second opener got {other:?}, not InUse"),
    }
    // Creating over it is refused too.
    assert!(matches!(
        Store::create(&path, GEN_JSON, &FieldSettings::default(), None),
        Err(StoreError::Exists { .. })
    ));
    let in_use_after = started.elapsed();
    let (_, seen) = running.kill(seen);
    let acked = seen
        .iter()
        .filter_map(|e| match e {
            Event::Ack(s) => Some(*s),
            _ => None,
        })
        .max()
        .unwrap();
    let (seq, _) = check_world(
        &path,
        acked,
        &mut Reference::new(seed),
        "after the in-use attempt",
    );
    println!(
        "in use: refused in {in_use_after:?}; the child had acknowledged {acked} ops, the world \
         holds {seq}"
    );
}

/// No kill needed: a session that loads a world with ops newer than its bake, then bakes, must
/// keep what those replayed ops did (the bake covers them).
#[test]
fn bake_after_reopen_keeps_the_replayed_ops() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let dig = |x: f64| EditOp::Sphere {
        mode: CsgMode::Subtract,
        center: [x, 0.0, x],
        radius: 3.0,
        material: 0,
        blend: 0.0,
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("world.loam");
    let (mut field, mut history) = (base_field(), History::default());
    let ops = [dig(8.0), dig(-8.0), dig(8.0)];
    {
        // Op 1, a bake, then op 2 (in other bricks) with no bake after it.
        let mut store = Store::create(&path, GEN_JSON, field.settings(), None).unwrap();
        for (seq, op) in [(1, &ops[0]), (2, &ops[1])] {
            history.apply(&mut field, seq, op).unwrap();
            store.append(&LogEntry::new(seq, seq, op.clone())).unwrap();
            if seq == 1 {
                store.bake(&field, &history, 1).unwrap();
            }
        }
    }
    {
        // Reopen (op 2 is replayed), op 3 in op 1's bricks, bake.
        let mut store = Store::open(&path).unwrap();
        let loaded = store.load(base_field()).unwrap();
        assert_eq!(loaded.field.hash(), field.hash());
        let (mut f, mut h) = (loaded.field, loaded.history);
        h.apply(&mut f, 3, &ops[2]).unwrap();
        store.append(&LogEntry::new(3, 3, ops[2].clone())).unwrap();
        store.bake(&f, &h, 3).unwrap();
        history.apply(&mut field, 3, &ops[2]).unwrap();
    }
    let mut store = Store::open(&path).unwrap();
    let loaded = store.load(base_field()).unwrap();
    assert_eq!(loaded.last_seq, 3);
    assert_eq!(
        loaded.field.hash(),
        field.hash(),
        "op 2, replayed at the reopen and covered by the bake at op 3, is missing from the load"
    );
}
