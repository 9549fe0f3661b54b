//! The commonest edit, a ball dug or built without blending, planned by a loop of its own.

use super::Read;
use crate::brick::MaterialId;
use crate::coords::{SampleBox, SamplePos};
use crate::edit::Plan;
use crate::op::CsgMode;
use crate::quant::Quant;

/// Samples of a row taken at a time: their distances, then their grid values, are computed
/// in loops without branches (vectorised), before the comparisons.
const CHUNK: usize = 16;

/// [`super::shape`] for a ball (`center` and `radius`, metres) in hard union or subtraction
/// (no blend), the commonest edit: the same writes, bit for bit, pushed to `plan` in the
/// same order. `b` is the op's sample box, `read` the field over it (no halo), `m` the
/// band in metres.
///
/// Each row's distances and their grid values are computed a chunk at a time in
/// straight-line loops, so the square root and the division of one sample no longer wait
/// for the comparison of the one before, and each row's chord is found without the libm
/// calls of `Shape::rows` (a third of the general loop's time went to those and to
/// dependent latency, at the radii of the load benchmark).
pub(super) fn hard_ball(
    plan: &mut Plan,
    read: &Read,
    b: SampleBox,
    grid: Quant,
    (vs, m): (f64, f64),
    (center, radius): ([f64; 3], f64),
    (mode, material): (CsgMode, MaterialId),
) {
    let dig = mode == CsgMode::Subtract;
    let mut d = [0.0f64; CHUNK];
    let mut v = [0.0f32; CHUNK];
    // Each row's chord of the ball of radius `radius + m`, as `Shape::rows` finds it but two
    // samples wider each way instead of one: truncation toward zero and a product by the
    // inverse stand in for floor, ceil and the division, each off by less than a sample. So
    // it holds every sample within `m` of the ball (it may start a sample later than
    // `Shape::rows` where a rounding crosses an integer, on a sample farther than `m`).
    // Outside it every sample is farther than `m` and keeps its value (the general loop
    // skips it; here it is not visited).
    let r = (radius + m) * (1.0 + 1e-9) + 1e-9;
    let (r2, inv_vs) = (r * r, 1.0 / vs);
    let (bx0, bx1) = (f64::from(b.min.x), f64::from(b.max.x));
    for z in b.min.z..=b.max.z {
        for y in b.min.y..=b.max.y {
            // As `Shape::sdf`: ((dx² + dy²) + dz²).sqrt() − radius, in this order.
            let dy = f64::from(y) * vs - center[1];
            let dz = f64::from(z) * vs - center[2];
            let (dy2, dz2) = (dy * dy, dz * dz);
            let rest = r2 - dy2 - dz2;
            if rest < 0.0 {
                continue;
            }
            let h = rest.sqrt();
            // Clamped to the row before conversion, so no cast saturates.
            let x0 = (((center[0] - h) * inv_vs).clamp(bx0, bx1) as i32)
                .saturating_sub(2)
                .max(b.min.x);
            let x1 = (((center[0] + h) * inv_vs).clamp(bx0, bx1) as i32)
                .saturating_add(2)
                .min(b.max.x);
            if x0 > x1 {
                continue;
            }
            // `x1 − x` is at most the box's width; `x` never steps past `x1` (which may be
            // the last sample of the range).
            let mut x = x0;
            loop {
                let n = ((x1 - x) as usize + 1).min(CHUNK);
                for (i, d) in d[..n].iter_mut().enumerate() {
                    let dx = f64::from(x + i as i32) * vs - center[0];
                    *d = (dx * dx + dy2 + dz2).sqrt() - radius;
                }
                for (v, &d) in v[..n].iter_mut().zip(&d[..n]) {
                    *v = grid.quantize(if dig { -d } else { d });
                }
                let start = read.index(SamplePos::new(x, y, z));
                for i in 0..n {
                    let (old, old_m) = (read.values[start + i], read.materials[start + i]);
                    let new = match (dig, v[i]) {
                        (false, v) if v < old => (v, material),
                        (true, v) if v > old => (v, old_m),
                        _ => continue,
                    };
                    plan.push(SamplePos::new(x + i as i32, y, z), (old, old_m), new);
                }
                if n < CHUNK || x1 - x == CHUNK as i32 - 1 {
                    break;
                }
                x += CHUNK as i32;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::{CsgMode, EditOp, Field, FieldSettings, Generator, NoiseTerrainSettings};

    /// The plan's writes as bits: position, old and new value and material.
    fn bits(field: &Field, op: &EditOp, fast: bool) -> Vec<([i32; 3], u32, u8, u32, u8)> {
        let plan = super::super::shape_with(field, op, fast).expect("a valid op");
        plan.writes
            .iter()
            .map(|w| {
                let p = w.pos.to_array();
                (p, w.old.0.to_bits(), w.old.1, w.new.0.to_bits(), w.new.1)
            })
            .collect()
    }

    /// The ball's own loop plans exactly what the general loop plans — the same samples in
    /// the same order with the same bits — over 600 balls of both modes on a field already
    /// dug and built (so old values and materials vary): radii from a third of a sample to
    /// nine samples, centres on samples, between them and at random, at four voxel sizes
    /// and on both sides of the origin.
    #[test]
    fn the_ball_loop_plans_what_the_general_loop_plans() {
        let mut seed = 7u64;
        let mut unit = move || {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut writes = 0;
        for vs in [0.25, 0.5, 1.0, 2.7] {
            let g = Generator::noise(&NoiseTerrainSettings::default(), &Default::default())
                .expect("default terrain");
            let settings = FieldSettings {
                voxel_size: vs,
                ..FieldSettings::default()
            };
            let mut field = Field::new(settings, Arc::new(g)).expect("valid settings");
            for i in 0..150 {
                let x = (unit() - 0.5) * 40.0 * vs;
                let z = (unit() - 0.5) * 40.0 * vs;
                let y = field.generator().surface_height(x, z);
                let mut center = [x, y + (unit() - 0.5) * 4.0 * vs, z];
                match i % 3 {
                    0 => center = center.map(|c| (c / vs).round() * vs),
                    1 => center = center.map(|c| ((c / vs).floor() + 0.5) * vs),
                    _ => {}
                }
                let mode = if unit() < 0.5 {
                    CsgMode::Subtract
                } else {
                    CsgMode::Union
                };
                let op = EditOp::Sphere {
                    mode,
                    center,
                    radius: (0.3 + 8.7 * unit()) * vs,
                    material: (unit() * 8.0) as u8,
                    blend: 0.0,
                };
                let fast = bits(&field, &op, true);
                assert_eq!(fast, bits(&field, &op, false), "{op:?} at voxel size {vs}");
                writes += fast.len();
                field.apply(&op).expect("a valid op");
            }
        }
        // The balls changed the field: the comparison covered real writes.
        assert!(writes > 50_000, "{writes} writes");
    }
}
