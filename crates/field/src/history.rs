//! Strokes, undo and redo: per-stroke sample deltas, bounded by a memory budget.
//!
//! A stroke groups the ops of one held button. For every sample a stroke changes, the history
//! keeps its value and material from before the stroke (the first time the stroke touches
//! it), per brick, not whole bricks. Undo writes those back and keeps what it overwrote, so a
//! redo writes that again. Undo and redo are ops themselves ([`EditOp::Undo`],
//! [`EditOp::Redo`]), applied in log order, so a replay of the log through a history gives
//! the live result bit for bit.
//!
//! Undo restores the stroke's samples even where a later op changed them again (the later
//! op's change is lost there); where no later op touched them, the result equals a replay
//! without the stroke.

use std::collections::BTreeMap;
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
    /// Values from before the stroke.
    before: BTreeMap<BrickKey, BrickDelta>,
    /// What the last undo overwrote (for redo).
    after: BTreeMap<BrickKey, BrickDelta>,
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
                let s = Arc::make_mut(self.strokes.back_mut().expect("the open stroke"));
                let before = s.samples;
                for w in &plan.writes {
                    let (key, local) = w.pos.brick();
                    let delta = s.before.entry(key).or_default();
                    let i = brick_index(local) as u16;
                    if let std::collections::btree_map::Entry::Vacant(e) = delta.entry(i) {
                        e.insert(w.old);
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
        let s = Arc::make_mut(&mut self.strokes[i]);
        let (writes, after) = restore(field, &s.before);
        self.used += after.values().map(BTreeMap::len).sum::<usize>() * BYTES_PER_SAMPLE;
        s.samples += after.values().map(BTreeMap::len).sum::<usize>();
        s.after = after;
        s.state = State::Undone;
        let out = field.commit(&writes, generate);
        self.trim();
        Ok(out)
    }

    fn redo(
        &mut self,
        field: &mut Field,
        id: u64,
        generate: impl FnOnce(&Generator, &[BrickKey], f64, f64) -> Vec<Brick>,
    ) -> Result<EditOutcome, EditError> {
        let i = self.kept(id, State::Undone)?;
        let s = Arc::make_mut(&mut self.strokes[i]);
        let (writes, _) = restore(field, &s.after);
        let freed = s.after.values().map(BTreeMap::len).sum::<usize>();
        s.after.clear();
        s.samples -= freed;
        s.state = State::Done;
        self.used -= freed * BYTES_PER_SAMPLE;
        Ok(field.commit(&writes, generate))
    }

    /// Forgets the oldest strokes (never the open one) while over the budget.
    fn trim(&mut self) {
        while self.used > self.budget && self.strokes.len() > 1 {
            let s = self.strokes.pop_front().expect("len > 1");
            self.used -= s.bytes();
        }
    }
}

/// Writes that set every sample of `deltas` to its kept value, and the values they replace.
fn restore(
    field: &Field,
    deltas: &BTreeMap<BrickKey, BrickDelta>,
) -> (Vec<Write>, BTreeMap<BrickKey, BrickDelta>) {
    let mut writes = Vec::new();
    let mut replaced: BTreeMap<BrickKey, BrickDelta> = BTreeMap::new();
    let mut reader = SampleReader::new(field);
    // Kept values are on the grid (they were read from the field); a history saved before
    // the grid existed is rounded onto it here, as the commit would.
    let grid = crate::Quant::new(field.settings.band());
    for (&key, delta) in deltas {
        for (&i, &(value, material)) in delta {
            let target = (grid.quantize(f64::from(value)), material);
            let pos = pos_of(key, i);
            let now = (reader.sample(pos), reader.material(pos));
            replaced.entry(key).or_default().insert(i, now);
            if now.0.to_bits() != target.0.to_bits() || now.1 != target.1 {
                writes.push(Write {
                    pos,
                    old: now,
                    new: target,
                });
            }
        }
    }
    // The commit order: ascending (z, y, x) like a plan.
    writes.sort_by_key(|w| (w.pos.z, w.pos.y, w.pos.x));
    (writes, replaced)
}
