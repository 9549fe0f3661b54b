//! A history in parts, for a store that writes only what changed since its last save: the
//! strokes one by one ([`SharedStroke`]) and the rest ([`HistoryHeader`]).
//!
//! Strokes are kept oldest first with strictly increasing ids, and only the oldest are ever
//! forgotten, so the kept strokes are exactly those with an id from the header's `first` on.
//! A stroke that changes while a store holds it is copied (it is shared), so
//! [`SharedStroke::same`] tells a store which strokes it must write again.

use std::sync::Arc;

use super::{History, Stroke};

/// One kept stroke of a [`History`], shared with the history (a clone is a pointer).
/// Serialises as the stroke alone: its id, state, deltas and sample count, the format of a
/// stroke inside a whole serialised history.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedStroke(pub(super) Arc<Stroke>);

impl serde::Serialize for SharedStroke {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serde::Serialize::serialize(&*self.0, s)
    }
}

impl<'de> serde::Deserialize<'de> for SharedStroke {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <Stroke as serde::Deserialize>::deserialize(d).map(|s| Self(Arc::new(s)))
    }
}

impl SharedStroke {
    /// The stroke's id.
    pub fn id(&self) -> u64 {
        self.0.id
    }

    /// Whether `other` is this very stroke, unchanged: the same shared value, not an equal
    /// copy. (A history copies a shared stroke before changing it, so a stroke a store still
    /// holds is `same` as the history's exactly when the history has not changed it since.)
    pub fn same(&self, other: &SharedStroke) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Everything of a [`History`] but its strokes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HistoryHeader {
    /// Memory budget, bytes.
    pub budget: usize,
    /// Bytes of deltas kept (the strokes' own counts, summed; [`History::from_parts`] sums
    /// them again rather than trusting it).
    pub used: usize,
    /// The id of the oldest kept stroke; `None` when none is kept.
    pub first: Option<u64>,
    /// How many strokes are kept.
    pub strokes: u64,
    /// The stroke new ops go to.
    pub open: Option<u64>,
    /// The highest stroke id seen.
    pub last_id: Option<u64>,
}

/// Parts that do not make a history ([`History::from_parts`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HistoryPartsError {
    /// The strokes are not the header's: count, first id or order differ.
    #[error("strokes do not match the history header: {0}")]
    Strokes(String),
    /// The open stroke is not kept, or the last id is below a kept stroke's.
    #[error("the history header's open or last stroke id does not match its strokes")]
    Ids,
}

impl History {
    /// The header of this history (see [`History::from_parts`]).
    pub fn header(&self) -> HistoryHeader {
        HistoryHeader {
            budget: self.budget,
            used: self.used,
            first: self.strokes.front().map(|s| s.id),
            strokes: self.strokes.len() as u64,
            open: self.open,
            last_id: self.last_id,
        }
    }

    /// The kept strokes, oldest first (ids strictly increasing), shared with this history.
    pub fn shared_strokes(&self) -> impl ExactSizeIterator<Item = SharedStroke> + '_ {
        self.strokes.iter().map(|s| SharedStroke(Arc::clone(s)))
    }

    /// Puts a history back together from [`History::header`] and the strokes of
    /// [`History::shared_strokes`]: equal to the history they were taken from.
    ///
    /// # Errors
    /// [`HistoryPartsError`] when the strokes are not the header's (count, first id, order)
    /// or its open or last id does not fit them.
    pub fn from_parts(
        header: HistoryHeader,
        strokes: Vec<SharedStroke>,
    ) -> Result<Self, HistoryPartsError> {
        let bad = |why: String| Err(HistoryPartsError::Strokes(why));
        if strokes.len() as u64 != header.strokes {
            return bad(format!(
                "{} strokes, the header counts {}",
                strokes.len(),
                header.strokes
            ));
        }
        if strokes.first().map(SharedStroke::id) != header.first {
            return bad(format!(
                "first stroke {:?}, the header says {:?}",
                strokes.first().map(SharedStroke::id),
                header.first
            ));
        }
        if let Some(w) = strokes.windows(2).find(|w| w[0].id() >= w[1].id()) {
            return bad(format!("stroke {} after {}", w[1].id(), w[0].id()));
        }
        let newest = strokes.last().map(SharedStroke::id);
        let open_kept = header
            .open
            .is_none_or(|o| strokes.iter().any(|s| s.id() == o));
        if !open_kept || newest > header.last_id {
            return Err(HistoryPartsError::Ids);
        }
        Ok(Self {
            budget: header.budget,
            used: strokes.iter().map(|s| s.0.bytes()).sum(),
            strokes: strokes.into_iter().map(|s| s.0).collect(),
            open: header.open,
            last_id: header.last_id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CsgMode, EditOp, Field, FieldSettings, Generator, NoiseTerrainSettings};

    fn dig(x: f64) -> EditOp {
        let g = Generator::noise(&NoiseTerrainSettings::default(), &Default::default()).unwrap();
        EditOp::Sphere {
            mode: CsgMode::Subtract,
            center: [x, g.surface_height(x, 0.0), 0.0],
            radius: 1.5,
            material: 0,
            blend: 0.0,
        }
    }

    fn history() -> (Field, History) {
        let g = Generator::noise(&NoiseTerrainSettings::default(), &Default::default()).unwrap();
        let mut f = Field::new(FieldSettings::default(), Arc::new(g)).unwrap();
        let mut h = History::new(1 << 20);
        for (s, x) in [(1, 0.0), (2, 3.0), (5, 6.0)] {
            h.apply(&mut f, s, &dig(x)).unwrap();
        }
        h.apply(&mut f, 5, &dig(7.0)).unwrap();
        h.apply(&mut f, 6, &EditOp::Undo { stroke: 2 }).unwrap();
        assert!(h.bytes() > 0);
        (f, h)
    }

    #[test]
    fn parts_give_back_the_history() {
        let (_, h) = history();
        let header = h.header();
        assert_eq!(header.first, Some(1));
        assert_eq!(header.strokes, 3);
        assert_eq!(header.last_id, Some(5));
        let back = History::from_parts(header, h.shared_strokes().collect()).unwrap();
        assert_eq!(back, h);
        // Through MessagePack, stroke by stroke.
        let strokes = h
            .shared_strokes()
            .map(|s| rmp_serde::from_slice(&rmp_serde::to_vec(&s).unwrap()).unwrap())
            .collect();
        assert_eq!(History::from_parts(h.header(), strokes).unwrap(), h);
    }

    #[test]
    fn a_changed_stroke_is_no_longer_the_same() {
        let (mut f, mut h) = history();
        let held: Vec<SharedStroke> = h.shared_strokes().collect();
        h.apply(&mut f, 5, &EditOp::Undo { stroke: 5 }).unwrap();
        let now: Vec<SharedStroke> = h.shared_strokes().collect();
        let same: Vec<bool> = held.iter().zip(&now).map(|(a, b)| a.same(b)).collect();
        assert_eq!(same, [true, true, false]);
        // Equal copies are not the same stroke.
        let copy = SharedStroke(Arc::new((*held[0].0).clone()));
        assert_eq!(copy, held[0]);
        assert!(!copy.same(&held[0]));
    }

    #[test]
    fn parts_that_do_not_fit_are_refused() {
        let (_, h) = history();
        let all: Vec<SharedStroke> = h.shared_strokes().collect();
        let short = all[1..].to_vec();
        assert!(matches!(
            History::from_parts(h.header(), short),
            Err(HistoryPartsError::Strokes(_))
        ));
        let mut swapped = all.clone();
        swapped.swap(1, 2);
        assert!(matches!(
            History::from_parts(h.header(), swapped),
            Err(HistoryPartsError::Strokes(_))
        ));
        // The byte count is summed again from the strokes.
        let mut header = h.header();
        header.used += 24;
        assert_eq!(History::from_parts(header, all.clone()).unwrap(), h);
        let mut header = h.header();
        header.open = Some(4);
        assert_eq!(
            History::from_parts(header, all.clone()),
            Err(HistoryPartsError::Ids)
        );
        let mut header = h.header();
        header.last_id = Some(3);
        assert_eq!(
            History::from_parts(header, all),
            Err(HistoryPartsError::Ids)
        );
    }

    #[test]
    fn a_clone_shares_every_stroke_and_a_change_copies_one() {
        let (mut f, mut h) = history();
        let snapshot = h.clone();
        let same = |a: &History, b: &History| -> Vec<bool> {
            a.shared_strokes()
                .zip(b.shared_strokes())
                .map(|(x, y)| x.same(&y))
                .collect()
        };
        assert_eq!(same(&h, &snapshot), [true, true, true]);
        let before = snapshot.clone();
        // Stroke 2 is undone (see `history`): a redo changes it.
        h.apply(&mut f, 7, &EditOp::Redo { stroke: 2 }).unwrap();
        assert_eq!(same(&h, &snapshot), [true, false, true]);
        // The snapshot still has stroke 2 undone, as it was.
        assert_eq!(snapshot, before);
        assert_eq!(snapshot.can_undo(2), Some(false));
        assert_eq!(h.can_undo(2), Some(true));
    }

    #[test]
    fn a_history_with_strokes_out_of_order_is_refused_on_the_way_in() {
        let (_, h) = history();
        let bytes = rmp_serde::to_vec(&h).unwrap();
        assert_eq!(rmp_serde::from_slice::<History>(&bytes).unwrap(), h);
        let mut swapped = h.clone();
        let (a, b) = (swapped.strokes[0].clone(), swapped.strokes[1].clone());
        swapped.strokes.set(0, b);
        swapped.strokes.set(1, a);
        let bad = rmp_serde::to_vec(&swapped).unwrap();
        let err = rmp_serde::from_slice::<History>(&bad).unwrap_err();
        assert!(err.to_string().contains("stroke 1 after 2"), "{err}");
        // A last stroke id below a kept stroke's (a new stroke could take an id between).
        let mut low = h.clone();
        low.last_id = Some(3);
        let err = rmp_serde::from_slice::<History>(&rmp_serde::to_vec(&low).unwrap());
        assert!(
            err.unwrap_err()
                .to_string()
                .contains("open or last stroke id"),
            "refused"
        );
        // The byte count is summed again from the strokes.
        let mut used = h.clone();
        used.used += 24;
        let back: History = rmp_serde::from_slice(&rmp_serde::to_vec(&used).unwrap()).unwrap();
        assert_eq!(back, h);
    }
}
