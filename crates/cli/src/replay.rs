//! `loam replay SESSION --out DIR`: apply a session's ops to its world, write a summary and
//! print the field hash.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use loam_field::{Field, SampleBox};
use loam_mesh::Mesher;
use serde::Serialize;

use crate::chunk_meshes::{self, ChunkMeshStats};
use crate::export;
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
    /// Also mesh every chunk the session's edits changed (mc, mc33, sn or dc) and write them
    /// to `chunks.glb`, one node per chunk at its origin.
    #[arg(long)]
    pub mesher: Option<String>,
}

/// Wall-clock times of the replay's phases, milliseconds.
#[derive(Debug, Serialize)]
pub struct Timings {
    /// Reading and parsing the session, decoding a heightmap, building the generator.
    pub load: f64,
    /// Applying every op.
    pub apply: f64,
    /// Computing the field hash.
    pub hash: f64,
    /// All of it.
    pub total: f64,
}

/// What `summary.json` holds.
#[derive(Debug, Serialize)]
pub struct Summary {
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
    /// Phase timings.
    pub timings_ms: Timings,
    /// The field hash (DESIGN.md), 64 hex digits.
    pub field_hash: String,
    /// Chunk mesh statistics, with --mesher.
    pub meshes: Option<ChunkMeshStats>,
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}

/// Runs the replay.
///
/// # Errors
/// A bad session, a rejected op (named by its index; nothing is written then), or a failure to
/// write the summary.
pub fn run(args: &ReplayArgs) -> anyhow::Result<()> {
    let start = Instant::now();
    let mesher = match &args.mesher {
        Some(name) => Some(
            Mesher::from_name(name)
                .with_context(|| format!("unknown mesher {name:?} (mc, mc33, sn, dc)"))?,
        ),
        None => None,
    };
    let loaded = session::load(&args.session)?;
    let generator_kind = match loaded.session.generator {
        GeneratorSpec::Noise { .. } => "noise",
        GeneratorSpec::Heightmap { .. } => "heightmap",
    };
    let mut field = Field::new(loaded.session.field, Arc::new(loaded.generator))?;
    let load = ms(start);

    let t = Instant::now();
    let (mut samples_changed, mut changed_box) = (0u64, None::<SampleBox>);
    let mut chunks = BTreeSet::new();
    for (i, op) in loaded.session.ops.iter().enumerate() {
        let out = field
            .apply(op)
            .with_context(|| format!("op {i} of {:?} ({op:?})", args.session))?;
        samples_changed += out.samples_changed;
        if let Some(b) = out.changed {
            changed_box = Some(changed_box.map_or(b, |a| a.union(b)));
            if mesher.is_some() {
                chunk_meshes::chunks_reading(&b, &mut chunks);
            }
        }
    }
    let apply = ms(t);

    let t = Instant::now();
    let hash = field.hash();
    let hash_ms = ms(t);

    let meshed = mesher.map(|m| chunk_meshes::mesh_chunks(&field, &chunks, m));
    let summary = Summary {
        session: args.session.clone(),
        format_version: loaded.session.version,
        generator: generator_kind,
        heightmap_blake3: loaded.heightmap_blake3,
        voxel_size: field.settings().voxel_size,
        band_m: field.settings().band(),
        ops: loaded.session.ops.len(),
        samples_changed,
        changed_box,
        bricks: field.brick_count(),
        brick_bytes: field.brick_bytes(),
        timings_ms: Timings {
            load,
            apply,
            hash: hash_ms,
            total: ms(start),
        },
        field_hash: hash.to_string(),
        meshes: None,
    };
    let mut summary = summary;
    if let Some(m) = &meshed {
        let glb = args.out.join("chunks.glb");
        std::fs::create_dir_all(&args.out).with_context(|| format!("creating {:?}", args.out))?;
        export::write(&glb, &m.parts(field.settings().voxel_size))?;
        summary.meshes = Some(m.stats.clone());
    }
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {:?}", args.out))?;
    let path = args.out.join("summary.json");
    std::fs::write(&path, serde_json::to_string_pretty(&summary)? + "\n")
        .with_context(|| format!("writing {path:?}"))?;

    let mut o = std::io::stdout().lock();
    let s = &summary;
    writeln!(
        o,
        "session   {} ({} terrain, voxel {} m)",
        s.session.display(),
        s.generator,
        s.voxel_size
    )?;
    writeln!(
        o,
        "ops       {} applied, {} samples changed",
        s.ops, s.samples_changed
    )?;
    writeln!(
        o,
        "bricks    {} ({:.1} MiB)",
        s.bricks,
        s.brick_bytes as f64 / (1 << 20) as f64
    )?;
    writeln!(
        o,
        "timings   load {load:.1} ms, apply {apply:.1} ms, hash {hash_ms:.1} ms"
    )?;
    if let Some(m) = &s.meshes {
        writeln!(
            o,
            "meshes    {}: {} chunks ({} with triangles), {} vertices, {} triangles, {:.1} m², fill {:.1} ms, mesh {:.1} ms",
            m.mesher,
            m.chunks,
            m.nonempty_chunks,
            m.vertices,
            m.triangles,
            m.area_m2,
            m.fill_ms,
            m.mesh_ms
        )?;
        writeln!(
            o,
            "welded    {} open edges (outline of the meshed region), {} non-manifold",
            m.welded_boundary_edges, m.welded_nonmanifold_edges
        )?;
        writeln!(o, "glb       {}", args.out.join("chunks.glb").display())?;
    }
    writeln!(o, "summary   {}", path.display())?;
    writeln!(o, "field-hash: {hash}")?;
    Ok(())
}
