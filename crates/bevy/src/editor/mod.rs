//! The editor: a window on a world where a person flies (or walks) around and digs, builds and
//! sculpts, every edit showing at once.
//!
//! Controls: a click captures the mouse, Esc releases it. WASD moves, Q/E down/up, Shift is
//! faster. While captured, the left button applies the brush (dig, raise, …) and the right
//! button its opposite (build, lower, …); holding repeats every 120 ms at the new hit point.
//! The wheel sizes the tool (1.5–8 m in half-metre steps). M switches mesher, F toggles
//! fly/walk, Ctrl+Z / Ctrl+Y undo/redo the last terrain stroke or block edit, in the order
//! they were made ([`undo`]; joined to a server: this player's own), Ctrl+S saves, Ctrl+Q saves and quits (closing the
//! window saves too). Every op reaches the world file's log at the end of its frame; a save
//! also keeps the blocks' poses exactly ([`crate::blocks::persist`]). T cycles the tool between terrain,
//! blocks and chisel ([`block_tool`]); blocks fall when their support goes, with dust and
//! sound.

pub mod block_tool;
mod input;
pub mod players;
pub mod remote;
mod ui;
pub mod undo;

use std::sync::Mutex;

use bevy::prelude::*;
use bevy::window::{CursorGrabMode, CursorOptions, PrimaryWindow};
use bevy_egui::{EguiPlugin, EguiPrimaryContextPass};
use loam_field::{EditOp, RayHit};
use loam_mesh::Mesher;
use loam_store::Store;
use loam_world::{StrokeClock, World};

use crate::audio::SoundPlugin;
use crate::blocks::persist::{self, Restored};
use crate::blocks::{BlocksPlugin, EditTools, LoamBlocks};
use crate::dust::DustPlugin;
use crate::render::CameraPose;
use crate::tool::ToolSettings;
use crate::walk::Physics;
use crate::{LoamPlugin, LoamSet, LoamViewer, LoamWorld, scene};
use block_tool::{BlockAim, BlockTool, ToolKind};
use remote::{Remote, RemoteLink};

/// How far the tool reaches from the camera, metres.
pub const TOOL_REACH_M: f64 = 120.0;

/// What the editor opens.
pub struct EditorOptions {
    /// The world (with its history if it was loaded).
    pub world: World,
    /// The world file ops are appended to as they happen and that Ctrl+S (and closing the
    /// editor) bakes; `None` edits in memory only.
    pub store: Option<Store>,
    /// The world file's blocks ([`persist::load`]); `None` starts with no blocks.
    pub blocks: Option<Restored>,
    /// A server to edit on ([`remote`]), with its address: terrain ops go there, and the
    /// world shows the field the link reports. `store` should be `None` then.
    pub remote: Option<(RemoteLink, String)>,
    /// Where the camera starts.
    pub camera: CameraPose,
    /// Window title.
    pub title: String,
    /// Window size in pixels.
    pub size: [u32; 2],
    /// Seconds a level-of-detail change cross-fades ([`crate::fade`]); 0 swaps at once.
    pub lod_fade_s: f32,
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

/// The editor's state.
#[derive(Resource)]
pub struct Editor {
    /// Brush, radius, strength, material.
    pub tool: ToolSettings,
    /// Fly or walk.
    pub mode: MoveMode,
    /// The mesher the world uses.
    pub mesher: Mesher,
    /// The held button's stroke: its clock and whether it is the left (primary) button.
    pub stroke: Option<(StrokeClock, bool)>,
    /// Where the tool points: the field raycast from the screen centre.
    pub aim: Option<RayHit>,
    /// The world file (behind a mutex: a resource must be `Sync`, an SQLite connection is not).
    pub store: Option<Mutex<Store>>,
    /// The last message for the status line (saved, errors).
    pub status: String,
    /// Fly speed, metres per second (Shift: ×4).
    pub fly_speed: f32,
    /// Yaw and pitch of the camera, radians.
    pub look: Vec2,
    /// Ops applied since start.
    pub ops: u64,
    /// The click that captured the mouse is still held: it does not edit.
    pub(crate) capture_click: bool,
    /// Terrain, blocks or chisel.
    pub kind: ToolKind,
    /// Block size and material.
    pub block_tool: BlockTool,
    /// What the block tools aim at: the nearest of terrain and blocks.
    pub block_aim: Option<BlockAim>,
    /// Terrain strokes and block edits in one undo order ([`undo`]).
    pub journal: undo::Journal,
}

/// The camera the editor drives.
#[derive(Component, Debug, Clone, Copy, Default)]
pub struct EditorCamera;

/// The translucent sphere that shows where and how big the tool is.
#[derive(Component, Debug, Clone, Copy, Default)]
pub struct ToolMarker;

/// Opens the editor window and runs until it is closed.
pub fn run(options: EditorOptions) -> AppExit {
    let mut app = App::new();
    let EditorOptions {
        world,
        store,
        blocks,
        remote,
        camera,
        title,
        size,
        lod_fade_s,
    } = options;
    let view = scene::view_distance(world.settings(), world.field().settings().voxel_size);
    let mesher = world.settings().mesher;
    let pose = camera.transform();
    let (yaw, pitch, _) = pose.rotation.to_euler(EulerRot::YXZ);
    app.add_plugins(
        DefaultPlugins
            .set(WindowPlugin {
                primary_window: Some(Window {
                    title,
                    resolution: size.into(),
                    ..Default::default()
                }),
                ..Default::default()
            })
            // Sound goes through `SoundPlugin`, which opens the device on the first sound.
            .disable::<bevy::audio::AudioPlugin>(),
    )
    .add_plugins((
        EguiPlugin::default(),
        LoamPlugin,
        BlocksPlugin,
        DustPlugin,
        SoundPlugin,
        bevy::diagnostic::FrameTimeDiagnosticsPlugin::default(),
    ))
    .insert_resource(LoamWorld::new(world))
    .insert_resource(crate::fade::LevelFadeSettings {
        seconds: lod_fade_s,
    });
    let journaling = store.is_some();
    match blocks {
        Some(r) => {
            app.insert_resource(r.blocks).insert_resource(r.physics);
        }
        None => {
            app.insert_resource(LoamBlocks::new());
        }
    }
    app.world_mut().resource_mut::<LoamBlocks>().journaling = journaling;
    if let Some((link, url)) = remote {
        app.insert_resource(Remote::new(link, url));
        // The server's blocks come as deltas; nothing is decided here.
        app.world_mut().resource_mut::<LoamBlocks>().replica = true;
    }
    // The undo order of the edits made before the world was opened: its file's log.
    let earlier = match &store {
        Some(s) => undo::Journal::from_store(s).unwrap_or_else(|e| {
            warn!("the world's earlier edits cannot be undone: reading its op log failed: {e}");
            undo::Journal::default()
        }),
        None => undo::Journal::default(),
    };
    app.insert_resource(Editor {
        tool: ToolSettings::default(),
        mode: MoveMode::Fly,
        mesher,
        stroke: None,
        aim: None,
        store: store.map(Mutex::new),
        status: String::new(),
        fly_speed: 12.0,
        look: Vec2::new(yaw, pitch),
        ops: 0,
        capture_click: false,
        kind: ToolKind::Terrain,
        block_tool: BlockTool::default(),
        block_aim: None,
        journal: earlier,
    })
    .add_systems(
        Startup,
        move |mut commands: Commands,
              mut meshes: ResMut<Assets<Mesh>>,
              mut materials: ResMut<Assets<StandardMaterial>>| {
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
            .in_set(LoamSet::Edit)
            .in_set(EditTools),
    )
    .init_resource::<Physics>()
    .add_systems(
        Update,
        (
            input::place_marker,
            players::show_players,
            scene::follow_view_distance,
        )
            .after(LoamSet::Upload),
    )
    // Every op applied this frame reaches the world file before the next frame; closing the
    // editor saves.
    .add_systems(Last, (journal, save_on_exit).chain())
    .add_systems(PostUpdate, scene::follow_sky)
    .add_systems(EguiPrimaryContextPass, ui::panels);
    app.run()
}

/// Whether the primary window has the mouse captured.
pub(crate) fn captured(cursor: &Query<&CursorOptions, With<PrimaryWindow>>) -> bool {
    cursor
        .single()
        .is_ok_and(|c| c.grab_mode != CursorGrabMode::None)
}

/// Applies `op` to the world in stroke `stroke` (`None`: a stroke of its own) and marks the
/// edit for the latency readout ([`journal`] appends it to the world file at the end of the
/// frame).
pub(crate) fn apply(
    editor: &mut Editor,
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
            editor.ops += 1;
            true
        }
        Err(e) => {
            editor.status = format!("op rejected: {e}");
            false
        }
    }
}

/// Appends this frame's ops (terrain and block, in sequence order) to the world file.
fn journal(mut editor: ResMut<Editor>, world: Res<LoamWorld>, mut blocks: ResMut<LoamBlocks>) {
    let Some(store) = editor.store.as_ref() else {
        return;
    };
    let r = match store.lock() {
        Ok(mut s) => persist::flush(&mut s, &world.world, &mut blocks).map_err(|e| e.to_string()),
        Err(_) => Err("the world file's lock is poisoned".into()),
    };
    if let Err(e) = r {
        editor.status = format!("could not save the op: {e}");
        error!("could not append to the world file: {e}");
    }
}

/// Saves when the app is about to exit (the window closed, or an exit was asked for).
/// Joined and offline, it says how many edits were never sent (nothing can keep them: the
/// server holds the world).
fn save_on_exit(
    mut exits: MessageReader<AppExit>,
    mut editor: ResMut<Editor>,
    world: Res<LoamWorld>,
    mut blocks: ResMut<LoamBlocks>,
    physics: Res<Physics>,
    remote: Option<Res<Remote>>,
) {
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
    if editor.store.is_none() {
        return;
    }
    input::save(&mut editor, &world, &mut blocks, &physics);
    info!("{}", editor.status);
}
