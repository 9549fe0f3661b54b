//! The world with level of detail (issue 11): the view follows the viewers as a balanced
//! octree of chunks ([`crate::lod::select`]); every change of it — chunks that come into view,
//! change level or leave, and the chunks whose transition faces change with them — forms one
//! batch, so a level change never shows a crack or an overlap for a frame.

use crate::Instant;
use std::collections::{BTreeMap, BTreeSet};

use loam_field::{BRICK_SAMPLES, ColumnBounds, SampleBox};

use super::{Chunk, Out, World};
use crate::batch::BatchKind;
use crate::lod::{LodKey, level_neighbours, lod_column_bounds, seams_of, select, uniform_in};

/// Level-of-detail column bounds, by (level, x, z) of the chunk column.
pub(super) type LodColumns = BTreeMap<(u8, i32, i32), ColumnBounds>;

/// Level of detail as a [`World`] keeps it: the settings (none when levels of detail are
/// off: level-0 chunks only) and the view selected for the viewers.
#[derive(Debug, Default)]
pub(super) struct LodView {
    /// The settings; `None` when off.
    pub settings: Option<crate::lod::LodSettings>,
    /// The chunks in view (every loaded chunk, all levels).
    pub view: BTreeSet<LodKey>,
    /// Viewer positions (metres) the view was selected for.
    pub viewers: Vec<[f64; 3]>,
    /// Column bounds of the coarse levels, computed as the view needs them.
    pub columns: LodColumns,
}

/// The range of chunk indices at `level` whose samples (the chunk and one coarse sample
/// around it) meet `lo..=hi` (level-0 samples).
fn reading_range(level: u8, lo: i32, hi: i32) -> std::ops::RangeInclusive<i32> {
    let k = LodKey::new(level, [0; 3]);
    let (s, size) = (i64::from(k.stride()), k.size());
    // c·size − s ≤ hi and c·size + size + s ≥ lo.
    let first = -((size + s - i64::from(lo)).div_euclid(size));
    let last = (i64::from(hi) + s).div_euclid(size);
    first as i32..=last as i32
}

impl World {
    /// Adds to `out` the loaded chunks of every level that read a sample of `b`, and forgets
    /// the column bounds the change may widen.
    pub(super) fn lod_reading(&mut self, b: &SampleBox, out: &mut BTreeSet<LodKey>) {
        let levels = self.lod.settings.map_or(0, |l| l.levels);
        let bs = BRICK_SAMPLES;
        // Column bounds read the edited bricks' columns: one brick wider each way.
        let wide =
            |lo: i32, hi: i32| (lo.div_euclid(bs) * bs - bs, hi.div_euclid(bs) * bs + 2 * bs);
        let (wx, wz) = (wide(b.min.x, b.max.x), wide(b.min.z, b.max.z));
        for level in 0..levels {
            let (xs, ys, zs) = (
                reading_range(level, b.min.x, b.max.x),
                reading_range(level, b.min.y, b.max.y),
                reading_range(level, b.min.z, b.max.z),
            );
            for z in zs.clone() {
                for y in ys.clone() {
                    for x in xs.clone() {
                        let k = LodKey::new(level, [x, y, z]);
                        if self.chunks.contains_key(&k) {
                            out.insert(k);
                        }
                    }
                }
            }
            for z in reading_range(level, wz.0, wz.1) {
                for x in reading_range(level, wx.0, wx.1) {
                    self.lod.columns.remove(&(level, x, z));
                }
            }
        }
    }

    /// Whether the column bounds prove chunk `key` has no surface.
    fn lod_uniform(&mut self, key: LodKey) -> bool {
        let field = &self.field;
        let b = *self
            .lod
            .columns
            .entry((key.level, key.x, key.z))
            .or_insert_with(|| lod_column_bounds(field, key.level, key.x, key.z));
        uniform_in(&self.field, key, &b)
    }

    /// Selects the view for the viewers and turns the difference into one batch (the first
    /// view streams chunk by chunk, nearest first).
    pub(super) fn restream_lod(&mut self, now: Instant) {
        self.restream = false;
        self.dirty_columns.clear();
        let Some(st) = self.lod.settings else {
            return;
        };
        let vs = self.field.settings().voxel_size;
        let view = select(&self.lod.viewers, vs, &st, &self.lod.view);
        if view == self.lod.view {
            return;
        }
        let old = std::mem::replace(&mut self.lod.view, view);
        let first = old.is_empty();
        let gone: Vec<LodKey> = old.difference(&self.lod.view).copied().collect();
        let added: Vec<LodKey> = self.lod.view.difference(&old).copied().collect();
        // Chunks that stay whose transition faces change (a neighbour changed level).
        let mut remask = Vec::new();
        let mut near = BTreeSet::new();
        for k in gone.iter().chain(&added) {
            for d in crate::lod::neighbour_offsets() {
                // Neighbours (face, edge, corner) of the same, the next coarser and the next
                // finer level.
                let n = k.offset(d);
                near.insert(n);
                if let Some(p) = n.parent() {
                    near.insert(p);
                }
                near.extend(n.children().into_iter().flatten());
            }
        }
        for n in near {
            if let Some(c) = self.chunks.get(&n)
                && self.lod.view.contains(&n)
            {
                let levels = seams_of(self.settings.mesher, level_neighbours(&self.lod.view, n));
                if levels != c.levels {
                    remask.push((n, levels));
                }
            }
        }
        let id = self.new_batch(BatchKind::Stream);
        // A pending batch holding a chunk this change touches is merged into it, whatever its
        // age, when showing it without that chunk could open a hole or a crack: it removes
        // chunks (the touched one may be part of what replaces them) or the touched chunk is
        // on screen (a transition face it rebuilds). Giving such a chunk up instead showed the
        // older change without it until this one was built. A viewer moving on faster than
        // its views are built then sees the last complete view until the pipeline catches
        // up. A batch that only adds chunks where nothing is shown (the first view, streamed
        // chunk by chunk) gives the touched chunk up and shows the rest.
        let touched: BTreeSet<LodKey> = gone
            .iter()
            .copied()
            .chain(remask.iter().map(|r| r.0))
            .collect();
        let mut older: BTreeMap<u64, bool> = BTreeMap::new();
        for k in &touched {
            if let Some(c) = self.chunks.get(k)
                && let Some(b) = c.batch.filter(|&b| b != id)
            {
                *older.entry(b).or_default() |= c.shown;
            }
        }
        let mut edits = Vec::new();
        for (b, touches_shown) in older {
            let batch = &self.batches[&b];
            if !touches_shown && batch.removed.is_empty() {
                continue;
            }
            if batch.kind == BatchKind::Edit {
                self.batches.get_mut(&id).expect("new").kind = BatchKind::Edit;
            }
            self.merge(b, id, &mut edits);
        }
        for &key in &touched {
            if self
                .chunks
                .get(&key)
                .is_some_and(|c| c.batch.is_some_and(|b| b != id))
            {
                edits.extend(self.release(key, now));
            }
        }
        for key in gone {
            self.pool.cancel(key);
            let c = self.chunks.remove(&key).expect("a chunk in view is loaded");
            let batch = self.batches.get_mut(&id).expect("new");
            if c.batch == Some(id) {
                batch.waiting.remove(&key);
                batch.ready.remove(&key);
            }
            if c.shown {
                batch.removed.insert(key);
            }
        }
        for (key, levels) in remask {
            self.chunks.get_mut(&key).expect("loaded").levels = levels;
            if !self.lod_uniform(key) {
                self.bump(key, id);
            }
        }
        for key in added {
            let levels = seams_of(self.settings.mesher, level_neighbours(&self.lod.view, key));
            self.chunks.insert(key, Chunk::new(levels));
            if !self.lod_uniform(key) {
                let b = if first {
                    self.new_batch(BatchKind::Stream)
                } else {
                    id
                };
                self.bump(key, b);
            }
        }
        self.close_batch(id, edits, now);
        debug_assert!(self.outbox.iter().all(|o| !matches!(o, Out::Removed(_))));
    }
}

impl World {
    /// The view distances [`World::set_view_distance`] accepts, metres: from level 0's radius
    /// to the reach of the coarsest level (`lod0_radius · 2^(levels − 1)`); `None` without
    /// levels of detail.
    pub fn view_distance_range(&self) -> Option<(f64, f64)> {
        self.lod.settings.map(|l| {
            (
                l.lod0_radius,
                l.lod0_radius * f64::from(1u32 << (l.levels - 1)),
            )
        })
    }

    /// Changes how far the view reaches, metres, clamped to
    /// [`World::view_distance_range`]; the next [`World::update`] turns the change into one
    /// view change (one batch, as a viewer's move). Returns the distance set. The number of
    /// levels stays what the world was made with.
    ///
    /// # Errors
    /// [`WorldError::OutOfRange`] (world unchanged) without levels of detail or for a
    /// distance that is not finite.
    pub fn set_view_distance(&mut self, metres: f64) -> Result<f64, crate::WorldError> {
        let Some((lo, hi)) = self.view_distance_range().filter(|_| metres.is_finite()) else {
            return Err(crate::WorldError::OutOfRange {
                name: "view_distance",
                value: if metres.is_finite() {
                    metres.clamp(0.0, u64::MAX as f64) as u64
                } else {
                    u64::MAX
                },
                range: "finite metres, with levels of detail on",
            });
        };
        let d = metres.clamp(lo, hi);
        if let Some(l) = self.lod.settings.as_mut()
            && l.view_distance != d
        {
            l.view_distance = d;
            self.settings.view_distance = d;
            self.restream = true;
        }
        Ok(d)
    }
}
