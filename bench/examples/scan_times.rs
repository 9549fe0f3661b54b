//! Times every mesher on the real scans of `data/volumes` the way `loam mesh-volume` times
//! itself (its `seconds`: a fresh mesh buffer, meshing, normals and scaling by the spacing, no
//! I/O), one thread. Prints one line of JSON per scan and mesher: `cold`, the first call of the
//! process after reading the scan (what one `loam mesh-volume` run measures), then the best of
//! RUNS calls with a fresh buffer (`seconds`) and with a reused, grown one. `tools/scan_times.py`
//! runs it side by side with the Python peers (the `loam` binary itself links Bevy, which is
//! slow to build), one process per scan and mesher.
//!
//! Run: `cargo run --release -p loam-bench --example scan_times [RUNS [MESHER [SCAN]]]`, SCAN
//! `head`, `hydrogen` or the path of a volume's JSON sidecar (`data/volumes`' format).

use std::time::Instant;

/// `loam`'s allocator (crates/cli/src/main.rs): a fresh mesh buffer's first touch of its memory
/// costs what it costs there.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use loam_bench::hashes::{read_scan, read_sidecar};
use loam_mesh::{Grid, MeshBuffer, Mesher};

/// `loam mesh-volume`'s `mesh_scaled` (crates/cli/src/mesh_volume.rs).
fn mesh_scaled(field: &[f32], dims: [u32; 3], spacing: [f64; 3], m: Mesher, out: &mut MeshBuffer) {
    m.mesh(&Grid::volume(field, dims, 1.0), out);
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

/// A volume to time: its name, field (`iso − sample`), dims and spacing.
type Volume = (String, Vec<f32>, [u32; 3], [f64; 3]);

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .map_or(5, |a| a.parse().expect("RUNS is a number"));
    let only: Option<String> = std::env::args().nth(2);
    let scan: Option<String> = std::env::args().nth(3);
    // A sidecar's path: that volume alone.
    let volumes: Vec<Volume> = match scan.as_deref() {
        Some(s) if s.ends_with(".json") => {
            let (field, dims, spacing) = read_sidecar(std::path::Path::new(s));
            vec![(s.to_string(), field, dims, spacing)]
        }
        _ => [("head", [4.0; 3]), ("hydrogen", [1.0; 3])]
            .into_iter()
            .filter(|(name, _)| scan.as_deref().is_none_or(|s| s == *name))
            .map(|(name, spacing)| {
                let (field, dims) = read_scan(name);
                (name.to_string(), field, dims, spacing)
            })
            .collect(),
    };
    for (name, field, dims, spacing) in volumes {
        for m in Mesher::ALL {
            if only.as_deref().is_some_and(|o| o != m.name()) {
                continue;
            }
            let mut out = MeshBuffer::default();
            let t = Instant::now();
            mesh_scaled(&field, dims, spacing, m, &mut out);
            let cold = t.elapsed().as_secs_f64();
            drop(out);
            let (mut fresh, mut tris, mut verts) = (f64::INFINITY, 0, 0);
            for _ in 0..runs {
                let mut out = MeshBuffer::default();
                let t = Instant::now();
                mesh_scaled(&field, dims, spacing, m, &mut out);
                fresh = fresh.min(t.elapsed().as_secs_f64());
                tris = out.triangle_count();
                verts = out.positions.len();
            }
            let mut out = MeshBuffer::default();
            mesh_scaled(&field, dims, spacing, m, &mut out);
            let mut reused = f64::INFINITY;
            for _ in 0..runs {
                let t = Instant::now();
                mesh_scaled(&field, dims, spacing, m, &mut out);
                reused = reused.min(t.elapsed().as_secs_f64());
            }
            println!(
                "{{\"scan\": \"{name}\", \"mesher\": \"{}\", \"vertices\": {verts}, \"triangles\": {tris}, \"cold\": {cold:.6}, \"seconds\": {fresh:.6}, \"seconds_reused_buffer\": {reused:.6}}}",
                m.name()
            );
        }
    }
}
