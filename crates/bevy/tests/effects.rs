//! Blocks, dust and sound in an app without a renderer: puffs follow their strength and
//! clean up after themselves; a tower on the terrain falls when the ground under it is dug,
//! lands with an impact, and the landing puffs dust and is heard.

mod common;

use std::time::Duration;

use bevy::prelude::*;
use bevy::time::TimeUpdateStrategy;
use common::{cuboid, noise_field_without_caves, pad_ops, run_until};
use loam_bevy::{
    BlocksPlugin, DustPlugin, DustStats, Effect, LoamBlocks, LoamPlugin, LoamViewer, LoamWorld,
    Particle, Physics, Puff, SoundPlugin, SoundRecording, Sounds, chunk_of,
};
use loam_blocks::{BlockOp, BlockPos, BlockSize, MaterialTable};
use loam_field::CsgMode;
use loam_world::{World, WorldSettings};

const FRAME: Duration = Duration::from_millis(50);

fn base_app() -> App {
    let mut app = App::new();
    app.add_plugins((MinimalPlugins, AssetPlugin::default(), TransformPlugin))
        .init_asset::<Mesh>()
        .init_asset::<Image>()
        .init_asset::<StandardMaterial>()
        .insert_resource(TimeUpdateStrategy::ManualDuration(FRAME));
    app
}

fn count<C: Component>(app: &mut App) -> usize {
    app.world_mut().query::<&C>().iter(app.world()).count()
}

#[test]
fn puffs_follow_their_strength_and_leave_nothing_behind() {
    let mut app = base_app();
    app.add_plugins(DustPlugin);
    app.update();
    let before = app.world().entities().count_spawned();
    // A hard landing (strength 1: a tonne at 10 m/s) and a soft one (strength 0).
    for (speed, mass_kg) in [(10.0, 1000.0), (0.0, 1.0)] {
        let _ = app.world_mut().write_message(Effect::Land {
            at: Vec3::new(0.0, 5.0, 0.0),
            speed,
            mass_kg,
            colour: [0.6, 0.2, 0.1],
        });
    }
    app.update();
    assert_eq!(count::<Puff>(&mut app), 2);
    assert_eq!(count::<Particle>(&mut app), 64 + 8);
    assert_eq!(app.world().resource::<DustStats>().puffs, 2);
    // Particles rise first, then sink under the weak gravity.
    let heights = |app: &mut App| {
        let mut q = app.world_mut().query::<(&Transform, &Particle)>();
        let v: Vec<f32> = q.iter(app.world()).map(|(t, _)| t.translation.y).collect();
        v.iter().sum::<f32>() / v.len() as f32
    };
    let h0 = heights(&mut app);
    for _ in 0..4 {
        app.update();
    }
    let h1 = heights(&mut app);
    assert!(h1 > h0, "dust rises at first ({h0} → {h1})");
    // The soft puff (0.6 s) is gone after 0.8 s, the hard one (2.4 s) still there.
    for _ in 0..12 {
        app.update();
    }
    assert_eq!(count::<Puff>(&mut app), 1);
    assert_eq!(count::<Particle>(&mut app), 64);
    // After 2.5 s nothing is left.
    for _ in 0..40 {
        app.update();
    }
    assert_eq!(count::<Puff>(&mut app), 0);
    assert_eq!(app.world().entities().count_spawned(), before);
}

#[test]
fn a_tower_falls_when_the_ground_under_it_is_dug_and_lands_with_dust_and_sound() {
    let field = noise_field_without_caves();
    let h = field.generator().surface_height(0.5, 0.5);
    let top = h.round();
    let settings = WorldSettings {
        view_radius: 2,
        view_depth: 1,
        threads: 2,
        ..Default::default()
    };
    let mut app = base_app();
    app.add_plugins((LoamPlugin, BlocksPlugin, DustPlugin, SoundPlugin))
        .insert_resource(SoundRecording::new())
        .insert_resource(LoamWorld::new(World::new(field, settings).unwrap()));
    app.world_mut().spawn((
        Transform::from_xyz(0.0, top as f32 + 6.0, 12.0),
        GlobalTransform::from_xyz(0.0, top as f32 + 6.0, 12.0),
        Camera3d::default(),
        LoamViewer,
    ));
    // A flat pad whose top is at `top`, clear air above it.
    {
        let mut w = app.world_mut().resource_mut::<LoamWorld>();
        for op in &pad_ops(top) {
            w.apply(None, op).unwrap();
        }
    }
    // A tower of three stone blocks on it.
    {
        let world = app.world_mut();
        world.resource_scope(|world, mut blocks: Mut<LoamBlocks>| {
            world.resource_scope(|world, mut physics: Mut<Physics>| {
                let mut lw = world.resource_mut::<LoamWorld>();
                for dy in 0..3 {
                    let at = BlockPos::new(BlockSize::Full, [0, top as i32 + dy, 0]).unwrap();
                    let op = BlockOp::Place {
                        at,
                        material: MaterialTable::STONE,
                        shape: Default::default(),
                        paint: None,
                    };
                    blocks.apply(&mut physics, &mut lw.world, &op).unwrap();
                }
            });
        });
    }
    let key = chunk_of(Vec3::new(0.5, top as f32, 0.5), 1.0);
    let ready = run_until(&mut app, 60, |app| {
        let w = &app.world().resource::<LoamWorld>().world;
        w.waiting() == 0
            && w.pending_batches() == 0
            && app.world().resource::<Physics>().ready_around(key)
    });
    assert!(ready, "the terrain colliders never came");
    assert_eq!(app.world().resource::<LoamBlocks>().world.store().len(), 3);
    assert_eq!(
        app.world().resource::<LoamBlocks>().world.pieces().count(),
        0
    );
    let knocks = app.world().resource::<Sounds>().started;
    assert_eq!(
        knocks, 5,
        "a dig sound for each of the pad's ops, a knock per block"
    );

    // Dig a pit 3 m deep under the tower.
    app.world_mut()
        .resource_mut::<LoamWorld>()
        .apply(
            None,
            &cuboid(CsgMode::Subtract, [0.5, top - 1.5, 0.5], [3.0, 1.5, 3.0]),
        )
        .unwrap();
    app.update();
    let blocks = &app.world().resource::<LoamBlocks>().world;
    assert_eq!(blocks.store().len(), 0, "the tower lost its ground");
    assert_eq!(blocks.pieces().count(), 1, "it falls as one piece");

    // It lands on the pit floor, 3 m down, with a thud and a puff of dust.
    let mut frame = 0;
    let landed = run_until(&mut app, 60, |app| {
        frame += 1;
        let b = &app.world().resource::<LoamBlocks>().world;
        if std::env::var_os("LOAM_DEBUG").is_some() {
            let p = b.pieces().next().unwrap();
            let w = &app.world().resource::<LoamWorld>().world;
            eprintln!(
                "frame {frame}: y {:.3} v {:?} {:?} waiting {} pending {} building {} stale {} colliders {}",
                p.pose.position[1],
                p.velocity,
                p.state,
                w.waiting(),
                w.pending_batches(),
                app.world().resource::<Physics>().building(),
                app.world().resource::<Physics>().colliders.stale(),
                app.world().resource::<Physics>().colliders(),
            );
        }
        // A piece asleep on the old surface wakes when its chunk's new collider arrives:
        // rest counts once no collider is stale or being built and the piece's body sleeps.
        let ph = app.world().resource::<Physics>();
        frame > 20
            && ph.building() == 0
            && !ph.colliders.stale()
            && b.pieces().all(|p| {
                matches!(p.state, loam_blocks::PieceState::Rubble { .. })
                    && b.piece_body(p.id)
                        .and_then(|body| ph.world.body_sleeping(body))
                        == Some(true)
            })
    });
    assert!(landed, "the piece never came to rest");
    let piece = app
        .world()
        .resource::<LoamBlocks>()
        .world
        .pieces()
        .next()
        .unwrap()
        .clone();
    let fell = top - f64::from(piece.pose.position[1]);
    assert!((2.0..4.5).contains(&fell), "fell {fell:.2} m");
    let puffs = app.world().resource::<DustStats>().puffs;
    // The pad's two ops, the pit and at least one landing.
    assert!(puffs >= 4, "{puffs} puffs");
    let sounds = app.world().resource::<Sounds>().started;
    assert!(sounds >= knocks + 2, "{sounds} sounds");
    let rec = app.world().resource::<SoundRecording>();
    let frames = rec.mixer.render(rec.mixer.end_frame());
    let energy: f64 = frames
        .iter()
        .map(|f| f64::from(f[0] * f[0] + f[1] * f[1]))
        .sum();
    assert!(energy > 1.0, "the recording is silent ({energy})");
}
