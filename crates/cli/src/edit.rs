//! `loam edit [WORLD]` (and `loam` alone): the editor on a world file, or — on a machine with
//! no display — a headless render of the example session instead.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use loam_bevy::editor::EditorOptions;
use loam_field::Field;
use loam_mesh::Mesher;
use loam_store::Store;
use loam_world::World;

use crate::render::{self, RenderArgs};
use crate::session;

/// The world `loam` opens without arguments (created on first use).
pub const DEFAULT_WORLD: &str = "worlds/default.loam";
/// The session whose terrain a new world gets, and that the headless fallback renders.
pub const DEFAULT_SESSION: &str = "examples/generated.json";
/// The session the headless fallback renders (the real DEM with a hole dug in view).
pub const HEADLESS_SESSION: &str = "examples/render.json";
/// Where the headless fallback writes its picture.
pub const HEADLESS_OUT: &str = "out/editor-headless.png";

/// Arguments of `loam edit`.
#[derive(Debug, Clone, clap::Args)]
pub struct EditArgs {
    /// The world file (default `worlds/default.loam`): opened if it exists, else created
    /// with `--session`'s terrain. Every op is appended to it as it happens; Ctrl+S bakes it.
    /// Without a display, a world named here (it must exist) is drawn headless instead;
    /// with no world named, the example session is drawn.
    pub world: Option<PathBuf>,
    /// The session whose terrain and field settings a new world gets, and whose view radius
    /// and camera the editor starts with (on a world with ops, looking at its last edit).
    #[arg(long, default_value = DEFAULT_SESSION)]
    pub session: PathBuf,
    /// The mesher to start with (mc, mc33, sn or dc; M switches).
    #[arg(long, default_value = "mc")]
    pub mesher: String,
    /// Worker threads meshing chunks (0: the cores minus one).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Window size, WIDTHxHEIGHT (the picture's, without a display).
    #[arg(long, default_value = "1280x720", value_parser = render::parse_size)]
    pub size: [u32; 2],
    /// Join a `loam serve` server (ws://HOST:PORT/ws) instead of opening a world file:
    /// terrain ops go to the server, everyone's ops show here in its order. (Not with a
    /// WORLD: the server's world is the one edited.)
    #[arg(long, value_name = "URL", conflicts_with = "world")]
    pub connect: Option<String>,
    /// The name other players see (with --connect; not empty or only spaces).
    #[arg(long, default_value = "loam", requires = "connect", value_parser = parse_name)]
    pub name: String,
    /// The server's token, if it asks for one (with --connect).
    #[arg(long, requires = "connect", value_parser = crate::serve::parse_nonempty)]
    pub token: Option<String>,
    /// How far the terrain is drawn, metres: chunks of coarser levels of detail out to this
    /// distance (level 0 within 128 m, each level twice as far as the one before, crack-free
    /// seams between them for every mesher). 0 draws level-0 chunks only, out to the session's view radius.
    /// (Without a display the picture shows the session's view radius, as `loam render`.)
    /// Default 2048; on a software renderer (no GPU) the editor starts with 384 unless this
    /// is given.
    #[arg(long, value_parser = parse_view_distance, allow_negative_numbers = true)]
    pub view_distance: Option<f64>,
    /// Seconds a change of level of detail cross-fades (old and new chunks dithered into each
    /// other, so a level change does not pop); 0 swaps levels in one frame. At most 60.
    #[arg(long, default_value_t = 0.4, value_parser = parse_lod_fade, value_name = "SECONDS")]
    pub lod_fade: f32,
    /// Checks the seams of what is drawn: each time every chunk of the view is built and shown
    /// with a new mesher (at the start, and after each M), prints the open edges (cracks)
    /// inside the view and the meshers that drew it, as `loam replay`'s metrics count them.
    /// Keeps a copy of every shown mesh, and welds them all at each check: for tests.
    #[arg(long)]
    pub check_seams: bool,
}

impl EditArgs {
    /// The view distance asked for, or the default (2 048 m).
    pub fn view_distance(&self) -> f64 {
        self.view_distance.unwrap_or(DEFAULT_VIEW_DISTANCE_M)
    }
}

/// Parses a fade duration in seconds, `[0, 60]`.
pub(crate) fn parse_lod_fade(s: &str) -> Result<f32, String> {
    let v: f32 = s.parse().map_err(|e| format!("{e}"))?;
    if (0.0..=60.0).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} is not in [0, 60] s"))
    }
}

/// `loam edit`'s default view distance, metres.
pub const DEFAULT_VIEW_DISTANCE_M: f64 = 2048.0;

/// Parses a view distance in metres, `[0, 10⁶]`.
pub(crate) fn parse_view_distance(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|e| format!("{e}"))?;
    if (0.0..=1e6).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{v} is not in [0, 1e6] m"))
    }
}

impl Default for EditArgs {
    fn default() -> Self {
        Self {
            world: None,
            session: DEFAULT_SESSION.into(),
            mesher: "mc".into(),
            threads: 0,
            size: [1280, 720],
            connect: None,
            name: "loam".into(),
            token: None,
            view_distance: None,
            lod_fade: 0.4,
            check_seams: false,
        }
    }
}

/// Whether a window can be opened: an X11 or Wayland display is named.
fn has_display() -> bool {
    if cfg!(any(target_os = "windows", target_os = "macos")) {
        return true;
    }
    ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()))
}

/// Runs the editor, or the headless fallback without a display.
///
/// # Errors
/// A world in use or unreadable, a bad session, a failed render.
pub fn run(args: &EditArgs) -> anyhow::Result<()> {
    if !has_display() && args.connect.is_some() {
        anyhow::bail!(
            "joining a server (--connect) needs a window, and there is no display (neither DISPLAY nor WAYLAND_DISPLAY is set); on a machine without one, run it under Xvfb (tools/editor_connect_check.sh shows how), or use `loam bench-net` to drive a server headless"
        );
    }
    if !has_display() {
        return run_headless(args);
    }
    let mesher = Mesher::from_name(&args.mesher)
        .with_context(|| format!("unknown mesher {:?} (mc, mc33, sn, dc)", args.mesher))?;
    let size = args.size;
    if let Some(url) = &args.connect {
        return run_connected(args, url, mesher);
    }
    let session_path = resolve_example(&args.session);
    let loaded = session::load(&session_path)?;
    let world_path = args.world.clone().unwrap_or_else(|| DEFAULT_WORLD.into());
    let view_distance = args.view_distance();
    let settings = loaded
        .session
        .world
        .settings(args.threads, mesher)
        .with_view_distance(view_distance, loaded.session.field.voxel_size);
    if settings.lod_levels == 0 && view_distance > 0.0 {
        println!(
            "loam: a view distance of {view_distance} m is within level 0's reach: levels of detail are off"
        );
    } else if settings.lod_levels > 0 && settings.view_distance < view_distance {
        println!(
            "loam: {} levels of detail reach {:.0} m, not {view_distance} m: the view ends there",
            settings.lod_levels, settings.view_distance
        );
    }
    // Checked before the world file is opened: opening it writable writes to it (its lock,
    // the tidying of an unfinished bake), and a start refused for a bad setting leaves it as
    // it was, byte for byte.
    settings
        .validate()
        .context("the editor's settings (nothing was opened)")?;
    let (mut store, created) = open_or_create(&world_path, &loaded)?;
    let (w, blocks) = crate::world::load_with_blocks(&mut store, &world_path)?;
    let camera = {
        let base = Field::new(loaded.session.field, Arc::new(loaded.generator))?;
        loam_bevy::CameraPose::of_world(&store, &w.field, render::camera_of(&loaded.session, &base))
            .context("reading the world's last ops")?
    };
    let world = World::resume(w.field, w.history, w.last_seq, settings)?;
    println!(
        "loam: {} {}",
        if created { "created" } else { "opened" },
        world_path.display()
    );
    let exit = loam_bevy::editor::run(EditorOptions {
        world,
        store: Some(store),
        blocks: Some(blocks),
        remote: None,
        camera,
        title: format!("Loam — {}", world_path.display()),
        size,
        lod_fade_s: args.lod_fade,
        keep_view: args.view_distance.is_some(),
        check_seams: args.check_seams,
        canvas: None,
    });
    if exit.is_error() {
        anyhow::bail!("the editor stopped with an error");
    }
    Ok(())
}

/// Without a display: the world named on the command line drawn as the editor would first
/// show it, or else the example session, to [`HEADLESS_OUT`].
fn run_headless(args: &EditArgs) -> anyhow::Result<()> {
    println!(
        "loam: no display (neither DISPLAY nor WAYLAND_DISPLAY is set), so the editor cannot open a window."
    );
    match &args.world {
        Some(world) => {
            println!("loam: drawing {} headless instead …", world.display());
            render::run_world(&render::WorldRenderArgs {
                world: world.clone(),
                session: resolve_example(&args.session),
                out: HEADLESS_OUT.into(),
                size: args.size,
                mesher: args.mesher.clone(),
                threads: args.threads,
                timeout_s: 600,
            })?;
        }
        None => {
            let session = resolve_example(Path::new(HEADLESS_SESSION));
            println!("loam: rendering {} headless instead …", session.display());
            render::run(&RenderArgs {
                session,
                out: HEADLESS_OUT.into(),
                size: args.size,
                without_ops: false,
                mesher: args.mesher.clone(),
                threads: args.threads,
                settle_frames: 8,
                timeout_s: 600,
                audio: None,
            })?;
        }
    }
    println!(
        "loam: the picture is at {HEADLESS_OUT}; on a desktop, `cargo run --release -p loam` opens the editor."
    );
    Ok(())
}

/// `path` itself, unless it is a relative `examples/…` path that does not exist from here:
/// then the same file in the source tree this binary was built from, if it is there. So the
/// example sessions `loam` falls back on are found from any folder, not only the checkout's
/// root.
pub(crate) fn resolve_example(path: &Path) -> PathBuf {
    if path.is_absolute() || !path.starts_with("examples") || path.exists() {
        return path.to_path_buf();
    }
    let built = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path);
    // Canonical, so messages name it without `crates/cli/../..`.
    std::fs::canonicalize(built).unwrap_or_else(|_| path.to_path_buf())
}

fn open_or_create(path: &Path, loaded: &session::Loaded) -> anyhow::Result<(Store, bool)> {
    if path.exists() {
        let store = Store::open(path).with_context(|| format!("opening world {path:?}"))?;
        return Ok((store, false));
    }
    if let Some(parent) = path.parent()
        && !parent.as_os_str().is_empty()
    {
        std::fs::create_dir_all(parent).with_context(|| format!("creating {parent:?}"))?;
    }
    let store = crate::world::create(path, &loaded.session, loaded.heightmap_blake3.as_deref())?;
    Ok((store, true))
}

/// The editor on a server's world (`--connect`): no world file; the camera starts above the
/// world's origin.
///
/// Levels of detail beyond level 0 (`--view-distance`) are drawn from what the client holds:
/// the server sends the ops and bricks of the region around the viewer (level 0's chunks
/// and one more), so farther away the coarse levels show the generator's terrain with the
/// edits the client saw while it was near, and catch up when the viewer comes close.
fn run_connected(args: &EditArgs, url: &str, mesher: Mesher) -> anyhow::Result<()> {
    let base = loam_world::WorldSettings {
        mesher,
        threads: args.threads,
        ..Default::default()
    };
    // The server is asked for level 0's chunks and one more, at the world's voxel size.
    let radius_for = |vs: f64| {
        let lod0 = base.with_view_distance(args.view_distance(), vs);
        f64::from(lod0.view_radius + 1) * f64::from(loam_field::CHUNK_CELLS) * vs
    };
    let position = [0.0, 0.0, 0.0];
    let connected =
        crate::connect::connect(url, &args.name, args.token.clone(), position, radius_for)?;
    let vs = connected.field.settings().voxel_size;
    let settings = base.with_view_distance(args.view_distance(), vs);
    if settings.lod_levels > 0 && settings.view_distance < args.view_distance() {
        println!(
            "loam: {} levels of detail reach {:.0} m, not {} m: the view ends there",
            settings.lod_levels,
            settings.view_distance,
            args.view_distance()
        );
    }
    let g = connected.field.generator();
    let h = g.surface_height(0.0, 0.0);
    let camera = loam_bevy::CameraPose {
        position: [0.0, h + 14.0, 24.0],
        look_at: [0.0, h, 0.0],
    };
    let world = World::new(connected.field, settings)?;
    println!("loam: joined {url}");
    let exit = loam_bevy::editor::run(EditorOptions {
        world,
        store: None,
        blocks: None,
        remote: Some((connected.link, url.to_string())),
        camera,
        title: format!("Loam — {} @ {url}", args.name),
        size: args.size,
        lod_fade_s: args.lod_fade,
        keep_view: args.view_distance.is_some(),
        check_seams: args.check_seams,
        canvas: None,
    });
    if exit.is_error() {
        anyhow::bail!("the editor stopped with an error");
    }
    Ok(())
}

/// A player's name: not empty or only white space (the server refuses such a name).
fn parse_name(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        Err("must not be empty or only spaces".into())
    } else {
        Ok(s.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Options that only mean something with `--connect` need it, and a world file cannot
    /// go with it (a fresh-user trial saw both ignored without a word).
    #[test]
    fn connect_options_go_together() {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            edit: EditArgs,
        }
        let parse = |args: &[&str]| {
            Cli::try_parse_from(std::iter::once("loam").chain(args.iter().copied()))
        };
        let err = |args: &[&str]| parse(args).err().map(|e| e.kind());
        use clap::error::ErrorKind;
        assert_eq!(
            err(&["--connect", "ws://h:1/ws", "w.loam"]),
            Some(ErrorKind::ArgumentConflict)
        );
        assert_eq!(
            err(&["--name", "bob"]),
            Some(ErrorKind::MissingRequiredArgument)
        );
        assert_eq!(
            err(&["--token", "t"]),
            Some(ErrorKind::MissingRequiredArgument)
        );
        let ok = parse(&["--connect", "ws://h:1/ws", "--name", "bob"]).expect("valid");
        assert_eq!(ok.edit.name, "bob");
        assert_eq!(parse(&["w.loam"]).expect("valid").edit.name, "loam");
        for blank in ["", "   ", "\t"] {
            assert_eq!(
                err(&["--connect", "ws://h:1/ws", "--name", blank]),
                Some(ErrorKind::ValueValidation),
                "{blank:?}"
            );
        }
    }

    /// `loam edit --help` ends each option's help in a whole sentence: clap drops the last
    /// full stop of a help text, and the world's ended "…, the example session is".
    #[test]
    fn the_help_texts_end_in_whole_sentences() {
        use clap::CommandFactory;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            edit: EditArgs,
        }
        let cmd = Cli::command();
        let mut checked = 0;
        for arg in cmd.get_arguments() {
            let Some(help) = arg.get_help() else {
                continue;
            };
            let help = help.to_string();
            let last = help
                .trim_end_matches(['.', ')', ' '])
                .rsplit(' ')
                .next()
                .unwrap_or_default();
            assert!(
                ![
                    "is", "are", "the", "a", "an", "of", "to", "and", "or", "with"
                ]
                .contains(&last),
                "{}: {help:?}",
                arg.get_id()
            );
            checked += 1;
        }
        assert!(checked >= 10, "{checked} help texts");
    }

    #[test]
    fn view_distances_outside_0_to_1e6_m_are_refused() {
        assert!(parse_view_distance("-1").is_err());
        assert!(parse_view_distance("nan").is_err());
        assert!(parse_view_distance("1000001").is_err());
        assert_eq!(parse_view_distance("500"), Ok(500.0));
        assert!(parse_lod_fade("-0.1").is_err());
        assert!(parse_lod_fade("nan").is_err());
        assert!(parse_lod_fade("61").is_err());
        assert_eq!(parse_lod_fade("0"), Ok(0.0));
        assert_eq!(parse_lod_fade("2.5"), Ok(2.5));
    }

    #[test]
    fn example_sessions_are_found_from_another_folder() {
        // Unit tests run in crates/cli, where there is no examples/ folder.
        assert!(!Path::new(HEADLESS_SESSION).exists());
        for rel in [HEADLESS_SESSION, DEFAULT_SESSION] {
            let found = resolve_example(Path::new(rel));
            assert!(found.is_file(), "{rel} -> {found:?}");
            assert!(found.ends_with(rel), "{found:?}");
            let up = std::path::Component::ParentDir;
            assert!(!found.components().any(|c| c == up), "{found:?}");
        }
        // Other paths are left as they are, found or not.
        for p in [
            "mine/session.json",
            "examples/missing.json",
            "/tmp/x/examples/a.json",
        ] {
            assert_eq!(resolve_example(Path::new(p)), Path::new(p));
        }
    }
}
