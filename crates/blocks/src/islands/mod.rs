//! Terrain islands: lumps of terrain that a dig cut loose from the ground, found near the
//! edit, so that they can fall as pieces.
//!
//! ```text
//!   search region = the dig's changed samples grown by `margin` (capped at `max_samples`)
//!   ┌──────────────────────────────┐
//!   │ air          ┌──┐            │   solid samples (value < 0), 26-connected:
//!   │              │▓▓│ ← island   │   - a component that reaches the region's border is
//!   │   changed →  │▓▓│            │     grounded (we cannot prove it loose: it stays)
//!   │ ░░░░░░░  ░░░ └──┘ ░░░  ░░░░░ │   - one fully inside that touches the change
//!   │▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓▓│     (within a sample of it) is an island
//!   └──────────────────────────────┘
//! ```
//!
//! Connectivity is through faces, edges and corners (26 neighbours), the conservative
//! choice: terrain touching the ground only along an edge stays. So every sample around an
//! island is air, the nearest solid sample outside it is at least two samples away on some
//! axis, and the island's removal ([`Island::removal_ops`]: box digs exactly covering its
//! samples' cells, half a voxel round each) turns its samples to air and leaves every other
//! solid sample solid.
//!
//! An island falls as a piece of blocks centred on its samples ([`Island::lump`], applied as
//! [`crate::BlockOp::Lump`]). Pure field work, but it lives here because what counts as
//! loose (and the margin and cap) is a rule of the block game, not of the field.
//!
//! Cost: one [`Field::fill`] of the region (the generator's values where nothing was
//! edited), then from each solid sample next to the change a best-first search through
//! solid samples toward the region's border, nearest first, stopping at the border or at a
//! sample found grounded before: ground is reached in about as many steps as it is far,
//! and only a loose lump is searched whole. See `benches/support.rs`.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use loam_field::{
    CsgMode, EditOp, Field, FieldSettings, GeneratorBrickCache, SampleBox, SamplePos,
};
use serde::{Deserialize, Serialize};

use crate::block::{BlockPos, BlockSize, BlockSpec};
use crate::error::BlockError;
use crate::ops::{BlockOp, LumpBlock};

/// Most blocks one lump may have ([`Island::lump`], [`crate::BlockOp::Lump`]).
pub const MAX_LUMP_BLOCKS: usize = 1 << 14;

/// Settings of the island search. Plain data with defaults; checked by
/// [`IslandSettings::validate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IslandSettings {
    /// Samples searched beyond the changed box on every side. A lump that reaches farther
    /// from the change than this is taken as grounded. Default 12. In `[1, 256]`.
    pub margin: u32,
    /// Most samples searched. When the grown box is larger the margin shrinks to fit; when
    /// even a margin of 1 does not fit nothing is searched (and nothing falls). Default 2²¹
    /// (a box of 128³). In `[27, 2²⁷]`.
    pub max_samples: u64,
}

impl Default for IslandSettings {
    fn default() -> Self {
        Self {
            margin: 12,
            max_samples: 1 << 21,
        }
    }
}

impl IslandSettings {
    /// Checks every field (see their docs).
    ///
    /// # Errors
    /// [`BlockError::BadSetting`].
    pub fn validate(&self) -> Result<(), BlockError> {
        if !(1..=256).contains(&self.margin) {
            return Err(BlockError::BadSetting {
                what: "margin",
                value: f64::from(self.margin),
                expected: "in [1, 256] samples",
            });
        }
        if !(27..=1 << 27).contains(&self.max_samples) {
            return Err(BlockError::BadSetting {
                what: "max_samples",
                value: self.max_samples as f64,
                expected: "in [27, 2^27]",
            });
        }
        Ok(())
    }
}

/// What [`find_islands`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IslandSearch {
    /// The box searched, or `None` when the change was too large to search within
    /// `max_samples` (then nothing was found, whatever is there).
    pub region: Option<SampleBox>,
    /// The islands, ordered by their first sample in ascending (z, y, x) order.
    pub islands: Vec<Island>,
}

/// A lump of solid terrain no longer connected to the ground.
#[derive(Clone, Debug, PartialEq)]
pub struct Island {
    /// Its solid samples, ascending in (z, y, x) order.
    pub samples: Vec<SamplePos>,
    /// The field material of each sample.
    pub materials: Vec<loam_field::MaterialId>,
    /// The smallest box holding every sample.
    pub bounds: SampleBox,
    /// The field's voxel size, metres.
    pub voxel_size: f64,
}

/// Finds the islands that a change of the field (`changed`: an edit's changed samples,
/// `EditOutcome::changed`) may have cut loose; see the module docs. Deterministic: the same
/// field and arguments give the same islands in the same order.
///
/// # Errors
/// [`BlockError::BadSetting`] for bad settings.
pub fn find_islands(
    field: &Field,
    changed: SampleBox,
    settings: &IslandSettings,
) -> Result<IslandSearch, BlockError> {
    find_islands_cached(field, changed, settings, &mut GeneratorBrickCache::new(0))
}

/// [`find_islands`], reading the field through `cache` ([`Field::fill_cached`]: the same
/// samples, the generator's bricks kept for the next search there). For a thread that
/// searches around digs in the same places again and again (a server's ground worker).
///
/// # Errors
/// As [`find_islands`].
pub fn find_islands_cached(
    field: &Field,
    changed: SampleBox,
    settings: &IslandSettings,
    cache: &mut GeneratorBrickCache,
) -> Result<IslandSearch, BlockError> {
    settings.validate()?;
    let Some(region) = island_search_box(changed, settings) else {
        return Ok(IslandSearch::default());
    };
    let dims = [
        (region.max.x - region.min.x + 1) as usize,
        (region.max.y - region.min.y + 1) as usize,
        (region.max.z - region.min.z + 1) as usize,
    ];
    let n = dims[0] * dims[1] * dims[2];
    let mut values = vec![0.0f32; n];
    let mut materials = vec![0u8; n];
    field.fill_cached(region.min, dims, &mut values, &mut materials, cache);

    // Seeds: the solid samples within a sample of the change (an island cut loose by it
    // has one), in ascending (z, y, x) order.
    let lo = [0, 1, 2].map(|a| {
        let v = i64::from(changed.min.to_array()[a]) - 1 - i64::from(region.min.to_array()[a]);
        v.max(0) as usize
    });
    let hi = [0, 1, 2].map(|a| {
        let v = i64::from(changed.max.to_array()[a]) + 1 - i64::from(region.min.to_array()[a]);
        (v.max(0) as usize).min(dims[a] - 1)
    });
    let index = |p: [usize; 3]| p[0] + dims[0] * (p[1] + dims[1] * p[2]);
    let coords = |i: usize| {
        [
            i % dims[0],
            (i / dims[0]) % dims[1],
            i / (dims[0] * dims[1]),
        ]
    };
    // Samples from the region's border: 0 on it.
    let border_distance = |p: [usize; 3]| {
        (0..3)
            .map(|a| p[a].min(dims[a] - 1 - p[a]))
            .min()
            .unwrap_or(0)
    };
    const UNKNOWN: u8 = 0;
    const GROUNDED: u8 = 1;
    const SEARCHED: u8 = 2;
    let mut state = vec![UNKNOWN; n];
    let mut heap = BinaryHeap::new();
    let mut visited = Vec::new();
    let mut islands = Vec::new();
    for z in lo[2]..=hi[2] {
        for y in lo[1]..=hi[1] {
            for x in lo[0]..=hi[0] {
                let seed = index([x, y, z]);
                if state[seed] != UNKNOWN || values[seed] >= 0.0 {
                    continue;
                }
                // Best first, nearest the border first: ground is reached in about as many
                // steps as it is far; only a loose lump is searched whole.
                heap.clear();
                visited.clear();
                state[seed] = SEARCHED;
                visited.push(seed);
                heap.push(Reverse((border_distance([x, y, z]), seed)));
                let mut grounded = false;
                'search: while let Some(Reverse((d, i))) = heap.pop() {
                    if d == 0 {
                        grounded = true;
                        break;
                    }
                    let p = coords(i);
                    for dz in 0..3 {
                        for dy in 0..3 {
                            for dx in 0..3 {
                                // Not on the border, so every neighbour is in the region.
                                let q = [p[0] + dx - 1, p[1] + dy - 1, p[2] + dz - 1];
                                let j = index(q);
                                if values[j] >= 0.0 {
                                    continue;
                                }
                                match state[j] {
                                    GROUNDED => {
                                        grounded = true;
                                        break 'search;
                                    }
                                    UNKNOWN => {
                                        state[j] = SEARCHED;
                                        visited.push(j);
                                        heap.push(Reverse((border_distance(q), j)));
                                    }
                                    _ => {}
                                }
                            }
                        }
                    }
                }
                if grounded {
                    // All connected to the seed, so to the ground.
                    for &i in &visited {
                        state[i] = GROUNDED;
                    }
                    continue;
                }
                // The search ran out: `visited` is the whole component.
                visited.sort_unstable();
                let pos = |i: usize| {
                    let (c, m) = (coords(i), region.min);
                    SamplePos::new(m.x + c[0] as i32, m.y + c[1] as i32, m.z + c[2] as i32)
                };
                let samples: Vec<SamplePos> = visited.iter().map(|&i| pos(i)).collect();
                let mut bounds = SampleBox::point(samples[0]);
                for &s in &samples {
                    bounds.include(s);
                }
                islands.push(Island {
                    materials: visited.iter().map(|&i| materials[i]).collect(),
                    samples,
                    bounds,
                    voxel_size: field.settings().voxel_size,
                });
            }
        }
    }
    // By their first sample (a component's seed need not be its first sample).
    islands.sort_by_key(|i| zyx(i.samples[0]));
    Ok(IslandSearch {
        region: Some(region),
        islands,
    })
}

/// The samples [`find_islands`] reads for the change `changed`: `changed` grown by the
/// largest margin up to `settings.margin` whose box fits in `max_samples` (and in the `i32`
/// sample range); `None` when none does (nothing is searched). A search on a snapshot that
/// holds this box ([`Field::snapshot_of`]) finds what it finds on the whole field.
pub fn island_search_box(changed: SampleBox, settings: &IslandSettings) -> Option<SampleBox> {
    (1..=settings.margin as i32).rev().find_map(|m| {
        let lo = changed.min.to_array().map(|v| v.checked_sub(m));
        let hi = changed.max.to_array().map(|v| v.checked_add(m));
        let (Some(lo), Some(hi)) = (
            lo.into_iter().collect::<Option<Vec<_>>>(),
            hi.into_iter().collect::<Option<Vec<_>>>(),
        ) else {
            return None;
        };
        let b = SampleBox {
            min: SamplePos::new(lo[0], lo[1], lo[2]),
            max: SamplePos::new(hi[0], hi[1], hi[2]),
        };
        (b.volume() <= settings.max_samples).then_some(b)
    })
}

impl Island {
    /// What this island, found in an earlier state of the field, is in `field` now: the
    /// islands [`find_islands`] finds with `settings` taking the island's `bounds` as the
    /// change. For a search on a snapshot whose result is used after more edits (a server
    /// searches beside the ordering of ops). Exact whatever changed since, as every search
    /// is: a 26-connected component of solid samples that ends inside the searched box is
    /// surrounded by air, so loose. Empty when edits since took the island away or joined
    /// it to the ground; several when a dig split it; larger when a build added to it (up
    /// to `settings.margin` samples beyond its bounds; beyond that it is left, as the search
    /// leaves whatever it cannot prove loose). Costs one search of the island's box grown by
    /// the margin (the island found with the same settings always fits).
    ///
    /// # Errors
    /// [`BlockError::BadSetting`] for bad `settings`.
    pub fn recheck(
        &self,
        field: &Field,
        settings: &IslandSettings,
    ) -> Result<Vec<Island>, BlockError> {
        Ok(find_islands(field, self.bounds, settings)?.islands)
    }

    /// Its volume, m³: the samples' cells (`voxel_size³` each).
    pub fn volume(&self) -> f64 {
        self.samples.len() as f64 * self.voxel_size.powi(3)
    }

    /// Whether `p` is one of its samples.
    pub fn contains(&self, p: SamplePos) -> bool {
        self.bounds.contains(p)
            && self
                .samples
                .binary_search_by_key(&zyx(p), |s| zyx(*s))
                .is_ok()
    }

    /// The field ops that take it out of the field: hard box digs (`"box"`, mode dig, no
    /// rotation, no blend), each exactly covering the cells (±½ voxel) of a box of its
    /// samples, merged greedily in (z, y, x) order. Applied in order (to the field this
    /// island was found in) they make every island sample air (value ≥ ½ voxel) and leave
    /// every other solid sample solid. Deterministic. Boxes are at most 32 samples long and
    /// fit `settings`' `max_edit_radius` and `max_edit_samples`.
    ///
    /// # Errors
    /// [`BlockError::Island`] when even a one-sample box breaks those limits.
    pub fn removal_ops(&self, settings: &FieldSettings) -> Result<Vec<EditOp>, BlockError> {
        let vs = self.voxel_size;
        let fits = |len: i32| {
            let h = f64::from(len) * vs * 0.5;
            let reach = (3.0 * h * h).sqrt() + settings.band();
            let per_axis = (2.0 * reach / vs).floor() as u64 + 2;
            h <= settings.max_edit_radius
                && per_axis.saturating_mul(per_axis).saturating_mul(per_axis)
                    <= settings.max_edit_samples
        };
        let max_len = (1..=32).rev().find(|&l| fits(l)).ok_or_else(|| BlockError::Island {
            reason: format!(
                "a one-voxel dig breaks the field's limits (max_edit_radius {} m, max_edit_samples {})",
                settings.max_edit_radius, settings.max_edit_samples
            ),
        })?;
        let b = self.bounds;
        let d = [
            (b.max.x - b.min.x + 1) as usize,
            (b.max.y - b.min.y + 1) as usize,
            (b.max.z - b.min.z + 1) as usize,
        ];
        // 0: not the island's, 1: the island's, 2: covered by a box already.
        let mut grid = vec![0u8; d[0] * d[1] * d[2]];
        let idx = |x: usize, y: usize, z: usize| x + d[0] * (y + d[1] * z);
        for s in &self.samples {
            let l = [s.x - b.min.x, s.y - b.min.y, s.z - b.min.z].map(|v| v as usize);
            grid[idx(l[0], l[1], l[2])] = 1;
        }
        let max_len = max_len as usize;
        let mut ops = Vec::new();
        for s in &self.samples {
            let [x0, y0, z0] = [s.x - b.min.x, s.y - b.min.y, s.z - b.min.z].map(|v| v as usize);
            if grid[idx(x0, y0, z0)] != 1 {
                continue;
            }
            let free = |g: &[u8], x: usize, y: usize, z: usize| g[idx(x, y, z)] == 1;
            let mut x1 = x0;
            while x1 + 1 < d[0] && x1 + 1 - x0 < max_len && free(&grid, x1 + 1, y0, z0) {
                x1 += 1;
            }
            let mut y1 = y0;
            while y1 + 1 < d[1]
                && y1 + 1 - y0 < max_len
                && (x0..=x1).all(|x| free(&grid, x, y1 + 1, z0))
            {
                y1 += 1;
            }
            let mut z1 = z0;
            while z1 + 1 < d[2]
                && z1 + 1 - z0 < max_len
                && (y0..=y1).all(|y| (x0..=x1).all(|x| free(&grid, x, y, z1 + 1)))
            {
                z1 += 1;
            }
            for z in z0..=z1 {
                for y in y0..=y1 {
                    for x in x0..=x1 {
                        grid[idx(x, y, z)] = 2;
                    }
                }
            }
            let lo = [x0, y0, z0];
            let hi = [x1, y1, z1];
            let min = b.min.to_array();
            ops.push(EditOp::Cuboid {
                mode: CsgMode::Subtract,
                center: [0, 1, 2]
                    .map(|a| (f64::from(min[a]) * 2.0 + (lo[a] + hi[a]) as f64) * 0.5 * vs),
                half_extents: [0, 1, 2].map(|a| ((hi[a] - lo[a]) as f64 + 1.0) * 0.5 * vs),
                rotation: [0.0, 0.0, 0.0, 1.0],
                material: 0,
                blend: 0.0,
            });
        }
        Ok(ops)
    }

    /// The block op that makes it a falling piece: blocks of the largest size not above the
    /// voxel size (a quarter metre below that), centred on the block grid shifted by half a
    /// block, so that at voxel sizes of 1, ½ and ¼ m each block is exactly one sample's
    /// cell. At other sizes a block is taken when the sample nearest its centre is the
    /// island's. `spec` gives each field material's block material and paint (the
    /// terrain's colour); shapes are sharp.
    ///
    /// # Errors
    /// [`BlockError::Island`] for more than [`MAX_LUMP_BLOCKS`] blocks or a block outside
    /// the grid's range; [`BlockError::BadShape`] if `spec` gives a bad shape.
    pub fn lump(
        &self,
        spec: impl Fn(loam_field::MaterialId) -> BlockSpec,
    ) -> Result<BlockOp, BlockError> {
        let vs = self.voxel_size;
        let size = BlockSize::ALL
            .into_iter()
            .find(|s| s.edge() <= vs)
            .unwrap_or(BlockSize::Quarter);
        let e = size.edge();
        let mut blocks = Vec::new();
        let mut push = |cell: [i32; 3], m: loam_field::MaterialId| -> Result<(), BlockError> {
            if blocks.len() >= MAX_LUMP_BLOCKS {
                return Err(BlockError::Island {
                    reason: format!("more than {MAX_LUMP_BLOCKS} blocks"),
                });
            }
            BlockPos::new(size, cell).map_err(|_| BlockError::Island {
                reason: format!("block {cell:?} is outside the block grid"),
            })?;
            let s = spec(m);
            s.shape.validate()?;
            blocks.push(LumpBlock {
                cell,
                material: s.material,
                paint: s.paint,
            });
            Ok(())
        };
        if e == vs {
            for (s, &m) in self.samples.iter().zip(&self.materials) {
                push(s.to_array(), m)?;
            }
        } else {
            // Block cells whose centre (`cell · e`) lies in a sample cell of the bounds.
            let lo = self
                .bounds
                .min
                .to_array()
                .map(|v| (f64::from(v) - 0.5) * vs);
            let hi = self
                .bounds
                .max
                .to_array()
                .map(|v| (f64::from(v) + 0.5) * vs);
            let c0 = lo.map(|v| (v / e).floor() as i64);
            let c1 = hi.map(|v| (v / e).ceil() as i64);
            let by_pos: std::collections::BTreeMap<[i32; 3], loam_field::MaterialId> = self
                .samples
                .iter()
                .zip(&self.materials)
                .map(|(s, m)| (zyx(*s), *m))
                .collect();
            for cz in c0[2]..=c1[2] {
                for cy in c0[1]..=c1[1] {
                    for cx in c0[0]..=c1[0] {
                        let c = [cx, cy, cz];
                        let s = c.map(|v| ((v as f64 * e) / vs + 0.5).floor() as i32);
                        if let Some(&m) = by_pos.get(&[s[2], s[1], s[0]]) {
                            let cell = c.map(|v| v.clamp(i32::MIN as i64, i32::MAX as i64) as i32);
                            push(cell, m)?;
                        }
                    }
                }
            }
        }
        if blocks.is_empty() {
            return Err(BlockError::Island {
                reason: "no block centre lies in the island".into(),
            });
        }
        blocks.sort_by_key(|b| b.cell);
        Ok(BlockOp::Lump { size, blocks })
    }
}

/// A sample's (z, y, x) order key.
fn zyx(p: SamplePos) -> [i32; 3] {
    [p.z, p.y, p.x]
}

/// Whether the cells ascend strictly (so none repeats), as [`crate::BlockOp::Lump`] needs.
pub(crate) fn strictly_ascending(blocks: &[LumpBlock]) -> bool {
    blocks.windows(2).all(|w| w[0].cell < w[1].cell)
}

#[cfg(test)]
mod tests;
