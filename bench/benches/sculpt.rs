//! Criterion benchmarks of sculpting: one `Field::apply` of every brush kind at r = 4 m and
//! r = 8 m on the ground of the benchmark terrain near (30, h, 30), over bricks that already
//! exist, the undo of a 100-op stroke, and an undo among 2000 overlapping strokes.
//!
//! Throughput is in samples of the op's nominal reach, `(2(r + band)/voxel + 1)³` (2197 at
//! r = 4, 9261 at r = 8 with the default 1 m voxels and 2-voxel band), so kinds compare per
//! sample whatever they change. The bricks are made beforehand by the op's opposite (a shape
//! built before it is dug, and dug before it is built; paint of another material; a brush
//! applied once), so every timed apply changes samples, creates no brick, and copies the
//! bricks it writes as a real edit of a shared field does; the bench prints the samples each
//! timed apply changes.
//!
//! Run: `cargo bench -p loam-bench --bench sculpt`. Results: BENCHMARKS.md.

use std::hint::black_box;

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use loam_bench::terrain_field;
use loam_field::{CsgMode, EditOp, Falloff, History};

/// The brushes, each fitting within `r` of `c` (so the nominal reach bounds them).
fn brushes(c: [f64; 3], r: f64) -> Vec<(&'static str, EditOp)> {
    let [x, y, z] = c;
    // 30° about y: the box's footprint, 0.7 r · (cos 30° + sin 30°) ≈ 0.96 r, stays within r.
    let (s, w) = (15f64.to_radians().sin(), 15f64.to_radians().cos());
    vec![
        (
            "sphere_dig",
            EditOp::Sphere {
                mode: CsgMode::Subtract,
                center: c,
                radius: r,
                material: 0,
                blend: 0.0,
            },
        ),
        (
            "box",
            EditOp::Cuboid {
                mode: CsgMode::Subtract,
                center: c,
                half_extents: [0.7 * r, 0.5 * r, 0.7 * r],
                rotation: [0.0, s, 0.0, w],
                material: 0,
                blend: 0.0,
            },
        ),
        (
            "capsule",
            EditOp::Capsule {
                mode: CsgMode::Union,
                a: [x - 0.5 * r, y, z],
                b: [x + 0.5 * r, y, z],
                radius: 0.5 * r,
                material: 2,
                blend: 0.0,
            },
        ),
        (
            "cylinder",
            EditOp::Cylinder {
                mode: CsgMode::Subtract,
                a: [x, y - 0.5 * r, z],
                b: [x, y + 0.5 * r, z],
                radius: 0.7 * r,
                material: 0,
                blend: 0.0,
            },
        ),
        (
            "torus",
            EditOp::Torus {
                mode: CsgMode::Union,
                center: c,
                axis: [0.0, 1.0, 0.0],
                major_radius: 0.7 * r,
                minor_radius: 0.3 * r,
                material: 3,
                blend: 0.0,
            },
        ),
        (
            "raise",
            EditOp::Raise {
                center: c,
                radius: r,
                strength: 1.0,
                falloff: Falloff::Smooth,
            },
        ),
        (
            "lower",
            EditOp::Lower {
                center: c,
                radius: r,
                strength: 1.0,
                falloff: Falloff::Smooth,
            },
        ),
        (
            "smooth",
            EditOp::Smooth {
                center: c,
                radius: r,
                strength: 0.5,
                falloff: Falloff::Smooth,
            },
        ),
        (
            "flatten",
            EditOp::Flatten {
                center: c,
                radius: r,
                strength: 0.5,
                falloff: Falloff::Smooth,
                plane_point: c,
                plane_normal: [0.0, 1.0, 0.0],
            },
        ),
        (
            "noise",
            EditOp::Noise {
                center: c,
                radius: r,
                strength: 1.0,
                falloff: Falloff::Smooth,
                seed: 1,
                wavelength: 4.0,
            },
        ),
        (
            "paint",
            EditOp::Paint {
                center: c,
                radius: r,
                material: 4,
                falloff: Falloff::Smooth,
                threshold: 0.5,
            },
        ),
    ]
}

/// The op that prepares the bricks for `op`: a shape in the opposite mode, paint of another
/// material, a brush itself.
fn opposite(op: &EditOp) -> EditOp {
    let flip = |m: CsgMode| match m {
        CsgMode::Subtract => CsgMode::Union,
        _ => CsgMode::Subtract,
    };
    let mut o = op.clone();
    match &mut o {
        EditOp::Sphere { mode, .. }
        | EditOp::Cuboid { mode, .. }
        | EditOp::Capsule { mode, .. }
        | EditOp::Cylinder { mode, .. }
        | EditOp::Torus { mode, .. } => *mode = flip(*mode),
        EditOp::Paint { material, .. } => *material = material.wrapping_add(1),
        _ => {}
    }
    o
}

fn brush_ops(c: &mut Criterion) {
    let field = terrain_field();
    let (x, z) = (30.0, 30.0);
    let center = [x, field.generator().surface_height(x, z), z];
    let (voxel, band) = (field.settings().voxel_size, field.settings().band());
    let mut group = c.benchmark_group("sculpt/apply");
    for r in [4.0, 8.0] {
        let per_axis = (2.0 * (r + band) / voxel).floor() as u64 + 1;
        group.throughput(Throughput::Elements(per_axis.pow(3)));
        for (name, op) in brushes(center, r) {
            // Apply once so every brick the op writes exists; the timed apply then creates
            // none (the field's clone shares them, copied on first write as in a real edit).
            let mut warm = field.clone();
            warm.apply(&opposite(&op)).unwrap();
            let second = warm.clone().apply(&op).unwrap();
            assert_eq!(second.bricks_created, 0, "{name}");
            assert!(second.samples_changed > 0, "{name}");
            eprintln!(
                "sculpt/apply/{name}/r{r}: {} samples changed by the timed apply",
                second.samples_changed
            );
            group.bench_function(BenchmarkId::new(name, format!("r{r}")), |b| {
                b.iter_batched(
                    || warm.clone(),
                    |mut f| {
                        black_box(f.apply(black_box(&op)).unwrap());
                        f // dropped outside the timed part
                    },
                    BatchSize::SmallInput,
                )
            });
        }
    }
    group.finish();
}

/// A dig of r = 4 m over bricks that exist but are packed, right after an op elsewhere, with
/// a working set of 4 hot bricks (full): the timed apply unpacks its own bricks (from the
/// decoded cache, or with the cache off from LZ4) and packs the other op's hot bricks, as an
/// op of scattered editing does once the working set is full.
fn moving(c: &mut Criterion) {
    let field = terrain_field();
    let at = |x: f64, z: f64| [x, field.generator().surface_height(x, z), z];
    let op = EditOp::Sphere {
        mode: CsgMode::Subtract,
        center: at(30.0, 30.0),
        radius: 4.0,
        material: 0,
        blend: 0.0,
    };
    let mut warm = field.clone();
    warm.apply(&opposite(&op)).unwrap();
    warm.pack_bricks();
    warm.set_hot_capacity(4);
    let elsewhere = EditOp::Sphere {
        mode: CsgMode::Union,
        center: at(200.0, 200.0),
        radius: 4.0,
        material: 0,
        blend: 0.0,
    };
    warm.apply(&elsewhere).unwrap();
    let hot = warm.brick_bytes();
    let mut group = c.benchmark_group("sculpt/moving");
    for (name, cache) in [
        ("cache", loam_field::DECODED_CACHE_DEFAULT_CAPACITY),
        ("no_cache", 0),
    ] {
        loam_field::set_decoded_cache_capacity(cache);
        group.bench_function(BenchmarkId::new("sphere_dig_r4", name), |b| {
            b.iter_batched(
                || warm.clone(),
                |mut f| {
                    black_box(f.apply(black_box(&op)).unwrap());
                    f
                },
                BatchSize::SmallInput,
            )
        });
    }
    loam_field::set_decoded_cache_capacity(loam_field::DECODED_CACHE_DEFAULT_CAPACITY);
    let mut after = warm.clone();
    after.apply(&op).unwrap();
    eprintln!(
        "sculpt/moving: {} bricks, {} bytes before the timed apply, {} after",
        after.brick_count(),
        hot,
        after.brick_bytes()
    );
    group.finish();
}

/// Packing and unpacking one edited surface brick (the brick at the dig of `moving`).
fn brick_codec(c: &mut Criterion) {
    let mut field = terrain_field();
    let (x, z) = (30.0, 30.0);
    let y = field.generator().surface_height(x, z);
    field
        .apply(&EditOp::Sphere {
            mode: CsgMode::Subtract,
            center: [x, y, z],
            radius: 4.0,
            material: 1,
            blend: 0.0,
        })
        .unwrap();
    let key = loam_field::SamplePos::new(30, y as i32, 30).brick().0;
    let brick = field.brick(key).unwrap().clone();
    let s = brick.samples();
    let band = field.settings().band();
    let packed = loam_field::Brick::from_quantized(band, s.quantized(), s.materials()).unwrap();
    eprintln!("sculpt/brick: {} bytes packed", packed.heap_bytes());
    let mut group = c.benchmark_group("sculpt/brick");
    group.bench_function("pack", |b| {
        b.iter(|| {
            black_box(
                loam_field::Brick::from_quantized(band, s.quantized(), s.materials()).unwrap(),
            )
        })
    });
    loam_field::set_decoded_cache_capacity(0);
    group.bench_function("unpack", |b| b.iter(|| black_box(packed.samples())));
    loam_field::set_decoded_cache_capacity(loam_field::DECODED_CACHE_DEFAULT_CAPACITY);
    group.finish();
}

fn undo(c: &mut Criterion) {
    let mut field = terrain_field();
    let mut history = History::new(usize::MAX);
    // 100 raises of r = 4 m along a 40 m path on the ground, one stroke.
    let (x0, z) = (10.0, 30.0);
    for i in 0..100 {
        let x = x0 + 40.0 * f64::from(i) / 99.0;
        let op = EditOp::Raise {
            center: [x, field.generator().surface_height(x, z), z],
            radius: 4.0,
            strength: 0.5,
            falloff: Falloff::Smooth,
        };
        history.apply(&mut field, 1, &op).unwrap();
    }
    let mut group = c.benchmark_group("sculpt/undo");
    group.bench_function("stroke_100_raises_r4", |b| {
        b.iter_batched(
            || (field.clone(), history.clone()),
            |(mut f, mut h)| {
                black_box(h.apply(&mut f, 2, &EditOp::Undo { stroke: 1 }).unwrap());
                (f, h) // dropped outside the timed part
            },
            BatchSize::SmallInput,
        )
    });
    // 2000 strokes of r = 2 m digs over a 64 m square, many overlapping (players sculpting
    // one place): the undo of stroke 1000 looks at every kept stroke that touched its bricks.
    let mut field = terrain_field();
    let mut history = History::new(usize::MAX);
    let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
    for id in 1..=2000u64 {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let (x, z) = ((s % 64) as f64, ((s >> 16) % 64) as f64);
        let op = EditOp::Sphere {
            mode: CsgMode::Subtract,
            center: [x, field.generator().surface_height(x, z), z],
            radius: 2.0,
            material: 0,
            blend: 0.0,
        };
        history.apply(&mut field, id, &op).unwrap();
    }
    group.bench_function("overlapping_2000_strokes_r2", |b| {
        b.iter_batched(
            || (field.clone(), history.clone()),
            |(mut f, mut h)| {
                black_box(h.apply(&mut f, 0, &EditOp::Undo { stroke: 1000 }).unwrap());
                (f, h)
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, brush_ops, moving, brick_codec, undo);
criterion_main!(benches);
