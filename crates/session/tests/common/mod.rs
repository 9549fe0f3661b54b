//! Fixtures the session tests share.

use std::sync::Arc;

use loam_field::{CaveSettings, Field, FieldSettings, Generator, NoiseLayer, NoiseTerrainSettings};

/// Flat ground at y = `height` (1 m voxels), no noise, no caves.
pub fn flat_field(height: f64) -> Field {
    const OFF: NoiseLayer = NoiseLayer {
        amplitude: 0.0,
        wavelength: 1.0,
        octaves: 0,
    };
    let s = NoiseTerrainSettings {
        base_height: height,
        hills: OFF,
        ridges: OFF,
        detail: OFF,
        ..Default::default()
    };
    let caves = CaveSettings {
        enabled: false,
        ..Default::default()
    };
    let g = Generator::noise(&s, &caves).unwrap();
    Field::new(FieldSettings::default(), Arc::new(g)).unwrap()
}
