//! What a bake costs as a world's history grows: a server-like session of small digs and
//! builds (one stroke each, 64 places 128 m apart, as `loam-bench`'s network load benchmark makes
//! them), appended in groups of 1000 and baked every `BAKE_EVERY` ops with
//! [`Store::bake`]. Prints one line per bake: ops so far, the history's kept bytes and the
//! bake's time (encoding and writing, one call).
//!
//! ```text
//! cargo run --release -p loam-store --example bake_growth -- [OPS] [BAKE_EVERY] [BACKUP]
//! ```
//!
//! Defaults: 400 000 ops, a bake every 100 000 (the server's default). With `BACKUP` 1, the
//! world is then backed up online as `loam serve` does it (`Store::backup_step` of 256
//! pages, a group of 100 ops appended between two steps): prints the file's size, the steps,
//! the longest step, the copying's time and the completion's (sync and rename, which the
//! server does off its writer thread).

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
    if arg(3, 0) == 1 {
        let bytes = std::fs::metadata(&path)?.len();
        let copy = dir.path().join("copy.loam");
        let t = Instant::now();
        store.begin_backup(&copy)?;
        let (mut steps, mut longest, mut seq) = (0, 0.0f64, ops);
        let copied = loop {
            let s = Instant::now();
            let copied = store.backup_step(256)?;
            longest = longest.max(s.elapsed().as_secs_f64());
            steps += 1;
            if let Some(c) = copied {
                break c;
            }
            // Ops go on between steps (the same op again: only the log's growth matters).
            let again: Vec<LogEntry> = (1..=100)
                .map(|k| LogEntry::new(seq + k, seq + k, EditOp::Undo { stroke: seq }))
                .collect();
            store.append_batch(&again)?;
            seq += 100;
        };
        let copying = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let done = copied.complete()?;
        let header = std::fs::read(&done.path)?;
        println!(
            "backup: {bytes} bytes before, {} pages in {steps} steps (longest {:.1} ms) over {:.0} ms, then synced and renamed in {:.0} ms (off the writer); last op {}; header bytes 18, 19 = {}, {}",
            done.pages,
            longest * 1e3,
            copying * 1e3,
            t.elapsed().as_secs_f64() * 1e3,
            done.last_seq,
            header[18],
            header[19]
        );
    }
    Ok(())
}
