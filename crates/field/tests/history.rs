//! Strokes with undo and redo: exact restores, errors, the memory budget, and replays.

use proptest::prelude::*;

use crate::util::*;
use loam_field::{CsgMode, EditError, EditOp, Falloff, Field, History};

fn op_at(kind: u8, c: [f64; 3], r: f64) -> EditOp {
    match kind % 6 {
        0 => dig(c, r),
        1 => build([c[0], c[1] + 1.0, c[2]], r, 3),
        2 => EditOp::Raise {
            center: c,
            radius: r,
            strength: 0.4 * r,
            falloff: Falloff::Smooth,
        },
        3 => EditOp::Smooth {
            center: c,
            radius: r,
            strength: 0.7,
            falloff: Falloff::Linear,
        },
        4 => EditOp::Paint {
            center: c,
            radius: r,
            material: 6,
            falloff: Falloff::Constant,
            threshold: 0.5,
        },
        _ => EditOp::Cuboid {
            mode: CsgMode::Subtract,
            center: c,
            half_extents: [r, 0.5 * r, 0.7 * r],
            rotation: [0.1, 0.2, 0.0, 1.0],
            material: 0,
            blend: 0.5,
        },
    }
}

#[test]
fn undo_restores_exactly_and_redo_reapplies() {
    let base = field_with(noise_generator(2), 1.0);
    let h = |f: &Field, x: f64, z: f64| f.generator().surface_height(x, z);
    let mut f = base.clone();
    let mut hist = History::default();
    // Stroke 1: three ops near the origin; stroke 2 far away.
    for (i, k) in [0u8, 2, 4].iter().enumerate() {
        let x = i as f64 * 2.0;
        let op = op_at(*k, [x, h(&f, x, 0.0), 0.0], 4.0);
        hist.apply(&mut f, 1, &op).unwrap();
    }
    let with_one = f.hash();
    let far = op_at(5, [200.0, h(&f, 200.0, 0.0), 0.0], 5.0);
    hist.apply(&mut f, 2, &far).unwrap();
    let both = f.hash();
    hist.apply(&mut f, 0, &EditOp::Undo { stroke: 1 }).unwrap();
    let mut only_two = base.clone();
    only_two.apply(&far).unwrap();
    assert_eq!(
        f.hash(),
        only_two.hash(),
        "undo equals a replay without the stroke"
    );
    hist.apply(&mut f, 0, &EditOp::Redo { stroke: 1 }).unwrap();
    assert_eq!(f.hash(), both);
    hist.apply(&mut f, 0, &EditOp::Undo { stroke: 2 }).unwrap();
    assert_eq!(f.hash(), with_one);
    assert_eq!(hist.can_undo(1), Some(true));
    assert_eq!(hist.can_undo(2), Some(false));
}

#[test]
fn wrong_undo_and_redo_are_typed_errors_that_change_nothing() {
    let mut f = flat_field(10.0);
    let mut hist = History::default();
    hist.apply(&mut f, 5, &dig([0.0, 10.0, 0.0], 3.0)).unwrap();
    let hash = f.hash();
    let cases = [
        (EditOp::Undo { stroke: 4 }, "unknown"),
        (EditOp::Redo { stroke: 5 }, "not undone"),
    ];
    for (op, why) in cases {
        let e = hist.apply(&mut f, 0, &op).unwrap_err();
        assert!(
            matches!(
                e,
                EditError::UnknownStroke { .. } | EditError::WrongStrokeState { .. }
            ),
            "{why}: {e}"
        );
        assert_eq!(f.hash(), hash);
    }
    hist.apply(&mut f, 0, &EditOp::Undo { stroke: 5 }).unwrap();
    let undone = f.hash();
    assert!(matches!(
        hist.apply(&mut f, 0, &EditOp::Undo { stroke: 5 }),
        Err(EditError::WrongStrokeState { .. })
    ));
    // A stroke id that is not above every earlier one is closed.
    assert!(matches!(
        hist.apply(&mut f, 3, &dig([9.0, 10.0, 0.0], 2.0)),
        Err(EditError::StrokeClosed { stroke: 3 })
    ));
    assert!(matches!(
        hist.apply(&mut f, 5, &dig([9.0, 10.0, 0.0], 2.0)),
        Err(EditError::StrokeClosed { stroke: 5 })
    ));
    // A bad op inside a stroke changes neither the field nor the history.
    let bad = dig([f64::NAN, 0.0, 0.0], 1.0);
    assert!(hist.apply(&mut f, 6, &bad).is_err());
    assert_eq!(f.hash(), undone);
    assert_eq!(hist.len(), 1);
}

#[test]
fn the_memory_budget_forgets_the_oldest_strokes() {
    let mut f = flat_field(10.0);
    let mut hist = History::new(200_000);
    for s in 1..=20u64 {
        let x = s as f64 * 12.0;
        hist.apply(&mut f, s, &dig([x, 10.0, 0.0], 4.0)).unwrap();
        assert!(
            hist.bytes() <= 200_000 || hist.len() == 1,
            "{} bytes",
            hist.bytes()
        );
    }
    assert!(hist.len() < 20, "{} strokes kept", hist.len());
    assert!(matches!(
        hist.apply(&mut f, 0, &EditOp::Undo { stroke: 1 }),
        Err(EditError::UnknownStroke { stroke: 1 })
    ));
    hist.apply(&mut f, 0, &EditOp::Undo { stroke: 20 }).unwrap();
}

#[derive(Debug, Clone)]
enum Action {
    /// A new stroke of `ops` ops of `kind` in its own region.
    Stroke {
        kind: u8,
        ops: u8,
        r: f64,
    },
    Undo(usize),
    Redo(usize),
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        3 => (any::<u8>(), 1..4u8, 2.0..5.0f64).prop_map(|(kind, ops, r)| Action::Stroke { kind, ops, r }),
        2 => (0..16usize).prop_map(Action::Undo),
        1 => (0..16usize).prop_map(Action::Redo),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Strokes in disjoint regions with undo and redo interleaved: the result equals a
    /// replay of only the strokes left done, bit for bit, and a replay of the whole log
    /// (undo and redo included) through a fresh history equals the live result.
    #[test]
    fn undo_equals_replay_without_the_stroke(actions in prop::collection::vec(action(), 1..14)) {
        let base = flat_field(10.0);
        let mut f = base.clone();
        let mut hist = History::default();
        let mut strokes: Vec<(Vec<EditOp>, bool)> = Vec::new();
        let mut log: Vec<(u64, EditOp)> = Vec::new();
        for a in actions {
            match a {
                Action::Stroke { kind, ops, r } => {
                    let id = strokes.len() as u64 + 1;
                    let x = id as f64 * 48.0;
                    let mut list = Vec::new();
                    for i in 0..ops {
                        let op = op_at(kind, [x + f64::from(i) * 1.5, 10.0, 0.0], r);
                        hist.apply(&mut f, id, &op).unwrap();
                        log.push((id, op.clone()));
                        list.push(op);
                    }
                    strokes.push((list, true));
                }
                Action::Undo(i) | Action::Redo(i) => {
                    let undo = matches!(a, Action::Undo(_));
                    let id = i as u64 + 1;
                    let op = if undo { EditOp::Undo { stroke: id } } else { EditOp::Redo { stroke: id } };
                    let before = f.hash();
                    match hist.apply(&mut f, 0, &op) {
                        Ok(_) => {
                            strokes[i].1 = !undo;
                            log.push((0, op));
                        }
                        Err(_) => {
                            // Unknown stroke, or undo of an undone one, redo of a done one.
                            prop_assert!(i >= strokes.len() || strokes[i].1 != undo);
                            prop_assert_eq!(f.hash(), before);
                        }
                    }
                }
            }
        }
        let mut replay = base.clone();
        for (ops, done) in &strokes {
            if *done {
                for op in ops {
                    replay.apply(op).unwrap();
                }
            }
        }
        prop_assert_eq!(replay.hash(), f.hash());
        let mut again = base.clone();
        let mut h2 = History::default();
        for (stroke, op) in &log {
            h2.apply(&mut again, *stroke, op).unwrap();
        }
        prop_assert_eq!(again.hash(), f.hash());
    }

    /// Overlapping strokes with undo and redo: replaying the log through a fresh history
    /// always equals the live result.
    #[test]
    fn log_replay_equals_live(ops in prop::collection::vec((any::<u8>(), -6.0..6.0f64, -6.0..6.0f64, 0..3u8), 1..16)) {
        let base = flat_field(10.0);
        let mut f = base.clone();
        let mut hist = History::default();
        let mut log = Vec::new();
        let mut stroke = 0u64;
        for (kind, x, z, what) in ops {
            let op = match what {
                0 if stroke > 0 => EditOp::Undo { stroke: 1 + u64::from(kind) % stroke },
                1 if stroke > 0 => EditOp::Redo { stroke: 1 + u64::from(kind) % stroke },
                _ => {
                    stroke += 1;
                    op_at(kind, [x, 10.0, z], 3.0)
                }
            };
            if hist.apply(&mut f, stroke, &op).is_ok() {
                log.push((stroke, op));
            }
        }
        let mut again = base.clone();
        let mut h2 = History::default();
        for (s, op) in &log {
            h2.apply(&mut again, *s, op).unwrap();
        }
        prop_assert_eq!(again.hash(), f.hash());
    }
}

/// The same log gives bit-identical bricks whatever the order in which bricks were created:
/// here a stroke first creates (and an undo restores) bricks in the reverse order of the
/// log's own ops, then the log runs.
#[test]
fn bricks_do_not_depend_on_their_creation_order() {
    let base = field_with(noise_generator(12), 1.0);
    let h = |x: f64| base.generator().surface_height(x, 5.0);
    let log: Vec<EditOp> = (0..8)
        .map(|i| {
            let x = f64::from(i) * 20.0;
            op_at(i as u8, [x, h(x), 5.0], 4.5)
        })
        .collect();
    let mut a = base.clone();
    for op in &log {
        a.apply(op).unwrap();
    }
    let mut b = base.clone();
    let mut hist = History::default();
    for (i, op) in log.iter().enumerate().rev() {
        let x = i as f64 * 20.0;
        hist.apply(&mut b, 1, &dig([x, h(x), 5.0], 6.0)).unwrap();
        let _ = op;
    }
    hist.apply(&mut b, 0, &EditOp::Undo { stroke: 1 }).unwrap();
    assert!(
        b.brick_count() > 0,
        "bricks exist, holding the generator's values"
    );
    assert_eq!(b.hash(), base.hash());
    for (s, op) in log.iter().enumerate() {
        hist.apply(&mut b, 2 + s as u64, op).unwrap();
    }
    assert_eq!(a.hash(), b.hash());
    assert!(b.brick_count() >= a.brick_count());
}

#[test]
fn undo_and_redo_targets_follow_an_editors_linear_history() {
    let mut f = field_with(noise_generator(2), 1.0);
    let mut hist = History::default();
    assert_eq!((hist.undo_target(), hist.redo_target()), (None, None));
    let y = f.generator().surface_height(0.0, 0.0);
    for s in 1..=3u64 {
        let op = op_at(0, [s as f64 * 10.0, y, 0.0], 3.0);
        hist.apply(&mut f, s, &op).unwrap();
    }
    assert_eq!(hist.last_stroke(), Some(3));
    assert_eq!((hist.undo_target(), hist.redo_target()), (Some(3), None));
    hist.apply(&mut f, 0, &EditOp::Undo { stroke: 3 }).unwrap();
    hist.apply(&mut f, 0, &EditOp::Undo { stroke: 2 }).unwrap();
    // Redo takes the oldest undone stroke first.
    assert_eq!((hist.undo_target(), hist.redo_target()), (Some(1), Some(2)));
    hist.apply(&mut f, 0, &EditOp::Redo { stroke: 2 }).unwrap();
    assert_eq!((hist.undo_target(), hist.redo_target()), (Some(2), Some(3)));
    // A new stroke ends the redo chain.
    hist.apply(&mut f, 4, &op_at(0, [0.0, y, 40.0], 3.0))
        .unwrap();
    assert_eq!((hist.undo_target(), hist.redo_target()), (Some(4), None));
    assert_eq!(hist.last_stroke(), Some(4));
}

/// `stroke_bricks` is the box of the bricks a stroke changed: exactly the bricks its undo
/// writes; `None` for an unknown stroke.
#[test]
fn stroke_bricks_bound_what_an_undo_writes() {
    use loam_field::BrickKey;
    let mut f = flat_field(10.0);
    let mut h = History::new(1 << 24);
    // Stroke 1: two digs, one across the brick corner at the origin, one 60 m along x.
    h.apply(&mut f, 1, &dig([0.0, 10.0, 0.0], 3.0)).unwrap();
    h.apply(&mut f, 1, &dig([60.0, 10.0, 5.0], 2.0)).unwrap();
    h.apply(&mut f, 2, &build([200.0, 10.0, 0.0], 2.0, 1))
        .unwrap();
    let (lo, hi) = h.stroke_bricks(1).expect("kept");
    assert_eq!(lo, BrickKey::new(-1, 0, -1));
    assert_eq!(hi, BrickKey::new(1, 0, 0));
    let out = h.apply(&mut f, 3, &EditOp::Undo { stroke: 1 }).unwrap();
    let changed = out.changed.expect("the undo writes");
    for p in [changed.min, changed.max] {
        let (k, _) = p.brick();
        assert!((lo.x..=hi.x).contains(&k.x) && (lo.y..=hi.y).contains(&k.y));
        assert!((lo.z..=hi.z).contains(&k.z), "{k:?}");
    }
    assert_eq!(h.stroke_bricks(9), None);
}

/// The samples of the box the overlapping strokes below reach (ops within 6 m of the origin
/// at y = 10, radius up to 3.5 m, plus the band and brush halos).
fn overlap_box() -> impl Iterator<Item = loam_field::SamplePos> {
    samples([-14, 0, -14], [14, 20, 14])
}

type Dense = Vec<(u32, u8)>;

/// Per sample index of the dense box: (value before the stroke, value it left), as bits.
type StrokeSamples = std::collections::BTreeMap<usize, ((u32, u8), (u32, u8))>;

fn dense(f: &Field) -> Dense {
    overlap_box()
        .map(|p| (f.sample(p).to_bits(), f.material(p)))
        .collect()
}

/// A reference of the undo rule, on dense copies of the field: per stroke, the samples it
/// changed with their value before its first change and after its last; after any undo or
/// redo, each sample shows the newest done stroke that changed it, or, where every stroke
/// that changed it is undone, its value from before the oldest of them.
#[derive(Default)]
struct Reference {
    /// Per stroke: done, and sample index → (before, left).
    strokes: Vec<(bool, StrokeSamples)>,
}

impl Reference {
    fn record(&mut self, stroke: usize, old: &Dense, new: &Dense) {
        let s = &mut self.strokes[stroke].1;
        for (i, (a, b)) in old.iter().zip(new).enumerate() {
            if a != b {
                s.entry(i).or_insert((*a, *b)).1 = *b;
            }
        }
    }

    fn expected(&self, now: &Dense) -> Dense {
        let mut out = now.clone();
        for (i, v) in out.iter_mut().enumerate() {
            let touching: Vec<_> = self
                .strokes
                .iter()
                .filter_map(|(done, m)| m.get(&i).map(|e| (*done, *e)))
                .collect();
            if let Some((_, (_, left))) = touching.iter().rev().find(|(done, _)| *done) {
                *v = *left;
            } else if let Some((_, (before, _))) = touching.first() {
                *v = *before;
            }
        }
        out
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// Overlapping strokes (as several players make them in one place) with undo and redo in
    /// any order: after every step each sample holds what the newest done stroke that changed
    /// it left there, or its value from before them all (a dense reference model); undoing
    /// every stroke at the end gives back the field from before them bit for bit.
    #[test]
    fn a_sample_shows_its_newest_done_stroke(
        steps in prop::collection::vec((any::<u8>(), -5.0..5.0f64, -5.0..5.0f64, 0..4u8), 1..14),
    ) {
        let base = flat_field(10.0);
        let mut f = base.clone();
        let mut hist = History::default();
        let mut reference = Reference::default();
        for (kind, x, z, what) in steps {
            let n = reference.strokes.len();
            let old = dense(&f);
            match what {
                0 | 1 if n > 0 => {
                    let i = usize::from(kind) % n;
                    let undo = what == 0;
                    let op = if undo {
                        EditOp::Undo { stroke: i as u64 + 1 }
                    } else {
                        EditOp::Redo { stroke: i as u64 + 1 }
                    };
                    let ok = hist.apply(&mut f, 0, &op).is_ok();
                    prop_assert_eq!(ok, reference.strokes[i].0 == undo, "undo {} of stroke {}", undo, i + 1);
                    if ok {
                        reference.strokes[i].0 = !undo;
                    }
                    let now = dense(&f);
                    prop_assert!(now == reference.expected(&old), "after {} of stroke {}", if undo { "undo" } else { "redo" }, i + 1);
                }
                _ => {
                    reference.strokes.push((true, Default::default()));
                    let id = n as u64 + 1;
                    // One or two ops per stroke, the second a little beside the first.
                    for k in 0..(1 + kind % 2) {
                        let before = dense(&f);
                        let op = op_at(kind / 2, [x + f64::from(k), 10.0, z], 2.0 + f64::from(kind % 3) * 0.75);
                        hist.apply(&mut f, id, &op).unwrap();
                        reference.record(n, &before, &dense(&f));
                    }
                }
            }
        }
        let done: Vec<usize> = (0..reference.strokes.len()).filter(|&i| reference.strokes[i].0).collect();
        for i in done.into_iter().rev() {
            hist.apply(&mut f, 0, &EditOp::Undo { stroke: i as u64 + 1 }).unwrap();
        }
        prop_assert_eq!(f.hash(), base.hash(), "every stroke undone");
    }
}

/// Client A digs, B digs in A's crater, A undoes (the multiplayer case, on one history): B's
/// dig stays where it changed the ground; what only A dug is filled again.
#[test]
fn undo_keeps_a_later_dig_in_the_same_place() {
    let base = flat_field(10.0);
    let mut f = base.clone();
    let mut hist = History::default();
    let a = dig([0.0, 10.0, 0.0], 4.0);
    let b = dig([2.5, 8.0, 0.0], 3.0);
    hist.apply(&mut f, 1, &a).unwrap();
    hist.apply(&mut f, 2, &b).unwrap();
    let with_both = f.clone();
    hist.apply(&mut f, 0, &EditOp::Undo { stroke: 1 }).unwrap();
    let mut only_a = base.clone();
    only_a.apply(&a).unwrap();
    let (mut kept_b, mut filled) = (0, 0);
    for p in overlap_box() {
        let (v, va, v0, vb) = (
            f.sample(p),
            only_a.sample(p),
            base.sample(p),
            with_both.sample(p),
        );
        if vb != va {
            // B changed this sample after A: B's value stays.
            assert_eq!(v.to_bits(), vb.to_bits(), "{p:?}");
            kept_b += 1;
        } else if va != v0 {
            // Only A changed it: back to the ground from before.
            assert_eq!(v.to_bits(), v0.to_bits(), "{p:?}");
            filled += 1;
        }
    }
    assert!(
        kept_b > 100 && filled > 100,
        "{kept_b} kept, {filled} filled"
    );
    // B's ball reaches below A's crater: it is still open there.
    assert!(f.sample(loam_field::SamplePos::new(3, 6, 0)) > 0.0);
    // What only A dug (its far side) is ground again.
    assert!(f.sample(loam_field::SamplePos::new(-3, 9, 0)) < 0.0);
    // Redo A: both again, bit for bit.
    hist.apply(&mut f, 0, &EditOp::Redo { stroke: 1 }).unwrap();
    assert_eq!(f.hash(), with_both.hash());
    // Undo both, in either order: the flat ground.
    hist.apply(&mut f, 0, &EditOp::Undo { stroke: 2 }).unwrap();
    hist.apply(&mut f, 0, &EditOp::Undo { stroke: 1 }).unwrap();
    assert_eq!(f.hash(), base.hash());
}
