//! A quick check of the `mesh` benchmark (same chunk, same inputs): median time per call of
//! every mesher and of fast-surface-nets, measured in interleaved rounds so that load on a
//! shared machine hits all alike. The criterion benchmark remains the reference.
//!
//! Run: `cargo run --release -p loam-bench --example chunk_times [ROUNDS [MESHER]]` (with a
//! mesher, only that one and fast-surface-nets run: for profiling).

use std::hint::black_box;
use std::time::Instant;

use fast_surface_nets::ndshape::{ConstShape, ConstShape3u32};
use fast_surface_nets::{SurfaceNetsBuffer, surface_nets};
use loam_bench::{chunk_samples, surface_chunk, terrain_field};
use loam_mesh::{CHUNK_HALO, Grid, MeshBuffer, Mesher};

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .map_or(15, |a| a.parse().expect("ROUNDS is a number"));
    let only = std::env::args().nth(2);
    let meshers: Vec<Mesher> = Mesher::ALL
        .into_iter()
        .filter(|m| only.as_deref().is_none_or(|o| o == m.name()))
        .collect();
    let field = terrain_field();
    let chunk = surface_chunk(field.generator());
    let values = chunk_samples(&field, chunk, CHUNK_HALO);
    let range = values
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    let grid = Grid {
        range: Some(range),
        ..Grid::chunk(&values, &[], CHUNK_HALO, 1.0)
    };
    // fast-surface-nets on samples −1 ..= 32 (34³), as in the criterion benchmark: from the
    // chunk's samples with a halo of 1 (35³; the grid above has the chunk halo, 37³).
    type Shape = ConstShape3u32<34, 34, 34>;
    let padded = chunk_samples(&field, chunk, 1);
    let mut sdf = vec![0.0f32; Shape::USIZE];
    for z in 0..34u32 {
        for y in 0..34u32 {
            for x in 0..34u32 {
                sdf[Shape::linearize([x, y, z]) as usize] =
                    padded[(x + 35 * (y + 35 * z)) as usize];
            }
        }
    }
    let mut bufs: Vec<MeshBuffer> = meshers.iter().map(|_| MeshBuffer::default()).collect();
    let mut fsn = SurfaceNetsBuffer::default();
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); meshers.len() + 1];
    const CALLS: usize = 20;
    for _ in 0..rounds {
        for (k, m) in meshers.iter().enumerate() {
            m.mesh(&grid, &mut bufs[k]);
            let t = Instant::now();
            for _ in 0..CALLS {
                m.mesh(black_box(&grid), &mut bufs[k]);
            }
            samples[k].push(t.elapsed().as_secs_f64() / CALLS as f64);
        }
        let t = Instant::now();
        for _ in 0..CALLS {
            surface_nets(black_box(&sdf), &Shape {}, [0; 3], [33; 3], &mut fsn);
        }
        samples[meshers.len()].push(t.elapsed().as_secs_f64() / CALLS as f64);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let fsn_t = median(&mut samples[meshers.len()]);
    for (k, m) in meshers.iter().enumerate() {
        let t = median(&mut samples[k]);
        println!(
            "loam_{:5} {:6} tris {:8.1} us  fsn/this {:.2}",
            m.name(),
            bufs[k].triangle_count(),
            t * 1e6,
            fsn_t / t
        );
    }
    println!(
        "fast_surface_nets {:4} tris {:8.1} us",
        fsn.indices.len() / 3,
        fsn_t * 1e6
    );
}
