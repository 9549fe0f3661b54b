//! Rubble at rest on terrain that a dig then takes away falls once the rebuilt collider is
//! put in, as the server and the editor build colliders ([`TerrainColliders`]): built on
//! another thread from a snapshot ([`TerrainColliders::next_builds`] /
//! [`TerrainColliders::install`]), not rebuilt before each step as a replay does.

mod common;

use common::flat_field;
use loam_blocks::{BlockOp, BlockPos, BlockSize, BlockWorld, MaterialTable, PieceState};
use loam_field::{CsgMode, EditOp, Field};
use loam_physics::{PhysicsSettings, PhysicsWorld};
use loam_session::{TerrainColliders, pieces_awake, terrain_changed};

/// Builds every stale collider the way a worker does: from a snapshot, installed after.
fn build_on_worker(c: &mut TerrainColliders, physics: &mut PhysicsWorld, field: &Field) {
    loop {
        let urgent = c.wants_missing();
        if !urgent && !c.stale() {
            return;
        }
        let (keys, at) = c.next_builds(8);
        if keys.is_empty() {
            return;
        }
        let snapshot = field.clone();
        let built = keys
            .into_iter()
            .map(|k| (k, loam_blocks::field_collider(&snapshot, k)))
            .collect();
        c.install(physics, at, built, !urgent);
    }
}

#[test]
fn rubble_on_dug_ground_falls_when_its_collider_is_rebuilt() {
    let mut field = flat_field(2.0);
    let mut physics = PhysicsWorld::new(PhysicsSettings::default()).unwrap();
    let mut blocks = BlockWorld::new(MaterialTable::standard(), Default::default()).unwrap();
    let mut colliders = TerrainColliders::default();
    let dt = physics.settings().timestep;
    // A block dropped from 3 m comes to rest on the ground (y = 2) as rubble.
    let at = BlockPos::new(BlockSize::Full, [4, 5, 4]).unwrap();
    let op = BlockOp::Place {
        at,
        material: MaterialTable::STONE,
        shape: Default::default(),
        paint: None,
    };
    let c = blocks
        .apply(&mut physics, &loam_blocks::FieldGround(&field), &op)
        .unwrap();
    assert_eq!(c.new_pieces.len(), 1, "a block in the air falls");
    let piece = c.new_pieces[0];
    let mut steps = 0;
    while pieces_awake(&blocks, &physics) {
        colliders.ensure_falling(&field, &blocks);
        build_on_worker(&mut colliders, &mut physics, &field);
        blocks.step(&mut physics, dt).unwrap();
        steps += 1;
        assert!(steps < 2000, "never came to rest");
    }
    let rest = blocks.piece(piece).unwrap().pose.position[1];
    assert!(matches!(
        blocks.piece(piece).unwrap().state,
        PieceState::Rubble { .. }
    ));
    assert!((rest - 2.0).abs() < 0.05, "rests on the ground: {rest}");

    // A pit 3 m deep dug under it.
    let dig = EditOp::Cuboid {
        mode: CsgMode::Subtract,
        center: [4.5, 0.5, 4.5],
        half_extents: [2.5, 1.5, 2.5],
        rotation: [0.0, 0.0, 0.0, 1.0],
        material: 0,
        blend: 0.0,
    };
    let changed = field.apply(&dig).unwrap().changed.unwrap();
    terrain_changed(&mut blocks, &mut physics, &mut colliders, &field, changed).unwrap();
    // The worker rebuilds the changed colliders; the rubble wakes and falls into the pit.
    build_on_worker(&mut colliders, &mut physics, &field);
    for _ in 0..600 {
        if !pieces_awake(&blocks, &physics) {
            break;
        }
        blocks.step(&mut physics, dt).unwrap();
    }
    let now = blocks.piece(piece).unwrap().pose.position[1];
    assert!((now + 1.0).abs() < 0.05, "on the pit floor (y = -1): {now}");
}
