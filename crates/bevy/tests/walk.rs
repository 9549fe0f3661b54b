//! Walk mode on the session layer's terrain colliders: the character waits in the air until
//! the chunks around it have colliders, lands on the ground, walks on it, and drops into a
//! pit dug under it once the pit's colliders are rebuilt from the field.

mod common;

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use common::{cuboid, noise_field_without_caves, pad_ops};
use loam_bevy::{BlocksPlugin, LoamPlugin, LoamViewer, LoamWorld, Physics, WalkFocus, walk_step};
use loam_field::CsgMode;
use loam_physics::MoveInput;
use loam_world::{World, WorldSettings};

const FRAME: Duration = Duration::from_millis(20);
const EYE: f32 = loam_bevy::EYE_HEIGHT_M;

/// One frame: the character steps (`walk_step`, as the editor's walk mode does), the focus
/// follows its feet, the app updates. Returns the new camera position.
fn step(app: &mut App, camera: Vec3, wish: [f32; 2]) -> Vec3 {
    let dt = FRAME.as_secs_f32();
    let input = MoveInput {
        wish,
        run: false,
        jump: false,
    };
    let camera = app
        .world_mut()
        .resource_scope(|w, mut physics: Mut<Physics>| {
            walk_step(&mut physics, w.resource::<LoamWorld>(), camera, input, dt)
        });
    app.world_mut()
        .insert_resource(WalkFocus(camera - Vec3::Y * EYE));
    app.update();
    camera
}

#[test]
fn the_walker_lands_walks_and_drops_into_a_pit_dug_under_it() {
    let field = noise_field_without_caves();
    let top = field.generator().surface_height(0.5, 0.5).round();
    let settings = WorldSettings {
        view_radius: 2,
        view_depth: 1,
        threads: 2,
        ..Default::default()
    };
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, AssetPlugin::default(), TransformPlugin))
        .init_asset::<Mesh>()
        .init_asset::<Image>()
        .init_asset::<StandardMaterial>()
        .insert_resource(TimeUpdateStrategy::ManualDuration(FRAME))
        .add_plugins((LoamPlugin, BlocksPlugin))
        .insert_resource(LoamWorld::new(World::new(field, settings).unwrap()));
    app.world_mut().spawn((
        Transform::from_xyz(0.5, top as f32 + 4.0, 0.5),
        GlobalTransform::from_xyz(0.5, top as f32 + 4.0, 0.5),
        Camera3d::default(),
        LoamViewer,
    ));
    {
        let mut w = app.world_mut().resource_mut::<LoamWorld>();
        for op in &pad_ops(top) {
            w.apply(None, op).unwrap();
        }
    }
    // Feet 3 m over the pad. Nothing moves until the chunks around have colliders.
    let mut camera = Vec3::new(0.5, top as f32 + 3.0 + EYE, 0.5);
    let start = camera;
    camera = step(&mut app, camera, [0.0, 0.0]);
    assert_eq!(camera, start, "waits for its colliders");
    let t = std::time::Instant::now();
    let mut frames = 0;
    // Then it falls and stands on the pad (feet on its top, within the capsule's skin).
    while t.elapsed() < Duration::from_secs(60) {
        camera = step(&mut app, camera, [0.0, 0.0]);
        frames += 1;
        if frames > 200 && (camera.y - EYE - top as f32).abs() < 0.1 {
            break;
        }
    }
    let feet = camera.y - EYE;
    assert!(
        (feet - top as f32).abs() < 0.1,
        "stands at {feet}, pad top {top}"
    );
    assert!(app.world().resource::<Physics>().colliders() > 0);

    // It walks along +x on the flat pad (8 m wide around x = 0.5), staying on it.
    let x0 = camera.x;
    for _ in 0..20 {
        camera = step(&mut app, camera, [1.0, 0.0]);
    }
    assert!(
        camera.x > x0 + 1.0 && camera.x < 4.0,
        "walked from {x0} to {}",
        camera.x
    );
    assert!(
        (camera.y - EYE - top as f32).abs() < 0.1,
        "feet at {}, pad top {top}",
        camera.y - EYE
    );

    // A pit 2 m deep dug under it: it drops to the pit's floor when the rebuilt colliders
    // come in.
    let at = [f64::from(camera.x), top - 1.0, f64::from(camera.z)];
    app.world_mut()
        .resource_mut::<LoamWorld>()
        .apply(None, &cuboid(CsgMode::Subtract, at, [1.5, 1.0, 1.5]))
        .unwrap();
    let t = std::time::Instant::now();
    while t.elapsed() < Duration::from_secs(60) {
        camera = step(&mut app, camera, [0.0, 0.0]);
        if (camera.y - EYE - (top as f32 - 2.0)).abs() < 0.1 {
            break;
        }
    }
    let feet = camera.y - EYE;
    assert!(
        (feet - (top as f32 - 2.0)).abs() < 0.1,
        "stands at {feet}, pit floor {}",
        top - 2.0
    );
}
