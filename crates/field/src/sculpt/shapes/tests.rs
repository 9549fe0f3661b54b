//! Tests of the parent module.

use super::*;

/// A deterministic LCG (Knuth's MMIX constants); the top 53 bits give a uniform f64.
struct Lcg(u64);

impl Lcg {
    fn next_f64(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in `[lo, hi)`.
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next_f64()
    }
    fn point(&mut self, r: f64) -> [f64; 3] {
        [self.range(-r, r), self.range(-r, r), self.range(-r, r)]
    }
    fn unit(&mut self) -> [f64; 3] {
        loop {
            let v = self.point(1.0);
            let l = length(v);
            if l > 0.1 && l <= 1.0 {
                return scale(v, 1.0 / l);
            }
        }
    }
    fn quat(&mut self) -> [f64; 4] {
        loop {
            let q = [
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
            ];
            if let Some(q) = normalize_quat(q) {
                return q;
            }
        }
    }
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// One random shape, as a closure, with its AABB function.
type Sdf = Box<dyn Fn([f64; 3]) -> f64>;

fn random_shape(rng: &mut Lcg, kind: usize) -> (Sdf, Box<dyn Fn(f64) -> Aabb>) {
    let c = rng.point(5.0);
    match kind {
        0 => {
            let r = rng.range(0.0, 4.0);
            (
                Box::new(move |p| sphere(p, c, r)),
                Box::new(move |m| aabb_sphere(c, r, m)),
            )
        }
        1 => {
            let h = [
                rng.range(0.0, 3.0),
                rng.range(0.0, 3.0),
                rng.range(0.0, 3.0),
            ];
            let q = rng.quat();
            (
                Box::new(move |p| cuboid(p, c, h, q)),
                Box::new(move |m| aabb_cuboid(c, h, q, m)),
            )
        }
        2 | 3 => {
            // Every fourth capsule / cylinder is degenerate (a == b).
            let b = if rng.next_f64() < 0.25 {
                c
            } else {
                rng.point(5.0)
            };
            let r = rng.range(0.0, 3.0);
            if kind == 2 {
                (
                    Box::new(move |p| capsule(p, c, b, r)),
                    Box::new(move |m| aabb_capsule(c, b, r, m)),
                )
            } else {
                (
                    Box::new(move |p| cylinder(p, c, b, r)),
                    Box::new(move |m| aabb_cylinder(c, b, r, m)),
                )
            }
        }
        _ => {
            let n = rng.unit();
            let major = rng.range(0.0, 4.0);
            let minor = rng.range(0.0, major.max(0.1));
            (
                Box::new(move |p| torus(p, c, n, major, minor)),
                Box::new(move |m| aabb_torus(c, n, major, minor, m)),
            )
        }
    }
}

const KINDS: [&str; 5] = ["sphere", "cuboid", "capsule", "cylinder", "torus"];

// ---- exact values ----

#[test]
fn sphere_exact() {
    let c = [1.0, 2.0, 3.0];
    assert_eq!(sphere([4.0, 6.0, 3.0], c, 2.0), 3.0);
    assert_eq!(sphere(c, c, 2.0), -2.0);
    assert_eq!(sphere([1.0, 2.0, 5.0], c, 2.0), 0.0);
    assert_eq!(sphere([1.0, 2.0, 4.0], c, 2.0), -1.0);
}

#[test]
fn cuboid_axis_aligned_exact() {
    let id = [0.0, 0.0, 0.0, 1.0];
    let h = [1.0, 2.0, 3.0];
    let c = [10.0, 20.0, 30.0];
    let at = |p: [f64; 3]| cuboid(add(c, p), c, h, id);
    assert_eq!(at([0.0, 0.0, 0.0]), -1.0); // centre: nearest face x
    assert_eq!(at([0.0, 1.5, 0.0]), -0.5); // inside, near the +y face
    assert_eq!(at([1.0, 0.0, 0.0]), 0.0); // on a face
    assert_eq!(at([2.0, 0.0, 0.0]), 1.0); // off a face
    assert_eq!(at([-1.0, -2.0, 0.0]), 0.0); // on an edge
    assert_eq!(at([4.0, 6.0, 0.0]), 5.0); // off an edge: (3, 4)
    assert_eq!(at([4.0, 6.0, 7.0]), 41f64.sqrt()); // off a corner: (3, 4, 4)
    assert_eq!(at([-1.0, 2.0, -3.0]), 0.0); // a corner
}

#[test]
fn cuboid_quarter_turn() {
    // 90° about z: the box's local x (half 1) lies along world y, local y (half 2) along −x.
    let s = 0.5f64.sqrt();
    let q = [0.0, 0.0, s, s];
    let h = [1.0, 2.0, 3.0];
    let o = [0.0; 3];
    assert!(close(cuboid([3.0, 0.0, 0.0], o, h, q), 1.0, 1e-15));
    assert!(close(cuboid([0.0, 3.0, 0.0], o, h, q), 2.0, 1e-15));
    assert!(close(cuboid([2.0, 1.0, 3.0], o, h, q), 0.0, 1e-15));
    assert!(close(cuboid([0.0, 0.0, 0.0], o, h, q), -1.0, 1e-15));
    let (lo, hi) = aabb_cuboid(o, h, q, 0.0);
    for (l, e) in lo.into_iter().zip([-2.0, -1.0, -3.0]) {
        assert!(close(l, e, 1e-11));
    }
    for (u, e) in hi.into_iter().zip([2.0, 1.0, 3.0]) {
        assert!(close(u, e, 1e-11));
    }
}

/// Rotation matrix of a unit quaternion (columns are the images of the local axes), built
/// independently of `rotate`.
fn matrix(q: [f64; 4]) -> [[f64; 3]; 3] {
    let [x, y, z, w] = q;
    [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y - z * w),
            2.0 * (x * z + y * w),
        ],
        [
            2.0 * (x * y + z * w),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z - x * w),
        ],
        [
            2.0 * (x * z - y * w),
            2.0 * (y * z + x * w),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ]
}

fn mul(m: [[f64; 3]; 3], v: [f64; 3]) -> [f64; 3] {
    [dot(m[0], v), dot(m[1], v), dot(m[2], v)]
}

fn mul_t(m: [[f64; 3]; 3], v: [f64; 3]) -> [f64; 3] {
    [
        m[0][0] * v[0] + m[1][0] * v[1] + m[2][0] * v[2],
        m[0][1] * v[0] + m[1][1] * v[1] + m[2][1] * v[2],
        m[0][2] * v[0] + m[1][2] * v[1] + m[2][2] * v[2],
    ]
}

#[test]
fn cuboid_rotated_against_reference() {
    let mut rng = Lcg(7);
    let id = [0.0, 0.0, 0.0, 1.0];
    for _ in 0..2000 {
        let c = rng.point(10.0);
        let h = [
            rng.range(0.1, 3.0),
            rng.range(0.1, 3.0),
            rng.range(0.1, 3.0),
        ];
        let q = rng.quat();
        let r = matrix(q);
        // Reference: transform the world point into the box frame with the matrix, and
        // evaluate the axis-aligned box.
        let p = rng.point(15.0);
        let reference = cuboid(mul_t(r, sub(p, c)), [0.0; 3], h, id);
        assert!(close(cuboid(p, c, h, q), reference, 1e-12));
        // Points placed at known local positions: corners, edges, faces, inside.
        let corner = [h[0], -h[1], h[2]];
        let cases: [([f64; 3], f64); 6] = [
            (corner, 0.0),
            (add(corner, [0.3, -0.4, 1.2]), 1.3),
            ([h[0] + 0.3, -h[1] - 0.4, 0.0], 0.5),
            ([0.0, 0.0, -h[2] - 0.25], 0.25),
            ([0.0; 3], -h[0].min(h[1]).min(h[2])),
            (
                [h[0] * 0.5, h[1] * 0.5, h[2] * 0.5],
                -0.5 * h[0].min(h[1]).min(h[2]),
            ),
        ];
        for (local, expected) in cases {
            let world = add(c, mul(r, local));
            let d = cuboid(world, c, h, q);
            assert!(close(d, expected, 1e-12), "{local:?}: {d} vs {expected}");
        }
    }
}

#[test]
fn normalize_quat_cases() {
    assert_eq!(normalize_quat([0.0; 4]), None);
    assert_eq!(normalize_quat([f64::NAN, 0.0, 0.0, 1.0]), None);
    assert_eq!(normalize_quat([0.0, f64::INFINITY, 0.0, 1.0]), None);
    assert_eq!(
        normalize_quat([0.0, 0.0, 0.0, 2.0]),
        Some([0.0, 0.0, 0.0, 1.0])
    );
    assert_eq!(
        normalize_quat([0.0, -3.0, 0.0, 0.0]),
        Some([0.0, -1.0, 0.0, 0.0])
    );
    let q = normalize_quat([1.0, 2.0, 2.0, 4.0]).unwrap();
    assert_eq!(q, [0.2, 0.4, 0.4, 0.8]);
    // Tiny and huge quaternions normalise without underflow / overflow.
    for s in [1e-200, 1e200, f64::MIN_POSITIVE / 4.0] {
        let q = normalize_quat([s, s, s, s]).unwrap();
        assert!(q.iter().all(|c| close(*c, 0.5, 1e-15)), "{s}: {q:?}");
    }
}

#[test]
fn capsule_exact() {
    let a = [0.0, 0.0, 0.0];
    let b = [0.0, 2.0, 0.0];
    assert_eq!(capsule([1.0, 1.0, 0.0], a, b, 0.5), 0.5); // side
    assert_eq!(capsule([0.0, 1.0, 0.0], a, b, 0.5), -0.5); // on the segment
    assert_eq!(capsule([0.0, 3.0, 0.0], a, b, 0.5), 0.5); // beyond the b cap
    assert_eq!(capsule([0.0, -1.0, 0.0], a, b, 0.5), 0.5); // beyond the a cap
    assert_eq!(capsule([3.0, 6.0, 0.0], a, b, 0.5), 4.5); // near b: (3, 4)
    assert_eq!(capsule([0.0, 2.5, 0.0], a, b, 0.5), 0.0); // on the b cap's tip
    assert_eq!(capsule([0.5, 0.0, 0.0], a, b, 0.5), 0.0); // on the rim at a
    // Degenerate: a ball, no NaN.
    let c = [1.0, 2.0, 3.0];
    for p in [[4.0, 6.0, 3.0], c, [1.0, 2.0, 5.0]] {
        assert_eq!(capsule(p, c, c, 2.0), sphere(p, c, 2.0));
    }
}

#[test]
fn cylinder_exact() {
    let a = [0.0, 0.0, 0.0];
    let b = [0.0, 2.0, 0.0];
    let f = |p| cylinder(p, a, b, 1.0);
    assert_eq!(f([0.0, 1.0, 0.0]), -1.0); // centre: side and caps equally near
    assert!(close(f([0.5, 1.8, 0.0]), -0.2, 1e-15)); // inside, near the b cap
    assert!(close(f([0.8, 1.0, 0.0]), -0.2, 1e-15)); // inside, near the side
    assert_eq!(f([2.0, 1.0, 0.0]), 1.0); // off the side
    assert_eq!(f([0.0, 3.0, 0.0]), 1.0); // off the b cap
    assert_eq!(f([0.0, -0.5, 0.0]), 0.5); // off the a cap
    assert_eq!(f([0.5, -0.5, 0.0]), 0.5); // off the a cap, within the radius
    assert_eq!(f([4.0, 6.0, 0.0]), 5.0); // off the b rim: (3, 4)
    assert_eq!(f([1.0, 2.0, 0.0]), 0.0); // on the b rim
    assert_eq!(f([0.0, 0.0, 1.0]), 0.0); // on the a rim
    assert_eq!(f([0.0, 2.0, 0.0]), 0.0); // centre of the b cap
    // Reversed ends are the same cylinder.
    assert!(close(cylinder([0.5, 1.8, 0.0], b, a, 1.0), -0.2, 1e-15));
    // Degenerate: the ball fallback, no NaN.
    let c = [1.0, 2.0, 3.0];
    for p in [[4.0, 6.0, 3.0], c, [1.0, 2.0, 5.0]] {
        assert_eq!(cylinder(p, c, c, 2.0), sphere(p, c, 2.0));
    }
}

/// Quilez's `sdCappedCylinder(p, a, b, r)` exactly as published (the `baba` form), as an
/// independent reference.
fn quilez_capped_cylinder(p: [f64; 3], a: [f64; 3], b: [f64; 3], r: f64) -> f64 {
    let ba = sub(b, a);
    let pa = sub(p, a);
    let baba = dot(ba, ba);
    let paba = dot(pa, ba);
    let x = length(sub(scale(pa, baba), scale(ba, paba))) - r * baba;
    let y = (paba - baba * 0.5).abs() - baba * 0.5;
    let x2 = x * x;
    let y2 = y * y * baba;
    let d = if x.max(y) < 0.0 {
        -x2.min(y2)
    } else {
        (if x > 0.0 { x2 } else { 0.0 }) + (if y > 0.0 { y2 } else { 0.0 })
    };
    d.signum() * d.abs().sqrt() / baba
}

#[test]
fn cylinder_matches_quilez_reference() {
    let mut rng = Lcg(11);
    for _ in 0..10_000 {
        let a = rng.point(5.0);
        let b = add(a, scale(rng.unit(), rng.range(0.1, 6.0)));
        let r = rng.range(0.05, 3.0);
        let p = rng.point(9.0);
        let (ours, theirs) = (cylinder(p, a, b, r), quilez_capped_cylinder(p, a, b, r));
        assert!(close(ours, theirs, 1e-9), "{ours} vs {theirs}");
    }
}

#[test]
fn torus_exact() {
    let c = [1.0, 2.0, 3.0];
    let y = [0.0, 1.0, 0.0];
    let f = |p: [f64; 3]| torus(add(c, p), c, y, 2.0, 0.5);
    assert_eq!(f([2.0, 0.0, 0.0]), -0.5); // on the ring (deepest inside the tube)
    assert_eq!(f([0.0, 0.0, -2.0]), -0.5);
    assert_eq!(f([0.0, 0.0, 0.0]), 1.5); // centre of the ring: major − minor
    assert_eq!(f([0.0, 1.5, 0.0]), 2.0); // on the axis: √(2² + 1.5²) − 0.5
    assert_eq!(f([4.0, 0.0, 0.0]), 1.5); // outside, in the ring's plane
    assert_eq!(f([1.0, 0.0, 0.0]), 0.5); // inside the hole
    assert_eq!(f([2.0, 0.5, 0.0]), 0.0); // on top of the tube
    assert_eq!(f([2.5, 0.0, 0.0]), 0.0); // outer equator
    // Another axis: the ring in the xy plane.
    let z = [0.0, 0.0, 1.0];
    assert_eq!(torus([0.0, 2.0, 0.0], [0.0; 3], z, 2.0, 0.5), -0.5);
    assert_eq!(torus([0.0, 0.0, 1.5], [0.0; 3], z, 2.0, 0.5), 2.0);
}

#[test]
fn torus_tilted_against_brute_force() {
    // Reference: distance to 100 000 points on the ring, minus the tube radius.
    let mut rng = Lcg(3);
    for _ in 0..20 {
        let c = rng.point(5.0);
        let n = rng.unit();
        let major = rng.range(0.5, 3.0);
        let minor = rng.range(0.0, major);
        // An orthonormal basis (e1, e2) of the ring's plane.
        let helper = if n[0].abs() < 0.9 {
            [1.0, 0.0, 0.0]
        } else {
            [0.0, 1.0, 0.0]
        };
        let e1 = {
            let v = cross(n, helper);
            scale(v, 1.0 / length(v))
        };
        let e2 = cross(n, e1);
        for _ in 0..10 {
            let p = add(c, rng.point(5.0));
            let mut best = f64::INFINITY;
            const N: u32 = 100_000;
            for i in 0..N {
                let t = f64::from(i) / f64::from(N) * core::f64::consts::TAU;
                let on = add(
                    c,
                    add(scale(e1, major * t.cos()), scale(e2, major * t.sin())),
                );
                best = best.min(length(sub(p, on)));
            }
            let d = torus(p, c, n, major, minor);
            assert!(close(d, best - minor, 1e-6), "{d} vs {}", best - minor);
        }
    }
}

// ---- properties ----

#[test]
fn one_lipschitz() {
    let mut rng = Lcg(42);
    for (kind, name) in KINDS.into_iter().enumerate() {
        let mut shape = random_shape(&mut rng, kind);
        for i in 0..10_000 {
            if i % 100 == 0 {
                shape = random_shape(&mut rng, kind);
            }
            let a = rng.point(10.0);
            // Mix far pairs with near ones (down to 1 mm).
            let b = if i % 2 == 0 {
                rng.point(10.0)
            } else {
                add(a, scale(rng.unit(), rng.range(1e-3, 0.5)))
            };
            let (fa, fb) = (shape.0(a), shape.0(b));
            assert!(fa.is_finite() && fb.is_finite(), "{name}");
            let dist = length(sub(a, b));
            assert!(
                (fa - fb).abs() <= dist * (1.0 + 1e-12),
                "{name}: |{fa} − {fb}| > {dist}"
            );
        }
    }
}

fn gradient(f: &dyn Fn([f64; 3]) -> f64, p: [f64; 3]) -> f64 {
    let e = 1e-6;
    let mut g = [0.0; 3];
    for i in 0..3 {
        let (mut lo, mut hi) = (p, p);
        lo[i] -= e;
        hi[i] += e;
        g[i] = (f(hi) - f(lo)) / (2.0 * e);
    }
    length(g)
}

#[test]
fn unit_gradient_away_from_medial_axis() {
    let mut rng = Lcg(5);
    let mut checked = 0;
    for _ in 0..3000 {
        let p = rng.point(6.0);
        // Sphere: the medial axis is the centre.
        let c = [0.5, -0.25, 1.0];
        if length(sub(p, c)) > 0.1 {
            assert!(close(gradient(&|q| sphere(q, c, 2.0), p), 1.0, 1e-6));
            checked += 1;
        }
        // Capsule: the medial axis is the segment.
        let (a, b) = ([-1.0, 0.5, 0.0], [2.0, 1.0, -1.5]);
        if capsule(p, a, b, 0.0) > 0.1 {
            assert!(close(gradient(&|q| capsule(q, a, b, 1.0), p), 1.0, 1e-6));
            checked += 1;
        }
        // Torus: the medial axis is the ring (inside) plus the symmetry axis.
        let n = {
            let v = [0.3, 1.0, -0.2];
            scale(v, 1.0 / length(v))
        };
        let v = sub(p, c);
        let y = dot(v, n);
        let radial = length(sub(v, scale(n, y)));
        if radial > 0.1 && torus(p, c, n, 2.5, 0.0) > 0.1 {
            let f = |q| torus(q, c, n, 2.5, 0.75);
            assert!(close(gradient(&f, p), 1.0, 1e-6));
            checked += 1;
        }
    }
    assert!(checked > 8000, "{checked}");
}

#[test]
fn smooth_min_properties() {
    let mut rng = Lcg(9);
    for _ in 0..100_000 {
        let a = rng.range(-10.0, 10.0);
        let b = rng.range(-10.0, 10.0);
        let k = rng.range(0.0, 8.0);
        let s = smooth_min(a, b, k);
        let m = a.min(b);
        assert!(s <= m + 1e-14, "smin({a}, {b}, {k}) = {s} > {m}");
        assert!(s >= m - 0.25 * k - 1e-14);
        if (a - b).abs() >= k {
            assert_eq!(s, m);
            assert_eq!(smooth_max(a, b, k), a.max(b));
        }
        assert!(smooth_max(a, b, k) >= a.max(b) - 1e-14);
        assert!(close(smooth_min(b, a, k), s, 1e-12)); // symmetric
    }
    // Exactly at the blend's edge, and symmetric.
    assert_eq!(smooth_min(0.0, 1.0, 1.0), 0.0);
    assert_eq!(smooth_min(1.0, 0.0, 1.0), 0.0);
    assert_eq!(smooth_min(0.0, 0.0, 1.0), -0.25);
    assert_eq!(smooth_max(0.0, 0.0, 1.0), 0.25);
    // k ≤ 0 or NaN: plain min / max.
    for k in [0.0, -1.0, f64::NAN] {
        assert_eq!(smooth_min(3.0, 2.0, k), 2.0);
        assert_eq!(smooth_max(3.0, 2.0, k), 3.0);
    }
}

#[test]
fn smooth_min_continuous_and_lipschitz() {
    // Sweep b across the blend zone: steps never exceed the step in b (∂/∂b ∈ [0, 1]).
    for k in [0.01, 0.5, 3.0] {
        let a = 0.3;
        let step = k / 10_000.0;
        let mut prev = smooth_min(a, a - 2.0 * k, k);
        for i in 1..=40_000 {
            let b = a - 2.0 * k + f64::from(i) * step;
            let s = smooth_min(a, b, k);
            let d = s - prev;
            assert!(
                d >= -1e-15 && d <= step * (1.0 + 1e-9) + 1e-15,
                "k {k} b {b}: {d}"
            );
            prev = s;
        }
    }
}

#[test]
fn aabb_contains_every_point_within_margin() {
    let mut rng = Lcg(1234);
    for (kind, name) in KINDS.into_iter().enumerate() {
        let mut near = 0;
        for _ in 0..200 {
            let (f, bounds) = random_shape(&mut rng, kind);
            let m = rng.range(0.0, 2.0);
            let (lo, hi) = bounds(m);
            for i in 0..3 {
                assert!(lo[i] <= hi[i], "{name}");
            }
            // Sample a region a metre larger than the box on every side.
            for _ in 0..500 {
                let p: [f64; 3] = core::array::from_fn(|i| rng.range(lo[i] - 1.0, hi[i] + 1.0));
                if f(p) < m {
                    near += 1;
                    for i in 0..3 {
                        assert!(lo[i] <= p[i] && p[i] <= hi[i], "{name}: {p:?} outside");
                    }
                }
            }
        }
        assert!(near > 5_000, "{name}: only {near} points within the margin");
    }
}

#[test]
fn aabb_exact_cases() {
    let (lo, hi) = aabb_sphere([1.0, 2.0, 3.0], 2.0, 0.5);
    for i in 0..3 {
        assert!(close(lo[i], [1.0, 2.0, 3.0][i] - 2.5, 1e-10));
        assert!(close(hi[i], [1.0, 2.0, 3.0][i] + 2.5, 1e-10));
    }
    let (lo, hi) = aabb_capsule([0.0, 0.0, 0.0], [0.0, 2.0, 0.0], 0.5, 0.0);
    assert!(close(lo[1], -0.5, 1e-11) && close(hi[1], 2.5, 1e-11));
    // A y-axis cylinder: tight in y (the caps are flat).
    let (lo, hi) = aabb_cylinder([0.0, 0.0, 0.0], [0.0, 2.0, 0.0], 1.0, 0.0);
    assert!(close(lo[1], 0.0, 1e-11) && close(hi[1], 2.0, 1e-11));
    assert!(close(lo[0], -1.0, 1e-11) && close(hi[2], 1.0, 1e-11));
    // A y-axis torus: tight in y.
    let (lo, hi) = aabb_torus([0.0; 3], [0.0, 1.0, 0.0], 2.0, 0.5, 0.25);
    assert!(close(lo[1], -0.75, 1e-11) && close(hi[1], 0.75, 1e-11));
    assert!(close(lo[0], -2.75, 1e-11) && close(hi[2], 2.75, 1e-11));
}
