//! Materials: colour, density and strength of what blocks are made of.

use serde::{Deserialize, Serialize};

use crate::error::BlockError;

/// A material's index in a [`MaterialTable`].
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct MaterialId(pub u8);

/// What a block is made of.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Material {
    /// A short name ("stone").
    pub name: String,
    /// Base colour, sRGB.
    pub colour: [u8; 3],
    /// Density, kg/m³ (> 0). A block's mass is its volume times this.
    pub density: f32,
    /// Strength, J/m³ (> 0): a block breaks once the impact energy it has taken reaches
    /// this times its volume (see `crate::damage`).
    pub strength: f32,
}

/// The materials of a world, indexed by [`MaterialId`] (at most 256).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Vec<Material>", into = "Vec<Material>")]
pub struct MaterialTable {
    materials: Vec<Material>,
}

impl MaterialTable {
    /// Stone in the standard table.
    pub const STONE: MaterialId = MaterialId(0);
    /// Brick in the standard table.
    pub const BRICK: MaterialId = MaterialId(1);
    /// Wood plank in the standard table.
    pub const WOOD_PLANK: MaterialId = MaterialId(2);
    /// Copper in the standard table.
    pub const COPPER: MaterialId = MaterialId(3);
    /// Glass in the standard table.
    pub const GLASS: MaterialId = MaterialId(4);

    /// The standard table: stone, brick, wood plank, copper and glass, in that order.
    ///
    /// | material | colour (sRGB) | density kg/m³ | strength J/m³ |
    /// | --- | --- | --- | --- |
    /// | stone | 136 136 128 | 2 400 | 100 000 |
    /// | brick | 150 68 50 | 1 900 | 60 000 |
    /// | wood plank | 164 122 74 | 600 | 40 000 |
    /// | copper | 184 115 51 | 8 960 | 400 000 |
    /// | glass | 200 225 230 | 2 500 | 5 000 |
    ///
    /// Densities are the usual handbook figures. Strengths are game values, not fracture
    /// mechanics: a 1 m stone cube (2 400 kg) dropped 4 m (8.9 m/s, 94 kJ) breaks a 1 m
    /// brick block and not a stone one; any block breaks a quarter-metre glass pane.
    pub fn standard() -> Self {
        let m = |name: &str, colour, density, strength| Material {
            name: name.to_owned(),
            colour,
            density,
            strength,
        };
        Self {
            materials: vec![
                m("stone", [136, 136, 128], 2400.0, 100_000.0),
                m("brick", [150, 68, 50], 1900.0, 60_000.0),
                m("wood plank", [164, 122, 74], 600.0, 40_000.0),
                m("copper", [184, 115, 51], 8960.0, 400_000.0),
                m("glass", [200, 225, 230], 2500.0, 5_000.0),
            ],
        }
    }

    /// A table of 1 to 256 materials.
    ///
    /// # Errors
    /// [`BlockError::BadMaterial`] for an empty or too long list, or a density or
    /// strength that is not finite and positive.
    pub fn new(materials: Vec<Material>) -> Result<Self, BlockError> {
        if materials.is_empty() || materials.len() > 256 {
            return Err(BlockError::BadMaterial {
                index: materials.len(),
                reason: "a table holds 1 to 256 materials",
            });
        }
        for (index, m) in materials.iter().enumerate() {
            let ok = |v: f32| v.is_finite() && v > 0.0;
            if !ok(m.density) || !ok(m.strength) {
                return Err(BlockError::BadMaterial {
                    index,
                    reason: "density and strength must be finite and > 0",
                });
            }
        }
        Ok(Self { materials })
    }

    /// The material `id`, or `None` if the table has no such entry.
    pub fn get(&self, id: MaterialId) -> Option<&Material> {
        self.materials.get(usize::from(id.0))
    }

    /// The material `id`, or [`BlockError::UnknownMaterial`].
    pub(crate) fn require(&self, id: MaterialId) -> Result<&Material, BlockError> {
        self.get(id).ok_or(BlockError::UnknownMaterial(id))
    }

    /// Number of materials.
    pub fn len(&self) -> usize {
        self.materials.len()
    }

    /// Always false: a table holds at least one material.
    pub fn is_empty(&self) -> bool {
        self.materials.is_empty()
    }

    /// Every material with its id, in id order.
    pub fn iter(&self) -> impl Iterator<Item = (MaterialId, &Material)> {
        self.materials
            .iter()
            .enumerate()
            .map(|(i, m)| (MaterialId(i as u8), m))
    }

    /// The material whose colour is nearest to `colour` (sRGB), by the "redmean"
    /// weighted distance (a cheap perceptual approximation, integer arithmetic so that
    /// every machine picks the same); the lowest id on a tie.
    pub fn nearest(&self, colour: [u8; 3]) -> MaterialId {
        let mut best = (MaterialId(0), u64::MAX);
        for (id, m) in self.iter() {
            let d = colour_distance(colour, m.colour);
            if d < best.1 {
                best = (id, d);
            }
        }
        best.0
    }
}

impl Default for MaterialTable {
    fn default() -> Self {
        Self::standard()
    }
}

impl TryFrom<Vec<Material>> for MaterialTable {
    type Error = BlockError;

    fn try_from(v: Vec<Material>) -> Result<Self, Self::Error> {
        Self::new(v)
    }
}

impl From<MaterialTable> for Vec<Material> {
    fn from(t: MaterialTable) -> Self {
        t.materials
    }
}

/// The "redmean" colour distance (squared, scaled by 256) between two sRGB colours.
fn colour_distance(a: [u8; 3], b: [u8; 3]) -> u64 {
    let d = |i: usize| i64::from(a[i]) - i64::from(b[i]);
    let rmean = (i64::from(a[0]) + i64::from(b[0])) / 2;
    let v = (512 + rmean) * d(0) * d(0) + 1024 * d(1) * d(1) + (767 - rmean) * d(2) * d(2);
    v as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_table_and_nearest_colour() {
        let t = MaterialTable::standard();
        assert_eq!(t.len(), 5);
        assert_eq!(t.get(MaterialTable::GLASS).unwrap().name, "glass");
        assert_eq!(t.nearest([150, 68, 50]), MaterialTable::BRICK);
        assert_eq!(t.nearest([190, 110, 40]), MaterialTable::COPPER);
        assert_eq!(t.nearest([255, 255, 255]), MaterialTable::GLASS);
        assert_eq!(t.nearest([120, 120, 115]), MaterialTable::STONE);
        assert!(t.get(MaterialId(5)).is_none());
    }

    #[test]
    fn bad_tables_are_refused() {
        assert!(MaterialTable::new(vec![]).is_err());
        let mut m = MaterialTable::standard().materials;
        m[2].density = f32::NAN;
        assert!(matches!(
            MaterialTable::new(m),
            Err(BlockError::BadMaterial { index: 2, .. })
        ));
    }
}
