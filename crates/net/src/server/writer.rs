//! The writer thread: the one owner of the world store. The ordering thread hands it a group
//! of ops at a time and goes on applying the next ones while the group is synced to disk.
//!
//! A bake's encoding (quantising and compressing every brick changed since the last bake,
//! about 2 ms a brick) runs on a second thread, the baker, while the writer goes on appending
//! groups; the writer then writes the encoded bake between two groups. Before, a bake held
//! every append behind it for its whole encoding (200 ms for 81 bricks), and every client's
//! edits with them.

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use loam_field::{Field, History};
use loam_store::{BakedBricks, LogRecord, PreparedBake, Store, StoreError};

use crate::error::NetError;
use tokio::sync::mpsc::UnboundedSender;

/// What the writer does, in order.
pub(crate) enum Write {
    /// Append a group (terrain and block ops) in one transaction, then report `Durable`
    /// with its last sequence number.
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
    /// Everything up to this sequence number is durable.
    Durable(u64),
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
    pub fn start(store: Store, back: UnboundedSender<Ack>) -> std::io::Result<Self> {
        let (tx, rx) = mpsc::channel::<Write>();
        let baker = Baker::start()?;
        let thread = std::thread::Builder::new()
            .name("loam-net-writer".into())
            .spawn(move || run(store, baker, &rx, &back))?;
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
    baked: BakedBricks,
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
        let (jobs, rx) = mpsc::channel::<Job>();
        let (tx, done) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("loam-net-bake".into())
            .spawn(move || {
                for j in rx {
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

/// How often the writer looks whether the baker is done while no write comes.
const BAKE_POLL: Duration = Duration::from_millis(2);

fn run(
    mut store: Store,
    mut baker: Baker,
    rx: &mpsc::Receiver<Write>,
    back: &UnboundedSender<Ack>,
) -> Result<(), StoreError> {
    let fail = |e: StoreError| {
        let _ = back.send(Ack::Failed(crate::error_chain(&e)));
        e
    };
    loop {
        let w = if baker.busy {
            match rx.recv_timeout(BAKE_POLL) {
                Ok(w) => Some(w),
                Err(mpsc::RecvTimeoutError::Timeout) => None,
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        } else {
            match rx.recv() {
                Ok(w) => Some(w),
                Err(_) => break,
            }
        };
        // An encoded bake is written before the next write, and a new bake waits for the
        // last one (so that it leaves out what that one writes).
        let wait = matches!(w, Some(Write::Bake { .. }));
        if let Some(p) = baker.take(wait) {
            store.commit_bake(p).map_err(fail)?;
        }
        match w {
            None => {}
            Some(Write::Append(entries)) => {
                let seq = entries.last().map_or(0, LogRecord::seq);
                store.append_records(&entries).map_err(fail)?;
                // While shutting down nobody listens any more.
                let _ = back.send(Ack::Durable(seq));
            }
            Some(Write::Bake {
                field,
                history,
                seq,
                step,
                blocks,
            }) => baker.give(Job {
                baked: store.baked_bricks(),
                field,
                history,
                seq,
                step,
                blocks,
            }),
        }
    }
    if let Some(p) = baker.take(true) {
        store.commit_bake(p).map_err(fail)?;
    }
    Ok(())
}
