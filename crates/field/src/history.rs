//! Strokes, undo and redo: per-stroke sample deltas, bounded by a memory budget.
//!
//! A stroke groups the ops of one held button. For every sample a stroke changes, the history
//! keeps, per brick (not whole bricks), its value and material from before the stroke (the
//! first time the stroke touches it) and the value and material the stroke left it at (its
//! last write there). Undo and redo are ops themselves ([`EditOp::Undo`], [`EditOp::Redo`]),
//! applied in log order, so a replay of the log through a history gives the live result bit
//! for bit.
//!
//! # The rule: a sample shows its newest done stroke
//!
//! Undo and redo never overwrite a later stroke's work, whoever made it (in multiplayer, the
//! stroke of another player). After any sequence of strokes, undos and redos, every sample a
//! kept stroke touched holds
//!
//! - the value the *newest stroke still done* that touched it left it at, or
//! - when every stroke that touched it is undone, its value from before the oldest of them.
//!
//! So undoing stroke A writes only the samples of A that no newer done stroke touched, each
//! back to what the next older done stroke left there (or to the value from before them all);
//! a sample another player dug after A keeps that player's value. Redoing A writes A's values
//! back where no newer done stroke touched the sample. Undoing every stroke, in any order,
//! gives back the field from before them bit for bit; redoing them all gives back the field
//! they made. Where strokes do not overlap, undo equals a replay of the log without the
//! stroke. Where they do, a newer stroke keeps the values it wrote, which were computed over
//! the older stroke's (a build over a crater that is then undone keeps its own shape, not the
//! shape it would have had on the untouched ground): the rule works on samples, not on ops.
//!
//! Strokes read back from a history written before the values left were kept (their
//! `after` map held only what an undo overwrote) take the value left from the next stroke
//! that touched the sample, or from the field.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::sync::Arc;

use imbl::Vector;

use crate::brick::{Brick, MaterialId, brick_index};
use crate::coords::{BRICK_SAMPLES, BrickKey, SamplePos};
use crate::edit::{EditOutcome, Write, generate_each};
use crate::field::{Field, SampleReader};
use crate::generator::Generator;
use crate::op::{EditError, EditOp};

mod parts;

pub use parts::{HistoryHeader, HistoryPartsError, SharedStroke};

/// Serde for the shared strokes: each written as the plain stroke (the format of an unshared
/// list); read back through [`Written`].
mod shared_strokes {
    use std::sync::Arc;

    use imbl::Vector;
    use serde::Serializer;

    use super::Stroke;

    pub fn serialize<S: Serializer>(v: &Vector<Arc<Stroke>>, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(|a| &**a))
    }
}

/// A [`History`] as serialised (the same fields in the same order), checked on the way in by
/// [`History::from_parts`]: strokes with strictly increasing ids (lookups by id search them
/// in halves), the open and last stroke ids fitting them, the byte count summed again.
#[derive(serde::Deserialize)]
struct Written {
    budget: usize,
    used: usize,
    strokes: Vec<Stroke>,
    open: Option<u64>,
    last_id: Option<u64>,
}

impl TryFrom<Written> for History {
    type Error = HistoryPartsError;

    fn try_from(w: Written) -> Result<Self, HistoryPartsError> {
        let header = HistoryHeader {
            budget: w.budget,
            used: w.used,
            first: w.strokes.first().map(|s| s.id),
            strokes: w.strokes.len() as u64,
            open: w.open,
            last_id: w.last_id,
        };
        let strokes = w
            .strokes
            .into_iter()
            .map(|s| SharedStroke(Arc::new(s)))
            .collect();
        History::from_parts(header, strokes)
    }
}

/// Sample deltas of one brick: local index → (value, material).
type BrickDelta = BTreeMap<u16, (f32, MaterialId)>;

/// Bytes counted per kept sample (index, value, material and map overhead).
const BYTES_PER_SAMPLE: usize = 24;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum State {
    Done,
    Undone,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct Stroke {
    id: u64,
    state: State,
    /// Values from before the stroke (the first time it touched each sample).
    before: BTreeMap<BrickKey, BrickDelta>,
    /// Values the stroke left each sample at (its last write there): what a redo writes, and
    /// what an undo of a newer stroke goes back to. (Histories written before this held only
    /// what an undo overwrote here; see [`Stroke::left`].)
    after: BTreeMap<BrickKey, BrickDelta>,
    /// Entries in `before` and `after` together (the memory budget counts them).
    samples: usize,
}

impl Stroke {
    fn bytes(&self) -> usize {
        self.samples * BYTES_PER_SAMPLE
    }
}

/// The undo history of a field: strokes with their sample deltas, oldest first.
///
/// Serialisable (serde), so a store can keep it beside a bake and undo still works after a
/// reload.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "Written")]
pub struct History {
    budget: usize,
    used: usize,
    /// Shared, so that a clone (a bake's snapshot, taken on the thread that applies ops) costs
    /// a few pointers, whatever the number of strokes: the list is a persistent vector (an RRB
    /// tree, `imbl`), of which a clone shares every node, and the strokes are `Arc`s. A change
    /// while shared copies one stroke and the nodes on its path (chunks of 64 pointers).
    #[serde(serialize_with = "shared_strokes::serialize")]
    strokes: Vector<Arc<Stroke>>,
    /// The stroke new ops go to, until another begins or it is undone.
    open: Option<u64>,
    /// The highest stroke id seen: a new stroke needs a higher one.
    last_id: Option<u64>,
}

impl Default for History {
    fn default() -> Self {
        Self::new(Self::DEFAULT_BUDGET)
    }
}

fn pos_of(key: BrickKey, index: u16) -> SamplePos {
    let (i, n) = (i32::from(index), BRICK_SAMPLES);
    let b = key.min_sample();
    SamplePos::new(b.x + i % n, b.y + (i / n) % n, b.z + i / (n * n))
}

impl History {
    /// Default memory budget: 64 MiB.
    pub const DEFAULT_BUDGET: usize = 64 << 20;

    /// An empty history keeping at most about `budget` bytes of deltas; the oldest strokes are
    /// forgotten first (they can no longer be undone).
    pub fn new(budget: usize) -> Self {
        Self {
            budget,
            used: 0,
            strokes: Vector::new(),
            open: None,
            last_id: None,
        }
    }

    /// Bytes of deltas kept.
    pub fn bytes(&self) -> usize {
        self.used
    }

    /// Strokes kept (done or undone).
    pub fn len(&self) -> usize {
        self.strokes.len()
    }

    /// Whether no stroke is kept.
    pub fn is_empty(&self) -> bool {
        self.strokes.is_empty()
    }

    /// Whether stroke `id` is kept and can be undone (`Some(true)`) or redone (`Some(false)`).
    pub fn can_undo(&self, id: u64) -> Option<bool> {
        self.find(id).map(|i| self.strokes[i].state == State::Done)
    }

    /// The highest stroke id seen; a new stroke needs a higher one.
    pub fn last_stroke(&self) -> Option<u64> {
        self.last_id
    }

    /// The box of bricks stroke `id` changed, as the lowest and highest brick index per axis:
    /// its undo and redo write only within it. `None` when the stroke is not kept (an
    /// unknown id, or forgotten for the budget) or changed nothing. A server that reloads
    /// its log after a restart learns from it which bricks an undo or redo in the log wrote.
    pub fn stroke_bricks(&self, id: u64) -> Option<(BrickKey, BrickKey)> {
        let s = &self.strokes[self.find(id)?];
        let mut keys = s.before.keys();
        let first = *keys.next()?;
        Some(keys.fold((first, first), |(lo, hi), k| {
            (
                BrickKey::new(lo.x.min(k.x), lo.y.min(k.y), lo.z.min(k.z)),
                BrickKey::new(hi.x.max(k.x), hi.y.max(k.y), hi.z.max(k.z)),
            )
        }))
    }

    /// The stroke an editor's "undo" acts on: the newest kept stroke that is done.
    pub fn undo_target(&self) -> Option<u64> {
        self.strokes
            .iter()
            .rev()
            .find(|s| s.state == State::Done)
            .map(|s| s.id)
    }

    /// The stroke an editor's "redo" acts on: the oldest undone stroke newer than every done
    /// stroke (a new stroke after an undo ends the redo chain, as in every editor).
    pub fn redo_target(&self) -> Option<u64> {
        let done = self.undo_target();
        self.strokes
            .iter()
            .filter(|s| s.state == State::Undone && done.is_none_or(|d| s.id > d))
            .map(|s| s.id)
            .min()
    }

    /// The index of stroke `id`: ids are strictly increasing, oldest first.
    fn find(&self, id: u64) -> Option<usize> {
        self.strokes.binary_search_by_key(&id, |s| s.id).ok()
    }

    /// The index of stroke `id`, which must be kept and in `state` (done, to be undone;
    /// undone, to be redone).
    fn kept(&self, id: u64, state: State) -> Result<usize, EditError> {
        let i = self
            .find(id)
            .ok_or(EditError::UnknownStroke { stroke: id })?;
        if self.strokes[i].state == state {
            return Ok(i);
        }
        let (action, now) = match state {
            State::Done => ("undone", "undone"),
            State::Undone => ("redone", "done"),
        };
        Err(EditError::WrongStrokeState {
            stroke: id,
            action,
            state: now,
        })
    }

    /// Applies `op` as part of stroke `stroke` ([`EditOp::Undo`] / [`EditOp::Redo`] name the
    /// stroke they act on; their own `stroke` argument is ignored). A new stroke needs an id
    /// above every earlier one.
    ///
    /// # Errors
    /// [`EditError`]: a rejected op, an op for a closed stroke, undo or redo of a stroke that
    /// is not kept or in the wrong state. Neither the field nor the history changes then.
    pub fn apply(
        &mut self,
        field: &mut Field,
        stroke: u64,
        op: &EditOp,
    ) -> Result<EditOutcome, EditError> {
        self.apply_with(field, stroke, op, generate_each)
    }

    /// [`History::apply`] with [`Field::apply_with`]'s brick generation.
    ///
    /// # Errors
    /// As [`History::apply`].
    pub fn apply_with(
        &mut self,
        field: &mut Field,
        stroke: u64,
        op: &EditOp,
        generate: impl FnOnce(&Generator, &[BrickKey], f64, f64) -> Vec<Brick>,
    ) -> Result<EditOutcome, EditError> {
        match *op {
            EditOp::Undo { stroke: id } => self.undo(field, id, generate),
            EditOp::Redo { stroke: id } => self.redo(field, id, generate),
            _ => {
                if self.open != Some(stroke) && self.last_id.is_some_and(|l| stroke <= l) {
                    return Err(EditError::StrokeClosed { stroke });
                }
                let plan = field.plan(op)?;
                if self.open != Some(stroke) {
                    self.open = Some(stroke);
                    self.last_id = Some(stroke);
                    self.strokes.push_back(Arc::new(Stroke {
                        id: stroke,
                        state: State::Done,
                        before: BTreeMap::new(),
                        after: BTreeMap::new(),
                        samples: 0,
                    }));
                }
                let grid = crate::Quant::new(field.settings.band());
                let s = Arc::make_mut(self.strokes.back_mut().expect("the open stroke"));
                let before = s.samples;
                for w in &plan.writes {
                    let (key, local) = w.pos.brick();
                    let i = brick_index(local) as u16;
                    if let Entry::Vacant(e) = s.before.entry(key).or_default().entry(i) {
                        e.insert(w.old);
                        s.samples += 1;
                    }
                    // The value as the commit stores it (on the grid).
                    let left = (grid.quantize(f64::from(w.new.0)), w.new.1);
                    if s.after.entry(key).or_default().insert(i, left).is_none() {
                        s.samples += 1;
                    }
                }
                self.used += (s.samples - before) * BYTES_PER_SAMPLE;
                let out = field.commit(&plan.writes, generate);
                self.trim();
                Ok(out)
            }
        }
    }

    /// Undoes stroke `id` by [the rule](self): each of its samples that no newer done stroke
    /// touched goes back to the value the next older done stroke left there, or to the value
    /// from before them all.
    fn undo(
        &mut self,
        field: &mut Field,
        id: u64,
        generate: impl FnOnce(&Generator, &[BrickKey], f64, f64) -> Vec<Brick>,
    ) -> Result<EditOutcome, EditError> {
        let i = self.kept(id, State::Done)?;
        if self.open == Some(id) {
            self.open = None;
        }
        // A stroke read back from an older history keeps no values left: take them now,
        // while it is still done, so that a redo has them.
        let missing = self.values_left_missing(field, i);
        let s = Arc::make_mut(&mut self.strokes[i]);
        for (key, index, v) in &missing {
            s.after.entry(*key).or_default().insert(*index, *v);
        }
        s.samples += missing.len();
        s.state = State::Undone;
        self.used += missing.len() * BYTES_PER_SAMPLE;
        let writes = self.settle(field, i);
        let out = field.commit(&writes, generate);
        self.trim();
        Ok(out)
    }

    /// Redoes stroke `id` by [the rule](self): each of its samples that no newer done stroke
    /// touched gets back the value the stroke left there.
    fn redo(
        &mut self,
        field: &mut Field,
        id: u64,
        generate: impl FnOnce(&Generator, &[BrickKey], f64, f64) -> Vec<Brick>,
    ) -> Result<EditOutcome, EditError> {
        let i = self.kept(id, State::Undone)?;
        Arc::make_mut(&mut self.strokes[i]).state = State::Done;
        let writes = self.settle(field, i);
        Ok(field.commit(&writes, generate))
    }

    /// The writes that give every sample of stroke `i` the value [the rule](self) gives it,
    /// after stroke `i` changed state: samples a newer done stroke touched are left alone;
    /// the others get the value the newest done stroke (up to `i`) left there, or the value
    /// from before the oldest kept stroke that touched them. In ascending (z, y, x) order,
    /// like a plan's.
    fn settle(&self, field: &Field, i: usize) -> Vec<Write> {
        let stroke = &self.strokes[i];
        let mut reader = SampleReader::new(field);
        // Kept values are on the grid (they were read from the field, or rounded as the
        // commit rounds); a history saved before the grid existed is rounded onto it here.
        let grid = crate::Quant::new(field.settings.band());
        let mut writes = Vec::new();
        for (&key, delta) in &stroke.before {
            // The kept strokes that touched this brick, oldest first: (index, done, their
            // values from before them in it).
            let touching: Vec<(usize, bool, &BrickDelta, Option<&BrickDelta>)> = self
                .strokes
                .iter()
                .enumerate()
                .filter_map(|(t, s)| {
                    let before = s.before.get(&key)?;
                    Some((t, s.state == State::Done, before, s.after.get(&key)))
                })
                .collect();
            for &index in delta.keys() {
                let touched = |d: &BrickDelta| d.contains_key(&index);
                let newer_done = touching
                    .iter()
                    .any(|&(t, done, d, _)| t > i && done && touched(d));
                if newer_done {
                    continue;
                }
                let pos = pos_of(key, index);
                let newest_done = touching
                    .iter()
                    .rev()
                    .find(|&&(t, done, d, _)| t <= i && done && touched(d));
                let target = match newest_done {
                    Some(&(_, _, _, Some(after))) if after.contains_key(&index) => after[&index],
                    Some(&(t, ..)) => self.left(t, key, index, &mut reader),
                    None => {
                        let oldest = touching.iter().find(|&&(_, _, d, _)| touched(d));
                        oldest.expect("stroke i touched it").2[&index]
                    }
                };
                let target = (grid.quantize(f64::from(target.0)), target.1);
                let now = (reader.sample(pos), reader.material(pos));
                if now.0.to_bits() != target.0.to_bits() || now.1 != target.1 {
                    writes.push(Write {
                        pos,
                        old: now,
                        new: target,
                    });
                }
            }
        }
        writes.sort_by_key(|w| (w.pos.z, w.pos.y, w.pos.x));
        writes
    }

    /// The samples of stroke `i` (done) without a value left, with the value [`Self::left`]
    /// finds for them: none for a stroke made by this version.
    fn values_left_missing(
        &self,
        field: &Field,
        i: usize,
    ) -> Vec<(BrickKey, u16, (f32, MaterialId))> {
        let s = &self.strokes[i];
        let mut reader = SampleReader::new(field);
        let mut out = Vec::new();
        for (&key, delta) in &s.before {
            let after = s.after.get(&key);
            for &index in delta.keys() {
                if after.is_none_or(|a| !a.contains_key(&index)) {
                    out.push((key, index, self.left(i, key, index, &mut reader)));
                }
            }
        }
        out
    }

    /// The value done stroke `t` left sample `index` of brick `key` at. A stroke read back
    /// from a history written before these values were kept has none: the value left is then
    /// the value from before the next stroke that touched the sample, or, where none did,
    /// the field's (the stroke is the newest to touch it and done, so the field still shows
    /// what it left).
    fn left(
        &self,
        t: usize,
        key: BrickKey,
        index: u16,
        reader: &mut SampleReader<'_>,
    ) -> (f32, MaterialId) {
        if let Some(&v) = self.strokes[t].after.get(&key).and_then(|d| d.get(&index)) {
            return v;
        }
        let next = self
            .strokes
            .iter()
            .skip(t + 1)
            .find_map(|s| s.before.get(&key).and_then(|d| d.get(&index)).copied());
        next.unwrap_or_else(|| {
            let pos = pos_of(key, index);
            (reader.sample(pos), reader.material(pos))
        })
    }

    /// Forgets the oldest strokes (never the open one) while over the budget.
    fn trim(&mut self) {
        while self.used > self.budget && self.strokes.len() > 1 {
            let s = self.strokes.pop_front().expect("len > 1");
            self.used -= s.bytes();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CsgMode, FieldSettings, NoiseTerrainSettings};

    fn ball(mode: CsgMode, x: f64, r: f64) -> EditOp {
        EditOp::Sphere {
            mode,
            center: [x, 0.0, 0.0],
            radius: r,
            material: 3,
            blend: 0.0,
        }
    }

    /// A history written before the values left were kept (done strokes with no `after`,
    /// undone ones with what their undo overwrote) undoes and redoes as the current one.
    #[test]
    fn a_history_without_the_values_left_takes_them_from_the_next_stroke_or_the_field() {
        let g = Generator::noise(&NoiseTerrainSettings::default(), &Default::default()).unwrap();
        let mut f = Field::new(FieldSettings::default(), Arc::new(g)).unwrap();
        let mut h = History::default();
        let ops = [
            ball(CsgMode::Subtract, 0.0, 4.0),
            ball(CsgMode::Union, 2.0, 3.0),
            ball(CsgMode::Subtract, -1.0, 2.5),
        ];
        for (s, op) in ops.iter().enumerate() {
            h.apply(&mut f, s as u64 + 1, op).unwrap();
        }
        // The old format: a done stroke kept no values left.
        let mut old = h.clone();
        for s in old.strokes.iter_mut() {
            let s = Arc::make_mut(s);
            s.samples -= s.after.values().map(BTreeMap::len).sum::<usize>();
            s.after.clear();
        }
        old.used = old.strokes.iter().map(|s| s.bytes()).sum();
        let mut g = f.clone();
        for op in [
            EditOp::Undo { stroke: 2 },
            EditOp::Undo { stroke: 3 },
            EditOp::Redo { stroke: 3 },
            EditOp::Undo { stroke: 1 },
            EditOp::Redo { stroke: 2 },
        ] {
            h.apply(&mut f, 0, &op).unwrap();
            old.apply(&mut g, 0, &op).unwrap();
            assert_eq!(f.hash(), g.hash(), "after {op:?}");
        }
    }
}
