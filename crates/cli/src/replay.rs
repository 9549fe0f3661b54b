//! `loam replay SESSION --out DIR`: run a session's timeline through the chunk pipeline,
//! write a summary and the metrics, and print the field hash.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::builder::TypedValueParser as _;
use loam_field::{Field, SampleBox};
use loam_mesh::Mesher;
use loam_world::Metrics;
use serde::Serialize;

use crate::chunk_meshes::{self, ChunkMeshStats};
use crate::export;
use crate::pipeline::{self, Options};
use crate::session::{self, GeneratorSpec};

/// Arguments of `loam replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The session file (JSON, see docs/session-format.md).
    pub session: PathBuf,
    /// Folder for the outputs (`summary.json`, and `chunks.glb` with --mesher); created if
    /// missing.
    #[arg(long)]
    pub out: PathBuf,
    /// The pipeline's mesher (mc, mc33, sn or dc; default mc). When given, the meshes of every
    /// chunk the session's edits changed are also written to `chunks.glb`, one node per chunk
    /// at its origin.
    #[arg(long)]
    pub mesher: Option<String>,
    /// Worker threads meshing chunks, 1–256; 0 (the default) means the cores minus one, at
    /// least 1. The result is the same with any count.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u16).range(0..=256).map(usize::from))]
    pub threads: usize,
    /// Write the pipeline's metrics to this file as one JSON object (docs/metrics.md).
    #[arg(long)]
    pub metrics_json: Option<PathBuf>,
    /// Run frames back to back instead of pacing them at the session's frame length.
    #[arg(long)]
    pub fast: bool,
    /// Check that every chunk's mesh equals the mesh built from a fresh replay of the ops
    /// (incremental equals from scratch); fail if one differs.
    #[arg(long)]
    pub verify: bool,
    /// Also write the result as a world file (SQLite; must not exist yet): every op is
    /// appended as it is applied, durably, and the end is baked (see `loam world`).
    #[arg(long)]
    pub world: Option<PathBuf>,
    /// Replay with levels of detail out to this many metres, as the editor draws them (level
    /// 0 within 128 m at 1 m voxels); `open_edges` then counts cracks across levels. 0 (the
    /// default) keeps the session's level-0 view, and so does a distance within it (a note
    /// on stderr says so).
    #[arg(long, default_value_t = 0.0, value_parser = crate::edit::parse_view_distance)]
    pub view_distance: f64,
}

/// Wall-clock times of the replay's phases, milliseconds.
#[derive(Debug, Serialize)]
pub struct Timings {
    /// Reading and parsing the session, decoding a heightmap, building the generator.
    pub load: f64,
    /// The initial load of the chunks around the viewers.
    pub initial_load: f64,
    /// Running the timeline (ops, frames) until every chunk was built; includes `apply`.
    pub timeline: f64,
    /// Inside `World::apply`, over every op.
    pub apply: f64,
    /// Computing the field hash.
    pub hash: f64,
    /// All of it.
    pub total: f64,
}

/// What `summary.json` holds: a flat JSON record of one replay, whose keys scripts and CI
/// read by name (`open_edges`, `field_hash`, …). Its parts are nested here by concern and
/// flattened into the file, so the keys and their order are those of one flat record.
#[derive(Debug, Serialize)]
pub struct Summary {
    /// The session replayed and its field's settings.
    #[serde(flatten)]
    pub source: SourceSummary,
    /// What the ops did to the field.
    #[serde(flatten)]
    pub edits: EditSummary,
    /// Phase timings.
    pub timings_ms: Timings,
    /// The field hash (docs/architecture.md), 64 hex digits.
    pub field_hash: String,
    /// The chunk pipeline and the view it showed.
    #[serde(flatten)]
    pub view: ViewSummary,
    /// The pipeline's metrics.
    pub metrics: Metrics,
    /// Mesh statistics of the chunks the edits changed, with --mesher.
    pub meshes: Option<ChunkMeshStats>,
}

/// The session replayed ([`Summary::source`]).
#[derive(Debug, Serialize)]
pub struct SourceSummary {
    /// The session file as given.
    pub session: PathBuf,
    /// Its format version.
    pub format_version: u32,
    /// `"noise"` or `"heightmap"`.
    pub generator: &'static str,
    /// BLAKE3 of the heightmap file, if any.
    pub heightmap_blake3: Option<String>,
    /// Voxel size, metres.
    pub voxel_size: f64,
    /// Narrow band, metres.
    pub band_m: f64,
}

/// What the ops did ([`Summary::edits`]).
#[derive(Debug, Serialize)]
pub struct EditSummary {
    /// Ops applied.
    pub ops: usize,
    /// Samples changed, summed over ops.
    pub samples_changed: u64,
    /// The box of every changed sample (inclusive sample indices), or null.
    pub changed_box: Option<SampleBox>,
    /// Bricks at the end.
    pub bricks: usize,
    /// Bytes of brick storage at the end.
    pub brick_bytes: usize,
}

/// The chunk pipeline and the view it showed ([`Summary::view`]).
#[derive(Debug, Serialize)]
pub struct ViewSummary {
    /// The mesher asked for (`--mesher`, default mc); what drew the view is
    /// [`ViewSummary::shown_meshers`].
    pub mesher: &'static str,
    /// Worker threads.
    pub threads: usize,
    /// Levels of detail (0: level 0 only, as the session's view radius says).
    pub lod_levels: u8,
    /// Frames run after the initial load.
    pub frames: u64,
    /// Chunks shown at the end (with a non-empty mesh).
    pub chunks_shown: usize,
    /// Open edges (cracks) of the shown meshes welded by position, not on the outer edge of
    /// the view ([`loam_world::Shown::open_edges`]); 0 for a crack-free view.
    pub open_edges: usize,
    /// Edges of the shown meshes, every level welded by exact position, used by more than
    /// two triangles; 0 for a manifold view.
    pub nonmanifold_edges: usize,
    /// The meshers that built the shown chunks, sorted by name (`["mc"]`, …): with levels
    /// of detail, what really drew every level, whatever was asked.
    pub shown_meshers: Vec<&'static str>,
    /// Whether --verify compared every chunk with a from-scratch build (and all matched).
    pub verified: bool,
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}

/// Runs the replay.
///
/// # Errors
/// A bad session, a rejected op (named by its index; nothing is written then), a mesh that
/// differs from scratch under --verify, or a failure to write the outputs.
pub fn run(args: &ReplayArgs) -> anyhow::Result<()> {
    let start = Instant::now();
    let mesher = match &args.mesher {
        Some(name) => Mesher::from_name(name)
            .with_context(|| format!("unknown mesher {name:?} (mc, mc33, sn, dc)"))?,
        None => Mesher::MarchingCubes,
    };
    if let Some(file) = &args.metrics_json {
        // Not one of the run's own outputs: it would replace it after it was written.
        let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        for own in ["summary.json", "chunks.glb"] {
            if abs(file) == abs(&args.out.join(own)) {
                bail!("--metrics-json {file:?} is the run's own {own}; name another file");
            }
        }
    }
    let loaded = session::load(&args.session)?;
    if let Some(parent) = args.metrics_json.as_ref().and_then(|f| f.parent())
        && !parent.as_os_str().is_empty()
    {
        std::fs::create_dir_all(parent).with_context(|| format!("creating {parent:?}"))?;
    }
    let generator_kind = match loaded.session.generator {
        GeneratorSpec::Noise { .. } => "noise",
        GeneratorSpec::Heightmap { .. } => "heightmap",
    };
    let base = Field::new(loaded.session.field, Arc::new(loaded.generator))?;
    let load = ms(start);

    let t = Instant::now();
    let opts = Options {
        threads: args.threads,
        mesher,
        realtime: !args.fast,
        pull_chunks: 64,
        progress_after_frames: 600,
        view_distance: args.view_distance,
    };
    let mut store = match &args.world {
        Some(path) => Some(crate::world::create(
            path,
            &loaded.session,
            loaded.heightmap_blake3.as_deref(),
        )?),
        None => None,
    };
    let replayed = {
        let mut append = |e: &loam_field::LogEntry| -> anyhow::Result<()> {
            if let Some(s) = store.as_mut() {
                s.append(e).context("appending to the world file")?;
            }
            Ok(())
        };
        pipeline::run(base.clone(), &loaded.session, opts, &mut append)
            .with_context(|| format!("replaying {:?}", args.session))
    }
    .and_then(|run| {
        if let Some(s) = store.as_mut() {
            let last = run.world.log().len() as u64;
            s.bake(run.world.field(), run.world.history(), last)
                .context("baking the world file")?;
        }
        Ok(run)
    });
    let run = match replayed {
        Ok(run) => run,
        Err(e) => {
            // The world file is this run's (`create` refuses one already there): a session
            // that fails part-way leaves none behind, as a rejected op writes nothing.
            if let (Some(s), Some(path)) = (store.take(), &args.world) {
                drop(s);
                loam_store::remove_world_files(path);
                return Err(e.context(format!("{path:?} was not kept")));
            }
            return Err(e);
        }
    };
    let timeline = ms(t);
    let field = run.world.field();
    let metrics = run.world.metrics();

    let t = Instant::now();
    let hash = field.hash();
    let hash_ms = ms(t);

    if args.verify {
        verify(&base, &run)?;
    }
    let vs = field.settings().voxel_size;
    let edges = run.shown.open_edges(&run.world.view(), vs);
    if args.view_distance > 0.0 && run.world.settings().lod_levels == 0 {
        eprintln!(
            "note: --view-distance {} m lies within the level-0 view: no level of detail is \
             needed, so the run has none (a larger distance adds levels)",
            args.view_distance
        );
    }
    let meshers: Vec<Mesher> = run.shown.meshers().into_iter().collect();
    let mut shown_meshers: Vec<&'static str> = meshers.iter().map(|m| m.name()).collect();
    shown_meshers.sort_unstable();
    let edited: Vec<_> = run
        .edited
        .iter()
        .filter_map(|k| run.shown.get(*k))
        .map(|m| (m.key, m.origin, &*m.mesh))
        .collect();
    // What built the edited chunks' meshes: with levels of detail MC33 is drawn by Marching
    // Cubes (the statistics say so rather than carry the asked mesher's name).
    let built_by = match meshers[..] {
        [only] => only,
        _ => mesher,
    };
    if built_by != mesher {
        eprintln!(
            "note: --mesher {} has no level seams of its own yet: with levels of detail every \
             level is drawn by Marching Cubes (Transvoxel); --view-distance 0 shows {}",
            mesher.name(),
            mesher.name()
        );
    }
    let meshes = args
        .mesher
        .as_ref()
        .map(|_| chunk_meshes::stats(&edited, run.edited.len(), built_by, vs));
    let summary = Summary {
        source: SourceSummary {
            session: args.session.clone(),
            format_version: loaded.session.version,
            generator: generator_kind,
            heightmap_blake3: loaded.heightmap_blake3,
            voxel_size: vs,
            band_m: field.settings().band(),
        },
        edits: EditSummary {
            ops: loaded.session.ops.len(),
            samples_changed: run.samples_changed,
            changed_box: run.changed_box,
            bricks: field.brick_count(),
            brick_bytes: field.brick_bytes(),
        },
        timings_ms: Timings {
            load,
            initial_load: metrics.initial_load_s.unwrap_or(0.0) * 1e3,
            timeline,
            apply: run.apply_ms,
            hash: hash_ms,
            total: ms(start),
        },
        field_hash: hash.to_string(),
        view: ViewSummary {
            mesher: mesher.name(),
            threads: run.world.settings().worker_count(),
            lod_levels: run.world.settings().lod_levels,
            frames: run.frames,
            chunks_shown: run.shown.len(),
            open_edges: edges.inside,
            nonmanifold_edges: edges.nonmanifold,
            shown_meshers,
            verified: args.verify,
        },
        metrics,
        meshes,
    };
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {:?}", args.out))?;
    if summary.meshes.is_some() {
        export::write(&args.out.join("chunks.glb"), &chunk_meshes::parts(&edited))?;
    }
    let path = args.out.join("summary.json");
    crate::output::write_whole(
        &path,
        (serde_json::to_string_pretty(&summary)? + "\n").as_bytes(),
    )?;
    if let Some(file) = &args.metrics_json {
        // The pipeline's metrics and the crack count of the shown view.
        let mut json = serde_json::to_value(&summary.metrics)?;
        if let Some(o) = json.as_object_mut() {
            o.insert("open_edges".into(), summary.view.open_edges.into());
            o.insert(
                "nonmanifold_edges".into(),
                summary.view.nonmanifold_edges.into(),
            );
            o.insert(
                "shown_meshers".into(),
                serde_json::to_value(&summary.view.shown_meshers)?,
            );
        }
        crate::output::write_whole(file, (serde_json::to_string(&json)? + "\n").as_bytes())?;
    }
    print(&summary, &args.out, &path)?;
    Ok(())
}

/// Incremental equals from scratch: every loaded chunk's shown mesh equals the mesh of a fresh
/// replay of the ops.
fn verify(base: &Field, run: &pipeline::Run) -> anyhow::Result<()> {
    // Replay the world's op log (undo and redo included) through a fresh history.
    let mut fresh = base.clone();
    let mut history = loam_field::History::new(run.world.settings().history_budget);
    for e in run.world.log() {
        history.apply(&mut fresh, e.stroke, &e.op)?;
    }
    if fresh.hash() != run.world.field().hash() {
        bail!("replaying the op log does not give the live field");
    }
    if run.world.settings().lod_levels > 0 {
        if let Err(key) = loam_world::verify_shown_lod(&run.world, &run.shown, &fresh) {
            bail!("chunk {key:?}: the pipeline's mesh differs from a from-scratch build");
        }
    } else if let Err(key) = loam_world::verify_shown(&run.world, &run.shown, &fresh) {
        bail!("chunk {key:?}: the pipeline's mesh differs from a from-scratch build");
    }
    Ok(())
}

fn print(s: &Summary, out: &std::path::Path, path: &std::path::Path) -> anyhow::Result<()> {
    let mut o = std::io::stdout().lock();
    let m = &s.metrics;
    let t = &s.timings_ms;
    writeln!(
        o,
        "session   {} ({} terrain, voxel {} m)",
        s.source.session.display(),
        s.source.generator,
        s.source.voxel_size
    )?;
    writeln!(
        o,
        "ops       {} applied, {} samples changed (p50 {:.0}, p99 {:.0} per op)",
        s.edits.ops,
        s.edits.samples_changed,
        m.samples_changed_per_edit.p50,
        m.samples_changed_per_edit.p99
    )?;
    writeln!(
        o,
        "bricks    {} ({:.1} MiB)",
        s.edits.bricks,
        s.edits.brick_bytes as f64 / (1 << 20) as f64
    )?;
    writeln!(
        o,
        "pipeline  {} with {} thread{}{}: {} chunks loaded, {} shown, initial load {:.2} s, {} frames",
        if s.view.lod_levels > 0 {
            "transvoxel"
        } else {
            s.view.mesher
        },
        s.view.threads,
        if s.view.threads == 1 { "" } else { "s" },
        if s.view.lod_levels > 0 {
            format!(", {} levels of detail", s.view.lod_levels)
        } else {
            String::new()
        },
        m.chunks_loaded,
        s.view.chunks_shown,
        m.initial_load_s.unwrap_or(0.0),
        s.view.frames
    )?;
    writeln!(
        o,
        "cracks    {} open edges inside the view, {} non-manifold edges; drawn by {}",
        s.view.open_edges,
        s.view.nonmanifold_edges,
        s.view.shown_meshers.join(", ")
    )?;
    writeln!(
        o,
        "latency   edit to batch ready p50 {:.2} ms, p99 {:.2} ms; chunk build p50 {:.2} ms, p99 {:.2} ms",
        m.edit_latency_ms.p50,
        m.edit_latency_ms.p99,
        m.mesh_ms_per_chunk.p50,
        m.mesh_ms_per_chunk.p99
    )?;
    writeln!(
        o,
        "queue     max depth {}, {} stale results dropped, {} jobs superseded, {} chunks waiting",
        m.queue_depth_max, m.stale_dropped, m.jobs_superseded, m.chunks_waiting
    )?;
    writeln!(
        o,
        "timings   load {:.1} ms, timeline {:.1} ms (apply {:.1} ms), hash {:.1} ms",
        t.load, t.timeline, t.apply, t.hash
    )?;
    if let Some(mm) = &s.meshes {
        writeln!(
            o,
            "meshes    {}: {} edited chunks ({} with triangles), {} vertices, {} triangles, {:.1} m²",
            mm.mesher, mm.chunks, mm.nonempty_chunks, mm.vertices, mm.triangles, mm.area_m2
        )?;
        writeln!(
            o,
            "welded    {} open edges (outline of the meshed region), {} non-manifold",
            mm.welded_boundary_edges, mm.welded_nonmanifold_edges
        )?;
        writeln!(o, "glb       {}", out.join("chunks.glb").display())?;
    }
    if s.view.verified {
        writeln!(o, "verify    every chunk equals its from-scratch mesh")?;
    }
    writeln!(o, "summary   {}", path.display())?;
    writeln!(o, "field-hash: {}", s.field_hash)?;
    Ok(())
}
