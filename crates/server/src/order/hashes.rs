//! Clients' hash requests ([`crate::protocol::ClientMessage::Hash`]), served a few at a time
//! beside the ordering of ops.
//!
//! A hash reads every stored brick of its region, so the whole world's grows with the world
//! (about 0.16 ms a differing brick). Computed on the ordering thread, one client asking 100
//! times a second held everyone's ops behind its hashes (a fresh-user trial: p99 from 40 ms
//! to 11 s), and one whole-world hash of a large world held them for as long as it took.
//! Now the ordering thread only marks where the hash is taken
//! ([`ServerMessage::HashAt`], in the client's stream after the ops it covers) and hands a
//! snapshot of the field (a clone: shared bricks) to the **hasher** thread, which computes it
//! while ops go on; the answer ([`ServerMessage::Hash`]) follows when it is done. One hash
//! runs at a time; each client may have [`MAX_WAITING`] requests waiting, and a hash that
//! took `d` lets the next one start only `DUTY_FACTOR · d` later, so hashing takes at most a
//! quarter of a core.

use std::collections::VecDeque;
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use loam_field::{BrickKey, Field, FieldHash};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::{Order, push};
use crate::protocol::{BrickBox, ServerMessage};

/// Hash requests one client may have waiting; one more disconnects it.
const MAX_WAITING: usize = 4;

/// After a hash of `d`, the next waits `DUTY_FACTOR · d` (hashes take at most
/// `1 / (1 + DUTY_FACTOR)` of the ordering thread).
const DUTY_FACTOR: u32 = 3;

/// The waiting requests, oldest first, and when the next may start.
#[derive(Debug)]
pub(crate) struct HashQueue {
    waiting: VecDeque<Waiting>,
    next_at: Instant,
}

#[derive(Debug)]
struct Waiting {
    client: u64,
    request: u64,
    region: Option<BrickBox>,
}

impl Default for HashQueue {
    fn default() -> Self {
        Self {
            waiting: VecDeque::new(),
            next_at: Instant::now(),
        }
    }
}

impl HashQueue {
    /// Queues a request.
    ///
    /// # Errors
    /// The reason to disconnect the client: it already has [`MAX_WAITING`] waiting.
    fn push(&mut self, client: u64, request: u64, region: Option<BrickBox>) -> Result<(), String> {
        let mine = self.waiting.iter().filter(|w| w.client == client).count();
        if mine >= MAX_WAITING {
            return Err(format!(
                "more than {MAX_WAITING} hash requests waiting (ask for the next when one is answered)"
            ));
        }
        self.waiting.push_back(Waiting {
            client,
            request,
            region,
        });
        Ok(())
    }

    /// Whether a request may start at `now`; the oldest one if so.
    fn next(&mut self, now: Instant) -> Option<Waiting> {
        if now < self.next_at {
            return None;
        }
        self.waiting.pop_front()
    }

    /// Drops `client`'s waiting requests: its connection is gone. (A client that resumes
    /// keeps its id; the answers to its old connection's requests are not its new one's,
    /// nor do they count against its [`MAX_WAITING`].)
    pub(crate) fn forget(&mut self, client: u64) {
        self.waiting.retain(|w| w.client != client);
    }

    /// A hash took `d`, ending at `now`.
    fn took(&mut self, now: Instant, d: Duration) {
        self.next_at = now + d * DUTY_FACTOR;
    }
}

/// A hash for the hasher thread: the field as it was after op `seq`.
struct Job {
    field: Field,
    region: Option<BrickBox>,
    answer: Answer,
}

/// Who a hash is for and what goes with it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Answer {
    client: u64,
    /// The connection that asked: a client that resumed on another one is not answered.
    conn: u64,
    request: u64,
    seq: u64,
    region: Option<BrickBox>,
    /// The block world's hash at `seq` (taken on the ordering thread, where the blocks live).
    blocks: [u8; 32],
}

/// A hash the hasher thread finished.
pub(crate) struct Done {
    answer: Answer,
    hash: FieldHash,
    took: Duration,
}

/// The hasher thread's ends: jobs in, finished hashes out, and the one running.
pub(crate) struct Hasher {
    jobs: std_mpsc::Sender<Job>,
    pub(crate) done: UnboundedReceiver<Done>,
    /// Who the running hash is for (`None`: none runs).
    running: Option<Answer>,
    /// Whether the thread runs (else hashes are computed on the ordering thread).
    pub(crate) alive: bool,
}

impl Hasher {
    /// Starts the hasher thread; it ends when the `Hasher` is dropped (after the hash it is
    /// computing, if any).
    ///
    /// # Errors
    /// The thread could not be started.
    pub(crate) fn start() -> std::io::Result<Self> {
        let (jobs, rx) = std_mpsc::channel::<Job>();
        let (tx, done) = unbounded_channel();
        std::thread::Builder::new()
            .name("loam-server-hash".into())
            .spawn(move || run_hasher(&rx, &tx))?;
        Ok(Self {
            jobs,
            done,
            running: None,
            alive: true,
        })
    }
}

fn run_hasher(jobs: &std_mpsc::Receiver<Job>, done: &UnboundedSender<Done>) {
    while let Ok(job) = jobs.recv() {
        let start = Instant::now();
        let hash = hash_of(&job.field, job.region);
        drop(job.field);
        let took = start.elapsed();
        if done
            .send(Done {
                answer: job.answer,
                hash,
                took,
            })
            .is_err()
        {
            return;
        }
    }
}

/// The field hash over `region` (every brick when `None`).
pub(crate) fn hash_of(field: &Field, region: Option<BrickBox>) -> FieldHash {
    match region {
        None => field.hash(),
        Some(b) => field.hash_region(
            BrickKey::new(b.min[0], b.min[1], b.min[2]),
            BrickKey::new(b.max[0], b.max[1], b.max[2]),
        ),
    }
}

impl Order {
    /// Queues `client`'s hash request, or disconnects the client if it has too many waiting.
    pub(crate) fn queue_hash(&mut self, client: u64, request: u64, region: Option<BrickBox>) {
        if let Err(why) = self.hashes.push(client, request, region) {
            self.bury(vec![(client, why)]);
        }
    }

    /// Starts the next waiting hash request while nothing is in flight, no hash is running
    /// and the budget allows: marks it in the client's stream (the hash is of the field after
    /// every op released, as the client holds it on reading the mark) and hands the field to
    /// the hasher thread.
    pub(crate) fn serve_hashes(&mut self) {
        while self.idle() && self.hasher.running.is_none() {
            let Some(w) = self.hashes.next(Instant::now()) else {
                return;
            };
            let Some(p) = self.clients.peers.get(&w.client) else {
                // Gone without a leave (the store failed): nobody waits for the answer.
                continue;
            };
            let answer = Answer {
                client: w.client,
                conn: p.conn,
                request: w.request,
                seq: self.journal.last_seq(),
                region: w.region,
                blocks: self.block_hash(w.region),
            };
            let mark = ServerMessage::HashAt {
                request: w.request,
                seq: self.journal.last_seq(),
                region: w.region,
            };
            let mut dead = Vec::new();
            push(
                w.client,
                p,
                mark.encode().into(),
                self.clients.outbox,
                &mut dead,
            );
            if !dead.is_empty() {
                self.bury(dead);
                continue;
            }
            let job = Job {
                field: self.field.clone(),
                region: w.region,
                answer,
            };
            if self.hasher.jobs.send(job).is_err() {
                // The hasher thread is gone (it panicked): hash here rather than never.
                let start = Instant::now();
                let hash = hash_of(&self.field, w.region);
                self.hash_done(Done {
                    answer,
                    hash,
                    took: start.elapsed(),
                });
                continue;
            }
            self.hasher.running = Some(answer);
        }
    }

    /// The hasher thread stopped (it panicked): the client whose hash it was computing is
    /// disconnected (the field it hashed is gone, and a hash of another one would not be at
    /// the mark it was sent), to resume and ask again; hashes are computed here from now on.
    pub(crate) fn hasher_gone(&mut self) {
        tracing::error!(
            "the hasher thread stopped; hashes are now computed on the ordering thread"
        );
        self.hasher.alive = false;
        if let Some(a) = self.hasher.running.take()
            && self
                .clients
                .peers
                .get(&a.client)
                .is_some_and(|p| p.conn == a.conn)
        {
            self.bury(vec![(
                a.client,
                "the server lost a hash it was computing".into(),
            )]);
        }
    }

    /// Sends a finished hash to the connection that asked for it, if it is still there.
    pub(crate) fn hash_done(&mut self, done: Done) {
        self.hasher.running = None;
        self.hashes.took(Instant::now(), done.took);
        let a = done.answer;
        let Some(p) = self
            .clients
            .peers
            .get(&a.client)
            .filter(|p| p.conn == a.conn)
        else {
            return;
        };
        let msg = ServerMessage::Hash {
            request: a.request,
            seq: a.seq,
            region: a.region,
            hash: done.hash.0,
            blocks: a.blocks,
        };
        let mut dead = Vec::new();
        push(
            a.client,
            p,
            msg.encode().into(),
            self.clients.outbox,
            &mut dead,
        );
        self.bury(dead);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_may_have_four_waiting_and_the_budget_spaces_them() {
        let mut q = HashQueue::default();
        for r in 0..MAX_WAITING as u64 {
            q.push(7, r, None).expect("within the limit");
        }
        // Another client is not held to client 7's count.
        q.push(8, 0, None).expect("another client");
        let err = q.push(7, 99, None).expect_err("a fifth waiting");
        assert!(err.contains("more than 4 hash requests waiting"), "{err}");
        let t0 = Instant::now();
        let first = q.next(t0).expect("nothing ran yet");
        assert_eq!((first.client, first.request), (7, 0));
        // A hash of 10 ms: the next may start 30 ms after it ended, not before.
        q.took(t0, Duration::from_millis(10));
        assert!(q.next(t0 + Duration::from_millis(29)).is_none());
        let second = q.next(t0 + Duration::from_millis(30)).expect("budget back");
        assert_eq!((second.client, second.request), (7, 1));
        // Answered requests make room again.
        q.push(7, 100, None)
            .expect("one answered, one more may wait");
        assert_eq!(q.waiting.len(), MAX_WAITING + 1 - 2 + 1);
        // A client that left (and may come back with its id) leaves nothing waiting.
        q.forget(7);
        assert_eq!(q.waiting.len(), 1, "client 8's request stays");
        for r in 0..MAX_WAITING as u64 {
            q.push(7, 200 + r, None)
                .expect("a fresh start after leaving");
        }
    }
}
