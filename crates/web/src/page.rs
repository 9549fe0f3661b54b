//! The editor in the page (wasm32 only): the world opened from the bytes the page kept (or
//! made new from `loam edit`'s default session), the native editor's app on the page's
//! canvas, and two systems of the page's own: one hands the world file's bytes to the page
//! to keep, one publishes what the tests read ([`status`]).

use std::cell::RefCell;
use std::path::Path;
use std::time::Duration;

use bevy::prelude::*;
use loam_bevy::editor::{self, EditorOptions};
use loam_bevy::persist::Restored;
use loam_bevy::{CameraPose, ChunkStats, LoamSet, LoamWorld, WorldFile};
use loam_field::FieldSettings;
use loam_session::{BaseFieldError, GeneratorSpec};
use loam_store::{Store, StoreError};
use loam_world::{World, WorldError, WorldSettings};
use wasm_bindgen::prelude::*;

/// The session a new world in the page takes its terrain and field settings from: the one
/// `loam edit` gives a new world, so the page and the native editor start alike.
const SESSION: &str = include_str!("../../../examples/generated.json");

/// The name the world has in the store's errors.
const WORLD_NAME: &str = "browser world";

/// Main-thread time per frame for building chunk meshes (there are no threads): a dig's
/// chunks are built first and show in the frame after the dig.
const BUILD_BUDGET: Duration = Duration::from_millis(6);

/// How far the page draws, metres: levels of detail out to here. A browser's WebGL on a
/// laptop is slower than the native renderer; the editor's software-renderer rule
/// (`RenderQuality`) shortens it further where the browser draws without a GPU.
const VIEW_DISTANCE_M: f64 = 768.0;

/// The share of the last frame's time the next update may spend building chunk meshes,
/// between [`BUILD_BUDGET`] and [`MAX_BUILD_BUDGET`]: where the browser draws slowly (no
/// GPU: a frame takes most of a second), the load keeps pace with the frames instead of
/// building 6 ms in each.
const BUILD_SHARE: f64 = 0.3;

/// The most an update builds for, however slow the frames.
const MAX_BUILD_BUDGET: Duration = Duration::from_millis(250);

/// How long after the world changed its bytes go to the page to keep, seconds: edits in a
/// drag are kept together; a tab closed sooner than this after an edit loses it.
const KEEP_AFTER_S: f64 = 0.5;

#[wasm_bindgen]
extern "C" {
    /// `loamPage.keepWorld(bytes, lastSeq)` (page/loam.js): keeps the world file's bytes in
    /// IndexedDB in place of the last ones.
    #[wasm_bindgen(js_namespace = loamPage, js_name = keepWorld)]
    fn keep_world(bytes: &[u8], last_seq: f64);
}

/// Why the page's world could not be opened or made.
#[derive(Debug, thiserror::Error)]
enum PageError {
    /// The bytes are not a world file this build opens, or the world does not load.
    #[error("the world file does not open: {0}")]
    Store(#[from] StoreError),
    /// Its terrain cannot be rebuilt.
    #[error("the world's terrain cannot be made: {0}")]
    Terrain(#[from] BaseFieldError),
    /// The world's settings are refused.
    #[error("the world cannot be made: {0}")]
    World(#[from] WorldError),
    /// The built-in session does not read (a broken build).
    #[error("the built-in session does not read: {0}")]
    Session(#[from] serde_json::Error),
}

/// What [`status`] reports, updated every frame.
#[derive(Debug, Default)]
struct Status {
    /// The field hash (`FieldHash`'s 64 hex digits) at `hashed_seq`.
    field_hash: String,
    /// The sequence number the hash was taken at.
    hashed_seq: u64,
    /// The last op's sequence number (terrain and block ops).
    last_seq: u64,
    /// The sequence number of the bytes last handed to the page to keep.
    kept_seq: u64,
    /// Chunk entities on screen.
    chunks_shown: usize,
    /// Chunks whose current version is not built yet.
    chunks_waiting: usize,
    /// Frames run.
    frames: u64,
    /// The editor's status line.
    message: String,
}

thread_local! {
    static STATUS: RefCell<Status> = RefCell::new(Status::default());
    /// The world file's bytes last kept (what [`world_bytes`] returns).
    static KEPT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Opens `bytes` as a world file and builds its terrain, without starting anything: what
/// the page checks before it keeps a world file the user picked. Returns a line describing
/// the world.
///
/// # Errors
/// Not a world file, a world of a newer format or a node's copy, damaged, or its terrain
/// cannot be made (a DEM it names by path, which a page cannot read).
#[wasm_bindgen]
pub fn check_world(bytes: &[u8]) -> Result<String, JsError> {
    let store = Store::from_image(WORLD_NAME, bytes).map_err(PageError::from)?;
    loam_session::base_field(&store, Path::new("")).map_err(PageError::from)?;
    let info = store.info().map_err(PageError::from)?;
    Ok(format!(
        "a world of {} ops ({} bytes)",
        info.ops + info.block_ops,
        bytes.len()
    ))
}

/// Starts the editor on the canvas `canvas` (a CSS selector) with the world whose file's
/// bytes the page kept (`saved`), or a new world of `loam edit`'s default terrain. Returns
/// a line for the page.
///
/// # Errors
/// The saved world does not open (nothing was started: the page keeps the bytes aside and
/// calls again without them).
#[wasm_bindgen]
pub fn start(saved: Option<Vec<u8>>, canvas: String) -> Result<String, JsError> {
    let (mut store, what) = match saved {
        Some(bytes) => (
            Store::from_image(WORLD_NAME, &bytes).map_err(PageError::from)?,
            "opened the world kept in this browser",
        ),
        None => (new_world()?, "a new world"),
    };
    let base = loam_session::base_field(&store, Path::new("")).map_err(PageError::from)?;
    let settings = settings(base.settings().voxel_size);
    settings.validate().map_err(PageError::from)?;
    let loaded = loam_session::load(&mut store, base.clone()).map_err(PageError::from)?;
    // Where `loam edit` looks on a new world of the session (and `loam render` on the
    // session): its first op; on a world with ops, its last edit.
    let first_view = CameraPose::looking_at(&base, session_first_center()?);
    let camera =
        CameraPose::of_world(&store, &loaded.world.field, first_view).map_err(PageError::from)?;
    let w = loaded.world;
    let ops = w.last_seq;
    let world = World::resume(w.field, w.history, w.last_seq, settings).map_err(PageError::from)?;
    let mut app = editor::app(EditorOptions {
        world,
        store: Some(store),
        blocks: Some(Restored::from(loaded.blocks)),
        remote: None,
        camera,
        title: "Loam".into(),
        size: [1280, 720],
        lod_fade_s: 0.4,
        keep_view: false,
        check_seams: false,
        canvas: Some(canvas),
    });
    app.add_systems(First, adapt_build_budget)
        .add_systems(Last, (keep, publish).chain().after(LoamSet::Save));
    app.run();
    Ok(format!("{what} ({ops} ops)"))
}

/// What the page's tests read, as JSON: `field_hash` (at `hashed_seq`), `last_seq`,
/// `kept_seq` (the bytes last kept), `chunks_shown`, `chunks_waiting`, `frames`, `message` (the status line).
#[wasm_bindgen]
pub fn status() -> String {
    STATUS.with_borrow(|s| {
        serde_json::json!({
            "field_hash": s.field_hash,
            "hashed_seq": s.hashed_seq,
            "last_seq": s.last_seq,
            "kept_seq": s.kept_seq,
            "chunks_shown": s.chunks_shown,
            "chunks_waiting": s.chunks_waiting,
            "frames": s.frames,
            "message": s.message,
        })
        .to_string()
    })
}

/// The world file's bytes as last kept (at `kept_seq` of [`status`]): a world file that
/// `loam edit` opens.
#[wasm_bindgen]
pub fn world_bytes() -> Vec<u8> {
    KEPT.with_borrow(Clone::clone)
}

/// The centre of the built-in session's first op with one (`loam render`'s first view).
fn session_first_center() -> Result<Option<[f64; 3]>, PageError> {
    let session: serde_json::Value = serde_json::from_str(SESSION)?;
    let ops = session["ops"].as_array().map_or(&[][..], Vec::as_slice);
    Ok(ops
        .iter()
        .find_map(|op| serde_json::from_value::<[f64; 3]>(op["center"].clone()).ok()))
}

/// A new world of the built-in session's terrain and field settings, in memory.
fn new_world() -> Result<Store, PageError> {
    let session: serde_json::Value = serde_json::from_str(SESSION)?;
    let spec: GeneratorSpec = serde_json::from_value(session["generator"].clone())?;
    let field: FieldSettings = serde_json::from_value(session["field"].clone())?;
    let json = serde_json::to_string(&spec)?;
    Ok(Store::create_in_memory(WORLD_NAME, &json, &field, None)?)
}

/// The page's world settings: Marching Cubes, levels of detail out to [`VIEW_DISTANCE_M`],
/// meshes built on the main thread within [`BUILD_BUDGET`] a frame.
fn settings(voxel_size: f64) -> WorldSettings {
    WorldSettings {
        main_thread: Some(BUILD_BUDGET),
        ..Default::default()
    }
    .with_view_distance(VIEW_DISTANCE_M, voxel_size)
}

/// Sets this frame's build budget from the last frame's time ([`BUILD_SHARE`]).
fn adapt_build_budget(time: Res<Time<Real>>, mut world: ResMut<LoamWorld>) {
    let share = time.delta().mul_f64(BUILD_SHARE);
    let budget = share.clamp(BUILD_BUDGET, MAX_BUILD_BUDGET);
    if world.world.settings().main_thread != Some(budget)
        && let Err(e) = world.world.set_main_thread_budget(budget)
    {
        error!("the build budget stays: {e}");
    }
}

/// Hands the world file's bytes to the page when the world changed, [`KEEP_AFTER_S`] after
/// the first change not yet kept.
fn keep(
    file: Res<WorldFile>,
    time: Res<Time<Real>>,
    mut since: Local<Option<f64>>,
    mut kept: Local<u64>,
) {
    let Ok(seq) = file.last_seq() else { return };
    if seq == *kept {
        return;
    }
    let now = time.elapsed_secs_f64();
    let first = *since.get_or_insert(now);
    if now - first < KEEP_AFTER_S {
        return;
    }
    match file.image() {
        Ok(bytes) => {
            keep_world(&bytes, seq as f64);
            KEPT.set(bytes);
            *kept = seq;
            *since = None;
            STATUS.with_borrow_mut(|s| s.kept_seq = seq);
        }
        Err(e) => error!("the world could not be kept in the browser: {e}"),
    }
}

/// Publishes [`Status`]; the field hash again whenever the log grew.
fn publish(world: Res<LoamWorld>, stats: Res<ChunkStats>, status: Res<editor::EditorStatus>) {
    let w = &world.world;
    let seq = w.last_seq();
    STATUS.with_borrow_mut(|s| {
        if s.frames == 0 || s.hashed_seq != seq {
            s.field_hash = w.field().hash().to_string();
            s.hashed_seq = seq;
        }
        s.last_seq = seq;
        s.chunks_shown = stats.shown;
        s.chunks_waiting = w.metrics().chunks_waiting;
        s.frames += 1;
        s.message.clone_from(&status.message);
    });
}
