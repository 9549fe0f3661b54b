//! Helpers shared by the app tests that load terrain and blocks.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bevy::prelude::*;
use loam_field::{CaveSettings, Field, FieldSettings, Generator, NoiseTerrainSettings};

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
