//! `loam bench-world SESSION`: the chunk pipeline's benchmarks on a session's terrain —
//! initial load time and edit-to-batch-ready latency — with several worker counts.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::builder::TypedValueParser as _;
use loam_field::{CHUNK_CELLS, CsgMode, EditOp, Field};
use loam_mesh::Mesher;
use loam_world::{BatchKind, IDLE_TIMEOUT, Percentiles, PullBudget, Update, Viewer, World};
use serde::Serialize;

use crate::pipeline::viewer_paths;
use crate::session;

/// Arguments of `loam bench-world`.
#[derive(Debug, clap::Args)]
pub struct BenchWorldArgs {
    /// The session whose terrain, field settings and `world` settings are used (its ops are
    /// not applied; its first viewer's start is the load point).
    pub session: PathBuf,
    /// Worker counts to measure, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2")]
    pub threads: Vec<usize>,
    /// Initial loads per worker count (the median is reported).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..).map(usize::from))]
    pub runs: usize,
    /// Digs along the walk.
    #[arg(long, default_value_t = 100)]
    pub edits: usize,
    /// Radius of each dig, metres.
    #[arg(long, default_value_t = 4.0)]
    pub radius: f64,
    /// Seconds between digs (the front end runs frames of the session's length in between;
    /// 0 to 3 600).
    #[arg(long, default_value_t = 0.1)]
    pub interval: f64,
    /// The mesher.
    #[arg(long, default_value = "mc")]
    pub mesher: String,
    /// Also write the results as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

/// Results for one worker count.
#[derive(Debug, Serialize)]
pub struct Row {
    /// Worker threads.
    pub threads: usize,
    /// Median seconds from the first update until every chunk was built.
    pub initial_load_s: f64,
    /// All runs' load times, seconds.
    pub initial_load_runs_s: Vec<f64>,
    /// Chunks loaded by the initial load (meshed, or known all air or all solid).
    pub chunks_loaded: usize,
    /// Chunk jobs built in the initial load (the loaded chunks less those known all air or
    /// all solid).
    pub chunks_built: u64,
    /// Chunk jobs built during the digs (current or stale; chunks a dig reaches, and any
    /// that the viewer's frames load).
    pub edit_chunks_built: u64,
    /// Edit-to-batch-ready latency over the path, ms.
    pub edit_latency_ms: Percentiles,
    /// Chunks per edit batch.
    pub chunks_per_edit: Percentiles,
    /// Worker time per chunk job in the edits, ms.
    pub mesh_ms_per_chunk: Percentiles,
    /// Time inside `World::apply` per dig (part of the latency), ms.
    pub apply_ms: Percentiles,
}

/// Runs the benchmark.
///
/// # Errors
/// A bad session or mesher, or a pipeline that does not finish.
pub fn run(args: &BenchWorldArgs) -> anyhow::Result<()> {
    let mesher = Mesher::from_name(&args.mesher)
        .with_context(|| format!("unknown mesher {:?} (mc, mc33, sn, dc)", args.mesher))?;
    let finite = |v: f64| v.is_finite() && v >= 0.0;
    if !(args.radius > 0.0 && finite(args.radius) && finite(args.interval)) {
        bail!("--radius must be > 0 and --interval finite and ≥ 0");
    }
    // Frames of the walk are simulated, not slept: an hour between digs is already ~10⁵
    // frames per dig (it hung without a word at 1e300).
    if args.interval > 3600.0 {
        bail!("--interval is at most 3600 s");
    }
    let loaded = session::load(&args.session)?;
    let field = Field::new(loaded.session.field, Arc::new(loaded.generator))?;
    let start = viewer_paths(&loaded.session, &field)[0].at(0.0);
    let mut rows = Vec::new();
    for &threads in &args.threads {
        let settings = loaded.session.world.settings(threads, mesher);
        let mut loads = Vec::new();
        let mut world = None;
        for _ in 0..args.runs.max(1) {
            let mut w = World::new(field.clone(), settings)?;
            w.update(&[start]);
            if !w.wait_idle(IDLE_TIMEOUT) {
                bail!("initial load did not finish");
            }
            loads.push(w.metrics().initial_load_s.unwrap_or(f64::NAN));
            world = Some(w);
        }
        let mut world = world.expect("one run");
        world.pull(PullBudget::ALL);
        // The load's counts: `edit_path` resets the metrics to measure the digs alone.
        let load = world.metrics();
        let frame_s = loaded.session.world.frame_s;
        let (latency, chunks, build, apply) = edit_path(&mut world, start, args, frame_s)?;
        let m = world.metrics();
        let mut sorted = loads.clone();
        sorted.sort_by(f64::total_cmp);
        rows.push(Row {
            threads: world.settings().worker_count(),
            initial_load_s: sorted[sorted.len() / 2],
            initial_load_runs_s: loads,
            chunks_loaded: load.chunks_loaded,
            chunks_built: load.chunks_built,
            edit_chunks_built: m.chunks_built,
            edit_latency_ms: latency,
            chunks_per_edit: chunks,
            mesh_ms_per_chunk: build,
            apply_ms: apply,
        });
    }
    let mut o = std::io::stdout().lock();
    writeln!(
        o,
        "session {} (view radius {}, mesher {}); {} digs of r = {} m at 8-chunk corners every {} s",
        args.session.display(),
        loaded.session.world.view_radius,
        mesher.name(),
        args.edits,
        args.radius,
        args.interval
    )?;
    writeln!(
        o,
        "threads  load_s  chunks_loaded  chunks_built  edit_builds  edit_p50_ms  edit_p99_ms  chunks/edit  build_p50_ms  apply_p50_ms  apply_p99_ms"
    )?;
    for r in &rows {
        writeln!(
            o,
            "{:>7}  {:>6.2}  {:>13}  {:>12}  {:>11}  {:>11.2}  {:>11.2}  {:>11.0}  {:>12.2}  {:>12.2}  {:>12.2}",
            r.threads,
            r.initial_load_s,
            r.chunks_loaded,
            r.chunks_built,
            r.edit_chunks_built,
            r.edit_latency_ms.p50,
            r.edit_latency_ms.p99,
            r.chunks_per_edit.p50,
            r.mesh_ms_per_chunk.p50,
            r.apply_ms.p50,
            r.apply_ms.p99
        )?;
    }
    if let Some(path) = &args.json {
        crate::output::write_whole(
            path,
            (serde_json::to_string_pretty(&rows)? + "\n").as_bytes(),
        )?;
    }
    Ok(())
}

/// The viewer stands at the load point while the front end runs frames of the session's
/// length; every `args.interval` s it digs a ball of `args.radius` centred on an 8-chunk
/// corner, the corners taken along a spiral around the viewer (up to 6 chunks out), each at
/// the chunk layer boundary nearest the ground if that is within 3/4 of the radius (a dig
/// into the surface), else at the one below the ground (a dig underground). Returns edit
/// latency, chunks per edit batch, build time per chunk and time inside `World::apply`,
/// measured over the digs alone.
fn edit_path(
    world: &mut World,
    viewer: Viewer,
    args: &BenchWorldArgs,
    frame_s: f64,
) -> anyhow::Result<(Percentiles, Percentiles, Percentiles, Percentiles)> {
    let vs = world.field().settings().voxel_size;
    let size = f64::from(CHUNK_CELLS) * vs;
    let corners = spiral_corners(world, viewer, size, args.radius);
    world.reset_metrics();
    let (mut chunks, mut apply_ms) = (Vec::new(), Vec::new());
    let mut frame = 0u64;
    let begin = Instant::now();
    for i in 0..args.edits {
        let op = EditOp::Sphere {
            blend: 0.0,
            mode: CsgMode::Subtract,
            center: corners[i % corners.len()],
            radius: args.radius,
            material: 0,
        };
        let a = Instant::now();
        world.apply(&op)?;
        apply_ms.push(a.elapsed().as_secs_f64() * 1e3);
        // Frames until the next dig.
        let next = (i + 1) as f64 * args.interval;
        loop {
            world.update(&[viewer]);
            for u in world.pull(PullBudget::chunks(64)) {
                if let Update::Group(g) = u
                    && g.kind == BatchKind::Edit
                {
                    chunks.push(g.meshes.len() as f64);
                }
            }
            frame += 1;
            let t = frame as f64 * frame_s;
            std::thread::sleep(Duration::from_secs_f64(t).saturating_sub(begin.elapsed()));
            if t >= next {
                break;
            }
        }
    }
    if !world.wait_idle(IDLE_TIMEOUT) {
        bail!("the edits never finished");
    }
    // The batches of the last digs (all of them with `--interval 0`) come after the loop.
    for u in world.pull(PullBudget::ALL) {
        if let Update::Group(g) = u
            && g.kind == BatchKind::Edit
        {
            chunks.push(g.meshes.len() as f64);
        }
    }
    let m = world.metrics();
    Ok((
        m.edit_latency_ms,
        Percentiles::of(&chunks),
        m.mesh_ms_per_chunk,
        Percentiles::of(&apply_ms),
    ))
}

/// 8-chunk corners on a square spiral around the viewer, out to 6 chunks: at the layer
/// boundary nearest the ground when that is within 3/4 of `radius`, else the one below it.
fn spiral_corners(world: &World, viewer: Viewer, size: f64, radius: f64) -> Vec<[f64; 3]> {
    let g = world.field().generator();
    let (cx, cz) = (
        (viewer.position[0] / size).round(),
        (viewer.position[2] / size).round(),
    );
    let mut out = Vec::new();
    let (mut x, mut z, mut dx, mut dz) = (0i32, 0i32, 1i32, 0i32);
    let mut leg = 1;
    while out.len() < 169 {
        for _ in 0..2 {
            for _ in 0..leg {
                let (wx, wz) = ((cx + f64::from(x)) * size, (cz + f64::from(z)) * size);
                let h = g.surface_height(wx, wz);
                let near = (h / size).round() * size;
                let y = if (h - near).abs() <= 0.75 * radius {
                    near
                } else {
                    (h / size).floor() * size
                };
                out.push([wx, y, wz]);
                x += dx;
                z += dz;
            }
            (dx, dz) = (-dz, dx);
        }
        leg += 1;
    }
    out
}
