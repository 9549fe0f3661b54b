//! # loam-bevy
//!
//! Loam's terrain in a Bevy game: ground you can dig, build and sculpt, streamed and meshed
//! around the camera, with blocks that fall when the ground under them goes, dust and sound,
//! and a world file that keeps every edit.
//!
//! ## From an empty app to digging and saving
//!
//! **1. The plugins.** Add [`LoamPlugins`] next to Bevy's `DefaultPlugins`. They do nothing
//! until the app has a world.
//!
//! **2. A world.** The terrain is a signed-distance field ([`prelude::Field`]) of a
//! generator ([`prelude::Generator`]: fractal noise with caves, or a real heightmap) plus
//! every edit made to it; a [`prelude::World`] meshes it in chunks on worker threads, with
//! coarser levels of detail farther away. Insert it as a [`LoamWorld`], either made in
//! memory (`LoamWorld::new(World::new(field, settings)?)`) or read from a world file with
//! [`WorldFile::open_or_create`], which also inserts the file (step 5).
//!
//! **3. A camera.** Mark the entity the world should be streamed around with
//! [`LoamViewer`] (usually the camera). Lengths are metres and y is up;
//! `Generator::surface_height(x, z)` says where the ground is.
//!
//! **4. Digging.** An edit is an [`prelude::EditOp`]: a sphere, box, capsule, … with a
//! [`prelude::CsgMode`] (`Subtract` digs, `Union` builds). Find where to edit with
//! [`LoamWorld::raycast`] (the field itself, no colliders needed) and apply it with
//! [`LoamWorld::apply`] in a system in [`LoamSet::Edit`]: the chunks it touched are
//! re-meshed and swapped in together, usually within a frame or two; a lump cut loose
//! falls as blocks, with dust and a sound.
//!
//! **5. Saving.** With a [`WorldFile`] in the app, every op is appended to the file at the
//! end of its frame, and the world is baked into it when the app exits; the next
//! [`WorldFile::open_or_create`] of that path opens the world as it was. `loam edit FILE`
//! (the editor) opens the same file.
//!
//! ```no_run
//! use bevy::prelude::*;
//! use loam_bevy::prelude::*;
//!
//! fn main() -> AppExit {
//!     // The terrain: default noise hills with caves, 1 m voxels.
//!     let generator = Generator::noise(&NoiseTerrainSettings::default(), &CaveSettings::default())
//!         .expect("default settings are valid");
//!     let ground = generator.surface_height(0.0, 0.0) as f32;
//!     let field = Field::new(FieldSettings::default(), std::sync::Arc::new(generator))
//!         .expect("default settings are valid");
//!     // The world file: created on the first run, reopened with its edits after.
//!     let opened = WorldFile::open_or_create("my.loam", field, r#"{"kind": "noise"}"#,
//!         WorldSettings::default())
//!         .expect("the world file opens");
//!     let mut app = App::new();
//!     app.add_plugins((DefaultPlugins, LoamPlugins));
//!     opened.insert_into(&mut app)
//!         .add_systems(Startup, move |mut commands: Commands| {
//!             // 20 m above the ground, looking at it.
//!             let eye = Transform::from_xyz(0.0, ground + 20.0, 30.0);
//!             let at = Vec3::new(0.0, ground, 0.0);
//!             commands.spawn((Camera3d::default(), eye.looking_at(at, Vec3::Y), LoamViewer));
//!         })
//!         .add_systems(Update, dig.in_set(LoamSet::Edit))
//!         .run()
//! }
//!
//! /// A left click digs a 3 m ball where the camera looks.
//! fn dig(
//!     mouse: Res<ButtonInput<MouseButton>>,
//!     camera: Query<&GlobalTransform, With<LoamViewer>>,
//!     mut world: ResMut<LoamWorld>,
//! ) {
//!     let Ok(eye) = camera.single() else { return };
//!     if !mouse.just_pressed(MouseButton::Left) {
//!         return;
//!     }
//!     if let Some(hit) = world.raycast(eye.translation(), *eye.forward(), 200.0) {
//!         let op = EditOp::Sphere {
//!             mode: CsgMode::Subtract,
//!             center: hit.position,
//!             radius: 3.0,
//!             material: 0,
//!             blend: 0.0,
//!         };
//!         if let Err(e) = world.apply(None, &op) {
//!             warn!("dig refused: {e}");
//!         }
//!     }
//! }
//! ```
//!
//! The repository's `examples/my_game.rs` is this game (`cargo run --example my_game`).
//!
//! ## Going further
//!
//! - **Other edits.** [`prelude::EditOp`] has shapes (`Sphere`, `Cuboid`, `Capsule`,
//!   `Cylinder`, `Torus`) and brushes (`Raise`, `Lower`, `Smooth`, `Flatten`, `Noise`,
//!   `Paint`); `CsgMode::Union` builds with the op's `material` (0 is the generator's own).
//!   An op out of range (a radius over the field's limit, a non-finite value) is refused by
//!   [`LoamWorld::apply`] with an error and changes nothing.
//! - **Strokes and undo.** Ops applied with the same stroke id
//!   (`LoamWorld::apply(Some(id), …)`, `id` from `world.world.next_stroke()`) undo together;
//!   `EditOp::Undo { stroke }` with `world.world.history().undo_target()` undoes the last
//!   stroke, `EditOp::Redo` redoes it. Undo and redo are ops too, so they reach the file.
//! - **How far and how fine.** `WorldSettings` picks the mesher, the worker threads (0: the
//!   cores minus one) and the view: `view_radius` chunks of 32 voxels at full detail, or with
//!   `lod_levels > 0`, coarser levels out to `view_distance` metres. [`LoamSettings`]
//!   changes the mesher and view distance while the game runs.
//! - **Without a window** (servers, tests): `MinimalPlugins`, `AssetPlugin`,
//!   `TransformPlugin` and `InputPlugin`, with the `Mesh`, `Image` and `StandardMaterial`
//!   assets initialised (`app.init_asset::<Mesh>()`, …), then [`LoamPlugins`]; drive it
//!   with `app.update()`. Meshes are still built, nothing is drawn.
//! - **Saving at other times.** [`WorldFile::save`] bakes now (the editor's Ctrl+S). The
//!   ops themselves reach the file's log at the end of every frame, not only at exit; a
//!   bake makes the next open fast (bricks instead of replaying every op).
//!
//! ## What else is here
//!
//! - [`LoamSettings`]: the upload budget, the level-of-detail cross-fade, and the mesher
//!   and view distance to switch the world to. Insert your own before or after the plugins.
//! - [`LoamSet`]: the stages Loam's systems run in; order your systems against them.
//! - [`LoamWorld::apply`]'s ops of this frame ([`LoamWorld::applied`]), the chunks on
//!   screen ([`ChunkEntity`], [`ChunkEntities`], [`ChunkStats`], [`GroupShown`]).
//! - Blocks ([`LoamBlocks`], [`BlocksPlugin`]), dust ([`DustPlugin`]), sound
//!   ([`SoundPlugin`]), all driven by [`Effect`] messages.
//! - [`scene`]: a sky, sun, fog and projection sized to the view distance.
//! - [`render()`]: a world drawn headless to a PNG (what `loam render` does).
//! - [`editor`]: Loam's editor as a plugin ([`editor::EditorPlugin`]).
#![deny(missing_docs)]

mod audio;
mod blocks;
mod chunks;
mod dust;
pub mod editor;
mod effects;
mod fade;
mod file;
mod look;
mod material;
mod plugin;
mod render;
pub mod scene;
mod settings;
mod tool;
mod walk;
mod world;

pub use audio::{SoundPlugin, SoundRecording, Sounds};
pub use blocks::draw::{BlockDrawing, HeldBlockEntity, PieceEntity};
pub use blocks::{BlocksPlugin, LoamBlocks, persist};
pub use chunks::{
    ChunkEntities, ChunkEntity, ChunkRemoved, ChunkStats, GroupShown, LoamViewer, LodDebugView,
    TerrainMaterial, level_tint,
};
pub use dust::{DustPlugin, DustStats, Particle, Puff};
pub use effects::Effect;
pub use fade::{Fades, Fading};
pub use file::{OpenedWorld, Saved, WorldFile, WorldFileError};
pub use material::TerrainMaterialAsset;
pub use plugin::{LoamPlugin, LoamPlugins, LoamSet};
pub use render::{BlockScene, CameraPose, RenderError, RenderJob, RenderReport, is_png, render};
pub use settings::{DEFAULT_UPLOAD_BUDGET, LoamSettings};
pub use walk::{EYE_HEIGHT_M, Physics, WalkFocus, chunk_of, stop_walking, walk_step};
pub use world::{Applied, LoamWorld};

/// What a game using Loam needs in scope: the plugins, the world and its file, the stages,
/// and from Loam's core crates the types that make a world and edit it.
pub mod prelude {
    pub use crate::{
        LoamPlugin, LoamPlugins, LoamSet, LoamSettings, LoamViewer, LoamWorld, WorldFile,
    };
    pub use loam_field::{
        CaveSettings, CsgMode, EditOp, Field, FieldSettings, Generator, NoiseTerrainSettings,
        RayHit,
    };
    pub use loam_mesh::Mesher;
    pub use loam_world::{World, WorldSettings};
}
