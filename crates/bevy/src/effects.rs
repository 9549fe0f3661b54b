//! What happened in the world that can be seen and heard: a piece landing, a block breaking,
//! a block placed or chiselled, terrain dug. [`crate::dust`] puffs and [`crate::audio`]
//! sounds follow these messages.

use bevy::prelude::*;

/// Impact energy at which a landing's [`Effect::Land`] strength reaches 1, joules (a 1 t
/// piece at 10 m/s).
pub const FULL_STRENGTH_J: f32 = 50_000.0;

/// One thing that happened, at a world point.
#[derive(Message, Debug, Clone, Copy, PartialEq)]
pub enum Effect {
    /// A falling piece hit something faster than the impact speed.
    Land {
        /// Contact point, world metres.
        at: Vec3,
        /// Closing speed, m/s.
        speed: f32,
        /// The piece's mass, kg.
        mass_kg: f32,
        /// The colour of the block that hit (linear RGB).
        colour: [f32; 3],
    },
    /// A block broke (damage, the tool, or off a piece).
    Break {
        /// Its centre, world metres.
        at: Vec3,
        /// Its edge, metres.
        edge: f32,
        /// Its colour (linear RGB).
        colour: [f32; 3],
    },
    /// A block was placed.
    Place {
        /// Its centre, world metres.
        at: Vec3,
    },
    /// A block's shape was chiselled.
    Chisel {
        /// The point chiselled, world metres.
        at: Vec3,
    },
    /// Terrain was dug (or built, raised, lowered: any brush that moved material).
    Dig {
        /// The brush centre, world metres.
        at: Vec3,
        /// The brush radius, metres.
        radius: f32,
        /// The colour of what was moved (linear RGB).
        colour: [f32; 3],
    },
}

/// Strength in `[0, 1]` of a landing: `∛(E / 50 kJ)` with `E = ½ m v²` (clamped), so a 100 kg
/// piece at 3 m/s gives 0.21 and a tonne at 10 m/s gives 1.
pub fn land_strength(speed: f32, mass_kg: f32) -> f32 {
    let e = 0.5 * mass_kg.max(0.0) * speed * speed;
    if e.is_finite() {
        (e / FULL_STRENGTH_J).cbrt().clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// Strength in `[0, 1]` of a dig of `radius` metres (a 6 m brush or more gives 1).
pub fn dig_strength(radius: f32) -> f32 {
    if radius.is_finite() {
        (radius / 6.0).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// Linear RGB of an sRGB colour.
pub fn linear(srgb: [u8; 3]) -> [f32; 3] {
    let c = Color::srgb_u8(srgb[0], srgb[1], srgb[2]).to_linear();
    [c.red, c.green, c.blue]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn landing_strength_follows_energy() {
        assert_eq!(land_strength(0.0, 1000.0), 0.0);
        assert!((land_strength(10.0, 1000.0) - 1.0).abs() < 1e-6);
        // E = ½·100·9 = 450 J → ∛(0.009) = 0.2080
        assert!((land_strength(3.0, 100.0) - 0.20801).abs() < 1e-4);
        assert_eq!(land_strength(100.0, 1e6), 1.0);
        assert_eq!(land_strength(f32::NAN, 10.0), 0.0);
        assert_eq!(dig_strength(3.0), 0.5);
        assert_eq!(dig_strength(f32::INFINITY), 0.0);
    }
}
