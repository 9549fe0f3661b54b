//! The ground under blocks: the terrain's signed distance field, behind a small trait so
//! that tests can use analytic ground and the world uses a [`loam_field::Field`].
//!
//! ```text
//!   placement: 15 test points (corners,        ground contact: 5 probes (bottom corners
//!   face centres, centre) may each be at       inset by ⅛ edge, and the centre) at
//!   most `max_ground_depth` inside ground      `ground_probe` below the bottom face;
//!        o---o---o                             any solid one = on the ground
//!        |   o   |                                  ___________
//!        o---o---o                                 |___________|
//!   ~~~~~~~~~~~~~~~~~~~~~                         ~~~o~~~o~~~o~~~   ← ground_probe below
//! ```

use loam_field::Field;
use loam_field::SamplePos;
use loam_field::coords::world_to_sample_floor;
use serde::{Deserialize, Serialize};

use crate::block::BlockPos;
use crate::error::BlockError;

/// The terrain as seen by blocks: a signed distance in metres at a world point, negative
/// inside solid ground (docs/architecture.md: `value < 0.0` is inside; NaN counts as air).
pub trait Ground {
    /// The field value at `p` (world metres).
    fn value(&self, p: [f64; 3]) -> f32;
}

impl<F: Fn([f64; 3]) -> f32> Ground for F {
    fn value(&self, p: [f64; 3]) -> f32 {
        self(p)
    }
}

/// No terrain at all (everything is air).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoGround;

impl Ground for NoGround {
    fn value(&self, _: [f64; 3]) -> f32 {
        f32::INFINITY
    }
}

/// A [`Field`] as ground: the trilinear interpolation of its samples, the surface the
/// field raycast sees. Points outside the sample range are air.
#[derive(Clone, Copy, Debug)]
pub struct FieldGround<'a>(pub &'a Field);

impl Ground for FieldGround<'_> {
    fn value(&self, p: [f64; 3]) -> f32 {
        let vs = self.0.settings().voxel_size;
        let mut base = [0i32; 3];
        let mut frac = [0.0f64; 3];
        for i in 0..3 {
            let Ok(s) = world_to_sample_floor(p[i], vs) else {
                return f32::INFINITY;
            };
            if s >= i32::MAX - 1 {
                return f32::INFINITY;
            }
            base[i] = s;
            frac[i] = (p[i] / vs - f64::from(s)).clamp(0.0, 1.0);
        }
        let mut v = 0.0f64;
        for corner in 0..8 {
            let d = [corner & 1, (corner >> 1) & 1, (corner >> 2) & 1];
            let mut w = 1.0;
            for i in 0..3 {
                w *= if d[i] == 1 { frac[i] } else { 1.0 - frac[i] };
            }
            if w == 0.0 {
                continue;
            }
            let s = SamplePos::new(base[0] + d[0], base[1] + d[1], base[2] + d[2]);
            v += w * f64::from(self.0.sample(s));
        }
        v as f32
    }
}

/// Settings of the block rules. Plain data with defaults; checked by
/// [`BlockSettings::validate`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockSettings {
    /// How far below a block's bottom face the ground is looked for, metres. Default
    /// 0.05. In `(0, 0.5]`.
    pub ground_probe: f64,
    /// How deep a placed block's test points may be inside the ground, metres. Default
    /// 0.1. In `[0, 1]`.
    pub max_ground_depth: f64,
    /// How far a rubble piece may move (any point of its frame, metres) before what rests
    /// on it is checked again. Default 0.05. In `(0, 1]`.
    pub rubble_tolerance: f64,
    /// How far a rubble piece may turn before what rests on it is checked again, degrees.
    /// Default 3. In `(0, 90]`.
    pub rubble_turn_deg: f64,
    /// Pieces whose frame falls below this height are removed, metres. Default −1000.
    pub fall_limit_y: f64,
}

impl Default for BlockSettings {
    fn default() -> Self {
        Self {
            ground_probe: 0.05,
            max_ground_depth: 0.1,
            rubble_tolerance: 0.05,
            rubble_turn_deg: 3.0,
            fall_limit_y: -1000.0,
        }
    }
}

impl BlockSettings {
    /// Checks every field (see their docs).
    ///
    /// # Errors
    /// [`BlockError::BadSetting`].
    pub fn validate(&self) -> Result<(), BlockError> {
        let check = |what, value: f64, lo: f64, lo_inclusive: bool, hi: f64, expected| {
            let ok =
                value.is_finite() && (value > lo || (lo_inclusive && value == lo)) && value <= hi;
            if ok {
                Ok(())
            } else {
                Err(BlockError::BadSetting {
                    what,
                    value,
                    expected,
                })
            }
        };
        check(
            "ground_probe",
            self.ground_probe,
            0.0,
            false,
            0.5,
            "in (0, 0.5] m",
        )?;
        check(
            "max_ground_depth",
            self.max_ground_depth,
            0.0,
            true,
            1.0,
            "in [0, 1] m",
        )?;
        check(
            "rubble_tolerance",
            self.rubble_tolerance,
            0.0,
            false,
            1.0,
            "in (0, 1] m",
        )?;
        check(
            "rubble_turn_deg",
            self.rubble_turn_deg,
            0.0,
            false,
            90.0,
            "in (0, 90] degrees",
        )?;
        check(
            "fall_limit_y",
            self.fall_limit_y,
            f64::MIN,
            true,
            f64::MAX,
            "finite",
        )?;
        Ok(())
    }
}

/// Whether the terrain is solid just under the block's bottom face: any of the 5 probes
/// (bottom corners inset by ⅛ of the edge, and the bottom centre, `probe` metres down)
/// has a value < 0.
pub(crate) fn touches_ground(ground: &dyn Ground, pos: BlockPos, probe: f64) -> bool {
    let (lo, hi) = (pos.min_corner(), pos.max_corner());
    let inset = pos.size.edge() / 8.0;
    let y = lo[1] - probe;
    let xs = [lo[0] + inset, hi[0] - inset];
    let zs = [lo[2] + inset, hi[2] - inset];
    let c = pos.centre();
    let points = [
        [c[0], y, c[2]],
        [xs[0], y, zs[0]],
        [xs[1], y, zs[0]],
        [xs[0], y, zs[1]],
        [xs[1], y, zs[1]],
    ];
    points.iter().any(|&p| ground.value(p) < 0.0)
}

/// Checks that no test point of the block (8 corners, 6 face centres, the centre) lies
/// deeper than `tolerance` metres inside the ground.
pub(crate) fn check_not_buried(
    ground: &dyn Ground,
    pos: BlockPos,
    tolerance: f64,
) -> Result<(), BlockError> {
    let (lo, hi, c) = (pos.min_corner(), pos.max_corner(), pos.centre());
    let mut worst: Option<([f64; 3], f64)> = None;
    let mut test = |p: [f64; 3]| {
        let v = f64::from(ground.value(p));
        if v < -tolerance && worst.is_none_or(|(_, w)| v < w) {
            worst = Some((p, v));
        }
    };
    for corner in 0..8 {
        test([0, 1, 2].map(|i| if corner >> i & 1 == 1 { hi[i] } else { lo[i] }));
    }
    for axis in 0..3 {
        for side in [lo[axis], hi[axis]] {
            let mut p = c;
            p[axis] = side;
            test(p);
        }
    }
    test(c);
    match worst {
        Some((point, v)) => Err(BlockError::InsideGround {
            at: pos,
            point,
            depth: -v,
            tolerance,
        }),
        None => Ok(()),
    }
}

/// The terrain collider of chunk `key` (32³ cells) of `field`: the chunk's samples with a
/// halo of [`loam_mesh::CHUNK_HALO`], meshed with Surface Nets, as one static trimesh at the
/// chunk's origin (world metres). `None` for a chunk with no surface. Every place that
/// simulates blocks builds its colliders with it (`loam_session::TerrainColliders`: the
/// server, a load, the editor), so pieces fall alike everywhere.
pub fn field_collider(field: &Field, key: [i32; 3]) -> Option<loam_physics::TerrainShape> {
    field_collider_cached(field, key, &mut loam_field::GeneratorBrickCache::new(0))
}

/// The halo of the grid a terrain collider is meshed from, samples. One: a collider needs
/// no more (Surface Nets reads one sample beyond its cells), and the rendering meshes'
/// halo of [`loam_mesh::CHUNK_HALO`] (2, for bit-exact border normals) would only make
/// every build read more.
pub const COLLIDER_HALO: u32 = 1;

/// The samples [`field_collider`] reads for chunk `key`: the chunk's 33³ with a halo of
/// [`COLLIDER_HALO`] on every side. A build on a snapshot that holds this box
/// ([`Field::snapshot_of`]) gives the same collider as on the whole field. `None` where the
/// box leaves the sample range (`i32` on each axis): such a chunk, at the very end of the
/// world, has no collider.
pub fn field_collider_box(key: [i32; 3]) -> Option<loam_field::SampleBox> {
    use loam_mesh::CHUNK_CELLS;
    const CHUNK_HALO: u32 = COLLIDER_HALO;
    // In i64: a chunk key may be anything a position far out gives.
    let (cells, h) = (i64::from(CHUNK_CELLS), i64::from(CHUNK_HALO));
    let fit = |v: i64| i32::try_from(v).ok();
    let corner = |offset: i64| -> Option<[i32; 3]> {
        let c = key.map(|k| fit(i64::from(k) * cells + offset));
        Some([c[0]?, c[1]?, c[2]?])
    };
    let (lo, hi) = (corner(-h)?, corner(cells + h)?);
    Some(loam_field::SampleBox {
        min: loam_field::SamplePos::new(lo[0], lo[1], lo[2]),
        max: loam_field::SamplePos::new(hi[0], hi[1], hi[2]),
    })
}

/// [`field_collider`], reading the field through `cache` ([`Field::fill_cached`]: the same
/// samples, so the same collider; the generator's bricks kept for the next build there).
/// For a thread that rebuilds the same chunks again and again (a server's ground worker).
pub fn field_collider_cached(
    field: &Field,
    key: [i32; 3],
    cache: &mut loam_field::GeneratorBrickCache,
) -> Option<loam_physics::TerrainShape> {
    use loam_mesh::{CHUNK_CELLS, Grid, MeshBuffer, surface_nets};
    const CHUNK_HALO: u32 = COLLIDER_HALO;
    let n = (CHUNK_CELLS + 1 + 2 * CHUNK_HALO) as usize;
    let mut values = vec![0.0f32; n * n * n];
    let mut materials = vec![0u8; n * n * n];
    let min = field_collider_box(key)?.min;
    field.fill_cached(min, [n; 3], &mut values, &mut materials, cache);
    let vs = field.settings().voxel_size as f32;
    let mut mesh = MeshBuffer::default();
    surface_nets(&Grid::chunk(&values, &materials, CHUNK_HALO, vs), &mut mesh);
    let origin = key.map(|c| (c * CHUNK_CELLS as i32) as f32 * vs);
    // A mesher's output is always well formed; a failure leaves the chunk without a collider.
    loam_physics::TerrainShape::build(&mesh.positions, &mesh.indices, origin)
        .ok()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::BlockSize;

    /// A chunk's collider box is exact inside the sample range and `None` where any of its
    /// samples (halo included) would leave it; a collider there is `None`, never a panic
    /// (`min_sample` and `m.x + far` overflowed at the end of the range).
    #[test]
    fn collider_boxes_stop_at_the_end_of_the_sample_range() {
        let b = field_collider_box([1, -2, 0]).unwrap();
        assert_eq!((b.min.x, b.min.y, b.min.z), (31, -65, -1));
        assert_eq!((b.max.x, b.max.y, b.max.z), (65, -31, 33));
        let top = (1 << 26) - 2;
        let b = field_collider_box([top, 0, 0]).unwrap();
        assert_eq!(b.max.x, i32::MAX - 30);
        assert_eq!(field_collider_box([top + 1, 0, 0]), None);
        let b = field_collider_box([0, 1 - (1 << 26), 0]).unwrap();
        assert_eq!(b.min.y, i32::MIN + 31);
        assert_eq!(field_collider_box([0, -(1 << 26), 0]), None);
        for far in [[i32::MAX, 0, 0], [0, i32::MIN, 0], [0, 0, 1 << 26]] {
            assert_eq!(field_collider_box(far), None, "{far:?}");
            let g = loam_field::Generator::noise(
                &loam_field::NoiseTerrainSettings::default(),
                &loam_field::CaveSettings::default(),
            );
            let field = Field::new(
                loam_field::FieldSettings::default(),
                std::sync::Arc::new(g.unwrap()),
            )
            .unwrap();
            assert!(field_collider(&field, far).is_none());
        }
    }

    #[test]
    fn probes_and_burial_on_flat_ground() {
        let flat = |p: [f64; 3]| p[1] as f32; // ground below y = 0
        let on = BlockPos::new(BlockSize::Full, [0, 0, 0]).unwrap();
        let above = BlockPos::new(BlockSize::Half, [0, 1, 0]).unwrap(); // 0.5 m up
        let sunk = BlockPos::new(BlockSize::Quarter, [0, -1, 0]).unwrap();
        assert!(touches_ground(&flat, on, 0.05));
        assert!(!touches_ground(&flat, above, 0.05));
        assert!(check_not_buried(&flat, on, 0.1).is_ok());
        let e = check_not_buried(&flat, sunk, 0.1).unwrap_err();
        assert!(matches!(e, BlockError::InsideGround { depth, .. } if (depth - 0.25).abs() < 1e-6));
        assert!(check_not_buried(&NoGround, sunk, 0.0).is_ok());
    }

    #[test]
    fn a_collider_built_through_the_generator_cache_is_the_one_built_without() {
        use loam_field::{
            CaveSettings, Field, FieldSettings, Generator, GeneratorBrickCache,
            NoiseTerrainSettings,
        };
        let g = Generator::noise(&NoiseTerrainSettings::default(), &CaveSettings::default());
        let field = Field::new(FieldSettings::default(), std::sync::Arc::new(g.unwrap())).unwrap();
        let y = (field.generator().surface_height(16.0, 16.0) / 32.0).floor() as i32;
        let mut cache = GeneratorBrickCache::new(32);
        for round in 0..2 {
            for key in [[0, y, 0], [1, y, 0], [0, y - 1, 0], [0, y + 1, 0]] {
                let plain = field_collider(&field, key);
                let cached = field_collider_cached(&field, key, &mut cache);
                let shape = |s: Option<loam_physics::TerrainShape>| {
                    s.map(|s| (s.origin(), s.triangle_count()))
                };
                assert_eq!(shape(plain), shape(cached), "{key:?}, round {round}");
            }
        }
        assert!(
            field_collider(&field, [0, y, 0]).is_some(),
            "the surface's chunk"
        );
        // Digs into the surface at a chunk's corner (the chunk's halo reads the bricks beyond
        // it) and far away: a snapshot of only the samples a build reads builds the same
        // collider as the whole field.
        let mut field = field;
        let mut keys = Vec::new();
        for (x, z) in [(0.5, 0.5), (32.5, 32.5), (400.5, 400.5)] {
            let top = field.generator().surface_height(x, z);
            let dig = loam_field::EditOp::Sphere {
                mode: loam_field::CsgMode::Subtract,
                center: [x, top, z],
                radius: 3.0,
                material: 0,
                blend: 0.0,
            };
            assert!(field.apply(&dig).unwrap().changed.is_some());
            keys.push([0, (top / 32.0).floor() as i32, 0]);
        }
        keys.truncate(2);
        let reads: Vec<_> = keys.iter().filter_map(|&k| field_collider_box(k)).collect();
        assert!(reads.iter().all(|b| b.volume() == 35 * 35 * 35));
        let part = field.snapshot_of(&reads);
        // Bricks on both sides of the chunk's corner, and not the far ones.
        assert!(part.bricks().any(|(k, _)| k.x == 1 && k.z == 1));
        assert!(part.bricks().any(|(k, _)| k.x == -1 && k.z == -1));
        assert!(part.brick_count() < field.brick_count());
        let shape =
            |s: Option<loam_physics::TerrainShape>| s.map(|s| (s.origin(), s.triangle_count()));
        for k in keys {
            let whole = shape(field_collider(&field, k));
            assert!(whole.is_some(), "{k:?}");
            assert_eq!(shape(field_collider(&part, k)), whole, "{k:?}");
        }
        let (hits, misses) = cache.hits_and_misses();
        assert!(misses > 0 && hits > misses, "{hits} hits, {misses} misses");
    }

    #[test]
    fn settings_are_checked() {
        BlockSettings::default().validate().unwrap();
        let bad = [
            BlockSettings {
                ground_probe: 0.0,
                ..Default::default()
            },
            BlockSettings {
                max_ground_depth: f64::NAN,
                ..Default::default()
            },
            BlockSettings {
                rubble_turn_deg: 91.0,
                ..Default::default()
            },
            BlockSettings {
                fall_limit_y: f64::NEG_INFINITY,
                ..Default::default()
            },
        ];
        for s in bad {
            assert!(s.validate().is_err(), "{s:?}");
        }
    }
}
