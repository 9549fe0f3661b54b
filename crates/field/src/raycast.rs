//! The field raycast: sphere tracing (Hart 1996) over the trilinear interpolant of the
//! samples, then bisection. The one raycast of the engine; higher layers call it.
//!
//! ```text
//!   origin  t=0      conservative steps        min steps   bisection
//!      o ------> . --------> . ----> . -> . -> .|.|.  ->  hit (first t with value < 0)
//!   air (value >= 0)                            ^ surface
//! ```

use crate::coords::{SamplePos, world_to_sample_floor};
use crate::field::{Field, SampleReader};

/// Shortest step, in voxels: the thinnest solid a ray is guaranteed to see. A solid chord of
/// at least `0.01 · voxel_size` along the ray is never stepped over; thinner slivers may be.
/// It also bounds the loop: at most `max_distance / (0.01 · voxel_size) + 2` steps.
pub const RAY_MIN_STEP_VOXELS: f64 = 0.01;

/// Bisection tolerance, in voxels: the hit is within `1e-6 · voxel_size` (along the ray) of
/// the crossing of the interpolant, far below the interpolant's own error (≈ 0.05 voxel on a
/// ball of 5 voxels) and above f64 rounding anywhere in the sample range.
pub const RAY_TOLERANCE_VOXELS: f64 = 1e-6;

/// Longest ray, in voxels (`10⁶ · voxel_size` metres): bounds the steps of one raycast to
/// `10⁸` in the worst (grazing) case, a few per voxel in the common one.
pub const RAY_MAX_DISTANCE_VOXELS: f64 = 1e6;

/// Samples kept free between a ray's ends and the `i32` limits (the cells' upper corners and
/// the normal's stencil read up to 2 samples beyond a point).
const RANGE_MARGIN: i32 = 4;

/// A position within this many samples of an integer is on that sample layer (as in
/// `coords`), so a step that ends on a cell face starts the next one in the next cell.
const SNAP: f64 = 1e-9;

/// Where a ray met the surface.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RayHit {
    /// The hit point, world metres: the solid side of the bisection bracket, so the field's
    /// interpolant is `< 0` there and the crossing is at most [`RAY_TOLERANCE_VOXELS`] voxels
    /// back along the ray. The origin itself when it is inside solid.
    pub position: [f64; 3],
    /// Unit surface normal, pointing toward air: central differences of the samples at the
    /// hit cell's 8 corners (`(s[i+1] − s[i−1]) / (2 · voxel_size)` per axis), blended
    /// trilinearly at the hit and normalised. These are the meshers' normals (loam-mesh takes
    /// vertex normals from central differences over the chunk halo), second-order accurate:
    /// within 0.5° of radial on a ball of 5 voxels. If that vanishes, or (on a feature below a
    /// voxel) faces along the ray that crossed into solid: the gradient of the trilinear
    /// interpolant (first-order, 7.6° there), else `−direction`. Never NaN.
    pub normal: [f64; 3],
    /// Metres from the origin along the normalised direction; 0 when the origin is in solid.
    pub distance: f64,
}

/// A raycast was refused; nothing was traced.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RaycastError {
    /// A component of the origin or direction, or the maximum distance, is NaN or infinite.
    #[error("ray `{name}` is not finite ({value})")]
    NotFinite {
        /// Which number: `origin.x`, …, `direction.z` or `max_distance`.
        name: &'static str,
        /// Its value.
        value: f64,
    },
    /// The direction is `(0, 0, 0)`.
    #[error("ray direction {direction:?} has zero length")]
    ZeroDirection {
        /// The direction given.
        direction: [f64; 3],
    },
    /// The maximum distance is negative.
    #[error("ray max_distance {} m is negative", crate::num(.max_distance))]
    NegativeDistance {
        /// The distance given, metres.
        max_distance: f64,
    },
    /// The maximum distance is above [`RAY_MAX_DISTANCE_VOXELS`] voxels.
    #[error("ray max_distance {} m is above the limit of {max} m (10^6 voxels)", crate::num(.max_distance))]
    TooLong {
        /// The distance given, metres.
        max_distance: f64,
        /// The limit, metres.
        max: f64,
    },
    /// The origin or the end of the ray is outside the `i32` sample range (less a margin).
    #[error("ray point {point:?} m is outside the sample range at voxel size {voxel_size} m")]
    OutOfRange {
        /// The offending end of the ray, world metres.
        point: [f64; 3],
        /// The voxel size, metres.
        voxel_size: f64,
    },
}

impl Field {
    /// Casts a ray against the field and returns the first point where it enters solid.
    ///
    /// `origin` is in world metres, `direction` any non-zero vector (it is normalised), and
    /// `max_distance` in metres along it, in `[0, 10⁶ · voxel_size]`. The surface seen is the
    /// trilinear interpolation of the samples ([`Field::sample`], sample `i` at `i · voxel_size`);
    /// inside is `value < 0` (exactly 0 is air).
    ///
    /// Sphere tracing (Hart 1996): from `t = 0`, each step is `value / L`, where `L` bounds the
    /// interpolant's derivative along the ray in the current cell (`Σ |dᵢ| · max |edge
    /// difference along i| / voxel_size`, at most √3 for 1-Lipschitz samples), capped at the
    /// cell's exit and raised to [`RAY_MIN_STEP_VOXELS`] so grazing rays cannot stall. The end
    /// point `t = max_distance` is tested too. When a step ends in solid, the crossing is
    /// bisected between the last air `t` and that `t` to [`RAY_TOLERANCE_VOXELS`]; see
    /// [`RayHit`] for the point, normal and distance returned. An origin inside solid is a hit
    /// at distance 0 at the origin (a tool underground still digs where it is).
    ///
    /// Cost: 8 samples per cell entered (cached between steps in one cell), at most
    /// `max_distance / (0.01 · voxel_size) + 2` steps, and 48 for the normal.
    ///
    /// Returns `Ok(None)` when nothing is hit within `max_distance`.
    ///
    /// # Errors
    /// [`RaycastError`], at once and without tracing, for a NaN or infinite number, a zero
    /// direction, a negative or too long `max_distance`, or an origin or end point outside
    /// the `i32` sample range.
    pub fn raycast(
        &self,
        origin: [f64; 3],
        direction: [f64; 3],
        max_distance: f64,
    ) -> Result<Option<RayHit>, RaycastError> {
        let vs = self.settings.voxel_size;
        let d = check_ray(origin, direction, max_distance, vs)?;
        let (min_step, tol) = (RAY_MIN_STEP_VOXELS * vs, RAY_TOLERANCE_VOXELS * vs);
        let at = |t: f64| [0, 1, 2].map(|i| origin[i] + t * d[i]);
        let mut f = Cell::new(self);
        let mut v = f.value(at(0.0), d);
        if v < 0.0 {
            return Ok(Some(f.hit(origin, d, 0.0)));
        }
        let mut t = 0.0;
        let max_steps = (max_distance / min_step).ceil() as u64 + 2;
        for _ in 0..max_steps {
            if t >= max_distance {
                break;
            }
            let l = f.slope_along(d);
            let safe = if l > 0.0 { v / l } else { f64::INFINITY };
            let step = safe.min(f.exit(origin, d) - t).max(min_step);
            let next = (t + step).min(max_distance);
            let v_next = f.value(at(next), d);
            if v_next < 0.0 {
                // Bisect: `lo` is air, `hi` solid; at most 64 halvings (≈ 21 from a cell).
                let (mut lo, mut hi) = (t, next);
                for _ in 0..64 {
                    if hi - lo <= tol {
                        break;
                    }
                    let mid = 0.5 * (lo + hi);
                    if f.value(at(mid), d) < 0.0 {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
                return Ok(Some(f.hit(at(hi), d, hi)));
            }
            (t, v) = (next, v_next);
        }
        Ok(None)
    }
}

/// Validates a ray and returns its unit direction.
fn check_ray(o: [f64; 3], dir: [f64; 3], max: f64, vs: f64) -> Result<[f64; 3], RaycastError> {
    let names = ["origin.x", "origin.y", "origin.z"];
    let dnames = ["direction.x", "direction.y", "direction.z"];
    let all = names.iter().zip(o).chain(dnames.iter().zip(dir));
    for (&name, value) in all.chain([(&"max_distance", max)]) {
        if !value.is_finite() {
            return Err(RaycastError::NotFinite { name, value });
        }
    }
    if max < 0.0 {
        return Err(RaycastError::NegativeDistance { max_distance: max });
    }
    let limit = RAY_MAX_DISTANCE_VOXELS * vs;
    if max > limit {
        return Err(RaycastError::TooLong {
            max_distance: max,
            max: limit,
        });
    }
    // Scale by the largest component first, so tiny and huge vectors normalise too.
    // (A zero vector gives NaN here, which `unit` refuses.)
    let scale = dir.iter().fold(0.0f64, |m, c| m.max(c.abs()));
    let d = unit(dir.map(|c| c / scale)).ok_or(RaycastError::ZeroDirection { direction: dir })?;
    let end = [0, 1, 2].map(|i| o[i] + max * d[i]);
    for point in [o, end] {
        for c in point {
            let ok = world_to_sample_floor(c, vs)
                .is_ok_and(|s| (i32::MIN + RANGE_MARGIN..=i32::MAX - RANGE_MARGIN).contains(&s));
            if !ok {
                return Err(RaycastError::OutOfRange {
                    point,
                    voxel_size: vs,
                });
            }
        }
    }
    Ok(d)
}

/// `v / |v|`, if that is finite and `|v|` is not vanishingly small.
fn unit(v: [f64; 3]) -> Option<[f64; 3]> {
    let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    (len.is_finite() && len > 1e-12).then(|| v.map(|c| c / len))
}

fn lerp(a: f64, b: f64, t: f64) -> f64 {
    // Exact at both ends (t = 0 gives a, t = 1 gives b), unlike `a + (b − a)·t`.
    a * (1.0 - t) + b * t
}

/// The trilinear interpolant in one cell, with the cell's 8 corner samples cached.
struct Cell<'a> {
    field: SampleReader<'a>,
    vs: f64,
    /// Lowest corner of the cached cell.
    min: Option<[i32; 3]>,
    /// Corner values in metres, index `x + 2y + 4z`.
    v: [f64; 8],
    /// Local coordinates in `[0, 1]³` of the last point evaluated.
    u: [f64; 3],
}

impl<'a> Cell<'a> {
    fn new(field: &'a Field) -> Self {
        let (vs, min, v, u) = (field.settings.voxel_size, None, [0.0; 8], [0.0; 3]);
        Self {
            field: SampleReader::new(field),
            vs,
            min,
            v,
            u,
        }
    }

    /// The interpolant at world point `p`, in the cell the ray moving along `d` is in: on a
    /// cell face (within [`SNAP`] samples) that is the cell ahead.
    fn value(&mut self, p: [f64; 3], d: [f64; 3]) -> f64 {
        let mut c = [0i32; 3];
        for i in 0..3 {
            let s = p[i] / self.vs;
            let r = s.round();
            let k = if (s - r).abs() <= SNAP {
                if d[i] < 0.0 { r - 1.0 } else { r }
            } else {
                s.floor()
            };
            // In range: the ends of the ray were checked with a margin.
            c[i] = k as i32;
            self.u[i] = s - k;
        }
        if self.min != Some(c) {
            for (k, v) in self.v.iter_mut().enumerate() {
                let k = k as i32;
                let s = SamplePos::new(c[0] + (k & 1), c[1] + (k >> 1 & 1), c[2] + (k >> 2));
                *v = f64::from(self.field.sample(s));
            }
            self.min = Some(c);
        }
        let (v, [x, y, z]) = (&self.v, self.u);
        let y0 = lerp(lerp(v[0], v[1], x), lerp(v[2], v[3], x), y);
        let y1 = lerp(lerp(v[4], v[5], x), lerp(v[6], v[7], x), y);
        lerp(y0, y1, z)
    }

    /// The cell's 12 edge differences (metres), per axis: lerped over the other two local
    /// coordinates, they give that partial derivative times `voxel_size`.
    fn edges(&self) -> [[f64; 4]; 3] {
        let e = |p: [(usize, usize); 4]| p.map(|(a, b)| self.v[b] - self.v[a]);
        [
            e([(0, 1), (2, 3), (4, 5), (6, 7)]),
            e([(0, 2), (1, 3), (4, 6), (5, 7)]),
            e([(0, 4), (1, 5), (2, 6), (3, 7)]),
        ]
    }

    /// Bound of `|d · ∇f|` over the cell: `Σ |dᵢ| · max |edge difference along i| / vs`.
    fn slope_along(&self, d: [f64; 3]) -> f64 {
        let max = |e: [f64; 4]| e.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let e = self.edges();
        (0..3).map(|i| d[i].abs() * max(e[i])).sum::<f64>() / self.vs
    }

    /// Distance (metres along `d` from `o`) at which the ray leaves the cell.
    fn exit(&self, o: [f64; 3], d: [f64; 3]) -> f64 {
        let c = self.min.unwrap_or_default();
        let mut t = f64::INFINITY;
        for i in 0..3 {
            if d[i] != 0.0 {
                let face = f64::from(c[i]) + if d[i] > 0.0 { 1.0 } else { 0.0 };
                t = t.min((face * self.vs - o[i]) / d[i]);
            }
        }
        t
    }

    /// Central differences at the cell's 8 corners (the meshers' vertex gradients, reading a
    /// sample beyond the cell each side), blended at the last point evaluated (dimensionless).
    fn corner_gradient(&mut self) -> [f64; 3] {
        let (c, u) = (self.min.unwrap_or_default(), self.u);
        let field = &mut self.field;
        let mut s = |p: [i32; 3]| f64::from(field.sample(SamplePos::new(p[0], p[1], p[2])));
        let mut g = [0.0; 3];
        for k in 0..8i32 {
            let o = [k & 1, k >> 1 & 1, k >> 2];
            let w: f64 = (0..3)
                .map(|i| if o[i] == 1 { u[i] } else { 1.0 - u[i] })
                .product();
            let p = [0, 1, 2].map(|i| c[i] + o[i]);
            for (i, gi) in g.iter_mut().enumerate() {
                let (mut a, mut b) = (p, p);
                a[i] += 1;
                b[i] -= 1;
                *gi += w * (s(a) - s(b));
            }
        }
        g.map(|x| x / (2.0 * self.vs))
    }

    /// Gradient of the interpolant at the last point evaluated (dimensionless).
    fn gradient(&self) -> [f64; 3] {
        let ([x, y, z], [ex, ey, ez]) = (self.u, self.edges());
        let bl = |a: [f64; 4], s: f64, t: f64| lerp(lerp(a[0], a[1], s), lerp(a[2], a[3], s), t);
        [bl(ex, y, z), bl(ey, x, z), bl(ez, x, y)].map(|g| g / self.vs)
    }

    /// The hit at `p`, `t` metres along `d`, with its normal.
    fn hit(&mut self, p: [f64; 3], d: [f64; 3], t: f64) -> RayHit {
        self.value(p, d);
        // A crossing's normal faces the ray (the interpolant falls along it); on a feature
        // smaller than the stencil the corner differences may not, then the cell decides.
        let normal = unit(self.corner_gradient())
            .filter(|n| t == 0.0 || n[0] * d[0] + n[1] * d[1] + n[2] * d[2] < 0.0)
            .or_else(|| unit(self.gradient()))
            .unwrap_or(d.map(|c| -c));
        RayHit {
            position: p,
            normal,
            distance: t,
        }
    }
}
