//! The field hash: one definition everywhere (docs/architecture.md, "Field hash").
//!
//! BLAKE3 over the bricks that differ from the generator, in ascending `(z, y, x)` brick order,
//! each as its brick coordinate (three i32, little-endian), then its samples as f32 bit
//! patterns (−0.0 written as +0.0), then its material ids. Printed as `field-hash: <hex>`.

use crate::coords::BrickKey;
use crate::field::Field;

/// Entries of the remembered answers beyond the field's brick count that make
/// [`Field::hash_region`] drop those of bricks that are gone.
const STALE_SLACK: usize = 1024;

/// A 32-byte BLAKE3 field hash. `Display` writes 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct FieldHash(pub [u8; 32]);

impl std::fmt::Display for FieldHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl std::fmt::Debug for FieldHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FieldHash({self})")
    }
}

fn canonical_bits(v: f32) -> u32 {
    if v == 0.0 { 0 } else { v.to_bits() }
}

impl Field {
    /// The field hash over every brick.
    pub fn hash(&self) -> FieldHash {
        self.hash_region(
            BrickKey::new(i32::MIN, i32::MIN, i32::MIN),
            BrickKey::new(i32::MAX, i32::MAX, i32::MAX),
        )
    }

    /// The field hash over the bricks with `min ≤ key ≤ max` on every axis.
    ///
    /// Cost: the bricks [`Field::bricks_in`] visits are visited, and the samples of those
    /// that differ from the generator hashed. Whether a brick differs is
    /// remembered by the field (shared with its clones) and checked again cheaply after an
    /// edit; only a brick new to the field, or one an edit may have made equal to the
    /// generator, can cost generating it again (about 2 ms on noise terrain).
    pub fn hash_region(&self, min: BrickKey, max: BrickKey) -> FieldHash {
        let mut h = blake3::Hasher::new();
        let mut bytes = Vec::new();
        for (key, brick) in self.bricks_in(min, max) {
            if !self.differs_from_generator(key, brick) {
                continue;
            }
            for c in [key.x, key.y, key.z] {
                h.update(&c.to_le_bytes());
            }
            let (quant, samples) = (brick.quant(), brick.samples());
            bytes.clear();
            for &q in samples.quantized() {
                bytes.extend_from_slice(&canonical_bits(quant.value(q)).to_le_bytes());
            }
            h.update(&bytes);
            h.update(samples.materials());
        }
        self.forget_gone_bricks();
        FieldHash(*h.finalize().as_bytes())
    }

    /// Drops the remembered answers of bricks the field no longer holds, once they are
    /// [`STALE_SLACK`] more than its bricks.
    fn forget_gone_bricks(&self) {
        let mut differs = self.differs.lock().expect("not poisoned");
        if differs.len() > self.bricks.len() + STALE_SLACK {
            differs.retain(|key, (id, _)| self.bricks.get(key).is_some_and(|b| b.id() == *id));
        }
    }
}
