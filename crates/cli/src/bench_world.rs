//! `loam bench-world SESSION`: the chunk pipeline's benchmarks on a session's terrain —
//! initial load time and edit-to-batch-ready latency — with several worker counts.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
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
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// Digs in the edit-latency path (each at a different chunk corner while there are enough).
    #[arg(long, default_value_t = 100)]
    pub edits: usize,
    /// Radius of each dig, metres.
    #[arg(long, default_value_t = 4.0)]
    pub radius: f64,
    /// Seconds between digs (the front end runs frames of the session's length in between).
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
    /// Chunks loaded, and built (the rest are known all air or all solid).
    pub chunks_loaded: usize,
    /// Chunk jobs built in the load.
    pub chunks_built: u64,
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
    if !(args.radius > 0.0 && args.interval >= 0.0 && args.interval.is_finite()) {
        bail!("--radius must be > 0 and --interval a finite number ≥ 0");
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
        let (latency, chunks, build, apply) = edit_path(&mut world, start, args)?;
        let m = world.metrics();
        let mut sorted = loads.clone();
        sorted.sort_by(f64::total_cmp);
        rows.push(Row {
            threads: world.settings().worker_count(),
            initial_load_s: sorted[sorted.len() / 2],
            initial_load_runs_s: loads,
            chunks_loaded: m.chunks_loaded,
            chunks_built: m.chunks_built,
            edit_latency_ms: latency,
            chunks_per_edit: chunks,
            mesh_ms_per_chunk: build,
            apply_ms: apply,
        });
    }
    let mut o = std::io::stdout().lock();
    writeln!(
        o,
        "session {} (view radius {}, mesher {}), {} digs of r = {} m at chunk corners every {} s",
        args.session.display(),
        loaded.session.world.view_radius,
        mesher.name(),
        args.edits,
        args.radius,
        args.interval
    )?;
    writeln!(
        o,
        "threads  load_s  chunks_loaded  chunks_built  edit_p50_ms  edit_p99_ms  chunks/edit  build_p50_ms  apply_p50_ms"
    )?;
    for r in &rows {
        writeln!(
            o,
            "{:>7}  {:>6.2}  {:>13}  {:>12}  {:>11.2}  {:>11.2}  {:>11.0}  {:>12.2}  {:>12.2}",
            r.threads,
            r.initial_load_s,
            r.chunks_loaded,
            r.chunks_built,
            r.edit_latency_ms.p50,
            r.edit_latency_ms.p99,
            r.chunks_per_edit.p50,
            r.mesh_ms_per_chunk.p50,
            r.apply_ms.p50
        )?;
    }
    if let Some(path) = &args.json {
        std::fs::write(path, serde_json::to_string_pretty(&rows)? + "\n")
            .with_context(|| format!("writing {path:?}"))?;
    }
    Ok(())
}

/// Digs of `args.radius` centred on chunk corners (shared by 8 chunks) near the ground, on a
/// circle through the loaded area; the viewer stays put. Returns the edit latency, chunks per
/// batch and build time per chunk, measured by the world over the path alone.
fn edit_path(
    world: &mut World,
    viewer: Viewer,
    args: &BenchWorldArgs,
) -> anyhow::Result<(Percentiles, Percentiles, Percentiles, Percentiles)> {
    let vs = world.field().settings().voxel_size;
    let size = f64::from(CHUNK_CELLS) * vs;
    let [vx, _, vz] = viewer.position;
    let ring = f64::from(world.settings().view_radius.saturating_sub(1).max(1));
    world.reset_metrics();
    let mut chunks = Vec::new();
    // Every corner within (view radius − 1) chunks whose ground lies within 3/4 of the radius
    // of a layer boundary, so each dig changes the surface, in a fixed scrambled order.
    let r = ring as i32;
    let mut corners = Vec::new();
    for cz in -r..=r {
        for cx in -r..=r {
            if cx * cx + cz * cz > r * r {
                continue;
            }
            let x = ((vx / size).round() + f64::from(cx)) * size;
            let z = ((vz / size).round() + f64::from(cz)) * size;
            let h = world.field().generator().surface_height(x, z);
            let y = (h / size).round() * size;
            if (h - y).abs() <= 0.75 * args.radius {
                let scramble = (cx.wrapping_mul(73_856_093) ^ cz.wrapping_mul(19_349_663)) as u32;
                corners.push((scramble, [x, y, z]));
            }
        }
    }
    corners.sort_by_key(|c| c.0);
    if corners.is_empty() {
        bail!("no chunk corner near the ground within the view radius");
    }
    let mut apply_ms = Vec::new();
    for i in 0..args.edits {
        let [x, y, z] = corners[i % corners.len()].1;
        let op = EditOp::Sphere {
            mode: CsgMode::Subtract,
            center: [x, y, z],
            radius: args.radius,
            material: 0,
        };
        let t = Instant::now();
        world.apply(&op)?;
        apply_ms.push(t.elapsed().as_secs_f64() * 1e3);
        let u = Instant::now();
        world.update(&[viewer]);
        let update_ms = u.elapsed().as_secs_f64() * 1e3;
        if !world.wait_idle(IDLE_TIMEOUT) {
            bail!("edit {i} never finished");
        }
        let n: usize = world
            .pull(PullBudget::ALL)
            .iter()
            .map(|u| match u {
                Update::Group(g) if g.kind == BatchKind::Edit => g.meshes.len(),
                _ => 0,
            })
            .sum();
        chunks.push(n as f64);
        if std::env::var_os("LOAM_BENCH_DEBUG").is_some() {
            eprintln!(
                "dig {i} at ({x}, {y}, {z}): {n} chunks, apply {:.2} ms, update {update_ms:.2} ms, all {:.2} ms",
                apply_ms[i],
                t.elapsed().as_secs_f64() * 1e3
            );
        }
        std::thread::sleep(Duration::from_secs_f64(args.interval).saturating_sub(t.elapsed()));
    }
    let m = world.metrics();
    Ok((
        m.edit_latency_ms,
        Percentiles::of(&chunks),
        m.mesh_ms_per_chunk,
        Percentiles::of(&apply_ms),
    ))
}
