//! Strided fills: the samples of a coarse level of detail (issue 11). A level-`k` chunk reads
//! the level-0 field at every `2^k`-th sample, so an edit shows at every level whose lattice
//! holds one of the samples it changed.

use crate::brick::MaterialId;
use crate::coords::{BRICK_SAMPLES, BrickKey, SamplePos};
use crate::field::Field;

impl Field {
    /// Fills the lattice `min + stride · i`, `i` in the box of `dims` points (x fastest, then
    /// y, then z), with the field's values and materials: bricks where an edit made one, the
    /// generator elsewhere. Equal sample for sample to [`Field::sample`] and
    /// [`Field::material`] at those positions (bit for bit); with `stride` 1 it equals
    /// [`Field::fill`].
    ///
    /// # Panics
    /// If `stride < 1`, the slices do not hold `dims[0] · dims[1] · dims[2]` entries, or a
    /// lattice point lies outside the `i32` sample range.
    pub fn fill_strided(
        &self,
        min: SamplePos,
        stride: i32,
        dims: [usize; 3],
        values: &mut [f32],
        materials: &mut [MaterialId],
    ) {
        let n = dims.iter().product::<usize>();
        assert_eq!(values.len(), n, "values length");
        assert_eq!(materials.len(), n, "materials length");
        if n == 0 {
            return;
        }
        let s = self.settings();
        self.generator()
            .fill_strided(min, stride, dims, s.voxel_size, s.band(), values);
        materials.fill(crate::brick::GENERATOR_MATERIAL);
        if self.brick_count() == 0 {
            return;
        }
        // Per axis: the lattice indices that fall in each brick coordinate (ascending runs).
        let runs = |m: i32, d: usize| -> Vec<(i32, usize, usize)> {
            let mut out: Vec<(i32, usize, usize)> = Vec::new();
            for i in 0..d {
                let p = m + stride * i as i32;
                let b = p.div_euclid(BRICK_SAMPLES);
                match out.last_mut() {
                    Some(r) if r.0 == b => r.2 = i + 1,
                    _ => out.push((b, i, i + 1)),
                }
            }
            out
        };
        let (rx, ry, rz) = (
            runs(min.x, dims[0]),
            runs(min.y, dims[1]),
            runs(min.z, dims[2]),
        );
        for &(bz, z0, z1) in &rz {
            for &(by, y0, y1) in &ry {
                for &(bx, x0, x1) in &rx {
                    let Some(brick) = self.brick(BrickKey::new(bx, by, bz)) else {
                        continue;
                    };
                    let read = brick.read();
                    let b0 = [bx, by, bz].map(|c| c * BRICK_SAMPLES);
                    for k in z0..z1 {
                        let lz = min.z + stride * k as i32 - b0[2];
                        for j in y0..y1 {
                            let ly = min.y + stride * j as i32 - b0[1];
                            for i in x0..x1 {
                                let lx = min.x + stride * i as i32 - b0[0];
                                let at = i + dims[0] * (j + dims[1] * k);
                                values[at] = read.value([lx, ly, lz]);
                                materials[at] = read.material([lx, ly, lz]);
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::{
        CaveSettings, CsgMode, EditOp, Field, FieldSettings, Generator, NoiseTerrainSettings,
        SamplePos,
    };

    fn field() -> Field {
        let g = Generator::noise(&NoiseTerrainSettings::default(), &CaveSettings::default())
            .expect("generator");
        Field::new(FieldSettings::default(), Arc::new(g)).expect("field")
    }

    /// Every strided sample equals the level-0 sample at its position, bit for bit, with and
    /// without edits, for strides 1 to 16 and negative corners.
    #[test]
    fn strided_fill_equals_level0_samples_bit_for_bit() {
        let mut f = field();
        let h = f.generator().surface_height(3.0, -7.0);
        for (c, r) in [([3.0, h, -7.0], 6.5), ([-20.0, h - 3.0, 11.0], 4.0)] {
            let op = EditOp::Sphere {
                mode: CsgMode::Subtract,
                center: c,
                radius: r,
                material: 0,
                blend: 0.0,
            };
            f.apply(&op).expect("dig");
        }
        let op = EditOp::Sphere {
            mode: CsgMode::Union,
            center: [10.0, h + 2.0, 0.0],
            radius: 3.0,
            material: 5,
            blend: 0.0,
        };
        f.apply(&op).expect("build");
        assert!(f.brick_count() > 0);
        let mut checked_edited = 0;
        for stride in [1, 2, 3, 4, 8, 16] {
            let dims = [9usize, 11, 7];
            let min = SamplePos::new(-37, h.floor() as i32 - 5 * stride, -40);
            let n = dims.iter().product::<usize>();
            let (mut v, mut m) = (vec![0.0f32; n], vec![0u8; n]);
            f.fill_strided(min, stride, dims, &mut v, &mut m);
            for k in 0..dims[2] {
                for j in 0..dims[1] {
                    for i in 0..dims[0] {
                        let p = SamplePos::new(
                            min.x + stride * i as i32,
                            min.y + stride * j as i32,
                            min.z + stride * k as i32,
                        );
                        let at = i + dims[0] * (j + dims[1] * k);
                        assert_eq!(
                            v[at].to_bits(),
                            f.sample(p).to_bits(),
                            "{p:?} stride {stride}"
                        );
                        assert_eq!(m[at], f.material(p), "{p:?}");
                        if f.brick(p.brick().0).is_some() {
                            checked_edited += 1;
                        }
                    }
                }
            }
        }
        assert!(checked_edited > 100, "{checked_edited} samples in bricks");
    }
}
