//! A game using Loam: noise terrain, a camera above it, a left click that digs where the
//! camera looks, and a world file (`my_game.loam`) that keeps the digs: run it again and
//! they are still there (`loam edit my_game.loam` opens it too).
//!
//! `cargo run --example my_game`; with `-- --headless` it runs without a window, clicks
//! once, exits, and checks that the file holds the dig (CI runs this). (After
//! `cargo test --workspace`, `cargo build --workspace --example my_game` reuses that build,
//! where `cargo run` picks loam-bevy's own feature set and builds Bevy again; the binary is
//! then `target/debug/examples/my_game`.)

use std::sync::Arc;

use bevy::prelude::*;
use loam_bevy::prelude::*;

const FILE: &str = "my_game.loam";
/// How `loam edit` rebuilds the terrain: the `generator` of a Loam session.
const GENERATOR: &str = r#"{"kind": "noise"}"#;

fn main() -> AppExit {
    let (field, ground) = terrain();
    let opened =
        WorldFile::open_or_create(FILE, field, GENERATOR, default()).expect("the world file opens");
    let headless = std::env::args().any(|a| a == "--headless");
    let mut app = App::new();
    match headless {
        true => headless::plugins(&mut app),
        false => app.add_plugins(DefaultPlugins),
    }
    .add_plugins(LoamPlugins);
    opened
        .insert_into(&mut app)
        .add_systems(Update, dig.in_set(LoamSet::Edit))
        .add_systems(Startup, move |mut commands: Commands| {
            let eye = Transform::from_xyz(0.0, ground + 20.0, 30.0);
            let at = Vec3::new(0.0, ground, 0.0);
            commands.spawn((Camera3d::default(), eye.looking_at(at, Vec3::Y), LoamViewer));
        });
    if headless {
        headless::check(app)
    } else {
        app.run()
    }
}

/// The terrain: noise hills with caves, 1 m voxels; and the ground's height at the origin.
fn terrain() -> (Field, f32) {
    let generator = Generator::noise(&default(), &default()).expect("valid settings");
    let ground = generator.surface_height(0.0, 0.0) as f32;
    let field = Field::new(FieldSettings::default(), Arc::new(generator));
    (field.expect("valid settings"), ground)
}

/// A left click digs a 3 m ball where the camera looks (the screen's centre).
fn dig(
    mouse: Res<ButtonInput<MouseButton>>,
    camera: Single<&GlobalTransform, With<LoamViewer>>,
    mut world: ResMut<LoamWorld>,
) {
    if mouse.just_pressed(MouseButton::Left)
        && let Some(hit) = world.raycast(camera.translation(), *camera.forward(), 200.0)
    {
        let op = EditOp::Sphere {
            mode: CsgMode::Subtract,
            center: hit.position,
            radius: 3.0,
            material: 0,
            blend: 0.0,
        };
        if let Err(e) = world.apply(None, &op) {
            warn!("dig refused: {e}");
        }
    }
}

/// The check without a window (not part of the game): Bevy's minimal plugins, a simulated
/// click, an exit, and the world file read back.
mod headless {
    use bevy::input::{ButtonState, InputPlugin, mouse::MouseButtonInput};
    use bevy::prelude::*;
    use loam_bevy::prelude::*;

    use super::{FILE, GENERATOR, terrain};

    /// What `DefaultPlugins` gives the game that it uses, without a window or a renderer.
    pub fn plugins(app: &mut App) -> &mut App {
        app.add_plugins((
            MinimalPlugins,
            AssetPlugin::default(),
            TransformPlugin,
            InputPlugin,
        ))
        .init_asset::<Mesh>()
        .init_asset::<Image>()
        .init_asset::<StandardMaterial>()
    }

    /// Runs a few frames, clicks once, exits (which saves), then checks that the file's log
    /// holds one more op, the dig, and that the world reopens as it was left.
    pub fn check(mut app: App) -> AppExit {
        let before = app
            .world()
            .resource::<WorldFile>()
            .last_seq()
            .expect("the file");
        for frame in 0..8 {
            if frame == 4 {
                app.world_mut().write_message(MouseButtonInput {
                    button: MouseButton::Left,
                    state: ButtonState::Pressed,
                    window: Entity::PLACEHOLDER,
                });
            }
            app.update();
        }
        app.world_mut().write_message(AppExit::Success);
        app.update();
        let live = app.world().resource::<LoamWorld>().world.field().hash();
        drop(app);
        // A world file has one open handle at a time, in this process too: the app (which
        // held it) is gone, and the store is dropped before the file is opened again.
        let store =
            loam_bevy::loam_store::Store::open_read_only(FILE.as_ref()).expect("the file reopens");
        let ops = store.ops_after(before).expect("the file's log");
        let dug = matches!(ops.as_slice(),
            [e] if matches!(e.op, EditOp::Sphere { mode: CsgMode::Subtract, .. }));
        drop(store);
        let reopened = WorldFile::open_or_create(FILE, terrain().0, GENERATOR, default())
            .expect("the world file reopens");
        let same = reopened.world.world.field().hash() == live;
        println!(
            "my_game: {} op(s) after op {before}, a dig: {dug}; reopened as left: {same}",
            ops.len()
        );
        if dug && same {
            AppExit::Success
        } else {
            AppExit::error()
        }
    }
}
