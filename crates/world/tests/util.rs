//! Shared fixtures: fields, a driver that runs the world to idle, and the from-scratch check.

use std::sync::Arc;
use std::time::Duration;

use loam_field::{
    CaveSettings, ChunkKey, EditOp, Field, FieldSettings, Generator, NoiseLayer,
    NoiseTerrainSettings,
};
use loam_mesh::{CHUNK_CELLS, CHUNK_HALO, Grid, MeshBuffer, Mesher};
use loam_world::{PullBudget, Shown, Update, Viewer, World, WorldSettings};

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

/// Every mesh handed over is of its chunk's current version (never stale).
pub fn check_current(world: &World, updates: &[Update]) {
    for u in updates {
        if let Update::Group(g) = u {
            for m in &g.meshes {
                assert_eq!(
                    world.version(m.key),
                    Some(m.version),
                    "stale mesh of {:?}",
                    m.key
                );
            }
        }
    }
}

/// The mesh of chunk `key` built directly from `field`.
pub fn scratch_mesh(field: &Field, key: ChunkKey, mesher: Mesher) -> MeshBuffer {
    let n = (CHUNK_CELLS + 1 + 2 * CHUNK_HALO) as usize;
    let (mut v, mut m) = (vec![0.0f32; n * n * n], vec![0u8; n * n * n]);
    field.fill_chunk(key, CHUNK_HALO, &mut v, &mut m);
    let mut out = MeshBuffer::default();
    mesher.mesh(
        &Grid::chunk(&v, &m, CHUNK_HALO, field.settings().voxel_size as f32),
        &mut out,
    );
    out
}

fn same(a: &MeshBuffer, b: &MeshBuffer) -> bool {
    let bits = |v: &[[f32; 3]]| {
        v.iter()
            .flat_map(|p| p.map(f32::to_bits))
            .collect::<Vec<_>>()
    };
    bits(&a.positions) == bits(&b.positions)
        && bits(&a.normals) == bits(&b.normals)
        && a.indices == b.indices
        && a.materials == b.materials
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
    let mesher = world.settings().mesher;
    let mut meshed = 0;
    for key in world.loaded() {
        let want = scratch_mesh(fresh, key, mesher);
        match shown.get(key) {
            Some(m) => {
                assert!(same(&m.mesh, &want), "chunk {key:?} differs from scratch");
                meshed += 1;
            }
            None => assert!(
                want.is_empty(),
                "chunk {key:?} shows nothing but has a surface"
            ),
        }
    }
    // Nothing is shown that is not loaded.
    for m in shown.meshes() {
        assert!(
            world.version(m.key).is_some(),
            "{:?} shown but not loaded",
            m.key
        );
    }
    meshed
}
