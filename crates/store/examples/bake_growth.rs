//! What a bake costs as a world's history grows: a server-like session of small digs and
//! builds (one stroke each, 64 places 128 m apart, as `loam-net`'s load benchmark makes
//! them), appended in groups of 1000 and baked every `BAKE_EVERY` ops with
//! [`Store::bake`]. Prints one line per bake: ops so far, the history's kept bytes and the
//! bake's time (encoding and writing, one call).
//!
//! ```text
//! cargo run --release -p loam-store --example bake_growth -- [OPS] [BAKE_EVERY]
//! ```
//!
//! Defaults: 400 000 ops, a bake every 100 000 (the server's default).

use std::sync::Arc;
use std::time::Instant;

use loam_field::{
    CaveSettings, CsgMode, EditOp, Field, FieldSettings, Generator, History, LogEntry,
    NoiseTerrainSettings,
};
use loam_store::Store;

fn arg(i: usize, default: u64) -> u64 {
    std::env::args()
        .nth(i)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

/// SplitMix64: the same ops on every run.
fn mix(z: &mut u64) -> u64 {
    *z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut x = *z;
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

fn unit(z: &mut u64) -> f64 {
    (mix(z) >> 11) as f64 / (1u64 << 53) as f64
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ops = arg(1, 400_000);
    let every = arg(2, 100_000).max(1);
    let g = Generator::noise(&NoiseTerrainSettings::default(), &CaveSettings::default())?;
    let mut field = Field::new(FieldSettings::default(), Arc::new(g))?;
    let mut history = History::default();
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("growth.loam");
    let mut store = Store::create(&path, r#"{"kind": "noise"}"#, field.settings(), None)?;
    let mut seed = 7;
    let mut group = Vec::new();
    println!("ops, history kept bytes, bake ms");
    for seq in 1..=ops {
        let i = mix(&mut seed) % 64;
        let (x, z) = (
            (i % 8) as f64 * 128.0 + 16.0 + 12.0 * unit(&mut seed) - 6.0,
            (i / 8) as f64 * 128.0 + 16.0 + 12.0 * unit(&mut seed) - 6.0,
        );
        let op = EditOp::Sphere {
            mode: if mix(&mut seed).is_multiple_of(2) {
                CsgMode::Subtract
            } else {
                CsgMode::Union
            },
            center: [x, field.generator().surface_height(x, z), z],
            radius: 0.6 + 0.8 * unit(&mut seed),
            material: (mix(&mut seed) % 8) as u8,
            blend: 0.0,
        };
        history.apply(&mut field, seq, &op)?;
        group.push(LogEntry::new(seq, seq, op));
        if group.len() == 1000 || seq == ops {
            store.append_batch(&group)?;
            group.clear();
        }
        if seq % every == 0 {
            let t = Instant::now();
            store.bake(&field, &history, seq)?;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            println!("{seq}, {}, {ms:.0}", history.bytes());
        }
    }
    Ok(())
}
