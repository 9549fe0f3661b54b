//! Which bricks differ from the generator: the bricks the field hash covers (an edit undone,
//! or dug and built back to the same samples, leaves a brick equal to the generator).
//!
//! Deciding it from scratch generates the brick again (about 2 ms on noise terrain) and
//! compares all 32³ samples. A field remembers, per brick key, the id of the brick it last
//! decided and, if that brick differed, one **witness**: a sample where it did, with the
//! generator's value there. A brick's samples never change (an edit makes a new brick with a
//! new id), and the generator never changes, so:
//! - the same id gets the same answer;
//! - a new brick at the key whose sample at the witness still differs from the generator's
//!   value differs too (one read), which is the common case of one more edit nearby;
//! - otherwise a lattice of every 4th sample is compared (1/64 of the generator's work), and
//!   only a brick equal there is generated whole.
//!
//! Writes keep the answers up to date where they can do so for free
//! ([`Field::note_written`]): a brick just made from the generator, or known equal to it,
//! differs after a write exactly where a sample changed, and the old value there is the
//! generator's; a known witness the write left differing stays one. So a field's bricks made
//! by its own ops are hashed without generating any of them again.

use crate::brick::{Brick, GENERATOR_MATERIAL};
use crate::coords::{BRICK_SAMPLES, BRICK_VOLUME, BrickKey, SamplePos};
use crate::field::Field;
use crate::quant::Quant;

/// Samples between the lattice points (per axis) compared before generating a whole brick.
const PROBE_STRIDE: i32 = 4;

/// A sample where a brick differs from the generator: its local position and the bits of the
/// generator's value there (the generator's material is always [`GENERATOR_MATERIAL`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Witness {
    local: [i32; 3],
    generator_bits: u32,
}

impl Witness {
    /// Whether `brick` differs from the generator at this witness.
    fn holds(self, brick: &Brick) -> bool {
        brick.value(self.local).to_bits() != self.generator_bits
            || brick.material(self.local) != GENERATOR_MATERIAL
    }
}

/// What is known of a brick before a write: `Some(None)` equal to the generator, `Some(Some(w))`
/// differing at `w`, `None` unknown.
pub(crate) type Before = Option<Option<Witness>>;

/// What a field remembers of a brick key: the id of the brick decided, and its witness if it
/// differs from the generator (`None`: equal).
pub(crate) type Decided = (u64, Option<Witness>);

impl Field {
    /// Whether `brick`, held at `key`, has other samples or materials than the generator
    /// gives there (see the module docs for how it is decided and remembered).
    pub(crate) fn differs_from_generator(&self, key: BrickKey, brick: &Brick) -> bool {
        let band = self.settings.band();
        if brick.quant() != Quant::new(band) {
            return true; // not a brick of this field's grid; not remembered
        }
        let known = self
            .differs
            .lock()
            .expect("not poisoned")
            .get(&key)
            .copied();
        let witness = match known {
            Some((id, w)) if id == brick.id() => return w.is_some(),
            Some((_, Some(w))) if w.holds(brick) => Some(w),
            _ => self
                .on_lattice(key, brick)
                .or_else(|| self.anywhere(key, brick)),
        };
        self.differs
            .lock()
            .expect("not poisoned")
            .insert(key, (brick.id(), witness));
        witness.is_some()
    }

    /// What the field knows of `old`, about to be written at `key` (`generated`: it was just
    /// made from the generator).
    pub(crate) fn known_before(&self, key: BrickKey, old: &Brick, generated: bool) -> Before {
        if generated {
            return Some(None);
        }
        match self.differs.lock().expect("not poisoned").get(&key) {
            Some(&(id, w)) if id == old.id() => Some(w),
            _ => None,
        }
    }

    /// Records what is known of `new`, written at `key` over a brick known as `before`;
    /// `first_change` is the first sample the write changed, as `(index, old grid index, old
    /// material)`. Forgets the key when nothing is known.
    pub(crate) fn note_written(
        &self,
        key: BrickKey,
        new: &Brick,
        before: Before,
        first_change: Option<(usize, i16, u8)>,
    ) {
        let witness = match (before, first_change) {
            // Equal to the generator before: the old value is the generator's.
            (Some(None), Some((i, q, _))) => Some(Some(Witness {
                local: local_of(i),
                generator_bits: new.quant().value(q).to_bits(),
            })),
            (Some(None), None) => Some(None),
            (Some(Some(w)), _) if w.holds(new) => Some(Some(w)),
            _ => None,
        };
        let mut differs = self.differs.lock().expect("not poisoned");
        match witness {
            Some(w) => differs.insert(key, (new.id(), w)),
            None => differs.remove(&key),
        };
    }

    /// The first lattice point `2 + PROBE_STRIDE · i` (local samples, per axis) where `brick`
    /// differs from the generator.
    fn on_lattice(&self, key: BrickKey, brick: &Brick) -> Option<Witness> {
        let n = (BRICK_SAMPLES / PROBE_STRIDE) as usize;
        let lattice = |i: usize| 2 + PROBE_STRIDE * i as i32;
        let first = key.min_sample();
        let first = SamplePos::new(first.x + 2, first.y + 2, first.z + 2);
        let mut want = vec![0.0f32; n * n * n];
        let (vs, band) = (self.settings.voxel_size, self.settings.band());
        self.generator
            .fill_strided(first, PROBE_STRIDE, [n, n, n], vs, band, &mut want);
        let read = brick.read();
        let mut i = 0;
        for z in 0..n {
            for y in 0..n {
                for x in 0..n {
                    let local = [lattice(x), lattice(y), lattice(z)];
                    let generator_bits = want[i].to_bits();
                    // Equal grid indices are equal values: the grid has one bit pattern per
                    // value, never −0.
                    if read.value(local).to_bits() != generator_bits
                        || read.material(local) != GENERATOR_MATERIAL
                    {
                        return Some(Witness {
                            local,
                            generator_bits,
                        });
                    }
                    i += 1;
                }
            }
        }
        None
    }

    /// The first sample (x fastest) where `brick` differs from the generator, found by
    /// generating the whole brick.
    fn anywhere(&self, key: BrickKey, brick: &Brick) -> Option<Witness> {
        let (vs, band) = (self.settings.voxel_size, self.settings.band());
        let generated = Brick::generate(&self.generator, key, vs, band).samples();
        let samples = brick.samples();
        let i = (0..BRICK_VOLUME)
            .find(|&i| samples.q[i] != generated.q[i] || samples.m[i] != generated.m[i])?;
        Some(Witness {
            local: local_of(i),
            generator_bits: Quant::new(band).value(generated.q[i]).to_bits(),
        })
    }
}

/// The local sample `[x, y, z]` of index `i` in a brick's arrays (x fastest).
fn local_of(i: usize) -> [i32; 3] {
    let n = BRICK_SAMPLES as usize;
    [(i % n) as i32, (i / n % n) as i32, (i / (n * n)) as i32]
}
