//! Property tests: random edit sequences against a naive reference that evaluates min/max
//! over the whole op list at every sample (no bricks, no reach, no boxes).

use proptest::prelude::*;

use crate::util::*;
use loam_field::{CsgMode, EditOp, Field, Generator, SamplePos};

fn naive(generator: &Generator, ops: &[EditOp], s: SamplePos, vs: f64, band: f64) -> (f32, u8) {
    let clamp = |v: f64| grid(v, band);
    let mut v = generator.sample(s, vs, band);
    let mut m = 0u8;
    let p = [
        f64::from(s.x) * vs,
        f64::from(s.y) * vs,
        f64::from(s.z) * vs,
    ];
    for op in ops {
        let EditOp::Sphere {
            mode,
            center,
            radius,
            material,
            ..
        } = *op
        else {
            unreachable!("only spheres here")
        };
        let d = dist(p, center) - radius;
        match mode {
            CsgMode::Union => {
                let s = clamp(d);
                if s < v {
                    v = s;
                    m = material;
                }
            }
            CsgMode::Subtract => v = v.max(clamp(-d)),
            CsgMode::Intersect => unreachable!("the strategy makes no intersections"),
        }
    }
    (v, m)
}

fn op_strategy() -> impl Strategy<Value = EditOp> {
    (
        any::<bool>(),
        -20.0..20.0f64,
        -8.0..12.0f64,
        -20.0..20.0f64,
        0.3..9.0f64,
        0u8..8,
    )
        .prop_map(|(b, x, y, z, r, m)| {
            let mode = if b { CsgMode::Union } else { CsgMode::Subtract };
            EditOp::Sphere {
                mode,
                center: [x, y, z],
                radius: r,
                material: m,
                blend: 0.0,
            }
        })
}

fn check(generator: Generator, vs: f64, ops: &[EditOp]) -> Result<(), TestCaseError> {
    let mut f: Field = field_with(generator.clone(), vs);
    let band = f.settings().band();
    for op in ops {
        f.apply(op).unwrap();
    }
    let n = (32.0 / vs) as i32;
    let lo = (-32.0 / vs) as i32;
    let (min, dims) = (SamplePos::new(lo, lo, lo), [(n - lo + 1) as usize; 3]);
    let len = dims[0] * dims[1] * dims[2];
    let (mut v, mut m) = (vec![0.0; len], vec![0; len]);
    f.fill(min, dims, &mut v, &mut m);
    for (i, s) in samples([lo; 3], [n; 3]).enumerate() {
        let (want, wm) = naive(&generator, ops, s, vs, band);
        prop_assert_eq!(v[i].to_bits(), want.to_bits(), "value at {:?}", s);
        prop_assert_eq!(m[i], wm, "material at {:?}", s);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_edits_match_the_naive_reference_on_flat_ground(ops in prop::collection::vec(op_strategy(), 1..10)) {
        check(flat_generator(1.5), 1.0, &ops)?;
    }

    #[test]
    fn random_edits_match_the_naive_reference_on_noise_terrain(
        ops in prop::collection::vec(op_strategy(), 1..10),
        half in any::<bool>(),
    ) {
        let g = noise_generator(3);
        check(g, if half { 0.5 } else { 1.0 }, &ops)?;
    }
}
