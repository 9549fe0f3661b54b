//! The field raycast (`Field::raycast`): hits on flat ground, spheres, thin features, chunk
//! corners, negative coordinates, noise terrain, and bad numbers (case C08).

use crate::util::*;
use loam_field::{
    CaveSettings, Field, Generator, NoiseTerrainSettings, RAY_MIN_STEP_VOXELS, RayHit,
    RaycastError, SamplePos,
};

const DOWN: [f64; 3] = [0.0, -1.0, 0.0];

fn along(o: [f64; 3], d: [f64; 3], t: f64) -> [f64; 3] {
    [0, 1, 2].map(|i| o[i] + t * d[i])
}

fn unit(v: [f64; 3]) -> [f64; 3] {
    let l = dist(v, [0.0; 3]);
    v.map(|c| c / l)
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn hit(f: &Field, o: [f64; 3], d: [f64; 3], max: f64) -> RayHit {
    f.raycast(o, d, max)
        .unwrap()
        .unwrap_or_else(|| panic!("no hit from {o:?} along {d:?} within {max}"))
}

/// A random unit vector (uniform on the sphere, by rejection).
fn random_dir(rng: &mut TestRng) -> [f64; 3] {
    loop {
        let v = [0; 3].map(|_| rng.range(-1.0, 1.0));
        let l = dist(v, [0.0; 3]);
        if l > 0.1 && l <= 1.0 {
            return v.map(|c| c / l);
        }
    }
}

/// Reference: the trilinear interpolant of the samples at world point `p`, written out.
fn interp(f: &Field, p: [f64; 3]) -> f64 {
    let vs = f.settings().voxel_size;
    let s = p.map(|c| c / vs);
    let c = s.map(f64::floor);
    let mut acc = 0.0;
    for k in 0..8i32 {
        let o = [k & 1, (k >> 1) & 1, k >> 2];
        let w: f64 = (0..3)
            .map(|i| {
                let u = s[i] - c[i];
                if o[i] == 1 { u } else { 1.0 - u }
            })
            .product();
        let sp = SamplePos::new(c[0] as i32 + o[0], c[1] as i32 + o[1], c[2] as i32 + o[2]);
        acc += w * f64::from(f.sample(sp));
    }
    acc
}

/// Reference: the solid runs `(start, length)` of the interpolant along a ray between `t0`
/// and `t1`, marched at `dt` metres.
fn solid_runs(f: &Field, o: [f64; 3], d: [f64; 3], t0: f64, t1: f64, dt: f64) -> Vec<(f64, f64)> {
    let mut runs: Vec<(f64, f64)> = Vec::new();
    let mut inside = false;
    let n = ((t1 - t0) / dt).ceil() as usize;
    for i in 0..=n {
        let t = t0 + dt * i as f64;
        let solid = interp(f, along(o, d, t)) < 0.0;
        match (solid, inside) {
            (true, false) => runs.push((t, dt)),
            (true, true) => runs.last_mut().unwrap().1 += dt,
            _ => {}
        }
        inside = solid;
    }
    runs
}

/// Straight down onto flat ground, between sample layers and on one, at two voxel sizes.
#[test]
fn straight_down_onto_flat_ground() {
    for vs in [1.0, 0.25] {
        for h in [10.5, 10.0, -3.25] {
            let f = field_with(flat_generator(h), vs);
            for (x, z) in [(0.0, 0.0), (0.3, 0.7), (31.99, -32.0), (-7.5, 12.25)] {
                let o = [x, h + 17.3, z];
                let r = hit(&f, o, DOWN, 100.0);
                assert!((r.position[1] - h).abs() < 1e-5, "vs {vs} h {h}: {r:?}");
                assert!(r.position[1] <= h, "solid side of the bracket: {r:?}");
                assert_eq!((r.position[0], r.position[2]), (x, z));
                assert!((r.distance - 17.3).abs() < 1e-5, "{r:?}");
                assert!(dist(r.normal, [0.0, 1.0, 0.0]) < 1e-6, "{r:?}");
                // Too short: no hit. Straight up: no hit.
                assert_eq!(f.raycast(o, DOWN, 17.2).unwrap(), None);
                assert_eq!(f.raycast(o, [0.0, 1.0, 0.0], 1000.0).unwrap(), None);
            }
        }
    }
}

/// Oblique rays at many random angles onto flat ground: the hit is on the plane, on the
/// ray, at the distance the geometry gives; the direction need not be normalised.
#[test]
fn oblique_rays_onto_flat_ground() {
    let h = 10.5;
    let f = flat_field(h);
    let mut rng = TestRng(0x5eed_1234_9876_abcd);
    let mut hits = 0;
    for _ in 0..2000 {
        let o = [
            rng.range(-50.0, 50.0),
            rng.range(h, h + 30.0),
            rng.range(-50.0, 50.0),
        ];
        let d = random_dir(&mut rng);
        let scale = rng.range(0.01, 100.0);
        let r = f.raycast(o, d.map(|c| c * scale), 200.0).unwrap();
        let expect = if d[1] < 0.0 {
            (o[1] - h) / -d[1]
        } else {
            f64::INFINITY
        };
        if expect > 200.0 - 1e-3 {
            // Upward, or reaching the plane only beyond (or at) max_distance.
            if expect > 200.0 + 1e-3 {
                assert_eq!(r, None, "o {o:?} d {d:?}");
            }
            continue;
        }
        let r = r.unwrap_or_else(|| panic!("no hit: o {o:?} d {d:?} expect t {expect}"));
        hits += 1;
        assert!((r.position[1] - h).abs() < 1e-5, "on the plane: {r:?}");
        assert!(
            dist(r.position, along(o, d, r.distance)) < 1e-9,
            "on the ray: {r:?}"
        );
        // Along the ray the crossing is within 1e-6 voxel; a grazing ray stretches y's error.
        assert!(
            (r.distance - expect).abs() < 1e-5 / -d[1],
            "t {expect}: {r:?}"
        );
        assert!(dist(r.normal, [0.0, 1.0, 0.0]) < 1e-6, "{r:?}");
    }
    assert!(hits > 800, "{hits} hits");
}

/// A thin wall left between two dug balls, crossed at many angles: every ray sees it, at
/// the reference's first solid point, down to a wall 0.04 voxel thick.
#[test]
fn rays_cross_a_thin_wall() {
    for gap in [5.2, 5.02] {
        let mut f = flat_field(100.0); // solid everywhere near y = 0
        f.apply(&dig([-gap, 0.0, 0.0], 5.0)).unwrap();
        f.apply(&dig([gap, 0.0, 0.0], 5.0)).unwrap();
        let mut rng = TestRng(7);
        for i in 0..200 {
            let o = [-3.0, rng.range(-1.5, 1.5), rng.range(-1.5, 1.5)];
            let target = [0.0, rng.range(-1.5, 1.5), rng.range(-1.5, 1.5)];
            let d = if i == 0 {
                [1.0, 0.0, 0.0]
            } else {
                unit([0, 1, 2].map(|k| target[k] - o[k]))
            };
            let o = if i == 0 { [-3.0, 0.0, 0.0] } else { o };
            let runs = solid_runs(&f, o, d, 0.0, 6.0, 1e-4);
            let (first, len) = runs[0];
            assert!(len > 0.03, "gap {gap}: wall {len} thick along {d:?}");
            let r = hit(&f, o, d, 6.0);
            assert!(
                (r.distance - first).abs() < 2e-4,
                "gap {gap} first {first}: {r:?}"
            );
            assert!(interp(&f, r.position) < 0.0);
            assert!(r.normal[0] < -0.5, "faces the ray: {r:?}");
        }
        // On the axis, the wall's near face is at x = 5 - gap: the samples at x = -1
        // and 0 read 6 - gap and 5 - gap, one apart, each rounded onto the grid; the face is
        // where the line between the two stored values crosses 0, within a step of 5 - gap.
        // (On the sample layers y = z = 0 the corner central differences in y and z cancel
        // by symmetry, so the normal is -x; measured exactly (-1, 0, 0).)
        let r = hit(&f, [-3.0, 0.0, 0.0], [1.0, 0.0, 0.0], 6.0);
        let (a, b) = (
            f64::from(f.sample(SamplePos::new(-1, 0, 0))),
            f64::from(f.sample(SamplePos::new(0, 0, 0))),
        );
        assert_eq!(a, f64::from(grid(6.0 - gap, 2.0)));
        assert_eq!(b, f64::from(grid(5.0 - gap, 2.0)));
        let face = -1.0 + a / (a - b);
        assert!((face - (5.0 - gap)).abs() <= grid_step(2.0), "{face}");
        assert!((r.position[0] - face).abs() < 1e-5, "gap {gap}: {r:?}");
        assert!(r.normal[0] < -0.999_999, "{r:?}");
    }
}

/// Rays grazing a small built ball (radius 0.3 voxel): a ray whose solid chord is longer
/// than the minimum step hits where the reference first meets solid; a ray that stays clear of
/// solid does not hit.
#[test]
fn rays_grazing_a_small_ball() {
    let mut f = flat_field(-100.0); // air near y = 40
    let c = [0.0, 40.0, 0.0];
    f.apply(&build(c, 0.3, 1)).unwrap();
    let mut rng = TestRng(99);
    let (mut hits, mut misses) = (0, 0);
    for _ in 0..400 {
        let d = random_dir(&mut rng);
        // Pass the ball's centre at an offset of up to 0.4 m, perpendicular to the ray.
        let side = unit({
            let a = random_dir(&mut rng);
            let k = dot(a, d);
            [0, 1, 2].map(|i| a[i] - k * d[i])
        });
        let off = rng.range(0.0, 0.4);
        let o = [0, 1, 2].map(|i| c[i] + off * side[i] - 3.0 * d[i]);
        let runs = solid_runs(&f, o, d, 2.0, 4.0, 1e-4);
        let clear = (0..=2000).all(|i| interp(&f, along(o, d, 2.0 + 1e-3 * f64::from(i))) > 1e-3);
        let r = f.raycast(o, d, 6.0).unwrap();
        if let Some(&(first, len)) = runs.first()
            && runs.len() == 1
            && len > 1.2 * RAY_MIN_STEP_VOXELS
        {
            let r = r.unwrap_or_else(|| panic!("missed a chord of {len}: o {o:?} d {d:?}"));
            assert!((r.distance - first).abs() < 2e-4, "first {first}: {r:?}");
            // Faces the ray: where the corner central differences of this sub-voxel ball
            // do not (9 of these hits), the interpolant's gradient is the normal.
            assert!(dot(r.normal, d) < 0.0, "{r:?}");
            hits += 1;
        } else if clear && runs.is_empty() {
            assert_eq!(r, None, "off {off}: o {o:?} d {d:?}");
            misses += 1;
        }
    }
    assert!(hits > 100 && misses > 100, "hits {hits} misses {misses}");
}

/// Rays ending exactly on chunk corners. The ground is at y = 1e-9 m, so the corner sample
/// at y = 0 is -1e-9, stored as minus one grid step (the grid keeps a negative value
/// negative): inside by a hair (a sample exactly 0 would be air). A ray whose end point is
/// that corner hits, within two steps of it (the interpolant crosses 0 one step above the
/// corner); one that stops 1e-4 m short does not. With the ground at exactly y = 0, the same
/// ray ends on a sample reading 0: air, no hit.
#[test]
fn rays_ending_on_chunk_corners() {
    let f = flat_field(1e-9);
    let on_zero = flat_field(0.0);
    let corners = [
        [32.0, 0.0, 32.0],
        [-32.0, 0.0, -32.0],
        [0.0, 0.0, 0.0],
        [64.0, 0.0, -96.0],
    ];
    let dirs = [
        [0.0, -5.0, 0.0],
        [3.0, -4.0, 0.0],
        [0.0, -4.0, -3.0],
        [-2.0, -2.0, 1.0],
    ];
    for corner in corners {
        for dir in dirs {
            let d = unit(dir);
            let o = along(corner, d, -5.0);
            let r = hit(&f, o, d, 5.0);
            let step = grid_step(2.0);
            assert_eq!(
                f.sample(SamplePos::new(corner[0] as i32, 0, corner[2] as i32)),
                -step as f32
            );
            assert!(
                dist(r.position, corner) < 2.0 * step,
                "{corner:?} {d:?}: {r:?}"
            );
            assert!((r.distance - 5.0).abs() < 2.0 * step, "{r:?}");
            assert!(dist(r.normal, [0.0, 1.0, 0.0]) < 1e-6, "{r:?}");
            assert_eq!(f.raycast(o, d, 5.0 - 1e-4).unwrap(), None);
        }
        // Straight down onto a corner sample reading exactly 0: air, no hit.
        let o = [corner[0], 5.0, corner[2]];
        assert_eq!(
            on_zero.sample(SamplePos::new(corner[0] as i32, 0, corner[2] as i32)),
            0.0
        );
        assert_eq!(on_zero.raycast(o, DOWN, 5.0).unwrap(), None);
        assert!(on_zero.raycast(o, DOWN, 5.0 + 1e-6).unwrap().is_some());
    }
}

/// A ray starting inside solid hits at once, at its origin, whatever its direction.
#[test]
fn ray_starting_inside_solid() {
    let f = flat_field(10.5);
    for d in [[0.0, 1.0, 0.0], DOWN, [1.0, 0.2, -0.3]] {
        let o = [3.3, 9.0, -4.1];
        let r = hit(&f, o, d, 50.0);
        assert_eq!((r.position, r.distance), (o, 0.0));
        assert!(dist(r.normal, [0.0, 1.0, 0.0]) < 1e-6, "{r:?}");
        // Zero length is allowed too: the origin alone is tested.
        assert_eq!(hit(&f, o, d, 0.0).distance, 0.0);
    }
    assert_eq!(f.raycast([0.0, 11.0, 0.0], DOWN, 0.0).unwrap(), None);
}

/// Negative coordinates: flat ground at y = -500.25 under x ≈ -1000, z ≈ -500.
#[test]
fn negative_coordinates() {
    let h = -500.25;
    let f = flat_field(h);
    let mut rng = TestRng(31);
    for i in 0..200 {
        let o = [-1000.0 - rng.next_f64(), -480.0, -500.0 - rng.next_f64()];
        let d = if i == 0 {
            DOWN
        } else {
            unit([rng.range(-1.0, 1.0), -1.0, rng.range(-1.0, 1.0)])
        };
        let r = hit(&f, o, d, 100.0);
        assert!((r.position[1] - h).abs() < 1e-5, "{r:?}");
        assert!((r.distance - (o[1] - h) / -d[1]).abs() < 1e-5, "{r:?}");
        assert!(dist(r.normal, [0.0, 1.0, 0.0]) < 1e-6, "{r:?}");
    }
    // A dug ball in negative space: straight down its axis, the hit is on its bottom.
    let mut f = f;
    let c = [-1000.5, -500.0, -500.5];
    f.apply(&dig(c, 3.0)).unwrap();
    // The axis is at a cell's centre in x and z, where trilinear interpolation of the ball's
    // distance is off by up to h²/8 · 2/r ≈ 0.083 m.
    let r = hit(&f, [c[0], -480.0, c[2]], DOWN, 100.0);
    assert!((r.position[1] - (c[1] - 3.0)).abs() < 0.09, "{r:?}");
    assert!(r.normal[1] > 0.99, "{r:?}");
}

/// Case C08: bad numbers are typed errors, at once. A very long ray grazing flat ground
/// terminates with the right answer.
#[test]
fn case_c08_raycast_bad_numbers() {
    let f = flat_field(10.0);
    let (o, d) = ([0.0, 20.0, 0.0], DOWN);
    let nan = f64::NAN;
    let not_finite = |r: Result<Option<RayHit>, RaycastError>, which: &str| match r {
        Err(RaycastError::NotFinite { name, .. }) => assert_eq!(name, which),
        other => panic!("{which}: {other:?}"),
    };
    not_finite(f.raycast([nan, 0.0, 0.0], d, 10.0), "origin.x");
    not_finite(f.raycast([0.0, 0.0, f64::INFINITY], d, 10.0), "origin.z");
    not_finite(f.raycast(o, [nan, 1.0, 0.0], 10.0), "direction.x");
    not_finite(
        f.raycast(o, [0.0, f64::NEG_INFINITY, 0.0], 10.0),
        "direction.y",
    );
    not_finite(f.raycast(o, d, nan), "max_distance");
    not_finite(f.raycast(o, d, f64::INFINITY), "max_distance");
    assert!(matches!(
        f.raycast(o, [0.0, 0.0, 0.0], 10.0),
        Err(RaycastError::ZeroDirection { .. })
    ));
    assert!(matches!(
        f.raycast(o, [0.0, -0.0, 0.0], 10.0),
        Err(RaycastError::ZeroDirection { .. })
    ));
    assert!(matches!(
        f.raycast(o, d, -1.0),
        Err(RaycastError::NegativeDistance { max_distance }) if max_distance == -1.0
    ));
    assert!(matches!(
        f.raycast(o, d, 1e6 + 1.0),
        Err(RaycastError::TooLong { max, .. }) if max == 1e6
    ));
    assert!(matches!(
        f.raycast([3e9, 0.0, 0.0], d, 10.0),
        Err(RaycastError::OutOfRange { .. })
    ));
    assert!(matches!(
        f.raycast([2.147e9, 0.0, 0.0], [1.0, 0.0, 0.0], 1e6),
        Err(RaycastError::OutOfRange { .. })
    ));
    // Tiny and huge (finite) directions are fine.
    assert!((hit(&f, o, [0.0, -1e-300, 0.0], 20.0).distance - 10.0).abs() < 1e-5);
    assert!((hit(&f, o, [1e-300, -1e300, 0.0], 20.0).distance - 10.0).abs() < 1e-5);
    // Long rays a millimetre above the ground: level ones never hit, a slightly falling
    // one hits where it meets the ground, 10 km out.
    for d in [[1.0, 0.0, 0.0], [-0.6, 0.0, 0.8]] {
        assert_eq!(f.raycast([0.5, 10.001, 0.5], d, 1e5).unwrap(), None);
    }
    let d = [1.0, -1e-7, 0.0];
    let r = hit(&f, [0.5, 10.001, 0.5], d, 1e5);
    assert!((r.position[1] - 10.0).abs() < 1e-6, "{r:?}");
    assert!((r.distance - 1e4).abs() < 10.0, "{r:?}");
    // The longest ray allowed, diagonal, over a sloping plane it never meets.
    assert_eq!(
        f.raycast([0.0, 10.5, 0.0], [1.0, 1e-9, 1.0], 1e6).unwrap(),
        None
    );
}

/// A ball built in the air, hit from the 6 axis directions and from random ones. The
/// trilinear interpolant of a convex SDF lies above it, so the hit is on or inside the ball,
/// by at most h²/8 · (trace of the Hessian) = h²/8 · 2/ρ ≈ 0.06 voxel for r = 5 voxels
/// (ρ ≥ r − 0.87 in the cell; measured 0.0499). The normal is the corner central differences
/// blended trilinearly (the meshers' normals), second-order: the worst angle to radial over
/// this test's 612 rays is 0.515° (0.506° over 6012 rays; the interpolant's own first-order
/// gradient was 7.6° off), so the bound is 1.5°.
#[test]
fn sphere_in_the_air() {
    let (c, radius) = ([0.3, 40.6, -0.45], 5.0);
    for vs in [1.0, 0.5] {
        let mut f = field_with(flat_generator(-100.0), vs);
        f.apply(&build(c, radius * vs, 2)).unwrap();
        let mut rng = TestRng(2024);
        let axes = [
            [1.0, 0.0, 0.0],
            [-1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, -1.0, 0.0],
            [0.0, 0.0, 1.0],
            [0.0, 0.0, -1.0],
        ];
        let random = (0..300).map(|_| random_dir(&mut rng)).collect::<Vec<_>>();
        for (i, d) in axes.iter().chain(&random).enumerate() {
            // Aim at the centre, or at a random point inside the ball.
            let aim = if i < 6 {
                c
            } else {
                let a = random_dir(&mut rng);
                let k = rng.range(0.0, 4.0) * vs;
                [0, 1, 2].map(|j| c[j] + k * a[j])
            };
            let o = along(aim, *d, -15.0 * vs);
            let r = hit(&f, o, *d, 30.0 * vs);
            let e = dist(r.position, c) - radius * vs;
            assert!(
                e.abs() < 0.06 * vs && e <= 1e-9,
                "vs {vs} d {d:?}: off by {e}: {r:?}"
            );
            let radial = unit([0, 1, 2].map(|j| r.position[j] - c[j]));
            let angle = dot(r.normal, radial).min(1.0).acos().to_degrees();
            assert!(
                angle < 1.5,
                "vs {vs} d {d:?}: normal off by {angle}°: {r:?}"
            );
        }
    }
}

/// The default noise terrain, straight down from y = 200. The hit is the bilinear
/// interpolation of the ground height at the column's 4 corner samples (the trilinear
/// interpolant's zero there: the samples are `(y − h) / √(1 + Lh²)`, unclamped near the
/// surface). That differs from `surface_height(x, z)` by the bilinear error, up to
/// h²/8 · (|h_xx| + |h_zz|): at 1 m voxels the 0.75 m / 8 m detail octave makes it 0.006 m
/// typically, 0.03 m at the 99th percentile and 0.15 m at worst (3892 columns); at 0.25 m
/// voxels it is 16 times smaller, within 0.05 m everywhere. Columns whose ground is low
/// enough for the default caves (y ≤ 4 m, plus the band) to reach are skipped.
#[test]
fn noise_terrain_from_above() {
    let g = Generator::noise(&NoiseTerrainSettings::default(), &CaveSettings::default()).unwrap();
    for (vs, worst_allowed) in [(1.0, 0.2), (0.25, 0.05)] {
        let f = field_with(g.clone(), vs);
        let mut rng = TestRng(77);
        let (mut tested, mut within_5cm) = (0, 0);
        for _ in 0..1000 {
            let (x, z) = (rng.range(-3000.0, 3000.0), rng.range(-3000.0, 3000.0));
            let h = g.surface_height(x, z);
            if h < 12.0 {
                continue;
            }
            tested += 1;
            let r = hit(&f, [x, 200.0, z], DOWN, 400.0);
            let (x0, z0) = ((x / vs).floor() * vs, (z / vs).floor() * vs);
            let (u, w) = ((x - x0) / vs, (z - z0) / vs);
            let hh = |i: f64, k: f64| g.surface_height(x0 + i * vs, z0 + k * vs);
            let bilinear = (1.0 - w) * ((1.0 - u) * hh(0.0, 0.0) + u * hh(1.0, 0.0))
                + w * ((1.0 - u) * hh(0.0, 1.0) + u * hh(1.0, 1.0));
            let e = (r.position[1] - h).abs();
            assert!(
                (r.position[1] - bilinear).abs() < 1e-4,
                "vs {vs} ({x}, {z}) {bilinear}: {r:?}"
            );
            assert!(e < worst_allowed, "vs {vs} ({x}, {z}) h {h}: {r:?}");
            assert!(r.normal[1] > 0.0, "{r:?}");
            within_5cm += usize::from(e < 0.05);
        }
        assert!(tested > 300, "vs {vs}: {tested} columns tested");
        assert!(
            within_5cm * 100 >= tested * 98,
            "vs {vs}: {within_5cm} of {tested} within 5 cm"
        );
    }
}

/// `Field::value_at`: the field at a world point, trilinear between samples. On flat ground
/// (an exact SDF, linear in y) it is the height above the ground wherever that is inside the
/// band, at a sample or between samples, at any voxel size; on a sample it is that sample.
#[test]
fn value_at_a_point_is_the_height_above_flat_ground() {
    for voxel in [1.0, 0.25, 0.7] {
        let f = field_with(flat_generator(10.0), voxel);
        // Heights in voxels above the ground, within a voxel of it: both samples around
        // the point are inside the band (2 voxels), where no value is clamped.
        for (x, up, z) in [
            (0.0, 0.3, 0.0),
            (-13.37, -0.9, 2.5),
            (100.25, 0.0, -7.75),
            (3.3, 1.0, 4.4),
            (-0.01, -0.6, 0.02),
        ] {
            let y = 10.0 + up * voxel;
            let v = f.value_at([x, y, z]).unwrap();
            assert!(
                (f64::from(v) - (y - 10.0)).abs() < 2e-3,
                "voxel {voxel}: {v} at y {y}"
            );
        }
        let s = SamplePos::new(3, 41, -5);
        let p = loam_field::coords::sample_to_world(s, voxel);
        assert_eq!(f.value_at(p).unwrap().to_bits(), f.sample(s).to_bits());
        assert!(f.value_at([f64::NAN, 0.0, 0.0]).is_err());
        assert!(f.value_at([0.0, 1e300, 0.0]).is_err());
    }
    // A dug ball: air at its centre, solid well below it.
    let mut f = flat_field(10.0);
    f.apply(&loam_field::EditOp::Sphere {
        mode: loam_field::CsgMode::Subtract,
        center: [0.0, 10.0, 0.0],
        radius: 3.0,
        material: 0,
        blend: 0.0,
    })
    .unwrap();
    assert!(f.value_at([0.0, 9.0, 0.0]).unwrap() > 0.0);
    assert!(f.value_at([0.0, 6.0, 0.0]).unwrap() < 0.0);
}
