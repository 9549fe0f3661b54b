//! Headless rendering: a scripted camera and ops rendered to a PNG with the same plugin,
//! renderer and materials as the editor, with no window (no X server needed: the camera draws
//! into an image and a screenshot of that image is saved). Under Mesa's software Vulkan
//! (lavapipe) it runs on a machine without a GPU.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bevy::app::{AppExit, ScheduleRunnerPlugin};
use bevy::camera::RenderTarget;
use bevy::prelude::*;
use bevy::render::render_resource::TextureFormat;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured, save_to_disk};
use bevy::window::ExitCondition;
use bevy::winit::WinitPlugin;
use loam_field::{EditOp, Field};
use loam_world::World;

use bevy::time::TimeUpdateStrategy;
use loam_blocks::{BlockOp, FieldGround, VoxModel};

use crate::audio::{SoundRecording, Sounds};
use crate::blocks::{BlockFocus, LoamBlocks};
use crate::dust::DustStats;
use crate::walk::Physics;
use crate::{ChunkStats, LoamPlugins, LoamSet, LoamSettings, LoamViewer, LoamWorld, scene};

/// Where the camera stands and what it looks at (world metres).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CameraPose {
    /// Eye position.
    pub position: [f64; 3],
    /// Point looked at (must differ from `position`).
    pub look_at: [f64; 3],
}

/// Sequence numbers at the end of a world's log searched for its first view
/// ([`CameraPose::of_world`]).
pub const LAST_OPS_SEARCHED: u64 = 256;

impl CameraPose {
    /// Looking at `look_at` (the ground at the origin when `None`) from 24 m south and 12 m
    /// up, kept 4 m above the generator's ground: the first view of a session or a world.
    pub fn looking_at(field: &Field, look_at: Option<[f64; 3]>) -> Self {
        let g = field.generator();
        let look_at = look_at.unwrap_or([0.0, g.surface_height(0.0, 0.0), 0.0]);
        let (x, z) = (look_at[0], look_at[2] + 24.0);
        let y = (look_at[1] + 12.0).max(g.surface_height(x, z) + 4.0);
        Self {
            position: [x, y, z],
            look_at,
        }
    }

    /// The first view of a world: [`CameraPose::looking_at`] the newest terrain op with a
    /// centre ([`EditOp::center`]) among the last [`LAST_OPS_SEARCHED`] sequence numbers of
    /// its log (where its user last worked); `fallback` when there is none (a new world, a
    /// compacted one, or only undos, redos and block ops there).
    ///
    /// # Errors
    /// The log cannot be read.
    pub fn of_world(
        store: &loam_store::Store,
        field: &Field,
        fallback: CameraPose,
    ) -> Result<Self, loam_store::StoreError> {
        let last = store.last_seq();
        let ops = store.ops_after(last.saturating_sub(LAST_OPS_SEARCHED))?;
        Ok(match ops.iter().rev().find_map(|e| e.op.center()) {
            Some(c) => Self::looking_at(field, Some(c)),
            None => fallback,
        })
    }

    /// The Bevy transform of the pose (y up).
    pub fn transform(&self) -> Transform {
        let p = self.position.map(|v| v as f32);
        let t = self.look_at.map(|v| v as f32);
        Transform::from_xyz(p[0], p[1], p[2]).looking_at(Vec3::from(t), Vec3::Y)
    }
}

/// One picture to render.
pub struct RenderJob {
    /// The world, before the ops; chunks stream around the camera.
    pub world: World,
    /// Ops applied (each in its stroke, `None`: a stroke of its own) once the view has loaded.
    pub ops: Vec<(Option<u64>, EditOp)>,
    /// The camera.
    pub camera: CameraPose,
    /// Picture size in pixels (width, height), each 16..=8192.
    pub size: [u32; 2],
    /// PNG file to write.
    pub out: PathBuf,
    /// Frames drawn after every chunk is shown and before the picture is taken, so that the
    /// renderer has compiled its pipelines and shadows have settled.
    pub settle_frames: u32,
    /// Give up after this long.
    pub timeout: Duration,
    /// Blocks placed before the ops, and seconds of physics after them.
    pub blocks: Option<BlockScene>,
    /// Where to write the sounds of the run as a WAV (16-bit stereo, 48 kHz).
    pub audio: Option<PathBuf>,
    /// A world file's blocks as they were saved ([`crate::blocks::persist::load`]): drawn at
    /// their saved poses (held blocks and resting pieces), not simulated. `None`: no blocks
    /// but those of `blocks`.
    pub saved_blocks: Option<crate::blocks::persist::Restored>,
}

/// Blocks in a render: models and block ops applied before the terrain ops, then seconds of
/// physics (60 steps per second of virtual time, one per frame) before the picture.
#[derive(Debug, Clone, Default)]
pub struct BlockScene {
    /// The models and block ops come after this many of the job's terrain ops.
    pub after_ops: usize,
    /// Models placed in order, each all or nothing.
    pub models: Vec<VoxModel>,
    /// Block ops, after the models.
    pub ops: Vec<BlockOp>,
    /// Seconds simulated after every op, before the picture.
    pub simulate_s: f32,
}

/// What a render did.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderReport {
    /// Chunk meshes on screen when the picture was taken.
    pub chunks_shown: usize,
    /// Ops applied.
    pub ops_applied: usize,
    /// Frames drawn.
    pub frames: u64,
    /// Field hash after the ops (hex), to tie the picture to a replay.
    pub field_hash: String,
    /// Held blocks when the picture was taken.
    pub blocks_held: usize,
    /// Pieces (falling or rubble) when the picture was taken.
    pub pieces: usize,
    /// Dust puffs emitted.
    pub puffs: u64,
    /// Sounds started (recorded into the WAV when one was asked for).
    pub sounds: u64,
    /// The main thread's time per frame ([`crate::FrameCost`]) from the frame the view had
    /// loaded (the ops are applied in it) to the picture.
    pub main_thread: crate::FrameCostSummary,
}

/// Why a render failed.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The picture size is outside 16..=8192 pixels per side.
    #[error("picture size {0}x{1} is outside 16..=8192 pixels per side")]
    Size(u32, u32),
    /// The camera looks at its own position or a coordinate is not finite.
    #[error("the camera pose is degenerate (look_at equals position, or not finite)")]
    Camera,
    /// The output folder does not exist.
    #[error("cannot write {0}: its folder does not exist")]
    NoFolder(PathBuf),
    /// A model or block op was refused.
    #[error("blocks: {0}")]
    Blocks(String),
    /// The WAV could not be written.
    #[error("cannot write the sound: {0}")]
    Audio(String),
    /// An op was rejected by the field.
    #[error("op {index} was rejected")]
    Op {
        /// Index of the op in the job.
        index: usize,
        /// Why.
        source: loam_field::EditError,
    },
    /// The app stopped before a picture was taken (e.g. the renderer could not start).
    #[error("the renderer stopped before taking the picture")]
    Stopped,
    /// The picture was not taken in time (no GPU adapter, or too slow).
    #[error(
        "no picture after {0:?} (is a Vulkan driver installed? on a machine without a GPU: apt-get install mesa-vulkan-drivers libvulkan1)"
    )]
    Timeout(Duration),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Loading,
    Editing(u64),
    /// Physics frames left.
    Simulating(u32),
    Settling(u32),
    Capturing,
    Done,
}

/// Virtual seconds per frame of a headless render.
pub const FRAME_S: f32 = 1.0 / 60.0;

#[derive(Resource)]
struct Script {
    ops: Vec<(Option<u64>, EditOp)>,
    blocks: Option<BlockScene>,
    audio: Option<PathBuf>,
    /// App clock when the ops were applied.
    applied_at: f64,
    phase: Phase,
    settle_frames: u32,
    image: Handle<Image>,
    out: PathBuf,
    frames: u64,
    deadline: loam_world::Instant,
    timeout: Duration,
    result: Arc<Mutex<Option<Result<RenderReport, RenderError>>>>,
}

/// Renders `job` to its PNG and returns what was drawn. Blocks until the picture is written.
///
/// # Errors
/// [`RenderError`] for a bad size, camera or output path (checked before anything starts),
/// a rejected op, or a timeout (e.g. no Vulkan adapter).
pub fn render(job: RenderJob) -> Result<RenderReport, RenderError> {
    let [w, h] = job.size;
    if !(16..=8192).contains(&w) || !(16..=8192).contains(&h) {
        return Err(RenderError::Size(w, h));
    }
    let c = job.camera;
    let finite = c.position.iter().chain(&c.look_at).all(|v| v.is_finite());
    if !finite || c.position == c.look_at {
        return Err(RenderError::Camera);
    }
    let folder = job.out.parent().filter(|p| !p.as_os_str().is_empty());
    if folder.is_some_and(|p| !p.is_dir()) {
        return Err(RenderError::NoFolder(job.out.clone()));
    }
    let result = Arc::new(Mutex::new(None));
    let view = scene::view_distance(
        job.world.settings(),
        job.world.field().settings().voxel_size,
    );
    let mut app = App::new();
    app.add_plugins(
        DefaultPlugins
            .set(WindowPlugin {
                primary_window: None,
                exit_condition: ExitCondition::DontExit,
                ..Default::default()
            })
            .disable::<WinitPlugin>()
            // Sound is recorded (SoundRecording), never played.
            .disable::<bevy::audio::AudioPlugin>(),
    )
    .add_plugins((ScheduleRunnerPlugin::run_loop(Duration::ZERO), LoamPlugins))
    // A still picture: levels of detail swap at once rather than cross-fade.
    .insert_resource(LoamSettings {
        lod_fade_s: 0.0,
        ..Default::default()
    })
    // Virtual time advances a fixed step per frame, so physics, dust and sound do not
    // depend on how fast this machine draws.
    .insert_resource(TimeUpdateStrategy::ManualDuration(Duration::from_secs_f32(
        FRAME_S,
    )))
    .insert_resource(LoamWorld::new(job.world));
    if job.audio.is_some() {
        app.insert_resource(SoundRecording::new());
    }
    if let Some(saved) = job.saved_blocks {
        app.insert_resource(saved.blocks)
            .insert_resource(saved.physics);
        // Nothing is saved from a render.
        app.world_mut().resource_mut::<LoamBlocks>().journaling = false;
    }
    app.world_mut().resource_mut::<LoamBlocks>().paused = true;
    let image = {
        let mut images = app.world_mut().resource_mut::<Assets<Image>>();
        images.add(Image::new_target_texture(
            w,
            h,
            TextureFormat::Rgba8UnormSrgb,
            None,
        ))
    };
    let camera = job.camera.transform();
    let target = image.clone();
    app.add_systems(
        Startup,
        move |mut commands: Commands,
              mut meshes: ResMut<Assets<Mesh>>,
              mut materials: ResMut<Assets<StandardMaterial>>| {
            scene::spawn_lights(&mut commands, view);
            scene::spawn_sky(&mut commands, &mut meshes, &mut materials, view);
            commands.spawn((
                Camera3d::default(),
                RenderTarget::Image(target.clone().into()),
                camera,
                scene::projection(view),
                scene::fog(view),
                LoamViewer,
            ));
        },
    )
    .insert_resource(Script {
        ops: job.ops,
        blocks: job.blocks,
        audio: job.audio,
        applied_at: 0.0,
        phase: Phase::Loading,
        settle_frames: job.settle_frames,
        image,
        out: job.out,
        frames: 0,
        deadline: loam_world::Instant::now() + job.timeout,
        timeout: job.timeout,
        result: result.clone(),
    })
    .add_systems(Update, drive.in_set(LoamSet::Edit))
    .add_systems(PostUpdate, scene::follow_sky);
    app.run();
    let out = result.lock().map(|mut r| r.take()).unwrap_or(None);
    out.unwrap_or(Err(RenderError::Stopped))
}

/// Whether everything the world has in flight is built and shown.
fn settled(world: &World) -> bool {
    world.waiting() == 0 && world.pending_batches() == 0 && world.metrics().queue_depth == 0
}

#[allow(clippy::too_many_arguments)]
fn drive(
    mut commands: Commands,
    mut script: ResMut<Script>,
    mut world: ResMut<LoamWorld>,
    stats: Res<ChunkStats>,
    mut exit: MessageWriter<AppExit>,
    mut blocks: ResMut<LoamBlocks>,
    mut physics: ResMut<Physics>,
    focus: Res<BlockFocus>,
    time: Res<Time>,
    mut recording: Option<ResMut<SoundRecording>>,
    fx: (Res<DustStats>, Res<Sounds>, ResMut<crate::FrameCost>),
) {
    let (dust, sounds, mut cost) = fx;
    script.frames += 1;
    if loam_world::Instant::now() > script.deadline && script.phase != Phase::Done {
        let timeout = script.timeout;
        finish(&mut script, Err(RenderError::Timeout(timeout)));
        exit.write(AppExit::Success);
        return;
    }
    match script.phase {
        // The first update has not run yet on frame 1; wait for the view to load.
        Phase::Loading if script.frames > 2 && settled(&world.world) => {
            script.applied_at = time.elapsed_secs_f64();
            // The figures are of the frames from here on, not of the initial load.
            cost.clear();
            let ops = std::mem::take(&mut script.ops);
            let scene = script.blocks.take();
            let split = scene.as_ref().map_or(0, |s| s.after_ops.min(ops.len()));
            for (index, (stroke, op)) in ops.iter().enumerate() {
                if index == split
                    && let Some(scene) = &scene
                    && let Err(e) = place_blocks(scene, &mut blocks, &mut physics, &mut world)
                {
                    finish(&mut script, Err(e));
                    exit.write(AppExit::Success);
                    return;
                }
                if let Err(source) = world.apply(*stroke, op) {
                    finish(&mut script, Err(RenderError::Op { index, source }));
                    exit.write(AppExit::Success);
                    return;
                }
            }
            if split == ops.len()
                && let Some(scene) = &scene
                && let Err(e) = place_blocks(scene, &mut blocks, &mut physics, &mut world)
            {
                finish(&mut script, Err(e));
                exit.write(AppExit::Success);
                return;
            }
            script.blocks = scene;
            script.ops = ops;
            script.phase = Phase::Editing(script.frames);
        }
        // The ops' batch forms in this frame's update and is pulled in a later frame.
        // Physics waits for the terrain colliders around the blocks (the edited chunks').
        Phase::Editing(at)
            if script.frames > at + 1
                && settled(&world.world)
                && colliders_ready(&physics, &focus) =>
        {
            let simulate_s = script.blocks.as_ref().map_or(0.0, |b| b.simulate_s);
            if let Some(rec) = recording.as_mut() {
                // Frames spent meshing after the dig are not heard: the fall follows 0.3 s
                // after it.
                rec.skip(time.elapsed_secs_f64() - script.applied_at - 0.3);
            }
            blocks.paused = false;
            script.phase = Phase::Simulating((simulate_s / FRAME_S).round() as u32);
        }
        Phase::Simulating(0) => {
            blocks.paused = true;
            script.phase = Phase::Settling(script.settle_frames);
        }
        Phase::Simulating(n) => script.phase = Phase::Simulating(n - 1),
        Phase::Settling(0) => {
            let out = script.out.clone();
            let report = RenderReport {
                chunks_shown: stats.shown,
                ops_applied: script.ops.len(),
                frames: script.frames,
                field_hash: world.world.field().hash().to_string(),
                blocks_held: blocks.world.store().len(),
                pieces: blocks.world.pieces().count(),
                puffs: dust.puffs,
                sounds: sounds.started,
                main_thread: cost.summary(),
            };
            if let (Some(path), Some(rec)) = (script.audio.clone(), recording.as_ref()) {
                let heard = time.elapsed_secs_f64() - rec.skipped_s;
                if let Err(e) = rec.to_wav(&path, heard) {
                    finish(&mut script, Err(RenderError::Audio(e.to_string())));
                    exit.write(AppExit::Success);
                    return;
                }
            }
            let result = script.result.clone();
            commands
                .spawn(Screenshot::image(script.image.clone()))
                .observe(save_to_disk(out))
                .observe(move |_: On<ScreenshotCaptured>| {
                    if let Ok(mut r) = result.lock() {
                        r.get_or_insert(Ok(report.clone()));
                    }
                });
            script.phase = Phase::Capturing;
        }
        Phase::Settling(n) => script.phase = Phase::Settling(n - 1),
        Phase::Capturing if script.result.lock().is_ok_and(|r| r.is_some()) => {
            script.phase = Phase::Done;
            exit.write(AppExit::Success);
        }
        _ => {}
    }
}

/// Places the scene's models and applies its block ops.
fn place_blocks(
    scene: &BlockScene,
    blocks: &mut LoamBlocks,
    physics: &mut Physics,
    world: &mut LoamWorld,
) -> Result<(), RenderError> {
    for (i, model) in scene.models.iter().enumerate() {
        blocks
            .world
            .place_model(&mut physics.world, &FieldGround(world.world.field()), model)
            .map_err(|e| RenderError::Blocks(format!("model {i}: {e}")))?;
    }
    for (i, op) in scene.ops.iter().enumerate() {
        blocks
            .apply(physics, &mut world.world, op)
            .map_err(|e| RenderError::Blocks(format!("op {i} ({}): {e}", op.kind())))?;
    }
    Ok(())
}

/// Whether every chunk the blocks need has its terrain collider.
fn colliders_ready(physics: &Physics, focus: &BlockFocus) -> bool {
    focus
        .chunks
        .iter()
        .all(|k| physics.colliders.is_built([k.x, k.y, k.z]))
}

fn finish(script: &mut Script, r: Result<RenderReport, RenderError>) {
    if let Ok(mut slot) = script.result.lock() {
        slot.get_or_insert(r);
    }
    script.phase = Phase::Done;
}

/// Whether `path` names a PNG file (by extension).
pub fn is_png(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("png"))
}
