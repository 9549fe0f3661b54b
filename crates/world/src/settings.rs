//! Settings of the chunk pipeline.

use std::time::Duration;

use loam_mesh::Mesher;

/// Level-0 chunks reach this many chunks from a viewer when
/// [`WorldSettings::with_view_distance`] turns levels of detail on.
pub const LOD0_RADIUS_CHUNKS: u32 = 4;

/// Settings of a [`World`](crate::World). Every field has a default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorldSettings {
    /// Horizontal view radius in chunks, `[1, 64]`: chunk columns whose centre lies within this
    /// many chunk widths of a viewer (horizontally) are loaded. Default 8.
    pub view_radius: u32,
    /// Layers of chunks loaded below a viewer's own chunk layer (or below a column's highest
    /// ground, where the viewer is above it), `[0, 64]`. Columns are loaded from there up to
    /// their highest ground (generated or edited). Default 4 (128 m at 1 m voxels).
    pub view_depth: u32,
    /// Hysteresis in chunks, `[1, 16]`: a loaded chunk is dropped only once it is this many
    /// chunks beyond the view radius and depth of every viewer. Default 2.
    pub unload_margin: u32,
    /// Worker threads, `[1, 256]`, or 0 for the default: the machine's cores minus one for the
    /// frame, at least 1.
    pub threads: usize,
    /// Builds chunks on the thread that calls [`World::update`](crate::World::update)
    /// instead of on worker threads (a browser page has none; `threads` is then not used):
    /// each update builds queued jobs, edited chunks first, while the next one is expected
    /// to end within this much time (at least one job if any is queued; expected: the mean
    /// of the last jobs), and an op's bricks are generated and packed on that thread too. `[0.1 ms, 1 s]`; `None` (the default): worker threads.
    pub main_thread: Option<Duration>,
    /// The mesher the workers use.
    pub mesher: Mesher,
    /// How long a newer edit waits for an older edit's chunks to be built: the newer ops
    /// form their batch once the older batch is built (so each shows, and a stroke shows its
    /// progress), or, after waiting this long, merge into it and show with it (so a slow
    /// build cannot hold a newer edit back for long). Neither gives a chunk up: no crack
    /// between them. Default 250 ms.
    pub merge_window: Duration,
    /// Unedited bricks whose generator values are kept from chunk fills (128 KiB each), so an
    /// edit copies its new bricks instead of generating them; the farthest from the viewers
    /// go first. `[0, 65536]`, 0 turns the cache off. Default 512 (64 MiB).
    pub generator_cache_bricks: usize,
    /// Memory budget of the undo history, bytes; the oldest strokes are forgotten beyond it.
    /// Default 64 MiB.
    pub history_budget: usize,
    /// Levels of detail, `[0, 12]` (issue 11). 0 (the default) turns level of detail off: only
    /// level-0 chunks, streamed by columns as described above, meshed with `mesher`. With `n ≥ 1`
    /// the world shows chunks of levels 0 to `n − 1` chosen by [`crate::lod::select`]: level 0
    /// within `view_radius` chunks of a viewer (`32 · view_radius · voxel_size` metres), level
    /// `k` within `2^k` times that, the coarsest out to `view_distance`, with 25 % hysteresis;
    /// every chunk is meshed with Transvoxel (transition cells toward finer neighbours,
    /// Lengyel 2010) and `mesher`, `view_depth` and `unload_margin` are not used.
    pub lod_levels: u8,
    /// With level of detail: how far the coarsest chunks reach, metres, `[0, 10⁶]`. Default
    /// 2048.
    pub view_distance: f64,
}

impl Default for WorldSettings {
    fn default() -> Self {
        Self {
            view_radius: 8,
            view_depth: 4,
            unload_margin: 2,
            threads: 0,
            main_thread: None,
            mesher: Mesher::MarchingCubes,
            merge_window: Duration::from_millis(250),
            generator_cache_bricks: 512,
            history_budget: loam_field::History::DEFAULT_BUDGET,
            lod_levels: 0,
            view_distance: 2048.0,
        }
    }
}

/// World settings were rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WorldError {
    /// A setting is out of range.
    #[error("world setting `{name}` = {value} is out of range {range}")]
    OutOfRange {
        /// The setting's name.
        name: &'static str,
        /// Its value.
        value: u64,
        /// The allowed range.
        range: &'static str,
    },
    /// A worker thread could not be started.
    #[error("cannot start a worker thread: {0}")]
    Thread(String),
    /// A field or patch handed to [`crate::World::replace_bricks`] or
    /// [`crate::World::take_patch`] has other settings or another generator than the
    /// world's.
    #[error("the bricks handed over are not of this world")]
    FieldMismatch(#[from] loam_field::PatchError),
}

impl WorldSettings {
    /// Checks every setting.
    ///
    /// # Errors
    /// [`WorldError::OutOfRange`] naming the first bad setting.
    pub fn validate(&self) -> Result<(), WorldError> {
        let check = |name, value: u64, lo: u64, hi: u64, range| {
            if (lo..=hi).contains(&value) {
                Ok(())
            } else {
                Err(WorldError::OutOfRange { name, value, range })
            }
        };
        check("view_radius", self.view_radius.into(), 1, 64, "[1, 64]")?;
        check("view_depth", self.view_depth.into(), 0, 64, "[0, 64]")?;
        check("unload_margin", self.unload_margin.into(), 1, 16, "[1, 16]")?;
        check("threads", self.threads as u64, 0, 256, "0 or [1, 256]")?;
        if let Some(b) = self.main_thread {
            let us = u64::try_from(b.as_micros()).unwrap_or(u64::MAX);
            check("main_thread", us, 100, 1_000_000, "[100, 1000000] µs")?;
        }
        check(
            "generator_cache_bricks",
            self.generator_cache_bricks as u64,
            0,
            65536,
            "[0, 65536]",
        )?;
        let ms = u64::try_from(self.merge_window.as_millis()).unwrap_or(u64::MAX);
        check("merge_window", ms, 0, 10_000, "[0, 10000] ms")?;
        check("lod_levels", self.lod_levels.into(), 0, 12, "[0, 12]")?;
        if !(0.0..=1e6).contains(&self.view_distance) {
            return Err(WorldError::OutOfRange {
                name: "view_distance",
                value: self.view_distance.max(0.0).min(u64::MAX as f64) as u64,
                range: "[0, 1e6] m",
            });
        }
        Ok(())
    }

    /// These settings with levels of detail out to `view_distance` metres, for level-0 voxels
    /// of `voxel_size` metres: level 0 within [`LOD0_RADIUS_CHUNKS`] chunks (or the view
    /// radius, if smaller), and as many levels as it takes for the coarsest, each twice as far
    /// as the one before, to reach the distance, at most [`crate::lod::MAX_LEVELS`] (the view
    /// distance is then cut to what they reach). Unchanged (level 0 only) when the distance is
    /// 0 or within level 0's reach.
    pub fn with_view_distance(mut self, view_distance: f64, voxel_size: f64) -> Self {
        let radius = self.view_radius.min(LOD0_RADIUS_CHUNKS);
        let lod0 = f64::from(radius) * f64::from(loam_field::CHUNK_CELLS) * voxel_size;
        if view_distance <= lod0 {
            return self;
        }
        let levels = (1 + (view_distance / lod0).log2().ceil() as u32)
            .min(u32::from(crate::lod::MAX_LEVELS));
        self.view_radius = radius;
        self.lod_levels = levels as u8;
        // The coarsest level reaches `lod0 · 2^(levels − 1)`: with the levels capped, no further.
        self.view_distance = view_distance.min(lod0 * f64::from(1u32 << (levels - 1)));
        self
    }

    /// The level-of-detail selection these settings give for level-0 voxels of `voxel_size`
    /// metres, or `None` when level of detail is off (`lod_levels` 0).
    pub fn lod(&self, voxel_size: f64) -> Option<crate::lod::LodSettings> {
        (self.lod_levels > 0).then(|| crate::lod::LodSettings {
            levels: self.lod_levels,
            lod0_radius: f64::from(self.view_radius)
                * f64::from(loam_field::CHUNK_CELLS)
                * voxel_size,
            view_distance: self.view_distance,
            hysteresis: 0.25,
        })
    }

    /// The worker count these settings give on this machine: 0 with
    /// [`WorldSettings::main_thread`].
    pub fn worker_count(&self) -> usize {
        if self.main_thread.is_some() {
            return 0;
        }
        match self.threads {
            0 => std::thread::available_parallelism()
                .map_or(1, |n| n.get().saturating_sub(1))
                .max(1),
            n => n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_2_km_view_takes_five_levels_over_128_m_of_level_0() {
        let s = WorldSettings::default().with_view_distance(2048.0, 1.0);
        assert_eq!(
            (s.view_radius, s.lod_levels, s.view_distance),
            (4, 5, 2048.0)
        );
        // Level k reaches 128 · 2^k m: level 4 reaches 2048 m.
        let lod = s.lod(1.0).unwrap();
        assert_eq!(lod.lod0_radius * 16.0, 2048.0);
        // One metre more takes one level more.
        assert_eq!(s.with_view_distance(2049.0, 1.0).lod_levels, 6);
        // Half-metre voxels: level 0 reaches 64 m, so one level more for the same distance.
        let half = WorldSettings::default().with_view_distance(2048.0, 0.5);
        assert_eq!(half.lod_levels, 6);
        half.validate().unwrap();
        // 12 levels reach 128 m · 2^11 = 262 144 m: a longer view is cut there.
        let far = WorldSettings::default().with_view_distance(1e6, 1.0);
        assert_eq!((far.lod_levels, far.view_distance), (12, 262_144.0));
    }

    #[test]
    fn a_main_thread_budget_is_checked_and_takes_the_workers_away() {
        let at = |us| WorldSettings {
            main_thread: Some(Duration::from_micros(us)),
            threads: 4,
            ..Default::default()
        };
        assert_eq!(at(100).validate(), Ok(()));
        assert_eq!(at(1_000_000).validate(), Ok(()));
        assert_eq!(
            at(99).validate(),
            Err(WorldError::OutOfRange {
                name: "main_thread",
                value: 99,
                range: "[100, 1000000] µs"
            })
        );
        assert!(at(1_000_001).validate().is_err());
        assert_eq!(at(100).worker_count(), 0);
        assert_eq!(WorldSettings::default().worker_count().min(1), 1);
    }

    #[test]
    fn no_view_distance_or_a_short_one_keeps_level_0_only() {
        let d = WorldSettings::default();
        assert_eq!(d.with_view_distance(0.0, 1.0), d);
        assert_eq!(d.with_view_distance(100.0, 1.0), d);
    }
}
