//! # loam-bevy
//!
//! Loam in a Bevy app. [`LoamPlugin`] drives a [`loam_world::World`] each frame around the
//! entities marked [`LoamViewer`] (usually the camera): it follows them, then swaps in the
//! meshes the workers finished within a per-frame upload budget (default 4 ms), all meshes of
//! one batch in the same frame; a chunk keeps its old mesh until its new one arrives, and a
//! chunk that leaves the view is despawned.
//!
//! A game adds the plugin and inserts a [`LoamWorld`]:
//!
//! ```no_run
//! use std::sync::Arc;
//! use bevy::prelude::*;
//! use loam_bevy::{LoamPlugin, LoamViewer, LoamWorld};
//! use loam_field::{CaveSettings, Field, FieldSettings, Generator, NoiseTerrainSettings};
//! use loam_world::{World, WorldSettings};
//!
//! let g = Generator::noise(&NoiseTerrainSettings::default(), &CaveSettings::default()).unwrap();
//! let field = Field::new(FieldSettings::default(), Arc::new(g)).unwrap();
//! let world = World::new(field, WorldSettings::default()).unwrap();
//! App::new()
//!     .add_plugins((DefaultPlugins, LoamPlugin::default()))
//!     .insert_resource(LoamWorld::new(world))
//!     .add_systems(Startup, |mut commands: Commands| {
//!         commands.spawn((Camera3d::default(), Transform::from_xyz(0.0, 40.0, 0.0), LoamViewer));
//!     })
//!     .run();
//! ```
//!
//! The editor ([`editor`]) and the headless renderer ([`render`]) are built on it.
#![deny(missing_docs)]

pub mod audio;
pub mod blocks;
pub mod chunks;
pub mod dust;
pub mod editor;
pub mod effects;
pub mod fade;
pub mod look;
pub mod material;
pub mod render;
pub mod scene;
pub mod tool;
pub mod walk;

use std::time::{Duration, Instant};

use bevy::prelude::*;
pub use chunks::{
    ChunkEntities, ChunkEntity, ChunkRemoved, ChunkStats, GroupShown, LoamViewer, LodDebugView,
    level_tint,
};
use loam_field::{EditError, EditOp, EditOutcome, SampleBox};
use loam_world::World;

/// The default per-frame budget for turning finished chunk meshes into Bevy meshes.
pub const DEFAULT_UPLOAD_BUDGET: Duration = Duration::from_millis(4);

/// The world the plugin drives.
#[derive(Resource)]
pub struct LoamWorld {
    /// The chunk pipeline (field, workers, batches).
    pub world: World,
    /// Per-frame upload budget.
    pub upload_budget: Duration,
    /// When the newest not-yet-shown edit was applied ([`LoamWorld::mark_edit`]).
    pub(crate) edit_marked: Option<Instant>,
    /// Ops applied through [`LoamWorld::apply`] in this frame (blocks look at the ground
    /// again there; dust and sound follow digs).
    applied: Vec<Applied>,
}

/// An op applied through [`LoamWorld::apply`], with what it changed.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// The op.
    pub op: EditOp,
    /// The smallest box of samples it changed (`None`: nothing changed).
    pub changed: Option<SampleBox>,
    /// It removed a loose lump of terrain (not searched for lumps again).
    pub island: bool,
}

impl LoamWorld {
    /// Wraps `world` with the default upload budget.
    pub fn new(world: World) -> Self {
        Self {
            world,
            upload_budget: DEFAULT_UPLOAD_BUDGET,
            edit_marked: None,
            applied: Vec::new(),
        }
    }

    /// Applies `op` in `stroke` (`None`: a stroke of its own), marks the edit for the latency
    /// readout and records it for [`LoamWorld::applied`].
    ///
    /// # Errors
    /// As [`World::apply`]; nothing changes then.
    pub fn apply(&mut self, stroke: Option<u64>, op: &EditOp) -> Result<EditOutcome, EditError> {
        let out = match stroke {
            Some(s) => self.world.apply_in_stroke(s, op)?,
            None => self.world.apply(op)?,
        };
        self.mark_edit();
        self.applied.push(Applied {
            op: op.clone(),
            changed: out.changed,
            island: false,
        });
        Ok(out)
    }

    /// [`LoamWorld::apply`] for an op that removes a loose lump of terrain, in `stroke`.
    ///
    /// # Errors
    /// As [`World::apply`]; nothing changes then.
    pub fn apply_island(&mut self, stroke: u64, op: &EditOp) -> Result<EditOutcome, EditError> {
        let out = self.apply(Some(stroke), op)?;
        if let Some(a) = self.applied.last_mut() {
            a.island = true;
        }
        Ok(out)
    }

    /// The ops applied through [`LoamWorld::apply`] in this frame, oldest first (the plugin
    /// forgets them in `Last`).
    pub fn applied(&self) -> &[Applied] {
        &self.applied
    }

    /// Records that an edit was just applied, so the frame that shows its batch reports the
    /// edit-to-visible latency in [`ChunkStats::last_edit_to_visible_ms`].
    pub fn mark_edit(&mut self) {
        self.edit_marked.get_or_insert_with(Instant::now);
    }
}

/// Where the plugin's systems run, in order, in `Update`: apply edits before
/// [`LoamSet::Follow`] so that an edit's batch forms in the same frame.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LoamSet {
    /// Input and tools that apply ops.
    Edit,
    /// `World::update` around the viewers.
    Follow,
    /// Pull finished meshes and swap them in.
    Upload,
}

/// Drives a [`LoamWorld`] resource: streaming around [`LoamViewer`]s and mesh upload.
#[derive(Debug, Clone, Default)]
pub struct LoamPlugin;

impl Plugin for LoamPlugin {
    fn build(&self, app: &mut App) {
        // The terrain's material renders through its own material pipeline where there is a
        // renderer; without one (tests, servers) it is only an asset.
        if app.get_sub_app(bevy::render::RenderApp).is_some() {
            bevy::asset::embedded_asset!(app, "level_fade.wgsl");
            app.add_plugins(MaterialPlugin::<material::TerrainMaterialAsset>::default());
        } else {
            app.init_asset::<material::TerrainMaterialAsset>();
        }
        app.init_resource::<ChunkEntities>()
            .init_resource::<ChunkStats>()
            .init_resource::<chunks::LodDebugView>()
            .init_resource::<fade::LevelFadeSettings>()
            .init_resource::<fade::Fades>()
            .add_message::<GroupShown>()
            .add_message::<ChunkRemoved>()
            .configure_sets(
                Update,
                (LoamSet::Edit, LoamSet::Follow, LoamSet::Upload).chain(),
            )
            .add_systems(Startup, setup_material)
            .add_systems(
                Update,
                (
                    chunks::follow_viewers.in_set(LoamSet::Follow),
                    chunks::upload_meshes.in_set(LoamSet::Upload),
                    chunks::apply_lod_debug_view.after(LoamSet::Upload),
                    // Before the upload: a fade that ends is wound up (its commands applied)
                    // before a group of this frame can move its chunks into a new fade.
                    fade::advance_fades
                        .after(LoamSet::Follow)
                        .before(chunks::upload_meshes),
                )
                    .run_if(resource_exists::<LoamWorld>),
            )
            // Whoever follows applied ops (blocks, dust, sound) reads them in `Update`.
            .add_systems(
                Last,
                (|mut w: ResMut<LoamWorld>| w.applied.clear()).run_if(resource_exists::<LoamWorld>),
            );
    }
}

fn setup_material(
    mut commands: Commands,
    mut materials: ResMut<Assets<material::TerrainMaterialAsset>>,
) {
    commands.insert_resource(chunks::TerrainMaterial(
        materials.add(material::terrain_material()),
    ));
}
