//! Shared fixtures.

use std::sync::Arc;

use loam_field::{
    CaveSettings, CsgMode, EditOp, Field, FieldSettings, Generator, Heightmap, HeightmapMeta,
    HeightmapPlacement, NoiseLayer, NoiseTerrainSettings, SamplePos,
};

pub const OFF: NoiseLayer = NoiseLayer {
    amplitude: 0.0,
    wavelength: 1.0,
    octaves: 0,
};

/// Flat ground `y − base` (metres), no caves: an exact SDF.
pub fn flat_generator(base: f64) -> Generator {
    let s = NoiseTerrainSettings {
        base_height: base,
        hills: OFF,
        ridges: OFF,
        detail: OFF,
        ..Default::default()
    };
    Generator::noise(
        &s,
        &CaveSettings {
            enabled: false,
            ..Default::default()
        },
    )
    .unwrap()
}

pub fn field_with(generator: Generator, voxel_size: f64) -> Field {
    Field::new(
        FieldSettings {
            voxel_size,
            ..Default::default()
        },
        Arc::new(generator),
    )
    .unwrap()
}

pub fn flat_field(base: f64) -> Field {
    field_with(flat_generator(base), 1.0)
}

pub fn noise_generator(seed: u32) -> Generator {
    let s = NoiseTerrainSettings {
        seed,
        ..Default::default()
    };
    // Caves high enough to meet the default ground near the origin.
    let c = CaveSettings {
        y_min: -40.0,
        y_max: 40.0,
        ..Default::default()
    };
    Generator::noise(&s, &c).unwrap()
}

pub fn data_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/heightmaps")
}

pub fn jacksboro_meta() -> HeightmapMeta {
    HeightmapMeta::from_json(
        &std::fs::read_to_string(data_dir().join("jacksboro_3arcsec.json")).unwrap(),
    )
    .unwrap()
}

pub fn jacksboro_png() -> Heightmap {
    let bytes = std::fs::read(data_dir().join("jacksboro_3arcsec.png")).unwrap();
    Heightmap::from_png(&bytes, &jacksboro_meta()).unwrap()
}

pub fn jacksboro_generator() -> Generator {
    let placement = HeightmapPlacement {
        horizontal_scale: 0.1,
        vertical_scale: 0.1,
        base_y: 0.0,
    };
    let caves = CaveSettings {
        y_min: -30.0,
        y_max: 20.0,
        ..Default::default()
    };
    Generator::heightmap(&jacksboro_png(), &placement, &caves).unwrap()
}

pub fn dig(c: [f64; 3], r: f64) -> EditOp {
    EditOp::Sphere {
        blend: 0.0,
        mode: CsgMode::Subtract,
        center: c,
        radius: r,
        material: 0,
    }
}

pub fn build(c: [f64; 3], r: f64, material: u8) -> EditOp {
    EditOp::Sphere {
        blend: 0.0,
        mode: CsgMode::Union,
        center: c,
        radius: r,
        material,
    }
}

/// Every sample position of the inclusive box `lo ..= hi`, z slowest.
pub fn samples(lo: [i32; 3], hi: [i32; 3]) -> impl Iterator<Item = SamplePos> {
    (lo[2]..=hi[2]).flat_map(move |z| {
        (lo[1]..=hi[1]).flat_map(move |y| (lo[0]..=hi[0]).map(move |x| SamplePos::new(x, y, z)))
    })
}

/// A small deterministic xorshift generator for test inputs (never used by the field).
pub struct TestRng(pub u64);

impl TestRng {
    pub fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next_f64()
    }
}

pub fn dist(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// The field's quantisation grid written out from its definition (16-bit fixed point over
/// ±band, the step rounded down to f32, a negative value never 0), independently of
/// `loam_field::Quant`: the exact reference value of `v` metres as the field stores it.
pub fn grid(v: f64, band: f64) -> f32 {
    let step = band / 32767.0;
    let mut s32 = step as f32;
    if f64::from(s32) > step {
        s32 = s32.next_down();
    }
    let mut q = (v / step).round().clamp(-32767.0, 32767.0);
    if q == 0.0 && v < 0.0 {
        q = -1.0;
    }
    q as f32 * s32 + 0.0
}

/// One step of the grid for a band of `band` metres.
pub fn grid_step(band: f64) -> f64 {
    f64::from(grid(band, band)) / 32767.0
}
