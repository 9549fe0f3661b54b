//! Applying ops to the field: an op is first planned (every sample it changes, with the old
//! and new value, read from the field as it is), then committed (bricks made on first touch,
//! samples written). Planning touches nothing, so a rejected op leaves the field as it was.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::brick::{Brick, MaterialId, brick_index};
use crate::coords::{BrickKey, SampleBox, SamplePos};
use crate::field::Field;
use crate::generator::Generator;
use crate::op::{EditError, EditOp};
use crate::quant::Quant;

/// What an applied op changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EditOutcome {
    /// The smallest box holding every changed sample, or `None` if nothing changed.
    pub changed: Option<SampleBox>,
    /// Samples whose value (or material) changed.
    pub samples_changed: u64,
    /// Bricks created by this op.
    pub bricks_created: u32,
}

/// One planned sample write.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Write {
    pub pos: SamplePos,
    pub old: (f32, MaterialId),
    pub new: (f32, MaterialId),
}

/// Every sample an op changes, in ascending (z, y, x) order within the op's box.
#[derive(Debug, Clone, Default)]
pub(crate) struct Plan {
    pub writes: Vec<Write>,
}

/// An op planned on a field ([`Field::plan_edit`]): the samples it changes, old and new,
/// valid for [`Field::commit_edit`] on that field (or a clone of it) until it is next
/// written.
///
/// Committing it gives the field a revision of its own, `after`: every field that commits
/// this plan from the revision it was planned at holds the same samples, so a plan made on
/// one of them after that is valid on all of them. A client that predicts its queued ops on
/// a copy of its confirmed field commits the same plans there when the server confirms them
/// in that order, without planning again.
#[derive(Debug, Clone)]
pub struct PlannedEdit {
    plan: Plan,
    revision: u64,
    after: u64,
}

impl PlannedEdit {
    /// Samples the edit changes.
    pub fn samples(&self) -> usize {
        self.plan.writes.len()
    }
}

impl Plan {
    /// Adds a write if it changes the sample's bits.
    #[inline]
    pub fn push(&mut self, pos: SamplePos, old: (f32, MaterialId), new: (f32, MaterialId)) {
        if new.0.to_bits() != old.0.to_bits() || new.1 != old.1 {
            self.writes.push(Write { pos, old, new });
        }
    }
}

/// Generates each brick in turn.
pub(crate) fn generate_each(g: &Generator, keys: &[BrickKey], vs: f64, band: f64) -> Vec<Brick> {
    keys.iter()
        .map(|&k| Brick::generate(g, k, vs, band))
        .collect()
}

impl Field {
    /// Applies `op`. Only samples within the op's reach (its extent plus the band) whose value
    /// or material changes are written; a brick is created (filled from the generator) the
    /// first time a sample of it changes. Snapshots (clones) taken before keep reading the
    /// old values.
    ///
    /// # Errors
    /// [`EditError`] for NaN or infinite numbers, sizes out of range, a reach outside the
    /// sample range or above `max_edit_samples`, and for `undo` / `redo`, which need a
    /// [`crate::History`]; the field is then unchanged.
    pub fn apply(&mut self, op: &EditOp) -> Result<EditOutcome, EditError> {
        self.apply_with(op, generate_each)
    }

    /// [`Field::apply`], with the bricks the op may create made by `generate(generator, keys,
    /// voxel_size, band)`, which must return [`Brick::generate`] of each key, in order — on
    /// several threads, or copied from a cache (bricks are made before any sample is
    /// written).
    ///
    /// # Errors
    /// As [`Field::apply`].
    ///
    /// # Panics
    /// If `generate` returns a different number of bricks than keys.
    pub fn apply_with(
        &mut self,
        op: &EditOp,
        generate: impl FnOnce(&Generator, &[BrickKey], f64, f64) -> Vec<Brick>,
    ) -> Result<EditOutcome, EditError> {
        let plan = self.plan(op)?;
        Ok(self.commit(&plan.writes, generate))
    }

    /// Plans `op` on the field as it is now, without changing it: the checks and the new
    /// values of [`Field::apply`], for [`Field::commit_edit`] to write later. A client that
    /// queues its own op until the server confirms it plans once and writes the plan then,
    /// rather than planning twice.
    ///
    /// # Errors
    /// As [`Field::apply`]; the field is unchanged either way.
    pub fn plan_edit(&self, op: &EditOp) -> Result<PlannedEdit, EditError> {
        Ok(PlannedEdit {
            plan: self.plan(op)?,
            revision: self.revision,
            after: crate::field::next_revision(),
        })
    }

    /// The checks of [`Field::apply`] that do not read the field's values: `Ok` exactly when
    /// applying `op` would succeed on any field with these settings. For a client that
    /// queues an op on top of others and plans it once, later, on the field the server's
    /// order gives.
    ///
    /// # Errors
    /// As [`Field::apply`].
    pub fn check_edit(&self, op: &EditOp) -> Result<(), EditError> {
        op.validate(self.settings.max_edit_radius)?;
        crate::sculpt::plan::check(self, op)
    }

    /// Writes an edit planned by [`Field::plan_edit`] on this field (or a clone of it) with
    /// no write in between other than commits of the same plans: the result is bit for bit
    /// that of [`Field::apply`] of the op.
    ///
    /// # Errors
    /// [`EditError::FieldChanged`] when the field was written since the edit was planned
    /// (its values may differ from those the plan read); the field is unchanged then.
    pub fn commit_edit(&mut self, edit: &PlannedEdit) -> Result<EditOutcome, EditError> {
        if edit.revision != self.revision {
            return Err(EditError::FieldChanged);
        }
        let out = self.commit(&edit.plan.writes, generate_each);
        self.revision = edit.after;
        Ok(out)
    }

    /// Plans `op` without touching the field.
    pub(crate) fn plan(&self, op: &EditOp) -> Result<Plan, EditError> {
        op.validate(self.settings.max_edit_radius)?;
        match op {
            EditOp::Sphere { .. }
            | EditOp::Cuboid { .. }
            | EditOp::Capsule { .. }
            | EditOp::Cylinder { .. }
            | EditOp::Torus { .. } => crate::sculpt::plan::shape(self, op),
            EditOp::Raise { .. }
            | EditOp::Lower { .. }
            | EditOp::Smooth { .. }
            | EditOp::Flatten { .. }
            | EditOp::Noise { .. } => crate::sculpt::plan::brush(self, op),
            EditOp::Paint { .. } => crate::sculpt::plan::paint(self, op),
            EditOp::Undo { .. } | EditOp::Redo { .. } => {
                Err(EditError::NeedsHistory { kind: op.kind() })
            }
        }
    }

    /// Writes planned samples (their new value and material), creating the bricks they fall
    /// in that do not exist yet with `generate`.
    pub(crate) fn commit(
        &mut self,
        writes: &[Write],
        generate: impl FnOnce(&Generator, &[BrickKey], f64, f64) -> Vec<Brick>,
    ) -> EditOutcome {
        let quant = Quant::new(self.settings.band());
        let mut out = EditOutcome::default();
        let mut per_brick: BTreeMap<BrickKey, Vec<(usize, i16, MaterialId)>> = BTreeMap::new();
        for w in writes {
            let (key, local) = w.pos.brick();
            per_brick.entry(key).or_default().push((
                brick_index(local),
                quant.index(f64::from(w.new.0)),
                w.new.1,
            ));
            match &mut out.changed {
                Some(b) => b.include(w.pos),
                None => out.changed = Some(SampleBox::point(w.pos)),
            }
        }
        out.samples_changed = writes.len() as u64;
        out.bricks_created = self.commit_indices(per_brick, generate);
        out
    }

    /// Sets samples to grid indices, per brick as `(brick_index, q, material)`, creating the
    /// bricks that do not exist yet with `generate`; the number created.
    pub(crate) fn commit_indices(
        &mut self,
        per_brick: BTreeMap<BrickKey, Vec<(usize, i16, MaterialId)>>,
        generate: impl FnOnce(&Generator, &[BrickKey], f64, f64) -> Vec<Brick>,
    ) -> u32 {
        self.revision = crate::field::next_revision();
        let new_keys: Vec<BrickKey> = per_brick
            .keys()
            .filter(|k| !self.bricks.contains_key(k))
            .copied()
            .collect();
        let (vs, band) = (self.settings.voxel_size, self.settings.band());
        let made = if new_keys.is_empty() {
            Vec::new()
        } else {
            generate(&self.generator, &new_keys, vs, band)
        };
        assert_eq!(made.len(), new_keys.len(), "one generated brick per key");
        if per_brick.is_empty() {
            return 0;
        }
        let created = new_keys.len() as u32;
        let mut bricks = std::mem::take(Arc::make_mut(&mut self.bricks));
        for (key, brick) in new_keys.iter().copied().zip(made) {
            crate::field::widen_column(Arc::make_mut(&mut self.columns), key);
            bricks.insert(key, Arc::new(brick));
        }
        // Each written brick becomes a new hot (decoded) brick: its samples are moved out of
        // the old one when nothing else holds them (a snapshot keeps its own), else copied.
        // Whether it differs from the generator is kept up to date on the way (generated.rs).
        let quant = Quant::new(band);
        let touched: Vec<BrickKey> = per_brick.keys().copied().collect();
        for (key, list) in per_brick {
            let old = bricks.remove(&key).expect("made above");
            let before = self.known_before(key, &old, new_keys.binary_search(&key).is_ok());
            let mut s = old.into_samples();
            let mut first_change = None;
            for (i, q, m) in list {
                if first_change.is_none() && (s.q[i] != q || s.m[i] != m) {
                    first_change = Some((i, s.q[i], s.m[i]));
                }
                s.q[i] = q;
                s.m[i] = m;
            }
            let new = Brick::hot(quant, s);
            self.note_written(key, &new, before, first_change);
            bricks.insert(key, Arc::new(new));
        }
        *Arc::make_mut(&mut self.bricks) = bricks;
        // The written bricks become the most recently written hot ones; the least recently
        // written beyond the capacity are packed.
        // Searched from the newest end: a brick written again was mostly written lately. (A
        // scan of the whole list per op was 7 % of `History::apply` with 300 bricks hot,
        // 64 clients' ops in turn; 2.4 % with 81.)
        for key in &touched {
            if let Some(i) = self.hot.iter().rposition(|k| k == key) {
                self.hot.remove(i);
            }
        }
        self.hot.extend(touched);
        self.pack_beyond(self.hot_capacity);
        created
    }
}
