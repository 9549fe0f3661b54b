//! World files (loam-store): loading a world of 10 000 ops over 300 bricks (from its bake,
//! and by replaying the whole log), and durable op appends. Bytes per brick on disk and in
//! memory are printed.
//!
//! Run: `cargo bench -p loam-bench --bench store`. Results: BENCHMARKS.md.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use loam_bench::terrain_field;
use loam_field::{CsgMode, EditOp, Field, History, LogEntry};
use loam_store::Store;

/// 10 000 small digs and builds spread over a 10 × 3 × 10 block of bricks (300 bricks)
/// around the ground at the origin; deterministic.
fn ops(field: &Field) -> Vec<EditOp> {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..10_000)
        .map(|i| {
            let (x, z) = (next() * 320.0, next() * 320.0);
            let h = field.generator().surface_height(x, z);
            let y = h + (next() - 0.5) * 40.0;
            let mode = if i % 3 == 0 {
                CsgMode::Union
            } else {
                CsgMode::Subtract
            };
            EditOp::Sphere {
                mode,
                center: [x, y, z],
                radius: 1.0 + next() * 2.0,
                material: (i % 7) as u8,
                blend: 0.0,
            }
        })
        .collect()
}

fn write(path: &Path, bake: bool) -> Field {
    let mut field = terrain_field();
    let mut history = History::new(16 << 20);
    let mut store = Store::create(path, "{}", field.settings(), None).unwrap();
    for (i, op) in ops(&field).into_iter().enumerate() {
        let seq = i as u64 + 1;
        history.apply(&mut field, seq, &op).unwrap();
        store.append(&LogEntry::new(seq, seq, op)).unwrap();
    }
    if bake {
        store.bake(&field, &history, 10_000).unwrap();
        store.compact().unwrap();
    }
    field
}

fn load(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    for bake in [true, false] {
        let path = dir.path().join(format!("w{bake}.loam"));
        let live = write(&path, bake);
        let info = Store::open(&path).unwrap().info().unwrap();
        let n = live.brick_count().max(1);
        let mut packed = live.clone();
        packed.pack_bricks();
        let cache = loam_field::decoded_cache_stats();
        let cache_full = cache.capacity * (96 << 10);
        eprintln!(
            "store/{}: {} bricks, {} ops in the log, {} bytes on disk ({} per brick); resident per \
             brick: {} bytes as left by the last op (its bricks decoded), {} packed, plus {} \
             for the decoded-brick cache as it is ({} bricks) or {} when full ({} bricks)",
            if bake { "baked" } else { "log_only" },
            live.brick_count(),
            info.ops,
            info.file_bytes,
            info.file_bytes / n as u64,
            live.brick_bytes() / n,
            packed.brick_bytes() / n,
            cache.bytes / n,
            cache.bricks,
            cache_full / n,
            cache.capacity,
        );
        let name = if bake {
            "store/load_10k_ops_baked"
        } else {
            "store/load_10k_ops_replayed"
        };
        c.bench_function(name, |b| {
            b.iter(|| {
                let mut store = Store::open(&path).unwrap();
                let loaded = store.load(terrain_field()).unwrap();
                assert_eq!(loaded.last_seq, 10_000);
                black_box(loaded)
            })
        });
        let mut store = Store::open(&path).unwrap();
        assert_eq!(
            store.load(terrain_field()).unwrap().field.hash(),
            live.hash()
        );
    }
}

fn append(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("append.loam");
    let mut store = Store::create(&path, "{}", terrain_field().settings(), None).unwrap();
    let op = EditOp::Sphere {
        mode: CsgMode::Subtract,
        center: [0.0, 0.0, 0.0],
        radius: 2.0,
        material: 0,
        blend: 0.0,
    };
    let mut seq = 0u64;
    c.bench_function("store/append_durable", |b| {
        b.iter(|| {
            seq += 1;
            store.append(&LogEntry::new(seq, seq, op.clone())).unwrap();
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = load, append
}
criterion_main!(benches);
