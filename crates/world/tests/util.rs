//! Shared fixtures: fields, a driver that runs the world to idle, and the from-scratch check.

use std::sync::Arc;
use std::time::Duration;

use loam_field::{
    CaveSettings, EditOp, Field, FieldSettings, Generator, NoiseLayer, NoiseTerrainSettings,
};
use loam_world::{BatchKind, PullBudget, Shown, Update, Viewer, World, WorldSettings};

pub const OFF: NoiseLayer = NoiseLayer {
    amplitude: 0.0,
    wavelength: 1.0,
    octaves: 0,
};

/// Flat ground at `base` metres, no caves, with a band of `band_voxels`.
pub fn flat_field(base: f64, band_voxels: f64) -> Field {
    let s = NoiseTerrainSettings {
        base_height: base,
        hills: OFF,
        ridges: OFF,
        detail: OFF,
        ..Default::default()
    };
    let g = Generator::noise(
        &s,
        &CaveSettings {
            enabled: false,
            ..Default::default()
        },
    )
    .unwrap();
    let settings = FieldSettings {
        band_voxels,
        ..Default::default()
    };
    Field::new(settings, Arc::new(g)).unwrap()
}

/// The default noise terrain with caves reaching up to the ground near the origin.
pub fn noise_field(seed: u32) -> Field {
    let s = NoiseTerrainSettings {
        seed,
        ..Default::default()
    };
    let c = CaveSettings {
        y_min: -40.0,
        y_max: 40.0,
        ..Default::default()
    };
    Field::new(
        FieldSettings::default(),
        Arc::new(Generator::noise(&s, &c).unwrap()),
    )
    .unwrap()
}

pub fn small(threads: usize) -> WorldSettings {
    WorldSettings {
        view_radius: 2,
        view_depth: 1,
        unload_margin: 1,
        threads,
        ..Default::default()
    }
}

/// Updates, waits until every chunk is built, pulls everything into `shown`, and checks
/// that every delivered mesh is of its chunk's current version.
pub fn settle(world: &mut World, viewers: &[Viewer], shown: &mut Shown) -> Vec<Update> {
    world.update(viewers);
    assert!(
        world.wait_idle(Duration::from_secs(120)),
        "world never went idle"
    );
    let updates = world.pull(PullBudget::ALL);
    check_current(world, &updates);
    shown.apply(updates.clone()).unwrap();
    assert_eq!(world.pending_batches(), 0, "a batch is still waiting");
    updates
}

/// Every mesh handed over is of its loaded chunk's current version, except in an edit
/// group that was built before a newer edit touched its chunks: it is handed over as it is
/// (a stroke shows its progress), and the newer version follows in a later group (or the
/// chunk left the view since, and its removal follows). What was shown never goes back to
/// an older version: `Shown::apply` refuses that.
pub fn check_current(world: &World, updates: &[Update]) {
    for u in updates {
        if let Update::Group(g) = u {
            for m in &g.meshes {
                let current = world.version_lod(m.lod_key());
                assert!(
                    current == Some(m.version)
                        || (g.kind == BatchKind::Edit && current.is_none_or(|v| v > m.version)),
                    "stale mesh of {:?}: version {} in a {:?} group, current {current:?}",
                    m.key,
                    m.version,
                    g.kind
                );
            }
        }
    }
}

/// Incremental equals from scratch: every loaded chunk shows exactly the mesh built from a
/// fresh field with `ops` applied (nothing, where that mesh is empty). Returns the number of
/// chunks with a mesh.
pub fn assert_matches_scratch(world: &World, shown: &Shown, base: &Field, ops: &[EditOp]) -> usize {
    let mut fresh = base.clone();
    for op in ops {
        fresh.apply(op).unwrap();
    }
    assert_matches_field(world, shown, &fresh)
}

/// [`assert_matches_scratch`] for a world whose log holds undo and redo: the world's op log
/// replayed through a fresh history.
pub fn assert_matches_log(world: &World, shown: &Shown, base: &Field) -> usize {
    let mut fresh = base.clone();
    let mut history = loam_field::History::default();
    for e in world.log() {
        history.apply(&mut fresh, e.stroke, &e.op).unwrap();
    }
    assert_matches_field(world, shown, &fresh)
}

fn assert_matches_field(world: &World, shown: &Shown, fresh: &Field) -> usize {
    assert_eq!(fresh.hash(), world.field().hash());
    match loam_world::verify_shown(world, shown, fresh) {
        Ok(meshed) => meshed,
        Err(key) => panic!("chunk {key:?} differs from its from-scratch mesh"),
    }
}
