//! Criterion benchmarks of the Transvoxel mesher (issue 11) on a coarse terrain chunk: 32³
//! cells of 2 m at the surface of the benchmark terrain, with no transition face, one, and all
//! six (fine samples at 1 m), side by side with the `transvoxel` crate on the same samples.
//!
//! Run: `cargo bench -p loam-bench --bench lod`. Results: BENCHMARKS.md.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use loam_bench::terrain;
use loam_mesh::transvoxel::{
    Face, FineFace, Transitions, fine_face_dims, fine_face_sample, transvoxel,
};
use loam_mesh::{Grid, MeshBuffer, marching_cubes};

/// Fine lattice (1 m) samples of the coarse chunk's neighbourhood, `[-2, 66]³` metres from its
/// lowest corner: everything either mesher reads.
struct Lattice {
    values: Vec<f32>,
}

const LO: i64 = -2;
const N: i64 = 69;

impl Lattice {
    fn at(&self, p: [i64; 3]) -> f32 {
        let [x, y, z] = p.map(|c| (c - LO) as usize);
        self.values[x + N as usize * (y + N as usize * z)]
    }
}

fn lod(c: &mut Criterion) {
    let g = terrain();
    // The coarse chunk holding the ground at its centre; band 2 coarse voxels at both levels,
    // so coincident samples are equal.
    let y0 = 64.0 * (g.surface_height(32.0, 32.0) / 64.0).floor();
    let band = 4.0;
    let mut values = Vec::with_capacity((N * N * N) as usize);
    for z in 0..N {
        for y in 0..N {
            for x in 0..N {
                let p = [x + LO, y + LO, z + LO].map(|c| c as f64);
                values.push(g.value([p[0], y0 + p[1], p[2]], band));
            }
        }
    }
    let lat = Lattice { values };
    let coarse: Vec<f32> = (0..35i64 * 35 * 35)
        .map(|i| lat.at([i % 35, i / 35 % 35, i / 1225].map(|c| 2 * (c - 1))))
        .collect();
    let grid = Grid::chunk(&coarse, &[], 1, 2.0);
    let slabs: Vec<Vec<f32>> = Face::ALL
        .iter()
        .map(|&f| {
            let d = fine_face_dims(&grid, f);
            let mut v = Vec::new();
            for k in 0..d[2] {
                for j in 0..d[1] {
                    for i in 0..d[0] {
                        v.push(lat.at(fine_face_sample(&grid, f, [i, j, k]).map(i64::from)));
                    }
                }
            }
            v
        })
        .collect();
    let transitions = |mask: u8| {
        let mut t = Transitions::default();
        for f in Face::ALL {
            if mask & f.bit() != 0 {
                let fine = FineFace {
                    values: &slabs[f as usize],
                    materials: &[],
                };
                t = t.with(f, fine);
            }
        }
        t
    };
    let mut group = c.benchmark_group("lod/terrain_chunk_32");
    // Loam's Marching Cubes on the same coarse grid, for scale.
    {
        let mut out = MeshBuffer::default();
        marching_cubes(&grid, &mut out);
        let tris = out.triangle_count();
        group.throughput(Throughput::Elements(tris as u64));
        let id = BenchmarkId::new("loam_mc/none", format!("{tris}_tris"));
        group.bench_function(id, |b| {
            b.iter(|| marching_cubes(black_box(&grid), &mut out))
        });
    }
    for (name, mask) in [("none", 0u8), ("neg_x", 1), ("all_six", 0b11_1111)] {
        let t = transitions(mask);
        let mut out = MeshBuffer::default();
        transvoxel(&grid, &t, &mut out); // grow the buffer before timing
        let tris = out.triangle_count();
        group.throughput(Throughput::Elements(tris as u64));
        let id = BenchmarkId::new(format!("loam_tv/{name}"), format!("{tris}_tris"));
        group.bench_function(id, |b| {
            b.iter(|| transvoxel(black_box(&grid), &t, &mut out))
        });
        // The transvoxel crate (2.0) on the same samples, read from the lattice through its
        // closure field (`CacheNothing`: its `CacheCentralBlockOnly` reads transition faces
        // at the wrong positions). Its density is positive inside.
        {
            use transvoxel::prelude::*;
            let density = |x: f32, y: f32, z: f32| -lat.at([x, y, z].map(|c| c as i64));
            let sides = [
                TransitionSide::LowX,
                TransitionSide::HighX,
                TransitionSide::LowY,
                TransitionSide::HighY,
                TransitionSide::LowZ,
                TransitionSide::HighZ,
            ];
            let mut ts = TransitionSide::none();
            for (i, &s) in sides.iter().enumerate() {
                if mask >> i & 1 == 1 {
                    ts |= s;
                }
            }
            let block = Block::new([0.0f32; 3], 64.0, 32);
            let run = || {
                extract_from_field(
                    &density,
                    FieldCaching::CacheNothing,
                    block,
                    ts,
                    0.0,
                    GenericMeshBuilder::new(),
                )
                .build()
            };
            let tris = run().num_tris();
            group.throughput(Throughput::Elements(tris as u64));
            let id = BenchmarkId::new(format!("transvoxel_crate/{name}"), format!("{tris}_tris"));
            group.bench_function(id, |b| b.iter(|| black_box(run())));
        }
    }
    group.finish();
}

criterion_group!(benches, lod);
criterion_main!(benches);
