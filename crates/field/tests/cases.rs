//! The project's acceptance cases that concern the field, each test naming its case (C07 is in
//! `coords`' unit tests).

use crate::util::*;
use loam_field::{BrickKey, SamplePos};

/// C05: a dig next to never-edited space reads the generator; no gaps or walls at brick
/// borders.
#[test]
fn case_c05_edits_next_to_unedited_space_read_the_generator() {
    let mut f = flat_field(10.0);
    assert_eq!(f.brick_count(), 0);
    let c = [31.5, 10.0, 31.5];
    f.apply(&dig(c, 3.0)).unwrap();
    let keys: Vec<BrickKey> = f.bricks().map(|(k, _)| k).collect();
    assert_eq!(
        keys,
        vec![
            BrickKey::new(0, 0, 0),
            BrickKey::new(1, 0, 0),
            BrickKey::new(0, 0, 1),
            BrickKey::new(1, 0, 1)
        ]
    );
    let (min, dims) = (SamplePos::new(20, 0, 20), [24usize, 24, 24]);
    let n = dims[0] * dims[1] * dims[2];
    let (mut v, mut m) = (vec![0.0; n], vec![0; n]);
    f.fill(min, dims, &mut v, &mut m);
    for (i, s) in samples([20, 0, 20], [43, 23, 43]).enumerate() {
        let p = [f64::from(s.x), f64::from(s.y), f64::from(s.z)];
        let ground = f64::from(s.y) - 10.0;
        let want = if dist(p, c) > 5.0 {
            grid(ground, 2.0)
        } else {
            grid(ground.max(3.0 - dist(p, c)), 2.0)
        };
        assert_eq!(v[i].to_bits(), want.to_bits(), "fill at {s:?}");
        assert_eq!(f.sample(s).to_bits(), want.to_bits(), "sample at {s:?}");
    }
}

/// C06: integer radius between samples — the affected box must not miss samples on one side.
#[test]
fn case_c06_integer_radius_between_samples() {
    let c = [10.5, 4.5, 10.5];
    let mut last = 0;
    for r in [0.9, 1.0, 1.1] {
        let mut f = flat_field(10.0);
        let before = f.clone();
        let out = f.apply(&dig(c, r)).unwrap();
        // The 8 samples at √0.75 m from the centre become air.
        for s in samples([10, 4, 10], [11, 5, 11]) {
            let p = [f64::from(s.x), f64::from(s.y), f64::from(s.z)];
            assert!((dist(p, c) - 0.75f64.sqrt()).abs() < 1e-12);
            assert!(f.sample(s) > 0.0, "r = {r}: {s:?} is {}", f.sample(s));
            assert_eq!(f.sample(s), grid(r - 0.75f64.sqrt(), 2.0));
        }
        let bx = out.changed.unwrap();
        let mut changed = 0;
        for s in samples([0, -6, 0], [21, 15, 21]) {
            if f.sample(s).to_bits() != before.sample(s).to_bits() {
                changed += 1;
                assert!(bx.contains(s), "r = {r}: {s:?} changed outside {bx:?}");
            }
        }
        assert_eq!(changed, out.samples_changed);
        assert!(
            changed >= last,
            "r = {r}: {changed} changed, fewer than {last}"
        );
        // The box is symmetric about the centre: nothing missed on one side.
        assert_eq!(bx.min.x + bx.max.x, 21, "{bx:?}");
        assert_eq!(bx.min.z + bx.max.z, 21, "{bx:?}");
        assert_eq!(bx.min.y + bx.max.y, 9, "{bx:?}");
        last = changed;
    }
}
