//! The writer thread: the one owner of the world store. The ordering thread hands it each
//! applied op (or each run of them) at once and goes on applying the next ones; the writer
//! commits what queued up while it synced the last group as the next group, in one
//! transaction and one sync (group commit). Before, the ordering thread held the next group
//! until it had taken the last one's acknowledgement: two thread wake-ups between syncs, in
//! which the disk idled. Without them an op's time from the ordering thread taking it to its
//! release, at 64 clients × 313 ops/s, went from 0.87–1.11 ms to 0.54–1.07 ms at the median,
//! lower in each of five alternated pairs (BENCHMARKS.md, multiplayer, 2026-12-03 (fourth)).
//!
//! A bake's encoding (quantising and compressing every brick changed since the last bake,
//! about 2 ms a brick, and the history strokes new or changed since) runs on a second thread,
//! the baker, at a lower priority, while the writer goes on appending groups. The writer then
//! writes the encoded bake's rows ahead in parts of [`BAKE_PART_BYTES`], one part after each
//! group, and commits it (a small transaction) once all are written. Before, a bake held
//! every append behind it for its whole encoding (200 ms for 81 bricks), and later for its
//! whole write (120–200 ms for 2 MB of bricks and a 5–10 MB history), and every client's
//! edits with them. A bake that comes while the baker still encodes the last one waits
//! beside the appends until the baker is done: the writer used to wait for the baker there,
//! and the baker, at its low priority, took 28 s on a machine whose cores other programs kept
//! busy, with every client's acks held.
//!
//! SQLite's WAL checkpoints (copying the log back into the world file) run on the store's
//! checkpointer thread every [`CHECKPOINT_EVERY`] (Linux), not inside a group's commit: there
//! the commit after a bake's rows took 12–18 ms, and held every client's edits as long.
//!
//! Another connection holding SQLite's write lock on the world (an `sqlite3` shell with a
//! transaction open) does not stop the server: a write the store gives up on as busy
//! ([`StoreError::Busy`], after its busy wait of 5 s) is tried again, and again, for as long
//! as the lock is held, with the ops that queue up meanwhile joining its group, and none of
//! them is acknowledged before it is written. SQLite's busy handler looks at the lock again
//! after 1, 2, 5, 10, … ms, at most 100 ms apart, so the group goes in soon after the lock is
//! let go. The spell is logged ([`BusySpell`]): a warning with how long the file has been
//! busy, what was being written and how many ops wait (when it starts, then each time it
//! has doubled, at most [`BUSY_WARN_MAX`] apart), and a line when the writes go in again. The
//! bake's parts and commit wait likewise (kept, not dropped). Only on a stop is there an end
//! to it ([`STOP_PATIENCE`]): the ops not yet written were never acknowledged.

use super::backups::Backups;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use loam_field::{Field, History};
use loam_store::{BakeTidy, Baked, LogRecord, PreparedBake, Store, StoreError};

use crate::error::ServerError;
use tokio::sync::mpsc::UnboundedSender;

/// What the writer does, in order.
pub(crate) enum Write {
    /// Append terrain and block ops (consecutive sequence numbers after the last append).
    /// Appends queued behind each other are committed together in one transaction, then
    /// `Durable` is reported with the last sequence number of them. The text, when given,
    /// is where a node stands in the world's stream after them
    /// ([`Store::append_records_followed`]); the newest of a group is written with it.
    Append(Vec<LogRecord>, Option<String>),
    /// Bake the world (field, history, and the block world's snapshot at physics step
    /// `step`) as it is after op `seq` (every op up to `seq` appended before). Encoded on a
    /// thread of its own while later groups are appended, then written between two groups;
    /// nothing is reported.
    Bake {
        field: Box<Field>,
        history: Box<History>,
        seq: u64,
        step: u64,
        blocks: Vec<u8>,
    },
}

/// What the writer reports.
pub(crate) enum Ack {
    /// Everything up to `seq` is durable, after a group commit of `records` that took
    /// `took` and ended `at`.
    Durable {
        seq: u64,
        records: usize,
        took: Duration,
        at: std::time::Instant,
    },
    /// The store failed (a busy file is waited out, not a failure); the writer has stopped.
    Failed(String),
}

/// The ordering thread's end of the writer.
pub(crate) struct Writer {
    tx: Option<mpsc::Sender<Write>>,
    /// Set when the server stops: a write the busy file holds back is then tried for
    /// [`STOP_PATIENCE`] more only.
    stopping: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<(), StoreError>>>,
}

impl Writer {
    /// Starts the writer and its baker over `store`; it reports to `back`.
    pub fn start(
        mut store: Store,
        backups: Option<Backups>,
        back: UnboundedSender<Ack>,
    ) -> std::io::Result<Self> {
        // A failure to start it leaves SQLite's checkpoints inside the appends, as before.
        if let Err(e) = store.checkpoint_in_background(CHECKPOINT_EVERY) {
            tracing::warn!(
                "WAL checkpoints stay inside the appends: {}",
                crate::error_chain(&e)
            );
        }
        let (tx, rx) = mpsc::channel::<Write>();
        let baker = Baker::start()?;
        let stopping = Arc::new(AtomicBool::new(false));
        let stop = stopping.clone();
        let thread = std::thread::Builder::new()
            .name("loam-server-writer".into())
            .spawn(move || run(store, baker, backups, &rx, &stop, &back))?;
        Ok(Self {
            tx: Some(tx),
            stopping,
            thread: Some(thread),
        })
    }

    /// Queues `w`. (A writer that has stopped reports why through the commands.)
    pub fn send(&self, w: Write) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(w);
        }
    }

    /// Runs a last bake (if `last` is given) and stops, closing the store; returns the
    /// first error the writer met.
    pub fn finish(&mut self, last: Option<Write>) -> Result<(), ServerError> {
        if let (Some(tx), Some(w)) = (&self.tx, last) {
            let _ = tx.send(w);
        }
        self.stopping.store(true, Ordering::Relaxed);
        self.tx = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(r)) => Ok(r?),
            Some(Err(_)) => Err(ServerError::ServerStopped(
                "the writer thread panicked".into(),
            )),
            None => Ok(()),
        }
    }
}

/// What the baker encodes: a bake after op `seq`, leaving out the bricks as `baked` has them.
struct Job {
    baked: Baked,
    field: Box<Field>,
    history: Box<History>,
    seq: u64,
    step: u64,
    blocks: Vec<u8>,
}

/// The writer's end of the baker thread: one bake encoded at a time.
struct Baker {
    jobs: Option<mpsc::Sender<Job>>,
    done: mpsc::Receiver<PreparedBake>,
    /// Whether a job was handed over and its result not yet taken.
    busy: bool,
    thread: Option<JoinHandle<()>>,
}

impl Baker {
    fn start() -> std::io::Result<Self> {
        Self::start_gated(None)
    }

    /// [`Self::start`]; with a `gate`, each job waits until the gate's lock can be taken (a
    /// test's stand-in for a baker starved of CPU).
    fn start_gated(gate: Option<std::sync::Arc<std::sync::Mutex<()>>>) -> std::io::Result<Self> {
        let (jobs, rx) = mpsc::channel::<Job>();
        let (tx, done) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("loam-server-bake".into())
            .spawn(move || {
                crate::process::lower_thread_priority();
                for j in rx {
                    if let Some(g) = &gate {
                        drop(g.lock());
                    }
                    let blocks = Some((j.step, j.blocks.as_slice()));
                    let p = Store::prepare_bake(&j.baked, &j.field, &j.history, j.seq, blocks);
                    if tx.send(p).is_err() {
                        return;
                    }
                }
            })?;
        Ok(Self {
            jobs: Some(jobs),
            done,
            busy: false,
            thread: Some(thread),
        })
    }

    fn give(&mut self, job: Job) {
        if let Some(jobs) = &self.jobs {
            self.busy = jobs.send(job).is_ok();
        }
    }

    /// The encoded bake, if there is one: waiting for it when `wait`. (A panic of the
    /// baker's is the writer's.)
    fn take(&mut self, wait: bool) -> Option<PreparedBake> {
        if !self.busy {
            return None;
        }
        let p = if wait {
            self.done.recv().ok()
        } else {
            match self.done.try_recv() {
                Err(mpsc::TryRecvError::Empty) => return None,
                r => r.ok(),
            }
        };
        self.busy = false;
        if p.is_none() {
            // The baker is gone: it panicked.
            self.jobs = None;
            if let Some(Err(panic)) = self.thread.take().map(JoinHandle::join) {
                std::panic::resume_unwind(panic);
            }
        }
        p
    }
}

impl Drop for Baker {
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// How often the store's checkpointer copies the log into the world file, off the writer's
/// thread (`loam_store::Store::checkpoint_in_background`): at 20 000 ops/s about 100 pages
/// each time.
const CHECKPOINT_EVERY: Duration = Duration::from_millis(200);

/// How often the writer looks whether the baker is done while no write comes.
const BAKE_POLL: Duration = Duration::from_millis(2);

/// How often the writer steps a backup while no write comes.
const BACKUP_POLL: Duration = Duration::from_millis(2);

/// Bytes of a bake's rows written between two groups: a few milliseconds of writing.
const BAKE_PART_BYTES: usize = 256 << 10;

/// Deletes what the last committed bake replaced, if that waits.
fn tidy_now(store: &mut Store, tidy: &mut Option<BakeTidy>) {
    if let Some(t) = tidy.take() {
        store.tidy_bake(&t);
    }
}

/// The longest time between two warnings of one busy spell.
const BUSY_WARN_MAX: Duration = Duration::from_secs(300);

/// How long a stopping writer goes on trying a busy file (the server is asked to stop; the
/// ops not yet written were never acknowledged) before it gives up with the store's error.
const STOP_PATIENCE: Duration = Duration::from_secs(30);

/// A spell of the world file being busy (another connection holding SQLite's write lock),
/// as the writer met it, for its log lines.
struct BusySpell {
    path: PathBuf,
    /// When the first write that met it began to wait.
    since: Instant,
    /// How long it had lasted at the last warning.
    warned: Duration,
}

/// The writer's log of busy spells: [`BusyLog::busy`] for each write that failed busy,
/// [`BusyLog::wrote`] for each one done.
#[derive(Default)]
struct BusyLog {
    spell: Option<BusySpell>,
}

impl BusyLog {
    /// `e` (a [`StoreError::Busy`]; any other error is not logged here) met while `ops` ops
    /// wait for the write: a warning when the spell begins and each time it has doubled
    /// since the last (at most [`BUSY_WARN_MAX`] apart).
    fn busy(&mut self, e: &StoreError, ops: usize) {
        let StoreError::Busy {
            path,
            writing,
            waited,
        } = e
        else {
            return;
        };
        let now = Instant::now();
        let spell = self.spell.get_or_insert_with(|| BusySpell {
            path: path.clone(),
            since: now.checked_sub(*waited).unwrap_or(now),
            warned: Duration::ZERO,
        });
        let lasted = now - spell.since;
        if spell.warned.is_zero() || lasted >= (spell.warned * 2).min(spell.warned + BUSY_WARN_MAX)
        {
            spell.warned = lasted;
            tracing::warn!(
                "the world file {:?} has been busy for {:.1} s ({writing}): another connection \
                 holds SQLite's write lock on it (an `sqlite3` shell or another program with a \
                 transaction open); trying again, ops waiting unacknowledged until it is let \
                 go: {ops}",
                spell.path,
                lasted.as_secs_f64(),
            );
        }
    }

    /// A write went in (`ops` ops with it): ends the spell, if one was on, with a line
    /// saying how long it lasted.
    fn wrote(&mut self, ops: usize) {
        if let Some(spell) = self.spell.take() {
            tracing::warn!(
                "the world file {:?} is written again after {:.1} s busy (ops written: {ops})",
                spell.path,
                spell.since.elapsed().as_secs_f64(),
            );
        }
    }
}

/// Moves the appends queued in `rx` into `entries` (one group), up to the first other
/// write, which goes to `later`. Returns whether the ordering thread's end is gone (a stop).
fn gather(
    rx: &mpsc::Receiver<Write>,
    entries: &mut Vec<LogRecord>,
    followed: &mut Option<String>,
    later: &mut Option<Write>,
) -> bool {
    while later.is_none() {
        match rx.try_recv() {
            Ok(Write::Append(more, f)) => {
                entries.extend(more);
                if f.is_some() {
                    *followed = f;
                }
            }
            Ok(other) => *later = Some(other),
            Err(mpsc::TryRecvError::Empty) => return false,
            Err(mpsc::TryRecvError::Disconnected) => return true,
        }
    }
    false
}

/// Whether a write that failed with `e` is tried again: the file is busy, and the writer is
/// not stopping, or has been only for less than [`STOP_PATIENCE`] (`stop`: since when).
fn try_again(e: &StoreError, stop: Option<Instant>) -> bool {
    matches!(e, StoreError::Busy { .. }) && stop.is_none_or(|t| t.elapsed() < STOP_PATIENCE)
}

/// Commits the bake in `pending` once its rows are written, tidying what the last one
/// replaced first: `pending` is emptied and its tidying kept in `tidy`. A busy file leaves
/// the bake in `pending` for the next try (logged in `busy`).
///
/// # Errors
/// The store's, but busy.
fn commit_pending(
    store: &mut Store,
    pending: &mut Option<PreparedBake>,
    tidy: &mut Option<BakeTidy>,
    busy: &mut BusyLog,
) -> Result<(), StoreError> {
    let Some(p) = pending.as_ref() else {
        return Ok(());
    };
    tidy_now(store, tidy);
    match store.commit_bake_untidied(p) {
        Ok((_, t)) => {
            *tidy = Some(t);
            *pending = None;
            busy.wrote(0);
            Ok(())
        }
        Err(e @ StoreError::Busy { .. }) => {
            busy.busy(&e, 0);
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// Commits `p` on a stop, trying again while the file is busy for up to [`STOP_PATIENCE`]
/// past `stop`; then it is left out with a warning (the ops it covers are in the log, and
/// the next load replays them).
///
/// # Errors
/// The store's, but busy.
fn commit_at_stop(
    store: &mut Store,
    p: PreparedBake,
    stop: Instant,
    busy: &mut BusyLog,
) -> Result<(), StoreError> {
    loop {
        match store.commit_bake_untidied(&p) {
            Ok((_, t)) => {
                busy.wrote(0);
                store.tidy_bake(&t);
                return Ok(());
            }
            Err(e) if try_again(&e, Some(stop)) => busy.busy(&e, 0),
            Err(e @ StoreError::Busy { .. }) => {
                tracing::warn!(
                    "the last bake is not written ({}): the ops it covers are in the log, and \
                     the next load replays them",
                    crate::error_chain(&e)
                );
                return Ok(());
            }
            Err(e) => return Err(e),
        }
    }
}

/// The writer thread: takes the writes from `rx` until its sender is gone, reports to
/// `back`. `stopping` says that the server stops (the writes queued then still go in).
fn run(
    mut store: Store,
    mut baker: Baker,
    mut backups: Option<Backups>,
    rx: &mpsc::Receiver<Write>,
    stopping: &AtomicBool,
    back: &UnboundedSender<Ack>,
) -> Result<(), StoreError> {
    let fail = |e: StoreError| {
        let _ = back.send(Ack::Failed(crate::error_chain(&e)));
        e
    };
    // The encoded bake being written ahead, part by part.
    let mut pending: Option<PreparedBake> = None;
    // A write taken from the queue behind a group of appends, done next.
    let mut later: Option<Write> = None;
    // What the last committed bake replaced, deleted after the next group (or when no
    // write comes): the ops behind a bake's commit do not wait for its tidying too.
    let mut tidy: Option<BakeTidy> = None;
    // A bake that came while the baker was still encoding the last one: handed over once
    // that one is written (a newer one replaces it: a bake is a whole snapshot).
    let mut waiting: Option<Write> = None;
    // The sequence number of the last bake given to the baker: an older or equal one that
    // comes after it is dropped (the store refuses bakes out of order).
    let mut given: Option<u64> = None;
    // The world file's busy spell, if one is on.
    let mut busy = BusyLog::default();
    // When the ordering thread's end was found gone while a busy write was tried again.
    let mut stop: Option<Instant> = None;
    loop {
        // Waiting for the next write: not past the baker's poll while a bake is on or waits
        // or its tidying waits, nor past the next backup step.
        let on = baker.busy || pending.is_some() || tidy.is_some() || waiting.is_some();
        let mut wait = on.then_some(BAKE_POLL);
        if let Some(b) = &backups {
            let next = b.wait(&store).max(BACKUP_POLL);
            wait = Some(wait.map_or(next, |w| w.min(next)));
        }
        let w = match later.take() {
            Some(w) => Some(w),
            None if let Some(wait) = wait => match rx.recv_timeout(wait) {
                Ok(w) => Some(w),
                Err(mpsc::RecvTimeoutError::Timeout) => None,
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            },
            None => match rx.recv() {
                Ok(w) => Some(w),
                Err(_) => break,
            },
        };
        // Group commit: the appends that queued up while the last group synced go in one
        // transaction, without a round trip through the ordering thread.
        let w = match w {
            Some(Write::Append(mut entries, mut followed)) => {
                gather(rx, &mut entries, &mut followed, &mut later);
                Some(Write::Append(entries, followed))
            }
            w => w,
        };
        if pending.is_none() {
            pending = baker.take(false);
        }
        // A new bake waits for the last one to be written (so that it leaves out what that
        // one writes). While the baker still encodes the last one, it waits beside the
        // appends: the writer used to wait for the baker here, and the baker, at its low
        // priority, took 28 s on a machine whose cores were all busy, with every ack held.
        let mut w = match w {
            Some(bake @ Write::Bake { .. }) => {
                // Newer than any waiting one, which it replaces (committing an older bake
                // after it would be refused by the store, and stop the server).
                waiting = None;
                if baker.busy {
                    waiting = Some(bake);
                    None
                } else {
                    Some(bake)
                }
            }
            w => w,
        };
        // What is left of the last one is written at once; while the file is busy, the new
        // one waits for it.
        if matches!(w, Some(Write::Bake { .. })) && pending.is_some() {
            commit_pending(&mut store, &mut pending, &mut tidy, &mut busy).map_err(fail)?;
            if pending.is_some() {
                waiting = w.take();
            }
        }
        match w {
            None => {
                tidy_now(&mut store, &mut tidy);
            }
            Some(Write::Append(mut entries, mut followed)) => {
                let seq_of = |e: &[LogRecord]| e.last().map_or(0, LogRecord::seq);
                let start = Instant::now();
                // A busy file is tried again, the appends queued meanwhile joining the
                // group: none of them is acknowledged before it is written.
                while let Err(e) = match &followed {
                    Some(f) => store.append_records_followed(&entries, f),
                    None => store.append_records(&entries),
                } {
                    if !try_again(&e, stop) {
                        return Err(fail(e));
                    }
                    busy.busy(&e, entries.len());
                    let gone = gather(rx, &mut entries, &mut followed, &mut later);
                    if (gone || stopping.load(Ordering::Relaxed)) && stop.is_none() {
                        stop = Some(Instant::now());
                    }
                }
                busy.wrote(entries.len());
                let at = Instant::now();
                // While shutting down nobody listens any more.
                let _ = back.send(Ack::Durable {
                    seq: seq_of(&entries),
                    records: entries.len(),
                    took: at - start,
                    at,
                });
                tidy_now(&mut store, &mut tidy);
            }
            Some(bake @ Write::Bake { .. }) => give_bake(&mut baker, &store, bake, &mut given),
        }
        // The waiting bake goes next once the last one is encoded and written (in parts,
        // between the groups, as any).
        if !baker.busy && pending.is_none() && later.is_none() {
            later = waiting.take();
        }
        // One part of the pending bake after each group; its commit once all are written.
        // A busy file leaves them for the next try.
        if let Some(p) = pending.as_mut() {
            match store.write_bake_part(p, BAKE_PART_BYTES) {
                Ok(true) => {
                    commit_pending(&mut store, &mut pending, &mut tidy, &mut busy).map_err(fail)?;
                }
                Ok(false) => {}
                Err(e @ StoreError::Busy { .. }) => busy.busy(&e, 0),
                Err(e) => return Err(fail(e)),
            }
        }
        // A step of the backup in progress (or the start of the next one) after each group.
        if let Some(b) = backups.as_mut() {
            b.tick(&mut store);
        }
    }
    let stop = stop.unwrap_or_else(Instant::now);
    if let Some(b) = backups {
        b.join();
    }
    tidy_now(&mut store, &mut tidy);
    if let Some(p) = pending.take().or_else(|| baker.take(true)) {
        commit_at_stop(&mut store, p, stop, &mut busy).map_err(fail)?;
    }
    // A bake that waited (the last one, given at the stop, may be it): encoded and
    // written now.
    // (`later`, if it holds one, is the newer.)
    if let Some(bake) = later.or(waiting) {
        give_bake(&mut baker, &store, bake, &mut given);
        if let Some(p) = baker.take(true) {
            commit_at_stop(&mut store, p, stop, &mut busy).map_err(fail)?;
        }
    }
    Ok(())
}

/// Hands a [`Write::Bake`] to the baker, to leave out what the store's last bake has,
/// unless it is no newer than the last one `given` (which it then updates); any other
/// write is not a bake: nothing is done.
fn give_bake(baker: &mut Baker, store: &Store, w: Write, given: &mut Option<u64>) {
    if let Write::Bake {
        field,
        history,
        seq,
        step,
        blocks,
    } = w
    {
        if given.is_some_and(|g| seq <= g) {
            tracing::debug!(seq, "a bake no newer than the last one given is dropped");
            return;
        }
        *given = Some(seq);
        baker.give(Job {
            baked: store.baked(),
            field,
            history,
            seq,
            step,
            blocks,
        });
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::Instant;

    use loam_blocks::{BlockSettings, BlockWorld, MaterialTable};
    use loam_field::{CsgMode, EditOp, FieldSettings, Generator, LOG_VERSION, LogEntry};
    use tokio::sync::mpsc::unbounded_channel;

    use super::*;

    fn dig(seq: u64) -> Write {
        Write::Append(
            vec![LogRecord::Terrain(LogEntry {
                v: LOG_VERSION,
                seq,
                stroke: seq,
                op: EditOp::Sphere {
                    mode: CsgMode::Subtract,
                    center: [seq as f64, 0.0, 0.0],
                    radius: 1.5,
                    material: 0,
                    blend: 0.0,
                },
            })],
            None,
        )
    }

    fn world(dir: &std::path::Path) -> (std::path::PathBuf, Store, Field, Vec<u8>) {
        let path = dir.join("w.loam");
        let settings = FieldSettings::default();
        let store = Store::create(&path, "{}", &settings, None).unwrap();
        let g = Generator::noise(&Default::default(), &Default::default()).unwrap();
        let field = Field::new(settings, Arc::new(g)).unwrap();
        let blocks = BlockWorld::new(MaterialTable::standard(), BlockSettings::default())
            .unwrap()
            .save()
            .encode();
        (path, store, field, blocks)
    }

    fn bake(field: &Field, blocks: &[u8], seq: u64) -> Write {
        Write::Bake {
            field: Box::new(field.clone()),
            history: Box::new(History::default()),
            seq,
            step: 0,
            blocks: blocks.to_vec(),
        }
    }

    /// A bake no newer than the last one given to the baker is dropped (the store would
    /// refuse it after the newer one, and the writer's failure stops the server).
    #[test]
    fn a_bake_older_than_the_last_given_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let (_, store, field, blocks) = world(dir.path());
        let mut baker = Baker::start().unwrap();
        let mut given = None;
        give_bake(&mut baker, &store, bake(&field, &blocks, 2), &mut given);
        let p = baker.take(true).expect("the bake of 2 is encoded");
        give_bake(&mut baker, &store, bake(&field, &blocks, 1), &mut given);
        give_bake(&mut baker, &store, bake(&field, &blocks, 2), &mut given);
        assert!(!baker.busy, "neither was given");
        assert_eq!(given, Some(2));
        drop(p);
        give_bake(&mut baker, &store, bake(&field, &blocks, 3), &mut given);
        assert!(baker.busy && baker.take(true).is_some());
        assert_eq!(given, Some(3));
    }

    /// A bake that comes while the baker still encodes the last one (the baker starved of
    /// CPU: here held at a gate) waits beside the appends: the append after it is durable
    /// and acknowledged meanwhile (the writer used to wait for the baker first), and both
    /// bakes are written once the baker goes on.
    #[test]
    fn appends_go_on_while_the_baker_is_held() {
        let dir = tempfile::tempdir().unwrap();
        let (path, store, field, blocks) = world(dir.path());
        let bake = |seq| bake(&field, &blocks, seq);
        let gate = Arc::new(Mutex::new(()));
        let held = gate.lock().unwrap();
        let baker = Baker::start_gated(Some(gate.clone())).unwrap();
        let (tx, rx) = mpsc::channel();
        let (back, mut acks) = unbounded_channel();
        let stopping = AtomicBool::new(false);
        let writer = std::thread::spawn(move || run(store, baker, None, &rx, &stopping, &back));
        let durable = |acks: &mut tokio::sync::mpsc::UnboundedReceiver<Ack>, want: u64| {
            let deadline = Instant::now() + Duration::from_secs(5);
            loop {
                match acks.try_recv() {
                    Ok(Ack::Durable { seq, .. }) if seq == want => return,
                    Ok(Ack::Durable { .. }) => {}
                    Ok(Ack::Failed(e)) => panic!("{e}"),
                    Err(_) => {
                        assert!(Instant::now() < deadline, "op {want} not durable in 5 s");
                        std::thread::sleep(Duration::from_millis(5));
                    }
                }
            }
        };
        tx.send(dig(1)).unwrap();
        durable(&mut acks, 1);
        // The first bake goes to the baker, which waits at the gate; the second waits.
        tx.send(bake(1)).unwrap();
        tx.send(dig(2)).unwrap();
        durable(&mut acks, 2);
        tx.send(bake(2)).unwrap();
        tx.send(dig(3)).unwrap();
        durable(&mut acks, 3);
        drop(held);
        drop(tx);
        writer.join().unwrap().unwrap();
        let store = Store::open(&path).unwrap();
        let info = store.info().unwrap();
        assert_eq!((info.bake_seq, store.last_seq()), (2, 3));
    }

    /// Every log line (tracing event) of this test binary, as text: set as the global
    /// subscriber once (a subscriber set for one thread missed events whose call site
    /// another test's thread met first, when the tests ran in parallel).
    struct Capture(Mutex<Vec<String>>);

    /// The log lines so far that name `path`.
    fn log_lines(path: &std::path::Path) -> Vec<String> {
        static CAPTURE: std::sync::OnceLock<&'static Capture> = std::sync::OnceLock::new();
        let c = CAPTURE.get_or_init(|| {
            let c: &'static Capture = Box::leak(Box::new(Capture(Mutex::new(Vec::new()))));
            tracing::subscriber::set_global_default(Cap(c)).expect("no subscriber set before");
            c
        });
        let name = format!("{path:?}");
        let lines = c.0.lock().unwrap();
        lines
            .iter()
            .filter(|l| l.contains(&name))
            .cloned()
            .collect()
    }

    /// The global subscriber's handle on [`Capture`].
    struct Cap(&'static Capture);

    struct Message(String);

    impl tracing::field::Visit for Message {
        fn record_debug(&mut self, f: &tracing::field::Field, v: &dyn std::fmt::Debug) {
            if f.name() == "message" {
                self.0 = format!("{v:?}");
            }
        }
    }

    impl tracing::Subscriber for Cap {
        fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
            tracing::span::Id::from_u64(1)
        }
        fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
        fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
        fn event(&self, e: &tracing::Event<'_>) {
            let mut m = Message(String::new());
            e.record(&mut m);
            let line = format!("{} {}", e.metadata().level(), m.0);
            self.0.0.lock().unwrap().push(line);
        }
        fn enter(&self, _: &tracing::span::Id) {}
        fn exit(&self, _: &tracing::span::Id) {}
    }

    /// Another connection holds SQLite's write lock (as an `sqlite3` shell with `BEGIN
    /// EXCLUSIVE`) past the store's busy wait, while appends and a bake come: the writer
    /// neither fails nor acknowledges anything while the lock is held, and warns with how
    /// long the file has been busy and what it was writing; once the lock is let go every
    /// op is written and acknowledged, the bake committed, and a line says so.
    #[test]
    fn a_busy_file_holds_the_acks_and_stops_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let (path, mut store, field, blocks) = world(dir.path());
        // Tries of 100 ms: many of them fail while the lock is held.
        store.set_busy_wait(Duration::from_millis(100)).unwrap();
        let (tx, rx) = mpsc::channel();
        let (back, mut acks) = unbounded_channel();
        let baker = Baker::start().unwrap();
        let world = path.clone();
        let client = std::thread::spawn(move || {
            tx.send(dig(1)).unwrap();
            match acks.blocking_recv() {
                Some(Ack::Durable { seq: 1, .. }) => {}
                Some(Ack::Failed(e)) => panic!("{e}"),
                _ => panic!("op 1 is not acknowledged"),
            }
            let lock = rusqlite::Connection::open(&world).unwrap();
            lock.execute_batch("BEGIN EXCLUSIVE").unwrap();
            tx.send(dig(2)).unwrap();
            tx.send(bake(&field, &blocks, 2)).unwrap();
            tx.send(dig(3)).unwrap();
            std::thread::sleep(Duration::from_millis(800));
            assert!(
                acks.try_recv().is_err(),
                "nothing is acknowledged (nor failed) while the lock is held"
            );
            lock.execute_batch("ROLLBACK").unwrap();
            drop(lock);
            let mut durable = 0;
            while durable < 3 {
                match acks.blocking_recv() {
                    Some(Ack::Durable { seq, .. }) => durable = seq,
                    Some(Ack::Failed(e)) => panic!("{e}"),
                    None => panic!("the writer stopped"),
                }
            }
        });
        log_lines(&path);
        let done = run(store, baker, None, &rx, &AtomicBool::new(false), &back);
        client.join().unwrap();
        done.unwrap();
        let store = Store::open(&path).unwrap();
        assert_eq!(store.last_seq(), 3);
        assert_eq!(store.info().unwrap().bake_seq, 2);

        let lines = log_lines(&path);
        let warned = lines
            .iter()
            .filter(|l| {
                l.starts_with("WARN")
                    && l.contains("w.loam\" has been busy for")
                    && l.contains("(appending ops)")
                    && l.contains("ops waiting unacknowledged until it is let go: 1")
            })
            .count();
        assert!(warned >= 1, "{lines:#?}");
        let again: Vec<_> = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| l.contains("is written again after"))
            .collect();
        assert_eq!(again.len(), 1, "{lines:#?}");
        assert!(again[0].1.contains("(ops written: 1)"), "{lines:#?}");
        assert_eq!(again[0].0, lines.len() - 1, "{lines:#?}");
    }

    /// The server stops while another connection holds the lock: the ops queued before the
    /// stop and the last bake still go in once the lock is let go (within the stop's
    /// patience), and the writer then ends without an error.
    #[test]
    fn a_stop_while_busy_still_writes_what_queued() {
        let dir = tempfile::tempdir().unwrap();
        let (path, mut store, field, blocks) = world(dir.path());
        store.set_busy_wait(Duration::from_millis(100)).unwrap();
        let lock = rusqlite::Connection::open(&path).unwrap();
        lock.execute_batch("BEGIN EXCLUSIVE").unwrap();
        let (tx, rx) = mpsc::channel();
        let (back, mut acks) = unbounded_channel();
        tx.send(dig(1)).unwrap();
        tx.send(dig(2)).unwrap();
        tx.send(bake(&field, &blocks, 2)).unwrap();
        drop(tx);
        let stopping = AtomicBool::new(true);
        let baker = Baker::start().unwrap();
        let writer = std::thread::spawn(move || run(store, baker, None, &rx, &stopping, &back));
        std::thread::sleep(Duration::from_millis(500));
        assert!(
            acks.try_recv().is_err(),
            "nothing acknowledged while locked"
        );
        lock.execute_batch("ROLLBACK").unwrap();
        drop(lock);
        writer.join().unwrap().unwrap();
        assert!(matches!(acks.try_recv(), Ok(Ack::Durable { seq: 2, .. })));
        let store = Store::open(&path).unwrap();
        assert_eq!(store.last_seq(), 2);
        assert_eq!(store.info().unwrap().bake_seq, 2);
    }
}
