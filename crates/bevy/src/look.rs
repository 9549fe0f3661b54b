//! How the terrain looks without texture files: a colour per vertex from the generated ground
//! (grass on gentle up-facing slopes, soil near the surface, rock deeper), painted materials,
//! and darkening with depth below the generated ground so caves read as caves.
//!
//! The colours are computed per chunk mesh on upload, from the vertex normal and the depth
//! below the generator's surface (sampled on a coarse grid over the chunk and interpolated, so
//! a chunk costs 25 generator calls, not one per vertex). The terrain shader adds triplanar
//! detail on top (see [`crate::material`]).

use loam_field::{Generator, MaterialId};
use loam_mesh::MeshBuffer;

/// Linear RGB of grass.
pub const GRASS: [f32; 3] = [0.11, 0.22, 0.045];
/// Linear RGB of soil.
pub const SOIL: [f32; 3] = [0.20, 0.115, 0.06];
/// Linear RGB of rock.
pub const ROCK: [f32; 3] = [0.23, 0.22, 0.205];
/// Linear RGB of dry grass, mixed into grass by a world-space noise.
pub const DRY_GRASS: [f32; 3] = [0.22, 0.22, 0.07];
/// Sky and fog colour (linear RGB, before tone mapping, which pales it).
pub const SKY: [f32; 3] = [0.30, 0.50, 0.95];

/// Depth below the generated ground (metres) where soil has turned into rock.
pub const ROCK_DEPTH_M: f32 = 5.0;
/// Depth scale of cave darkening (metres): light falls to 1/e this far below the soil.
pub const CAVE_DARKEN_M: f32 = 12.0;

/// The painted materials: id 0 is the generator's (grass, soil or rock by position); ids 1..=7
/// are named colours; higher ids cycle through them.
pub const PALETTE: [(&str, [f32; 3]); 8] = [
    ("natural", [0.0, 0.0, 0.0]),
    ("stone", [0.32, 0.32, 0.34]),
    ("sand", [0.55, 0.45, 0.25]),
    ("clay", [0.45, 0.17, 0.08]),
    ("snow", [0.85, 0.87, 0.90]),
    ("moss", [0.08, 0.20, 0.06]),
    ("slate", [0.10, 0.12, 0.16]),
    ("ochre", [0.60, 0.35, 0.05]),
];

/// The colour of painted material `m` (linear RGB); `None` for the generator's material 0.
pub fn painted(m: MaterialId) -> Option<[f32; 3]> {
    match m {
        0 => None,
        m => Some(PALETTE[1 + (usize::from(m) - 1) % (PALETTE.len() - 1)].1),
    }
}

fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

fn mix(a: [f32; 3], b: [f32; 3], t: f32) -> [f32; 3] {
    [0, 1, 2].map(|i| a[i] + (b[i] - a[i]) * t)
}

/// Value noise in `[0, 1]` over world space (a hash of the integer lattice, trilinearly
/// blended with smoothstep weights): the terrain's detail, continuous across chunks and the
/// same on every face orientation, so cliffs and cave walls never stretch it.
pub fn value_noise(p: [f64; 3]) -> f32 {
    fn hash(x: i64, y: i64, z: i64) -> f32 {
        let mut h = (x as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (y as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
            ^ (z as u64).wrapping_mul(0x1656_67B1_9E37_79F9);
        h ^= h >> 29;
        h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^= h >> 32;
        (h >> 40) as f32 / (1u64 << 24) as f32
    }
    let f = p.map(f64::floor);
    let i = f.map(|v| v as i64);
    let t = [0, 1, 2].map(|k| {
        let u = (p[k] - f[k]) as f32;
        u * u * (3.0 - 2.0 * u)
    });
    let mut v = 0.0;
    for c in 0..8 {
        let (dx, dy, dz) = (c & 1, (c >> 1) & 1, (c >> 2) & 1);
        let w = [(dx, 0), (dy, 1), (dz, 2)]
            .iter()
            .map(|&(d, k)| if d == 1 { t[k] } else { 1.0 - t[k] })
            .product::<f32>();
        v += w * hash(i[0] + dx, i[1] + dy, i[2] + dz);
    }
    v
}

/// Two octaves of [`value_noise`] (wavelengths 4 m and 1 m) at world position `p`.
pub fn detail(p: [f64; 3]) -> f32 {
    let a = value_noise(p.map(|v| v / 4.0));
    let b = value_noise(p.map(|v| v + 17.0));
    0.65 * a + 0.35 * b
}

/// The colour (linear RGBA) of a surface point with unit `normal` (y up), `depth` metres
/// below the generated ground (negative above it), material `m` and world-space `detail`
/// noise in `[0, 1]` (0.5: none).
pub fn surface_color(normal: [f32; 3], depth: f32, m: MaterialId, detail: f32) -> [f32; 4] {
    let base = painted(m).unwrap_or_else(|| {
        let rock = smoothstep(1.0, ROCK_DEPTH_M, depth);
        // Cliffs show rock even at the surface.
        let cliff = 0.75 * (1.0 - smoothstep(0.3, 0.6, normal[1]));
        let ground = mix(SOIL, ROCK, rock.max(cliff));
        // Grass on gentle up-facing slopes at (or above) the generated ground, patchy.
        let grass = smoothstep(0.72, 0.86, normal[1]) * (1.0 - smoothstep(0.3, 1.2, depth));
        let lawn = mix(GRASS, DRY_GRASS, smoothstep(0.35, 0.8, detail));
        mix(ground, lawn, grass)
    });
    // Caves: light falls off with depth below the soil; never fully black.
    let dark = 0.18 + 0.82 * (-(depth - 2.0).max(0.0) / CAVE_DARKEN_M).exp();
    // ±15 % brightness from the detail noise.
    let k = dark * (0.85 + 0.3 * detail);
    [base[0] * k, base[1] * k, base[2] * k, 1.0]
}

/// Depth below the generated ground over one chunk, sampled on a coarse grid and interpolated
/// bilinearly.
pub struct DepthGrid {
    origin: [f64; 3],
    step: f64,
    heights: [[f64; Self::N]; Self::N],
}

impl DepthGrid {
    /// Grid points per axis.
    pub const N: usize = 5;

    /// Samples the generator's surface height over a chunk of `size` metres whose lowest
    /// corner is `origin` (world metres).
    pub fn new(generator: &Generator, origin: [f64; 3], size: f64) -> Self {
        let step = size / (Self::N - 1) as f64;
        let mut heights = [[0.0; Self::N]; Self::N];
        for (i, row) in heights.iter_mut().enumerate() {
            for (k, h) in row.iter_mut().enumerate() {
                *h = generator
                    .surface_height(origin[0] + i as f64 * step, origin[2] + k as f64 * step);
            }
        }
        Self {
            origin,
            step,
            heights,
        }
    }

    /// Metres below the generated ground of a chunk-local position (negative above it).
    pub fn depth(&self, local: [f32; 3]) -> f32 {
        let n = (Self::N - 1) as f64;
        let u = (f64::from(local[0]) / self.step).clamp(0.0, n);
        let v = (f64::from(local[2]) / self.step).clamp(0.0, n);
        let (i, k) = ((u as usize).min(Self::N - 2), (v as usize).min(Self::N - 2));
        let (fu, fv) = (u - i as f64, v - k as f64);
        let h = &self.heights;
        let top = h[i][k] * (1.0 - fu) + h[i + 1][k] * fu;
        let bottom = h[i][k + 1] * (1.0 - fu) + h[i + 1][k + 1] * fu;
        let ground = top * (1.0 - fv) + bottom * fv;
        (ground - (self.origin[1] + f64::from(local[1]))) as f32
    }
}

/// One linear RGBA colour per vertex of `mesh` (chunk-local positions, lowest corner at
/// `origin`, edge `size` metres).
pub fn vertex_colors(
    mesh: &MeshBuffer,
    generator: &Generator,
    origin: [f64; 3],
    size: f64,
) -> Vec<[f32; 4]> {
    let depth = DepthGrid::new(generator, origin, size);
    mesh.positions
        .iter()
        .zip(&mesh.normals)
        .zip(&mesh.materials)
        .map(|((p, n), &m)| {
            let w = [0, 1, 2].map(|i| origin[i] + f64::from(p[i]));
            surface_color(*n, depth.depth(*p), m, detail(w))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grass_on_flat_ground_rock_in_deep_caves_and_walls_are_soil() {
        let up = [0.0, 1.0, 0.0];
        let wall = [1.0, 0.0, 0.0];
        // Flat ground at the surface with mid detail: grass with a quarter of dry grass
        // (smoothstep(0.35, 0.8, 0.5) = 0.259), undarkened; detail 0 is pure grass at 85 %.
        let c = surface_color(up, 0.0, 0, 0.5);
        let t = smoothstep(0.35, 0.8, 0.5);
        assert!((t - 0.259_259).abs() < 1e-5, "{t}");
        let want = mix(GRASS, DRY_GRASS, t);
        assert!((0..3).all(|i| (c[i] - want[i]).abs() < 1e-6), "{c:?}");
        let c = surface_color(up, 0.0, 0, 0.0);
        assert!(
            (0..3).all(|i| (c[i] - GRASS[i] * 0.85).abs() < 1e-6),
            "{c:?}"
        );
        // A vertical wall at the surface: a cliff, 75 % of the way from soil to rock.
        let c = surface_color(wall, 0.0, 0, 0.5);
        let want = mix(SOIL, ROCK, 0.75);
        assert!((0..3).all(|i| (c[i] - want[i]).abs() < 1e-6), "{c:?}");
        // A cave floor 30 m down: rock, darkened by exp(-28/12) * 0.82 + 0.18.
        let c = surface_color(up, 30.0, 0, 0.5);
        let dark = 0.18 + 0.82 * (-28.0f32 / CAVE_DARKEN_M).exp();
        assert!((c[0] - ROCK[0] * dark).abs() < 1e-6, "{c:?}");
        assert!(dark < 0.3);
        // Painted material keeps its colour at the surface; detail changes brightness only.
        assert_eq!(surface_color(up, 0.0, 2, 0.5), [0.55, 0.45, 0.25, 1.0]);
        let bright = surface_color(up, 0.0, 2, 1.0);
        assert!((bright[0] / 0.55 - 1.15).abs() < 1e-5);
        assert_eq!(painted(8), painted(1));
    }

    #[test]
    fn value_noise_is_continuous_bounded_and_lattice_exact() {
        let mut prev = value_noise([0.0, 0.3, -0.7]);
        for i in 1..=2000 {
            let x = f64::from(i) * 0.001;
            let v = value_noise([x, 0.3, -0.7]);
            assert!((0.0..=1.0).contains(&v));
            assert!((v - prev).abs() < 0.01, "jump at x = {x}");
            prev = v;
        }
        // Not constant: the lattice values differ.
        let vs: Vec<f32> = (0..10)
            .map(|i| value_noise([f64::from(i), 0.0, 0.0]))
            .collect();
        assert!(vs.iter().any(|v| (v - vs[0]).abs() > 0.1), "{vs:?}");
    }
}
