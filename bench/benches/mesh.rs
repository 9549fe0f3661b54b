//! Criterion benchmarks of the meshers on a typical terrain chunk (32³ cells of the
//! generated terrain), side by side with the `fast-surface-nets` crate on the same samples.
//!
//! Run: `cargo bench -p loam-bench --bench mesh`. Results: BENCHMARKS.md.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use fast_surface_nets::ndshape::{ConstShape, ConstShape3u32};
use fast_surface_nets::{SurfaceNetsBuffer, surface_nets};
use loam_bench::{chunk_samples, surface_chunk, terrain_field};
use loam_mesh::{CHUNK_HALO, Grid, MeshBuffer, Mesher};

fn meshers(c: &mut Criterion) {
    let field = terrain_field();
    let chunk = surface_chunk(field.generator());
    let values = chunk_samples(&field, chunk, CHUNK_HALO);
    // The chunk pipeline keeps the grid's min/max while filling it (loam-mesh's `Grid::range`),
    // so it is given here too rather than rescanned per call.
    let range = values
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    let grid = Grid {
        range: Some(range),
        ..Grid::chunk(&values, &[], CHUNK_HALO, 1.0)
    };
    let mut group = c.benchmark_group("mesh/terrain_chunk_32");
    for m in Mesher::ALL {
        let mut out = MeshBuffer::default();
        m.mesh(&grid, &mut out); // grow the buffer before timing
        group.throughput(Throughput::Elements(out.triangle_count() as u64));
        let id = BenchmarkId::new(
            format!("loam_{}", m.name()),
            format!("{}_tris", out.triangle_count()),
        );
        group.bench_function(id, |b| b.iter(|| m.mesh(black_box(&grid), &mut out)));
    }
    // fast-surface-nets on the same chunk: samples −1 ..= 32 (34³), its required padding,
    // meshing the cells between them. Same field, same sign convention (negative inside).
    type Shape = ConstShape3u32<34, 34, 34>;
    let padded = chunk_samples(&field, chunk, 1);
    let mut sdf = vec![0.0f32; Shape::USIZE];
    for z in 0..34u32 {
        for y in 0..34u32 {
            for x in 0..34u32 {
                let src = (x + 35 * (y + 35 * z)) as usize;
                sdf[Shape::linearize([x, y, z]) as usize] = padded[src];
            }
        }
    }
    let mut buf = SurfaceNetsBuffer::default();
    surface_nets(&sdf, &Shape {}, [0; 3], [33; 3], &mut buf);
    let tris = buf.indices.len() / 3;
    group.throughput(Throughput::Elements(tris as u64));
    let id = BenchmarkId::new("fast_surface_nets", format!("{tris}_tris"));
    group.bench_function(id, |b| {
        b.iter(|| surface_nets(black_box(&sdf), &Shape {}, [0; 3], [33; 3], &mut buf))
    });
    group.finish();
}

criterion_group!(benches, meshers);
criterion_main!(benches);
