//! The ordering thread: the one owner of the world store, the field and the undo history.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use loam_field::{Brick, BrickKey, EditOp, Field, FieldHash, History, LogEntry};
use loam_store::Store;
use tokio::sync::mpsc::error::TrySendError;
use tokio::sync::{mpsc, oneshot};

use super::conn::PeerLink;
use super::resume::{Ring, RingEntry};
use super::{ServerConfig, ServerStatus};
use crate::error::NetError;
use crate::interest::{bricks_of_samples, generator_fingerprint, op_reach};
use crate::protocol::{
    BrickBox, Hello, OpRecord, ServerMessage, Viewer, WireBrick, WorldMeta, encode_brick,
};

/// Most ops taken into one group (one transaction) before it is committed.
const MAX_BATCH: usize = 512;
/// How often a client whose region saw no op is told the log moved on.
const SEQ_EVERY: Duration = Duration::from_millis(100);
/// Encoded bricks kept for catch-ups and patches.
const BRICK_CACHE: usize = 4096;

/// What the connections and the handle ask of the ordering thread.
pub(crate) enum Command {
    Join {
        conn: u64,
        hello: Hello,
        link: PeerLink,
        reply: oneshot::Sender<u64>,
    },
    Op {
        client: u64,
        op_id: u64,
        entry: Vec<u8>,
    },
    Viewer {
        conn: u64,
        client: u64,
        viewer: Viewer,
    },
    HashTo {
        client: u64,
        request: u64,
        region: Option<BrickBox>,
    },
    HashFor {
        region: Option<BrickBox>,
        reply: oneshot::Sender<(u64, FieldHash)>,
    },
    Status {
        reply: oneshot::Sender<ServerStatus>,
    },
    Meta {
        reply: oneshot::Sender<WorldMeta>,
    },
    Leave {
        conn: u64,
        client: u64,
    },
    Tick,
    Shutdown {
        reply: oneshot::Sender<()>,
    },
}

pub(super) struct Peer {
    pub(super) conn: u64,
    pub(super) link: PeerLink,
    pub(super) region: BrickBox,
    /// The last sequence number the client was sent (an op or a `Seq`).
    pub(super) informed: u64,
    pub(super) informed_at: Instant,
}

/// A brick as the field held it at some moment (bricks are immutable and shared).
type Held = (BrickKey, Arc<Brick>);

/// An op taken into the current group, applied but not yet durable.
struct Accepted {
    entry: LogEntry,
    author: u64,
    op_id: u64,
    written: Option<BrickBox>,
    reach: Option<BrickBox>,
    /// Per client that cannot reproduce the op: the bricks it changed in that client's region,
    /// as they were right after it.
    patches: Vec<(u64, Vec<Held>)>,
}

enum Item {
    Accepted(Box<Accepted>),
    Refused {
        client: u64,
        op_id: u64,
        reason: String,
    },
}

pub(crate) struct Order {
    pub(super) store: Store,
    pub(super) field: Field,
    pub(super) history: History,
    pub(super) seq: u64,
    pub(super) meta: WorldMeta,
    pub(super) margin: f64,
    pub(super) max_message: usize,
    pub(super) outbox: usize,
    pub(super) bake_every: u64,
    pub(super) baked: u64,
    pub(super) peers: BTreeMap<u64, Peer>,
    pub(super) ring: Ring,
    /// The stroke new ops continue: (client, its stroke id, the server's stroke id).
    pub(super) open: Option<(u64, u64, u64)>,
    pub(super) last_op: BTreeMap<u64, u64>,
    pub(super) next_client: u64,
    pub(super) cache: BTreeMap<BrickKey, (u64, Arc<WireBrick>)>,
    pub(super) accepted: u64,
    pub(super) refused: u64,
}

fn keys_in(b: &BrickBox) -> impl Iterator<Item = BrickKey> + '_ {
    (b.min[2]..=b.max[2]).flat_map(move |z| {
        (b.min[1]..=b.max[1])
            .flat_map(move |y| (b.min[0]..=b.max[0]).map(move |x| BrickKey::new(x, y, z)))
    })
}

/// Sends `frame` to `peer`; a full outbox (a client too slow) or a closed one is noted in
/// `dead`.
pub(super) fn push(id: u64, peer: &Peer, frame: Bytes, cap: usize, dead: &mut Vec<(u64, String)>) {
    match peer.link.tx.try_send(frame) {
        Ok(()) => {}
        Err(TrySendError::Full(_)) => {
            dead.push((id, format!("too slow: {cap} messages waiting")));
        }
        Err(TrySendError::Closed(_)) => dead.push((id, "connection gone".into())),
    }
}

pub(super) fn encoded(
    cache: &mut BTreeMap<BrickKey, (u64, Arc<WireBrick>)>,
    key: BrickKey,
    brick: &Brick,
) -> Arc<WireBrick> {
    if let Some((id, w)) = cache.get(&key)
        && *id == brick.id()
    {
        return w.clone();
    }
    if cache.len() >= BRICK_CACHE {
        cache.clear();
    }
    let w = Arc::new(encode_brick(key, brick));
    cache.insert(key, (brick.id(), w.clone()));
    w
}

/// Splits `bricks` into messages of about `max / 2` bytes each, made by `make(bricks, last)`.
pub(super) fn chunks(
    bricks: Vec<Arc<WireBrick>>,
    max: usize,
    mut make: impl FnMut(Vec<WireBrick>, bool) -> ServerMessage,
) -> Vec<Bytes> {
    let mut out = Vec::new();
    let mut part = Vec::new();
    let mut size = 0;
    for w in bricks {
        if size + w.data.len() > max / 2 && !part.is_empty() {
            out.push(make(std::mem::take(&mut part), false).encode().into());
            size = 0;
        }
        size += w.data.len() + 32;
        part.push((*w).clone());
    }
    out.push(make(part, true).encode().into());
    out
}

impl Order {
    /// Opens and loads the world, and refills the resume ring from its log.
    pub fn open(cfg: &ServerConfig) -> Result<Self, NetError> {
        let mut store = Store::open(&cfg.world)?;
        let json = store.generator_json()?;
        let generator = (cfg.generator)(&json).map_err(NetError::Generator)?;
        let settings = store.field_settings()?;
        let fingerprint = generator_fingerprint(&generator, &settings);
        let loaded = store.load(Field::new(settings, Arc::new(generator))?)?;
        let mut field = loaded.field;
        field.set_hot_capacity(cfg.hot_bricks);
        let mut ring = Ring::new(cfg.resume_ops);
        // Who wrote the ops before a restart is not kept: author 0 (no client has that id).
        for e in store.ops_after(loaded.last_seq.saturating_sub(cfg.resume_ops as u64))? {
            let reach = op_reach(&e.op, &settings);
            let frame = ServerMessage::Op(OpRecord {
                seq: e.seq,
                author: 0,
                op_id: 0,
                entry: e.encode(),
            });
            ring.push(RingEntry {
                seq: e.seq,
                author: 0,
                frame: frame.encode().into(),
                written: reach.map(Some),
                reach,
            });
        }
        let micros = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_micros() as u64);
        Ok(Self {
            store,
            field,
            history: loaded.history,
            seq: loaded.last_seq,
            meta: WorldMeta {
                generator_json: json,
                field: settings,
                generator_fingerprint: fingerprint,
            },
            margin: cfg.interest_margin_m,
            max_message: cfg.limits.max_message_bytes,
            outbox: cfg.limits.outbox_messages,
            bake_every: cfg.bake_every_ops,
            baked: loaded.last_seq,
            peers: BTreeMap::new(),
            ring,
            open: None,
            last_op: BTreeMap::new(),
            next_client: micros.max(1),
            cache: BTreeMap::new(),
            accepted: 0,
            refused: 0,
        })
    }

    /// Runs until shut down or until the store fails.
    pub fn run(mut self, mut rx: mpsc::Receiver<Command>) -> Result<(), NetError> {
        let mut batch = Vec::new();
        while let Some(first) = rx.blocking_recv() {
            let mut next = Some(first);
            while let Some(cmd) = next.take() {
                match cmd {
                    Command::Op {
                        client,
                        op_id,
                        entry,
                    } => {
                        self.take_op(client, op_id, &entry, &mut batch);
                        if batch.len() >= MAX_BATCH {
                            self.flush(&mut batch)?;
                        }
                    }
                    Command::Shutdown { reply } => {
                        self.flush(&mut batch)?;
                        let r = self.close("the server is shutting down");
                        let _ = reply.send(());
                        return r;
                    }
                    other => {
                        self.flush(&mut batch)?;
                        self.handle(other);
                    }
                }
                next = rx.try_recv().ok();
            }
            self.flush(&mut batch)?;
        }
        self.flush(&mut batch)?;
        self.close("the server is shutting down")
    }

    /// Disconnects everyone and bakes what the last bake does not cover.
    fn close(&mut self, reason: &str) -> Result<(), NetError> {
        for (_, p) in std::mem::take(&mut self.peers) {
            p.link.kill(reason);
        }
        if self.seq > self.baked {
            self.store.bake(&self.field, &self.history, self.seq)?;
            self.baked = self.seq;
        }
        Ok(())
    }

    fn refuse(&mut self, client: u64, op_id: u64, reason: String, batch: &mut Vec<Item>) {
        batch.push(Item::Refused {
            client,
            op_id,
            reason,
        });
    }

    /// Validates and applies one op (through the history: a refused op changes nothing) and
    /// adds it to the group.
    fn take_op(&mut self, client: u64, op_id: u64, bytes: &[u8], batch: &mut Vec<Item>) {
        if let Some(&last) = self.last_op.get(&client)
            && op_id <= last
        {
            let why = format!("op id {op_id} is not above the last one taken ({last})");
            return self.refuse(client, op_id, why, batch);
        }
        self.last_op.insert(client, op_id);
        let entry = match LogEntry::decode(bytes) {
            Ok(e) => e,
            Err(e) => return self.refuse(client, op_id, e.to_string(), batch),
        };
        let reverts = matches!(entry.op, EditOp::Undo { .. } | EditOp::Redo { .. });
        let stroke = match (&entry.op, self.open) {
            (EditOp::Undo { stroke } | EditOp::Redo { stroke }, _) => *stroke,
            (_, Some((c, s, g))) if c == client && s == entry.stroke => g,
            _ => self.history.last_stroke().map_or(1, |s| s + 1),
        };
        let outcome = match self.history.apply(&mut self.field, stroke, &entry.op) {
            Ok(o) => o,
            Err(e) => return self.refuse(client, op_id, e.to_string(), batch),
        };
        self.open = (!reverts).then_some((client, entry.stroke, stroke));
        self.seq += 1;
        let settings = *self.field.settings();
        let written = outcome.changed.map(|b| bricks_of_samples(&b));
        let reach = op_reach(&entry.op, &settings);
        let mut patches = Vec::new();
        if let Some(w) = written {
            for (&id, peer) in &self.peers {
                let Some(part) = w.intersection(&peer.region) else {
                    continue;
                };
                if reach.is_some_and(|r| peer.region.contains_box(&r)) {
                    continue;
                }
                let bricks = keys_in(&part)
                    .filter_map(|k| self.field.brick(k).map(|b| (k, b.clone())))
                    .collect();
                patches.push((id, bricks));
            }
        }
        batch.push(Item::Accepted(Box::new(Accepted {
            entry: LogEntry::new(self.seq, stroke, entry.op),
            author: client,
            op_id,
            written,
            reach,
            patches,
        })));
    }

    /// Makes the group durable (one transaction), then sends it: acks and broadcasts in
    /// order, patches after their op, refusals in their place.
    fn flush(&mut self, batch: &mut Vec<Item>) -> Result<(), NetError> {
        if batch.is_empty() {
            return Ok(());
        }
        let entries: Vec<LogEntry> = batch
            .iter()
            .filter_map(|i| match i {
                Item::Accepted(a) => Some(a.entry.clone()),
                Item::Refused { .. } => None,
            })
            .collect();
        if let Err(e) = self.store.append_batch(&entries) {
            for (_, p) in std::mem::take(&mut self.peers) {
                p.link.kill("the server's world store failed");
            }
            return Err(e.into());
        }
        let mut dead = Vec::new();
        for item in batch.drain(..) {
            match item {
                Item::Refused {
                    client,
                    op_id,
                    reason,
                } => {
                    self.refused += 1;
                    if let Some(p) = self.peers.get(&client) {
                        let msg = ServerMessage::OpRefused { op_id, reason };
                        push(client, p, msg.encode().into(), self.outbox, &mut dead);
                    }
                }
                Item::Accepted(a) => {
                    self.accepted += 1;
                    let seq = a.entry.seq;
                    let frame: Bytes = ServerMessage::Op(OpRecord {
                        seq,
                        author: a.author,
                        op_id: a.op_id,
                        entry: a.entry.encode(),
                    })
                    .encode()
                    .into();
                    for (&id, peer) in &mut self.peers {
                        if id == a.author || a.written.is_some_and(|w| w.intersects(&peer.region)) {
                            push(id, peer, frame.clone(), self.outbox, &mut dead);
                            peer.informed = seq;
                        }
                    }
                    for (client, bricks) in a.patches {
                        let Some(p) = self.peers.get(&client) else {
                            continue;
                        };
                        let wires = bricks
                            .iter()
                            .map(|(k, b)| encoded(&mut self.cache, *k, b))
                            .collect();
                        for f in chunks(wires, self.max_message, |bricks, _| ServerMessage::Patch {
                            seq,
                            bricks,
                        }) {
                            push(client, p, f, self.outbox, &mut dead);
                        }
                    }
                    self.ring.push(RingEntry {
                        seq,
                        author: a.author,
                        frame,
                        written: Some(a.written),
                        reach: a.reach,
                    });
                }
            }
        }
        for (id, why) in dead {
            if let Some(p) = self.peers.remove(&id) {
                p.link.kill(why);
            }
        }
        if self.bake_every > 0 && self.seq - self.baked >= self.bake_every {
            self.store.bake(&self.field, &self.history, self.seq)?;
            self.baked = self.seq;
        }
        Ok(())
    }

    fn handle(&mut self, cmd: Command) {
        match cmd {
            Command::Join {
                conn,
                hello,
                link,
                reply,
            } => self.join(conn, hello, link, reply),
            Command::Viewer {
                conn,
                client,
                viewer,
            } => self.viewer(conn, client, viewer),
            Command::HashTo {
                client,
                request,
                region,
            } => {
                let hash = self.hash(region);
                if let Some(p) = self.peers.get(&client) {
                    let msg = ServerMessage::Hash {
                        request,
                        seq: self.seq,
                        region,
                        hash: hash.0,
                    };
                    let mut dead = Vec::new();
                    push(client, p, msg.encode().into(), self.outbox, &mut dead);
                    self.bury(dead);
                }
            }
            Command::HashFor { region, reply } => {
                let _ = reply.send((self.seq, self.hash(region)));
            }
            Command::Status { reply } => {
                let _ = reply.send(ServerStatus {
                    seq: self.seq,
                    clients: self.peers.len(),
                    accepted: self.accepted,
                    refused: self.refused,
                });
            }
            Command::Meta { reply } => {
                let _ = reply.send(self.meta.clone());
            }
            Command::Leave { conn, client } => {
                if self.peers.get(&client).is_some_and(|p| p.conn == conn) {
                    self.peers.remove(&client);
                }
            }
            Command::Tick => self.tick(),
            Command::Op { .. } | Command::Shutdown { .. } => unreachable!("handled by run"),
        }
    }

    pub(super) fn bury(&mut self, dead: Vec<(u64, String)>) {
        for (id, why) in dead {
            if let Some(p) = self.peers.remove(&id) {
                p.link.kill(why);
            }
        }
    }

    fn hash(&self, region: Option<BrickBox>) -> FieldHash {
        match region {
            None => self.field.hash(),
            Some(b) => self.field.hash_region(
                BrickKey::new(b.min[0], b.min[1], b.min[2]),
                BrickKey::new(b.max[0], b.max[1], b.max[2]),
            ),
        }
    }

    fn tick(&mut self) {
        let now = Instant::now();
        let mut dead = Vec::new();
        for (&id, p) in &mut self.peers {
            if p.informed < self.seq && now.duration_since(p.informed_at) >= SEQ_EVERY {
                let msg = ServerMessage::Seq { seq: self.seq };
                push(id, p, msg.encode().into(), self.outbox, &mut dead);
                p.informed = self.seq;
                p.informed_at = now;
            }
        }
        self.bury(dead);
    }
}
