//! The editor: a window on a world where a person flies (or walks) around and digs, builds and
//! sculpts, every edit showing at once.
//!
//! Controls: a click captures the mouse, Esc releases it. WASD moves, Q/E down/up, Shift is
//! faster. While captured, the left button applies the brush (dig, raise, …) and the right
//! button its opposite (build, lower, …); holding repeats every 120 ms at the new hit point.
//! The wheel sizes the tool (1.5–8 m in half-metre steps). M switches mesher, F toggles
//! fly/walk, Ctrl+Z / Ctrl+Y undo/redo the last terrain stroke or block edit, in the order
//! they were made ([`Journal`]; joined to a server: this player's own), Ctrl+S saves,
//! Ctrl+Q saves and quits (closing the window saves too). Every op reaches the world file's
//! log at the end of its frame; a save also keeps the blocks' poses exactly
//! ([`crate::persist`]). T cycles the tool between terrain, blocks and chisel
//! ([`ToolKind`]); blocks fall when their support goes, with dust and sound.
//!
//! [`EditorPlugin`] is the editor in an app; [`run`] opens one in a window.

mod block_tool;
mod input;
mod players;
mod quality;
mod remote;
mod sink;
mod ui;
mod undo;

pub use quality::{RenderQuality, SOFTWARE_VIEW_M};

pub use crate::tool::{Brush, MAX_RADIUS, MIN_RADIUS, RADIUS_STEP, ToolSettings};
pub use block_tool::{BlockAim, BlockTool, ToolKind};
pub use loam_protocol::{Aim, Player};
pub use loam_session::Step;
pub use players::{BODY_RADIUS_M, PlayerMarker, show_players};
pub use remote::{FieldUpdate, Remote, RemoteCommand, RemoteLink, RemoteStatus, RemoteUpdate};
pub use undo::Journal;

use bevy::diagnostic::FrameTimeDiagnosticsPlugin;
use bevy::prelude::*;
use bevy::window::{CursorGrabMode, CursorOptions, PrimaryWindow};
use bevy_egui::{EguiPlugin, EguiPrimaryContextPass};
use loam_field::{EditOp, RayHit};
use loam_store::Store;
use loam_world::{StrokeClock, World};

use crate::blocks::LoamBlocks;
use crate::blocks::persist::Restored;
use crate::render::CameraPose;
use crate::walk::Physics;
use crate::{
    LoamPlugin, LoamPlugins, LoamSet, LoamSettings, LoamViewer, LoamWorld, WorldFile, scene,
};

/// How far the tool reaches from the camera, metres.
pub const TOOL_REACH_M: f64 = 120.0;

/// What [`run`] opens.
pub struct EditorOptions {
    /// The world (with its history if it was loaded).
    pub world: World,
    /// The world file ops are appended to as they happen and that Ctrl+S (and closing the
    /// editor) bakes ([`WorldFile`]); `None` edits in memory only.
    pub store: Option<Store>,
    /// The world file's blocks ([`crate::persist::load`]); `None` starts with no blocks.
    pub blocks: Option<Restored>,
    /// A server to edit on ([`Remote`]), with its address: terrain ops go there, and the
    /// world shows the field the link reports. `store` should be `None` then.
    pub remote: Option<(RemoteLink, String)>,
    /// Where the camera starts.
    pub camera: CameraPose,
    /// Window title.
    pub title: String,
    /// Window size in pixels.
    pub size: [u32; 2],
    /// Seconds a level-of-detail change cross-fades ([`LoamSettings::lod_fade_s`]); 0 swaps
    /// at once.
    pub lod_fade_s: f32,
    /// The world's view distance was chosen (`loam edit --view-distance`): a software
    /// renderer keeps it ([`RenderQuality::keep_view`]).
    pub keep_view: bool,
    /// Print the seams' open edges whenever the view is complete with a new mesher
    /// ([`crate::chunks::SeamCheck`]).
    pub check_seams: bool,
    /// In a browser (wasm32): the CSS selector of the page's `<canvas>` the editor draws
    /// into, sized to its parent element (`size` is then only the first size); `None` opens
    /// a window of `size`.
    pub canvas: Option<String>,
}

/// Fly or walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MoveMode {
    /// Free flight.
    #[default]
    Fly,
    /// A capsule character on the terrain.
    Walk,
}

/// The editor's tool: what the buttons do, and where they act.
#[derive(Resource, Debug, Default)]
pub struct EditorTool {
    /// Terrain, blocks or chisel (T cycles).
    pub kind: ToolKind,
    /// The terrain brush: shape, radius, strength, material.
    pub terrain: ToolSettings,
    /// Block size and material.
    pub block: BlockTool,
    /// The held button's stroke: its clock and whether it is the left (primary) button.
    pub stroke: Option<(StrokeClock, bool)>,
    /// Where the tool points: the field raycast from the screen centre.
    pub aim: Option<RayHit>,
    /// What the block tools aim at: the nearest of terrain and blocks.
    pub block_aim: Option<BlockAim>,
    /// The click that captured the mouse is still held: it does not edit.
    pub(crate) capture_click: bool,
}

/// The editor's camera rig: how the [`EditorCamera`] moves.
#[derive(Resource, Debug, Clone, Copy, PartialEq)]
pub struct CameraRig {
    /// Fly or walk (F toggles).
    pub mode: MoveMode,
    /// Fly speed, metres per second (Shift: ×4).
    pub fly_speed: f32,
    /// Yaw and pitch of the camera, radians.
    pub look: Vec2,
}

impl CameraRig {
    /// Flying at 12 m/s, looking as `pose` does.
    pub fn at(pose: &CameraPose) -> Self {
        let (yaw, pitch, _) = pose.transform().rotation.to_euler(EulerRot::YXZ);
        Self {
            mode: MoveMode::Fly,
            fly_speed: 12.0,
            look: Vec2::new(yaw, pitch),
        }
    }
}

/// What the editor's status line (the HUD) says.
#[derive(Resource, Debug, Clone, Default, PartialEq, Eq)]
pub struct EditorStatus {
    /// The last message (saved, errors); empty at first.
    pub message: String,
    /// Ops applied (or sent) since start.
    pub ops: u64,
}

/// The camera the editor drives.
#[derive(Component, Debug, Clone, Copy, Default)]
pub struct EditorCamera;

/// The translucent sphere that shows where and how big the tool is.
#[derive(Component, Debug, Clone, Copy, Default)]
pub struct ToolMarker;

/// The editor on the app's [`LoamWorld`]: a camera that flies or walks, the terrain, block
/// and chisel tools with undo and redo, the HUD and palettes (egui). Its state is split by
/// concern into [`EditorTool`], [`CameraRig`], [`EditorStatus`] and the undo [`Journal`];
/// a [`WorldFile`] in the app is saved to (Ctrl+S, and at exit), a [`Remote`] makes it edit
/// on a server.
///
/// It adds [`LoamPlugins`] and egui's plugin if the app has not; the app needs a window and
/// a [`LoamWorld`] inserted before it runs. [`run`] builds such an app.
#[derive(Debug, Clone, Copy)]
pub struct EditorPlugin {
    /// Where the camera starts.
    pub camera: CameraPose,
}

impl Plugin for EditorPlugin {
    fn build(&self, app: &mut App) {
        if !app.is_plugin_added::<LoamPlugin>() {
            app.add_plugins(LoamPlugins);
        }
        if !app.is_plugin_added::<EguiPlugin>() {
            app.add_plugins(EguiPlugin::default());
        }
        if !app.is_plugin_added::<FrameTimeDiagnosticsPlugin>() {
            app.add_plugins(FrameTimeDiagnosticsPlugin::default());
        }
        let pose = self.camera.transform();
        app.init_resource::<EditorTool>()
            .init_resource::<EditorStatus>()
            .init_resource::<Journal>()
            .init_resource::<RenderQuality>()
            .insert_resource(CameraRig::at(&self.camera))
            .init_resource::<Physics>()
            .add_systems(
                Startup,
                move |mut commands: Commands,
                      mut meshes: ResMut<Assets<Mesh>>,
                      mut materials: ResMut<Assets<StandardMaterial>>,
                      world: Res<LoamWorld>| {
                    let w = &world.world;
                    let view = scene::view_distance(w.settings(), w.field().settings().voxel_size);
                    scene::spawn_lights(&mut commands, view);
                    scene::spawn_sky(&mut commands, &mut meshes, &mut materials, view);
                    commands.spawn((
                        Camera3d::default(),
                        scene::projection(view),
                        pose,
                        scene::fog(view),
                        LoamViewer,
                        EditorCamera,
                    ));
                    commands.spawn((
                        Mesh3d(meshes.add(Sphere::new(1.0).mesh().ico(3).expect("an ico sphere"))),
                        MeshMaterial3d(materials.add(StandardMaterial {
                            base_color: Color::srgba(1.0, 0.85, 0.3, 0.25),
                            alpha_mode: AlphaMode::Blend,
                            unlit: true,
                            ..Default::default()
                        })),
                        Transform::default(),
                        Visibility::Hidden,
                        ToolMarker,
                    ));
                },
            )
            .add_systems(
                Update,
                (
                    input::grab_cursor,
                    input::keys,
                    input::move_camera,
                    input::aim,
                    input::apply_tool,
                    input::apply_block_tool,
                    remote::sync,
                )
                    .chain()
                    .in_set(LoamSet::Edit),
            )
            .add_systems(
                Update,
                (
                    input::place_marker,
                    players::show_players,
                    scene::follow_view_distance,
                )
                    .after(LoamSet::Upload),
            )
            // Every op applied this frame reaches the world file before the next frame
            // ([`LoamSet::Save`]); closing the editor saves.
            .add_systems(Last, (show_file_error, unsent_on_exit).after(LoamSet::Save))
            .add_systems(PostUpdate, scene::follow_sky)
            .add_systems(
                Update,
                (quality::adapt_to_adapter, quality::apply_shadows)
                    .chain()
                    .before(LoamSet::Follow),
            )
            .add_systems(EguiPrimaryContextPass, ui::panels);
    }
}

/// Opens the editor window on `options` and runs until it is closed: [`app`], run. In a
/// browser this returns at once; the page's event loop runs the app.
pub fn run(options: EditorOptions) -> AppExit {
    app(options).run()
}

/// The editor's app on `options`: Bevy's default plugins with the window (or the page's
/// canvas), sound through [`crate::SoundPlugin`], [`LoamPlugins`] and the
/// [`EditorPlugin`], and the world, its file, blocks and connection as resources.
pub fn app(options: EditorOptions) -> App {
    let EditorOptions {
        world,
        store,
        blocks,
        remote,
        camera,
        title,
        size,
        lod_fade_s,
        keep_view,
        check_seams,
        canvas,
    } = options;
    let mut app = App::new();
    app.add_plugins(
        DefaultPlugins
            .set(WindowPlugin {
                primary_window: Some(Window {
                    title,
                    resolution: size.into(),
                    fit_canvas_to_parent: canvas.is_some(),
                    // The page keeps its own keys (reload, the developer tools); the editor's
                    // (Ctrl+Z, Ctrl+S, Tab) reach it only while the canvas has the focus.
                    prevent_default_event_handling: canvas.is_some(),
                    canvas,
                    ..Default::default()
                }),
                ..Default::default()
            })
            // Sound goes through `SoundPlugin`, which opens the device on the first sound.
            .disable::<bevy::audio::AudioPlugin>(),
    )
    .add_plugins((LoamPlugins, EditorPlugin { camera }))
    .insert_resource(RenderQuality {
        keep_view,
        ..Default::default()
    })
    .insert_resource(LoamWorld::new(world))
    .insert_resource(LoamSettings {
        lod_fade_s,
        ..Default::default()
    });
    let journaling = store.is_some();
    if let Some(store) = store {
        // The undo order of the edits made before the world was opened: its file's log.
        let earlier = Journal::from_store(&store).unwrap_or_else(|e| {
            warn!("the world's earlier edits cannot be undone: reading its op log failed: {e}");
            Journal::default()
        });
        app.insert_resource(earlier);
        app.insert_resource(WorldFile::new(store));
    }
    match blocks {
        Some(r) => {
            app.insert_resource(r.blocks).insert_resource(r.physics);
        }
        None => {
            app.insert_resource(LoamBlocks::new());
        }
    }
    app.world_mut().resource_mut::<LoamBlocks>().journaling = journaling;
    if check_seams {
        app.insert_resource(crate::chunks::SeamCheck::default())
            .add_systems(Update, crate::chunks::check_seams.after(LoamSet::Upload));
    }
    if let Some((link, url)) = remote {
        app.insert_resource(Remote::new(link, url));
        // The server's blocks come as deltas; nothing is decided here.
        app.world_mut().resource_mut::<LoamBlocks>().replica = true;
    }
    app
}

/// Whether the primary window has the mouse captured.
pub(crate) fn captured(cursor: &Query<&CursorOptions, With<PrimaryWindow>>) -> bool {
    cursor
        .single()
        .is_ok_and(|c| c.grab_mode != CursorGrabMode::None)
}

/// Applies `op` to the world in stroke `stroke` (`None`: a stroke of its own) and marks the
/// edit for the latency readout (the plugin appends it to the world file at the end of the
/// frame, [`LoamSet::Save`]).
pub(crate) fn apply(
    status: &mut EditorStatus,
    world: &mut LoamWorld,
    stroke: Option<u64>,
    op: &EditOp,
) -> bool {
    match world.apply(stroke, op) {
        Ok(out) => {
            debug!(
                "op {} applied: {} samples changed",
                op.kind(),
                out.samples_changed
            );
            status.ops += 1;
            true
        }
        Err(e) => {
            status.message = format!("op rejected: {e}");
            false
        }
    }
}

/// Shows on the status line why this frame's ops could not be appended to the world file.
fn show_file_error(file: Option<ResMut<WorldFile>>, mut status: ResMut<EditorStatus>) {
    if let Some(e) = file.and_then(|mut f| f.take_error()) {
        status.message = format!("could not save the op: {e}");
    }
}

/// Joined and offline when the app exits: says how many edits were never sent (nothing can
/// keep them: the server holds the world). (The world file, if any, is saved by
/// [`crate::LoamPlugin`].)
fn unsent_on_exit(mut exits: MessageReader<AppExit>, remote: Option<Res<Remote>>) {
    if exits.read().count() == 0 {
        return;
    }
    if let Some(r) = &remote
        && !r.status.connected
        && r.status.pending > 0
    {
        warn!(
            "{} edits made while the server was away were never sent: the editor closed \
             before it came back",
            r.status.pending
        );
    }
}
