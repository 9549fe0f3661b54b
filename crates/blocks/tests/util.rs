//! Shared fixtures: flat ground (analytic and as a loam-field Field), a physics floor,
//! block helpers and a frame driver.

#![allow(dead_code)]

use std::sync::Arc;

use loam_blocks::{
    BlockPos, BlockSettings, BlockSize, BlockSpec, BlockStore, BlockWorld, Changes, MaterialId,
    MaterialTable, PieceId, PieceState, StepReport,
};
use loam_field::{CaveSettings, Field, FieldSettings, Generator, NoiseLayer, NoiseTerrainSettings};
use loam_physics::{PhysicsSettings, PhysicsWorld, TerrainShape};

pub const DT: f32 = 1.0 / 60.0;

/// Flat analytic ground: solid below y = 0.
pub fn flat(p: [f64; 3]) -> f32 {
    p[1] as f32
}

pub fn full(x: i32, y: i32, z: i32) -> BlockPos {
    BlockPos::new(BlockSize::Full, [x, y, z]).unwrap()
}

pub fn stone() -> BlockSpec {
    BlockSpec::of(MaterialTable::STONE)
}

pub fn spec(m: MaterialId) -> BlockSpec {
    BlockSpec::of(m)
}

/// A store with stone blocks at `cells` on flat ground.
pub fn store_of(cells: &[BlockPos]) -> BlockStore {
    let mut s = BlockStore::new();
    for &p in cells {
        s.place(
            p,
            &stone(),
            &MaterialTable::standard(),
            &flat,
            &BlockSettings::default(),
        )
        .unwrap();
    }
    s
}

/// A physics floor at y = 0 over x, z in [-20, 20] (a quad, two triangles).
pub fn floor_shape() -> TerrainShape {
    let p = [
        [-20.0, 0.0, -20.0],
        [20.0, 0.0, -20.0],
        [20.0, 0.0, 20.0],
        [-20.0, 0.0, 20.0],
    ];
    TerrainShape::build(&p, &[0, 2, 1, 0, 3, 2], [0.0; 3])
        .unwrap()
        .unwrap()
}

pub fn physics_with_floor(settings: PhysicsSettings) -> PhysicsWorld {
    let mut w = PhysicsWorld::new(settings).unwrap();
    w.set_chunk([0, 0, 0], Some(floor_shape()));
    w
}

pub fn block_world() -> BlockWorld {
    BlockWorld::new(MaterialTable::standard(), BlockSettings::default()).unwrap()
}

/// Places `spec` blocks at `cells` on flat ground; asserts nothing fell.
pub fn build(w: &mut BlockWorld, physics: &mut PhysicsWorld, cells: &[BlockPos], spec: BlockSpec) {
    for &p in cells {
        let c = w.place(physics, &flat, p, spec).unwrap();
        assert!(c.new_pieces.is_empty(), "{p:?} fell: {c:?}");
    }
}

/// Places a stone block at `pos` in the air over flat ground: it falls at once, as one
/// piece, whose id this returns.
pub fn drop_block(w: &mut BlockWorld, physics: &mut PhysicsWorld, pos: BlockPos) -> PieceId {
    let c = w.place(physics, &flat, pos, stone()).unwrap();
    assert_eq!(c.new_pieces.len(), 1, "{pos:?} did not fall alone: {c:?}");
    c.new_pieces[0]
}

/// Steps `frames` 60 Hz frames, returning every report.
pub fn run(w: &mut BlockWorld, physics: &mut PhysicsWorld, frames: usize) -> Vec<StepReport> {
    (0..frames).map(|_| w.step(physics, DT).unwrap()).collect()
}

/// Steps until every piece is rubble (at most `max_frames`); returns the frames run.
pub fn settle(w: &mut BlockWorld, physics: &mut PhysicsWorld, max_frames: usize) -> usize {
    for f in 0..max_frames {
        w.step(physics, DT).unwrap();
        if w.pieces()
            .all(|p| matches!(p.state, PieceState::Rubble { .. }))
        {
            return f + 1;
        }
    }
    panic!("pieces still moving after {max_frames} frames");
}

/// The blocks of a piece, as grid positions.
pub fn piece_cells(w: &BlockWorld, id: PieceId) -> Vec<BlockPos> {
    w.piece(id).unwrap().blocks.iter().map(|b| b.pos).collect()
}

pub fn all_new_pieces(reports: &[StepReport]) -> Vec<PieceId> {
    reports
        .iter()
        .flat_map(|r| r.changes.new_pieces.iter().copied())
        .collect()
}

pub fn no_changes(c: &Changes) -> bool {
    c.new_pieces.is_empty() && c.broken.is_empty()
}

const OFF: NoiseLayer = NoiseLayer {
    amplitude: 0.0,
    wavelength: 1.0,
    octaves: 0,
};

/// Flat Loam ground at `base` metres (no caves), 1 m voxels.
pub fn flat_field(base: f64) -> Field {
    let s = NoiseTerrainSettings {
        base_height: base,
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

/// The terrain collider of a chunk (the library's, under the name the tests use).
pub use loam_blocks::field_collider as chunk_shape;

/// Puts the chunks around the origin (x, z in −1..=0, y in −1..=0) into `physics`.
pub fn load_chunks(physics: &mut PhysicsWorld, field: &Field) {
    for z in -1..=0 {
        for y in -1..=0 {
            for x in -1..=0 {
                physics.set_chunk([x, y, z], chunk_shape(field, [x, y, z]));
            }
        }
    }
}

/// The lowest corner of a piece's blocks at its current pose, world y metres.
pub fn lowest_corner(w: &BlockWorld, id: PieceId) -> f64 {
    let p = w.piece(id).unwrap();
    let mut low = f64::INFINITY;
    for b in &p.blocks {
        let lo = p.local_min(b.pos);
        let e = b.pos.size.edge();
        for corner in 0..8 {
            let c = [0, 1, 2].map(|i| lo[i] + if corner >> i & 1 == 1 { e } else { 0.0 });
            low = low.min(p.to_world(c)[1]);
        }
    }
    low
}
