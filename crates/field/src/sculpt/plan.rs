//! Planning shape and brush ops: the samples an op changes and their new values, read from
//! the field as it is (see `edit.rs` for the commit).

use noise::{NoiseFn, Perlin};

use crate::brick::MaterialId;
use crate::coords::{SampleBox, SamplePos, world_to_sample_ceil, world_to_sample_floor};
use crate::edit::Plan;
use crate::field::{Field, FieldSettings};
use crate::generator::wrap_noise;
use crate::op::{CsgMode, EditError, EditOp};
use crate::quant::Quant;
use crate::sculpt::falloff::Falloff;
use crate::sculpt::redistance::redistance;
use crate::sculpt::shapes;

mod ball;

/// The samples of the world box `lo..=hi` (metres), checked against the field's limits.
fn sample_box(
    settings: &FieldSettings,
    lo: [f64; 3],
    hi: [f64; 3],
    center: [f64; 3],
) -> Result<Option<SampleBox>, EditError> {
    let vs = settings.voxel_size;
    let err = |_| EditError::OutOfRange { center };
    let mut min = [0; 3];
    let mut max = [0; 3];
    for i in 0..3 {
        min[i] = world_to_sample_ceil(lo[i], vs).map_err(err)?;
        max[i] = world_to_sample_floor(hi[i], vs).map_err(err)?;
        if min[i] > max[i] {
            return Ok(None);
        }
    }
    let b = SampleBox {
        min: SamplePos::new(min[0], min[1], min[2]),
        max: SamplePos::new(max[0], max[1], max[2]),
    };
    let samples = b.volume();
    if samples > settings.max_edit_samples {
        return Err(EditError::TooManySamples {
            samples,
            max: settings.max_edit_samples,
        });
    }
    Ok(Some(b))
}

/// The corner and size of `b` grown by `halo` samples on every side; `OutOfRange` (naming
/// `center`) when that leaves the sample range.
fn grown(b: SampleBox, halo: i32, center: [f64; 3]) -> Result<(SamplePos, [usize; 3]), EditError> {
    let out = EditError::OutOfRange { center };
    let grow = |v: i32, d: i32| v.checked_add(d).ok_or(out.clone());
    let min = SamplePos::new(
        grow(b.min.x, -halo)?,
        grow(b.min.y, -halo)?,
        grow(b.min.z, -halo)?,
    );
    let max = [
        grow(b.max.x, halo)?,
        grow(b.max.y, halo)?,
        grow(b.max.z, halo)?,
    ];
    let dims = [
        (max[0] - min.x + 1) as usize,
        (max[1] - min.y + 1) as usize,
        (max[2] - min.z + 1) as usize,
    ];
    Ok((min, dims))
}

/// What a shape, brush or paint op reads: its sample box (`None` when it covers no sample),
/// the halo read around the box, and the point its errors name.
struct Reach {
    b: Option<SampleBox>,
    halo: i32,
    center: [f64; 3],
}

/// The [`Reach`] of a shape op (`Shape`), a brush or paint; the errors of its plan that do
/// not depend on the field's values (range, size).
fn reach(settings: &FieldSettings, op: &EditOp) -> Result<Reach, EditError> {
    let band = settings.band();
    let (lo, hi, center, halo) = match *op {
        EditOp::Sphere { .. }
        | EditOp::Cuboid { .. }
        | EditOp::Capsule { .. }
        | EditOp::Cylinder { .. }
        | EditOp::Torus { .. } => {
            let s = Shape::new(op);
            let m = band + s.blend;
            (s.lo.map(|v| v - m), s.hi.map(|v| v + m), s.center, 0)
        }
        EditOp::Raise { center, radius, .. }
        | EditOp::Lower { center, radius, .. }
        | EditOp::Smooth { center, radius, .. }
        | EditOp::Flatten { center, radius, .. }
        | EditOp::Noise { center, radius, .. } => {
            let r = radius + band;
            (center.map(|c| c - r), center.map(|c| c + r), center, 1)
        }
        EditOp::Paint { center, radius, .. } => (
            center.map(|c| c - radius),
            center.map(|c| c + radius),
            center,
            0,
        ),
        EditOp::Undo { .. } | EditOp::Redo { .. } => {
            return Err(EditError::NeedsHistory { kind: op.kind() });
        }
    };
    let b = sample_box(settings, lo, hi, center)?;
    if let Some(b) = b {
        grown(b, halo, center)?;
    }
    Ok(Reach { b, halo, center })
}

/// The checks of planning `op` (a validated shape, brush or paint op) that do not read the
/// field: `Ok` exactly when planning it would not fail.
pub(crate) fn check(field: &Field, op: &EditOp) -> Result<(), EditError> {
    reach(&field.settings, op).map(|_| ())
}

/// The samples `op` (any op: it is validated first) reads and may write: its box
/// (its extent plus the band, `FieldSettings::band`) grown by the one-sample halo a brush
/// reads around it; 0 for an op that covers no sample, and for `undo` / `redo` (their
/// reach is their stroke's, which only the [`crate::History`] knows). The work of applying
/// an op, and the bricks it may create, grow with it: a server charges it against each
/// client's edit budget. At 1 m voxels a 1 m ball is 7³ = 343 samples, a 64 m ball 133³,
/// some 2.35 million.
///
/// # Errors
/// As applying the op would fail without reading the field: a bad number or size
/// ([`EditOp::validate`] with `max_edit_radius`), its box outside the sample range
/// ([`EditError::OutOfRange`]) or above `max_edit_samples` ([`EditError::TooManySamples`]).
pub fn edit_samples(settings: &FieldSettings, op: &EditOp) -> Result<u64, EditError> {
    // Planning takes validated ops (a zero rotation, a radius of 1e7 m would panic).
    op.validate(settings.max_edit_radius)?;
    if matches!(op, EditOp::Undo { .. } | EditOp::Redo { .. }) {
        return Ok(0);
    }
    let r = reach(settings, op)?;
    let Some(b) = r.b else {
        return Ok(0);
    };
    let (_, dims) = grown(b, r.halo, r.center)?;
    Ok(dims.iter().map(|&d| d as u64).product())
}

/// The field's values and materials over `b` grown by `halo` samples, x fastest.
struct Read {
    min: SamplePos,
    dims: [usize; 3],
    values: Vec<f32>,
    materials: Vec<MaterialId>,
}

/// Most samples whose read buffers a thread keeps for its next plan (2 MiB of them).
const KEPT_READ: usize = 1 << 18;

thread_local! {
    /// The last plan's read buffers, reused: most ops are small, and a fresh zeroed
    /// allocation per op cost more than reading the samples.
    static READ_BUFFERS: std::cell::Cell<(Vec<f32>, Vec<MaterialId>)> =
        const { std::cell::Cell::new((Vec::new(), Vec::new())) };
}

impl Read {
    fn new(field: &Field, b: SampleBox, halo: i32, center: [f64; 3]) -> Result<Self, EditError> {
        let (min, dims) = grown(b, halo, center)?;
        let n = dims[0] * dims[1] * dims[2];
        let (mut values, mut materials) = READ_BUFFERS.take();
        // Every entry is written by the fill; the old contents do not matter.
        values.resize(n, 0.0);
        materials.resize(n, 0);
        field.fill(min, dims, &mut values, &mut materials);
        Ok(Self {
            min,
            dims,
            values,
            materials,
        })
    }

    #[inline]
    fn index(&self, p: SamplePos) -> usize {
        let (x, y, z) = (
            (p.x - self.min.x) as usize,
            (p.y - self.min.y) as usize,
            (p.z - self.min.z) as usize,
        );
        x + self.dims[0] * (y + self.dims[1] * z)
    }

    #[inline]
    fn at(&self, p: SamplePos) -> (f32, MaterialId) {
        let i = self.index(p);
        (self.values[i], self.materials[i])
    }
}

impl Drop for Read {
    fn drop(&mut self) {
        if self.values.capacity() <= KEPT_READ {
            READ_BUFFERS.set((
                std::mem::take(&mut self.values),
                std::mem::take(&mut self.materials),
            ));
        }
    }
}

fn world(p: SamplePos, vs: f64) -> [f64; 3] {
    [
        f64::from(p.x) * vs,
        f64::from(p.y) * vs,
        f64::from(p.z) * vs,
    ]
}

fn each(b: SampleBox, mut f: impl FnMut(SamplePos)) {
    for z in b.min.z..=b.max.z {
        for y in b.min.y..=b.max.y {
            for x in b.min.x..=b.max.x {
                f(SamplePos::new(x, y, z));
            }
        }
    }
}

/// Like [`each`], with the samples of each row (`y`, `z`) limited to `row(y, z)`, an
/// inclusive range of x (empty when its start is past its end).
fn each_in_rows(b: SampleBox, row: impl Fn(i32, i32) -> (i32, i32), mut f: impl FnMut(SamplePos)) {
    for z in b.min.z..=b.max.z {
        for y in b.min.y..=b.max.y {
            let (x0, x1) = row(y, z);
            for x in x0.max(b.min.x)..=x1.min(b.max.x) {
                f(SamplePos::new(x, y, z));
            }
        }
    }
}

fn normalize(v: [f64; 3]) -> [f64; 3] {
    let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    [v[0] / n, v[1] / n, v[2] / n]
}

/// A shape's SDF, its world bounding box, and its CSG settings.
struct Shape<'a> {
    op: &'a EditOp,
    mode: CsgMode,
    material: MaterialId,
    blend: f64,
    lo: [f64; 3],
    hi: [f64; 3],
    center: [f64; 3],
    quat: [f64; 4],
    axis: [f64; 3],
}

impl<'a> Shape<'a> {
    fn new(op: &'a EditOp) -> Self {
        let mut s = Shape {
            op,
            mode: CsgMode::Union,
            material: 0,
            blend: 0.0,
            lo: [0.0; 3],
            hi: [0.0; 3],
            center: [0.0; 3],
            quat: [0.0, 0.0, 0.0, 1.0],
            axis: [0.0, 1.0, 0.0],
        };
        let aabb = |c: [f64; 3], r: [f64; 3]| {
            (
                [c[0] - r[0], c[1] - r[1], c[2] - r[2]],
                [c[0] + r[0], c[1] + r[1], c[2] + r[2]],
            )
        };
        let ((lo, hi), center) = match *op {
            EditOp::Sphere {
                mode,
                center,
                radius,
                material,
                blend,
            } => {
                (s.mode, s.material, s.blend) = (mode, material, blend);
                (aabb(center, [radius; 3]), center)
            }
            EditOp::Cuboid {
                mode,
                center,
                half_extents: h,
                rotation,
                material,
                blend,
            } => {
                (s.mode, s.material, s.blend) = (mode, material, blend);
                s.quat = shapes::normalize_quat(rotation).expect("validated");
                // The rotated box fits in a ball of its half diagonal.
                let r = (h[0] * h[0] + h[1] * h[1] + h[2] * h[2]).sqrt();
                (aabb(center, [r; 3]), center)
            }
            EditOp::Capsule {
                mode,
                a,
                b,
                radius,
                material,
                blend,
            }
            | EditOp::Cylinder {
                mode,
                a,
                b,
                radius,
                material,
                blend,
            } => {
                (s.mode, s.material, s.blend) = (mode, material, blend);
                let lo = [0, 1, 2].map(|i| a[i].min(b[i]) - radius);
                let hi = [0, 1, 2].map(|i| a[i].max(b[i]) + radius);
                ((lo, hi), [0, 1, 2].map(|i| (a[i] + b[i]) * 0.5))
            }
            EditOp::Torus {
                mode,
                center,
                axis,
                major_radius,
                minor_radius,
                material,
                blend,
            } => {
                (s.mode, s.material, s.blend) = (mode, material, blend);
                s.axis = normalize(axis);
                (aabb(center, [major_radius + minor_radius; 3]), center)
            }
            _ => unreachable!("not a shape"),
        };
        (s.lo, s.hi, s.center) = (lo, hi, center);
        s
    }

    /// Per row of `b`, the x range (samples) that can hold samples within `m` metres of the
    /// shape: for a sphere in union or subtraction, the row's chord of the ball of radius
    /// `radius + m`, widened by a sample each way (the exact test still runs on every sample
    /// in it; outside it, every sample is farther than `m`); else the whole row.
    fn rows(&self, b: SampleBox, m: f64, vs: f64) -> impl Fn(i32, i32) -> (i32, i32) + use<> {
        let whole = (b.min.x, b.max.x);
        let ball = match *self.op {
            EditOp::Sphere { center, radius, .. } if self.mode != CsgMode::Intersect => {
                // A relative margin far above the rounding of the distance's arithmetic.
                let r = (radius + m) * (1.0 + 1e-9) + 1e-9;
                Some((center, r * r))
            }
            _ => None,
        };
        move |y, z| {
            let Some((c, r2)) = ball else {
                return whole;
            };
            let (dy, dz) = (f64::from(y) * vs - c[1], f64::from(z) * vs - c[2]);
            let rest = r2 - dy * dy - dz * dz;
            if rest < 0.0 {
                return (1, 0);
            }
            let h = rest.sqrt();
            let lo = ((c[0] - h) / vs).floor() - 1.0;
            let hi = ((c[0] + h) / vs).ceil() + 1.0;
            // Clamped to the row before conversion, so no cast saturates.
            let clamp = |v: f64| v.clamp(f64::from(whole.0), f64::from(whole.1)) as i32;
            (clamp(lo), clamp(hi))
        }
    }

    /// Signed distance to the shape, metres.
    #[inline]
    fn sdf(&self, p: [f64; 3]) -> f64 {
        match *self.op {
            EditOp::Sphere { center, radius, .. } => {
                // Written out as before sculpting existed, so old sessions keep their hashes.
                let (dx, dy, dz) = (p[0] - center[0], p[1] - center[1], p[2] - center[2]);
                (dx * dx + dy * dy + dz * dz).sqrt() - radius
            }
            EditOp::Cuboid {
                center,
                half_extents,
                ..
            } => shapes::cuboid(p, center, half_extents, self.quat),
            EditOp::Capsule { a, b, radius, .. } => shapes::capsule(p, a, b, radius),
            EditOp::Cylinder { a, b, radius, .. } => shapes::cylinder(p, a, b, radius),
            EditOp::Torus {
                center,
                major_radius,
                minor_radius,
                ..
            } => shapes::torus(p, center, self.axis, major_radius, minor_radius),
            _ => unreachable!("not a shape"),
        }
    }
}

/// A CSG shape: union (build), subtract (dig) or intersect, hard or with a smooth blend.
///
/// Union and subtraction change only samples where the shape's distance is below
/// `band + blend` (beyond it the clamped result equals the old value); intersection rewrites
/// the shape's bounding box grown by `band + blend`. A union writes the op's material where
/// the shape is nearer than the old surface.
pub(crate) fn shape(field: &Field, op: &EditOp) -> Result<Plan, EditError> {
    shape_with(field, op, true)
}

/// [`shape`], with the hard ball's own loop ([`ball::hard_ball`]) used where it applies when
/// `fast` (tests compare the two).
fn shape_with(field: &Field, op: &EditOp, fast: bool) -> Result<Plan, EditError> {
    let s = Shape::new(op);
    let (vs, band) = (field.settings.voxel_size, field.settings.band());
    let m = band + s.blend;
    let mut plan = Plan::default();
    let r = reach(&field.settings, op)?;
    let Some(b) = r.b else {
        return Ok(plan);
    };
    let read = Read::new(field, b, r.halo, r.center)?;
    let grid = Quant::new(band);
    plan.writes.reserve((b.volume() as usize).min(1 << 16));
    if let EditOp::Sphere {
        center,
        radius,
        blend: 0.0,
        ..
    } = *op
        && fast
        && matches!(s.mode, CsgMode::Union | CsgMode::Subtract)
    {
        ball::hard_ball(
            &mut plan,
            &read,
            b,
            grid,
            (vs, m),
            (center, radius),
            (s.mode, s.material),
        );
        return Ok(plan);
    }
    let k = s.blend;
    let rows = s.rows(b, m, vs);
    each_in_rows(b, rows, |pos| {
        let p = world(pos, vs);
        let d = s.sdf(p);
        if s.mode != CsgMode::Intersect && d > m {
            return;
        }
        let (old, old_m) = read.at(pos);
        let o = f64::from(old);
        let new = match (s.mode, k > 0.0) {
            (CsgMode::Union, false) => {
                let v = grid.quantize(d);
                if v < old {
                    (v, s.material)
                } else {
                    (old, old_m)
                }
            }
            (CsgMode::Union, true) => {
                let mat = if d < o { s.material } else { old_m };
                (grid.quantize(shapes::smooth_min(o, d, k)), mat)
            }
            (CsgMode::Subtract, false) => {
                let v = grid.quantize(-d);
                if v > old { (v, old_m) } else { (old, old_m) }
            }
            (CsgMode::Subtract, true) => (grid.quantize(shapes::smooth_max(o, -d, k)), old_m),
            (CsgMode::Intersect, false) => {
                let v = grid.quantize(d);
                if v > old { (v, old_m) } else { (old, old_m) }
            }
            (CsgMode::Intersect, true) => (grid.quantize(shapes::smooth_max(o, d, k)), old_m),
        };
        plan.push(pos, (old, old_m), new);
    });
    Ok(plan)
}

/// A falloff brush centred at `center` with `radius`: raise, lower, smooth, flatten, noise.
///
/// New values are computed inside the ball of `radius`; then the box around the ball grown
/// by the band is redistanced (fast sweeping, Zhao 2005, with the box's outer layer fixed as
/// boundary data), so the field stays a distance bound however many strokes pile up.
pub(crate) fn brush(field: &Field, op: &EditOp) -> Result<Plan, EditError> {
    let (vs, band) = (field.settings.voxel_size, field.settings.band());
    let (center, radius, strength, falloff) = match *op {
        EditOp::Raise {
            center,
            radius,
            strength,
            falloff,
        }
        | EditOp::Lower {
            center,
            radius,
            strength,
            falloff,
        }
        | EditOp::Smooth {
            center,
            radius,
            strength,
            falloff,
        }
        | EditOp::Flatten {
            center,
            radius,
            strength,
            falloff,
            ..
        }
        | EditOp::Noise {
            center,
            radius,
            strength,
            falloff,
            ..
        } => (center, radius, strength, falloff),
        _ => unreachable!("not a brush"),
    };
    let mut plan = Plan::default();
    let r = reach(&field.settings, op)?;
    let Some(b) = r.b else {
        return Ok(plan);
    };
    let read = Read::new(field, b, r.halo, center)?;
    let dims = [
        (b.max.x - b.min.x + 1) as usize,
        (b.max.y - b.min.y + 1) as usize,
        (b.max.z - b.min.z + 1) as usize,
    ];
    let perlin = match *op {
        EditOp::Noise { seed, .. } => Some(Perlin::new(seed)),
        _ => None,
    };
    let plane = match *op {
        EditOp::Flatten {
            plane_point,
            plane_normal,
            ..
        } => Some((plane_point, normalize(plane_normal))),
        _ => None,
    };
    let mut work = Vec::with_capacity(dims[0] * dims[1] * dims[2]);
    let mut touched = false;
    let grid = Quant::new(band);
    each(b, |pos| {
        let p = world(pos, vs);
        let old = read.at(pos).0;
        let w = weight(&falloff, p, center, radius);
        if w <= 0.0 {
            work.push(old);
            return;
        }
        let o = f64::from(old);
        let new = match *op {
            EditOp::Raise { .. } => o - w * strength,
            EditOp::Lower { .. } => o + w * strength,
            EditOp::Smooth { .. } => o + w * strength * (mean27(&read, pos) - o),
            EditOp::Flatten { .. } => {
                let (q, n) = plane.expect("flatten");
                let d = (p[0] - q[0]) * n[0] + (p[1] - q[1]) * n[1] + (p[2] - q[2]) * n[2];
                o + w * strength * (d.clamp(-band, band) - o)
            }
            EditOp::Noise { wavelength, .. } => {
                let q = p.map(|v| wrap_noise(v / wavelength));
                o + w * strength * perlin.as_ref().expect("noise").get(q)
            }
            _ => unreachable!(),
        };
        let v = grid.quantize(new);
        touched |= v.to_bits() != old.to_bits();
        work.push(v);
    });
    if !touched {
        return Ok(plan);
    }
    // Redistance the box (its outer layer fixed): the brushed values are no distances (a
    // sample clamped at the band and raised is too near the surface, and repeated strokes
    // would grow false surfaces from it); the redistanced field has the brushed zero set.
    redistance(&mut work, dims, vs, band, 1);
    // Back onto the grid (redistancing keeps every sign; so does the grid).
    let mut i = 0;
    each(b, |pos| {
        let v = grid.quantize(f64::from(work[i]));
        i += 1;
        let old = read.at(pos);
        plan.push(pos, old, (v, old.1));
    });
    Ok(plan)
}

/// Paint: `material` on every sample within `radius` whose falloff weight is at least
/// `threshold`; values stay.
pub(crate) fn paint(field: &Field, op: &EditOp) -> Result<Plan, EditError> {
    let EditOp::Paint {
        center,
        radius,
        material,
        falloff,
        threshold,
    } = *op
    else {
        unreachable!("not paint")
    };
    let vs = field.settings.voxel_size;
    let mut plan = Plan::default();
    let r = reach(&field.settings, op)?;
    let Some(b) = r.b else {
        return Ok(plan);
    };
    let read = Read::new(field, b, r.halo, center)?;
    each(b, |pos| {
        if weight(&falloff, world(pos, vs), center, radius) >= threshold {
            let old = read.at(pos);
            plan.push(pos, old, (old.0, material));
        }
    });
    Ok(plan)
}

/// The falloff weight of world point `p` for a brush at `center` with `radius`.
#[inline]
fn weight(falloff: &Falloff, p: [f64; 3], center: [f64; 3], radius: f64) -> f64 {
    let (dx, dy, dz) = (p[0] - center[0], p[1] - center[1], p[2] - center[2]);
    let d = (dx * dx + dy * dy + dz * dz).sqrt() / radius;
    if d >= 1.0 { 0.0 } else { falloff.weight(d) }
}

/// Mean of the 3×3×3 samples around `pos` (the read has a halo of 1).
fn mean27(read: &Read, pos: SamplePos) -> f64 {
    let mut sum = 0.0;
    for dz in -1..=1 {
        for dy in -1..=1 {
            for dx in -1..=1 {
                let q = SamplePos::new(pos.x + dx, pos.y + dy, pos.z + dz);
                sum += f64::from(read.at(q).0);
            }
        }
    }
    sum / 27.0
}
