//! Damage: what an impact does to a held block.
//!
//! An impact of a piece of mass `m` closing at speed `v` on a held block gives it the
//! piece's kinetic energy along the contact normal, `E = ½ · m · v²` joules (the held block
//! does not move, so all of it goes into the contact). Damage adds up over impacts; the
//! block breaks when its damage reaches `strength · volume` (the material's strength in
//! J/m³ times the block's volume in m³; the chisel shape is not counted).
//!
//! Only each piece's hardest impact of a frame deals damage (the impact rule), and only
//! impacts above the impact speed (2 m/s by default) count: a block set down gently does
//! nothing, and a piece resting on a block does not wear it down.

use crate::block::BlockSize;
use crate::material::Material;

/// Kinetic energy of `mass` kg closing at `speed` m/s: `½ · m · v²`, joules.
pub fn impact_energy(mass: f32, speed: f32) -> f32 {
    0.5 * mass * speed * speed
}

/// The damage, joules, at which a block of `material` and `size` breaks:
/// `strength · volume`.
pub fn break_energy(material: &Material, size: BlockSize) -> f32 {
    material.strength * size.volume() as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MaterialTable;

    #[test]
    fn energies() {
        let t = MaterialTable::standard();
        assert_eq!(impact_energy(2400.0, 2.0), 4800.0);
        let glass = t.get(MaterialTable::GLASS).unwrap();
        assert_eq!(break_energy(glass, BlockSize::Full), 5000.0);
        assert_eq!(break_energy(glass, BlockSize::Half), 625.0);
    }
}
