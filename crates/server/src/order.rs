//! The ordering thread: the one owner of the field and the undo history.
//!
//! ```text
//!  commands ──▶ apply ops (numbered) ──▶ in flight ──(writer: one transaction per group)──▶
//!                                          durable ──▶ released: acks, broadcasts, patches
//! ```
//!
//! While the writer syncs one group, the next ops are applied and wait as the next group: a
//! slow disk costs latency, not throughput. Commands that must see only durable state (a
//! join's snapshot, a viewer's catch-up, a hash, the status, a shutdown, a bake) wait until
//! nothing is in flight; commands after them wait behind them, in order.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use loam_blocks::{BlockWorld, BlocksFile, IslandSettings};
use loam_field::{
    Brick, BrickKey, EditOp, EditOutcome, Field, FieldHash, Journal, LogEntry, SampleBox,
};
use loam_physics::PhysicsWorld;
use loam_store::{LogRecord, Store};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::sync::{mpsc, oneshot};

pub(super) use super::frames::{Outbox, chunks, push, push_frame};

mod hashes;
mod logged;
mod node_blocks;
mod release;
mod writing;

pub(crate) use logged::{NodeLink, Outgoing, log_notice};
pub(crate) use node_blocks::NodeBlocks;

pub(super) use hashes::hash_of;

use super::conn::PeerLink;
use super::ground::{self, Ground};
use super::latency::Latency;
use super::presence::Presence;
use super::resume::{Ring, RingEntry};
use super::writer::{Ack, Writer};
use super::{ServerConfig, ServerLatency, ServerStatus};
use crate::error::ServerError;
use crate::protocol::{
    BrickBox, Hello, OpRecord, PresenceReport, ServerMessage, Viewer, WireSamples, WorldMeta,
    encode_samples,
};
use loam_protocol::interest::{bricks_of_samples, generator_fingerprint, op_reach};
use loam_session::TerrainColliders;

/// How often a client whose region saw no op is told the log moved on.
pub(super) const SEQ_EVERY: Duration = Duration::from_millis(100);

/// What the connections and the handle ask of the ordering thread.
pub(crate) enum Command {
    Join {
        conn: u64,
        /// The peer's address (for the log).
        peer: std::net::SocketAddr,
        hello: Hello,
        link: PeerLink,
        /// Set when the server is full and the hello resumes with its key: the join is let
        /// in only to replace that client's connection, else refused with this reason.
        over_limit: Option<String>,
        reply: oneshot::Sender<u64>,
    },
    /// A terrain op, read off the connection `at` and decoded there (on the connections'
    /// workers, not the ordering thread): the log entry, or why it does not decode.
    Op {
        client: u64,
        op_id: u64,
        entry: Result<LogEntry, String>,
        at: Instant,
    },
    /// Message `seq` of the world's stream (a node's follower, `cluster/node.rs`).
    Logged {
        seq: u64,
        bytes: Bytes,
    },
    /// A node's NATS connection went (`up` false) or came back.
    LogReach {
        up: bool,
    },
    /// A node's lease task took the world's block lease (its epoch) or lost it (`None`).
    Lease {
        epoch: Option<u64>,
    },
    /// A block op, read off the connection `at`.
    BlockOp {
        client: u64,
        op_id: u64,
        op: Vec<u8>,
        at: Instant,
    },
    Viewer {
        conn: u64,
        client: u64,
        viewer: Viewer,
    },
    Presence {
        conn: u64,
        client: u64,
        report: PresenceReport,
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
    BlocksFor {
        region: Option<BrickBox>,
        reply: oneshot::Sender<(u64, [u8; 32], BlocksFile)>,
    },
    Status {
        reply: oneshot::Sender<ServerStatus>,
    },
    /// The latency since the last of these (or the start), and a new window; never waits
    /// for the ops in flight.
    TakeLatency {
        reply: oneshot::Sender<ServerLatency>,
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
    /// Bytes of the join's frames (generator parts, welcome, catch-ups), allowed to wait on
    /// top of [`crate::Limits::outbox_bytes`]: they are pushed at once, before the writer
    /// runs, and a heightmap's generator alone may be far larger than the cap.
    pub(super) join_bytes: usize,
    /// Its catch-up bytes ([`crate::Limits::catch_up_bytes_per_second`]).
    pub(super) catch_ups: Arc<std::sync::Mutex<loam_session::Bucket>>,
    /// Its latest viewer move that waits for `catch_ups` to allow it.
    pub(super) waiting_viewer: Option<Viewer>,
}

/// A client op that passed [`Order::admit_op`].
pub(super) struct Admitted {
    pub entry: LogEntry,
    /// An undo or redo (its cost is known once applied).
    pub reverts: bool,
    /// Samples the op may write ([`loam_field::edit_samples`]), if the field can say.
    pub samples: Option<u64>,
    /// When it was admitted (the budget's clock).
    pub now: Instant,
}

/// A brick as the field held it at some moment (bricks are immutable and shared).
type Held = (BrickKey, Arc<Brick>);

/// An op taken into the current group, applied but not yet durable.
pub(super) struct Accepted {
    entry: LogEntry,
    author: u64,
    op_id: u64,
    written: Option<BrickBox>,
    reach: Option<BrickBox>,
    /// The samples it changed.
    changed: Option<SampleBox>,
    /// Per client that cannot reproduce the op: the bricks it changed in that client's region,
    /// as they were right after it (their changed samples are sent).
    patches: Vec<(u64, Vec<Held>)>,
}

/// A block op taken into the current group (`event: false`), or block events after op
/// `seq` (`event: true`): released once op `seq` is durable.
pub(super) struct BlockItem {
    pub seq: u64,
    pub event: bool,
    pub author: u64,
    pub frame: Bytes,
    /// The bricks of its records; `to_all` when it removes pieces (every client is told).
    pub blocks: Option<BrickBox>,
    pub to_all: bool,
}

pub(super) enum Item {
    Accepted(Box<Accepted>),
    Block(Box<BlockItem>),
    Refused {
        client: u64,
        op_id: u64,
        reason: String,
    },
}

pub(crate) struct Order {
    /// Applied ops on their way to the disk and out to the clients.
    pub(super) durability: Durability,
    /// The block world, its physics and the terrain it stands on.
    pub(super) sim: Simulation,
    /// The connected clients, what they were told and what they may resume.
    pub(super) clients: Clients,
    pub(super) field: Field,
    /// Numbers the ops, strokes them per client and keeps the undo history.
    pub(super) journal: Journal,
    /// Where the time goes, for the status.
    pub(super) latency: Latency,
    pub(super) meta: WorldMeta,
    pub(super) margin: f64,
    pub(super) max_message: usize,
    /// Each client's edit budget (`loam_session::EditBudgets`).
    pub(super) edit_budgets: loam_session::EditBudgets,
    pub(super) last_op: BTreeMap<u64, u64>,
    /// Encoded bricks, shared with the writers that encode catch-ups.
    pub(super) cache: Arc<super::frames::BrickCache>,
    pub(super) accepted: u64,
    pub(super) made: u64,
    pub(super) refused: u64,
    /// Clients' hash requests waiting for their turn.
    pub(super) hashes: hashes::HashQueue,
    /// The thread that computes them.
    pub(super) hasher: hashes::Hasher,
    /// Set on a node of a world on JetStream (`order/logged.rs`): ops go through the
    /// stream.
    pub(crate) node: Option<NodeLink>,
}

/// The way of applied ops to the world file and back out: handed to the writer (`unsent`,
/// `written`), synced (`durable`), released to the clients in order (`released`), and the
/// bakes (`order/writing.rs`, `order/release.rs`).
pub(crate) struct Durability {
    pub(super) writer: Writer,
    pub(super) acks: UnboundedReceiver<Ack>,
    /// Applied ops and refusals not yet released, in order.
    pub(super) inflight: VecDeque<Item>,
    /// Applied ops not yet handed to the writer.
    pub(super) unsent: Vec<LogRecord>,
    /// The last sequence number handed to the writer.
    pub(super) written: u64,
    /// The last sequence number the writer reported durable.
    pub(super) durable: u64,
    /// The last op acknowledged and broadcast.
    pub(super) released: u64,
    /// Commands waiting for nothing to be in flight, in order.
    pub(super) deferred: VecDeque<Command>,
    pub(super) bake_every: u64,
    /// A node's finished copies of its world file, for its snapshot uploader to take
    /// (`cluster/snapshot.rs`).
    pub(crate) snapshot_copies: Option<UnboundedReceiver<std::path::PathBuf>>,
    pub(super) baked: u64,
}

/// The server's block world and what steps it: the physics world, the terrain colliders
/// around blocks and pieces, the ground worker, the step clock and the lump search
/// (`blocks.rs`, `steps.rs`, `lumps.rs`).
pub(crate) struct Simulation {
    /// The block world (tracking its changes) and the physics world it lives in.
    pub(super) blocks: BlockWorld,
    pub(super) physics: PhysicsWorld,
    pub(super) colliders: TerrainColliders,
    /// The thread that searches for lumps and builds colliders on snapshots of the field.
    pub(super) ground: Ground,
    /// The world file's step of the physics world's step 0.
    pub(super) step_base: u64,
    /// When the physics world was last brought up to date with the clock.
    pub(super) stepped_at: Instant,
    /// The physics steps the last tick owes, run one at a time between commands (`steps.rs`).
    pub(super) stepping: Option<super::steps::Stepping>,
    pub(super) islands: Option<IslandSettings>,
    /// Digs' changed boxes waiting for the next lump search.
    pub(super) pending_cuts: Vec<loam_field::SampleBox>,
    /// The brick of each piece's last record sent out ([`Order::reach_of`]).
    pub(super) piece_bricks: BTreeMap<loam_blocks::PieceId, [i32; 3]>,
}

/// The clients: their connections and regions, presence, outbox limits, catch-up budgets,
/// the resume ring and the ids and keys given out (`regions.rs`, `order/release.rs`).
pub(crate) struct Clients {
    pub(super) peers: BTreeMap<u64, Peer>,
    /// The players' names, positions and aims, and what each was told of the others.
    pub(super) presence: Presence,
    pub(super) outbox: Outbox,
    /// Each client's catch-up budget: bytes a second and burst.
    pub(super) catch_up_limit: (f64, f64),
    /// The catch-up budgets of clients that left, until they refill: a client that comes
    /// back with its resume key takes its own up again (reconnecting does not refill it).
    pub(super) spent_budgets: BTreeMap<u64, Arc<std::sync::Mutex<loam_session::Bucket>>>,
    pub(super) next_client: u64,
    /// The key of this process's resume keys ([`super::regions::resume_key`]): random, never
    /// sent or stored.
    pub(super) resume_secret: [u8; 32],
    pub(super) ring: Ring,
}

fn keys_in(b: &BrickBox) -> impl Iterator<Item = BrickKey> + '_ {
    (b.min[2]..=b.max[2]).flat_map(move |z| {
        (b.min[1]..=b.max[1])
            .flat_map(move |y| (b.min[0]..=b.max[0]).map(move |x| BrickKey::new(x, y, z)))
    })
}

/// The samples of `brick` (at `key`) within `changed`, for a patch.
pub(super) fn patch_of(key: BrickKey, brick: &Brick, changed: &SampleBox) -> WireSamples {
    let base = key.min_sample().to_array();
    let (lo, hi) = (changed.min.to_array(), changed.max.to_array());
    let local = |v: i32, a: usize| (v - base[a]).clamp(0, loam_field::BRICK_SAMPLES - 1) as u8;
    let min = std::array::from_fn(|a| local(lo[a], a));
    let max = std::array::from_fn(|a| local(hi[a], a));
    encode_samples(key, brick, min, max)
}

impl Order {
    /// Opens and loads the world, refills the resume ring from its log and starts the
    /// writer.
    pub fn open(cfg: &ServerConfig) -> Result<Self, ServerError> {
        // A node's snapshot follows its world's stream: only the node writes it (ops
        // appended here would part it from every other node for good), and the store
        // refuses it to anyone else (`StoreError::Followed`).
        let mut store = if cfg.node.is_some() {
            Store::open_followed(&cfg.world)?
        } else {
            Store::open(&cfg.world)?
        };
        let json = store.generator_json()?;
        let generator = (cfg.generator)(&json).map_err(ServerError::Generator)?;
        let settings = store.field_settings()?;
        let fingerprint = generator_fingerprint(&generator, &settings);
        let base = Field::new(settings, Arc::new(generator))?;
        let loam_session::LoadedSession {
            world: loaded,
            mut blocks,
        } = loam_session::load(&mut store, base)?;
        // A node's blocks come from the stream (`cluster/node.rs`), not from this replay.
        for s in blocks.skipped.iter().filter(|_| cfg.node.is_none()) {
            tracing::warn!(
                "op {} of the log did not replay its blocks: {}",
                s.seq,
                s.error
            );
        }
        let mut field = loaded.field;
        field.set_hot_capacity(cfg.hot_bricks);
        blocks.world.set_tracking(true);
        // One op more than the ring holds: the oldest is evicted at once and kept as the op
        // at the ring's start (a resume from exactly there needs it).
        let start = loaded.last_seq.saturating_sub(cfg.resume_ops as u64 + 1);
        let mut ring = Ring::new(cfg.resume_ops, start);
        // Who wrote the ops before a restart is not kept: author 0 (no client has that id).
        for r in store.log_after(start)? {
            ring.push(match r {
                LogRecord::Terrain(e) => {
                    let reach = op_reach(&e.op, &settings);
                    // An undo or redo writes within its stroke's bricks, which the reloaded
                    // history knows while it keeps the stroke (else: unknown, a snapshot).
                    let written = match e.op {
                        EditOp::Undo { stroke } | EditOp::Redo { stroke } => {
                            loaded.history.stroke_bricks(stroke).map(|(lo, hi)| {
                                Some(BrickBox {
                                    min: [lo.x, lo.y, lo.z],
                                    max: [hi.x, hi.y, hi.z],
                                })
                            })
                        }
                        _ => reach.map(Some),
                    };
                    let frame = ServerMessage::Op(OpRecord {
                        seq: e.seq,
                        author: 0,
                        op_id: 0,
                        entry: e.encode(),
                    });
                    RingEntry {
                        seq: e.seq,
                        event: false,
                        author: 0,
                        frame: frame.encode().into(),
                        written,
                        reach,
                        blocks: None,
                        to_all: false,
                    }
                }
                // A block op never writes terrain. The block records it and the events
                // after it made before the restart are not kept (`lose_events_upto` below):
                // a client resuming across it is sent its region's blocks whole, and never
                // this entry's frame (author 0, no block box).
                LogRecord::Block(e) => RingEntry {
                    seq: e.seq,
                    event: false,
                    author: 0,
                    frame: Bytes::new(),
                    written: Some(None),
                    reach: None,
                    blocks: None,
                    to_all: false,
                },
            });
        }
        let had_blocks = !blocks.world.store().is_empty()
            || blocks.world.pieces().next().is_some()
            || !loaded.block_ops.is_empty();
        if had_blocks {
            ring.lose_events_upto(loaded.last_seq);
        }
        let piece_bricks = blocks
            .world
            .pieces()
            .map(|p| {
                (
                    p.id,
                    loam_protocol::blocks::brick_of_piece(p, settings.voxel_size),
                )
            })
            .collect();
        let micros = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_micros() as u64);
        let (ack_tx, acks) = mpsc::unbounded_channel();
        let (backups, snapshot_copies) = backups_of(cfg)?;
        let writer = Writer::start(store, backups, ack_tx)?;
        Ok(Self {
            durability: Durability {
                writer,
                acks,
                inflight: VecDeque::new(),
                unsent: Vec::new(),
                written: loaded.last_seq,
                durable: loaded.last_seq,
                released: loaded.last_seq,
                deferred: VecDeque::new(),
                bake_every: cfg.bake_every_ops,
                snapshot_copies,
                baked: loaded.last_seq,
            },
            sim: Simulation {
                blocks: blocks.world,
                physics: blocks.physics,
                colliders: blocks.colliders,
                ground: Ground::start().map_err(ServerError::Io)?,
                step_base: blocks.step_base,
                stepped_at: Instant::now(),
                stepping: None,
                islands: cfg.islands,
                pending_cuts: Vec::new(),
                piece_bricks,
            },
            clients: Clients {
                peers: BTreeMap::new(),
                presence: Presence::default(),
                outbox: Outbox {
                    messages: cfg.limits.outbox_messages,
                    bytes: cfg.limits.outbox_bytes,
                },
                catch_up_limit: (
                    cfg.limits.catch_up_bytes_per_second,
                    cfg.limits.catch_up_burst_bytes,
                ),
                spent_budgets: BTreeMap::new(),
                next_client: micros.max(1),
                resume_secret: {
                    let mut k = [0u8; 32];
                    getrandom::fill(&mut k)
                        .map_err(|e| ServerError::Io(std::io::Error::other(e)))?;
                    k
                },
                ring,
            },
            field,
            journal: Journal::new(loaded.history, loaded.last_seq),
            latency: Latency::new(),
            meta: WorldMeta {
                generator_json: json,
                field: settings,
                generator_fingerprint: fingerprint,
            },
            margin: cfg.interest_margin_m,
            max_message: cfg.limits.max_message_bytes,
            edit_budgets: loam_session::EditBudgets::new(
                cfg.limits.edit_samples_per_second,
                cfg.limits.edit_samples_burst,
            ),
            last_op: BTreeMap::new(),
            cache: Arc::default(),
            accepted: 0,
            made: 0,
            refused: 0,
            hashes: hashes::HashQueue::default(),
            hasher: hashes::Hasher::start().map_err(ServerError::Io)?,
            node: None,
        })
    }

    /// Runs until shut down or until the store fails.
    pub fn run(self, rx: mpsc::Receiver<Command>) -> Result<(), ServerError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .map_err(ServerError::Io)?;
        rt.block_on(self.serve(rx))
    }

    async fn serve(mut self, mut rx: mpsc::Receiver<Command>) -> Result<(), ServerError> {
        loop {
            tokio::select! {
                biased;
                ack = self.durability.acks.recv() => {
                    if let Some(end) = self.take_ack(ack) {
                        return end;
                    }
                }
                done = self.hasher.done.recv(), if self.hasher.alive => match done {
                    Some(done) => self.hash_done(done),
                    None => self.hasher_gone(),
                },
                done = self.sim.ground.done.recv(), if self.sim.ground.alive => {
                    let start = Instant::now();
                    match done {
                        Some(ground::Done::Islands(found)) => self.islands_found(found),
                        Some(ground::Done::Colliders { at, built, refresh }) => {
                            self.colliders_built(at, built, refresh);
                        }
                        None => self.ground_gone(),
                    }
                    self.latency.grounded(start.elapsed());
                }
                cmd = rx.recv() => {
                    let Some(cmd) = cmd else {
                        return self.close("the server is shutting down");
                    };
                    let mut next = Some(cmd);
                    while let Some(cmd) = next.take() {
                        if self.dispatch(cmd) {
                            return self.close("the server is shutting down");
                        }
                        // The writer's acks as they come: a long run of commands must not
                        // hold back the releases. Each applied op goes to the writer's queue
                        // at once; the writer commits whatever queued up while it synced the
                        // last group as the next one.
                        while let Ok(ack) = self.durability.acks.try_recv() {
                            if let Some(end) = self.take_ack(Some(ack)) {
                                return end;
                            }
                        }
                        self.pump();
                        // While a tick's physics steps are owed, one command and then one
                        // step, in turn: a queue that never empties must not hold them back.
                        next = if self.stepping() {
                            None
                        } else {
                            rx.try_recv().ok()
                        };
                    }
                }
                // Nothing else to do: the next physics step (below).
                () = std::future::ready(()), if self.stepping() => {}
            }
            // One physics step after each command (or batch), while the tick owes some.
            self.step_once();
            // Refusals ahead of anything in flight go out now.
            self.release();
            if self.resume_deferred() {
                return self.close("the server is shutting down");
            }
            self.serve_hashes();
            self.pump();
        }
    }

    /// A new client's catch-up budget, full.
    pub(super) fn catch_up_budget(&self) -> Arc<std::sync::Mutex<loam_session::Bucket>> {
        let (rate, burst) = self.clients.catch_up_limit;
        let b = loam_session::Bucket::full(rate, burst, Instant::now());
        Arc::new(std::sync::Mutex::new(b))
    }

    /// Takes one command; `true` once a shutdown has run.
    pub(super) fn dispatch(&mut self, cmd: Command) -> bool {
        if !self.durability.deferred.is_empty() {
            self.durability.deferred.push_back(cmd);
            return false;
        }
        let bake_due = self.durability.bake_every > 0
            && self.journal.last_seq() - self.durability.baked >= self.durability.bake_every;
        match cmd {
            Command::Op { .. } if bake_due && !self.idle() => {
                self.durability.deferred.push_back(cmd)
            }
            Command::Op {
                client,
                op_id,
                entry,
                at,
            } if self.node.is_some() => {
                self.latency
                    .queued(Instant::now().saturating_duration_since(at));
                self.publish_op(client, op_id, entry);
            }
            Command::Op {
                client,
                op_id,
                entry,
                at,
            } => self.timed(at, |o| o.take_op(client, op_id, entry)),
            Command::Logged { .. } if bake_due && !self.idle() => {
                self.durability.deferred.push_back(cmd)
            }
            Command::Logged { seq, bytes } => {
                self.take_logged(seq, &bytes);
                self.let_in_joins();
            }
            Command::Lease { epoch } => self.lease_changed(epoch),
            Command::LogReach { up } => self.log_reach(up),
            Command::BlockOp {
                client,
                op_id,
                op,
                at,
            } if self.node.is_some() => {
                self.latency
                    .queued(Instant::now().saturating_duration_since(at));
                self.publish_block_op(client, op_id, &op);
            }
            Command::BlockOp { .. } if bake_due && !self.idle() => {
                self.durability.deferred.push_back(cmd)
            }
            Command::BlockOp {
                client,
                op_id,
                op,
                at,
            } => self.timed(at, |o| o.take_block_op(client, op_id, &op)),
            // Presence is not ordered with the ops: it never waits for them.
            Command::Leave { .. }
            | Command::Tick
            | Command::Meta { .. }
            | Command::Presence { .. }
            | Command::TakeLatency { .. } => self.handle(cmd),
            // Most viewer moves keep the region: they never wait for the ops in flight.
            Command::Viewer {
                conn,
                client,
                viewer,
            } if self.viewer_at_once(conn, client, &viewer) => {}
            cmd @ Command::Join { .. } if self.node.is_some() => {
                if let Some(cmd) = self.join_waits(cmd) {
                    if self.idle() {
                        self.handle(cmd);
                    } else {
                        self.durability.deferred.push_back(cmd);
                    }
                }
            }
            cmd if !self.idle() => self.durability.deferred.push_back(cmd),
            Command::Shutdown { reply } => {
                let _ = reply.send(());
                return true;
            }
            cmd => self.handle(cmd),
        }
        false
    }

    /// Takes a client op that arrived `at` with `take`, timing it; an op it accepted (the
    /// next sequence number) is timed until its release.
    fn timed(&mut self, at: Instant, take: impl FnOnce(&mut Self)) {
        let (start, before) = (Instant::now(), self.journal.last_seq());
        self.latency.queued(start.saturating_duration_since(at));
        take(self);
        self.latency.applied(start.elapsed());
        if self.journal.last_seq() > before {
            self.latency.arrived(before + 1, at);
        }
    }

    /// Runs the deferred commands once nothing is in flight; `true` once a shutdown has run.
    fn resume_deferred(&mut self) -> bool {
        while self.idle() && !self.durability.deferred.is_empty() {
            if self.durability.bake_every > 0
                && self.journal.last_seq() - self.durability.baked >= self.durability.bake_every
            {
                self.bake();
            }
            let waiting = std::mem::take(&mut self.durability.deferred);
            for cmd in waiting {
                if self.dispatch(cmd) {
                    return true;
                }
            }
            self.pump();
        }
        false
    }

    pub(super) fn refuse(&mut self, client: u64, op_id: u64, reason: String) {
        self.durability.inflight.push_back(Item::Refused {
            client,
            op_id,
            reason,
        });
    }

    /// The op-id rule for a client's op of either kind: ids increase. A lower or equal id
    /// is refused on a single server; a node drops it without a refusal (an op sent again
    /// after a resume that the stream holds already: its record reaches the client in the
    /// order), and learns ids only from the stream (an op sent again while on its way is
    /// published again, and JetStream keeps one). `false`: the op goes no further.
    pub(super) fn take_op_id(&mut self, client: u64, op_id: u64) -> bool {
        if let Some(&last) = self.last_op.get(&client)
            && op_id <= last
        {
            if self.node.is_none() {
                let why = format!("op id {op_id} is not above the last one taken ({last})");
                self.refuse(client, op_id, why);
            }
            return false;
        }
        if self.node.is_none() {
            self.last_op.insert(client, op_id);
        }
        true
    }

    /// The checks every client op passes before it is applied (here) or published (a node,
    /// `order/logged.rs`): op ids increase, the record decodes, the edit budget admits its
    /// footprint (an undo's is known only once applied). Refuses the op and returns `None`
    /// when one fails.
    pub(super) fn admit_op(
        &mut self,
        client: u64,
        op_id: u64,
        entry: Result<LogEntry, String>,
    ) -> Option<Admitted> {
        if !self.take_op_id(client, op_id) {
            return None;
        }
        let entry = match entry {
            Ok(e) => e,
            Err(why) => {
                self.refuse(client, op_id, why);
                return None;
            }
        };
        let reverts = matches!(entry.op, EditOp::Undo { .. } | EditOp::Redo { .. });
        // An op the field refuses is refused later with the field's reason, uncharged.
        let samples = loam_field::edit_samples(self.field.settings(), &entry.op).ok();
        let now = Instant::now();
        let known = if reverts { None } else { samples };
        if let Err(why) = self.edit_budgets.admit(client, known, now) {
            self.refuse(client, op_id, why.to_string());
            return None;
        }
        Some(Admitted {
            entry,
            reverts,
            samples,
            now,
        })
    }

    /// Validates and applies one op (through the history: a refused op changes nothing) and
    /// adds it to the group.
    fn take_op(&mut self, client: u64, op_id: u64, entry: Result<LogEntry, String>) {
        let Some(Admitted {
            entry,
            reverts,
            samples,
            now,
        }) = self.admit_op(client, op_id, entry)
        else {
            return;
        };
        let (logged, outcome) =
            match self
                .journal
                .apply_for(&mut self.field, client, entry.stroke, &entry.op)
            {
                Ok(o) => o,
                Err(e) => return self.refuse(client, op_id, e.to_string()),
            };
        let changed = outcome.changed;
        let cost = if reverts {
            changed.map_or(0, |b| b.volume())
        } else {
            samples.unwrap_or(0)
        };
        self.edit_budgets.charge(client, cost, now);
        let may_cut = super::blocks::may_cut(&entry.op);
        self.accept_terrain(client, op_id, logged, &outcome);
        if let Some(changed) = changed {
            self.after_terrain(changed, may_cut);
        }
    }

    /// Adds a terrain op the journal applied and numbered to the group, with the patches of
    /// the clients that cannot reproduce it.
    pub(super) fn accept_terrain(
        &mut self,
        client: u64,
        op_id: u64,
        entry: LogEntry,
        outcome: &EditOutcome,
    ) {
        let settings = *self.field.settings();
        let written = outcome.changed.map(|b| bricks_of_samples(&b));
        let reach = op_reach(&entry.op, &settings);
        let mut patches = Vec::new();
        if let Some(w) = written {
            for (&id, peer) in &self.clients.peers {
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
        self.durability
            .unsent
            .push(LogRecord::Terrain(entry.clone()));
        self.durability
            .inflight
            .push_back(Item::Accepted(Box::new(Accepted {
                entry,
                author: client,
                op_id,
                written,
                reach,
                changed: outcome.changed,
                patches,
            })));
    }
}

/// The writer's backups: the configured ones, or on a node that makes snapshots, one copy
/// kept in `<world>.snapshots` every [`crate::cluster::NodeConfig::snapshot_every`]; on
/// such a node each finished copy is also handed to the snapshot uploader (the receiver).
#[allow(clippy::type_complexity)]
fn backups_of(
    cfg: &ServerConfig,
) -> Result<
    (
        Option<super::backups::Backups>,
        Option<UnboundedReceiver<std::path::PathBuf>>,
    ),
    ServerError,
> {
    let snapshots = cfg.node.as_ref().and_then(|n| n.snapshot_every);
    let plan = match (&cfg.backups, snapshots) {
        (Some(plan), _) => Some(plan.clone()),
        (None, Some(every)) => {
            let plan = super::BackupPlan {
                dir: crate::cluster::snapshot::copies_dir(&cfg.world),
                every,
                keep: 1,
            };
            plan.check()?;
            Some(plan)
        }
        (None, None) => None,
    };
    let Some(plan) = plan else {
        return Ok((None, None));
    };
    let backups = super::backups::Backups::new(plan, &cfg.world);
    if snapshots.is_none() {
        return Ok((Some(backups), None));
    }
    // A node's start has nothing to copy that the last snapshot lacks, unless it is the
    // user's backups.
    let backups = if cfg.backups.is_none() {
        backups.first_after_interval()
    } else {
        backups
    };
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    Ok((Some(backups.then_send(tx)), Some(rx)))
}
