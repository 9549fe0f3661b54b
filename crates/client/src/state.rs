//! The client's fields: the server's order (confirmed) and its own ops on top (predicted).
//!
//! ```text
//!  confirmed ──(own pending ops, in sending order)──▶ predicted   (what the player sees)
//!      ▲
//!      └── server ops in sequence order, patches, catch-up bricks
//! ```
//!
//! `predicted` is valid while it equals `confirmed` with the pending ops applied in order:
//! the server confirming the oldest pending op keeps it valid (the confirmed field then *is*
//! the prediction when that was the only one). Anything else — another client's op before
//! ours, a refusal, a patch — marks it stale, and it is rebuilt from `confirmed` by
//! re-applying the pending ops in the server's order.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use loam_blocks::{
    BlockDelta, BlockOp, BlockPos, BlockSettings, BlockWorld, MaterialTable, PieceId,
};
use loam_field::{BrickKey, EditOp, Field, FieldHash, Generator, LogEntry, PlannedEdit, SampleBox};
use loam_physics::{PhysicsSettings, PhysicsWorld};

mod catch_up;
#[cfg(test)]
mod patch_tests;
mod pending;
#[cfg(test)]
mod predict_tests;
#[cfg(test)]
mod resume_tests;
#[cfg(test)]
mod test_state;

use super::strokes::OwnStrokes;
use crate::error::ClientError;
use crate::protocol::{BrickBox, Player, ServerMessage, Welcome, WorldMeta, decode_samples};
use loam_protocol::blocks::block_hash;
use loam_protocol::interest::op_reach;

/// Something the client learnt from the server ([`crate::Client::next_event`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ClientEvent {
    /// An op in the server's order was applied to the confirmed field.
    Op {
        /// Its sequence number.
        seq: u64,
        /// The author's client id.
        author: u64,
        /// The author's op id.
        op_id: u64,
        /// The server's stroke id (what an undo names).
        stroke: u64,
        /// Whether it is one of this client's pending ops.
        own: bool,
        /// For an own op: the time from sending it to this.
        latency: Option<Duration>,
    },
    /// The server's bricks after op `seq` replaced the client's where it could not compute
    /// them itself (an undo or redo, or an op reading samples outside its region): the
    /// field changed after the op's own [`ClientEvent::Op`].
    Patched {
        /// The op's sequence number.
        seq: u64,
        /// Bricks replaced.
        bricks: usize,
    },
    /// One of this client's ops was refused (the world is unchanged).
    Refused {
        /// The op id.
        op_id: u64,
        /// The server's reason.
        reason: String,
    },
    /// The client's region was (re)filled from the server.
    CaughtUp {
        /// The sequence number the bricks are at.
        seq: u64,
        /// The region now held.
        region: BrickBox,
        /// Bricks received.
        bricks: usize,
    },
    /// A block op in the server's order was applied to the block world (its records).
    BlockOp {
        /// Its sequence number.
        seq: u64,
        /// The author's client id (0: the server).
        author: u64,
        /// The author's op id.
        op_id: u64,
        /// The op.
        op: BlockOp,
        /// Whether it is one of this client's ops.
        own: bool,
        /// For an own op: the time from sending it to this.
        latency: Option<Duration>,
        /// Records it changed (held blocks and pieces, made, changed or gone).
        changed: usize,
    },
    /// The server's block world changed by itself after op `seq` (blocks that lost their
    /// support, pieces that came to rest, breaks), and the records were applied.
    Blocks {
        /// The op they follow.
        seq: u64,
        /// Records changed.
        changed: usize,
    },
    /// The server says something the player should know ([`loam_protocol::Notice`]), e.g.
    /// that its world's log is out of reach and ops wait.
    Notice {
        /// What about.
        kind: loam_protocol::NoticeKind,
        /// For the player.
        text: String,
    },
    /// Ops sent before a reconnect whose fate the server could not tell (it restarted):
    /// dropped from the prediction. They were never acknowledged.
    Lost {
        /// Their op ids.
        op_ids: Vec<u64>,
    },
    /// Own ops sent before a reconnect that the server had taken (up to its welcome's last
    /// op id): each was applied, and is in the world the client resumes into (its record
    /// comes again in the server's order, as anyone's), or refused with the refusal lost
    /// with the connection. The server will not take them again; their round trip is not
    /// known.
    Resumed {
        /// Their op ids (terrain and block ops), ascending.
        op_ids: Vec<u64>,
    },
    /// Other players joined, changed (moved, aimed) or left ([`crate::Client::players`]
    /// holds them as they are now).
    Presence {
        /// Ids of the players that joined or changed.
        changed: Vec<u64>,
        /// Ids of the players that left.
        left: Vec<u64>,
    },
    /// The answer to [`crate::Client::ping`].
    Pong {
        /// The time from sending the ping to this.
        rtt: Duration,
    },
}

/// One own op not yet confirmed.
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    pub op_id: u64,
    /// The client's stroke id it was sent in.
    pub stroke: u64,
    pub op: EditOp,
    pub sent_at: Instant,
    /// The message to send again after a reconnect.
    pub message: Vec<u8>,
    /// Whether it was handed to the connection (else it was queued while disconnected: the
    /// server cannot have it, and the next reconnect sends it whatever the server says).
    pub sent: bool,
    /// The op planned on the field it was predicted on: the confirmed field when nothing
    /// was pending, else the prediction (the confirmed field with the pending ops before it
    /// committed). Written as it is when the server confirms the ops in that order (the
    /// field's revision then matches the plan's), not planned again.
    pub planned: Option<PlannedEdit>,
}

/// The server's hash and the local one over the same bricks at the same sequence number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncReport {
    /// The sequence number both hashes are at.
    pub seq: u64,
    /// The region hashed (every brick when `None`).
    pub region: Option<BrickBox>,
    /// The server's field hash.
    pub server: FieldHash,
    /// The client's confirmed field hash.
    pub local: FieldHash,
    /// The server's block hash over the region ([`crate::protocol::block_hash`]).
    pub blocks_server: [u8; 32],
    /// The client's block hash over the region.
    pub blocks_local: [u8; 32],
}

impl SyncReport {
    /// Whether the client's field and blocks equal the server's over the region (blocks:
    /// held ones and resting rubble; see [`crate::protocol::block_hash`]).
    pub fn matches(&self) -> bool {
        self.server == self.local && self.blocks_server == self.blocks_local
    }
}

/// One own block op not yet confirmed.
#[derive(Debug, Clone)]
pub(crate) struct PendingBlock {
    pub sent_at: Instant,
    /// The message to send again after a reconnect.
    pub message: Vec<u8>,
    /// Whether it was handed to the connection (as [`Pending::sent`]).
    pub sent: bool,
}

struct BlockCatching {
    region: BrickBox,
    keep: Option<BrickBox>,
    held: BTreeSet<BlockPos>,
    pieces: BTreeSet<PieceId>,
}

struct Catching {
    region: BrickBox,
    keep: Option<BrickBox>,
    got: BTreeSet<BrickKey>,
}

/// The server's blocks in a client's region, as records it applies without deciding
/// anything, with its own block ops on their way and the block catch-up under way.
pub(crate) struct Replica {
    /// The block world (a replica of the server's records).
    pub world: BlockWorld,
    /// The physics world the replica's bodies live in (no terrain colliders).
    pub physics: PhysicsWorld,
    /// Own block ops sent and not yet back, by op id.
    pub pending: BTreeMap<u64, PendingBlock>,
    catching: Option<BlockCatching>,
    /// Every block delta applied to `world`, in order, while a mirror follows them
    /// ([`crate::Client::mirror_blocks`]); `None` when nobody does.
    pub mirror: Option<Vec<BlockDelta>>,
}

/// The prediction: the confirmed field with the own pending ops written on top.
#[derive(Default)]
struct Prediction {
    /// The predicted field (`None`: not built, or nothing pending).
    field: Option<Field>,
    /// The pending ops changed since it was built: build it again.
    stale: bool,
    /// The bricks its ops wrote (where it may differ from the confirmed field).
    keys: BTreeSet<BrickKey>,
}

pub(crate) struct State {
    pub id: u64,
    /// The key a reconnect shows to keep [`State::id`] ([`crate::protocol::Welcome::resume_key`]).
    pub resume_key: [u64; 2],
    pub meta: WorldMeta,
    generator: Arc<Generator>,
    confirmed: Field,
    /// The confirmed field with the own pending ops on top ([`State::predicted`]).
    prediction: Prediction,
    /// The bricks of the shown field ([`State::predicted`]) that may differ from the one
    /// shown when they were last taken ([`State::take_changed`]); `None`: any may.
    changed: Option<BTreeSet<BrickKey>>,
    pub pending: VecDeque<Pending>,
    pub last_seq: u64,
    pub region: Option<BrickBox>,
    catching: Option<Catching>,
    /// Whether the last handshake's catch-up has completed.
    pub caught_up: bool,
    pub next_op_id: u64,
    pub events: VecDeque<ClientEvent>,
    pub hashes: BTreeMap<u64, SyncReport>,
    /// Per hash request marked by the server ([`ServerMessage::HashAt`]): the confirmed field
    /// and the local block hash at the mark, for the answer that follows.
    pub(super) hash_marks: BTreeMap<u64, (Field, [u8; 32])>,
    /// The server's blocks in the client's region.
    pub replica: Replica,
    /// Own strokes the server confirmed, for undo and redo.
    pub own: OwnStrokes,
    /// Own undo (`true`) and redo ops on their way, by op id, with their client stroke.
    pub reverting: BTreeMap<u64, (bool, u64)>,
    /// The other players, by id.
    pub players: BTreeMap<u64, Player>,
}

/// Most changed bricks named before a client notes that any may have changed (a compare of
/// every brick is as cheap then).
const MAX_NAMED_BRICKS: usize = 1 << 14;

/// The bricks holding the samples of `b`.
fn bricks_meeting(b: SampleBox) -> impl Iterator<Item = BrickKey> {
    let (lo, hi) = (b.min.brick().0, b.max.brick().0);
    (lo.x..=hi.x).flat_map(move |x| {
        (lo.y..=hi.y).flat_map(move |y| (lo.z..=hi.z).map(move |z| BrickKey::new(x, y, z)))
    })
}

fn key_in(b: &BrickBox, k: BrickKey) -> bool {
    b.contains([k.x, k.y, k.z])
}

impl State {
    pub fn new(welcome: &Welcome, generator: Arc<Generator>) -> Result<Self, ClientError> {
        let mut confirmed = Field::new(welcome.world.field, generator.clone())?;
        confirmed.set_hot_capacity(64);
        Ok(Self {
            id: welcome.client_id,
            resume_key: welcome.resume_key,
            meta: welcome.world.clone(),
            generator,
            confirmed,
            prediction: Prediction::default(),
            changed: None,
            pending: VecDeque::new(),
            last_seq: 0,
            region: None,
            catching: None,
            caught_up: false,
            next_op_id: 1,
            events: VecDeque::new(),
            hashes: BTreeMap::new(),
            hash_marks: BTreeMap::new(),
            replica: Replica {
                world: BlockWorld::new(MaterialTable::standard(), BlockSettings::default())
                    .map_err(ClientError::Blocks)?,
                physics: PhysicsWorld::new(PhysicsSettings::default())
                    .map_err(|e| ClientError::Blocks(e.into()))?,
                pending: BTreeMap::new(),
                catching: None,
                mirror: None,
            },
            own: OwnStrokes::default(),
            reverting: BTreeMap::new(),
            players: BTreeMap::new(),
        })
    }

    /// Notes that the shown field may have changed in the bricks `changed` meets.
    fn touched(&mut self, changed: Option<SampleBox>) {
        if let (Some(keys), Some(b)) = (self.changed.as_mut(), changed) {
            keys.extend(bricks_meeting(b));
            self.cap_changed();
        }
    }

    /// Notes that the shown field may have changed in brick `k`.
    fn touched_brick(&mut self, k: BrickKey) {
        if let Some(keys) = self.changed.as_mut() {
            keys.insert(k);
            self.cap_changed();
        }
    }

    /// A client nobody takes the changed bricks from (a bot, the load benchmark's) would
    /// collect every brick it ever touched: past [`MAX_NAMED_BRICKS`] it notes "any".
    fn cap_changed(&mut self) {
        if self
            .changed
            .as_ref()
            .is_some_and(|k| k.len() > MAX_NAMED_BRICKS)
        {
            self.changed = None;
        }
    }

    /// Notes that any brick of the shown field may have changed (a new handshake).
    pub fn all_changed(&mut self) {
        self.changed = None;
    }

    /// The bricks of the shown field ([`State::predicted`], brought up to date first) that
    /// may differ from the one shown at the last call, ascending; `None`: any may (none
    /// taken yet, a handshake since, or more than [`MAX_NAMED_BRICKS`] named). Every brick whose samples differ is in it; a brick
    /// written back to the same samples may be too.
    pub fn take_changed(&mut self) -> Option<BTreeSet<BrickKey>> {
        self.predicted();
        self.changed.replace(BTreeSet::new())
    }

    fn voxel_size(&self) -> f64 {
        self.meta.field.voxel_size
    }

    /// Queues an own block op; returns its id and message.
    pub fn block_op(&mut self, op: &BlockOp) -> (u64, Vec<u8>) {
        let op_id = self.next_op_id;
        self.next_op_id += 1;
        let message = crate::protocol::ClientMessage::BlockOp {
            op_id,
            op: op.encode(),
        }
        .encode();
        self.replica.pending.insert(
            op_id,
            PendingBlock {
                sent_at: Instant::now(),
                message: message.clone(),
                sent: true,
            },
        );
        (op_id, message)
    }

    /// The block hash over `region` (every block when `None`).
    pub fn block_hash(&self, region: Option<BrickBox>) -> [u8; 32] {
        block_hash(&self.replica.world, region, self.voxel_size())
    }

    fn apply_delta(&mut self, delta: &BlockDelta) -> Result<(), ClientError> {
        self.replica
            .world
            .apply_delta(&mut self.replica.physics, delta)
            .map_err(|e| ClientError::Protocol(format!("block records: {e}")))?;
        if let Some(m) = &mut self.replica.mirror
            && !delta.is_empty()
        {
            m.push(delta.clone());
        }
        Ok(())
    }

    /// Starts (or stops) keeping the applied block deltas for a mirror. Starting queues one
    /// delta holding every held block and piece as they are now, so a mirror that starts
    /// empty and applies the queue in order holds what `blocks` holds.
    pub fn mirror_blocks(&mut self, on: bool) {
        if !on {
            self.replica.mirror = None;
            return;
        }
        // The same records a saved block world holds.
        let file = self.replica.world.save();
        let now = BlockDelta {
            held: file.blocks,
            pieces: file.pieces,
            ..Default::default()
        };
        self.replica.mirror = Some(if now.is_empty() {
            Vec::new()
        } else {
            vec![now]
        });
    }

    pub fn confirmed(&self) -> &Field {
        &self.confirmed
    }

    /// Takes one message from the server.
    ///
    /// # Errors
    /// [`ClientError::Disconnected`] for a `Disconnect`; [`ClientError::Protocol`] for a message out
    /// of place; [`ClientError::Brick`] / [`ClientError::Decode`]-like failures of the contents;
    /// [`ClientError::Diverged`] if a server op fails on the confirmed field.
    pub fn handle(&mut self, msg: ServerMessage) -> Result<(), ClientError> {
        match msg {
            ServerMessage::Op(rec) => {
                if rec.seq <= self.last_seq {
                    return Err(ClientError::Protocol(format!(
                        "op {} after op {}",
                        rec.seq, self.last_seq
                    )));
                }
                let entry = LogEntry::decode(&rec.entry)
                    .map_err(|e| ClientError::Protocol(format!("op {}: {e}", rec.seq)))?;
                if entry.seq != rec.seq {
                    return Err(ClientError::Protocol(format!(
                        "op {} carries record {}",
                        rec.seq, entry.seq
                    )));
                }
                self.apply_op(rec.author, rec.op_id, &entry)?;
            }
            ServerMessage::Patch { seq, samples } => {
                if seq != self.last_seq {
                    return Err(ClientError::Protocol(format!(
                        "patch for op {seq} after op {}",
                        self.last_seq
                    )));
                }
                // Every box is checked before any is written (a bad patch changes nothing): it
                // decodes, its indices are on the grid, and its brick is in the region held
                // (or being caught up). Then written. One box at a time either way: a message
                // never holds more than one decoded brick.
                let n = samples.len();
                for w in &samples {
                    let (_, q, _) = decode_samples(w)?;
                    let k = BrickKey::new(w.key[0], w.key[1], w.key[2]);
                    let held = self.region.is_none_or(|r| key_in(&r, k))
                        || self.catching.as_ref().is_some_and(|c| key_in(&c.region, k));
                    if !held {
                        return Err(ClientError::Protocol(format!(
                            "patch for op {seq}: brick {:?} is outside the region {:?}",
                            w.key, self.region
                        )));
                    }
                    if q.contains(&i16::MIN) {
                        return Err(ClientError::Protocol(format!(
                            "patch for op {seq}: index {} is off the grid",
                            i16::MIN
                        )));
                    }
                }
                for w in &samples {
                    let (region, q, m) = decode_samples(w)?;
                    self.confirmed
                        .write_quantized(region, &q, &m)
                        .map_err(|e| ClientError::Protocol(format!("patch for op {seq}: {e}")))?;
                    self.touched_brick(BrickKey::new(w.key[0], w.key[1], w.key[2]));
                }
                self.prediction.stale = true;
                self.events
                    .push_back(ClientEvent::Patched { seq, bricks: n });
            }
            ServerMessage::CatchUp(c) => self.catch_up(c)?,
            ServerMessage::BlockOp(rec) => {
                if rec.seq <= self.last_seq {
                    return Err(ClientError::Protocol(format!(
                        "block op {} after op {}",
                        rec.seq, self.last_seq
                    )));
                }
                let op = BlockOp::decode(&rec.op)
                    .map_err(|e| ClientError::Protocol(format!("block op {}: {e}", rec.seq)))?;
                self.apply_delta(&rec.delta)?;
                let own = (rec.author == self.id)
                    .then(|| self.replica.pending.remove(&rec.op_id))
                    .flatten();
                self.last_seq = rec.seq;
                self.events.push_back(ClientEvent::BlockOp {
                    seq: rec.seq,
                    author: rec.author,
                    op_id: rec.op_id,
                    op,
                    own: own.is_some(),
                    latency: own.map(|p| p.sent_at.elapsed()),
                    changed: rec.delta.len(),
                });
            }
            ServerMessage::Blocks(ev) => {
                if ev.seq < self.last_seq {
                    return Err(ClientError::Protocol(format!(
                        "block events after op {} came after op {}",
                        ev.seq, self.last_seq
                    )));
                }
                self.apply_delta(&ev.delta)?;
                self.last_seq = ev.seq;
                self.events.push_back(ClientEvent::Blocks {
                    seq: ev.seq,
                    changed: ev.delta.len(),
                });
            }
            ServerMessage::BlockCatchUp(c) => self.block_catch_up(c)?,
            ServerMessage::OpRefused { op_id, reason } => {
                self.replica.pending.remove(&op_id);
                if let Some((undo, stroke)) = self.reverting.remove(&op_id) {
                    // The other ops of the same undo or redo name the same stroke.
                    self.reverting.retain(|_, r| r.1 != stroke);
                    self.own.refused(undo, stroke);
                }
                let before = self.pending.len();
                self.pending.retain(|p| p.op_id != op_id);
                if self.pending.len() != before {
                    self.prediction.stale = true;
                }
                self.events
                    .push_back(ClientEvent::Refused { op_id, reason });
            }
            ServerMessage::Seq { seq } => self.last_seq = self.last_seq.max(seq),
            ServerMessage::HashAt {
                request,
                seq,
                region,
            } => {
                self.last_seq = self.last_seq.max(seq);
                let blocks = self.block_hash(region);
                self.hash_marks
                    .insert(request, (self.confirmed.clone(), blocks));
            }
            ServerMessage::Hash {
                request,
                seq,
                region,
                hash,
                blocks,
            } => {
                let Some((field, blocks_local)) = self.hash_marks.remove(&request) else {
                    return Err(ClientError::Protocol(format!(
                        "hash {request} came without its mark"
                    )));
                };
                let local = match region {
                    None => field.hash(),
                    Some(b) => field.hash_region(
                        BrickKey::new(b.min[0], b.min[1], b.min[2]),
                        BrickKey::new(b.max[0], b.max[1], b.max[2]),
                    ),
                };
                self.last_seq = self.last_seq.max(seq);
                let report = SyncReport {
                    seq,
                    region,
                    server: FieldHash(hash),
                    local,
                    blocks_server: blocks,
                    blocks_local,
                };
                self.hashes.insert(request, report);
            }
            ServerMessage::Presence(update) => {
                let mut changed = Vec::with_capacity(update.players.len());
                for p in update.players {
                    if p.id != self.id {
                        changed.push(p.id);
                        self.players.insert(p.id, p);
                    }
                }
                let left: Vec<u64> = update
                    .left
                    .into_iter()
                    .filter(|id| self.players.remove(id).is_some())
                    .collect();
                if !changed.is_empty() || !left.is_empty() {
                    self.events
                        .push_back(ClientEvent::Presence { changed, left });
                }
            }
            ServerMessage::Disconnect { reason } => {
                return Err(ClientError::Disconnected { reason });
            }
            ServerMessage::Notice(n) => self.events.push_back(ClientEvent::Notice {
                kind: n.kind,
                text: n.text,
            }),
            ServerMessage::Welcome(_)
            | ServerMessage::Refused(_)
            | ServerMessage::WorldPart { .. } => {
                return Err(ClientError::Protocol("a second welcome".into()));
            }
        }
        Ok(())
    }

    /// Whether this client computes `op` exactly: every brick it may read is in the region
    /// (held exactly), or no region is held yet.
    fn reproducible(&self, op: &EditOp) -> bool {
        self.region.is_none_or(|r| {
            op_reach(op, self.confirmed.settings()).is_some_and(|reach| r.contains_box(&reach))
        })
    }

    fn apply_op(&mut self, author: u64, op_id: u64, entry: &LogEntry) -> Result<(), ClientError> {
        let reverts = matches!(entry.op, EditOp::Undo { .. } | EditOp::Redo { .. });
        let mine = author == self.id;
        let front = mine && self.pending.front().is_some_and(|p| p.op_id == op_id);
        let sent = if front {
            self.pending.front().map(|p| (p.sent_at, p.stroke))
        } else if mine {
            self.pending
                .iter()
                .find(|p| p.op_id == op_id)
                .map(|p| (p.sent_at, p.stroke))
        } else {
            None
        };
        if let Some((_, stroke)) = sent
            && !reverts
        {
            self.own.confirmed(stroke, entry.stroke);
        }
        let sent_at = sent.map(|(t, _)| t);
        if mine {
            self.reverting.remove(&op_id);
        }
        // An op that reads samples outside the region is not computed here: with the
        // generator's values in place of the server's it could change samples of the region
        // the server did not, which no patch would mend. The server patches the samples it
        // changed in the region (the same test, on the same region: it sends the catch-up
        // of a new region before the ops after it).
        let computed = !reverts && self.reproducible(&entry.op);
        if !computed {
            self.prediction.stale = true;
        } else if front
            && !self.prediction.stale
            && self.pending.len() == 1
            && self.prediction.field.is_some()
        {
            // The prediction was the confirmed field with exactly this op applied.
            self.confirmed = self.prediction.field.take().expect("checked");
        } else {
            // Our first pending op, planned on a field holding what the confirmed field holds
            // now (the revisions say so: the confirmed field, or the prediction after the
            // same plans): write the plan rather than plan again.
            let planned = self
                .pending
                .front()
                .filter(|p| front && p.op == entry.op)
                .and_then(|p| p.planned.as_ref());
            let committed = planned.and_then(|e| self.confirmed.commit_edit(e).ok());
            let outcome = match committed {
                Some(o) => o,
                None => {
                    self.confirmed
                        .apply(&entry.op)
                        .map_err(|source| ClientError::Diverged {
                            seq: entry.seq,
                            source,
                        })?
                }
            };
            self.touched(outcome.changed);
        }
        if front {
            self.pending.pop_front();
        } else {
            let before = self.pending.len();
            if mine {
                self.pending.retain(|p| p.op_id != op_id);
            }
            // Another client's op (or ours out of turn) came before our pending ones.
            if !self.pending.is_empty() || self.pending.len() != before {
                self.prediction.stale = true;
            }
        }
        self.last_seq = entry.seq;
        self.events.push_back(ClientEvent::Op {
            seq: entry.seq,
            author,
            op_id,
            stroke: entry.stroke,
            own: sent_at.is_some(),
            latency: sent_at.map(|t| t.elapsed()),
        });
        Ok(())
    }
}
