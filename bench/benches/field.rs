//! Criterion benchmarks of loam-field: digs of r = 3 m and r = 8 m, and filling a chunk grid
//! (35³ samples, halo 1) from the generator and from bricks, and the field hash of a field
//! edited in 64 places.
//!
//! Run: `cargo bench -p loam-bench --bench field`. Results: BENCHMARKS.md.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use loam_field::{ChunkKey, CsgMode, EditOp, Field, FieldSettings, Generator};

/// The benchmarks' terrain (seed 7, caves crossing the ground).
fn generator() -> Arc<Generator> {
    loam_bench::terrain()
}

fn dig(c: [f64; 3], r: f64) -> EditOp {
    EditOp::Sphere {
        blend: 0.0,
        mode: CsgMode::Subtract,
        center: c,
        radius: r,
        material: 0,
    }
}

fn digs(c: &mut Criterion) {
    let g = generator();
    // A point on the ground next to a chunk corner, so the dig spans several bricks.
    let (x, z) = (30.0, 30.0);
    let y = g.surface_height(x, z);
    let mut group = c.benchmark_group("field/dig");
    for r in [3.0, 8.0] {
        // Bricks are created (filled from the generator) by the dig itself.
        group.bench_function(format!("r{r}/new_bricks"), |b| {
            b.iter_batched(
                || Field::new(FieldSettings::default(), g.clone()).unwrap(),
                |mut f| black_box(f.apply(&dig([x, y, z], r)).unwrap()),
                BatchSize::SmallInput,
            )
        });
        // The bricks exist already (made by an earlier edit nearby) and are not shared.
        group.bench_function(format!("r{r}/existing_bricks"), |b| {
            b.iter_batched(
                || {
                    let mut f = Field::new(FieldSettings::default(), g.clone()).unwrap();
                    f.apply(&dig([x + 0.5, y + 1.0, z - 0.5], r)).unwrap();
                    f
                },
                |mut f| black_box(f.apply(&dig([x, y, z], r)).unwrap()),
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
    // Planning alone (what a server or client does per op before writing), small balls as in
    // the network load benchmark, on bricks that exist.
    let mut group = c.benchmark_group("field/plan");
    let mut f = Field::new(FieldSettings::default(), g.clone()).unwrap();
    f.apply(&dig([x + 0.5, y + 1.0, z - 0.5], 8.0)).unwrap();
    for r in [1.0, 3.0] {
        group.bench_function(format!("r{r}"), |b| {
            b.iter(|| black_box(f.plan_edit(&dig([x, y, z], r)).unwrap()))
        });
    }
    group.finish();
}

fn fills(c: &mut Criterion) {
    let g = generator();
    let mut group = c.benchmark_group("field/fill_chunk_35");
    let n = 35 * 35 * 35;
    let (mut v, mut m) = (vec![0.0f32; n], vec![0u8; n]);
    let y = g.surface_height(16.0, 16.0);
    let chunk = ChunkKey::new(0, (y / 32.0).floor() as i32, 0);
    let fresh = Field::new(FieldSettings::default(), g.clone()).unwrap();
    group.bench_function("generator", |b| {
        b.iter(|| fresh.fill_chunk(black_box(chunk), 1, &mut v, &mut m))
    });
    // Cover the chunk and its halo with bricks.
    let mut edited = fresh.clone();
    for (dx, dz) in [
        (-1.0, -1.0),
        (33.0, -1.0),
        (-1.0, 33.0),
        (33.0, 33.0),
        (16.0, 16.0),
    ] {
        for dy in [-1.0, 16.0, 33.0] {
            let p = [dx, f64::from(chunk.y) * 32.0 + dy, dz];
            edited
                .apply(&EditOp::Sphere {
                    blend: 0.0,
                    mode: CsgMode::Union,
                    center: p,
                    radius: 1.0,
                    material: 1,
                })
                .unwrap();
            edited.apply(&dig(p, 0.5)).unwrap();
        }
    }
    assert!(
        edited.brick_count() >= 27,
        "{} bricks",
        edited.brick_count()
    );
    group.bench_function("bricks", |b| {
        b.iter(|| edited.fill_chunk(black_box(chunk), 1, &mut v, &mut m))
    });
    group.finish();
}

/// A field with small digs and builds in 64 places 40 m apart (as the network load
/// benchmark's clients make them), four ops per place.
fn edited_in_64_places(g: &Arc<Generator>) -> Field {
    let mut f = Field::new(FieldSettings::default(), g.clone()).unwrap();
    for i in 0..64 {
        let (x, z) = (f64::from(i % 8) * 40.0, f64::from(i / 8) * 40.0);
        let y = g.surface_height(x, z);
        for k in 0..4 {
            let mut op = dig([x + f64::from(k) * 0.7, y, z], 1.0);
            if k % 2 == 1
                && let EditOp::Sphere { mode, .. } = &mut op
            {
                *mode = CsgMode::Union;
            }
            f.apply(&op).unwrap();
        }
    }
    f
}

fn hashes(c: &mut Criterion) {
    let g = generator();
    let edited = edited_in_64_places(&g);
    let mut group = c.benchmark_group("field/hash_64_places");
    group.sample_size(10);
    // The first hash of a field: nothing known about its bricks yet.
    group.bench_function("first", |b| {
        b.iter_batched(
            || edited_in_64_places(&g),
            |f| black_box(f.hash()),
            BatchSize::LargeInput,
        )
    });
    // A hash after one more op in one of the places (what a server answers between ops).
    let again = edited.clone();
    let _ = again.hash();
    let y = g.surface_height(0.0, 0.0);
    group.bench_function("after_one_op", |b| {
        b.iter_batched(
            || {
                let mut f = again.clone();
                f.apply(&dig([0.3, y, 0.2], 1.0)).unwrap();
                f
            },
            |f| black_box(f.hash()),
            BatchSize::LargeInput,
        )
    });
    group.finish();
    println!("bricks in the edited field: {}", edited.brick_count());
}

criterion_group!(benches, digs, fills, hashes);
criterion_main!(benches);
