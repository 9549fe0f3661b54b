//! The ordering thread's field work in isolation, for profiling: the ops of 64 clients
//! standing 128 m apart, half a brick off the grid lines (balls of radius 0.6–1.4 m dug and
//! built within ±6 m of each, in one of 8 materials, as `loam-bench`'s `bench_local` sends
//! them), applied in turn through a [`History`], with the server's 512 hot bricks.
//!
//! ```text
//! cargo run --release -p loam-field --example apply_spread [OPS]
//! ```
//!
//! Prints the bricks there were after 20 000 ops to warm up and after `OPS` more (default
//! 200 000), the mean wall time per op over those, and the field's hash (the same on every
//! run and machine: the ops come from a fixed seed).
//! Timing on a shared VM varies by ±20 % between runs; profile it (`perf record`) rather
//! than compare single runs.

use std::sync::Arc;
use std::time::Instant;

use loam_field::{CsgMode, EditOp, Field, FieldSettings, Generator, History, NoiseTerrainSettings};

const CLIENTS: usize = 64;
const WARM_UP: usize = 20_000;

fn main() {
    let ops: usize = match std::env::args().nth(1).map(|s| s.parse()) {
        None => 200_000,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("OPS must be a whole number: {e}");
            std::process::exit(2);
        }
    };
    let g = Generator::noise(&NoiseTerrainSettings::default(), &Default::default())
        .expect("default terrain");
    let mut field = Field::new(FieldSettings::default(), Arc::new(g)).expect("default settings");
    field.set_hot_capacity(512);
    let mut history = History::new(64 << 20);

    // A fixed linear congruential sequence: the same ops everywhere.
    let mut seed = 1u64;
    let mut unit = || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let list: Vec<EditOp> = (0..WARM_UP + ops)
        .map(|i| {
            let c = i % CLIENTS;
            let (x, z) = ((c % 8) as f64 * 128.0 + 16.0, (c / 8) as f64 * 128.0 + 16.0);
            let (cx, cz) = (x + 12.0 * unit() - 6.0, z + 12.0 * unit() - 6.0);
            let cy = field.generator().surface_height(cx, cz);
            let mode = if unit() < 0.5 {
                CsgMode::Subtract
            } else {
                CsgMode::Union
            };
            EditOp::Sphere {
                mode,
                center: [cx, cy, cz],
                radius: 0.6 + 0.8 * unit(),
                material: (unit() * 8.0) as u8,
                blend: 0.0,
            }
        })
        .collect();

    let mut stroke = 0;
    for op in &list[..WARM_UP] {
        stroke += 1;
        history.apply(&mut field, stroke, op).expect("a valid op");
    }
    let before = field.brick_count();
    let start = Instant::now();
    for op in &list[WARM_UP..] {
        stroke += 1;
        history.apply(&mut field, stroke, op).expect("a valid op");
    }
    let took = start.elapsed();
    println!("bricks {before} -> {}", field.brick_count());
    println!(
        "{:.0} ns/op over {ops} ops, hash {:?}",
        took.as_nanos() as f64 / ops.max(1) as f64,
        field.hash()
    );
}
