//! Clients' hash requests ([`crate::protocol::ClientMessage::Hash`]), served a few at a time.
//!
//! A hash reads every stored brick of its region and compares it with the generator's, so
//! the whole world's grows with the world (28 ms on a 40 000-op world in a debug
//! build). Computed as they came, on the ordering thread, one client asking 100 times a
//! second held everyone's ops behind its hashes (a fresh-user trial: p99 from 40 ms to
//! 11 s). Now each client may have [`MAX_WAITING`] requests waiting, and a hash that took
//! `d` lets the next one start only `DUTY_FACTOR · d` later, so hashing takes at most a
//! quarter of the thread and ops never wait behind more than one hash.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

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

impl Order {
    /// Queues `client`'s hash request, or disconnects the client if it has too many waiting.
    pub(in crate::server) fn queue_hash(
        &mut self,
        client: u64,
        request: u64,
        region: Option<BrickBox>,
    ) {
        if let Err(why) = self.hashes.push(client, request, region) {
            self.bury(vec![(client, why)]);
        }
    }

    /// Answers waiting hash requests while nothing is in flight and the budget allows (the
    /// hash is of the field after every op released, as the client holds it once the
    /// answer comes after those ops).
    pub(in crate::server) fn serve_hashes(&mut self) {
        while self.idle() {
            let Some(w) = self.hashes.next(Instant::now()) else {
                return;
            };
            let Some(p) = self.peers.get(&w.client) else {
                // Gone without a leave (the store failed): nobody waits for the answer.
                continue;
            };
            let start = Instant::now();
            let hash = self.hash(w.region);
            let blocks = self.block_hash(w.region);
            let msg = ServerMessage::Hash {
                request: w.request,
                seq: self.seq,
                region: w.region,
                hash: hash.0,
                blocks,
            };
            let mut dead = Vec::new();
            push(w.client, p, msg.encode().into(), self.outbox, &mut dead);
            self.bury(dead);
            let end = Instant::now();
            self.hashes.took(end, end - start);
        }
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
