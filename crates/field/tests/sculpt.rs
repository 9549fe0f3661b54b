//! Sculpting: CSG shapes, brushes, paint; the distance bound after strokes; resolution
//! invariance; bad input.

use std::sync::Arc;

use crate::util::*;
use loam_field::sculpt::shapes;
use loam_field::{CsgMode, EditError, EditOp, Falloff, Field, FieldSettings, SamplePos};

fn flat_at(base: f64, voxel_size: f64) -> Field {
    field_with(flat_generator(base), voxel_size)
}

fn raise(center: [f64; 3], radius: f64, strength: f64) -> EditOp {
    EditOp::Raise {
        center,
        radius,
        strength,
        falloff: Falloff::Smooth,
    }
}

/// Height of the surface above (x, z), found by the field raycast from 100 m up.
fn surface(f: &Field, x: f64, z: f64) -> f64 {
    f.raycast([x, 100.0, z], [0.0, -1.0, 0.0], 200.0)
        .unwrap()
        .expect("ground below")
        .position[1]
}

#[test]
fn shapes_combine_by_their_exact_sdf() {
    let q = shapes::normalize_quat([0.2, 0.3, -0.1, 0.9]).unwrap();
    let cases = [
        EditOp::Cuboid {
            mode: CsgMode::Subtract,
            center: [3.3, 10.2, -2.1],
            half_extents: [4.0, 2.5, 3.0],
            rotation: [0.2, 0.3, -0.1, 0.9],
            material: 0,
            blend: 0.0,
        },
        EditOp::Capsule {
            mode: CsgMode::Union,
            a: [-5.0, 9.0, 0.5],
            b: [6.0, 13.0, 2.0],
            radius: 2.2,
            material: 3,
            blend: 0.0,
        },
        EditOp::Cylinder {
            mode: CsgMode::Subtract,
            a: [0.0, 4.0, 0.0],
            b: [1.0, 14.0, 2.0],
            radius: 3.0,
            material: 0,
            blend: 0.0,
        },
        EditOp::Torus {
            mode: CsgMode::Union,
            center: [0.5, 12.0, 0.5],
            axis: [0.0, 1.0, 1.0],
            major_radius: 6.0,
            minor_radius: 1.5,
            material: 5,
            blend: 0.0,
        },
    ];
    for op in cases {
        let mut f = flat_at(10.0, 1.0);
        let before = f.clone();
        let out = f.apply(&op).unwrap();
        assert!(out.samples_changed > 100, "{op:?}");
        let band = 2.0f64;
        let clamp = |v: f64| grid(v, band);
        // The torus axis is normalised in the op: allow its rounding, which can move a value
        // to the next grid step. Every other shape is exact.
        let tol = match op {
            EditOp::Torus { .. } => grid_step(band) * 1.001,
            _ => 0.0,
        };
        let mut checked = 0;
        for s in samples([-14, -2, -14], [14, 24, 14]) {
            let p = [s.x, s.y, s.z].map(f64::from);
            let (d, mode, mat) = match op {
                EditOp::Cuboid {
                    center,
                    half_extents,
                    mode,
                    material,
                    ..
                } => (shapes::cuboid(p, center, half_extents, q), mode, material),
                EditOp::Capsule {
                    a,
                    b,
                    radius,
                    mode,
                    material,
                    ..
                } => (shapes::capsule(p, a, b, radius), mode, material),
                EditOp::Cylinder {
                    a,
                    b,
                    radius,
                    mode,
                    material,
                    ..
                } => (shapes::cylinder(p, a, b, radius), mode, material),
                EditOp::Torus {
                    center,
                    major_radius,
                    minor_radius,
                    mode,
                    material,
                    ..
                } => {
                    let axis = [0.0, 1.0 / 2f64.sqrt(), 1.0 / 2f64.sqrt()];
                    (
                        shapes::torus(p, center, axis, major_radius, minor_radius),
                        mode,
                        material,
                    )
                }
                _ => unreachable!(),
            };
            let old = before.sample(s);
            let (want, want_m) = match mode {
                CsgMode::Union if clamp(d) < old => (clamp(d), mat),
                CsgMode::Subtract if clamp(-d) > old => (clamp(-d), 0),
                _ => (old, before.material(s)),
            };
            let got = f.sample(s);
            assert!(
                f64::from((got - want).abs()) <= tol,
                "{op:?} at {s:?}: {got} vs {want}"
            );
            if d < 0.0 && mode == CsgMode::Union {
                assert_eq!(f.material(s), want_m);
            }
            checked += 1;
        }
        assert!(checked > 10_000);
    }
}

#[test]
fn soft_union_blends_and_intersect_cuts() {
    let ball = |blend| EditOp::Sphere {
        mode: CsgMode::Union,
        center: [0.0, 12.0, 0.0],
        radius: 3.0,
        material: 2,
        blend,
    };
    let mut hard = flat_at(10.0, 1.0);
    hard.apply(&ball(0.0)).unwrap();
    let mut soft = flat_at(10.0, 1.0);
    soft.apply(&ball(2.0)).unwrap();
    let mut filled = 0;
    for s in samples([-8, 6, -8], [8, 18, 8]) {
        let (h, v) = (hard.sample(s), soft.sample(s));
        assert!(v <= h + 1e-6, "smooth min is at most min at {s:?}");
        if v < h - 1e-3 {
            filled += 1;
        }
    }
    assert!(filled > 20, "the blend fills the crease ({filled} samples)");
    // Far from the crease (here: inside the ball, deep in the ground) they agree.
    assert_eq!(
        hard.sample(SamplePos::new(0, 12, 0)),
        soft.sample(SamplePos::new(0, 12, 0))
    );

    // Intersect with a ball: the ground inside the shape's box stays only inside the ball.
    let mut f = flat_at(10.0, 1.0);
    let op = EditOp::Sphere {
        mode: CsgMode::Intersect,
        center: [0.0, 8.0, 0.0],
        radius: 4.0,
        material: 0,
        blend: 0.0,
    };
    f.apply(&op).unwrap();
    assert!(
        f.sample(SamplePos::new(0, 8, 0)) < 0.0,
        "inside ball and ground"
    );
    assert!(
        f.sample(SamplePos::new(5, 5, 0)) > 0.0,
        "ground outside the ball is cut"
    );
    assert!(f.sample(SamplePos::new(0, 13, 0)) > 0.0);
    // Beyond the shape's box grown by the band nothing changes.
    assert_eq!(f.sample(SamplePos::new(9, 5, 0)), -2.0);
}

/// The rise Δ of a flat surface at horizontal distance `x` from a brush centred on it: the
/// surface point (x, Δ) moves by `strength · w(|(x, Δ)| / radius)`, solved by iteration.
fn expected_rise(falloff: Falloff, x: f64, radius: f64, strength: f64) -> f64 {
    let mut d = strength;
    for _ in 0..100 {
        d = strength * falloff.weight((x * x + d * d).sqrt() / radius);
    }
    d
}

#[test]
fn raise_and_lower_move_the_surface_by_falloff_times_strength() {
    let mut f = flat_at(10.0, 1.0);
    f.apply(&raise([0.0, 10.0, 0.0], 8.0, 1.0)).unwrap();
    // The falloff is over the 3D distance from the centre: the new surface point (x, 10 + Δ)
    // has Δ = w(|(x, Δ)| / r). Linear interpolation between samples costs up to ~0.02 m.
    for x in [0.0, 2.0, 4.0, 6.0] {
        let want = 10.0 + expected_rise(Falloff::Smooth, x, 8.0, 1.0);
        let got = surface(&f, x, 0.0);
        assert!((got - want).abs() < 0.03, "x = {x}: {got} vs {want}");
    }
    assert!((surface(&f, 9.0, 0.0) - 10.0).abs() < 1e-5);
    let mut f = flat_at(10.0, 1.0);
    f.apply(&EditOp::Lower {
        center: [0.0, 10.0, 0.0],
        radius: 8.0,
        strength: 1.5,
        falloff: Falloff::Linear,
    })
    .unwrap();
    for x in [0.0, 3.0] {
        let want = 10.0 - expected_rise(Falloff::Linear, x, 8.0, 1.5);
        let got = surface(&f, x, 0.0);
        assert!((got - want).abs() < 0.03, "x = {x}: {got} vs {want}");
    }
}

/// The same raise stroke at 1 m and 0.5 m voxels moves the surface by the same distance
/// within 5 %.
#[test]
fn raise_is_resolution_invariant() {
    let mut rise = Vec::new();
    for vs in [1.0, 0.5] {
        let mut f = flat_at(10.0, vs);
        for _ in 0..10 {
            f.apply(&raise([0.25, 10.0, 0.25], 6.0, 0.4)).unwrap();
        }
        rise.push([0.25, 2.0, 3.5].map(|x| surface(&f, x, 0.25) - 10.0));
    }
    for i in 0..3 {
        let (a, b) = (rise[0][i], rise[1][i]);
        assert!(a > 0.3, "{rise:?}");
        assert!((a - b).abs() <= 0.05 * a, "{rise:?}");
    }
}

#[test]
fn smooth_flatten_noise_and_paint() {
    // Smooth wears a bump down and leaves flat ground flat.
    let mut f = flat_at(10.0, 1.0);
    f.apply(&raise([0.0, 10.0, 0.0], 3.0, 3.0)).unwrap();
    let top = surface(&f, 0.0, 0.0);
    let smooth = EditOp::Smooth {
        center: [0.0, 11.0, 0.0],
        radius: 6.0,
        strength: 1.0,
        falloff: Falloff::Constant,
    };
    for _ in 0..5 {
        f.apply(&smooth).unwrap();
    }
    let worn = surface(&f, 0.0, 0.0);
    assert!(worn < top - 0.5, "{top} → {worn}");
    let mut flat = flat_at(10.0, 1.0);
    flat.apply(&smooth).unwrap();
    assert!((surface(&flat, 1.5, 0.5) - 10.0).abs() < 1e-5);

    // Flatten pulls a bumpy surface onto the plane.
    let mut f = flat_at(10.0, 1.0);
    f.apply(&raise([2.0, 10.0, 0.0], 4.0, 2.0)).unwrap();
    let flatten = EditOp::Flatten {
        center: [0.0, 10.0, 0.0],
        radius: 8.0,
        strength: 0.5,
        falloff: Falloff::Smooth,
        plane_point: [0.0, 10.5, 0.0],
        plane_normal: [0.0, 2.0, 0.0],
    };
    for _ in 0..12 {
        f.apply(&flatten).unwrap();
    }
    for x in [-1.0, 0.0, 1.5, 2.0] {
        assert!(
            (surface(&f, x, 0.0) - 10.5).abs() < 0.1,
            "{x}: {}",
            surface(&f, x, 0.0)
        );
    }

    // Noise is deterministic per seed.
    let noise = |seed| EditOp::Noise {
        center: [0.0, 10.0, 0.0],
        radius: 6.0,
        strength: 1.0,
        falloff: Falloff::Smooth,
        seed,
        wavelength: 3.0,
    };
    let (mut a, mut b, mut c) = (flat_at(10.0, 1.0), flat_at(10.0, 1.0), flat_at(10.0, 1.0));
    a.apply(&noise(1)).unwrap();
    b.apply(&noise(1)).unwrap();
    c.apply(&noise(2)).unwrap();
    assert_eq!(a.hash(), b.hash());
    assert_ne!(a.hash(), c.hash());
    assert!(a.brick_count() > 0);

    // Paint sets the material where the weight reaches the threshold, values stay.
    let mut f = flat_at(10.0, 1.0);
    let before = f.clone();
    let out = f
        .apply(&EditOp::Paint {
            center: [0.0, 10.0, 0.0],
            radius: 4.0,
            material: 7,
            falloff: Falloff::Linear,
            threshold: 0.5,
        })
        .unwrap();
    assert!(out.samples_changed > 0);
    for s in samples([-5, 5, -5], [5, 15, 5]) {
        assert_eq!(f.sample(s), before.sample(s));
        let d = [s.x, s.y - 10, s.z].map(f64::from);
        let w = 1.0 - (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() / 4.0;
        let want = if w >= 0.5 { 7 } else { 0 };
        assert_eq!(f.material(s), want, "{s:?}");
    }
}

/// After many strokes of raise, lower, smooth and noise, neighbouring samples differ by at
/// most a voxel (a distance bound) and the raycast finds the surface where a dense march
/// does.
#[test]
fn the_field_stays_a_distance_bound_after_many_strokes() {
    let mut f = field_with(noise_generator(4), 1.0);
    let mut rng = TestRng(99);
    for i in 0..60 {
        let c = [
            rng.next_f64() * 24.0 - 12.0,
            0.0,
            rng.next_f64() * 24.0 - 12.0,
        ];
        let c = [c[0], f.generator().surface_height(c[0], c[2]), c[2]];
        let r = 3.0 + rng.next_f64() * 5.0;
        let op = match i % 4 {
            0 => raise(c, r, 0.3 * r),
            1 => EditOp::Lower {
                center: c,
                radius: r,
                strength: 0.3 * r,
                falloff: Falloff::Sharp { n: 3.0 },
            },
            2 => EditOp::Noise {
                center: c,
                radius: r,
                strength: 0.5 * r,
                falloff: Falloff::Sphere,
                seed: i,
                wavelength: 2.0,
            },
            _ => EditOp::Smooth {
                center: c,
                radius: r,
                strength: 0.8,
                falloff: Falloff::InverseSquare,
            },
        };
        f.apply(&op).unwrap();
    }
    let mut worst: f32 = 0.0;
    for s in samples([-20, -10, -20], [20, 60, 20]) {
        let v = f.sample(s);
        for n in [
            SamplePos::new(s.x + 1, s.y, s.z),
            SamplePos::new(s.x, s.y + 1, s.z),
            SamplePos::new(s.x, s.y, s.z + 1),
        ] {
            worst = worst.max((f.sample(n) - v).abs());
        }
    }
    assert!(
        worst <= 1.0 + 1e-4,
        "neighbours differ by {worst} m at 1 m voxels"
    );
    let mut rng = TestRng(5);
    for _ in 0..200 {
        let (x, z) = (rng.next_f64() * 30.0 - 15.0, rng.next_f64() * 30.0 - 15.0);
        let hit = f.raycast([x, 120.0, z], [0.0, -1.0, 0.0], 300.0).unwrap();
        // A dense march down the same line (1 mm steps near the hit).
        let value = |y: f64| trilinear(&f, [x, y, z]);
        let mut y = 120.0;
        while y > -180.0 && value(y) >= 0.0 {
            y -= 0.01;
        }
        match hit {
            Some(h) => assert!(
                (h.position[1] - y).abs() < 0.02,
                "({x}, {z}): {} vs {y}",
                h.position[1]
            ),
            None => assert!(y <= -180.0),
        }
    }
}

fn trilinear(f: &Field, p: [f64; 3]) -> f64 {
    let b = p.map(|v| v.floor());
    let t = [p[0] - b[0], p[1] - b[1], p[2] - b[2]];
    let mut v = 0.0;
    for c in 0..8 {
        let o = [c & 1, (c >> 1) & 1, (c >> 2) & 1];
        let w: f64 = (0..3)
            .map(|i| if o[i] == 1 { t[i] } else { 1.0 - t[i] })
            .product();
        let s = SamplePos::new(b[0] as i32 + o[0], b[1] as i32 + o[1], b[2] as i32 + o[2]);
        v += w * f64::from(f.sample(s));
    }
    v
}

#[test]
fn bad_sculpt_input_is_a_typed_error_and_changes_nothing() {
    let mut f = flat_at(10.0, 1.0);
    f.apply(&raise([0.0, 10.0, 0.0], 4.0, 1.0)).unwrap();
    let hash = f.hash();
    let c = [0.0, 10.0, 0.0];
    let bad = [
        EditOp::Raise {
            center: c,
            radius: 4.0,
            strength: f64::NAN,
            falloff: Falloff::Smooth,
        },
        EditOp::Raise {
            center: c,
            radius: 4.0,
            strength: 5.0,
            falloff: Falloff::Smooth,
        },
        EditOp::Lower {
            center: c,
            radius: -1.0,
            strength: 1.0,
            falloff: Falloff::Smooth,
        },
        EditOp::Smooth {
            center: c,
            radius: 4.0,
            strength: 1.5,
            falloff: Falloff::Smooth,
        },
        EditOp::Noise {
            center: c,
            radius: 4.0,
            strength: 1.0,
            falloff: Falloff::Smooth,
            seed: 0,
            wavelength: 0.0,
        },
        EditOp::Paint {
            center: c,
            radius: 4.0,
            material: 1,
            falloff: Falloff::Sharp { n: 1.0 },
            threshold: 0.5,
        },
        EditOp::Flatten {
            center: c,
            radius: 4.0,
            strength: 0.5,
            falloff: Falloff::Smooth,
            plane_point: c,
            plane_normal: [0.0; 3],
        },
        EditOp::Cuboid {
            mode: CsgMode::Union,
            center: c,
            half_extents: [1.0, 0.0, 1.0],
            rotation: [0.0, 0.0, 0.0, 1.0],
            material: 0,
            blend: 0.0,
        },
        EditOp::Cuboid {
            mode: CsgMode::Union,
            center: c,
            half_extents: [1.0; 3],
            rotation: [0.0; 4],
            material: 0,
            blend: 0.0,
        },
        EditOp::Cylinder {
            mode: CsgMode::Union,
            a: c,
            b: c,
            radius: 1.0,
            material: 0,
            blend: 0.0,
        },
        EditOp::Torus {
            mode: CsgMode::Union,
            center: c,
            axis: [0.0, 1.0, 0.0],
            major_radius: 1.0,
            minor_radius: 2.0,
            material: 0,
            blend: 0.0,
        },
        EditOp::Capsule {
            mode: CsgMode::Union,
            a: [0.0; 3],
            b: [1000.0, 0.0, 0.0],
            radius: 1.0,
            material: 0,
            blend: 0.0,
        },
        EditOp::Sphere {
            mode: CsgMode::Union,
            center: c,
            radius: 1.0,
            material: 0,
            blend: f64::INFINITY,
        },
        EditOp::Sphere {
            mode: CsgMode::Union,
            center: c,
            radius: 100.0,
            material: 0,
            blend: 0.0,
        },
        EditOp::Undo { stroke: 1 },
    ];
    for op in bad {
        let e = f.apply(&op).unwrap_err();
        assert_eq!(f.hash(), hash, "{op:?} → {e}");
    }
    assert!(matches!(
        f.apply(&EditOp::Redo { stroke: 3 }),
        Err(EditError::NeedsHistory { kind: "redo" })
    ));
    // A box beyond max_edit_samples at a small voxel size.
    let mut tiny = Field::new(
        FieldSettings {
            voxel_size: 0.01,
            ..Default::default()
        },
        Arc::new(flat_generator(0.0)),
    )
    .unwrap();
    let big = EditOp::Cuboid {
        mode: CsgMode::Subtract,
        center: [0.0; 3],
        half_extents: [5.0; 3],
        rotation: [0.0, 0.0, 0.0, 1.0],
        material: 0,
        blend: 0.0,
    };
    assert!(matches!(
        tiny.apply(&big),
        Err(EditError::TooManySamples { .. })
    ));
    assert_eq!(tiny.brick_count(), 0);
}
