//! `loam render`: a session's camera and ops drawn to a PNG, headless, with the editor's
//! plugin, renderer and materials; and a world file drawn the same way (the headless editor).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use loam_bevy::{BlockScene, CameraPose, RenderJob};
use loam_field::Field;
use loam_mesh::Mesher;
use loam_store::Store;
use loam_world::World;

use crate::session::{self, Session};

/// Arguments of `loam render`.
#[derive(Debug, clap::Args)]
pub struct RenderArgs {
    /// The session file (JSON, see docs/session-format.md): terrain, ops and `camera`.
    pub session: PathBuf,
    /// The PNG to write.
    #[arg(long)]
    pub out: PathBuf,
    /// Picture size, WIDTHxHEIGHT pixels, each 16–8192.
    #[arg(long, default_value = "1280x720", value_parser = parse_size)]
    pub size: [u32; 2],
    /// Draw the view without the session's ops (for a before/after comparison).
    #[arg(long)]
    pub without_ops: bool,
    /// The mesher (mc, mc33, sn or dc; default mc).
    #[arg(long, default_value = "mc")]
    pub mesher: String,
    /// Worker threads meshing chunks (0: the cores minus one).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Frames drawn after every chunk is shown, before the picture is taken.
    #[arg(long, default_value_t = 8)]
    pub settle_frames: u32,
    /// Give up after this many seconds (1 to 86 400).
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout_s: u64,
    /// Also write the run's sounds (digs, blocks landing and breaking) to this WAV file.
    #[arg(long)]
    pub audio: Option<PathBuf>,
}

/// Parses `WIDTHxHEIGHT` (each 16–8192 pixels), for `--size` of `render` and `edit`.
pub fn parse_size(s: &str) -> Result<[u32; 2], String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("{s:?} is not WIDTHxHEIGHT"))?;
    let p = |v: &str| {
        v.trim()
            .parse::<u32>()
            .ok()
            .filter(|n| (16..=8192).contains(n))
            .ok_or_else(|| format!("{v:?} is not a size in 16..=8192"))
    };
    Ok([p(w)?, p(h)?])
}

/// The camera of `session`: its `camera`, or looking at the first op's centre (the ground at
/// the origin without ops) from 24 m south and 12 m up, kept 4 m above the ground.
pub fn camera_of(session: &Session, field: &Field) -> CameraPose {
    if let Some(c) = session.camera {
        return CameraPose {
            position: c.position,
            look_at: c.look_at,
        };
    }
    let look_at = session.ops.iter().find_map(|o| o.op.center());
    CameraPose::looking_at(field, look_at)
}

/// The mesher named `name`, once the picture `out` is known to be a PNG and its folder is
/// made.
fn mesher_and_picture(name: &str, out: &Path) -> anyhow::Result<Mesher> {
    let mesher = Mesher::from_name(name)
        .with_context(|| format!("unknown mesher {name:?} (mc, mc33, sn, dc)"))?;
    if !loam_bevy::is_png(out) {
        bail!("the picture {out:?} must name a .png file");
    }
    create_folder_of(out)?;
    Ok(mesher)
}

/// Makes the folder that will hold output `file`, if it names one, after checking that
/// `file` is not a world file (the renderer would replace it).
fn create_folder_of(file: &Path) -> anyhow::Result<()> {
    crate::output::refuse_world_file(file)?;
    match file.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(parent) => {
            std::fs::create_dir_all(parent).with_context(|| format!("creating {parent:?}"))
        }
        None => Ok(()),
    }
}

/// What [`run_world`] draws.
#[derive(Debug, Clone)]
pub struct WorldRenderArgs {
    /// The world file (read only; it must exist).
    pub world: PathBuf,
    /// The session giving the view's settings (view radius and depth) and the camera of a
    /// world without ops, as the editor takes them.
    pub session: PathBuf,
    /// The PNG to write.
    pub out: PathBuf,
    /// Picture size, pixels.
    pub size: [u32; 2],
    /// The mesher (mc, mc33, sn or dc).
    pub mesher: String,
    /// Worker threads meshing chunks (0: the cores minus one).
    pub threads: usize,
    /// Give up after this many seconds.
    pub timeout_s: u64,
}

/// Draws a world file as the editor would first show it (its field with every op, its blocks
/// at their saved poses, the camera of [`camera_of_world`]) to a PNG, headless; prints what
/// it drew and the field hash. The world is opened read only and not changed.
///
/// # Errors
/// No such world, a world in use or damaged, a bad session, mesher or output path, no
/// picture in time (no Vulkan driver).
pub fn run_world(args: &WorldRenderArgs) -> anyhow::Result<()> {
    if !args.world.is_file() {
        bail!(
            "no world file {:?}: without a display the editor only draws a world that exists \
             (on a desktop, `loam edit FILE` creates it; `loam replay SESSION --world FILE` \
             makes one from a session)",
            args.world
        );
    }
    let mesher = mesher_and_picture(&args.mesher, &args.out)?;
    let loaded = session::load(&args.session)?;
    let mut store = Store::open_read_only(&args.world)
        .with_context(|| format!("opening world {:?}", args.world))?;
    let (w, restored) = crate::world::load_with_blocks(&mut store, &args.world)?;
    let fallback = {
        let base = Field::new(loaded.session.field, Arc::new(loaded.generator))?;
        camera_of(&loaded.session, &base)
    };
    let camera =
        CameraPose::of_world(&store, &w.field, fallback).context("reading the world's last ops")?;
    drop(store);
    let settings = loaded.session.world.settings(args.threads, mesher);
    let last_seq = w.last_seq;
    let world = World::resume(w.field, w.history, last_seq, settings)?;
    let report = loam_bevy::render(RenderJob {
        world,
        ops: Vec::new(),
        camera,
        size: args.size,
        out: args.out.clone(),
        settle_frames: 8,
        timeout: Duration::from_secs(args.timeout_s),
        blocks: None,
        audio: None,
        saved_blocks: Some(restored),
    })?;
    println!(
        "rendered {} ({}x{}) of {}: {} chunks shown, log at op {}",
        args.out.display(),
        args.size[0],
        args.size[1],
        args.world.display(),
        report.chunks_shown,
        last_seq
    );
    println!(
        "blocks: {} held, {} pieces",
        report.blocks_held, report.pieces
    );
    print_main_thread(&report.main_thread);
    println!("field-hash: {}", report.field_hash);
    Ok(())
}

/// Runs `loam render`.
///
/// # Errors
/// A bad session, mesher or output path; a rejected op; no picture in time (no Vulkan
/// driver).
pub fn run(args: &RenderArgs) -> anyhow::Result<()> {
    let mesher = mesher_and_picture(&args.mesher, &args.out)?;
    let loaded = session::load(&args.session)?;
    let s = &loaded.session;
    let field = Field::new(s.field, Arc::new(loaded.generator))?;
    let camera = camera_of(s, &field);
    let world = World::new(field, s.world.settings(args.threads, mesher))?;
    let ops = if args.without_ops {
        Vec::new()
    } else {
        s.ops.iter().map(|o| (o.stroke, o.op.clone())).collect()
    };
    let blocks = match (&s.blocks, args.without_ops) {
        (Some(b), false) => {
            let base = args.session.parent().unwrap_or(Path::new("."));
            let models = b
                .load_models(base, &loam_blocks::MaterialTable::standard())
                .map_err(anyhow::Error::msg)?;
            Some(BlockScene {
                after_ops: b.after_ops,
                models,
                ops: b.ops.clone(),
                simulate_s: b.simulate_s as f32,
            })
        }
        _ => None,
    };
    if let Some(audio) = &args.audio {
        let wav = audio
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("wav"));
        if !wav {
            bail!("the sound {audio:?} must name a .wav file");
        }
        create_folder_of(audio)?;
    }
    let report = loam_bevy::render(RenderJob {
        world,
        ops,
        camera,
        size: args.size,
        out: args.out.clone(),
        settle_frames: args.settle_frames,
        timeout: Duration::from_secs(args.timeout_s),
        blocks,
        audio: args.audio.clone(),
        saved_blocks: None,
    })?;
    println!(
        "rendered {} ({}x{}): {} chunks shown, {} ops, {} frames",
        args.out.display(),
        args.size[0],
        args.size[1],
        report.chunks_shown,
        report.ops_applied,
        report.frames
    );
    println!(
        "blocks: {} held, {} pieces; {} dust puffs, {} sounds",
        report.blocks_held, report.pieces, report.puffs, report.sounds
    );
    print_main_thread(&report.main_thread);
    if let Some(a) = &args.audio {
        println!("audio: {}", a.display());
    }
    println!("field-hash: {}", report.field_hash);
    Ok(())
}

/// The main thread's time per frame after the view loaded (`loam_bevy::FrameCost`).
fn print_main_thread(c: &loam_bevy::FrameCostSummary) {
    println!(
        "main thread per frame: p50 {:.2} ms, p99 {:.2} ms over {} frame(s) without an edit; {} frame(s) showing an edit, longest {:.2} ms",
        c.steady_p50_ms, c.steady_p99_ms, c.steady_frames, c.edit_frames, c.edit_max_ms
    );
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_parse_and_bad_ones_are_refused() {
        assert_eq!(parse_size("1280x720"), Ok([1280, 720]));
        assert_eq!(parse_size("64X48"), Ok([64, 48]));
        for bad in ["1280", "0x720", "8193x10", "axb", "-5x10"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }
}
