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
//! Without a light, the terrain shows only the ambient light:
//! [`scene::spawn_lights`]`(&mut commands, scene::view_distance(&settings, voxel_size))`
//! adds the sun, the sky colour and fog sized to the view.
//!
//! ## In your own project
//!
//! Loam is not on crates.io: depend on `loam-bevy` by path or git, next to the Bevy it is
//! built with (Rust 1.95 or later):
//!
//! ```toml
//! [dependencies]
//! bevy = "0.19"
//! loam-bevy = { git = "<this repository>" }   # or { path = "../loam/crates/bevy" }
//! ```
//!
//! Nothing else: Loam's core crates come re-exported ([`loam_field`]: the field, ops,
//! generators and coordinates; [`loam_world`]: the chunk pipeline; [`loam_mesh`]: the
//! meshers; [`loam_store`]: the world file's store), so `loam_bevy::loam_field::Heightmap`
//! is the same type as in a crate depending on `loam-field` itself.
//!
//! ## Going further
//!
//! - **Other edits.** [`prelude::EditOp`] has shapes (`Sphere`, `Cuboid`, `Capsule`,
//!   `Cylinder`, `Torus`) and brushes (`Raise`, `Lower`, `Smooth`, `Flatten`, `Noise`,
//!   `Paint`); `CsgMode::Union` builds with the op's `material` (0 is the generator's own).
//!   An op out of range (a radius over the field's limit, a non-finite value) is refused by
//!   [`LoamWorld::apply`] with an error and changes nothing.
//! - **Strokes and undo.** Each [`LoamWorld::apply`]`(None, op)` is a stroke of its own;
//!   ops applied with one stroke id (`LoamWorld::apply(Some(id), …)`, `id` from
//!   `world.world.next_stroke()` when a drag starts) undo together.
//!   `world.apply(None, &EditOp::Undo { stroke })` with `stroke` from
//!   `world.world.history().undo_target()` undoes the newest stroke not undone yet (so
//!   pressing undo again goes further back), and `EditOp::Redo { stroke }` with
//!   `history().redo_target()` redoes; undo and redo are not strokes themselves. They are
//!   ops, so they reach the file, and the history survives a reopen: a stroke made in an
//!   earlier run can be undone in this one. An undo restores only the samples no newer
//!   stroke still done changed (another player's later dig stays).
//! - **Reading the terrain.** `world.world.field().value_at(p)` is the field at world point
//!   `p`: metres to the surface, negative in solid ([`loam_field::Field::value_at`]);
//!   `field().hash()` ([`prelude::FieldHash`]) names the whole field's samples, for checks.
//! - **Materials.** A build writes the op's `material` ([`prelude::MaterialId`], a `u8`):
//!   0 is the generator's own (grass, soil or rock by slope and depth), 1 stone, 2 sand,
//!   3 clay, 4 snow, 5 moss, 6 slate, 7 ochre; higher ids repeat 1–7. `EditOp::Paint`
//!   recolours without changing the shape.
//! - **Real elevation data.** A [`prelude::GeneratorSpec`] names the terrain as JSON, noise
//!   or a DEM (a 16-bit greyscale PNG or raw `f32` with its JSON sidecar), and builds the
//!   generator; its JSON is the `generator_json` that [`WorldFile::open_or_create`] keeps,
//!   from which `loam edit FILE` rebuilds the same terrain:
//!   ```no_run
//!   # use loam_bevy::prelude::*;
//!   # fn f() -> Result<(), Box<dyn std::error::Error>> {
//!   let spec = GeneratorSpec::from_json(r#"{"kind": "heightmap",
//!       "path": "data/heightmaps/jacksboro_3arcsec.png",
//!       "placement": {"horizontal_scale": 0.1, "vertical_scale": 0.1}}"#)?
//!       .embedded()?; // the DEM travels in the world file
//!   let (generator, _dem_blake3) = spec.build(std::path::Path::new("."))?;
//!   let field = Field::new(FieldSettings::default(), std::sync::Arc::new(generator))?;
//!   let json = spec.to_json();
//!   let opened = WorldFile::open_or_create("dem.loam", field, &json, WorldSettings::default())?;
//!   # Ok(()) }
//!   ```
//!   (`Generator::heightmap` with a [`prelude::Heightmap`] you decoded yourself works too;
//!   the file then keeps whatever text you give it, which `loam edit` cannot rebuild.)
//! - **How far and how fine.** `WorldSettings` picks the mesher, the worker threads (0: the
//!   cores minus one) and the view: `view_radius` chunks of 32 voxels at full detail, or with
//!   `lod_levels > 0`, coarser levels out to `view_distance` metres. [`LoamSettings`]
//!   changes the mesher and view distance while the game runs.
//! - **Without a window** (servers, tests): `MinimalPlugins`, `AssetPlugin`,
//!   `TransformPlugin` and `InputPlugin`, with the `Mesh`, `Image` and `StandardMaterial`
//!   assets initialised (`app.init_asset::<Mesh>()`, …), then [`LoamPlugins`]; drive it
//!   with `app.update()`, and press keys and buttons by writing Bevy's input messages
//!   (`app.world_mut().write_message(MouseButtonInput { … })`, `KeyboardInput { … }`) before
//!   an update. Meshes are still built, nothing is drawn.
//! - **Without sound** (a server, CI, a game with its own audio):
//!   `LoamPlugins.build().disable::<SoundPlugin>()`. [`SoundPlugin`] opens the audio device
//!   on the first sound; where there is none (a headless machine) it plays nothing, though
//!   the system's audio library may print its own complaints.
//! - **Saving at other times.** [`WorldFile::save`] bakes now (the editor's Ctrl+S). The
//!   ops themselves reach the file's log at the end of every frame, not only at exit; a
//!   bake makes the next open fast (bricks instead of replaying every op).
//! - **One open handle per file.** A world file is locked while a [`WorldFile`] (or a
//!   [`loam_store::Store`]) has it open, against other processes and against a second open
//!   in the same process: drop the app (or the store) before opening the file again.
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
mod frame_cost;
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
pub use frame_cost::{FRAMES_KEPT, FrameCost, FrameCostSummary};
pub use material::TerrainMaterialAsset;
pub use plugin::{LoamPlugin, LoamPlugins, LoamSet};
pub use render::{BlockScene, CameraPose, RenderError, RenderJob, RenderReport, is_png, render};
pub use settings::{DEFAULT_UPLOAD_BUDGET, LoamSettings};
pub use walk::{EYE_HEIGHT_M, Physics, WalkFocus, chunk_of, stop_walking, walk_step};
pub use world::{Applied, LoamWorld};

// Loam's core crates, so a game needs only loam-bevy (and bevy) in its Cargo.toml.
pub use loam_field;
pub use loam_mesh;
pub use loam_store;
pub use loam_world;

/// What a game using Loam needs in scope: the plugins, the world and its file, the stages,
/// and from Loam's core crates the types that make a world and edit it.
pub mod prelude {
    pub use crate::{
        LoamPlugin, LoamPlugins, LoamSet, LoamSettings, LoamViewer, LoamWorld, WorldFile,
    };
    pub use loam_field::{
        CaveSettings, CsgMode, EditOp, Field, FieldHash, FieldSettings, Generator, Heightmap,
        HeightmapMeta, HeightmapPlacement, MaterialId, NoiseTerrainSettings, RayHit,
    };
    pub use loam_mesh::Mesher;
    pub use loam_session::GeneratorSpec;
    pub use loam_world::{World, WorldSettings};
}
