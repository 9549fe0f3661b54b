//! Footing on a real hillside: blocks aimed at the generated terrain rest on it, at a grid
//! level where one exists, else on a pad levelled by the terrain op `levelling_op` gives.

use std::sync::Arc;

use loam_blocks::{
    BlockPos, BlockSettings, BlockSize, FieldGround, Footing, footing, level_near, levelling_op,
    seat,
};
use loam_field::{CaveSettings, Field, FieldSettings, Generator, NoiseTerrainSettings};

use crate::util::{block_world, stone};

fn hills() -> Field {
    let s = NoiseTerrainSettings {
        seed: 7,
        ..Default::default()
    };
    let caves = CaveSettings {
        enabled: false,
        ..Default::default()
    };
    let g = Generator::noise(&s, &caves).unwrap();
    Field::new(FieldSettings::default(), Arc::new(g)).unwrap()
}

/// Where a click on the ground at (x, z) puts a block of `size` at first: the cell holding
/// the point half an edge above the surface (as the editor's block tool does).
fn aimed(field: &Field, size: BlockSize, x: f64, z: f64) -> (BlockPos, f64) {
    let h = field.generator().surface_height(x, z);
    let p = BlockPos::containing(size, [x, h + size.edge() / 2.0, z]).unwrap();
    (p, h)
}

#[test]
fn every_block_aimed_at_a_hillside_rests_after_levelling() {
    let settings = BlockSettings::default();
    for size in [BlockSize::Full, BlockSize::Quarter] {
        let mut field = hills();
        let (mut seated, mut levelled) = (0, 0);
        for i in 0..64 {
            // Spots 6 m apart so that pads do not overlap.
            let (x, z) = (f64::from(i % 8) * 6.0 + 0.3, f64::from(i / 8) * 6.0 + 0.6);
            let (pos, h) = aimed(&field, size, x, z);
            let pos = match seat(&FieldGround(&field), pos, &settings) {
                Some(p) => {
                    seated += 1;
                    p
                }
                None => {
                    levelled += 1;
                    let p = level_near(pos, h).unwrap();
                    field.apply(&levelling_op(p, 1.0)).unwrap();
                    p
                }
            };
            assert_eq!(
                footing(&FieldGround(&field), pos, &settings),
                Footing::OnGround,
                "{size:?} at ({x}, {z}): {pos:?}"
            );
        }
        assert_eq!(seated + levelled, 64);
        // The hillside leaves most 1 m blocks without a resting level of their own.
        if size == BlockSize::Full {
            assert!(levelled > 32, "{levelled} of 64 needed a pad");
        }
        eprintln!("{size:?}: {seated} seated, {levelled} on a levelled pad");
    }
}

#[test]
fn a_block_on_a_levelled_pad_is_held_and_nothing_falls() {
    let settings = BlockSettings::default();
    let mut field = hills();
    // The first spot along a line up the hill where no grid level rests on the ground.
    let (pos, h) = (0..100)
        .map(|i| aimed(&field, BlockSize::Full, f64::from(i) * 0.7 + 0.3, 5.5))
        .find(|(p, _)| seat(&FieldGround(&field), *p, &settings).is_none())
        .expect("a spot without a resting level");
    let pos = level_near(pos, h).unwrap();
    field.apply(&levelling_op(pos, 1.0)).unwrap();
    let mut w = block_world();
    let mut physics = loam_physics::PhysicsWorld::new(Default::default()).unwrap();
    let changes = w
        .place(&mut physics, &FieldGround(&field), pos, stone())
        .unwrap();
    assert_eq!(changes.placed.len(), 1);
    assert!(changes.new_pieces.is_empty());
    assert_eq!(w.pieces().count(), 0);
    assert!(w.store().get(pos).is_some());
}
