//! The blocks of a node (`loam serve --nats`): its clients' block ops go to the stream as
//! requests; the node holding the world's block lease decides them on its own block world
//! (the server's `Simulation`: physics, support, lumps) and publishes what it decided; every
//! node shows its clients the replica those outcomes make (`cluster/blocks.rs` has the rule
//! and why it is the same everywhere).
//!
//! ```text
//!  client block op ──▶ admit_block_op ──▶ Block request ──▶ stream
//!  stream ──▶ request: noted (BlockReplica) ──▶ the authority: decide_block_op on `sim`
//!                 ──▶ accept_block / refused ──▶ Outcome ──▶ stream
//!  stream ──▶ Outcome ──▶ replica ──▶ record_block_op / push_events / refuse: the group
//!  lease taken ──▶ Authority (epoch) ──▶ stream ──▶ back here: `sim` made from the replica,
//!                 the undecided requests decided in stream order
//!  authority's tick ──▶ physics steps on `sim` ──▶ Outcome events
//!  authority's lump search ──▶ Cut ──▶ stream ──▶ every field: the removal stroke;
//!                 the authority: the lump falls ──▶ Outcome
//! ```

use std::time::Instant;

use loam_blocks::{
    BlockDelta, BlockOp, BlockSettings, BlockWorld, Island, IslandSettings, MaterialTable,
};
use loam_physics::{PhysicsSettings, PhysicsWorld};
use loam_session::TerrainColliders;

use super::Order;
use super::logged::Outgoing;
use crate::blocks::split_delta;
use crate::cluster::blocks::{BlockApplied, BlockReplica, Cut, Outcome, Request, Verdict};
use crate::cluster::log::{Kind, OpMessage};

/// The block side of a node's link to the stream.
#[derive(Debug, Default)]
pub(crate) struct NodeBlocks {
    /// What the node's clients see: the authority's outcomes, applied in stream order.
    pub replica: BlockReplica,
    /// The epoch of the block lease this node holds, as its lease task last said.
    pub lease: Option<u64>,
    /// The epoch this node decides under: set when its announcement comes back from the
    /// stream with the lease still held, cleared when the lease is lost or another node's
    /// announcement comes.
    pub acting: Option<u64>,
    /// Outcomes and cuts published under `acting` (their message ids).
    pub published: u64,
    /// The lump search while it decides ([`crate::ServerConfig::islands`]).
    pub islands: Option<IslandSettings>,
    /// The epoch of the last late outcome logged (one line per late authority, not one
    /// per outcome).
    pub late_logged: u64,
}

impl Order {
    /// The lump search's settings of the server's block world (a node's, before it is
    /// emptied: those the node uses while it decides).
    pub(crate) fn sim_islands(&self) -> Option<IslandSettings> {
        self.sim.islands
    }

    /// The block world the clients are shown: a node's replica, else the server's own.
    pub(crate) fn shown_blocks(&self) -> &BlockWorld {
        match &self.node {
            Some(n) => &n.blocks.replica.world,
            None => &self.sim.blocks,
        }
    }

    /// A local client's block op on a node: checked ([`Order::admit_block_op`]), then
    /// published as a request for the block authority.
    pub(crate) fn publish_block_op(&mut self, client: u64, op_id: u64, bytes: &[u8]) {
        let Some(op) = self.admit_block_op(client, op_id, bytes) else {
            return;
        };
        let Some(node) = &self.node else { return };
        let subject = node
            .names
            .block_subject(&op, self.field.settings().voxel_size);
        self.publish_client_op(subject, Kind::Block, client, op_id, bytes.to_vec());
    }

    /// Publishes what the authority decided on request `(author, op_id)` (0, 0: events),
    /// in parts of at most a catch-up message's records (the rest as events). Nothing when
    /// this node does not act as the authority (then `sim` is empty and changes nothing).
    pub(crate) fn publish_outcome(
        &mut self,
        author: u64,
        op_id: u64,
        verdict: Verdict,
        delta: Option<BlockDelta>,
    ) {
        let Some(node) = &mut self.node else { return };
        let Some(epoch) = node.blocks.acting else {
            return;
        };
        let parts = match delta {
            Some(d) => split_delta(d),
            None => vec![BlockDelta::default()],
        };
        for (i, delta) in parts.into_iter().enumerate() {
            let (author, op_id, verdict) = if i == 0 {
                (author, op_id, verdict.clone())
            } else {
                (0, 0, Verdict::Event)
            };
            if matches!(verdict, Verdict::Event) && delta.is_empty() {
                continue;
            }
            let outcome = Outcome {
                epoch,
                verdict,
                delta,
            };
            let m = OpMessage {
                kind: Kind::Outcome,
                author,
                op_id,
                record: rmp_serde::to_vec_named(&outcome).expect("outcomes serialise"),
            };
            node.blocks.published += 1;
            let out = Outgoing {
                subject: node.names.blocks(),
                msg_id: format!("o{epoch}-{}", node.blocks.published),
                payload: m.encode(),
            };
            // A publisher gone means the node is shutting down: the next authority decides
            // again what was not published.
            let _ = node.publish.send(out);
        }
    }

    /// The authority found `island` loose: its removal and its fall are published as a cut
    /// (the field changes on every node when it comes back, `take_cut`).
    pub(crate) fn publish_cut(&mut self, island: Island) {
        let fs = *self.field.settings();
        let (Ok(ops), Ok(lump)) = (
            island.removal_ops(&fs),
            island.lump(crate::blocks::lump_spec),
        ) else {
            return;
        };
        let Some(node) = &mut self.node else { return };
        let Some(epoch) = node.blocks.acting else {
            return;
        };
        let subject = ops
            .first()
            .map_or_else(|| node.names.blocks(), |op| node.names.op_subject(op, &fs));
        let cut = Cut {
            epoch,
            removals: ops
                .into_iter()
                .map(|op| loam_field::LogEntry::new(0, 0, op).encode())
                .collect(),
            lump: lump.encode(),
        };
        let m = OpMessage {
            kind: Kind::Cut,
            author: 0,
            op_id: 0,
            record: rmp_serde::to_vec_named(&cut).expect("cuts serialise"),
        };
        node.blocks.published += 1;
        let out = Outgoing {
            subject,
            msg_id: format!("c{epoch}-{}", node.blocks.published),
            payload: m.encode(),
        };
        let _ = node.publish.send(out);
    }

    /// The field's side of a cut at stream `seq` was applied (`removed`): its ops go out as
    /// the server's; the lump is a request every node notes and the authority decides now,
    /// with the blocks its removal undermined.
    pub(crate) fn take_cut(
        &mut self,
        seq: u64,
        removed: Vec<(loam_field::LogEntry, loam_field::EditOutcome)>,
        lump: Vec<u8>,
    ) {
        let mut changed = Vec::new();
        for (entry, outcome) in removed {
            changed.extend(outcome.changed);
            self.accept_terrain(0, 0, entry, &outcome);
        }
        let Some(node) = &mut self.node else { return };
        node.blocks.replica.request_lump(seq, lump.clone());
        if node.blocks.acting.is_none() {
            return;
        }
        match BlockOp::decode(&lump) {
            Ok(op @ BlockOp::Lump { .. }) => self.lump_falls(&changed, &op, seq),
            _ => {
                let why = "a cut whose lump is not a lump op".to_string();
                self.publish_outcome(0, seq, Verdict::Refused(why), None);
            }
        }
    }

    /// A blocks message at stream `seq` ([`BlockReplica::apply`]): an outcome goes to the
    /// clients as the single server sends its own; a request is decided here if this node
    /// is the authority; an announcement makes this node the authority or stops it.
    pub(crate) fn take_blocks_message(&mut self, seq: u64, m: &OpMessage) {
        let Some(node) = &mut self.node else { return };
        match node.blocks.replica.apply(seq, m) {
            BlockApplied::Requested => {
                let (author, op_id) = (m.author, m.op_id);
                self.note_op_id(author, op_id);
                if self
                    .node
                    .as_ref()
                    .is_some_and(|n| n.blocks.acting.is_some())
                {
                    self.decide(Request {
                        seq,
                        author,
                        op_id,
                        op: m.record.clone(),
                    });
                }
            }
            BlockApplied::Outcome {
                author,
                op_id,
                outcome,
            } => match outcome.verdict {
                // Step 0: see `cluster/blocks.rs`.
                Verdict::Accepted(op) => self.record_block_op(author, op_id, 0, op, outcome.delta),
                Verdict::Refused(reason) => self.refuse(author, op_id, reason),
                Verdict::Event => self.push_events(outcome.delta, 0),
            },
            BlockApplied::Authority { node: id, epoch } => {
                let mine = id == node.node_id && node.blocks.lease == Some(epoch);
                tracing::info!(
                    stream_seq = seq,
                    "node {id} decides the blocks (epoch {epoch})"
                );
                if mine {
                    self.start_authority(epoch);
                } else if node.blocks.acting.is_some() {
                    self.stop_authority();
                }
            }
            BlockApplied::Late { epoch } => {
                if node.blocks.late_logged != epoch {
                    node.blocks.late_logged = epoch;
                    tracing::info!(
                        stream_seq = seq,
                        "skipping the outcomes of the authority of epoch {epoch}, which came \
                         after the authority of epoch {} took over (its undecided requests are \
                         decided again)",
                        node.blocks.replica.epoch
                    );
                }
            }
            BlockApplied::NotBlocks => {}
            BlockApplied::Skipped(why) => {
                tracing::warn!(stream_seq = seq, "skipped a blocks message: {why}");
            }
        }
    }

    /// The lease task took the block lease (`Some(epoch)`: the node acts once its
    /// announcement comes back) or lost it (`None`: it stops deciding at once).
    pub(crate) fn lease_changed(&mut self, epoch: Option<u64>) {
        let Some(node) = &mut self.node else { return };
        node.blocks.lease = epoch;
        if epoch.is_none() && node.blocks.acting.is_some() {
            self.stop_authority();
        }
    }

    /// This node decides the blocks from here on: its block world is made from the
    /// replica (the records every node has at this point of the stream), and the requests
    /// no authority decided yet are decided in stream order.
    fn start_authority(&mut self, epoch: u64) {
        let Some(node) = &mut self.node else { return };
        let mut physics = PhysicsWorld::new(PhysicsSettings::default())
            .expect("the default physics settings are valid");
        let mut world = match BlockWorld::load(node.blocks.replica.save(), &mut physics) {
            Ok(w) => w,
            Err(e) => {
                tracing::error!("cannot decide the blocks: the replica does not load: {e}");
                return;
            }
        };
        world.set_tracking(true);
        let mut colliders = TerrainColliders::default();
        for (pos, _) in world.store().iter() {
            colliders.ensure(&self.field, pos.min_corner());
        }
        for p in world.pieces() {
            colliders.ensure(&self.field, p.pose.position.map(f64::from));
        }
        node.blocks.acting = Some(epoch);
        node.blocks.published = 0;
        let node_islands = node.blocks.islands;
        let undecided = node.blocks.replica.undecided();
        self.sim.blocks = world;
        self.sim.physics = physics;
        self.sim.colliders = colliders;
        self.sim.step_base = 0;
        self.sim.stepped_at = Instant::now();
        self.sim.stepping = None;
        self.sim.islands = node_islands;
        self.sim.pending_cuts.clear();
        tracing::info!(
            "deciding the world's blocks (epoch {epoch}): {} held blocks, {} pieces, {} \
             requests to decide",
            self.sim.blocks.store().len(),
            self.sim.blocks.pieces().count(),
            undecided.len()
        );
        for r in undecided {
            self.decide(r);
        }
    }

    /// This node no longer decides: its block world is emptied (what it decided and did
    /// not publish is decided again by the next authority).
    fn stop_authority(&mut self) {
        let Some(node) = &mut self.node else { return };
        node.blocks.acting = None;
        self.empty_simulation();
        tracing::warn!("no longer deciding the world's blocks");
    }

    /// Empties the block world the node would decide on (a node that does not decide
    /// keeps none: its clients see the replica), and points the records it sends at the
    /// replica's pieces.
    pub(crate) fn empty_simulation(&mut self) {
        if let Some(node) = &self.node {
            let vs = self.field.settings().voxel_size;
            self.sim.piece_bricks = node
                .blocks
                .replica
                .world
                .pieces()
                .map(|p| (p.id, loam_protocol::blocks::brick_of_piece(p, vs)))
                .collect();
        }
        let physics = PhysicsWorld::new(PhysicsSettings::default())
            .expect("the default physics settings are valid");
        self.sim.blocks = BlockWorld::new(MaterialTable::standard(), BlockSettings::default())
            .expect("the standard materials and default settings are valid");
        self.sim.physics = physics;
        self.sim.colliders = TerrainColliders::default();
        self.sim.stepping = None;
        self.sim.islands = None;
        self.sim.pending_cuts.clear();
    }

    /// The authority decides one request (a client's block op, or a lump of the server's).
    fn decide(&mut self, r: Request) {
        let op = match BlockOp::decode(&r.op) {
            Ok(op) => op,
            Err(e) => {
                return self.publish_outcome(
                    r.author,
                    r.op_id,
                    Verdict::Refused(e.to_string()),
                    None,
                );
            }
        };
        if matches!(op, BlockOp::Lump { .. }) != (r.author == 0) {
            let why = "a lump is the server's, and the server sends only lumps";
            return self.publish_outcome(r.author, r.op_id, Verdict::Refused(why.into()), None);
        }
        if matches!(op, BlockOp::Lump { .. }) {
            // Its removal was applied when its cut came (this authority's or the last's).
            return self.lump_falls(&[], &op, r.op_id);
        }
        self.decide_block_op(r.author, r.op_id, &op);
    }
}
