//! Helpers shared by the app tests that load terrain and blocks.

// Each test binary uses only some of them.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use bevy::prelude::*;
use loam_field::{
    CaveSettings, CsgMode, EditOp, Field, FieldSettings, Generator, NoiseTerrainSettings,
};

/// The default noise terrain without caves (solid ground under every pad), default settings.
pub fn noise_field_without_caves() -> Field {
    let g = Generator::noise(
        &NoiseTerrainSettings::default(),
        &CaveSettings {
            enabled: false,
            ..Default::default()
        },
    )
    .unwrap();
    Field::new(FieldSettings::default(), Arc::new(g)).unwrap()
}

/// Runs frames until `done` or `seconds` of real time pass; whether `done` came.
pub fn run_until(app: &mut App, seconds: u64, mut done: impl FnMut(&mut App) -> bool) -> bool {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(seconds) {
        app.update();
        if done(app) {
            return true;
        }
    }
    false
}

/// An axis-aligned box op (centre and half extents in metres), material 0, no blend.
pub fn cuboid(mode: CsgMode, center: [f64; 3], half: [f64; 3]) -> EditOp {
    EditOp::Cuboid {
        mode,
        center,
        half_extents: half,
        rotation: [0.0, 0.0, 0.0, 1.0],
        material: 0,
        blend: 0.0,
    }
}

/// A flat 8 × 8 m pad around x = z = 0.5 whose top is at `top` metres, 3 m of ground under
/// it and 12 m of clear air above it: the two ops that make it.
pub fn pad_ops(top: f64) -> [EditOp; 2] {
    [
        cuboid(CsgMode::Union, [0.5, top - 3.0, 0.5], [4.0, 3.0, 4.0]),
        cuboid(CsgMode::Subtract, [0.5, top + 6.0, 0.5], [4.0, 6.0, 4.0]),
    ]
}
