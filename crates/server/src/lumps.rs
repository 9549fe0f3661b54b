//! Lumps of terrain a dig cut loose: digs queued on the ordering thread, the search on the
//! ground worker (`ground.rs`), and what the ordering thread does with what it found.
//!
//! ```text
//!  dig (changed box) ──▶ queue_cut (merged with queued digs near it)
//!  tick, no search under way ──▶ boxes + snapshot of their search boxes ──▶ ground worker:
//!            find_islands
//!  found ──▶ each island searched again on the field as it is now, its box taken as the
//!            change (`Island::recheck`: a box of the island's size grown by the margin)
//!            ──▶ still loose: removal ops (terrain, author 0) + Lump (block op, author 0),
//!            in the one order
//! ```
//!
//! The check on return is exact (a solid component that ends inside the searched box is
//! surrounded by air, loose whatever lies beyond), so ops ordered while the worker searched
//! change what falls much as a search after them would: a dig that took part of the lump
//! (the rest falls), a build that joined it to the ground (nothing falls) or added to it
//! (the whole falls).

use loam_blocks::{BlockOp, FieldGround, Island, island_search_box};
use loam_field::SampleBox;

use super::blocks::lump_spec;
use super::ground::{Done, Job, run_here};
use super::order::Order;
use crate::cluster::blocks::Verdict;
use crate::cluster::log::apply_server_stroke;

/// Queued digs closer than this (samples) search for lumps together…
const MERGE_GAP: i32 = 8;
/// …while their box stays this narrow (samples per axis).
const MERGE_SPAN: i32 = 64;

impl Order {
    /// Notes a dig's changed box for the next lump search, merged with a queued box
    /// near it (digs in one place search once per tick, not once per op).
    pub(super) fn queue_cut(&mut self, b: SampleBox) {
        let near = |a: &SampleBox| {
            let (lo, hi) = (a.min.to_array(), a.max.to_array());
            let (blo, bhi) = (b.min.to_array(), b.max.to_array());
            // In i64: boxes at the ends of the i32 sample range are valid.
            (0..3).all(|i| {
                let [l, h, bl, bh] = [lo[i], hi[i], blo[i], bhi[i]].map(i64::from);
                let (gap, span) = (i64::from(MERGE_GAP), i64::from(MERGE_SPAN));
                bl <= h + gap && l <= bh + gap && h.max(bh) - l.min(bl) <= span
            })
        };
        if let Some(a) = self.sim.pending_cuts.iter_mut().find(|a| near(a)) {
            *a = a.union(b);
        } else {
            self.sim.pending_cuts.push(b);
        }
    }

    /// Hands the queued digs to the ground worker with a snapshot of the field, unless a
    /// search is under way (its end starts the next).
    pub(super) fn cut_loose(&mut self) {
        let Some(settings) = self.sim.islands else {
            return;
        };
        if self.sim.ground.searching > 0 || self.sim.pending_cuts.is_empty() {
            return;
        }
        let boxes = std::mem::take(&mut self.sim.pending_cuts);
        // Only the bricks the searches read: while the job lives, an op's first write to a
        // brick the snapshot shares copies it.
        let reads: Vec<SampleBox> = boxes
            .iter()
            .filter_map(|b| island_search_box(*b, &settings))
            .collect();
        let job = Job::Islands {
            field: self.field.snapshot_of(&reads),
            boxes,
            settings,
        };
        if let Err(job) = self.sim.ground.send(job) {
            // The worker is gone (it panicked): search here rather than never.
            if let Done::Islands(found) = run_here(*job) {
                self.drop_islands(found);
            }
        }
    }

    /// The worker's search ended: what is still loose falls, and the next search starts.
    pub(super) fn islands_found(&mut self, found: Vec<Island>) {
        self.sim.ground.searching = 0;
        self.drop_islands(found);
        self.cut_loose();
    }

    /// Checks each island found in a snapshot on the field as it is now (see the module
    /// docs) and drops what is still loose.
    fn drop_islands(&mut self, found: Vec<Island>) {
        let Some(settings) = self.sim.islands else {
            return;
        };
        for island in found {
            // An island found twice (from two boxes) is air by its second check.
            let Ok(now) = island.recheck(&self.field, &settings) else {
                continue;
            };
            for island in now {
                self.drop_island(island);
            }
        }
    }

    /// A lump of terrain leaves the field and falls (a node's block authority publishes it
    /// as a cut, applied by every node when it comes back: `order/node_blocks.rs`).
    fn drop_island(&mut self, island: Island) {
        if self.node.is_some() {
            return self.publish_cut(island);
        }
        let fs = *self.field.settings();
        let (Ok(ops), Ok(lump)) = (island.removal_ops(&fs), island.lump(lump_spec)) else {
            return;
        };
        let mut removed = Vec::new();
        for (entry, outcome) in apply_server_stroke(&mut self.journal, &mut self.field, &ops) {
            removed.extend(outcome.changed);
            self.accept_terrain(0, 0, entry, &outcome);
        }
        self.lump_falls(&removed, &lump, 0);
    }

    /// The blocks' side of a lump taken out of the field (`removed`: the boxes its removal
    /// changed): the colliders there are made again (the lump starts where the terrain was:
    /// no step before they follow), the lump falls as the server's block op `op_id` (0 on a
    /// single server, the cut's stream sequence on a node), and what the removal undermined
    /// follows.
    pub(super) fn lump_falls(&mut self, removed: &[SampleBox], lump: &BlockOp, op_id: u64) {
        for c in removed {
            self.sim
                .colliders
                .invalidate(c.min.to_array(), c.max.to_array());
        }
        if self
            .sim
            .blocks
            .apply(&mut self.sim.physics, &FieldGround(&self.field), lump)
            .is_ok()
        {
            self.accept_block(0, op_id, lump);
        } else if self.node.is_some() {
            let why = "the lump does not apply to the blocks".to_string();
            self.publish_outcome(0, op_id, Verdict::Refused(why), None);
        }
        for &c in removed {
            // Only a non-finite region fails, and samples are finite.
            let _ = loam_session::terrain_changed(
                &mut self.sim.blocks,
                &mut self.sim.physics,
                &mut self.sim.colliders,
                &self.field,
                c,
            );
        }
        self.flush_block_events();
    }
}
