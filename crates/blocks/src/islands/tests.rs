//! Unit tests of the island module: removal boxes, split runs, lumps at other voxel sizes,
//! settings.

use std::collections::BTreeSet;

use super::*;

fn island(samples: &[[i32; 3]], vs: f64) -> Island {
    let mut s: Vec<SamplePos> = samples
        .iter()
        .map(|p| SamplePos::new(p[0], p[1], p[2]))
        .collect();
    s.sort_by_key(|p| zyx(*p));
    let mut bounds = SampleBox::point(s[0]);
    for p in &s {
        bounds.include(*p);
    }
    Island {
        materials: vec![7; s.len()],
        samples: s,
        bounds,
        voxel_size: vs,
    }
}

#[test]
fn removal_boxes_cover_exactly_the_samples() {
    // An L of 5 samples and a lone one, with a hole in the bounds.
    let i = island(
        &[
            [0, 0, 0],
            [1, 0, 0],
            [2, 0, 0],
            [0, 1, 0],
            [0, 2, 0],
            [2, 2, 1],
        ],
        0.5,
    );
    let ops = i.removal_ops(&FieldSettings::default()).unwrap();
    let mut covered = BTreeSet::new();
    for op in &ops {
        let EditOp::Cuboid {
            center,
            half_extents,
            mode,
            ..
        } = op
        else {
            panic!("{op:?}")
        };
        assert_eq!(*mode, CsgMode::Subtract);
        for z in -2..5 {
            for y in -2..5 {
                for x in -2..5 {
                    let p = [x, y, z].map(|v| f64::from(v) * 0.5);
                    if (0..3).all(|a| (p[a] - center[a]).abs() < half_extents[a]) {
                        assert!(covered.insert([x, y, z]), "covered twice: {x} {y} {z}");
                        // Half a voxel of margin on every side.
                        assert!((0..3).all(
                            |a| half_extents[a] - (p[a] - center[a]).abs() >= 0.25 - 1e-12
                        ));
                    }
                }
            }
        }
    }
    let want: BTreeSet<[i32; 3]> = i.samples.iter().map(|s| s.to_array()).collect();
    assert_eq!(covered, want);
    assert_eq!(ops.len(), 3, "{ops:?}");
    assert!(i.contains(SamplePos::new(2, 2, 1)) && !i.contains(SamplePos::new(1, 1, 0)));
    assert_eq!(i.volume(), 6.0 * 0.125);
}

#[test]
fn long_runs_are_split_to_fit_the_field_limits() {
    let row: Vec<[i32; 3]> = (0..70).map(|x| [x, 0, 0]).collect();
    let ops = island(&row, 1.0)
        .removal_ops(&FieldSettings::default())
        .unwrap();
    assert_eq!(ops.len(), 3, "32 + 32 + 6");
    let tiny = FieldSettings {
        max_edit_samples: 8,
        ..Default::default()
    };
    assert!(matches!(
        island(&row, 1.0).removal_ops(&tiny),
        Err(BlockError::Island { .. })
    ));
}

#[test]
fn lumps_at_other_voxel_sizes() {
    let spec = |m: u8| BlockSpec {
        material: crate::MaterialTable::STONE,
        paint: Some([m, m, m]),
        ..Default::default()
    };
    // Voxels of ½ m: one half block per sample, centred on it.
    let BlockOp::Lump { size, blocks } = island(&[[1, 2, 3], [2, 2, 3]], 0.5).lump(spec).unwrap()
    else {
        panic!()
    };
    assert_eq!(size, BlockSize::Half);
    assert_eq!(
        blocks.iter().map(|b| b.cell).collect::<Vec<_>>(),
        vec![[1, 2, 3], [2, 2, 3]]
    );
    assert_eq!(blocks[0].paint, Some([7; 3]));
    // Voxels of 2 m: 1 m blocks, two per sample and axis.
    let BlockOp::Lump { size, blocks } = island(&[[0, 0, 0]], 2.0).lump(spec).unwrap() else {
        panic!()
    };
    assert_eq!(size, BlockSize::Full);
    assert_eq!(blocks.len(), 8);
    // Voxels of 0.1 m: a quarter-metre block per centre that falls in the island.
    let cube: Vec<[i32; 3]> = (0..125).map(|i| [i % 5, (i / 5) % 5, i / 25]).collect();
    let BlockOp::Lump { size, blocks } = island(&cube, 0.1).lump(spec).unwrap() else {
        panic!()
    };
    assert_eq!(size, BlockSize::Quarter);
    // The island spans −0.05 to 0.45 m on each axis: block centres 0 and 0.25 m.
    assert_eq!(blocks.len(), 8);
    assert!(strictly_ascending(&blocks));
}

#[test]
fn settings_are_checked() {
    IslandSettings::default().validate().unwrap();
    for bad in [
        IslandSettings {
            margin: 0,
            ..Default::default()
        },
        IslandSettings {
            max_samples: 26,
            ..Default::default()
        },
    ] {
        assert!(bad.validate().is_err());
    }
}
