//! The terrain material: Bevy's PBR with the vertex colours of [`crate::look`], rough and
//! matte like soil and rock, extended by [`LevelFade`], a screen-door dither window that
//! cross-fades the chunks of two levels of detail (see [`crate::fade`]).

use bevy::pbr::{ExtendedMaterial, MaterialExtension};
use bevy::prelude::*;
use bevy::render::render_resource::AsBindGroup;
use bevy::shader::ShaderRef;

/// The asset type chunk meshes are drawn with: the standard PBR material and a dither window.
pub type TerrainMaterialAsset = ExtendedMaterial<StandardMaterial, LevelFade>;

/// Where the fragment shader of [`LevelFade`] is embedded (`level_fade.wgsl`).
pub const LEVEL_FADE_SHADER: &str = "embedded://loam_bevy/level_fade.wgsl";

/// A screen-door window: a fragment is drawn where `window.x ≤ d < window.y`, `d` being the
/// threshold of its pixel in a 4 × 4 ordered-dither (Bayer) matrix, `(i + 0.5) / 16` for `i`
/// in 0..16. `(0, 2)` draws every fragment (the default); a chunk fading in over `t ∈ [0, 1]`
/// draws `(0, t)` and the chunk it replaces `(t, 2)`, so each pixel shows exactly one of the
/// two (see [`fade_windows`]).
#[derive(Asset, AsBindGroup, Reflect, Debug, Clone, Copy, PartialEq)]
pub struct LevelFade {
    /// `x`: lowest threshold drawn, `y`: first threshold not drawn; `z`, `w` unused (16-byte
    /// uniform).
    #[uniform(100)]
    pub window: Vec4,
}

impl LevelFade {
    /// Every fragment drawn.
    pub const OPAQUE: Self = Self {
        window: Vec4::new(0.0, 2.0, 0.0, 0.0),
    };
}

impl Default for LevelFade {
    fn default() -> Self {
        Self::OPAQUE
    }
}

impl MaterialExtension for LevelFade {
    fn fragment_shader() -> ShaderRef {
        LEVEL_FADE_SHADER.into()
    }
}

/// The windows of a cross-fade at progress `t` (clamped to 0..=1): `(fading in, fading out)`.
/// They partition the thresholds: at any `t` a pixel is drawn by exactly one of the two.
pub fn fade_windows(t: f32) -> (LevelFade, LevelFade) {
    let t = if t.is_nan() { 1.0 } else { t.clamp(0.0, 1.0) };
    (
        LevelFade {
            window: Vec4::new(0.0, t, 0.0, 0.0),
        },
        LevelFade {
            window: Vec4::new(t, 2.0, 0.0, 0.0),
        },
    )
}

/// The terrain's material: white base (the vertex colours carry the colour), roughness 0.92,
/// low reflectance (0.25), every fragment drawn.
pub fn terrain_material() -> TerrainMaterialAsset {
    ExtendedMaterial {
        base: StandardMaterial {
            base_color: Color::WHITE,
            perceptual_roughness: 0.92,
            reflectance: 0.25,
            ..Default::default()
        },
        extension: LevelFade::OPAQUE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 16 thresholds of the shader's dither matrix.
    fn thresholds() -> impl Iterator<Item = f32> {
        (0..16).map(|i| (i as f32 + 0.5) / 16.0)
    }

    fn draws(f: LevelFade, d: f32) -> bool {
        f.window.x <= d && d < f.window.y
    }

    #[test]
    fn the_two_windows_partition_every_pixel_at_every_progress() {
        for step in 0..=64 {
            let t = step as f32 / 64.0;
            let (fin, fout) = fade_windows(t);
            let mut shown_in = 0;
            for d in thresholds() {
                assert!(draws(fin, d) != draws(fout, d), "t {t}, d {d}");
                shown_in += usize::from(draws(fin, d));
            }
            // The share drawn by the incoming chunk is t, to the matrix's 1/16.
            assert!((shown_in as f32 / 16.0 - t).abs() <= 1.0 / 32.0, "t {t}");
        }
        let (fin, fout) = fade_windows(0.0);
        assert!(thresholds().all(|d| !draws(fin, d) && draws(fout, d)));
        let (fin, fout) = fade_windows(1.0);
        assert!(thresholds().all(|d| draws(fin, d) && !draws(fout, d)));
        assert_eq!(fade_windows(f32::NAN), fade_windows(1.0));
        assert_eq!(fade_windows(-3.0), fade_windows(0.0));
        assert!(thresholds().all(|d| draws(LevelFade::OPAQUE, d)));
    }
}
