//! LoamPlugin in an app without a renderer: chunks appear around the viewer, an edit's
//! chunks are swapped in the same frame, old meshes stay until new ones arrive, and chunks
//! that leave the view are despawned.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bevy::prelude::*;
use loam_bevy::{ChunkEntities, ChunkEntity, ChunkStats, LoamPlugin, LoamViewer, LoamWorld};
use loam_field::{
    CaveSettings, CsgMode, EditOp, Field, FieldSettings, Generator, NoiseTerrainSettings,
};
use loam_world::{World, WorldSettings};

fn app(view_radius: u32) -> (App, f64) {
    let g = Generator::noise(
        &NoiseTerrainSettings::default(),
        &CaveSettings {
            enabled: false,
            ..Default::default()
        },
    )
    .unwrap();
    let field = Field::new(FieldSettings::default(), Arc::new(g)).unwrap();
    let h = field.generator().surface_height(0.0, 0.0);
    let settings = WorldSettings {
        view_radius,
        view_depth: 1,
        threads: 2,
        ..Default::default()
    };
    let world = World::new(field, settings).unwrap();
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, AssetPlugin::default(), TransformPlugin))
        .init_asset::<Mesh>()
        .init_asset::<StandardMaterial>()
        .add_plugins(LoamPlugin)
        .insert_resource(LoamWorld::new(world));
    app.world_mut().spawn((
        Transform::from_xyz(0.0, h as f32 + 2.0, 0.0),
        GlobalTransform::default(),
        LoamViewer,
    ));
    (app, h)
}

/// Runs frames until the world is idle and everything is shown (or 60 s pass).
fn settle(app: &mut App) {
    let t = Instant::now();
    loop {
        app.update();
        let w = &app.world().resource::<LoamWorld>().world;
        if w.waiting() == 0 && w.pending_batches() == 0 && w.metrics().queue_depth == 0 {
            app.update();
            return;
        }
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the world never settled"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

fn versions(app: &mut App) -> Vec<(loam_field::ChunkKey, u64)> {
    let mut q = app.world_mut().query::<&ChunkEntity>();
    let mut v: Vec<_> = q.iter(app.world()).map(|c| (c.key, c.version)).collect();
    v.sort();
    v
}

#[test]
fn chunks_appear_and_an_edit_swaps_all_its_chunks_in_one_frame() {
    let (mut app, h) = app(2);
    settle(&mut app);
    let before = versions(&mut app);
    assert!(before.len() > 4, "{} chunks shown", before.len());
    assert_eq!(
        app.world().resource::<ChunkEntities>().0.len(),
        before.len()
    );
    // Every shown entity has a mesh asset with vertices.
    let mut q = app.world_mut().query::<&Mesh3d>();
    let handles: Vec<_> = q.iter(app.world()).map(|m| m.0.clone()).collect();
    let meshes = app.world().resource::<Assets<Mesh>>();
    assert!(
        handles
            .iter()
            .all(|h| meshes.get(h).is_some_and(|m| m.count_vertices() > 0))
    );

    // A dig on a chunk corner touches 8 chunks; they change in the same frame.
    {
        let mut w = app.world_mut().resource_mut::<LoamWorld>();
        w.world
            .apply(&EditOp::Sphere {
                mode: CsgMode::Subtract,
                center: [0.0, h, 0.0],
                radius: 3.0,
                material: 0,
                blend: 0.0,
            })
            .unwrap();
        w.mark_edit();
    }
    assert_eq!(
        app.world().resource::<ChunkStats>().last_edit_to_visible_ms,
        None
    );
    let mut frames_with_change = 0;
    let mut last = before.clone();
    let t = Instant::now();
    loop {
        app.update();
        let now = versions(&mut app);
        if now != last {
            frames_with_change += 1;
            let changed = now.iter().filter(|v| !last.contains(v)).count();
            assert!(
                changed >= 4,
                "only {changed} chunks changed in the edit's frame"
            );
            last = now;
        }
        if app.world().resource::<ChunkStats>().edit_groups == 1 {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(2));
    }
    assert_eq!(
        frames_with_change, 1,
        "the edit's chunks arrived over several frames"
    );
}

#[test]
fn chunks_that_leave_the_view_are_despawned() {
    let (mut app, h) = app(1);
    settle(&mut app);
    let near = app.world().resource::<ChunkEntities>().0.len();
    assert!(near > 0);
    // Move the viewer 20 chunks away: every old chunk goes.
    let mut q = app
        .world_mut()
        .query_filtered::<&mut Transform, With<LoamViewer>>();
    for mut t in q.iter_mut(app.world_mut()) {
        t.translation = Vec3::new(320.0, h as f32 + 2.0, 0.0);
    }
    settle(&mut app);
    let keys: Vec<_> = app
        .world()
        .resource::<ChunkEntities>()
        .0
        .keys()
        .copied()
        .collect();
    assert!(keys.iter().all(|k| k.x >= 15), "{keys:?}");
    let mut q = app.world_mut().query::<&ChunkEntity>();
    assert_eq!(q.iter(app.world()).count(), keys.len());
}

#[test]
fn a_replaced_field_swaps_its_chunks_like_an_edit() {
    // What the editor does with a network client's field (`loam edit --connect`).
    let (mut app, h) = app(2);
    settle(&mut app);
    let before = versions(&mut app);
    let mut replica = app.world().resource::<LoamWorld>().world.field().clone();
    replica
        .apply(&EditOp::Sphere {
            mode: CsgMode::Subtract,
            center: [0.0, h, 0.0],
            radius: 4.0,
            material: 0,
            blend: 0.0,
        })
        .unwrap();
    {
        let mut w = app.world_mut().resource_mut::<LoamWorld>();
        assert!(w.world.replace_bricks(&replica).unwrap() > 0);
        w.mark_edit();
    }
    settle(&mut app);
    let after = versions(&mut app);
    let changed = before
        .iter()
        .zip(&after)
        .filter(|(a, b)| a.0 == b.0 && a.1 != b.1)
        .count();
    assert!(changed >= 1, "chunks swapped: {changed}");
    assert_eq!(
        app.world().resource::<LoamWorld>().world.field().hash(),
        replica.hash()
    );
    assert!(
        app.world()
            .resource::<ChunkStats>()
            .last_edit_to_visible_ms
            .is_some()
    );
}
