//! The ordering thread's blocks: block ops in the one order, terrain ops that undermine
//! blocks or cut lumps of terrain loose, the physics steps that let pieces fall and come to
//! rest, and the records clients are sent of all of it.
//!
//! ```text
//!  BlockOp ──▶ decode, check op id ──▶ BlockWorld::apply (refused: unchanged) ──▶ numbered,
//!              logged (append_records), delta ──▶ BlockOp {seq, author, op id, step, op, delta}
//!  terrain op ──▶ colliders marked stale ──▶ terrain_changed ──▶ Blocks {seq, delta}
//!              └─ a dig: its box queued for the lump search (`lumps.rs`)
//!  tick ──▶ stale colliders to the ground worker (`ground.rs`, `colliders.rs`)
//!  tick ──▶ physics steps at the fixed timestep while a piece is awake, one between each
//!          two commands (`steps.rs`) ──▶ Blocks {seq, delta}
//! ```
//!
//! Every record goes out behind the op it follows, once that op is durable, to the clients
//! whose region holds one of its records (and to the author); pieces gone go to everyone.
//! The physics steps run only while a piece is awake: a block op is logged with the step it
//! was applied at (`step_base + physics.step_count()`), so a replay of the log steps exactly
//! as often between the same ops.

use std::time::Instant;

use bytes::Bytes;
use loam_blocks::{
    BlockDelta, BlockOp, BlockSpec, FieldGround, MaterialTable, PieceState, field_collider_box,
};
use loam_field::{CsgMode, EditOp, SampleBox};
use loam_store::{BlockLogEntry, LogRecord};

use super::ground::{Done, Job, RESCUE_AFTER, run_here};
use super::order::{BlockItem, Item, Order};
use crate::cluster::blocks::Verdict;
use crate::protocol::{BlockCatchUp, BlockEvents, BlockOpRecord, BrickBox, ServerMessage};
use loam_protocol::blocks::{block_hash, blocks_in, brick_of_block, brick_of_piece, delta_box};

/// Most colliders one job of the ground worker builds (a few milliseconds each).
const BUILDS_PER_JOB: usize = 8;
/// Records (held blocks count one, pieces their blocks) per block catch-up message.
const CATCH_UP_RECORDS: usize = 4096;

/// Splits a delta into parts of at most [`CATCH_UP_RECORDS`] records (a piece counts its
/// blocks) that, applied one after the other, do what the whole does: the records keep their
/// order of application (gone, unheld, pieces, held).
pub(super) fn split_delta(d: BlockDelta) -> Vec<BlockDelta> {
    let mut out = Vec::new();
    let mut part = BlockDelta::default();
    let mut size = 0;
    let mut room = |w: usize, part: &mut BlockDelta, out: &mut Vec<BlockDelta>| {
        if size > 0 && size + w > CATCH_UP_RECORDS {
            out.push(std::mem::take(part));
            size = 0;
        }
        size += w;
    };
    for g in d.gone {
        room(1, &mut part, &mut out);
        part.gone.push(g);
    }
    for u in d.unheld {
        room(1, &mut part, &mut out);
        part.unheld.push(u);
    }
    for p in d.pieces {
        room(p.blocks.len(), &mut part, &mut out);
        part.pieces.push(p);
    }
    for h in d.held {
        room(1, &mut part, &mut out);
        part.held.push(h);
    }
    out.push(part);
    out
}

/// Whether `op` may cut a lump of terrain loose (it can make solid samples air).
pub(super) fn may_cut(op: &EditOp) -> bool {
    match op {
        EditOp::Sphere { mode, .. }
        | EditOp::Cuboid { mode, .. }
        | EditOp::Capsule { mode, .. }
        | EditOp::Cylinder { mode, .. }
        | EditOp::Torus { mode, .. } => *mode != CsgMode::Union,
        EditOp::Raise { .. } | EditOp::Paint { .. } => false,
        _ => true,
    }
}

/// A lump of terrain falls as stone blocks.
pub(super) fn lump_spec(_: loam_field::MaterialId) -> BlockSpec {
    BlockSpec::of(MaterialTable::STONE)
}

impl Order {
    /// The physics step in the world file's numbering.
    pub(super) fn log_step(&self) -> u64 {
        self.sim.step_base + self.sim.physics.step_count()
    }

    /// Validates and applies one block op (a refused op changes nothing) and adds it to the
    /// group.
    pub(super) fn take_block_op(&mut self, client: u64, op_id: u64, bytes: &[u8]) {
        if let Some(op) = self.admit_block_op(client, op_id, bytes) {
            self.decide_block_op(client, op_id, &op);
        }
    }

    /// The checks a client's block op passes before it is applied (here) or published as a
    /// request (a node, `order/node_blocks.rs`): op ids increase, the op decodes, it is not a
    /// lump (those are the server's). Refuses the op and returns `None` when one fails.
    pub(super) fn admit_block_op(
        &mut self,
        client: u64,
        op_id: u64,
        bytes: &[u8],
    ) -> Option<BlockOp> {
        if !self.take_op_id(client, op_id) {
            return None;
        }
        let op = match BlockOp::decode(bytes) {
            Ok(op) => op,
            Err(e) => {
                self.refuse(client, op_id, e.to_string());
                return None;
            }
        };
        if matches!(op, BlockOp::Lump { .. }) {
            let why = "lump ops are made by the server (a dig that cuts terrain loose)";
            self.refuse(client, op_id, why.into());
            return None;
        }
        Some(op)
    }

    /// Applies a block op to the block world the server decides on: accepted (its records
    /// go out behind it) or refused, changing nothing. A node's block authority publishes
    /// the verdict instead (`order/node_blocks.rs`).
    pub(super) fn decide_block_op(&mut self, client: u64, op_id: u64, op: &BlockOp) {
        // What happened since the last step goes out before this op.
        self.flush_block_events();
        let at = match op {
            BlockOp::Place { at, .. } | BlockOp::Break { at } | BlockOp::Chisel { at, .. } => {
                Some(at.min_corner())
            }
            BlockOp::BreakOff { piece, .. } => self
                .sim
                .blocks
                .piece(*piece)
                .map(|p| p.pose.position.map(f64::from)),
            BlockOp::Lump { .. } => None,
        };
        if let Some(at) = at.filter(|p| p.iter().all(|c| c.is_finite())) {
            self.sim.colliders.ensure(&self.field, at);
        }
        if let Err(e) = self
            .sim
            .blocks
            .apply(&mut self.sim.physics, &FieldGround(&self.field), op)
        {
            if self.node.is_some() {
                return self.publish_outcome(client, op_id, Verdict::Refused(e.to_string()), None);
            }
            return self.refuse(client, op_id, e.to_string());
        }
        self.accept_block(client, op_id, op);
    }

    /// Numbers an applied block op and adds it to the group with the records it changed (a
    /// node's authority publishes them: they are numbered when they come back).
    pub(super) fn accept_block(&mut self, client: u64, op_id: u64, op: &BlockOp) {
        let delta = self.sim.blocks.take_delta();
        self.sim.colliders.ensure_delta(&self.field, &delta);
        if self.node.is_some() {
            return self.publish_outcome(
                client,
                op_id,
                Verdict::Accepted(op.encode()),
                Some(delta),
            );
        }
        let step = self.log_step();
        self.record_block_op(client, op_id, step, op.encode(), delta);
    }

    /// Numbers a block op applied at physics step `step` and adds it to the group: its log
    /// record and the frame of it and the records it changed (a collapse too large for one
    /// message follows as events).
    pub(super) fn record_block_op(
        &mut self,
        client: u64,
        op_id: u64,
        step: u64,
        bytes: Vec<u8>,
        delta: BlockDelta,
    ) {
        self.journal.reserve_seq();
        let mut parts = split_delta(delta).into_iter();
        let first = parts.next().unwrap_or_default();
        let (blocks, to_all) = self.reach_of(&first);
        let frame = ServerMessage::BlockOp(BlockOpRecord {
            seq: self.journal.last_seq(),
            author: client,
            op_id,
            step,
            op: bytes.clone(),
            delta: first,
        });
        self.durability.unsent.push(LogRecord::Block(BlockLogEntry {
            seq: self.journal.last_seq(),
            step,
            op: bytes,
        }));
        self.durability
            .inflight
            .push_back(Item::Block(Box::new(BlockItem {
                seq: self.journal.last_seq(),
                event: false,
                author: client,
                frame: frame.encode().into(),
                blocks,
                to_all,
            })));
        for part in parts {
            self.push_events(part, step);
        }
    }

    /// Where a delta's records lie, and where the pieces it moves were last sent from, and
    /// whether it removes pieces (everyone is told). A piece's record goes to the clients
    /// whose region holds its new brick *and* to those whose region held the brick of its
    /// last record: rubble nudged across a brick border (or moving off as it starts to fall)
    /// would otherwise stay, at rest, in the old region's replicas and their block hash.
    fn reach_of(&mut self, delta: &BlockDelta) -> (Option<BrickBox>, bool) {
        let vs = self.field.settings().voxel_size;
        let mut reach = delta_box(delta, vs);
        for p in &delta.pieces {
            let now = brick_of_piece(p, vs);
            if let Some(old) = self.sim.piece_bricks.insert(p.id, now) {
                let b = reach.get_or_insert(BrickBox { min: old, max: old });
                b.min = [0, 1, 2].map(|i| b.min[i].min(old[i]));
                b.max = [0, 1, 2].map(|i| b.max[i].max(old[i]));
            }
        }
        for id in &delta.gone {
            self.sim.piece_bricks.remove(id);
        }
        (reach, !delta.gone.is_empty())
    }

    /// Adds what changed (records of a step or of a terrain op, at physics step `step`) to
    /// the group as events after the current op.
    pub(super) fn push_events(&mut self, delta: BlockDelta, step: u64) {
        let (blocks, to_all) = self.reach_of(&delta);
        let frame = ServerMessage::Blocks(BlockEvents {
            seq: self.journal.last_seq(),
            step,
            delta,
        });
        self.durability
            .inflight
            .push_back(Item::Block(Box::new(BlockItem {
                seq: self.journal.last_seq(),
                event: true,
                author: 0,
                frame: frame.encode().into(),
                blocks,
                to_all,
            })));
    }

    /// What changed in the block world since the last op or flush, as events after the
    /// current op.
    pub(super) fn flush_block_events(&mut self) {
        let delta = self.sim.blocks.take_delta();
        if delta.is_empty() {
            return;
        }
        self.sim.colliders.ensure_delta(&self.field, &delta);
        if self.node.is_some() {
            return self.publish_outcome(0, 0, Verdict::Event, Some(delta));
        }
        let step = self.log_step();
        for part in split_delta(delta) {
            self.push_events(part, step);
        }
    }

    /// After a terrain op changed `changed`: colliders, blocks that lost their ground, and
    /// (for a dig) lumps of terrain cut loose, which leave the field (box digs, logged as
    /// terrain ops of the server) and fall (a lump block op of the server).
    pub(super) fn after_terrain(&mut self, changed: SampleBox, may_cut: bool) {
        // Only a non-finite region fails, and samples are finite.
        let _ = loam_session::terrain_changed(
            &mut self.sim.blocks,
            &mut self.sim.physics,
            &mut self.sim.colliders,
            &self.field,
            changed,
        );
        self.flush_block_events();
        if may_cut && self.sim.islands.is_some() {
            self.queue_cut(changed);
        }
    }

    /// Whether a piece is falling or awake.
    pub(super) fn blocks_awake(&self) -> bool {
        loam_session::pieces_awake(&self.sim.blocks, &self.sim.physics)
    }

    /// Hands stale colliders to the ground worker with a snapshot of the field: missing
    /// ones (they hold falling pieces) unless such a build is under way, even while a
    /// refresh waits for its turn; only changed ones (a refresh, paced more slowly: see
    /// `ground.rs`) when no collider job is under way. The end of each starts the next. A
    /// collider job the worker has held for [`RESCUE_AFTER`] (starved of CPU) is taken over
    /// here, one chunk per call.
    pub(super) fn build_colliders(&mut self) {
        if self.sim.ground.starved(Instant::now(), RESCUE_AFTER) {
            // One chunk per call (once or twice a tick, and at each result): ops wait for it.
            let n = self
                .sim
                .colliders
                .rescue(&mut self.sim.physics, &self.field, 1);
            self.sim.ground.rescued += n as u64;
        }
        if self.sim.ground.building() {
            return;
        }
        let urgent = self.sim.colliders.wants_missing();
        if !urgent && (self.sim.ground.refreshing() || !self.sim.colliders.stale()) {
            return;
        }
        let (keys, at) = self.sim.colliders.next_builds(BUILDS_PER_JOB);
        if keys.is_empty() {
            return;
        }
        let refresh = !urgent;
        // Only the bricks the builds read (see `cut_loose`).
        let reads: Vec<_> = keys.iter().filter_map(|&k| field_collider_box(k)).collect();
        let job = Job::Colliders {
            field: self.field.snapshot_of(&reads),
            at,
            keys,
            refresh,
        };
        if let Err(job) = self.sim.ground.send(job) {
            // The worker is gone (it panicked): build here rather than never.
            if let Done::Colliders { at, built, refresh } = run_here(*job) {
                self.sim
                    .colliders
                    .install(&mut self.sim.physics, at, built, refresh);
            }
        }
    }

    /// The worker built colliders from the field of stamp `at` (in a refresh or not): they
    /// go in (see `colliders.rs`), and the next build starts.
    pub(super) fn colliders_built(
        &mut self,
        at: u64,
        built: Vec<([i32; 3], Option<loam_physics::TerrainShape>)>,
        refresh: bool,
    ) {
        self.sim.ground.collider_job_ended(refresh);
        self.sim
            .colliders
            .install(&mut self.sim.physics, at, built, refresh);
        self.build_colliders();
    }

    /// The ground worker stopped (it panicked): what it was doing is lost (the chunks are
    /// handed out again; the digs it was searching stay where they are), and its work is
    /// done here from now on.
    pub(super) fn ground_gone(&mut self) {
        tracing::error!(
            "the ground worker stopped; lumps and colliders are now made on the ordering thread"
        );
        self.sim.ground.alive = false;
        self.sim.ground.searching = 0;
        self.sim.ground.collider_job_ended(false);
        self.sim.ground.collider_job_ended(true);
        self.sim.colliders.abandon_builds();
    }

    /// Asks for the colliders around every falling piece.
    pub(super) fn ensure_falling(&mut self) {
        self.sim
            .colliders
            .ensure_falling(&self.field, &self.sim.blocks);
    }

    /// The block catch-up of `region` (the records outside `keep`), sent before its bricks.
    pub(super) fn block_catch_up(&self, region: BrickBox, keep: Option<BrickBox>) -> Vec<Bytes> {
        let vs = self.field.settings().voxel_size;
        let mut all = blocks_in(self.shown_blocks(), region, vs);
        if let Some(k) = keep {
            all.held.retain(|h| !k.contains(brick_of_block(h.pos, vs)));
            all.pieces.retain(|p| !k.contains(brick_of_piece(p, vs)));
        }
        let mut out = Vec::new();
        let mut part = BlockDelta::default();
        let mut size = 0;
        let make = |delta, done| -> Bytes {
            ServerMessage::BlockCatchUp(BlockCatchUp {
                seq: self.journal.last_seq(),
                region,
                keep,
                delta,
                done,
            })
            .encode()
            .into()
        };
        for h in all.held {
            if size >= CATCH_UP_RECORDS {
                out.push(make(std::mem::take(&mut part), false));
                size = 0;
            }
            size += 1;
            part.held.push(h);
        }
        for p in all.pieces {
            if size + p.blocks.len() > CATCH_UP_RECORDS && size > 0 {
                out.push(make(std::mem::take(&mut part), false));
                size = 0;
            }
            size += p.blocks.len();
            part.pieces.push(p);
        }
        out.push(make(part, true));
        out
    }

    /// The block hash over `region` ([`crate::protocol::block_hash`]).
    pub(super) fn block_hash(&self, region: Option<BrickBox>) -> [u8; 32] {
        block_hash(
            self.shown_blocks(),
            region,
            self.field.settings().voxel_size,
        )
    }

    /// Counts of held blocks, pieces and falling pieces.
    pub(super) fn block_counts(&self) -> (usize, usize, usize) {
        let shown = self.shown_blocks();
        let falling = shown
            .pieces()
            .filter(|p| matches!(p.state, PieceState::Falling))
            .count();
        (shown.store().len(), shown.pieces().count(), falling)
    }
}

#[cfg(test)]
mod tests {
    use loam_blocks::{BlockPos, BlockSize, PieceId};

    use super::*;

    #[test]
    fn a_large_delta_splits_in_order_of_application() {
        let d = BlockDelta {
            gone: (0..10).map(PieceId).collect(),
            unheld: (0..9000)
                .map(|i| BlockPos::new(BlockSize::Quarter, [i, 0, 0]).unwrap())
                .collect(),
            ..Default::default()
        };
        let parts = split_delta(d.clone());
        assert_eq!(parts.len(), 3);
        assert!(parts.iter().all(|p| p.len() <= CATCH_UP_RECORDS));
        assert_eq!(parts[0].gone, d.gone, "removals go first");
        let unheld: Vec<_> = parts.iter().flat_map(|p| p.unheld.clone()).collect();
        assert_eq!(unheld, d.unheld);
        assert_eq!(
            split_delta(BlockDelta::default()),
            vec![BlockDelta::default()]
        );
    }
}
