//! Signed distance functions of brush shapes, smooth blends, and their bounding boxes.
//!
//! Every function takes world positions in metres (f64) and returns the signed distance in
//! metres to the shape's surface: negative inside, positive outside, zero on the surface
//! (DESIGN.md, "Field"). The formulas are Inigo Quilez's well-known exact ones (Quilez,
//! "distance functions", <https://iquilezles.org/articles/distfunctions/>), written with
//! `+ − × ÷ √`, `abs`, `min` and `max` only (DESIGN.md, invariant 2), so results are
//! bit-identical on every platform. Each is exact (the true Euclidean distance) and therefore
//! 1-Lipschitz; the exceptions are named on the function.
//!
//! Parameters are trusted: callers validate them (finite, radii ≥ 0, a unit axis or
//! quaternion) before calling. Degenerate but finite input never yields NaN where the
//! function says so.
//!
//! Each shape has an `aabb_<shape>` function giving its world-space bounding box grown by a
//! margin `m`: every point where the shape's distance is `< m` lies inside it.

/// An axis-aligned box in world metres: `(min corner, max corner)`.
pub type Aabb = ([f64; 3], [f64; 3]);

// ---- small vector helpers (plain arrays, as the public API) --------------------------------

#[inline]
fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

#[inline]
fn add(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

#[inline]
fn scale(a: [f64; 3], s: f64) -> [f64; 3] {
    [a[0] * s, a[1] * s, a[2] * s]
}

#[inline]
fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[inline]
fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

#[inline]
fn length(a: [f64; 3]) -> f64 {
    dot(a, a).sqrt()
}

#[inline]
fn length2(x: f64, y: f64) -> f64 {
    (x * x + y * y).sqrt()
}

/// Rotates `v` by the unit quaternion `q = [x, y, z, w]`: `v + w·t + u × t` with
/// `t = 2 (u × v)`, `u = (x, y, z)` (the expanded form of `q v q*`).
#[inline]
fn rotate(q: [f64; 4], v: [f64; 3]) -> [f64; 3] {
    let u = [q[0], q[1], q[2]];
    let t = scale(cross(u, v), 2.0);
    add(add(v, scale(t, q[3])), cross(u, t))
}

/// Grows `(lo, hi)` by `m` metres, then outward by a relative 10⁻¹² (1 pm per metre of
/// coordinate), so floating-point rounding in a distance function never puts a point with
/// distance `< m` just outside the box.
fn grown(lo: [f64; 3], hi: [f64; 3], m: f64) -> Aabb {
    let mut out = (lo, hi);
    for i in 0..3 {
        let l = lo[i] - m;
        let h = hi[i] + m;
        out.0[i] = l - 1e-12 * (1.0 + l.abs());
        out.1[i] = h + 1e-12 * (1.0 + h.abs());
    }
    out
}

// ---- quaternions --------------------------------------------------------------------------

/// Scales the quaternion `q = [x, y, z, w]` to unit length, or `None` if it is zero or has a
/// NaN or infinite component.
///
/// The components are first divided by the largest magnitude, so very small or very large
/// (but finite, non-zero) quaternions normalise without underflow or overflow.
#[must_use]
pub fn normalize_quat(q: [f64; 4]) -> Option<[f64; 4]> {
    if !q.iter().all(|c| c.is_finite()) {
        return None;
    }
    let big = q.iter().fold(0.0f64, |m, c| m.max(c.abs()));
    if big == 0.0 {
        return None;
    }
    let s = q.map(|c| c / big);
    let len = (s[0] * s[0] + s[1] * s[1] + s[2] * s[2] + s[3] * s[3]).sqrt();
    Some(s.map(|c| c / len))
}

// ---- shapes -------------------------------------------------------------------------------

/// Signed distance (metres) from `p` to the ball of `radius` metres about `center`:
/// `|p − center| − radius` (Quilez, distance functions: `sdSphere`). Exact.
#[must_use]
pub fn sphere(p: [f64; 3], center: [f64; 3], radius: f64) -> f64 {
    length(sub(p, center)) - radius
}

/// Signed distance (metres) from `p` to a rotated box.
///
/// `half_extents` are the box's half sizes in metres along its own axes (each ≥ 0);
/// `rotation` is a unit quaternion `[x, y, z, w]` that rotates the box's local axes into
/// world axes (`[0, 0, 0, 1]` is axis-aligned; see [`normalize_quat`]; a non-unit one
/// distorts the box). `p − center` is rotated into the box's frame by the conjugate, then
/// with `q = |local| − half_extents`: `|max(q, 0)| + min(max(qx, qy, qz), 0)`
/// (Quilez, distance functions: `sdBox`). Exact.
///
/// ```text
///        world y            local x = rotation · (1, 0, 0)
///          |      /\
///          |     /  \       half_extents measured along the local axes
///          |    / c  \
///          |    \    /
///          |     \  /
///          +------\/------ world x
/// ```
#[must_use]
pub fn cuboid(p: [f64; 3], center: [f64; 3], half_extents: [f64; 3], rotation: [f64; 4]) -> f64 {
    let conj = [-rotation[0], -rotation[1], -rotation[2], rotation[3]];
    let local = rotate(conj, sub(p, center));
    let q = [
        local[0].abs() - half_extents[0],
        local[1].abs() - half_extents[1],
        local[2].abs() - half_extents[2],
    ];
    let outside = length([q[0].max(0.0), q[1].max(0.0), q[2].max(0.0)]);
    let inside = q[0].max(q[1]).max(q[2]).min(0.0);
    outside + inside
}

/// Signed distance (metres) from `p` to the capsule of `radius` metres around the segment
/// `a`–`b`: with `h = clamp((p − a)·(b − a) / |b − a|², 0, 1)`,
/// `|p − a − h (b − a)| − radius` (Quilez, distance functions: `sdCapsule`). Exact.
///
/// `a == b` is a ball of `radius` about `a` (no division by zero).
#[must_use]
pub fn capsule(p: [f64; 3], a: [f64; 3], b: [f64; 3], radius: f64) -> f64 {
    let pa = sub(p, a);
    let ba = sub(b, a);
    let bb = dot(ba, ba);
    let h = if bb > 0.0 {
        (dot(pa, ba) / bb).clamp(0.0, 1.0)
    } else {
        0.0
    };
    length(sub(pa, scale(ba, h))) - radius
}

/// Signed distance (metres) from `p` to the capped cylinder of `radius` metres whose axis runs
/// from `a` to `b`, with flat caps through `a` and `b` (Quilez, distance functions:
/// `sdCappedCylinder`, the version with end points). Exact.
///
/// Written as the distance to a 2-D box in (radial, axial) coordinates, which is the same
/// function: with `L = |b − a|`, `u = (b − a)/L`, `t = (p − a)·u`,
/// `r = |p − a − t u|`, `q = (r − radius, |t − L/2| − L/2)`:
/// `|max(q, 0)| + min(max(qx, qy), 0)` (Quilez, distance functions: `sdBox` in 2-D).
///
/// Callers must reject `a == b` (a cylinder needs a length); if given anyway, the result is
/// the ball of `radius` about `a`, never NaN.
#[must_use]
pub fn cylinder(p: [f64; 3], a: [f64; 3], b: [f64; 3], radius: f64) -> f64 {
    let ba = sub(b, a);
    let len = length(ba);
    if len.is_nan() || len <= 0.0 {
        return sphere(p, a, radius);
    }
    let u = scale(ba, 1.0 / len);
    let pa = sub(p, a);
    let t = dot(pa, u);
    let r = length(sub(pa, scale(u, t)));
    let half = 0.5 * len;
    let qx = r - radius;
    let qy = (t - half).abs() - half;
    length2(qx.max(0.0), qy.max(0.0)) + qx.max(qy).min(0.0)
}

/// Signed distance (metres) from `p` to a torus: a ring of radius `major` metres in the plane
/// through `center` perpendicular to the unit vector `axis`, thickened into a tube of radius
/// `minor` metres.
///
/// With `v = p − center`, `y = v·axis`, `p⊥ = v − y·axis`: `q = (|p⊥| − major, y)`,
/// `|q| − minor` (Quilez, distance functions: `sdTorus`, with an arbitrary axis). Exact for
/// `major ≥ minor`; for a self-intersecting (spindle) torus, `major < minor`, it is exact
/// outside and a 1-Lipschitz lower bound of the distance inside. `axis` must be unit length
/// (the caller normalises it).
///
/// ```text
///          axis
///           |
///      ___  |  ___
///     ( o ) c ( o )     o: tube of radius `minor`
///      ‾‾‾  |  ‾‾‾      c to o: `major`
/// ```
#[must_use]
pub fn torus(p: [f64; 3], center: [f64; 3], axis: [f64; 3], major: f64, minor: f64) -> f64 {
    let v = sub(p, center);
    let y = dot(v, axis);
    let perp = sub(v, scale(axis, y));
    length2(length(perp) - major, y) - minor
}

// ---- blends -------------------------------------------------------------------------------

/// Polynomial smooth minimum of two distances `a`, `b` (metres) with blend radius `k`
/// metres (Quilez, "smooth minimum", quadratic polynomial version):
/// `h = clamp(0.5 + 0.5 (b − a)/k, 0, 1)`, `b (1 − h) + a h − k h (1 − h)`.
///
/// The result is never above `min(a, b)` (the blend only adds material), is at most `k/4`
/// below it, and equals `min(a, b)` exactly when `|a − b| ≥ k`. It is continuous, and
/// 1-Lipschitz in each argument. `k ≤ 0` (or NaN) gives the plain `a.min(b)`.
#[must_use]
pub fn smooth_min(a: f64, b: f64, k: f64) -> f64 {
    if k.is_nan() || k <= 0.0 {
        return a.min(b);
    }
    let h = (0.5 + 0.5 * (b - a) / k).clamp(0.0, 1.0);
    b * (1.0 - h) + a * h - k * h * (1.0 - h)
}

/// Polynomial smooth maximum: `−smooth_min(−a, −b, k)` (see [`smooth_min`]). Never below
/// `max(a, b)`, equal to it when `|a − b| ≥ k`; `k ≤ 0` gives the plain `a.max(b)`.
#[must_use]
pub fn smooth_max(a: f64, b: f64, k: f64) -> f64 {
    -smooth_min(-a, -b, k)
}

// ---- bounding boxes -----------------------------------------------------------------------

/// Bounding box of [`sphere`] grown by `m` metres: `center ± (radius + m)`.
#[must_use]
pub fn aabb_sphere(center: [f64; 3], radius: f64, m: f64) -> Aabb {
    grown(sub(center, [radius; 3]), add(center, [radius; 3]), m)
}

/// Bounding box of [`cuboid`] grown by `m` metres: the extent of the rotated corners, which
/// is `center ± Σⱼ |R e_j|ᵢ h_j` per world axis `i` (R the rotation, `h` the half extents).
#[must_use]
pub fn aabb_cuboid(center: [f64; 3], half_extents: [f64; 3], rotation: [f64; 4], m: f64) -> Aabb {
    let mut ext = [0.0; 3];
    for (j, h) in half_extents.into_iter().enumerate() {
        let mut e = [0.0; 3];
        e[j] = h;
        let r = rotate(rotation, e);
        for i in 0..3 {
            ext[i] += r[i].abs();
        }
    }
    grown(sub(center, ext), add(center, ext), m)
}

/// Bounding box of [`capsule`] grown by `m` metres: the box of `a` and `b`, grown by
/// `radius + m`.
#[must_use]
pub fn aabb_capsule(a: [f64; 3], b: [f64; 3], radius: f64, m: f64) -> Aabb {
    let lo = [a[0].min(b[0]), a[1].min(b[1]), a[2].min(b[2])];
    let hi = [a[0].max(b[0]), a[1].max(b[1]), a[2].max(b[2])];
    grown(sub(lo, [radius; 3]), add(hi, [radius; 3]), m)
}

/// Bounding box of [`cylinder`] grown by `m` metres (tight): the boxes of the two cap discs,
/// whose extent along world axis `i` is `radius · √(1 − uᵢ²)` about the cap centre (`u` the
/// unit axis). For `a == b`, the box of the ball [`cylinder`] falls back to.
#[must_use]
pub fn aabb_cylinder(a: [f64; 3], b: [f64; 3], radius: f64, m: f64) -> Aabb {
    let ba = sub(b, a);
    let len = length(ba);
    if len.is_nan() || len <= 0.0 {
        return aabb_sphere(a, radius, m);
    }
    let u = scale(ba, 1.0 / len);
    let ext = u.map(|ui| radius * (1.0 - ui * ui).max(0.0).sqrt());
    let lo = [a[0].min(b[0]), a[1].min(b[1]), a[2].min(b[2])];
    let hi = [a[0].max(b[0]), a[1].max(b[1]), a[2].max(b[2])];
    grown(sub(lo, ext), add(hi, ext), m)
}

/// Bounding box of [`torus`] grown by `m` metres (tight): the ring's extent along world axis
/// `i` is `major · √(1 − axisᵢ²)`, plus `minor` all round. `axis` must be unit length.
#[must_use]
pub fn aabb_torus(center: [f64; 3], axis: [f64; 3], major: f64, minor: f64, m: f64) -> Aabb {
    let ext = axis.map(|ni| major * (1.0 - ni * ni).max(0.0).sqrt() + minor);
    grown(sub(center, ext), add(center, ext), m)
}

#[cfg(test)]
mod tests {
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
}
