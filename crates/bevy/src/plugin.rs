//! [`LoamPlugin`], the [`LoamPlugins`] group and the [`LoamSet`] stages their systems run in.

use bevy::app::PluginGroupBuilder;
use bevy::prelude::*;

use crate::audio::SoundPlugin;
use crate::blocks::BlocksPlugin;
use crate::chunks::{self, ChunkEntities, ChunkRemoved, ChunkStats, GroupShown};
use crate::dust::DustPlugin;
use crate::settings::{self, LoamSettings};
use crate::world::LoamWorld;
use crate::{fade, file, material};

/// The stages of a frame that Loam's systems run in, in this order within each schedule
/// (the `Update` stages are `.chain()`ed). Put a game's own systems that apply ops in
/// [`LoamSet::Edit`], so that the edit shows in the same frame's batch.
#[derive(SystemSet, Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LoamSet {
    /// In `Update`: input and tools that apply ops ([`LoamWorld::apply`]): the editor's
    /// tools, a headless render's script, a game's digging.
    Edit,
    /// In `Update`, after [`LoamSet::Edit`]: what this frame's ops set off before the world
    /// updates: a dig that cut a lump of terrain loose removes it in the same batch, and it
    /// falls as blocks ([`crate::BlocksPlugin`]).
    Loosen,
    /// In `Update`: [`LoamSettings`] reach the world, then `World::update` around the
    /// [`crate::LoamViewer`]s (streaming, levels of detail, this frame's edits' batch).
    Follow,
    /// In `Update`: finished chunk meshes swapped in within
    /// [`LoamSettings::upload_budget`], all meshes of one batch in the same frame.
    Upload,
    /// In `Update`, after the meshes: terrain colliders from the field near the walker and
    /// the blocks, the blocks' physics step, the blocks drawn ([`crate::BlocksPlugin`]).
    Physics,
    /// In `Last`: this frame's ops appended to the [`crate::WorldFile`], and when the app
    /// exits, the world baked into it.
    Save,
}

/// Drives a [`LoamWorld`] resource: streaming around [`crate::LoamViewer`]s and mesh upload,
/// with the [`LoamSettings`] (added with `init_resource`: a value inserted before stays), and
/// a [`crate::WorldFile`] if the app has one. Its systems wait until a [`LoamWorld`] is
/// inserted.
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
        crate::frame_cost::add_to(app);
        app.init_resource::<LoamSettings>()
            .init_resource::<ChunkEntities>()
            .init_resource::<ChunkStats>()
            .init_resource::<chunks::LodDebugView>()
            .init_resource::<fade::Fades>()
            .add_message::<GroupShown>()
            .add_message::<ChunkRemoved>()
            .configure_sets(
                Update,
                (
                    LoamSet::Edit,
                    LoamSet::Loosen,
                    LoamSet::Follow,
                    LoamSet::Upload,
                    LoamSet::Physics,
                )
                    .chain(),
            )
            .configure_sets(Last, LoamSet::Save)
            .add_systems(Startup, setup_material)
            .add_systems(
                Update,
                (
                    (settings::apply_settings, chunks::follow_viewers)
                        .chain()
                        .in_set(LoamSet::Follow),
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
            .add_systems(
                Last,
                (file::write_ops, file::save_on_exit)
                    .chain()
                    .in_set(LoamSet::Save)
                    .run_if(resource_exists::<LoamWorld>)
                    .run_if(resource_exists::<file::WorldFile>),
            )
            // Whoever follows applied ops (blocks, dust, sound) reads them in `Update`.
            .add_systems(
                Last,
                (|mut w: ResMut<LoamWorld>| w.clear_applied()).run_if(resource_exists::<LoamWorld>),
            );
    }
}

/// Everything Loam adds to a game: the terrain ([`LoamPlugin`]), blocks that fall when the
/// ground under them goes ([`BlocksPlugin`]), dust ([`DustPlugin`]) and sound
/// ([`SoundPlugin`]) where terrain is dug and blocks land. Add it with Bevy's
/// `DefaultPlugins` (or, without a window, `MinimalPlugins` with assets, transforms and
/// input), then insert a [`LoamWorld`].
#[derive(Debug, Clone, Copy, Default)]
pub struct LoamPlugins;

impl PluginGroup for LoamPlugins {
    fn build(self) -> PluginGroupBuilder {
        PluginGroupBuilder::start::<Self>()
            .add(LoamPlugin)
            .add(BlocksPlugin)
            .add(DustPlugin)
            .add(SoundPlugin)
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
