//! Signed distance functions of brush shapes, smooth blends, and their bounding boxes.
//!
//! Every function takes world positions in metres (f64) and returns the signed distance in
//! metres to the shape's surface: negative inside, positive outside, zero on the surface
//! (docs/architecture.md, "Field"). The formulas are Inigo Quilez's well-known exact ones (Quilez,
//! "distance functions", <https://iquilezles.org/articles/distfunctions/>), written with
//! `+ − × ÷ √`, `abs`, `min` and `max` only (docs/architecture.md, invariant 2), so results are
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
mod tests;
