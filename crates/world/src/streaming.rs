//! Which chunks the viewers need: columns within the view radius, layers from below the
//! viewer up to the highest ground, with hysteresis for dropping.

use std::collections::{BTreeMap, BTreeSet};

use loam_field::{CHUNK_CELLS, ChunkKey, Field};
use loam_mesh::CHUNK_HALO;

use crate::settings::WorldSettings;

/// A point the world streams chunks around (a camera, a player), world metres.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Viewer {
    /// Position, world metres.
    pub position: [f64; 3],
}

impl Viewer {
    /// A viewer at `position` (world metres).
    pub fn at(position: [f64; 3]) -> Self {
        Self { position }
    }

    /// The chunk holding the viewer, or `None` for a position that is not finite or lies
    /// outside the sample range: [`loam_field::coords::world_to_chunk`], the one conversion
    /// (the rounding rule of docs/architecture.md, "Coordinates"; case C13: 11 × 0.96 m at
    /// 0.03 m voxels is in chunk 11, not 10).
    pub fn chunk(&self, voxel_size: f64) -> Option<[i32; 3]> {
        loam_field::coords::world_to_chunk(self.position, voxel_size)
            .ok()
            .map(|k| [k.x, k.y, k.z])
    }
}

/// Where a column of chunks certainly holds no surface, in chunk layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnLayers {
    /// Highest layer whose grid may hold a surface: every chunk above reads only air.
    pub top: i32,
    /// Highest layer whose grid reads only solid (`i32::MIN` if none is known).
    pub solid_top: i32,
}

/// The layers of chunk column `(cx, cz)` from the field's column bounds (generator and
/// edited bricks).
pub fn column_layers(field: &Field, cx: i32, cz: i32) -> ColumnLayers {
    let b = field.column_bounds(cx, cz);
    let vs = field.settings().voxel_size;
    let (n, h) = (f64::from(CHUNK_CELLS), f64::from(CHUNK_HALO));
    let clamp = |v: f64| v.clamp(f64::from(-(1 << 25)), f64::from(1 << 25)) as i32;
    // Chunk c reads samples 32c − h ..= 32c + 32 + h. It is whole air when its lowest sample
    // is above `air_above`, whole solid when its highest is below `solid_below`.
    let top = clamp(((b.air_above / vs + h) / n).floor());
    let solid_top = if b.solid_below.is_finite() {
        clamp(((b.solid_below / vs - n - h) / n).ceil()) - 1
    } else {
        i32::MIN
    };
    ColumnLayers {
        top,
        solid_top: solid_top.min(top),
    }
}

/// The lowest layer loaded in a column for a viewer in layer `vy`: below the viewer, or below
/// the ground when the viewer flies above it.
fn load_bottom(vy: i32, col: ColumnLayers, settings: &WorldSettings) -> i32 {
    vy.min(col.top).saturating_sub(settings.view_depth as i32)
}

/// The highest layer loaded in a column for a viewer in layer `vy`: the column's top (its
/// highest surface), but no more than `4 · view_radius + view_depth` layers above the viewer.
/// A viewer far below the ground (a session may put one a thousand kilometres down) would
/// otherwise load every layer between it and the surface: millions of chunks, memory without
/// end. The cap is far above anything the view reaches sideways.
fn load_top(vy: i32, col: ColumnLayers, settings: &WorldSettings) -> i32 {
    let cap = 4 * settings.view_radius as i32 + settings.view_depth as i32;
    col.top.min(vy.saturating_add(cap))
}

/// The chunks of column `(cx, cz)` that `viewers` need loaded, ascending.
pub fn wanted_in_column(
    field: &Field,
    settings: &WorldSettings,
    viewers: &[[i32; 3]],
    columns: &mut BTreeMap<(i32, i32), ColumnLayers>,
    (cx, cz): (i32, i32),
) -> BTreeSet<ChunkKey> {
    let r = i64::from(settings.view_radius);
    let col = *columns
        .entry((cx, cz))
        .or_insert_with(|| column_layers(field, cx, cz));
    let mut out = BTreeSet::new();
    for &[vx, vy, vz] in viewers {
        let (dx, dz) = (i64::from(cx - vx), i64::from(cz - vz));
        if dx * dx + dz * dz <= r * r {
            for cy in load_bottom(vy, col, settings)..=load_top(vy, col, settings) {
                out.insert(ChunkKey::new(cx, cy, cz));
            }
        }
    }
    out
}

/// The chunks the viewers need: `load` (within the view radius and depth, up to each column's
/// top) and `keep` (the same with the unload margin added); `load ⊆ keep`.
#[derive(Debug, Default)]
pub struct Wanted {
    /// Chunks to load.
    pub load: BTreeSet<ChunkKey>,
    /// Chunks to keep if loaded.
    pub keep: BTreeSet<ChunkKey>,
}

/// Computes the chunks `viewers` need, reading and filling `columns` (a cache of
/// [`column_layers`] per column).
pub fn wanted(
    field: &Field,
    settings: &WorldSettings,
    viewers: &[[i32; 3]],
    columns: &mut BTreeMap<(i32, i32), ColumnLayers>,
) -> Wanted {
    let mut out = Wanted::default();
    let r = i64::from(settings.view_radius);
    let k = r + i64::from(settings.unload_margin);
    for v in viewers {
        let [vx, vy, vz] = *v;
        for dz in -k..=k {
            for dx in -k..=k {
                let d2 = dx * dx + dz * dz;
                if d2 > k * k {
                    continue;
                }
                let (cx, cz) = (vx + dx as i32, vz + dz as i32);
                let col = *columns
                    .entry((cx, cz))
                    .or_insert_with(|| column_layers(field, cx, cz));
                let load_bottom = load_bottom(vy, col, settings);
                let keep_bottom = load_bottom.saturating_sub(settings.unload_margin as i32);
                let load_top = load_top(vy, col, settings);
                let keep_top = load_top.saturating_add(settings.unload_margin as i32);
                for cy in keep_bottom..=keep_top.min(col.top) {
                    let key = ChunkKey::new(cx, cy, cz);
                    out.keep.insert(key);
                    if d2 <= r * r && (load_bottom..=load_top).contains(&cy) {
                        out.load.insert(key);
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use loam_field::coords::{world_to_chunk, world_to_level_chunk};

    /// A viewer a thousand kilometres below the ground needs a bounded number of chunks (it
    /// loaded every layer up to the surface: millions, memory without end); one at the
    /// ground needs the same as before the cap.
    #[test]
    fn a_viewer_far_below_the_ground_needs_few_chunks() {
        let g = loam_field::Generator::noise(&Default::default(), &Default::default()).unwrap();
        let field = Field::new(Default::default(), std::sync::Arc::new(g)).unwrap();
        let settings = WorldSettings::default();
        let mut columns = BTreeMap::new();
        let deep = wanted(&field, &settings, &[[0, -31_250, 0]], &mut columns);
        let r = settings.view_radius as usize;
        let per_column =
            4 * r + 2 * settings.view_depth as usize + 2 * settings.unload_margin as usize + 1;
        let columns_near = (2 * (r + settings.unload_margin as usize) + 1).pow(2);
        assert!(!deep.load.is_empty());
        assert!(
            deep.keep.len() <= per_column * columns_near,
            "{}",
            deep.keep.len()
        );
        assert!(deep.load.is_subset(&deep.keep));
        // At the ground the cap is far above every column top: nothing changes there.
        let top = column_layers(&field, 0, 0).top;
        let at_ground = wanted(&field, &settings, &[[0, top, 0]], &mut columns);
        for k in &at_ground.load {
            let col = columns[&(k.x, k.z)];
            assert!(k.y <= col.top);
        }
        let tops_loaded = at_ground
            .load
            .iter()
            .filter(|k| k.y == columns[&(k.x, k.z)].top)
            .count();
        let near = at_ground
            .load
            .iter()
            .map(|k| (k.x, k.z))
            .collect::<BTreeSet<_>>()
            .len();
        assert_eq!(
            tops_loaded, near,
            "every column near the viewer loads up to its top"
        );
    }

    /// C13: the viewer's chunk at the positions that once floored wrongly, and agreement with
    /// the one conversion on a million random positions within ±10⁶ m.
    #[test]
    fn case_c13_viewer_chunk_uses_the_one_conversion() {
        let at = |x: f64, vs: f64| Viewer::at([x, 0.0, 0.0]).chunk(vs).unwrap()[0];
        assert_eq!(at(10.559999999999999, 0.03), 11);
        assert_eq!(at(-34.56, 0.03), -36);
        assert_eq!(at(137.6, 0.1), 43);
        assert_eq!(Viewer::at([f64::NAN, 0.0, 0.0]).chunk(1.0), None);
        assert_eq!(Viewer::at([1e12, 0.0, 0.0]).chunk(1.0), None);
        let mut z = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            z ^= z << 13;
            z ^= z >> 7;
            z ^= z << 17;
            (z >> 11) as f64 / (1u64 << 53) as f64 * 2e6 - 1e6
        };
        for i in 0..1_000_000 {
            let vs = [0.03, 0.1, 0.25, 0.5, 1.0][i % 5];
            // Every tenth position a multiple of the chunk size, where floors disagree.
            let p = if i % 10 == 0 {
                [next(), next(), next()].map(|c| (c / (32.0 * vs)).round() * 32.0 * vs)
            } else {
                [next(), next(), next()]
            };
            let k = world_to_chunk(p, vs).unwrap();
            assert_eq!(
                Viewer::at(p).chunk(vs),
                Some([k.x, k.y, k.z]),
                "{p:?} at {vs}"
            );
            assert_eq!(world_to_level_chunk(p, vs, 0).unwrap(), [k.x, k.y, k.z]);
        }
    }
}
