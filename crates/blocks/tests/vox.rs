//! MagicaVoxel import of every shared model (copies in the repository's `data/vox`, see its README).
//!
//! The `mmmm_cc_by_4.0` models are "Mini Mike's Metro Minis" by Mike Judge, CC BY 4.0:
//! Additional Artwork by Mike Judge. The `dot_vox_crate` files are the dot_vox crate's test
//! files (MIT).

use std::path::PathBuf;

use loam_blocks::{
    BlockPos, BlockSize, BlockWorld, FieldGround, MaterialTable, VoxError, VoxSettings, WorldBox,
    import_vox,
};
use loam_field::{CsgMode, EditOp};
use loam_physics::{PhysicsSettings, PhysicsWorld};

use crate::util::*;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/vox")
        .join(name)
}

fn read(name: &str) -> Vec<u8> {
    std::fs::read(data(name)).unwrap()
}

/// Every `.vox` file but `not_a.vox`.
fn models() -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["dot_vox_crate", "mmmm_cc_by_4.0"] {
        for e in std::fs::read_dir(data(dir)).unwrap() {
            let name = e.unwrap().file_name().into_string().unwrap();
            if name.ends_with(".vox") && name != "not_a.vox" {
                out.push(format!("{dir}/{name}"));
            }
        }
    }
    out.sort();
    out
}

/// The voxel count of each XYZI chunk, read straight from the bytes (independently of the
/// importer).
fn raw_counts(b: &[u8]) -> Vec<usize> {
    let u = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize;
    let mut at = 20 + u(12);
    let mut out = Vec::new();
    while at + 12 <= b.len() {
        if &b[at..at + 4] == b"XYZI" {
            out.push(u(at + 12));
        }
        at += 12 + u(at + 4) + u(at + 8);
    }
    out
}

/// How many times the scene graph uses each model (every model once without a graph).
fn uses(b: &[u8]) -> Vec<usize> {
    let d = dot_vox::load_bytes(b).unwrap();
    let mut n = vec![0; d.models.len()];
    if d.scenes.is_empty() {
        return vec![1; d.models.len()];
    }
    for node in &d.scenes {
        if let dot_vox::SceneNode::Shape { models, .. } = node {
            for m in models {
                n[m.model_id as usize] += 1;
            }
        }
    }
    n
}

#[test]
fn every_shared_model_imports_one_block_per_voxel() {
    let table = MaterialTable::standard();
    let names = models();
    assert_eq!(names.len(), 15);
    for name in &names {
        let bytes = read(name);
        let m = import_vox(&bytes, &table, &VoxSettings::default()).unwrap();
        let expected: usize = raw_counts(&bytes)
            .iter()
            .zip(uses(&bytes))
            .map(|(c, u)| c * u)
            .sum();
        assert_eq!(m.voxels, expected, "{name}");
        assert_eq!(m.overlapping, 0, "{name}");
        assert_eq!(m.blocks.len(), expected, "{name}");
        assert!(
            m.blocks.windows(2).all(|w| w[0].0 < w[1].0),
            "{name}: sorted, unique"
        );
        for (pos, spec) in &m.blocks {
            assert_eq!(pos.size, BlockSize::Quarter);
            let paint = spec.paint.expect("colours kept");
            assert_eq!(spec.material, table.nearest(paint), "{name}");
        }
    }
    // Known figures: the house and the park scene.
    let house = import_vox(
        &read("mmmm_cc_by_4.0/obj_house1.vox"),
        &table,
        &VoxSettings::default(),
    )
    .unwrap();
    assert_eq!(house.blocks.len(), 69_542);
    let axes = import_vox(
        &read("dot_vox_crate/axes.vox"),
        &table,
        &VoxSettings::default(),
    )
    .unwrap();
    assert_eq!((axes.models, axes.instances), (4, 10));
}

#[test]
fn models_stand_upright_in_loam_axes() {
    // MagicaVoxel's x, y (ground) and z (up) extents become Loam's x, z and y.
    let bytes = read("mmmm_cc_by_4.0/obj_house1.vox");
    let d = dot_vox::load_bytes(&bytes).unwrap();
    let vox_extent = |f: fn(&dot_vox::Voxel) -> u8| {
        let it = d.models[0].voxels.iter().map(f);
        i32::from(it.clone().max().unwrap()) - i32::from(it.min().unwrap()) + 1
    };
    let (vx, vy, vz) = (
        vox_extent(|v| v.x),
        vox_extent(|v| v.y),
        vox_extent(|v| v.z),
    );
    assert_eq!(vz, 24, "the house is 24 voxels high");
    let m = import_vox(
        &bytes,
        &MaterialTable::standard(),
        &VoxSettings {
            size: BlockSize::Half,
            origin: [10, 0, -5],
            keep_colours: false,
        },
    )
    .unwrap();
    let lo = (0..3).map(|i| m.blocks.iter().map(|(p, _)| p.cell[i]).min().unwrap());
    let hi = (0..3).map(|i| m.blocks.iter().map(|(p, _)| p.cell[i]).max().unwrap());
    let extent: Vec<i32> = lo.zip(hi).map(|(a, b)| b - a + 1).collect();
    assert_eq!(extent, vec![vx, vz, vy]);
    // Upright: the ground floor (the most filled layer of the lowest few) is at the bottom.
    let y0 = m.blocks.iter().map(|(p, _)| p.cell[1]).min().unwrap();
    let layer = |y: i32| m.blocks.iter().filter(|(p, _)| p.cell[1] == y).count();
    assert!(
        layer(y0) > layer(y0 + 23),
        "{} vs {}",
        layer(y0),
        layer(y0 + 23)
    );
    assert!(
        m.blocks
            .iter()
            .all(|(p, s)| p.size == BlockSize::Half && s.paint.is_none())
    );
}

#[test]
fn bad_files_give_typed_errors() {
    let table = MaterialTable::standard();
    let s = VoxSettings::default();
    assert!(matches!(
        import_vox(&read("dot_vox_crate/not_a.vox"), &table, &s),
        Err(VoxError::NotVox { .. })
    ));
    assert!(matches!(
        import_vox(&[], &table, &s),
        Err(VoxError::NotVox { .. })
    ));
    let house = read("mmmm_cc_by_4.0/obj_house1.vox");
    for cut in [12, 24, 100, house.len() / 2, house.len() - 1] {
        let e = import_vox(&house[..cut], &table, &s).unwrap_err();
        assert!(matches!(e, VoxError::Truncated { .. }), "cut at {cut}: {e}");
        assert!(e.to_string().starts_with("truncated .vox file"), "{e}");
    }
    // A voxel count that disagrees with its chunk's size.
    let mut bad = house.clone();
    let at = bad.windows(4).position(|w| w == b"XYZI").unwrap();
    bad[at + 12] ^= 1;
    assert!(matches!(
        import_vox(&bad, &table, &s),
        Err(VoxError::Malformed { .. })
    ));
    // Far outside the grid.
    let far = VoxSettings {
        origin: [i32::MAX - 10, 0, 0],
        ..s
    };
    assert!(matches!(
        import_vox(&read("dot_vox_crate/placeholder.vox"), &table, &far),
        Err(VoxError::OutOfRange(_))
    ));
}

#[test]
fn damaged_files_never_panic() {
    // Random byte changes in a scene-graph file and a model: always a result, never a
    // panic (and a model that still loads has one block per voxel it reports).
    let table = MaterialTable::standard();
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: usize| {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s % n as u64) as usize
    };
    for name in ["dot_vox_crate/axes.vox", "mmmm_cc_by_4.0/chr_mayor.vox"] {
        let original = read(name);
        let (mut ok, mut refused) = (0, 0);
        for _ in 0..150 {
            let mut b = original.clone();
            for _ in 0..1 + next(4) {
                let at = next(b.len());
                b[at] = next(256) as u8;
            }
            match import_vox(&b, &table, &VoxSettings::default()) {
                Ok(m) => {
                    assert_eq!(m.blocks.len() + m.overlapping, m.voxels);
                    ok += 1;
                }
                Err(_) => refused += 1,
            }
        }
        assert!(
            ok > 0 && refused > 0,
            "{name}: {ok} loaded, {refused} refused"
        );
    }
}

#[test]
fn the_house_stands_on_flat_ground_and_a_dug_corner_keeps_it_up() {
    // The house at quarter metres (16 m × 6 m × 16 m, 69 542 blocks) on flat Loam ground.
    let mut field = flat_field(0.0);
    let mut physics = PhysicsWorld::new(PhysicsSettings::default()).unwrap();
    let mut w = BlockWorld::new(MaterialTable::standard(), Default::default()).unwrap();
    let m = import_vox(
        &read("mmmm_cc_by_4.0/obj_house1.vox"),
        w.materials(),
        &VoxSettings {
            size: BlockSize::Quarter,
            origin: [0, 0, 0],
            keep_colours: true,
        },
    )
    .unwrap();
    let lowest = m.blocks.iter().map(|(p, _)| p.cell[1]).min().unwrap();
    let m = loam_blocks::VoxModel {
        blocks: m
            .blocks
            .iter()
            .map(|(p, s)| {
                let cell = [p.cell[0], p.cell[1] - lowest, p.cell[2]];
                (BlockPos::new(p.size, cell).unwrap(), *s)
            })
            .collect(),
        ..m
    };
    let t = std::time::Instant::now();
    let c = w
        .place_model(&mut physics, &FieldGround(&field), &m)
        .unwrap();
    let placed = t.elapsed();
    assert_eq!(c.placed.len(), 69_542);
    // Whatever is not joined to the ground by faces (loose decorations) falls at once.
    let loose: usize = c
        .new_pieces
        .iter()
        .map(|p| w.piece(*p).unwrap().blocks.len())
        .sum();
    assert!(loose < 500, "{loose} blocks fell");
    let standing = w.store().len();
    assert_eq!(standing + loose, 69_542);

    // Remove one wall block at head height: time the support check.
    let wall = w
        .store()
        .iter()
        .map(|(p, _)| p)
        .find(|p| p.cell[1] == 8 && w.store().face_neighbours(*p).len() >= 3)
        .unwrap();
    let t = std::time::Instant::now();
    let c = w.break_block(&mut physics, wall).unwrap();
    let removed = t.elapsed();
    assert!(c.new_pieces.len() <= 1, "{c:?}");

    // Dig a pit under one corner: all or nothing, the corner hangs on the rest of the
    // house, which still stands on the ground.
    let out = field
        .apply(&EditOp::Sphere {
            mode: CsgMode::Subtract,
            center: [0.0, -0.5, 0.0],
            radius: 3.0,
            material: 0,
            blend: 0.0,
        })
        .unwrap();
    let region = WorldBox::from_samples(out.changed.unwrap(), 1.0);
    let t = std::time::Instant::now();
    let c = w
        .terrain_changed(&mut physics, &FieldGround(&field), region)
        .unwrap();
    let dug = t.elapsed();
    let grounded = w.store().iter().filter(|(_, b)| b.on_ground).count();
    println!(
        "house: placed in {placed:?}, {loose} loose blocks fell; break_block {removed:?}; \
         dig under a corner {dug:?}, {} pieces, {grounded} blocks on the ground",
        c.new_pieces.len()
    );
    assert!(c.new_pieces.is_empty(), "{c:?}");
    assert!(
        w.store()
            .iter()
            .any(|(p, b)| p.cell[0] < 8 && p.cell[1] == 0 && !b.on_ground)
    );
}
