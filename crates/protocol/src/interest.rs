//! Regions: which bricks a viewer needs, which bricks an op may read or write.
//!
//! A region is one brick (`32³` samples, aligned with chunks). A client's interest is a box
//! of bricks around its viewer ([`region_for`]): the server sends it the ops whose changed
//! samples fall in that box, and the box's bricks when it moves into new ones.
//!
//! An op's result on a sample depends only on samples near it: shapes and paint on the
//! sample itself, brushes on the box they redistance (their reach plus a one-sample shell)
//! and smoothing on the 3×3×3 neighbours. [`op_reach`] bounds all of them, so a client that
//! holds every brick of an op's reach exactly computes the op exactly. Undo and redo read the
//! history, which a client does not hold: their results always travel as bricks.

use loam_field::{BRICK_SAMPLES, EditOp, FieldSettings, Generator, SampleBox, SamplePos};

use crate::{BrickBox, Viewer};

/// Samples added around an op's extent besides the band: the redistancing shell, the
/// smoothing neighbours, and one for rounding.
const PAD_SAMPLES: f64 = 3.0;

fn to_i32(v: f64) -> i32 {
    v.clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i32
}

/// The box of bricks holding the samples within `[lo, hi]` metres per axis (a sample beyond
/// each end included), for `voxel_size` metres.
fn bricks_of_metres(lo: [f64; 3], hi: [f64; 3], voxel_size: f64) -> BrickBox {
    let s = |v: f64, up: bool| {
        let x = v / voxel_size;
        to_i32(if up { x.ceil() + 1.0 } else { x.floor() - 1.0 })
    };
    BrickBox {
        min: [0, 1, 2].map(|i| s(lo[i], false).div_euclid(BRICK_SAMPLES)),
        max: [0, 1, 2].map(|i| s(hi[i], true).div_euclid(BRICK_SAMPLES)),
    }
}

/// The bricks within `viewer.radius + margin_m` metres of the viewer along each axis: the
/// region a client with that viewer holds.
pub fn region_for(viewer: &Viewer, margin_m: f64, voxel_size: f64) -> BrickBox {
    let r = viewer.radius.max(0.0) + margin_m.max(0.0);
    let p = viewer.position;
    bricks_of_metres(p.map(|c| c - r), p.map(|c| c + r), voxel_size)
}

/// The bricks holding a box of samples.
pub fn bricks_of_samples(b: &SampleBox) -> BrickBox {
    let (lo, _) = b.min.brick();
    let (hi, _) = b.max.brick();
    BrickBox {
        min: [lo.x, lo.y, lo.z],
        max: [hi.x, hi.y, hi.z],
    }
}

fn norm(v: &[f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

/// A box of bricks holding every sample `op` may read or write in a field with `settings`
/// (a bound, not exact), or `None` for undo and redo, whose results depend on the history.
/// Meaningful for an op that passed validation (finite numbers).
pub fn op_reach(op: &EditOp, settings: &FieldSettings) -> Option<BrickBox> {
    let around = |c: &[f64; 3], r: f64| (c.map(|v| v - r), c.map(|v| v + r));
    let (lo, hi) = match op {
        EditOp::Sphere {
            center,
            radius,
            blend,
            ..
        } => around(center, radius + blend),
        EditOp::Cuboid {
            center,
            half_extents,
            blend,
            ..
        } => around(center, norm(half_extents) + blend),
        EditOp::Capsule {
            a,
            b,
            radius,
            blend,
            ..
        }
        | EditOp::Cylinder {
            a,
            b,
            radius,
            blend,
            ..
        } => {
            let r = radius + blend;
            (
                [0, 1, 2].map(|i| a[i].min(b[i]) - r),
                [0, 1, 2].map(|i| a[i].max(b[i]) + r),
            )
        }
        EditOp::Torus {
            center,
            major_radius,
            minor_radius,
            blend,
            ..
        } => around(center, major_radius + minor_radius + blend),
        EditOp::Raise { center, radius, .. }
        | EditOp::Lower { center, radius, .. }
        | EditOp::Smooth { center, radius, .. }
        | EditOp::Flatten { center, radius, .. }
        | EditOp::Noise { center, radius, .. }
        | EditOp::Paint { center, radius, .. } => around(center, *radius),
        EditOp::Undo { .. } | EditOp::Redo { .. } => return None,
    };
    let pad = settings.band() + PAD_SAMPLES * settings.voxel_size;
    Some(bricks_of_metres(
        lo.map(|v| v - pad),
        hi.map(|v| v + pad),
        settings.voxel_size,
    ))
}

/// BLAKE3 over the field settings and the generator's values at 256 fixed samples spread
/// over ±4096 samples: equal for the same generator and settings, different (in practice)
/// otherwise. About 256 generator samples of work.
pub fn generator_fingerprint(generator: &Generator, settings: &FieldSettings) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(&serde_json::to_vec(settings).expect("settings serialise"));
    let mut z = 0x5eed_u64;
    let mut next = || {
        // SplitMix64.
        z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut x = z;
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((x ^ (x >> 31)) % 8193) as i32 - 4096
    };
    for _ in 0..256 {
        let p = SamplePos::new(next(), next() / 16, next());
        let v = generator.sample(p, settings.voxel_size, settings.band());
        h.update(&v.to_bits().to_le_bytes());
    }
    *h.finalize().as_bytes()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use loam_field::{CaveSettings, CsgMode, Falloff, Field, NoiseTerrainSettings};

    use super::*;

    /// Every sample an op changes lies within [`op_reach`], for every kind, near brick
    /// borders, with blends, rotations and brushes that redistance.
    #[test]
    fn ops_change_nothing_beyond_their_reach() {
        let g = Generator::noise(
            &NoiseTerrainSettings::default(),
            &CaveSettings {
                enabled: false,
                ..Default::default()
            },
        )
        .unwrap();
        let settings = FieldSettings {
            voxel_size: 0.5,
            ..Default::default()
        };
        let mut field = Field::new(settings, Arc::new(g)).unwrap();
        let y = |f: &Field, x: f64, z: f64| f.generator().surface_height(x, z);
        let mut checked = 0;
        for i in 0..48 {
            let t = f64::from(i);
            let (x, z) = (15.7 + t * 0.37, -16.2 + t * 0.53);
            let c = [x, y(&field, x, z), z];
            let r = 0.8 + (t * 0.7) % 4.0;
            let op = match i % 11 {
                0 => EditOp::Sphere {
                    mode: CsgMode::Union,
                    center: c,
                    radius: r,
                    material: 2,
                    blend: 1.5,
                },
                1 => EditOp::Cuboid {
                    mode: CsgMode::Subtract,
                    center: c,
                    half_extents: [r, 0.5 * r, 1.5 * r],
                    rotation: [0.3, 0.2, 0.1, 0.9],
                    material: 1,
                    blend: 0.5,
                },
                2 => EditOp::Capsule {
                    mode: CsgMode::Union,
                    a: c,
                    b: [c[0] + r, c[1] + 2.0, c[2] - r],
                    radius: 0.7,
                    material: 3,
                    blend: 0.0,
                },
                3 => EditOp::Cylinder {
                    mode: CsgMode::Intersect,
                    a: c,
                    b: [c[0], c[1] + 3.0, c[2]],
                    radius: r,
                    material: 0,
                    blend: 0.8,
                },
                4 => EditOp::Torus {
                    mode: CsgMode::Union,
                    center: c,
                    axis: [0.2, 1.0, 0.1],
                    major_radius: r,
                    minor_radius: 0.6,
                    material: 4,
                    blend: 0.3,
                },
                5 => EditOp::Raise {
                    center: c,
                    radius: r,
                    strength: 0.5 * r,
                    falloff: Falloff::Smooth,
                },
                6 => EditOp::Lower {
                    center: c,
                    radius: r,
                    strength: 0.4 * r,
                    falloff: Falloff::Linear,
                },
                7 => EditOp::Smooth {
                    center: c,
                    radius: r,
                    strength: 1.0,
                    falloff: Falloff::Smooth,
                },
                8 => EditOp::Flatten {
                    center: c,
                    radius: r,
                    strength: 0.8,
                    falloff: Falloff::Smooth,
                    plane_point: [c[0], c[1] + 1.0, c[2]],
                    plane_normal: [0.3, 1.0, 0.0],
                },
                9 => EditOp::Noise {
                    center: c,
                    radius: r,
                    strength: 0.5 * r,
                    falloff: Falloff::Smooth,
                    seed: i,
                    wavelength: 2.0,
                },
                _ => EditOp::Paint {
                    center: c,
                    radius: r,
                    material: 7,
                    falloff: Falloff::Linear,
                    threshold: 0.1,
                },
            };
            let reach = op_reach(&op, &settings).unwrap();
            let out = field.apply(&op).unwrap();
            if let Some(b) = out.changed {
                let w = bricks_of_samples(&b);
                assert!(reach.contains_box(&w), "{op:?}: {w:?} outside {reach:?}");
                checked += 1;
            }
        }
        assert!(checked > 40, "only {checked} ops changed anything");
        assert_eq!(op_reach(&EditOp::Undo { stroke: 1 }, &settings), None);
    }

    #[test]
    fn region_covers_the_viewer_and_margin() {
        let v = Viewer {
            position: [0.5, -0.5, 40.0],
            radius: 10.0,
        };
        let b = region_for(&v, 0.0, 1.0);
        assert_eq!(b.min, [-1, -1, 0]);
        assert_eq!(b.max, [0, 0, 1]);
        let wide = region_for(&v, 32.0, 1.0);
        assert!(wide.contains_box(&b));
        assert_eq!(wide.min, [-2, -2, -1]);
    }
}
