//! Writing a box of samples as given: how a client takes the samples of an op it cannot
//! compute (it reads beyond what the client holds) from the server that did.

use std::collections::BTreeMap;

use crate::brick::{MaterialId, brick_index};
use crate::coords::{BrickKey, SampleBox, SamplePos};
use crate::edit::{EditOutcome, generate_each};
use crate::field::Field;
use crate::field::SampleReader;
use crate::quant::QMAX;

/// The most samples one [`Field::write_quantized`] takes: one brick's worth times 64
/// (a box of 128³ samples).
pub const MAX_WRITE_SAMPLES: u64 = 1 << 21;

/// A box of samples could not be written; the field is unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SampleWriteError {
    /// The box has `min > max` on an axis, or more than [`MAX_WRITE_SAMPLES`] samples.
    #[error("a box of samples from {min:?} to {max:?} is empty or too large")]
    BadBox {
        /// The box's lowest sample.
        min: [i32; 3],
        /// The box's highest sample.
        max: [i32; 3],
    },
    /// The grid indices or materials are not one per sample of the box.
    #[error("{samples} samples in the box, but {indices} grid indices and {materials} materials")]
    Length {
        /// Samples in the box.
        samples: u64,
        /// Grid indices given.
        indices: usize,
        /// Material ids given.
        materials: usize,
    },
    /// A grid index below `−QMAX` (−32768 is off the grid).
    #[error("grid index {0} is off the grid (±32767)")]
    OffGrid(i16),
}

impl Field {
    /// Sets every sample of `region` to grid index `q` and material `materials` (one each, x
    /// fastest, then y, then z). Only samples that change are written, and a brick is
    /// created (from the generator) the first time one of its samples changes, as
    /// [`Field::apply`] does; the outcome counts them.
    ///
    /// For a client taking an op's changed samples from the server: the samples of a brick
    /// outside `region` must already be the server's (the client held the brick exactly
    /// before the op), or the field stops being a replay of the server's log.
    ///
    /// # Errors
    /// [`SampleWriteError`] for an empty or oversized box, lengths that do not match it, or
    /// an index off the grid; the field is unchanged then.
    pub fn write_quantized(
        &mut self,
        region: SampleBox,
        q: &[i16],
        materials: &[MaterialId],
    ) -> Result<EditOutcome, SampleWriteError> {
        let (lo, hi) = (region.min.to_array(), region.max.to_array());
        let dims: [u64; 3] =
            std::array::from_fn(|a| (i64::from(hi[a]) - i64::from(lo[a]) + 1).max(0) as u64);
        let samples = dims[0].saturating_mul(dims[1]).saturating_mul(dims[2]);
        if samples == 0 || samples > MAX_WRITE_SAMPLES {
            return Err(SampleWriteError::BadBox { min: lo, max: hi });
        }
        if q.len() as u64 != samples || materials.len() as u64 != samples {
            return Err(SampleWriteError::Length {
                samples,
                indices: q.len(),
                materials: materials.len(),
            });
        }
        if let Some(&bad) = q.iter().find(|&&x| x < -QMAX) {
            return Err(SampleWriteError::OffGrid(bad));
        }
        let quant = crate::Quant::new(self.settings().band());
        let mut reader = SampleReader::new(self);
        let mut out = EditOutcome::default();
        let mut per_brick: BTreeMap<BrickKey, Vec<(usize, i16, MaterialId)>> = BTreeMap::new();
        let mut i = 0;
        for z in lo[2]..=hi[2] {
            for y in lo[1]..=hi[1] {
                for x in lo[0]..=hi[0] {
                    let p = SamplePos::new(x, y, z);
                    let (qi, mi) = (q[i], materials[i]);
                    i += 1;
                    if reader.sample(p).to_bits() == quant.value(qi).to_bits()
                        && reader.material(p) == mi
                    {
                        continue;
                    }
                    let (key, local) = p.brick();
                    per_brick
                        .entry(key)
                        .or_default()
                        .push((brick_index(local), qi, mi));
                    out.samples_changed += 1;
                    match &mut out.changed {
                        Some(b) => b.include(p),
                        None => out.changed = Some(SampleBox::point(p)),
                    }
                }
            }
        }
        out.bricks_created = self.commit_indices(per_brick, generate_each);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::{CsgMode, EditOp, FieldSettings, Generator, NoiseTerrainSettings};

    fn field() -> Field {
        let g = Generator::noise(&NoiseTerrainSettings::default(), &Default::default()).unwrap();
        Field::new(FieldSettings::default(), Arc::new(g)).unwrap()
    }

    fn dig(center: [f64; 3]) -> EditOp {
        EditOp::Sphere {
            mode: CsgMode::Subtract,
            center,
            radius: 2.5,
            material: 0,
            blend: 0.0,
        }
    }

    /// The samples of `b` as grid indices and materials.
    fn read(f: &Field, b: SampleBox) -> (Vec<i16>, Vec<MaterialId>) {
        let quant = crate::Quant::new(f.settings().band());
        let (lo, hi) = (b.min.to_array(), b.max.to_array());
        let (mut q, mut m) = (Vec::new(), Vec::new());
        for z in lo[2]..=hi[2] {
            for y in lo[1]..=hi[1] {
                for x in lo[0]..=hi[0] {
                    let p = SamplePos::new(x, y, z);
                    q.push(quant.exact_index(f.sample(p)).expect("on the grid"));
                    m.push(f.material(p));
                }
            }
        }
        (q, m)
    }

    #[test]
    fn an_ops_changed_box_written_elsewhere_gives_the_same_field() {
        // A dig across a brick corner (bricks of 32 samples meet at 0): the changed box
        // spans several bricks, none of which exists in the copy yet.
        let mut server = field();
        let mut client = field();
        let out = server.apply(&dig([0.3, 1.2, -0.4])).unwrap();
        let changed = out.changed.unwrap();
        assert!(out.bricks_created > 1, "{out:?}");
        let (q, m) = read(&server, changed);
        let wrote = client.write_quantized(changed, &q, &m).unwrap();
        assert_eq!(wrote, out);
        assert_eq!(client.hash(), server.hash());
        assert_eq!(client.brick_count(), server.brick_count());
        // A second op over the first, written again: still equal.
        let out = server.apply(&dig([1.0, 0.5, 0.5])).unwrap();
        let changed = out.changed.unwrap();
        let (q, m) = read(&server, changed);
        assert_eq!(client.write_quantized(changed, &q, &m).unwrap(), out);
        assert_eq!(client.hash(), server.hash());
        assert_eq!(client.brick_count(), server.brick_count());
        // Written again: nothing changes.
        let again = client.write_quantized(changed, &q, &m).unwrap();
        assert_eq!((again.changed, again.samples_changed), (None, 0));
    }

    #[test]
    fn bad_writes_are_refused_and_change_nothing() {
        let mut f = field();
        let before = f.hash();
        let b = SampleBox {
            min: SamplePos::new(0, 0, 0),
            max: SamplePos::new(1, 1, 1),
        };
        assert_eq!(
            f.write_quantized(b, &[0; 7], &[0; 8]),
            Err(SampleWriteError::Length {
                samples: 8,
                indices: 7,
                materials: 8
            })
        );
        assert_eq!(
            f.write_quantized(b, &[0, 0, 0, i16::MIN, 0, 0, 0, 0], &[0; 8]),
            Err(SampleWriteError::OffGrid(i16::MIN))
        );
        let empty = SampleBox {
            min: SamplePos::new(0, 2, 0),
            max: SamplePos::new(1, 1, 1),
        };
        assert!(matches!(
            f.write_quantized(empty, &[], &[]),
            Err(SampleWriteError::BadBox { .. })
        ));
        let huge = SampleBox {
            min: SamplePos::new(0, 0, 0),
            max: SamplePos::new(128, 127, 127),
        };
        assert!(matches!(
            f.write_quantized(huge, &[], &[]),
            Err(SampleWriteError::BadBox { .. })
        ));
        assert_eq!(f.hash(), before);
        assert_eq!(f.brick_count(), 0);
    }
}
