//! Applying ops to the field: only samples within reach change, bricks are made on first
//! touch, and the box of changed samples is returned.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::brick::{Brick, MaterialId, brick_index};
use crate::coords::{BrickKey, SampleBox, SamplePos, world_to_sample_ceil, world_to_sample_floor};
use crate::field::{Field, for_bricks_in};
use crate::generator::{Generator, clamp_band};
use crate::op::{CsgMode, EditError, EditOp};

/// What an applied op changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EditOutcome {
    /// The smallest box holding every changed sample, or `None` if nothing changed.
    pub changed: Option<SampleBox>,
    /// Samples whose value (or material) changed.
    pub samples_changed: u64,
    /// Bricks created by this op.
    pub bricks_created: u32,
}

/// A sample write: index in its brick, new value, new material.
type SampleChange = (usize, f32, MaterialId);

/// A brick an op changes: its key, its writes, and the generated brick if it is new.
type TouchedBrick = (BrickKey, Vec<SampleChange>, Option<Brick>);

/// The new value and material of one sample under a sphere op, or `None` if it stays.
///
/// `dist` is the sample's distance to the centre in metres. The shape is clamped to the band
/// before the CSG, which equals clamping after it, since `old` is already in `±band`.
#[inline]
fn sphere_sample(
    old: f32,
    old_material: MaterialId,
    dist: f64,
    radius: f64,
    mode: CsgMode,
    material: MaterialId,
    band: f64,
) -> Option<(f32, MaterialId)> {
    let (new, m) = match mode {
        CsgMode::Union => {
            let s = clamp_band(dist - radius, band);
            if s < old {
                (s, material)
            } else {
                (old, old_material)
            }
        }
        CsgMode::Subtract => {
            let s = clamp_band(radius - dist, band);
            if s > old {
                (s, old_material)
            } else {
                (old, old_material)
            }
        }
    };
    (new.to_bits() != old.to_bits()).then_some((new, m))
}

impl Field {
    /// Applies `op`. Only samples within the op's reach (its extent plus the band) whose value
    /// changes are written; a brick is created (filled from the generator) the first time a
    /// sample of it changes. Snapshots (clones) taken before keep reading the old values.
    ///
    /// # Errors
    /// [`EditError`] for NaN or infinite numbers, a radius ≤ 0 or above
    /// `max_edit_radius`, or a reach outside the sample range; the field is then unchanged.
    pub fn apply(&mut self, op: &EditOp) -> Result<EditOutcome, EditError> {
        self.apply_with(op, |generator, keys, vs, band| {
            keys.iter()
                .map(|&k| Brick::generate(generator, k, vs, band))
                .collect()
        })
    }

    /// [`Field::apply`], with the bricks the op may create made by `generate(generator, keys,
    /// voxel_size, band)`, which must return [`Brick::generate`] of each key, in order — on
    /// several threads, say (bricks are generated before any sample is written, so a caller
    /// with threads can spread the op's heaviest part over them).
    ///
    /// # Errors
    /// As [`Field::apply`].
    ///
    /// # Panics
    /// If `generate` returns a different number of bricks than keys.
    pub fn apply_with(
        &mut self,
        op: &EditOp,
        generate: impl FnOnce(&Generator, &[BrickKey], f64, f64) -> Vec<Brick>,
    ) -> Result<EditOutcome, EditError> {
        op.validate(self.settings.max_edit_radius)?;
        match *op {
            EditOp::Sphere {
                mode,
                center,
                radius,
                material,
            } => self.apply_sphere(mode, center, radius, material, generate),
        }
    }

    fn apply_sphere(
        &mut self,
        mode: CsgMode,
        c: [f64; 3],
        radius: f64,
        material: MaterialId,
        generate: impl FnOnce(&Generator, &[BrickKey], f64, f64) -> Vec<Brick>,
    ) -> Result<EditOutcome, EditError> {
        let vs = self.settings.voxel_size;
        let band = self.settings.band();
        let reach = radius + band;
        let axis = |i: usize| -> Result<(i32, i32), EditError> {
            let err = |_| EditError::OutOfRange { center: c };
            Ok((
                world_to_sample_ceil(c[i] - reach, vs).map_err(err)?,
                world_to_sample_floor(c[i] + reach, vs).map_err(err)?,
            ))
        };
        let ((x0, x1), (y0, y1), (z0, z1)) = (axis(0)?, axis(1)?, axis(2)?);
        let mut out = EditOutcome::default();
        if x0 > x1 || y0 > y1 || z0 > z1 {
            return Ok(out);
        }
        let region = SampleBox {
            min: SamplePos::new(x0, y0, z0),
            max: SamplePos::new(x1, y1, z1),
        };
        let samples = region.volume();
        if samples > self.settings.max_edit_samples {
            return Err(EditError::TooManySamples {
                samples,
                max: self.settings.max_edit_samples,
            });
        }
        // Bricks the op may create, generated up front (by the caller's `generate`).
        let mut new_keys = Vec::new();
        for_bricks_in(region, |key, sub| {
            if !self.bricks.contains_key(&key) && !self.generator_cannot_change(key, sub, mode) {
                new_keys.push(key);
            }
        });
        let made = generate(&self.generator, &new_keys, vs, band);
        assert_eq!(made.len(), new_keys.len(), "one generated brick per key");
        let mut made: BTreeMap<BrickKey, Brick> = new_keys.into_iter().zip(made).collect();
        let mut changes: Vec<SampleChange> = Vec::new();
        let mut touched: Vec<TouchedBrick> = Vec::new();
        for_bricks_in(region, |key, sub| {
            let existing = self.bricks.get(&key).cloned();
            let generated = match existing {
                Some(_) => None,
                None => match made.remove(&key) {
                    Some(b) => Some(b),
                    None => return, // the generator's samples there cannot change
                },
            };
            let base: &Brick = existing
                .as_deref()
                .or(generated.as_ref())
                .expect("one of the two");
            let b0 = key.min_sample();
            changes.clear();
            for z in sub.min.z..=sub.max.z {
                let dz = f64::from(z) * vs - c[2];
                for y in sub.min.y..=sub.max.y {
                    let dy = f64::from(y) * vs - c[1];
                    for x in sub.min.x..=sub.max.x {
                        let dx = f64::from(x) * vs - c[0];
                        let dist = (dx * dx + dy * dy + dz * dz).sqrt();
                        if dist > reach {
                            continue;
                        }
                        let i = brick_index([x - b0.x, y - b0.y, z - b0.z]);
                        let (old, old_m) = (base.values()[i], base.materials()[i]);
                        if let Some((v, m)) =
                            sphere_sample(old, old_m, dist, radius, mode, material, band)
                        {
                            changes.push((i, v, m));
                            let p = SamplePos::new(x, y, z);
                            match &mut out.changed {
                                Some(b) => b.include(p),
                                None => out.changed = Some(SampleBox::point(p)),
                            }
                        }
                    }
                }
            }
            if !changes.is_empty() {
                touched.push((key, std::mem::take(&mut changes), generated));
            }
        });
        // Write phase: nothing above has touched the field, so an early return leaves it as is.
        if !touched.is_empty() {
            let bricks = Arc::make_mut(&mut self.bricks);
            for (key, list, generated) in touched {
                out.samples_changed += list.len() as u64;
                let slot = match generated {
                    Some(b) => {
                        out.bricks_created += 1;
                        let cols = Arc::make_mut(&mut self.columns);
                        let e = cols.entry((key.x, key.z)).or_insert((key.y, key.y));
                        *e = (e.0.min(key.y), e.1.max(key.y));
                        bricks.entry(key).or_insert(Arc::new(b))
                    }
                    None => bricks.get_mut(&key).expect("existing brick"),
                };
                let brick = Arc::make_mut(slot);
                for (i, v, m) in list {
                    brick.set(i, v, m);
                }
            }
        }
        Ok(out)
    }

    /// Whether the generator's samples in `sub` of brick `key` are all `+band` (dig cannot
    /// change air) or all `−band` (build cannot change solid), from the column bounds alone.
    fn generator_cannot_change(&self, key: BrickKey, sub: SampleBox, mode: CsgMode) -> bool {
        let vs = self.settings.voxel_size;
        let b0 = key.min_sample();
        let x = [f64::from(b0.x) * vs, f64::from(b0.x + 31) * vs];
        let z = [f64::from(b0.z) * vs, f64::from(b0.z + 31) * vs];
        let bounds = self.generator.column_bounds(x, z, self.settings.band());
        match mode {
            CsgMode::Subtract => f64::from(sub.min.y) * vs > bounds.air_above,
            CsgMode::Union => f64::from(sub.max.y) * vs < bounds.solid_below,
        }
    }
}
