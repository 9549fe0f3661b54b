//! Loam's benchmarks: the shared inputs of the criterion benchmarks (in `benches/`), and the
//! network load benchmark ([`net`], `loam bench-net`: real clients against a server).

pub mod net;

pub use net::{BenchConfig, BenchError, BenchReport, Diverged, bench_net};

use std::sync::Arc;

use loam_field::{CaveSettings, ChunkKey, Field, FieldSettings, Generator, NoiseTerrainSettings};

/// The generated terrain the benchmarks use: seed 7, default layers, caves crossing the
/// ground (y ∈ [20, 90]).
pub fn terrain() -> Arc<Generator> {
    let terrain = NoiseTerrainSettings {
        seed: 7,
        ..Default::default()
    };
    let caves = CaveSettings {
        y_min: 20.0,
        y_max: 90.0,
        ..Default::default()
    };
    Arc::new(Generator::noise(&terrain, &caves).expect("valid settings"))
}

/// A typical surface chunk of the terrain: the chunk column at the origin, at the layer
/// holding the ground at its centre.
pub fn surface_chunk(g: &Generator) -> ChunkKey {
    let y = g.surface_height(16.0, 16.0);
    ChunkKey::new(0, (y / 32.0).floor() as i32, 0)
}

/// The samples `32c − halo ..= 32c + 32 + halo` of chunk `c` per axis, x fastest.
pub fn chunk_samples(field: &Field, c: ChunkKey, halo: u32) -> Vec<f32> {
    let n = (33 + 2 * halo) as usize;
    let (mut v, mut m) = (vec![0.0; n * n * n], vec![0; n * n * n]);
    field.fill_chunk(c, halo, &mut v, &mut m);
    v
}

/// A field over [`terrain`] with default settings.
pub fn terrain_field() -> Field {
    Field::new(FieldSettings::default(), terrain()).expect("valid settings")
}

pub mod hashes;
