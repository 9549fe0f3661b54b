//! Blocks as a replica (the editor joined to a server): the app applies an authority's block
//! deltas and only plays falls back on its terrain colliders; it decides nothing itself
//! (no support checks after a dig, no rest), so it keeps what the authority's records say.

mod common;

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use common::{cuboid, noise_field_without_caves, pad_ops, run_until};
use loam_bevy::{
    BlocksPlugin, Effect, LoamBlocks, LoamPlugin, LoamViewer, LoamWorld, Physics, chunk_of,
};
use loam_blocks::{
    BlockDelta, BlockOp, BlockPos, BlockSettings, BlockSize, BlockWorld, FieldGround,
    MaterialTable, PieceState,
};
use loam_field::CsgMode;
use loam_world::{World, WorldSettings};

const FRAME: Duration = Duration::from_millis(50);

fn place(at: [i32; 3]) -> BlockOp {
    BlockOp::Place {
        at: BlockPos::new(BlockSize::Full, at).unwrap(),
        material: MaterialTable::STONE,
        shape: Default::default(),
        paint: None,
    }
}

/// Applies an authority's delta to the app's blocks, as `editor::remote::sync` does.
fn receive(app: &mut App, delta: &BlockDelta) {
    let world = app.world_mut();
    world.resource_scope(|world, mut blocks: Mut<LoamBlocks>| {
        let mut physics = world.resource_mut::<Physics>();
        blocks.apply_delta(&mut physics, delta).unwrap();
    });
}

#[test]
fn a_replica_plays_falls_back_on_its_terrain_and_decides_nothing() {
    let field = noise_field_without_caves();
    let top = field.generator().surface_height(0.5, 0.5).round();
    let settings = WorldSettings {
        view_radius: 2,
        view_depth: 1,
        threads: 2,
        ..Default::default()
    };
    let pads = pad_ops(top);
    // The authority: its own field with the same pad, a tracked block world.
    let mut authority_field = field.clone();
    for op in &pads {
        authority_field.apply(op).unwrap();
    }
    let mut authority_physics = loam_physics::PhysicsWorld::new(Default::default()).unwrap();
    let mut authority =
        BlockWorld::new(MaterialTable::standard(), BlockSettings::default()).unwrap();
    authority.set_tracking(true);
    let ground = FieldGround(&authority_field);
    // One block standing on the pad, one placed 4 m above it (it falls).
    let t = top as i32;
    authority
        .apply(&mut authority_physics, &ground, &place([0, t, 0]))
        .unwrap();
    authority
        .apply(&mut authority_physics, &ground, &place([2, t + 4, 0]))
        .unwrap();
    let delta = authority.take_delta();
    assert_eq!((delta.held.len(), delta.pieces.len()), (1, 1), "{delta:?}");

    let mut app = App::new();
    app.add_plugins((MinimalPlugins, AssetPlugin::default(), TransformPlugin))
        .init_asset::<Mesh>()
        .init_asset::<Image>()
        .init_asset::<StandardMaterial>()
        .insert_resource(TimeUpdateStrategy::ManualDuration(FRAME))
        .add_plugins((LoamPlugin, BlocksPlugin))
        .insert_resource(LoamWorld::new(World::new(field, settings).unwrap()));
    app.world_mut().spawn((
        Transform::from_xyz(0.0, top as f32 + 6.0, 12.0),
        GlobalTransform::from_xyz(0.0, top as f32 + 6.0, 12.0),
        Camera3d::default(),
        LoamViewer,
    ));
    app.world_mut().resource_mut::<LoamBlocks>().replica = true;
    for op in &pads {
        app.world_mut()
            .resource_mut::<LoamWorld>()
            .apply(None, op)
            .unwrap();
    }
    receive(&mut app, &delta);
    let start_y = |app: &App| {
        app.world()
            .resource::<LoamBlocks>()
            .world
            .pieces()
            .next()
            .unwrap()
            .pose
            .position[1]
    };
    let y0 = start_y(&app);
    assert!(y0 > top as f32 + 3.5, "{y0}");

    // The piece falls onto the pad (the app's terrain colliders stop it) and stays a
    // falling piece: only the authority says when it rests.
    let key = chunk_of(Vec3::new(2.5, top as f32, 0.5), 1.0);
    let ready = run_until(&mut app, 60, |app| {
        app.world().resource::<Physics>().ready_around(key)
            && app.world().resource::<LoamWorld>().world.waiting() == 0
    });
    assert!(ready, "the terrain colliders never came");
    for _ in 0..60 {
        app.update();
    }
    let blocks = &app.world().resource::<LoamBlocks>().world;
    let piece = blocks.pieces().next().unwrap();
    let y = piece.pose.position[1];
    assert!(
        y < top as f32 + 0.5 && y > top as f32 - 0.5,
        "it lies on the pad at {top}: y {y} (from {y0})"
    );
    assert_eq!(piece.state, PieceState::Falling, "rest is the authority's");
    assert_eq!(blocks.store().len(), 1);

    // A dig under the held block: the replica does not decide that it falls.
    app.world_mut()
        .resource_mut::<LoamWorld>()
        .apply(
            None,
            &cuboid(CsgMode::Subtract, [0.5, top - 1.5, 0.5], [1.5, 1.5, 1.5]),
        )
        .unwrap();
    for _ in 0..5 {
        app.update();
    }
    let blocks = &app.world().resource::<LoamBlocks>().world;
    assert_eq!(
        blocks.store().len(),
        1,
        "the block stays held until a delta says"
    );
    assert_eq!(blocks.pieces().count(), 1, "no lump or new piece made here");

    // The authority's records then take over: the block is gone, the piece rests where
    // the authority put it.
    let mut piece = app
        .world()
        .resource::<LoamBlocks>()
        .world
        .pieces()
        .next()
        .unwrap()
        .clone();
    piece.state = PieceState::Rubble { rest: piece.pose };
    piece.velocity = [0.0; 3];
    piece.spin = [0.0; 3];
    let records = BlockDelta {
        unheld: vec![BlockPos::new(BlockSize::Full, [0, t, 0]).unwrap()],
        pieces: vec![piece.clone()],
        ..Default::default()
    };
    receive(&mut app, &records);
    app.update();
    let blocks = &app.world().resource::<LoamBlocks>().world;
    assert_eq!(blocks.store().len(), 0);
    assert_eq!(blocks.pieces().next().unwrap().state, piece.state);
    // Its landing is heard and seen: one `Effect::Land` at the rest pose.
    let messages = app.world().resource::<Messages<Effect>>();
    let lands: Vec<(Vec3, f32)> = messages
        .iter_current_update_messages()
        .filter_map(|e| match e {
            Effect::Land { at, speed, .. } => Some((*at, *speed)),
            _ => None,
        })
        .collect();
    assert_eq!(lands.len(), 1, "{lands:?}");
    assert_eq!(lands[0].0, Vec3::from_array(piece.pose.position));
    // It fell about 4 m before lying still: it hit at the speed of that fall (√(2·g·4 m)
    // = 8.9 m/s), not at its speed when the record came.
    assert!(lands[0].1 > 6.0 && lands[0].1 < 10.0, "{lands:?}");
}
