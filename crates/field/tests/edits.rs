//! Dig and build: exact values, reach, snapshots, bad input, bricks, hash.

use std::sync::Arc;

use crate::util::*;
use loam_field::{Brick, BrickKey, CsgMode, EditError, EditOp, Field, FieldSettings, SamplePos};

/// Exact values of a dig then a build of the same ball on flat ground `y − 10`, band 2.
#[test]
fn dig_then_build_same_ball() {
    let mut f = flat_field(10.0);
    let c = [4.0, 10.0, 4.0];
    let out = f.apply(&dig(c, 3.0)).unwrap();
    assert!(out.samples_changed > 0);
    for s in samples([-2, 4, -2], [10, 16, 10]) {
        let p = [f64::from(s.x), f64::from(s.y), f64::from(s.z)];
        let want = grid((f64::from(s.y) - 10.0).max(3.0 - dist(p, c)), 2.0);
        assert_eq!(f.sample(s).to_bits(), want.to_bits(), "after dig at {s:?}");
    }
    f.apply(&build(c, 3.0, 5)).unwrap();
    for s in samples([-2, 4, -2], [10, 16, 10]) {
        let p = [f64::from(s.x), f64::from(s.y), f64::from(s.z)];
        let d = dist(p, c) - 3.0;
        let dug = grid((f64::from(s.y) - 10.0).max(-d), 2.0);
        let want = dug.min(grid(d, 2.0));
        assert_eq!(
            f.sample(s).to_bits(),
            want.to_bits(),
            "after build at {s:?}"
        );
        // The ball is solid again, and built samples carry the build's material.
        if d < 0.0 {
            assert!(f.sample(s) < 0.0);
            assert_eq!(f.material(s), 5);
        }
    }
    assert_eq!(f.sample(SamplePos::new(4, 10, 4)), grid(-2.0, 2.0));
}

#[test]
fn edits_across_brick_borders_and_negative_coordinates() {
    let mut f = flat_field(-20.0);
    let c = [-32.0, -20.0, -0.5];
    let out = f.apply(&dig(c, 5.0)).unwrap();
    // Reach 7 m around the centre crosses bricks −2/−1 in x, y and z.
    let keys: Vec<BrickKey> = f.bricks().map(|(k, _)| k).collect();
    assert!(
        keys.contains(&BrickKey::new(-2, -1, -1)) && keys.contains(&BrickKey::new(-1, -1, 0)),
        "{keys:?}"
    );
    let bx = out.changed.unwrap();
    assert_eq!(bx.min, SamplePos::new(-38, -26, -7));
    assert_eq!(bx.max, SamplePos::new(-26, -19, 6));
    for s in samples([-40, -28, -9], [-24, -12, 8]) {
        let p = [f64::from(s.x), f64::from(s.y), f64::from(s.z)];
        let want = grid((f64::from(s.y) + 20.0).max(5.0 - dist(p, c)), 2.0);
        assert_eq!(f.sample(s).to_bits(), want.to_bits(), "{s:?}");
        if f.sample(s) != f.generator().sample(s, 1.0, 2.0) {
            assert!(
                bx.contains(s),
                "changed sample {s:?} outside the returned box"
            );
        }
    }
}

#[test]
fn outside_reach_is_untouched_and_snapshots_keep_old_values() {
    let mut f = field_with(noise_generator(21), 0.5);
    let c = [3.3, f.generator().surface_height(3.3, -7.1), -7.1];
    f.apply(&build([c[0] + 4.0, c[1] + 2.0, c[2]], 2.5, 1))
        .unwrap();
    let before = f.clone();
    let (r, band) = (4.0, f.settings().band());
    let out = f.apply(&dig(c, r)).unwrap();
    let bx = out.changed.expect("the dig changed something");
    let mut changed = 0u64;
    for s in samples(
        [-20, (c[1] * 2.0) as i32 - 30, -40],
        [30, (c[1] * 2.0) as i32 + 30, 10],
    ) {
        let p = [
            f64::from(s.x) * 0.5,
            f64::from(s.y) * 0.5,
            f64::from(s.z) * 0.5,
        ];
        let (old, new) = (before.sample(s), f.sample(s));
        if dist(p, c) > r + band {
            assert_eq!(old.to_bits(), new.to_bits(), "outside reach {s:?}");
            assert_eq!(before.material(s), f.material(s));
        }
        if old.to_bits() != new.to_bits() {
            changed += 1;
            assert!(bx.contains(s));
            assert!(new > old, "a dig only raises the field");
        }
    }
    assert_eq!(changed, out.samples_changed);
    // The snapshot is unchanged as a whole.
    assert_ne!(before.hash(), f.hash());
    let again = before.clone();
    assert_eq!(before.hash(), again.hash());
}

#[test]
fn fill_equals_sample_with_bricks() {
    let mut f = field_with(noise_generator(5), 1.0);
    for (i, c) in [[-1.0, 0.0, -1.0], [31.5, 20.0, 31.5], [-40.0, 5.0, 60.0]]
        .into_iter()
        .enumerate()
    {
        let y = f.generator().surface_height(c[0], c[2]);
        f.apply(&dig([c[0], y, c[2]], 6.0)).unwrap();
        f.apply(&build([c[0] + 3.0, y + 2.0, c[2]], 3.0, i as u8 + 1))
            .unwrap();
    }
    assert!(f.brick_count() > 4);
    let (min, dims) = (SamplePos::new(-45, -10, -8), [90usize, 50, 75]);
    let n = dims[0] * dims[1] * dims[2];
    let (mut v, mut m) = (vec![0.0f32; n], vec![0u8; n]);
    f.fill(min, dims, &mut v, &mut m);
    for (i, s) in samples([min.x, min.y, min.z], [min.x + 89, min.y + 49, min.z + 74]).enumerate() {
        assert_eq!(v[i].to_bits(), f.sample(s).to_bits(), "{s:?}");
        assert_eq!(m[i], f.material(s));
    }
    // A chunk grid with its halo.
    let k = loam_field::ChunkKey::new(-1, 0, 0);
    let (mut v, mut m) = (vec![0.0f32; 35 * 35 * 35], vec![0u8; 35 * 35 * 35]);
    let g0 = f.fill_chunk(k, 1, &mut v, &mut m);
    assert_eq!(g0, SamplePos::new(-33, -1, -1));
    assert_eq!(
        v[34 + 35 * (34 + 35 * 34)].to_bits(),
        f.sample(SamplePos::new(1, 33, 33)).to_bits()
    );
}

#[test]
fn bad_input_changes_nothing() {
    let mut f = field_with(noise_generator(1), 1.0);
    f.apply(&dig([0.0, 10.0, 0.0], 4.0)).unwrap();
    let (hash, count) = (f.hash(), f.brick_count());
    type Check = fn(&EditError) -> bool;
    let bad: Vec<(EditOp, Check)> = vec![
        (dig([f64::NAN, 0.0, 0.0], 2.0), |e| {
            matches!(
                e,
                EditError::NotFinite {
                    name: "center.x",
                    ..
                }
            )
        }),
        (build([0.0, f64::INFINITY, 0.0], 2.0, 0), |e| {
            matches!(e, EditError::NotFinite { .. })
        }),
        (dig([0.0, 0.0, f64::NEG_INFINITY], 2.0), |e| {
            matches!(e, EditError::NotFinite { .. })
        }),
        (dig([0.0, 0.0, 0.0], f64::NAN), |e| {
            matches!(e, EditError::NotFinite { name: "radius", .. })
        }),
        (dig([0.0, 0.0, 0.0], 0.0), |e| {
            matches!(e, EditError::RadiusNotPositive { .. })
        }),
        (dig([0.0, 0.0, 0.0], -3.0), |e| {
            matches!(e, EditError::RadiusNotPositive { .. })
        }),
        (build([0.0, 0.0, 0.0], 64.5, 0), |e| {
            matches!(e, EditError::RadiusTooLarge { max: 64.0, .. })
        }),
        (dig([1e12, 0.0, 0.0], 2.0), |e| {
            matches!(e, EditError::OutOfRange { .. })
        }),
    ];
    for (op, ok) in bad {
        let e = f.apply(&op).unwrap_err();
        assert!(ok(&e), "{op:?} gave {e:?}");
        assert_eq!(
            (f.hash(), f.brick_count()),
            (hash, count),
            "{op:?} changed the field"
        );
    }
    // The limit is configurable and inclusive.
    let s = FieldSettings {
        max_edit_radius: 100.0,
        ..Default::default()
    };
    let mut big = Field::new(s, Arc::new(flat_generator(0.0))).unwrap();
    assert!(big.apply(&dig([0.0, 0.0, 0.0], 100.0)).is_ok());
    assert!(
        Field::new(
            FieldSettings {
                voxel_size: 0.0,
                ..Default::default()
            },
            Arc::new(flat_generator(0.0))
        )
        .is_err()
    );
}

/// After random edits the sampled field is still 1-Lipschitz between lattice points, and a
/// ball built far above the ground does not let the air above it claim more distance.
#[test]
fn edits_keep_a_distance_bound() {
    let mut f = field_with(noise_generator(13), 1.0);
    let mut rng = TestRng(77);
    for i in 0..40 {
        let (x, z) = (rng.range(-30.0, 30.0), rng.range(-30.0, 30.0));
        let y = f.generator().surface_height(x, z) + rng.range(-3.0, 3.0);
        let op = if i % 3 == 0 {
            build([x, y, z], rng.range(1.0, 6.0), 2)
        } else {
            dig([x, y, z], rng.range(1.0, 6.0))
        };
        f.apply(&op).unwrap();
    }
    // A floating ball far above the ground.
    let top = f.generator().surface_height(0.0, 0.0) + 60.0;
    f.apply(&build([0.0, top, 0.0], 4.0, 3)).unwrap();
    let above = SamplePos::new(0, (top + 7.0) as i32, 0);
    // True distance from that sample to the ball is 3+ m; the field must not claim more.
    let p = [0.0, f64::from(above.y), 0.0];
    assert!(f64::from(f.sample(above)) <= dist(p, [0.0, top, 0.0]) - 4.0 + 1e-6);
    for _ in 0..30_000 {
        let a = SamplePos::new(
            rng.range(-36.0, 36.0) as i32,
            rng.range(-10.0, 80.0) as i32,
            rng.range(-36.0, 36.0) as i32,
        );
        let b = SamplePos::new(
            a.x + rng.range(-4.0, 4.0) as i32,
            a.y + rng.range(-4.0, 4.0) as i32,
            a.z + rng.range(-4.0, 4.0) as i32,
        );
        let ab = dist(
            [a.x, a.y, a.z].map(f64::from),
            [b.x, b.y, b.z].map(f64::from),
        );
        let df = (f64::from(f.sample(a)) - f64::from(f.sample(b))).abs();
        assert!(df <= ab + 2e-6, "{a:?} {b:?}: {df} > {ab}");
    }
}

#[test]
fn towers_are_tracked_per_column() {
    let mut f = flat_field(0.0);
    assert_eq!(f.edited_layers(0, 0), None);
    let before = f.column_bounds(0, 0);
    for y in (0..200).step_by(4) {
        f.apply(&build([10.0, f64::from(y), 10.0], 3.0, 1)).unwrap();
    }
    assert_eq!(f.edited_layers(0, 0), Some((-1, 6)));
    let after = f.column_bounds(0, 0);
    assert!(
        before.air_above < 10.0 && after.air_above >= 204.0,
        "{before:?} {after:?}"
    );
    // A neighbour column reads this one's halo: its bounds grow too.
    assert!(f.column_bounds(1, 0).air_above >= 204.0);
    assert!(f.column_bounds(3, 0).air_above < 10.0);
}

#[test]
fn edits_far_from_the_origin() {
    for x in [1e6f64, -1e6, 1e6 + 0.37] {
        let mut f = flat_field(3.0);
        let out = f.apply(&dig([x, 3.0, -x], 2.0)).unwrap();
        let bx = out.changed.unwrap();
        let s = SamplePos::new(x.round() as i32, 3, (-x).round() as i32);
        assert!(bx.contains(s));
        assert!(f.sample(s) > 0.0, "centre at {x} not dug");
        assert!(f.sample(SamplePos::new(s.x + 10, 3, s.z)) == 0.0);
    }
}

#[test]
fn no_change_makes_no_brick() {
    let mut f = flat_field(0.0);
    // Digging in the air and building deep in the ground change nothing.
    assert_eq!(f.apply(&dig([0.0, 50.0, 0.0], 5.0)).unwrap().changed, None);
    assert_eq!(
        f.apply(&build([0.0, -50.0, 0.0], 5.0, 1)).unwrap().changed,
        None
    );
    assert_eq!(f.brick_count(), 0);
    assert_eq!(f.hash().to_string(), blake3::hash(b"").to_hex().to_string());
}

#[test]
fn hash_is_order_independent_and_sensitive() {
    let a_ops = [dig([5.0, 0.0, 5.0], 3.0), build([60.0, 0.0, -40.0], 4.0, 2)];
    let (mut a, mut b) = (flat_field(0.0), flat_field(0.0));
    for op in &a_ops {
        a.apply(op).unwrap();
    }
    for op in a_ops.iter().rev() {
        b.apply(op).unwrap();
    }
    assert_eq!(a.hash(), b.hash());
    assert_eq!(a.hash().to_string().len(), 64);
    b.apply(&dig([60.0, 0.0, -40.0], 0.3)).unwrap();
    assert_ne!(a.hash(), b.hash());
    // A region hash covers only its bricks.
    let k = BrickKey::new(0, -1, 0);
    assert_eq!(a.hash_region(k, k), b.hash_region(k, k));
}

/// An op whose reach box holds more samples than `max_edit_samples` is refused before any
/// work (a radius-64 ball at 0.1 m voxels would visit 2·10⁹ samples).
#[test]
fn oversized_ops_are_refused() {
    let s = FieldSettings {
        voxel_size: 0.1,
        ..Default::default()
    };
    let mut f = Field::new(s, Arc::new(flat_generator(0.0))).unwrap();
    let e = f.apply(&build([0.0, 50.0, 0.0], 64.0, 1)).unwrap_err();
    assert!(
        matches!(
            e,
            EditError::TooManySamples {
                max: 16_777_216,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(f.brick_count(), 0);
    // A ball of radius 3 m (30 voxels) is well under the default limit.
    assert!(f.apply(&dig([0.0, 0.0, 0.0], 3.0)).unwrap().samples_changed > 0);
}

/// Sizes too large are named as what they are, with their value: a box's half extent is not
/// "the edit radius", and a capsule's ends 1e300 m apart are 1e300 m apart (the squares of
/// the differences overflow; the length does not).
#[test]
fn oversized_shapes_name_the_size() {
    let mut f = Field::new(FieldSettings::default(), Arc::new(flat_generator(0.0))).unwrap();
    let hash = f.hash();
    let cuboid = EditOp::Cuboid {
        mode: CsgMode::Union,
        center: [0.0; 3],
        half_extents: [1.0, 1e300, 1.0],
        rotation: [0.0, 0.0, 0.0, 1.0],
        material: 1,
        blend: 0.0,
    };
    let e = f.apply(&cuboid).unwrap_err();
    assert_eq!(
        e,
        EditError::SizeTooLarge {
            name: "half_extents.y",
            value: 1e300,
            max: 64.0
        }
    );
    assert_eq!(
        e.to_string(),
        "edit `half_extents.y` = 1e300 m is above the limit of 64 m"
    );
    let capsule = |b: [f64; 3]| EditOp::Capsule {
        mode: CsgMode::Subtract,
        a: [0.0; 3],
        b,
        radius: 1.0,
        material: 0,
        blend: 0.0,
    };
    let e = f.apply(&capsule([0.0, 1e300, 0.0])).unwrap_err();
    assert_eq!(
        e.to_string(),
        "edit `length` = 1e300 m is above the limit of 128 m"
    );
    // Three axes at 1e300: the length is √3 · 1e300, finite.
    let e = f.apply(&capsule([1e300, 1e300, 1e300])).unwrap_err();
    let EditError::SizeTooLarge { name, value, max } = e else {
        panic!("{e:?}");
    };
    assert_eq!((name, max), ("length", 128.0));
    assert!((value / 1e300 - 3f64.sqrt()).abs() < 1e-15, "{value}");
    // The longest axis allowed is still allowed, and one a hair longer is not.
    assert!(f.apply(&capsule([128.0, 0.0, 0.0])).is_ok());
    let hash_after = f.hash();
    assert!(matches!(
        f.apply(&capsule([128.000001, 0.0, 0.0])),
        Err(EditError::SizeTooLarge { name: "length", .. })
    ));
    assert_eq!(f.hash(), hash_after);
    assert_ne!(hash, hash_after);
}

/// Edits and fills on the last bricks of the sample range do not overflow.
#[test]
fn edits_at_the_end_of_the_sample_range() {
    let mut f = flat_field(10.0);
    let c = [2147483644.0, 10.0, -2147483645.0];
    let out = f.apply(&dig(c, 1.0)).unwrap();
    assert!(out.samples_changed > 0);
    let (mut v, mut m) = (vec![f32::NAN; 4], vec![9u8; 4]);
    f.fill(
        SamplePos::new(i32::MAX - 3, 10, 0),
        [4, 1, 1],
        &mut v,
        &mut m,
    );
    assert!(v.iter().all(|x| *x == 0.0), "{v:?}");
    let g = noise_generator(1);
    for p in [
        SamplePos::new(i32::MAX, 0, i32::MIN),
        SamplePos::new(i32::MIN, i32::MAX, i32::MAX),
    ] {
        assert!(g.sample(p, 1000.0, 2.0).is_finite());
    }
}

/// A cache of the generator's brick values (what loam-world's workers keep) gives the same
/// fills and the same edits as generating: bit for bit.
#[test]
fn cached_generator_bricks_fill_and_edit_like_the_generator() {
    use loam_field::Brick;
    use std::collections::BTreeMap;
    let g = noise_generator(11);
    let mut plain = field_with(g, 1.0);
    let h = plain.generator().surface_height(30.0, 30.0);
    plain.apply(&dig([30.0, h, 30.0], 5.0)).unwrap();
    let (vs, band) = (1.0, plain.settings().band());
    let mut cache: BTreeMap<BrickKey, Arc<[f32]>> = BTreeMap::new();
    let by = (h / 32.0).floor() as i32;
    for z in -1..=2 {
        for y in by - 1..=by + 1 {
            for x in -1..=2 {
                let k = BrickKey::new(x, y, z);
                let b = Brick::generate(plain.generator(), k, vs, band);
                assert_eq!(
                    Brick::from_generator_values(&b.values(), band).as_ref(),
                    Some(&b)
                );
                cache.insert(k, b.values().into());
            }
        }
    }
    assert!(Brick::from_generator_values(&[0.0; 7], band).is_none());
    // Values off the grid are not the generator's.
    let mut off = Brick::generate(plain.generator(), BrickKey::new(0, by, 0), vs, band).values();
    off[100] += 1e-3;
    assert!(Brick::from_generator_values(&off, band).is_none());
    let min = SamplePos::new(-20, by * 32 - 20, -20);
    let dims = [90, 80, 85];
    let n = dims[0] * dims[1] * dims[2];
    let (mut a, mut am) = (vec![0.0f32; n], vec![0u8; n]);
    let (mut b, mut bm) = (vec![1.0f32; n], vec![9u8; n]);
    plain.fill(min, dims, &mut a, &mut am);
    plain.fill_with(min, dims, &mut b, &mut bm, &|k| cache.get(&k).cloned());
    assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
    assert_eq!(am, bm);
    // An edit whose new bricks come from the cache equals one that generates them.
    let mut cached = plain.clone();
    let op = dig([33.0, h - 2.0, 62.0], 6.0);
    plain.apply(&op).unwrap();
    cached
        .apply_with(&op, |_, keys, _, _| {
            keys.iter()
                .map(|k| Brick::from_generator_values(&cache[k], band).unwrap())
                .collect()
        })
        .unwrap();
    assert_eq!(plain.hash(), cached.hash());
}

/// An edit planned now and written later equals the op applied then, while nothing was
/// written in between (on the field or a clone of it); after any write, it is refused with
/// the field unchanged.
#[test]
fn a_planned_edit_commits_like_apply_until_the_field_is_written() {
    let base = flat_field(10.0);
    let op = dig([4.0, 10.0, 4.0], 2.5);
    let mut want = base.clone();
    let out_apply = want.apply(&op).unwrap();

    let mut f = base.clone();
    let planned = f.plan_edit(&op).unwrap();
    assert_eq!(planned.samples() as u64, out_apply.samples_changed);
    assert_eq!(f.hash(), base.hash(), "planning writes nothing");
    // A clone taken before the commit shares the plan's revision.
    let mut g = f.clone();
    let out = f.commit_edit(&planned).unwrap();
    assert_eq!(out, out_apply);
    assert_eq!(f.hash(), want.hash());
    assert_eq!(
        f.sample(SamplePos::new(4, 10, 4)).to_bits(),
        want.sample(SamplePos::new(4, 10, 4)).to_bits()
    );
    g.commit_edit(&planned).unwrap();
    assert_eq!(g.hash(), want.hash());

    // Written since: by an op, by the same plan again, by inserted bricks.
    let mut h = base.clone();
    let planned = h.plan_edit(&op).unwrap();
    h.apply(&build([20.0, 10.0, 4.0], 2.0, 3)).unwrap();
    let before = h.hash();
    assert_eq!(h.commit_edit(&planned), Err(EditError::FieldChanged));
    assert_eq!(h.hash(), before);
    let mut k = base.clone();
    let planned = k.plan_edit(&op).unwrap();
    k.commit_edit(&planned).unwrap();
    assert_eq!(k.commit_edit(&planned), Err(EditError::FieldChanged));
    let mut m = base.clone();
    let planned = m.plan_edit(&op).unwrap();
    m.insert_bricks(want.bricks().map(|(key, b)| (key, Brick::clone(b))));
    assert_eq!(m.commit_edit(&planned), Err(EditError::FieldChanged));
    // Bad ops are refused at planning, as by apply.
    assert!(matches!(
        base.plan_edit(&dig([f64::NAN, 0.0, 0.0], 1.0)),
        Err(EditError::NotFinite { .. })
    ));
}

/// `check_edit` says, without reading the field, what planning says: the same error for
/// bad numbers, reaches outside the sample range, boxes over the sample limit and undo,
/// and `Ok` for every op that plans, of every kind (shapes, brushes, paint), wherever the
/// box lies (in the range, at its edge, beyond it, covering no sample).
#[test]
fn check_edit_agrees_with_planning() {
    use loam_field::{CsgMode, Falloff};
    let mut f = flat_field(10.0);
    let limit = FieldSettings {
        max_edit_samples: 4000,
        ..FieldSettings::default()
    };
    let small = Field::new(limit, Arc::new(f.generator().clone())).unwrap();
    f.apply(&dig([4.0, 10.0, 4.0], 2.0)).unwrap();
    let edge = f64::from(i32::MAX) * 0.5;
    let centers = [
        [4.0, 10.0, 4.0],
        [edge - 1.0, 0.0, 0.0],
        [0.0, -edge + 3.0, 0.0],
        [edge * 4.0, 0.0, 0.0],
        [f64::NAN, 0.0, 0.0],
        [0.0, 1e300, 0.0],
    ];
    let mut errors = 0;
    for &c in &centers {
        for r in [0.2, 2.5, 9.0, 70.0] {
            let ops = [
                dig(c, r),
                build(c, r, 3),
                EditOp::Cuboid {
                    mode: CsgMode::Intersect,
                    center: c,
                    half_extents: [r, r * 0.5, 1.0],
                    rotation: [0.0, 0.38, 0.0, 0.92],
                    material: 1,
                    blend: 0.5,
                },
                EditOp::Capsule {
                    mode: CsgMode::Union,
                    a: c,
                    b: [c[0] + r, c[1], c[2]],
                    radius: 1.0,
                    material: 2,
                    blend: 0.0,
                },
                EditOp::Torus {
                    mode: CsgMode::Subtract,
                    center: c,
                    axis: [0.0, 1.0, 0.0],
                    major_radius: r,
                    minor_radius: 0.5,
                    material: 0,
                    blend: 1.0,
                },
                EditOp::Smooth {
                    center: c,
                    radius: r,
                    strength: 0.5,
                    falloff: Falloff::Smooth,
                },
                EditOp::Paint {
                    center: c,
                    radius: r,
                    material: 4,
                    falloff: Falloff::Smooth,
                    threshold: 0.5,
                },
                EditOp::Undo { stroke: 1 },
            ];
            for op in &ops {
                for field in [&f, &small] {
                    let planned = field.plan_edit(op).map(|_| ());
                    // Compared as text: a NaN in an error is not equal to itself.
                    assert_eq!(
                        format!("{:?}", field.check_edit(op)),
                        format!("{planned:?}"),
                        "{op:?}"
                    );
                    errors += usize::from(planned.is_err());
                }
            }
        }
    }
    // Each kind of refusal was met, not only successes.
    assert!(errors > 100, "{errors} refusals");
    let huge = dig([0.0, 0.0, 0.0], 20.0);
    assert!(matches!(
        small.check_edit(&huge),
        Err(EditError::TooManySamples { .. })
    ));
    assert!(matches!(
        f.check_edit(&dig([edge * 4.0, 0.0, 0.0], 1.0)),
        Err(EditError::OutOfRange { .. })
    ));
}

/// Plans committed in the same order on two copies of a field leave them at one revision:
/// a plan made on one copy after them commits on the other (a client's prediction and its
/// confirmed field), and its result is that of applying the ops. Any other write between
/// breaks the chain.
#[test]
fn plans_committed_in_order_on_two_copies_chain() {
    let base = flat_field(10.0);
    let ops = [
        dig([4.0, 10.0, 4.0], 2.5),
        build([5.0, 10.0, 4.0], 1.5, 2),
        dig([40.0, 10.0, 4.0], 2.0),
    ];
    let mut want = base.clone();
    for op in &ops {
        want.apply(op).unwrap();
    }
    // The prediction plans and commits each op in turn; the confirmed field commits the
    // same plans later, in the same order.
    let mut predicted = base.clone();
    let mut plans = Vec::new();
    for op in &ops {
        let p = predicted.plan_edit(op).unwrap();
        predicted.commit_edit(&p).unwrap();
        plans.push(p);
    }
    let mut confirmed = base.clone();
    for p in &plans {
        confirmed.commit_edit(p).unwrap();
    }
    assert_eq!(confirmed.hash(), want.hash());
    assert_eq!(predicted.hash(), want.hash());
    // Out of order, or after another write, the chain is broken and nothing is written.
    let mut swapped = base.clone();
    assert_eq!(swapped.commit_edit(&plans[1]), Err(EditError::FieldChanged));
    let mut other = base.clone();
    other.apply(&ops[0]).unwrap();
    assert_eq!(other.commit_edit(&plans[1]), Err(EditError::FieldChanged));
    assert_eq!(swapped.hash(), base.hash());
}
