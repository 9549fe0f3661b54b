//! Impact and damage thresholds, and a scripted chain reaction.

use loam_blocks::{BlockPos, BlockWorld, ImpactTarget, MaterialTable, PieceImpact, StepReport};
use loam_physics::{PhysicsSettings, PhysicsWorld};

use crate::util::*;

fn weightless() -> PhysicsSettings {
    PhysicsSettings {
        gravity: [0.0; 3],
        ..Default::default()
    }
}

/// A stone block let go at `cell` without gravity and sent down at `speed` m/s; the
/// impacts over 2 s.
fn throw_down(
    w: &mut BlockWorld,
    physics: &mut PhysicsWorld,
    cell: BlockPos,
    speed: f32,
) -> Vec<PieceImpact> {
    let c = w.place(physics, &flat, cell, stone()).unwrap();
    assert_eq!(c.new_pieces.len(), 1, "placed in the air, it is a piece");
    let body = w.piece_body(c.new_pieces[0]).unwrap();
    physics
        .set_body_velocity(body, [0.0, -speed, 0.0], [0.0; 3])
        .unwrap();
    run(w, physics, 120)
        .into_iter()
        .flat_map(|r| r.impacts)
        .collect()
}

#[test]
fn impacts_start_above_two_metres_per_second() {
    for (speed, expected) in [(1.9, 0), (2.1, 1)] {
        let mut physics = physics_with_floor(weightless());
        let mut w = block_world();
        let hits = throw_down(&mut w, &mut physics, full(0, 1, 0), speed);
        assert_eq!(hits.len(), expected, "{speed} m/s: {hits:?}");
        if let Some(h) = hits.first() {
            assert_eq!(h.target, ImpactTarget::Terrain);
            assert!((h.speed - speed).abs() < 0.01, "{h:?}");
        }
    }
}

#[test]
fn a_slow_piece_does_no_damage_even_to_glass() {
    // A quarter-metre glass pane breaks at 5 000 J/m³ · (1/64) m³ = 78 J; a 2 400 kg stone
    // block at 1.9 m/s carries 4 332 J, but below the impact speed it is no impact.
    let mut physics = physics_with_floor(weightless());
    let mut w = block_world();
    let pane = BlockPos::new(loam_blocks::BlockSize::Quarter, [1, 0, 1]).unwrap();
    build(&mut w, &mut physics, &[pane], spec(MaterialTable::GLASS));
    let hits = throw_down(&mut w, &mut physics, full(0, 1, 0), 1.9);
    assert!(hits.is_empty());
    assert_eq!(w.store().get(pane).unwrap().damage, 0.0);
}

#[test]
fn damage_adds_up_to_the_break_energy() {
    // A 1 m wood plank block breaks at 40 000 J/m³ · 1 m³ = 40 kJ. A 1 m stone block
    // (2 400 kg) brings ½ · 2400 · v²: 37.6 kJ at 5.6 m/s (not enough), 41.8 kJ at 5.9.
    let plank = full(0, 0, 0);

    let mut physics = physics_with_floor(weightless());
    let mut w = block_world();
    build(
        &mut w,
        &mut physics,
        &[plank],
        spec(MaterialTable::WOOD_PLANK),
    );
    let rev = w.store().revision();
    let hits = throw_down(&mut w, &mut physics, full(0, 2, 0), 5.6);
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].target, ImpactTarget::Held(plank));
    assert!(!hits[0].broke);
    let damage = w.store().get(plank).unwrap().damage;
    assert!(
        (damage - 0.5 * 2400.0 * 5.6 * 5.6).abs() < 400.0,
        "{damage}"
    );
    assert!(w.store().revision() > rev, "damage is a change");
    // A second hit like it breaks it: damage adds up.
    let hits = throw_down(&mut w, &mut physics, full(0, 4, 0), 5.6);
    assert!(
        hits.iter()
            .any(|h| h.broke && h.target == ImpactTarget::Held(plank))
    );
    assert!(w.store().get(plank).is_none());
    assert_eq!(physics.fixed_count(), 0);

    // One hit at 5.9 m/s breaks a fresh plank at once.
    let mut physics = physics_with_floor(weightless());
    let mut w = block_world();
    build(
        &mut w,
        &mut physics,
        &[plank],
        spec(MaterialTable::WOOD_PLANK),
    );
    let hits = throw_down(&mut w, &mut physics, full(0, 2, 0), 5.9);
    assert!(hits[0].broke, "{hits:?}");
    assert!(w.store().is_empty());
}

/// The chain reaction scene (x along the row, all at z = 0, floor at y = 0):
///
/// ```text
///   y 7        S          ← a stone block placed in the air: it falls 3 m
///   y 3        G B B      ← glass G on a stone pillar, a wood beam B B hanging on G
///   y 0..2     P   H      ← the pillar P (3 stone blocks); glass H on the ground under B
///            x=5 6 7
/// ```
///
/// S breaks G (70 kJ ≫ 5 kJ), the beam loses its only support and falls 2 m onto H
/// (23 kJ ≫ 5 kJ), which breaks too.
pub fn chain_scene() -> (BlockWorld, PhysicsWorld) {
    let mut physics = physics_with_floor(PhysicsSettings::default());
    let mut w = block_world();
    build(
        &mut w,
        &mut physics,
        &[full(5, 0, 0), full(5, 1, 0), full(5, 2, 0)],
        stone(),
    );
    build(
        &mut w,
        &mut physics,
        &[full(5, 3, 0), full(7, 0, 0)],
        spec(MaterialTable::GLASS),
    );
    build(
        &mut w,
        &mut physics,
        &[full(6, 3, 0), full(7, 3, 0)],
        spec(MaterialTable::WOOD_PLANK),
    );
    (w, physics)
}

/// Runs the chain reaction: the stone block's placement, then `frames` frames.
pub fn run_chain(w: &mut BlockWorld, physics: &mut PhysicsWorld, frames: usize) -> Vec<StepReport> {
    let c = w.place(physics, &flat, full(5, 7, 0), stone()).unwrap();
    assert_eq!(c.new_pieces.len(), 1);
    run(w, physics, frames)
}

#[test]
fn a_scripted_chain_reaction() {
    let (mut w, mut physics) = chain_scene();
    let reports = run_chain(&mut w, &mut physics, 300);
    let broke_at = |pos: BlockPos| {
        reports
            .iter()
            .position(|r| r.changes.broken.iter().any(|(p, _)| *p == pos))
    };
    let g = broke_at(full(5, 3, 0)).expect("the glass under the falling stone breaks");
    let h = broke_at(full(7, 0, 0)).expect("the glass under the beam breaks");
    assert!(g < h, "first G (frame {g}), then H (frame {h})");
    // The stone falls 3 m: about 0.78 s.
    assert!((40..=55).contains(&g), "{g}");
    // The beam fell in the frame G broke, as one piece of both its blocks.
    let beam = reports[g].changes.new_pieces.clone();
    assert_eq!(beam.len(), 1);
    assert_eq!(piece_cells(&w, beam[0]), vec![full(6, 3, 0), full(7, 3, 0)]);
    let hit_h = reports[h]
        .impacts
        .iter()
        .find(|i| i.target == ImpactTarget::Held(full(7, 0, 0)))
        .unwrap();
    assert_eq!(hit_h.piece, beam[0]);
    assert!(hit_h.broke && (hit_h.speed - 6.26).abs() < 0.3, "{hit_h:?}");
    // Left standing: the stone pillar only.
    let left: Vec<BlockPos> = w.store().iter().map(|(p, _)| p).collect();
    assert_eq!(left, vec![full(5, 0, 0), full(5, 1, 0), full(5, 2, 0)]);
    settle(&mut w, &mut physics, 600);
    assert_eq!(w.pieces().count(), 2);
}
