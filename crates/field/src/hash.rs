//! The field hash: one definition everywhere (DESIGN.md, "Field hash").
//!
//! BLAKE3 over the bricks that differ from the generator, in ascending `(z, y, x)` brick order,
//! each as its brick coordinate (three i32, little-endian), then its samples as f32 bit
//! patterns (−0.0 written as +0.0), then its material ids. Printed as `field-hash: <hex>`.

use crate::brick::Brick;
use crate::coords::BrickKey;
use crate::field::Field;

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
    pub fn hash_region(&self, min: BrickKey, max: BrickKey) -> FieldHash {
        let mut h = blake3::Hasher::new();
        let (vs, band) = (self.settings.voxel_size, self.settings.band());
        for (key, brick) in self.bricks() {
            let inside = (min.x..=max.x).contains(&key.x)
                && (min.y..=max.y).contains(&key.y)
                && (min.z..=max.z).contains(&key.z);
            // Bricks hold grid indices: equal indices are equal values (the grid has one bit
            // pattern per value, never −0).
            if !inside || **brick == Brick::generate(&self.generator, key, vs, band) {
                continue;
            }
            for c in [key.x, key.y, key.z] {
                h.update(&c.to_le_bytes());
            }
            let values = brick.values();
            let mut bytes = Vec::with_capacity(values.len() * 4);
            for v in values {
                bytes.extend_from_slice(&canonical_bits(v).to_le_bytes());
            }
            h.update(&bytes);
            h.update(&brick.materials());
        }
        FieldHash(*h.finalize().as_bytes())
    }
}
