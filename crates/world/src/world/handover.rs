//! What the world hands over and takes in besides ops and viewers: the groups of meshes for
//! the front end ([`World::pull`], complete edits first) and a field edited elsewhere
//! ([`World::replace_bricks`], [`World::take_patch`]: a network client's).

use crate::Instant;
use std::collections::BTreeMap;

use loam_field::{BRICK_SAMPLES, BrickKey, BrickPatch, Field, SampleBox, SamplePos};

use super::{Out, World};
use crate::batch::{Batch, BatchKind, Group, PullBudget, Update};
use crate::settings::WorldError;

impl World {
    /// Takes the bricks of `field` (the same generator and settings: a network client's
    /// predicted field, say) in place of this world's, and marks every chunk that reads a
    /// brick that differs (by brick id: added, removed or replaced) for the next
    /// [`World::update`]'s batch, as an op's chunks are. Compares every brick: where the
    /// caller knows which bricks may differ, [`World::take_patch`] costs only those. The
    /// history and the op log are not touched. Returns the bricks that differed, in
    /// ascending key order.
    ///
    /// # Errors
    /// [`WorldError::FieldMismatch`] when `field`'s settings differ from this world's or it
    /// does not share this world's generator (the same `Arc`: build one field from the
    /// other, e.g. with `Clone`); nothing changes then.
    pub fn replace_bricks(&mut self, field: &Field) -> Result<Vec<BrickKey>, WorldError> {
        let mut changed = Vec::new();
        {
            let mut a = self.field.bricks().peekable();
            let mut b = field.bricks().peekable();
            loop {
                match (a.peek(), b.peek()) {
                    (None, None) => break,
                    (Some(&(ka, _)), None) => {
                        changed.push(ka);
                        a.next();
                    }
                    (None, Some(&(kb, _))) => {
                        changed.push(kb);
                        b.next();
                    }
                    (Some(&(ka, ba)), Some(&(kb, bb))) => match ka.cmp(&kb) {
                        std::cmp::Ordering::Less => {
                            changed.push(ka);
                            a.next();
                        }
                        std::cmp::Ordering::Greater => {
                            changed.push(kb);
                            b.next();
                        }
                        std::cmp::Ordering::Equal => {
                            if ba.id() != bb.id() {
                                changed.push(ka);
                            }
                            a.next();
                            b.next();
                        }
                    },
                }
            }
        }
        self.take_patch(&field.patch(changed))
    }

    /// Takes the bricks of `patch` (from a field of the same generator and settings: a
    /// network client's, whose `take_changed_bricks` named them) in place of this world's,
    /// and marks every chunk that reads one that differs for the next batch, as
    /// [`World::replace_bricks`] does, costing only the patch's bricks. The world's field
    /// keeps its own map of bricks ([`Field::apply_patch`]): the source field's next write
    /// copies nothing of it. A brick that changed but is not in the patch is not taken: the
    /// patch must name every brick whose samples changed. Returns the bricks that differed,
    /// in key order.
    ///
    /// # Errors
    /// [`WorldError::FieldMismatch`] as [`World::replace_bricks`]; nothing changes then.
    pub fn take_patch(&mut self, patch: &BrickPatch) -> Result<Vec<BrickKey>, WorldError> {
        let changed = self.field.apply_patch(patch)?;
        if changed.is_empty() {
            return Ok(changed);
        }
        let now = Instant::now();
        for key in &changed {
            self.cache.remove(*key);
            let min = SamplePos::new(
                key.x * BRICK_SAMPLES,
                key.y * BRICK_SAMPLES,
                key.z * BRICK_SAMPLES,
            );
            let max = SamplePos::new(
                min.x + BRICK_SAMPLES - 1,
                min.y + BRICK_SAMPLES - 1,
                min.z + BRICK_SAMPLES - 1,
            );
            self.invalidate(&SampleBox { min, max }, now);
        }
        self.rec.edits += 1;
        Ok(changed)
    }

    /// Moves complete edit batches ahead of the streaming batches before them in the outbox
    /// (keeping their order, and never past a removal notice): an edit is shown before the
    /// rest of an initial load that a slow front end pulls a few groups a frame. Their chunks
    /// never overlap (an edit takes its chunks out of older batches).
    fn edits_first(&mut self) {
        let limit = self
            .outbox
            .iter()
            .position(|o| matches!(o, Out::Removed(_)))
            .unwrap_or(self.outbox.len());
        let is_edit = |o: &Out, batches: &BTreeMap<u64, Batch>| match o {
            Out::Batch(id) => batches
                .get(id)
                .is_some_and(|b| b.kind == BatchKind::Edit && b.complete.is_some()),
            Out::Removed(_) => false,
        };
        if !self
            .outbox
            .iter()
            .take(limit)
            .any(|o| is_edit(o, &self.batches))
        {
            return;
        }
        let head: Vec<Out> = self.outbox.drain(..limit).collect();
        let (edits, rest): (Vec<Out>, Vec<Out>) =
            head.into_iter().partition(|o| is_edit(o, &self.batches));
        for o in edits.into_iter().chain(rest).rev() {
            self.outbox.push_front(o);
        }
    }

    /// Hands over what is ready within `budget`, complete edits first, then oldest first:
    /// groups of meshes to show together and removal notices.
    pub fn pull(&mut self, budget: PullBudget) -> Vec<Update> {
        let start = Instant::now();
        self.edits_first();
        let (mut out, mut meshes) = (Vec::new(), 0usize);
        while let Some(&next) = self.outbox.front() {
            let id = match next {
                Out::Removed(key) => {
                    self.outbox.pop_front();
                    out.push(Update::Removed(key));
                    continue;
                }
                Out::Batch(id) => id,
            };
            let Some(batch) = self.batches.get(&id).filter(|b| b.complete.is_some()) else {
                // Merged into a newer batch, emptied, or waiting again after a mesher switch
                // (it is queued anew when it completes again).
                self.outbox.pop_front();
                continue;
            };
            let over = meshes + batch.ready.len() > budget.max_chunks
                || budget.max_time.is_some_and(|t| start.elapsed() > t);
            if meshes > 0 && over {
                break;
            }
            self.outbox.pop_front();
            let batch = self.batches.remove(&id).expect("present");
            meshes += batch.ready.len();
            // A frozen batch's chunks were released when it froze (`World::freeze`); they
            // may have moved on or left the view since.
            for key in batch.ready.keys().filter(|_| !batch.frozen) {
                let c = self.chunks.get_mut(key).expect("a ready chunk is loaded");
                c.batch = None;
                c.shown = true;
            }
            if batch.kind == BatchKind::Edit {
                self.rec.batches_delivered += 1;
            }
            out.push(Update::Group(Group {
                id,
                kind: batch.kind,
                ops: batch.edits.len(),
                removed: batch.removed.into_iter().collect(),
                meshes: batch.ready.into_values().collect(),
            }));
        }
        out
    }
}
