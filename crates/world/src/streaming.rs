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

    /// The chunk holding the viewer (floor division), or `None` for a position that is not
    /// finite or lies outside the chunk range.
    pub fn chunk(&self, voxel_size: f64) -> Option<[i32; 3]> {
        let size = f64::from(CHUNK_CELLS) * voxel_size;
        let mut out = [0; 3];
        for (o, &p) in out.iter_mut().zip(&self.position) {
            let c = (p / size).floor();
            if !c.is_finite() || c.abs() > f64::from(1 << 24) {
                return None;
            }
            *o = c as i32;
        }
        Some(out)
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
    vy.min(col.top) - settings.view_depth as i32
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
            for cy in load_bottom(vy, col, settings)..=col.top {
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
                let keep_bottom = load_bottom - settings.unload_margin as i32;
                for cy in keep_bottom..=col.top {
                    let key = ChunkKey::new(cx, cy, cz);
                    out.keep.insert(key);
                    if d2 <= r * r && cy >= load_bottom {
                        out.load.insert(key);
                    }
                }
            }
        }
    }
    out
}
