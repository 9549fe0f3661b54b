//! LoamPlugin in an app without a renderer: chunks appear around the viewer, an edit's
//! chunks are swapped in the same frame, old meshes stay until new ones arrive, and chunks
//! that leave the view are despawned.

mod common;

use std::time::{Duration, Instant};

use bevy::prelude::*;
use loam_bevy::{ChunkEntities, ChunkEntity, ChunkStats, LoamPlugin, LoamViewer, LoamWorld};
use loam_field::{CsgMode, EditOp};
use loam_world::{World, WorldSettings};

fn app(view_radius: u32) -> (App, f64) {
    let field = common::noise_field_without_caves();
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
        let fading = app.world().resource::<loam_bevy::Fades>().running();
        if w.waiting() == 0
            && w.pending_batches() == 0
            && w.metrics().queue_depth == 0
            && fading == 0
        {
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
        assert!(!w.take_field(&replica).unwrap().is_empty());
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

/// An app over a world with `levels` levels of detail out to `view_distance` metres.
fn lod_app(levels: u8, view_distance: f64) -> (App, f64) {
    let (mut app, h) = app(2);
    let field = app.world().resource::<LoamWorld>().world.field().clone();
    let settings = WorldSettings {
        view_radius: 2,
        threads: 2,
        lod_levels: levels,
        view_distance,
        ..Default::default()
    };
    app.insert_resource(LoamWorld::new(World::new(field, settings).unwrap()));
    (app, h)
}

/// The chunk entities on screen, by level and key, with their levels as their components say.
fn shown_lod(app: &mut App) -> Vec<loam_world::lod::LodKey> {
    let mut q = app.world_mut().query::<&ChunkEntity>();
    let mut v: Vec<_> = q
        .iter(app.world())
        .map(|c| loam_world::lod::LodKey::new(c.level, [c.key.x, c.key.y, c.key.z]))
        .collect();
    v.sort();
    v
}

#[test]
fn chunks_of_every_level_are_drawn_and_replaced_in_the_frame_their_level_changes() {
    let (mut app, h) = lod_app(3, 400.0);
    settle(&mut app);
    let drawn = shown_lod(&mut app);
    let mut levels: Vec<u8> = drawn.iter().map(|k| k.level).collect();
    levels.dedup();
    assert_eq!(levels, [0, 1, 2], "levels drawn");
    // Every drawn chunk is in the world's view (no stale level left on screen), and the map
    // of entities agrees with the entities.
    let view = app.world().resource::<LoamWorld>().world.view();
    assert!(
        drawn.iter().all(|k| view.contains(k)),
        "a drawn chunk out of view"
    );
    let map: Vec<_> = app
        .world()
        .resource::<ChunkEntities>()
        .0
        .keys()
        .copied()
        .collect();
    assert_eq!(map, drawn);
    // Drawn chunks never overlap: no drawn chunk lies inside another drawn one.
    for k in &drawn {
        let mut p = k.parent();
        while let Some(q) = p {
            assert!(drawn.binary_search(&q).is_err(), "{k:?} inside {q:?}");
            p = q.parent();
        }
    }

    // Far away, the chunks around the start become coarse: their level-0 entities go.
    let mut q = app
        .world_mut()
        .query_filtered::<&mut Transform, With<LoamViewer>>();
    for mut t in q.iter_mut(app.world_mut()) {
        t.translation = Vec3::new(300.0, h as f32 + 2.0, 0.0);
    }
    // The viewer's global transform follows in this frame's PostUpdate: the world sees the
    // move from the next frame on.
    app.update();
    settle(&mut app);
    let moved = shown_lod(&mut app);
    let view = app.world().resource::<LoamWorld>().world.view();
    let stale: Vec<_> = moved.iter().filter(|k| !view.contains(k)).collect();
    assert!(stale.is_empty(), "drawn out of view: {stale:?}");
    let near_start = |k: &&loam_world::lod::LodKey| k.level == 0 && k.x.abs() <= 1;
    assert!(drawn.iter().filter(near_start).count() > 0);
    assert_eq!(moved.iter().filter(near_start).count(), 0, "{moved:?}");
    assert!(moved.iter().any(|k| k.level == 0 && k.x >= 8));
}

#[test]
fn the_debug_view_tints_chunks_by_level() {
    let (mut app, _) = lod_app(2, 200.0);
    settle(&mut app);
    app.world_mut().resource_mut::<loam_bevy::LodDebugView>().on = true;
    app.update();
    let tints = app
        .world()
        .resource::<loam_bevy::LodDebugView>()
        .tints
        .clone();
    assert_eq!(tints.len(), 6);
    let mut q = app.world_mut().query::<(
        &ChunkEntity,
        &MeshMaterial3d<loam_bevy::TerrainMaterialAsset>,
    )>();
    let mut seen = [false; 2];
    for (c, m) in q.iter(app.world()) {
        assert_eq!(m.0, tints[usize::from(c.level)], "{c:?}");
        seen[usize::from(c.level)] = true;
    }
    assert_eq!(seen, [true, true]);
    let materials = app
        .world()
        .resource::<Assets<loam_bevy::TerrainMaterialAsset>>();
    let red = materials
        .get(&tints[1])
        .unwrap()
        .base
        .base_color
        .to_linear();
    assert_eq!([red.red, red.green, red.blue], loam_bevy::level_tint(1));
    // Off again: every chunk goes back to the terrain material.
    app.world_mut().resource_mut::<loam_bevy::LodDebugView>().on = false;
    app.update();
    let base = app
        .world()
        .resource::<loam_bevy::TerrainMaterial>()
        .0
        .clone();
    let mut q = app.world_mut().query::<(
        &ChunkEntity,
        &MeshMaterial3d<loam_bevy::TerrainMaterialAsset>,
    )>();
    assert!(q.iter(app.world()).all(|(_, m)| m.0 == base));
}

/// The fade windows of the running cross-fades' materials: (fading out, window x, window y).
fn fade_windows_in_use(app: &mut App) -> Vec<(bool, f32, f32)> {
    let mut q = app.world_mut().query::<(
        &loam_bevy::Fading,
        &MeshMaterial3d<loam_bevy::TerrainMaterialAsset>,
    )>();
    let materials = app
        .world()
        .resource::<Assets<loam_bevy::TerrainMaterialAsset>>();
    let mut v: Vec<_> = q
        .iter(app.world())
        .map(|(f, m)| {
            let w = materials.get(&m.0).unwrap().extension.window;
            (f.out, w.x, w.y)
        })
        .collect();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v.dedup();
    v
}

#[test]
fn a_level_change_cross_fades_then_leaves_one_set_of_chunks() {
    use bevy::time::TimeUpdateStrategy;
    use loam_bevy::Fading;
    let (mut app, h) = lod_app(3, 400.0);
    // 0.1 s of virtual time per frame: the 0.4 s fade takes four frames, whatever the clock.
    app.insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_millis(
        100,
    )));
    settle(&mut app);
    let mut q = app
        .world_mut()
        .query_filtered::<&mut Transform, With<LoamViewer>>();
    for mut t in q.iter_mut(app.world_mut()) {
        t.translation = Vec3::new(300.0, h as f32 + 2.0, 0.0);
    }
    // Frames until the first level change is on screen: the replaced chunks are still drawn,
    // fading out, and are no longer chunks on screen.
    let t = Instant::now();
    loop {
        app.update();
        let mut q = app.world_mut().query::<&Fading>();
        if q.iter(app.world()).any(|f| f.out) {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "no level change faded"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    let mut q = app
        .world_mut()
        .query::<(&Fading, Option<&ChunkEntity>, &Mesh3d)>();
    let (mut outs, mut ins) = (0, 0);
    for (f, c, _) in q.iter(app.world()) {
        assert_eq!(c.is_some(), !f.out, "{f:?}");
        if f.out {
            outs += 1;
        } else {
            ins += 1;
        }
    }
    assert!(outs > 0 && ins > 0, "{outs} out, {ins} in");
    // The first frame of a fade draws the old set only, and the two windows meet.
    let windows = fade_windows_in_use(&mut app);
    assert!(windows.contains(&(false, 0.0, 0.0)), "{windows:?}");
    assert!(windows.contains(&(true, 0.0, 2.0)), "{windows:?}");
    // One frame on (0.1 s of 0.4): a quarter of the pixels come from the new set.
    app.update();
    let windows = fade_windows_in_use(&mut app);
    assert!(windows.contains(&(false, 0.0, 0.25)), "{windows:?}");
    assert!(windows.contains(&(true, 0.25, 2.0)), "{windows:?}");

    settle(&mut app);
    let mut q = app.world_mut().query::<&Fading>();
    assert_eq!(q.iter(app.world()).count(), 0, "fades left over");
    // Every drawn entity is a chunk on screen, in the view, with the terrain material.
    let mut q = app.world_mut().query::<(
        Option<&ChunkEntity>,
        &MeshMaterial3d<loam_bevy::TerrainMaterialAsset>,
    )>();
    let base = app
        .world()
        .resource::<loam_bevy::TerrainMaterial>()
        .0
        .clone();
    let drawn: Vec<_> = q.iter(app.world()).collect();
    assert!(drawn.iter().all(|(c, m)| c.is_some() && m.0 == base));
    assert_eq!(drawn.len(), app.world().resource::<ChunkEntities>().0.len());
    let view = app.world().resource::<LoamWorld>().world.view();
    assert!(shown_lod(&mut app).iter().all(|k| view.contains(k)));
    // Only the terrain material is left: the fades' materials went with them.
    let materials = app
        .world()
        .resource::<Assets<loam_bevy::TerrainMaterialAsset>>();
    assert_eq!(materials.len(), 1);
}

#[test]
fn an_edit_with_levels_of_detail_swaps_at_once_without_a_fade() {
    let (mut app, h) = lod_app(2, 200.0);
    settle(&mut app);
    app.world_mut()
        .resource_mut::<LoamWorld>()
        .world
        .apply(&EditOp::Sphere {
            mode: CsgMode::Subtract,
            center: [0.0, h, 0.0],
            radius: 3.0,
            material: 0,
            blend: 0.0,
        })
        .unwrap();
    let t = Instant::now();
    while app.world().resource::<ChunkStats>().edit_groups == 0 {
        app.update();
        assert!(t.elapsed() < Duration::from_secs(60));
        std::thread::sleep(Duration::from_millis(2));
    }
    let mut q = app.world_mut().query::<&loam_bevy::Fading>();
    assert_eq!(q.iter(app.world()).count(), 0);
    assert_eq!(app.world().resource::<loam_bevy::Fades>().running(), 0);
}

#[test]
fn fog_far_plane_and_sky_follow_a_changed_view_distance() {
    use bevy::pbr::{DistanceFog, FogFalloff};
    use loam_bevy::scene;
    let (mut app, _) = lod_app(5, 2048.0);
    app.add_systems(Update, scene::follow_view_distance);
    let built = {
        let w = &app.world().resource::<LoamWorld>().world;
        scene::view_distance(w.settings(), 1.0)
    };
    let cam = app
        .world_mut()
        .spawn((
            Camera3d::default(),
            scene::projection(built),
            scene::fog(built),
        ))
        .id();
    let dome = app
        .world_mut()
        .spawn((Transform::default(), scene::SkyDome))
        .id();
    app.update();
    let (lo, hi) = app
        .world()
        .resource::<LoamWorld>()
        .world
        .view_distance_range()
        .unwrap();
    assert_eq!((lo, hi), (64.0, 1024.0));
    let set = app
        .world_mut()
        .resource_mut::<LoamWorld>()
        .world
        .set_view_distance(1000.0)
        .unwrap();
    assert_eq!(set, 1000.0);
    app.update();
    let fog = app.world().get::<DistanceFog>(cam).unwrap();
    match fog.falloff {
        FogFalloff::Linear { start, end } => assert_eq!((start, end), (450.0, 920.0)),
        ref f => panic!("{f:?}"),
    }
    match app.world().get::<Projection>(cam).unwrap() {
        Projection::Perspective(p) => assert_eq!(p.far, 1100.0),
        p => panic!("{p:?}"),
    }
    let scale = app.world().get::<Transform>(dome).unwrap().scale;
    assert_eq!(built, 2048.0);
    assert_eq!(scale, Vec3::splat(1000.0 / 2048.0));
}

/// A `LoamSettings` inserted before the plugin is kept (the plugin adds its default with
/// `init_resource`); the mesher and view distance it asks for reach the world, a view
/// distance clamped to the world's range, and a world changed directly afterwards is not
/// changed back while the settings stay as they are.
#[test]
fn settings_inserted_first_win_and_reach_the_world() {
    use loam_bevy::LoamSettings;
    use loam_mesh::Mesher;
    let field = common::noise_field_without_caves();
    let world = World::new(
        field,
        WorldSettings {
            view_radius: 2,
            threads: 2,
            lod_levels: 5,
            view_distance: 2048.0,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(world.settings().mesher, Mesher::MarchingCubes);
    let (_, farthest) = world.view_distance_range().unwrap();
    assert!(farthest < 1e6);
    let mine = LoamSettings {
        upload_budget: Duration::from_millis(9),
        lod_fade_s: 0.0,
        mesher: Some(Mesher::SurfaceNets),
        view_distance: Some(1e6),
    };
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, AssetPlugin::default(), TransformPlugin))
        .init_asset::<Mesh>()
        .init_asset::<StandardMaterial>()
        .insert_resource(mine)
        .add_plugins(LoamPlugin)
        .insert_resource(LoamWorld::new(world));
    app.update();
    assert_eq!(*app.world().resource::<LoamSettings>(), mine);
    let settings = |app: &App| {
        let s = *app.world().resource::<LoamWorld>().world.settings();
        (s.mesher, s.view_distance)
    };
    assert_eq!(settings(&app), (Mesher::SurfaceNets, farthest));
    // Asked for less: the world follows. Changed directly: the settings do not undo it.
    app.world_mut().resource_mut::<LoamSettings>().view_distance = Some(300.0);
    app.update();
    assert_eq!(settings(&app), (Mesher::SurfaceNets, 300.0));
    app.world_mut()
        .resource_mut::<LoamWorld>()
        .world
        .set_mesher(Mesher::DualContouring);
    app.update();
    assert_eq!(settings(&app), (Mesher::DualContouring, 300.0));
}

/// The main thread's time per frame: every frame after a clear is counted once, the frame
/// that swaps in an edit's group apart from the others, and each is a real duration.
#[test]
fn frame_cost_counts_every_frame_and_the_edit_frames_apart() {
    let (mut app, h) = app(1);
    settle(&mut app);
    app.world_mut()
        .resource_mut::<loam_bevy::FrameCost>()
        .clear();
    for _ in 0..5 {
        app.update();
    }
    let s = app.world().resource::<loam_bevy::FrameCost>().summary();
    assert_eq!((s.steady_frames, s.edit_frames), (5, 0), "{s:?}");
    assert!(
        s.steady_p50_ms > 0.0 && s.steady_p99_ms >= s.steady_p50_ms,
        "{s:?}"
    );
    app.world_mut()
        .resource_mut::<LoamWorld>()
        .apply(
            None,
            &EditOp::Sphere {
                mode: CsgMode::Subtract,
                center: [0.0, h, 0.0],
                radius: 3.0,
                material: 0,
                blend: 0.0,
            },
        )
        .unwrap();
    let mut updates = 5;
    let t = Instant::now();
    while app.world().resource::<ChunkStats>().edit_groups == 0 {
        app.update();
        updates += 1;
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the edit never showed"
        );
    }
    let s = app.world().resource::<loam_bevy::FrameCost>().summary();
    assert_eq!(s.steady_frames + s.edit_frames, updates, "{s:?}");
    assert_eq!(s.edit_frames, 1, "{s:?}");
    assert!(s.edit_max_ms > 0.0, "{s:?}");
}
