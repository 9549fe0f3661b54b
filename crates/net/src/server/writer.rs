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

use super::backups::Backups;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use loam_field::{Field, History};
use loam_store::{BakeTidy, Baked, LogRecord, PreparedBake, Store, StoreError};

use crate::error::NetError;
use tokio::sync::mpsc::UnboundedSender;

/// What the writer does, in order.
pub(crate) enum Write {
    /// Append terrain and block ops (consecutive sequence numbers after the last append).
    /// Appends queued behind each other are committed together in one transaction, then
    /// `Durable` is reported with the last sequence number of them.
    Append(Vec<LogRecord>),
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
    /// The store failed; the writer has stopped.
    Failed(String),
}

/// The ordering thread's end of the writer.
pub(crate) struct Writer {
    tx: Option<mpsc::Sender<Write>>,
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
        let thread = std::thread::Builder::new()
            .name("loam-net-writer".into())
            .spawn(move || run(store, baker, backups, &rx, &back))?;
        Ok(Self {
            tx: Some(tx),
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
    pub fn finish(&mut self, last: Option<Write>) -> Result<(), NetError> {
        if let (Some(tx), Some(w)) = (&self.tx, last) {
            let _ = tx.send(w);
        }
        self.tx = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(r)) => Ok(r?),
            Some(Err(_)) => Err(NetError::ServerStopped("the writer thread panicked".into())),
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
            .name("loam-net-bake".into())
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

fn run(
    mut store: Store,
    mut baker: Baker,
    mut backups: Option<Backups>,
    rx: &mpsc::Receiver<Write>,
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
    loop {
        // Waiting for the next write: not past the baker's poll while a bake is on or waits
        // or its tidying waits, nor past the next backup step.
        let busy = baker.busy || pending.is_some() || tidy.is_some() || waiting.is_some();
        let mut wait = busy.then_some(BAKE_POLL);
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
            Some(Write::Append(mut entries)) => {
                while let Ok(next) = rx.try_recv() {
                    match next {
                        Write::Append(more) => entries.extend(more),
                        other => {
                            later = Some(other);
                            break;
                        }
                    }
                }
                Some(Write::Append(entries))
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
        let w = match w {
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
        // What is left of the last one is written at once.
        let new_bake = matches!(w, Some(Write::Bake { .. }));
        if new_bake && let Some(p) = pending.take() {
            tidy_now(&mut store, &mut tidy);
            tidy = Some(store.commit_bake_untidied(&p).map_err(fail)?.1);
        }
        match w {
            None => {
                tidy_now(&mut store, &mut tidy);
            }
            Some(Write::Append(entries)) => {
                let seq = entries.last().map_or(0, LogRecord::seq);
                let start = std::time::Instant::now();
                store.append_records(&entries).map_err(fail)?;
                let at = std::time::Instant::now();
                // While shutting down nobody listens any more.
                let _ = back.send(Ack::Durable {
                    seq,
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
        if let Some(p) = pending.as_mut()
            && store.write_bake_part(p, BAKE_PART_BYTES).map_err(fail)?
            && let Some(p) = pending.take()
        {
            tidy_now(&mut store, &mut tidy);
            tidy = Some(store.commit_bake_untidied(&p).map_err(fail)?.1);
        }
        // A step of the backup in progress (or the start of the next one) after each group.
        if let Some(b) = backups.as_mut() {
            b.tick(&mut store);
        }
    }
    if let Some(b) = backups {
        b.join();
    }
    tidy_now(&mut store, &mut tidy);
    if let Some(p) = pending.take().or_else(|| baker.take(true)) {
        store.commit_bake(p).map_err(fail)?;
    }
    // A bake that waited (the last one, given at the stop, may be it): encoded and
    // written now.
    // (`later`, if it holds one, is the newer.)
    if let Some(bake) = later.or(waiting) {
        give_bake(&mut baker, &store, bake, &mut given);
        if let Some(p) = baker.take(true) {
            store.commit_bake(p).map_err(fail)?;
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
        Write::Append(vec![LogRecord::Terrain(LogEntry {
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
        })])
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
        let writer = std::thread::spawn(move || run(store, baker, None, &rx, &back));
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
}
