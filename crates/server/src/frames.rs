//! What waits in a client's outbox: encoded messages, and catch-ups whose bricks the
//! connection's writer encodes when their turn comes.
//!
//! A catch-up's bricks used to be encoded on the ordering thread. An adversarial trial
//! jumped one viewer between two places of some 5 800 edited bricks each: every jump held
//! everyone's ops (and joins) for seconds while the bricks were encoded. Now the ordering
//! thread only picks the bricks (shared, immutable) and queues them in the client's outbox;
//! the writer encodes them on a blocking thread and sends them before anything queued after
//! them, so the client's stream keeps its order.
//!
//! Also here: the outbox's caps and [`push`], which queues a frame or notes the client as
//! too slow.

use std::sync::atomic::Ordering as AtomicOrdering;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use loam_field::{Brick, BrickKey};
use tokio::sync::mpsc::error::TrySendError;

use super::order::Peer;
use crate::protocol::{BrickBox, CatchUp, ServerMessage, WireBrick, encode_brick};
use loam_session::Bucket;

/// Bytes of encoded bricks kept for catch-ups ([`BrickCache`]): 64 MiB, some 8 000 bricks of
/// sculpted noise terrain (~8 KiB each) or 680 of the worst case (96 KiB, samples zstd
/// cannot shrink).
const BRICK_CACHE_BYTES: u64 = 64 << 20;

/// A catch-up brick's bytes as counted against the outbox before it is encoded (an edited
/// brick encodes to a few KiB; about 8 KiB on sculpted noise terrain).
pub(crate) const BRICK_ESTIMATE: usize = 8 << 10;

/// The least a catch-up is charged to its client's budget, bytes
/// ([`crate::Limits::catch_up_bytes_per_second`]): finding a region's bricks costs the
/// server whether or not it finds any. At the default budget, 256 region changes a second.
pub(crate) const MIN_CATCH_UP_CHARGE: usize = 64 << 10;

/// Encoded bricks by key, with the id of the brick each was encoded from, shared by the
/// connections' writers: a brick that several clients catch up on, or one client again after
/// moving away and back, is encoded once.
///
/// Bounded by the bytes it holds ([`BRICK_CACHE_BYTES`] by default), not by a count: a count
/// of 4 096 held anything from 16 MiB to 384 MiB, and was cleared whole when full, so a
/// viewer moving between two places larger than it had everything encoded again. Now the
/// least recently used bricks go, one at a time (`hashlink::LruCache`, which the SQLite
/// binding already builds). What it holds changes only how much is encoded, never the bytes
/// sent: a hit needs the brick's id to match, and a brick encodes the same either way.
pub(crate) struct BrickCache {
    inner: Mutex<Held>,
    limit: u64,
}

/// A [`BrickCache`]'s bricks, least recently used first, and their weight.
struct Held {
    map: hashlink::LruCache<BrickKey, (u64, Arc<WireBrick>)>,
    bytes: u64,
}

/// What a cached brick weighs against its cache's bytes: its encoding and a little for the
/// entry.
fn weight(w: &WireBrick) -> u64 {
    w.data.len() as u64 + 64
}

impl BrickCache {
    /// A cache of at most `bytes` of encoded bricks (as weighed: encoded bytes plus 64 a
    /// brick). A brick heavier than `bytes` alone is encoded but not kept.
    pub fn new(bytes: u64) -> Self {
        Self {
            inner: Mutex::new(Held {
                map: hashlink::LruCache::new_unbounded(),
                bytes: 0,
            }),
            limit: bytes,
        }
    }

    /// The encoding of the brick `key` with id `id`, if held (it becomes the most recently
    /// used).
    fn get(&self, key: BrickKey, id: u64) -> Option<Arc<WireBrick>> {
        let mut held = self.inner.lock().expect("not poisoned");
        match held.map.get(&key) {
            Some((i, w)) if *i == id => Some(w.clone()),
            _ => None,
        }
    }

    /// Keeps `w` as the encoding of the brick `key` with id `id`, replacing what was held for
    /// `key`, and lets the least recently used go until the bytes fit. What it lets go is
    /// dropped after the lock.
    fn put(&self, key: BrickKey, id: u64, w: Arc<WireBrick>) {
        let mut gone = Vec::new();
        let mut held = self.inner.lock().expect("not poisoned");
        if let Some((_, old)) = held.map.remove(&key) {
            held.bytes -= weight(&old);
            gone.push(old);
        }
        if weight(&w) > self.limit {
            return;
        }
        held.bytes += weight(&w);
        held.map.insert(key, (id, w));
        while held.bytes > self.limit {
            let Some((_, (_, old))) = held.map.remove_lru() else {
                break;
            };
            held.bytes -= weight(&old);
            gone.push(old);
        }
        drop(held);
        drop(gone);
    }

    /// Bytes held (as weighed).
    #[cfg(test)]
    pub fn bytes(&self) -> u64 {
        self.inner.lock().expect("not poisoned").bytes
    }

    /// Bricks held.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.inner.lock().expect("not poisoned").map.len()
    }
}

impl Default for BrickCache {
    fn default() -> Self {
        Self::new(BRICK_CACHE_BYTES)
    }
}

/// One entry of a client's outbox.
pub(crate) enum Frame {
    /// A message, encoded.
    Ready(Bytes),
    /// A catch-up, encoded by the writer.
    CatchUp(Box<CatchUpJob>),
}

impl Frame {
    /// Bytes it counts against the outbox: a catch-up's, before it is encoded, the larger
    /// of each brick's wire estimate and the memory it holds (a hot brick, 96 KiB, that the
    /// field has since replaced lives on in the job).
    pub fn len(&self) -> usize {
        match self {
            Frame::Ready(b) => b.len(),
            Frame::CatchUp(j) => j.held,
        }
    }
}

impl From<Bytes> for Frame {
    fn from(b: Bytes) -> Self {
        Frame::Ready(b)
    }
}

/// A catch-up's bricks as the field held them after op `seq`, nearest to the viewer first.
pub(crate) struct CatchUpJob {
    pub seq: u64,
    pub region: BrickBox,
    pub keep: Option<BrickBox>,
    pub bricks: Vec<(BrickKey, Arc<Brick>)>,
    /// What it counts against the outbox ([`Frame::len`]), fixed when it is made.
    held: usize,
    /// Set when the connection's writer is gone: the encoding stops.
    pub cancel: Arc<std::sync::atomic::AtomicBool>,
    /// Largest message, bytes.
    pub max_message: usize,
    pub cache: Arc<BrickCache>,
    /// The client's catch-up budget, and the bytes of the catch-up's block records (a join's
    /// and a move's both set it); `None`: charged to nothing. See [`charge`].
    pub budget: Option<(Arc<Mutex<Bucket>>, usize)>,
}

impl CatchUpJob {
    /// A catch-up of `bricks` after op `seq`, with no budget to charge yet.
    pub fn new(
        seq: u64,
        region: BrickBox,
        keep: Option<BrickBox>,
        bricks: Vec<(BrickKey, Arc<Brick>)>,
        max_message: usize,
        cache: Arc<BrickCache>,
    ) -> Self {
        let held = 64
            + bricks
                .iter()
                .map(|(_, b)| b.heap_bytes().max(BRICK_ESTIMATE))
                .sum::<usize>();
        Self {
            seq,
            region,
            keep,
            bricks,
            held,
            cancel: Arc::default(),
            max_message,
            cache,
            budget: None,
        }
    }

    /// Its bytes as sent, estimated before it is encoded (what the budget is charged then).
    pub fn estimate(&self) -> usize {
        self.bricks.len() * BRICK_ESTIMATE + 64
    }

    /// The catch-up's messages (at least one: the last says `done`); none if cancelled
    /// before it was done.
    pub fn encode(self) -> Vec<Bytes> {
        let mut wires = Vec::with_capacity(self.bricks.len());
        for (k, b) in &self.bricks {
            if self.cancel.load(std::sync::atomic::Ordering::Relaxed) {
                return Vec::new();
            }
            wires.push(encoded(&self.cache, *k, b));
        }
        let (seq, region, keep) = (self.seq, self.region, self.keep);
        let frames = chunks(
            wires,
            self.max_message,
            |w: &WireBrick| w.data.len(),
            |bricks, done| {
                ServerMessage::CatchUp(CatchUp {
                    seq,
                    region,
                    keep,
                    bricks,
                    done,
                })
            },
        );
        if let Some((b, blocks)) = &self.budget {
            let bytes: usize = frames.iter().map(Bytes::len).sum();
            let charged = charge(*blocks, self.estimate());
            let owed = charge(*blocks, bytes) as f64 - charged as f64;
            b.lock().expect("not poisoned").charge(owed);
        }
        frames
    }
}

/// What a catch-up of `blocks` bytes of block records and `bricks` bytes of bricks costs its
/// client's budget: at least [`MIN_CATCH_UP_CHARGE`]. It is charged with the bricks'
/// estimate when the catch-up is queued (so that catch-ups queued before the first is
/// encoded see it) and set right once they are encoded (a refund if they came out smaller).
pub(crate) fn charge(blocks: usize, bricks: usize) -> usize {
    (blocks + bricks).max(MIN_CATCH_UP_CHARGE)
}

/// `brick` (at `key`) encoded, from `cache` if it holds this brick's encoding.
fn encoded(cache: &BrickCache, key: BrickKey, brick: &Brick) -> Arc<WireBrick> {
    if let Some(w) = cache.get(key, brick.id()) {
        return w;
    }
    let w = Arc::new(encode_brick(key, brick));
    cache.put(key, brick.id(), w.clone());
    w
}

/// Splits `items` (of `bytes(item)` encoded bytes each) into messages of about `max / 2`
/// bytes each, made by `make(items, last)`.
pub(super) fn chunks<T: Clone>(
    items: Vec<Arc<T>>,
    max: usize,
    bytes: impl Fn(&T) -> usize,
    mut make: impl FnMut(Vec<T>, bool) -> ServerMessage,
) -> Vec<Bytes> {
    let mut out = Vec::new();
    let mut part = Vec::new();
    let mut size = 0;
    for w in items {
        if size + bytes(&w) > max / 2 && !part.is_empty() {
            out.push(make(std::mem::take(&mut part), false).encode().into());
            size = 0;
        }
        size += bytes(&w) + 32;
        part.push((*w).clone());
    }
    out.push(make(part, true).encode().into());
    out
}

/// How much may wait for one client ([`crate::Limits::outbox_messages`] and
/// [`crate::Limits::outbox_bytes`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Outbox {
    pub messages: usize,
    pub bytes: usize,
}

/// Sends `frame` to `peer`; a full outbox (a client too slow: `cap`'s messages, or its
/// bytes beyond the peer's [`Peer::join_bytes`]) or a closed one is noted in `dead`.
pub(super) fn push(id: u64, peer: &Peer, frame: Bytes, cap: Outbox, dead: &mut Vec<(u64, String)>) {
    push_frame(id, peer, Frame::Ready(frame), cap, dead);
}

/// [`push`] for any [`Frame`] (a catch-up's bricks, encoded by the writer).
pub(super) fn push_frame(
    id: u64,
    peer: &Peer,
    frame: Frame,
    cap: Outbox,
    dead: &mut Vec<(u64, String)>,
) {
    // Nothing after a lost frame: the stream may end early, never have a hole (a resume
    // starts after the last message the client took).
    if dead.iter().any(|(d, _)| *d == id) {
        return;
    }
    let n = frame.len();
    let waiting = peer.link.queued.fetch_add(n, AtomicOrdering::Relaxed) + n;
    let most = cap.bytes.saturating_add(peer.join_bytes);
    let why = if waiting > most {
        format!("too slow: {waiting} bytes waiting (at most {most})")
    } else {
        match peer.link.tx.try_send(frame) {
            Ok(()) => return,
            Err(TrySendError::Full(_)) => format!("too slow: {} messages waiting", cap.messages),
            Err(TrySendError::Closed(_)) => "connection gone".into(),
        }
    };
    peer.link.queued.fetch_sub(n, AtomicOrdering::Relaxed);
    dead.push((id, why));
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use loam_field::{CaveSettings, FieldSettings, Generator, NoiseTerrainSettings};

    use super::*;
    use crate::protocol::decode_brick;

    /// A catch-up's bricks come out as `CatchUp` messages in the order given, the last one
    /// `done`; its client's budget ends up charged exactly what was sent (at least the
    /// minimum), whatever the estimate charged when it was queued.
    #[test]
    fn a_catch_up_is_encoded_in_order_and_charged_what_it_sent() {
        let g =
            Generator::noise(&NoiseTerrainSettings::default(), &CaveSettings::default()).unwrap();
        let s = FieldSettings::default();
        let keys: Vec<BrickKey> = (0..40)
            .map(|i| BrickKey::new(i % 5, -1 + i / 20, i / 5 % 4))
            .collect();
        let bricks: Vec<(BrickKey, Arc<Brick>)> = keys
            .iter()
            .map(|&k| (k, Arc::new(Brick::generate(&g, k, s.voxel_size, s.band()))))
            .collect();
        let budget = Arc::new(Mutex::new(Bucket::full(1e-9, 1e9, Instant::now())));
        let blocks = 100;
        let region = BrickBox {
            min: [0, -1, 0],
            max: [4, 0, 3],
        };
        let mut job = CatchUpJob::new(7, region, None, bricks, 64 << 10, Arc::default());
        // Generated bricks are hot: each holds its 96 KiB of samples until it is sent.
        assert_eq!(job.held, 64 + 40 * (96 << 10));
        let queued = charge(blocks, job.estimate());
        budget.lock().unwrap().charge(queued as f64);
        job.budget = Some((budget.clone(), blocks));
        let frames = job.encode();
        assert!(frames.len() > 1, "{} messages", frames.len());
        let mut got = Vec::new();
        for (i, f) in frames.iter().enumerate() {
            let ServerMessage::CatchUp(c) = ServerMessage::decode(f, 1 << 20).unwrap() else {
                panic!("not a catch-up");
            };
            assert_eq!((c.seq, c.done), (7, i + 1 == frames.len()));
            got.extend(
                c.bricks
                    .iter()
                    .map(|w| decode_brick(w, s.band()).unwrap().0),
            );
        }
        assert_eq!(got, keys);
        let sent: usize = frames.iter().map(Bytes::len).sum();
        let left = budget.lock().unwrap().tokens();
        assert_eq!(1e9 - left, charge(blocks, sent) as f64);
    }

    /// The brick cache never holds more than its bytes, however many bricks pass through it;
    /// a brick asked for again comes from it (the same encoding), and a brick of the same key
    /// but other samples (a new id) is encoded anew, equal to an uncached encoding.
    #[test]
    fn the_brick_cache_holds_at_most_its_bytes_and_knows_a_changed_brick() {
        let g =
            Generator::noise(&NoiseTerrainSettings::default(), &CaveSettings::default()).unwrap();
        let s = FieldSettings::default();
        let limit = 256 << 10;
        let cache = BrickCache::new(limit);
        let mut held_most = 0;
        let mut encoded_bytes = 0;
        // One brick read again after each new one stays the most recently used, never let go.
        let hot_key = BrickKey::new(0, 5, 0);
        let hot = Brick::generate(&g, hot_key, s.voxel_size, s.band());
        let hot_wire = encoded(&cache, hot_key, &hot);
        for i in 0..120 {
            let k = BrickKey::new(i % 12, -1 + i / 60, i / 12 % 5);
            let b = Brick::generate(&g, k, s.voxel_size, s.band());
            let w = encoded(&cache, k, &b);
            assert_eq!(*w, encode_brick(k, &b));
            encoded_bytes += weight(&w);
            // Asked for again at once: the same encoding, not a second one.
            assert!(Arc::ptr_eq(&w, &encoded(&cache, k, &b)), "brick {i}");
            assert!(cache.bytes() <= limit, "{} bytes held", cache.bytes());
            held_most = held_most.max(cache.bytes());
            assert!(Arc::ptr_eq(&hot_wire, &encoded(&cache, hot_key, &hot)));
        }
        // Bricks went through it several times its size; it stayed nearly full, lighter than
        // its bytes by less than one brick.
        assert!(encoded_bytes > 3 * limit, "{encoded_bytes} bytes encoded");
        assert!(
            held_most > limit - (96 << 10),
            "at most {held_most} bytes held"
        );
        assert!(cache.len() < 120);
        // A brick of the same key made again (an edit, a load) has a new id: encoded anew.
        let k = BrickKey::new(11, 0, 4);
        let old = Brick::generate(&g, k, s.voxel_size, s.band());
        let first = encoded(&cache, k, &old);
        let new = Brick::generate(&g, k, s.voxel_size, s.band());
        assert_ne!(old.id(), new.id());
        let second = encoded(&cache, k, &new);
        assert!(!Arc::ptr_eq(&first, &second));
        assert_eq!(*second, encode_brick(k, &new));
        assert!(Arc::ptr_eq(&second, &encoded(&cache, k, &new)));
    }
}
