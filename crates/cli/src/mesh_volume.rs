//! `loam mesh-volume`: mesh a raw scalar volume (CT, MR, simulation output) with any mesher.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, bail};
use loam_mesh::{Grid, MeshBuffer, Mesher, mesh_stats};
use serde::Deserialize;

use crate::export::{self, Part};

/// Sample type of a raw volume.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SampleType {
    /// Unsigned 8-bit.
    U8,
    /// Unsigned 16-bit little-endian.
    U16le,
    /// Signed 16-bit little-endian (CT in Hounsfield units).
    I16le,
    /// 32-bit float little-endian.
    F32le,
}

impl SampleType {
    fn size(self) -> usize {
        match self {
            SampleType::U8 => 1,
            SampleType::U16le | SampleType::I16le => 2,
            SampleType::F32le => 4,
        }
    }
}

/// Arguments of `loam mesh-volume`.
#[derive(Debug, clap::Args)]
pub struct MeshVolumeArgs {
    /// The raw volume, x fastest, then y, then z (or give --sidecar).
    #[arg(required_unless_present = "sidecar")]
    pub raw: Option<PathBuf>,
    /// Samples per axis, `X,Y,Z`.
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true, value_parser = parse_size)]
    pub dims: Option<Vec<u32>>,
    /// Sample type.
    #[arg(long = "type", value_enum)]
    pub sample_type: Option<SampleType>,
    /// Spacing of samples per axis, `SX,SY,SZ` (default 1,1,1); lengths are reported in its unit.
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    pub spacing: Option<Vec<f64>>,
    /// A JSON sidecar (`file`, `dims_xyz`, `dtype`, `spacing_xyz`, `iso_values`) giving the
    /// four options above and the iso level; `file` is relative to the sidecar. Any of them
    /// given as well overrides the sidecar's.
    #[arg(long)]
    pub sidecar: Option<PathBuf>,
    /// Iso level; values above it are inside. Default: the sidecar's iso value (when it
    /// names exactly one, or one called "default").
    #[arg(long, allow_hyphen_values = true)]
    pub iso: Option<f64>,
    /// Mesher: mc, mc33, sn or dc.
    #[arg(long, default_value = "mc")]
    pub mesher: String,
    /// Write the mesh here (.glb or .obj).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Mesh this many times in this process, each time into a fresh mesh buffer, and report
    /// the fastest as `seconds` (how the peer comparison times its in-process peers: best of
    /// N calls). The first call also pays the first touch of the output's memory.
    #[arg(
        long,
        default_value_t = 1,
        allow_hyphen_values = true,
        value_parser = clap::value_parser!(u32).range(1..=1000)
    )]
    pub runs: u32,
}

/// A size of `--dims`: a whole number of samples (at least 2 is checked with the others, so
/// that a sidecar's sizes get the same message).
fn parse_size(s: &str) -> Result<u32, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of samples (a whole number from 2 up)"))
}

#[derive(Debug, Deserialize)]
struct Sidecar {
    file: PathBuf,
    dims_xyz: Vec<u32>,
    dtype: String,
    #[serde(default)]
    spacing_xyz: Option<[f64; 3]>,
    #[serde(default)]
    iso_values: serde_json::Map<String, serde_json::Value>,
}

/// A volume ready to mesh.
struct Volume {
    path: PathBuf,
    dims: [u32; 3],
    sample_type: SampleType,
    spacing: [f64; 3],
    iso: f64,
}

fn resolve(args: &MeshVolumeArgs) -> anyhow::Result<Volume> {
    let mut v = Volume {
        path: PathBuf::new(),
        dims: [0; 3],
        sample_type: SampleType::U8,
        spacing: [1.0; 3],
        iso: f64::NAN,
    };
    let mut sidecar_iso = None;
    if let Some(sc) = &args.sidecar {
        let text =
            std::fs::read_to_string(sc).with_context(|| format!("reading sidecar {sc:?}"))?;
        let s: Sidecar = serde_json::from_str(&text).with_context(|| format!("sidecar {sc:?}"))?;
        v.path = sc.parent().unwrap_or(Path::new(".")).join(&s.file);
        let [x, y, z] = s.dims_xyz[..] else {
            bail!(
                "sidecar {sc:?}: dims_xyz takes three sizes, got {:?}",
                s.dims_xyz
            )
        };
        v.dims = [x, y, z];
        v.sample_type = match s.dtype.as_str() {
            "uint8" | "u8" => SampleType::U8,
            "uint16le" | "uint16" | "u16le" => SampleType::U16le,
            "int16le" | "int16" | "i16le" => SampleType::I16le,
            "float32le" | "float32" | "f32le" => SampleType::F32le,
            other => {
                bail!(
                    "sidecar {sc:?}: unsupported dtype {other:?} (uint8, uint16le, int16le, float32le)"
                )
            }
        };
        if let Some(sp) = s.spacing_xyz {
            v.spacing = sp;
        }
        let number = |name: &str, v: &serde_json::Value| {
            v.as_f64()
                .with_context(|| format!("sidecar {sc:?}: iso value {name:?} is {v}, not a number"))
        };
        // An --iso given overrides the sidecar's values: they are neither chosen nor read
        // (a sidecar naming several was refused even with --iso, which its error asks for).
        sidecar_iso = match (s.iso_values.len(), s.iso_values.get("default")) {
            _ if args.iso.is_some() => None,
            (_, Some(v)) => Some(number("default", v)?),
            (1, None) => {
                let (name, v) = s.iso_values.iter().next().expect("one");
                Some(number(name, v)?)
            }
            (0, None) => None,
            (_, None) => {
                let names: Vec<&String> = s.iso_values.keys().collect();
                bail!("sidecar {sc:?} names several iso values {names:?}: choose one with --iso")
            }
        };
    }
    if let Some(raw) = &args.raw {
        v.path = raw.clone();
    }
    if let Some(d) = &args.dims {
        let [x, y, z] = d[..] else {
            bail!("--dims takes three sizes X,Y,Z, got {d:?}")
        };
        v.dims = [x, y, z];
    }
    if let Some(t) = args.sample_type {
        v.sample_type = t;
    }
    if let Some(s) = &args.spacing {
        let [x, y, z] = s[..] else {
            bail!("--spacing takes three values SX,SY,SZ, got {s:?}")
        };
        v.spacing = [x, y, z];
    }
    if args.sidecar.is_none() && (args.dims.is_none() || args.sample_type.is_none()) {
        bail!("give --dims and --type (or --sidecar)");
    }
    v.iso = match (args.iso.or(sidecar_iso), &args.sidecar) {
        (Some(iso), _) => iso,
        (None, Some(_)) => bail!("give --iso (the sidecar has no iso value)"),
        (None, None) => bail!("give --iso (the iso level; values above it are inside)"),
    };
    if !v.iso.is_finite() {
        bail!("--iso must be finite, got {}", loam_field::Num(v.iso));
    }
    if v.dims.iter().any(|&d| d < 2) {
        bail!("every dimension must be at least 2, got {:?}", v.dims);
    }
    if v.spacing
        .iter()
        .any(|s| !(s.is_finite() && (1e-6..=1e6).contains(s)))
    {
        bail!("spacing must be in [1e-6, 1e6], got {:?}", v.spacing);
    }
    if v.iso.abs() > f64::from(f32::MAX) / 2.0 {
        bail!(
            "--iso {} is out of range (|iso| must fit an f32 field)",
            loam_field::Num(v.iso)
        );
    }
    Ok(v)
}

/// The farthest a sample may lie from the iso level (in its units): gradients of such
/// samples, squared and summed, stay finite in f32 (3 · (2 · 10¹⁸)² ≈ 1.2 · 10³⁷).
const MAX_FROM_ISO: f32 = 1e18;

/// Reads the volume and converts it to an SDF-signed field `iso − value` (docs/architecture.md:
/// outside data with "above the iso level is inside" is converted once, at the door).
fn read_field(v: &Volume) -> anyhow::Result<Vec<f32>> {
    let n = v
        .dims
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d as usize))
        .with_context(|| format!("dims {:?}: the number of samples overflows", v.dims))?;
    let expected = n
        .checked_mul(v.sample_type.size())
        .with_context(|| format!("dims {:?}: the number of bytes overflows", v.dims))?;
    // The file's size first: a wrong one is a clear error before anything is read.
    let len = std::fs::metadata(&v.path)
        .with_context(|| format!("reading {:?}", v.path))?
        .len();
    if len != expected as u64 {
        bail!(
            "{:?} has {len} bytes but {:?} × {:?} needs {expected}",
            v.path,
            v.dims,
            v.sample_type
        );
    }
    let bytes = std::fs::read(&v.path).with_context(|| format!("reading {:?}", v.path))?;
    if bytes.len() != expected {
        bail!(
            "{:?} has {} bytes but {:?} × {:?} needs {expected}",
            v.path,
            bytes.len(),
            v.dims,
            v.sample_type
        );
    }
    let iso = v.iso;
    // The largest allocation of a run (4 bytes a sample): asked for up front, so that a
    // volume too large for this machine is an error, not an abort.
    let mut field: Vec<f32> = Vec::new();
    field.try_reserve_exact(n).map_err(|e| {
        anyhow::anyhow!(
            "{:?}: {n} samples need {:.1} GiB as f32, which this machine could not allocate ({e})",
            v.path,
            (n as f64 * 4.0) / f64::from(1u32 << 30)
        )
    })?;
    match v.sample_type {
        SampleType::U8 => field.extend(bytes.iter().map(|&b| (iso - f64::from(b)) as f32)),
        SampleType::U16le => field.extend(
            bytes
                .chunks_exact(2)
                .map(|b| (iso - f64::from(u16::from_le_bytes([b[0], b[1]]))) as f32),
        ),
        SampleType::I16le => field.extend(
            bytes
                .chunks_exact(2)
                .map(|b| (iso - f64::from(i16::from_le_bytes([b[0], b[1]]))) as f32),
        ),
        SampleType::F32le => field.extend(
            bytes
                .chunks_exact(4)
                .map(|b| (iso - f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))) as f32),
        ),
    }
    drop(bytes);
    if let Some(i) = field.iter().position(|f| !f.is_finite()) {
        bail!(
            "{:?}: sample {i} is not finite (or too far from the iso level for f32)",
            v.path
        );
    }
    // The meshers square gradients (normals, QEFs) and subtract neighbours: samples this far
    // from the iso level (a "no data" fill such as −3.4e38) would overflow f32 there.
    if let Some(i) = field.iter().position(|f| f.abs() > MAX_FROM_ISO) {
        bail!(
            "{:?}: sample {i} is {} from the iso level, beyond the {MAX_FROM_ISO:e} the \
             meshers' f32 arithmetic allows (a no-data fill? clamp or mask such samples first)",
            v.path,
            loam_field::Num(f64::from(field[i].abs()))
        );
    }
    Ok(field)
}

/// Meshes `field` and scales it by `spacing` (normals by its inverse, renormalised).
pub fn mesh_scaled(
    field: &[f32],
    dims: [u32; 3],
    spacing: [f64; 3],
    mesher: Mesher,
    out: &mut MeshBuffer,
) {
    mesher.mesh(&Grid::volume(field, dims, 1.0), out);
    let s = spacing.map(|v| v as f32);
    for p in out.positions.iter_mut() {
        *p = [p[0] * s[0], p[1] * s[1], p[2] * s[2]];
    }
    if s[0] != s[1] || s[1] != s[2] {
        for n in out.normals.iter_mut() {
            let m = [n[0] / s[0], n[1] / s[1], n[2] / s[2]];
            let l = (m[0] * m[0] + m[1] * m[1] + m[2] * m[2]).sqrt();
            *n = [m[0] / l, m[1] / l, m[2] / l];
        }
    }
}

/// Whether two meshes are the same bit for bit.
fn same_mesh(a: &MeshBuffer, b: &MeshBuffer) -> bool {
    let bits = |v: &[[f32; 3]]| v.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
    a.indices == b.indices
        && a.materials == b.materials
        && bits(&a.positions) == bits(&b.positions)
        && bits(&a.normals) == bits(&b.normals)
}

/// Runs the command: prints one line of JSON with the mesh statistics.
///
/// # Errors
/// Bad options, an unreadable or wrongly sized file, a non-finite iso or sample.
pub fn run(args: &MeshVolumeArgs) -> anyhow::Result<()> {
    let mesher = Mesher::from_name(&args.mesher)
        .with_context(|| format!("unknown mesher {:?} (mc, mc33, sn, dc)", args.mesher))?;
    if let Some(out) = &args.out {
        export::check_out(out)?;
    }
    let v = resolve(args)?;
    let field = read_field(&v)?;
    let mut mesh = MeshBuffer::default();
    let mut seconds = f64::INFINITY;
    for run in 0..args.runs {
        // A fresh buffer each time; from the third run on, the allocator can hand back the
        // memory of the one freed before (as it does for a peer called in a loop).
        let mut fresh = MeshBuffer::default();
        let t = Instant::now();
        mesh_scaled(&field, v.dims, v.spacing, mesher, &mut fresh);
        seconds = seconds.min(t.elapsed().as_secs_f64());
        if run == 0 {
            mesh = fresh;
        } else {
            anyhow::ensure!(
                same_mesh(&fresh, &mesh),
                "run {} meshed differently from the first (meshing must be deterministic)",
                run + 1
            );
        }
    }
    let s = mesh_stats(&mesh.positions, &mesh.indices);
    if let Some(out) = &args.out {
        let part = Part {
            name: "volume".into(),
            offset: [0.0; 3],
            positions: &mesh.positions,
            normals: &mesh.normals,
            indices: &mesh.indices,
        };
        export::write(out, &[part])?;
    }
    let line = serde_json::json!({
        "vertices": s.vertices,
        "triangles": s.triangles,
        "area": s.area,
        "volume": s.volume,
        "boundary_edges": s.boundary_edges,
        "nonmanifold_edges": s.nonmanifold_edges,
        "degenerate_triangles": s.degenerate_triangles,
        "seconds": seconds,
    });
    use std::io::Write;
    writeln!(std::io::stdout().lock(), "{line}")?;
    Ok(())
}
