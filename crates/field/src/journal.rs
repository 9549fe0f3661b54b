//! The op journal: the one place where the ops of a world being edited are numbered, grouped
//! into strokes and passed through the undo [`History`].
//!
//! Every front end that edits a world — the editor's chunk pipeline (`loam-world`'s
//! `World`), the multiplayer server's ordering thread — applies its ops through a
//! [`Journal`], so they number, stroke and undo alike:
//!
//! ```text
//!   op from an author ──▶ stroke_for(author, their stroke, op) ──▶ apply ──▶ (LogEntry, outcome)
//!                          undo / redo: the stroke they name        │  seq = last + 1
//!                          same author, same stroke: the open one   │  History::apply (undo rule)
//!                          otherwise: a new stroke                  ▼
//!   block op ──▶ reserve_seq (shares the numbering)            the log (store, network)
//! ```
//!
//! Sequence numbers start at 1 and increase by 1 over every op, terrain or block (a block
//! op takes its number with [`Journal::reserve_seq`]); a stroke id is above every earlier
//! one. Undo and redo follow [`History`]'s rule: a sample shows its newest done stroke.

use crate::brick::Brick;
use crate::coords::BrickKey;
use crate::edit::{EditOutcome, generate_each};
use crate::field::Field;
use crate::generator::Generator;
use crate::history::History;
use crate::op::{EditError, EditOp, LogEntry};

/// The op journal of one world: its undo history, the number of its newest op, and the
/// stroke an author is continuing. See the [module docs](self).
#[derive(Debug, Clone, Default)]
pub struct Journal {
    history: History,
    /// The sequence number of the newest op numbered, of either kind (0 before the first).
    last_seq: u64,
    /// The stroke an author is continuing: (author, the author's stroke id, the journal's).
    open: Option<(u64, u64, u64)>,
}

impl Journal {
    /// A journal that carries on after op `last_seq` with `history` (a new world: an empty
    /// history and 0; a loaded one: what the store loaded).
    pub fn new(history: History, last_seq: u64) -> Self {
        Self {
            history,
            last_seq,
            open: None,
        }
    }

    /// The stroke an author is continuing, `(author, the author's stroke id, the
    /// journal's stroke id)`: part of the journal's state, since the next op of that author
    /// and stroke continues it. A replica that saves where it stands in a shared log saves
    /// this too ([`Journal::set_open_stroke`]), so that it numbers and strokes the next ops
    /// as every other replica does.
    pub fn open_stroke(&self) -> Option<(u64, u64, u64)> {
        self.open
    }

    /// Restores the stroke an author was continuing ([`Journal::open_stroke`]) after
    /// [`Journal::new`].
    pub fn set_open_stroke(&mut self, open: Option<(u64, u64, u64)>) {
        self.open = open;
    }

    /// The undo history.
    pub fn history(&self) -> &History {
        &self.history
    }

    /// The sequence number of the newest op numbered so far, terrain or block (0 for none).
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// The id a new stroke gets: above every stroke the history has seen.
    pub fn next_stroke(&self) -> u64 {
        self.history.last_stroke().map_or(1, |s| s + 1)
    }

    /// Takes the next sequence number for an op of another kind that shares the numbering
    /// (a block op): the next terrain op is numbered after it.
    pub fn reserve_seq(&mut self) -> u64 {
        self.last_seq += 1;
        self.last_seq
    }

    /// The journal's stroke for `op` from `author`, who numbers their own strokes
    /// (`their_stroke`): an undo or redo acts on the stroke it names; an op of the stroke the
    /// same author has open continues it; anything else starts a new stroke. (Another
    /// author's op in between closes a stroke, so one author's held button can become
    /// several strokes of the journal.)
    pub fn stroke_for(&self, author: u64, their_stroke: u64, op: &EditOp) -> u64 {
        match (op, self.open) {
            (EditOp::Undo { stroke } | EditOp::Redo { stroke }, _) => *stroke,
            (_, Some((a, s, j))) if a == author && s == their_stroke => j,
            _ => self.next_stroke(),
        }
    }

    /// Applies `op` from `author` in their stroke `their_stroke` ([`Journal::stroke_for`]),
    /// numbers it and leaves that stroke open for the author's next op (an undo or redo
    /// closes it). Returns the log entry (the op with its number and the journal's stroke)
    /// and what changed.
    ///
    /// # Errors
    /// As [`History::apply`]; nothing changes then (the number is not taken).
    pub fn apply_for(
        &mut self,
        field: &mut Field,
        author: u64,
        their_stroke: u64,
        op: &EditOp,
    ) -> Result<(LogEntry, EditOutcome), EditError> {
        let stroke = self.stroke_for(author, their_stroke, op);
        let out = self.apply_with(field, stroke, op, generate_each)?;
        let reverts = matches!(op, EditOp::Undo { .. } | EditOp::Redo { .. });
        self.open = (!reverts).then_some((author, their_stroke, stroke));
        Ok(out)
    }

    /// [`Journal::apply_with`] generating new bricks one by one ([`Field::apply`]'s way).
    ///
    /// # Errors
    /// As [`History::apply`]; nothing changes then (the number is not taken).
    pub fn apply(
        &mut self,
        field: &mut Field,
        stroke: u64,
        op: &EditOp,
    ) -> Result<(LogEntry, EditOutcome), EditError> {
        self.apply_with(field, stroke, op, generate_each)
    }

    /// Applies `op` as part of the journal's stroke `stroke` (a new stroke needs an id of at
    /// least [`Journal::next_stroke`]) and numbers it; bricks the op creates are generated
    /// with `generate` ([`Field::apply_with`]'s). Closes any author's open stroke.
    ///
    /// # Errors
    /// As [`History::apply`]; nothing changes then (the number is not taken).
    pub fn apply_with(
        &mut self,
        field: &mut Field,
        stroke: u64,
        op: &EditOp,
        generate: impl FnOnce(&Generator, &[BrickKey], f64, f64) -> Vec<Brick>,
    ) -> Result<(LogEntry, EditOutcome), EditError> {
        let out = self.history.apply_with(field, stroke, op, generate)?;
        self.last_seq += 1;
        self.open = None;
        Ok((LogEntry::new(self.last_seq, stroke, op.clone()), out))
    }

    /// Closes the stroke an author has open: their next op starts a new one (after ops the
    /// journal made itself, such as the removal of a lump of terrain).
    pub fn close_stroke(&mut self) {
        self.open = None;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::{CsgMode, FieldSettings, NoiseTerrainSettings};

    fn field() -> Field {
        let g = Generator::noise(&NoiseTerrainSettings::default(), &Default::default()).unwrap();
        Field::new(FieldSettings::default(), Arc::new(g)).unwrap()
    }

    fn dig(x: f64) -> EditOp {
        EditOp::Sphere {
            mode: CsgMode::Subtract,
            center: [x, 0.0, 0.0],
            radius: 2.0,
            material: 0,
            blend: 0.0,
        }
    }

    /// Numbers run over terrain and block ops alike; an author's stroke continues until
    /// another author's op, an undo or a stroke the journal makes itself comes between.
    #[test]
    fn numbers_and_strokes() {
        let mut f = field();
        let mut j = Journal::new(History::default(), 10);
        let (e, _) = j.apply_for(&mut f, 1, 7, &dig(0.0)).unwrap();
        assert_eq!((e.seq, e.stroke), (11, 1));
        let (e, _) = j.apply_for(&mut f, 1, 7, &dig(1.0)).unwrap();
        assert_eq!((e.seq, e.stroke), (12, 1), "the same stroke goes on");
        assert_eq!(j.reserve_seq(), 13, "a block op between");
        let (e, _) = j.apply_for(&mut f, 2, 7, &dig(9.0)).unwrap();
        assert_eq!((e.seq, e.stroke), (14, 2), "another author: a new stroke");
        let (e, _) = j.apply_for(&mut f, 1, 7, &dig(2.0)).unwrap();
        assert_eq!(
            (e.seq, e.stroke),
            (15, 3),
            "author 1's stroke was closed by author 2"
        );
        let (e, _) = j
            .apply_for(&mut f, 2, 8, &EditOp::Undo { stroke: 1 })
            .unwrap();
        assert_eq!((e.seq, e.stroke), (16, 1), "an undo names its stroke");
        let (e, _) = j.apply_for(&mut f, 1, 7, &dig(3.0)).unwrap();
        assert_eq!((e.seq, e.stroke), (17, 4), "an undo closes the open stroke");
        j.close_stroke();
        let (e, _) = j.apply_for(&mut f, 1, 7, &dig(4.0)).unwrap();
        assert_eq!((e.seq, e.stroke), (18, 5));
        // A refused op takes no number and changes nothing.
        let hash = f.hash();
        let bad = j.apply_for(&mut f, 1, 7, &EditOp::Redo { stroke: 99 });
        assert!(matches!(bad, Err(EditError::UnknownStroke { stroke: 99 })));
        assert_eq!((j.last_seq(), f.hash()), (18, hash));
        assert_eq!(j.next_stroke(), 6);
    }
}
