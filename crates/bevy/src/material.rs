//! The terrain material: Bevy's PBR with the vertex colours of [`crate::look`], rough and
//! matte like soil and rock.

use bevy::prelude::*;

/// The asset type chunk meshes are drawn with.
pub type TerrainMaterialAsset = StandardMaterial;

/// The terrain's material: white base (the vertex colours carry the colour), roughness 0.92,
/// low reflectance (0.25).
pub fn terrain_material() -> TerrainMaterialAsset {
    StandardMaterial {
        base_color: Color::WHITE,
        perceptual_roughness: 0.92,
        reflectance: 0.25,
        ..Default::default()
    }
}
