//! [`FrameCost`]: the main thread's time per frame, the figure a frame budget is about.
//!
//! Bevy runs the main schedules (`First` … `Last`) on the main thread, its systems spread over
//! the task pool, and then hands the frame to the render thread (pipelined rendering) or
//! renders it in place. What Loam adds to a frame — streaming, level-of-detail selection,
//! swapping finished meshes in ([`crate::LoamSettings::upload_budget`]), collider updates,
//! the blocks' physics — runs in those schedules, so the wall time from the start of `First`
//! to the end of `Last` is what a game's frame loses to it and to everything else in the
//! app's schedules (measured from a schedule run just before `First` to one just after
//! `Last`). Not counted: the render world's extraction, and the render schedule itself
//! where rendering is not pipelined, which run on the main thread after `Last`. It needs no GPU: a headless render under a software adapter measures the
//! same schedules ([`crate::RenderReport::main_thread`]).
//!
//! Frames that swap in a group of meshes holding an edit are counted apart, since those are
//! the frames with the most work (issue budgets: 4 ms at steady state, 8 ms in a frame that
//! shows an edit).

use std::collections::VecDeque;
use std::time::Duration;

use loam_world::Instant;

use bevy::prelude::*;

use crate::ChunkStats;

/// Frames kept for the figures.
pub const FRAMES_KEPT: usize = 600;

/// The main thread's time in the last [`FRAMES_KEPT`] frames. Added by
/// [`crate::LoamPlugin`]; read it (or [`FrameCost::summary`]) for a HUD or a benchmark.
#[derive(Resource, Debug, Clone, Default)]
pub struct FrameCost {
    /// Per frame, oldest first: the time from the start of `First` to the end of `Last`, and
    /// whether the frame swapped in a group that shows an edit.
    frames: VecDeque<(Duration, bool)>,
    started: Option<Instant>,
    edit_groups_seen: u64,
}

/// Figures over the frames kept, milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FrameCostSummary {
    /// Frames that showed no edit.
    pub steady_frames: usize,
    /// Median main-thread time of those frames.
    pub steady_p50_ms: f64,
    /// 99th percentile (nearest rank) of those frames.
    pub steady_p99_ms: f64,
    /// Frames that swapped in a group showing an edit.
    pub edit_frames: usize,
    /// The longest of those.
    pub edit_max_ms: f64,
}

impl FrameCost {
    /// The figures over the frames kept (zeros where there are none).
    pub fn summary(&self) -> FrameCostSummary {
        let mut steady: Vec<f64> = Vec::new();
        let mut edit_max: f64 = 0.0;
        let mut edits = 0;
        for &(d, edit) in &self.frames {
            let ms = d.as_secs_f64() * 1e3;
            if edit {
                edits += 1;
                edit_max = edit_max.max(ms);
            } else {
                steady.push(ms);
            }
        }
        steady.sort_by(f64::total_cmp);
        FrameCostSummary {
            steady_frames: steady.len(),
            steady_p50_ms: nearest_rank(&steady, 0.50),
            steady_p99_ms: nearest_rank(&steady, 0.99),
            edit_frames: edits,
            edit_max_ms: edit_max,
        }
    }

    /// Forgets the frames kept (e.g. after loading, so that figures are of steady play).
    pub fn clear(&mut self) {
        self.frames.clear();
    }

    fn push(&mut self, d: Duration, edit: bool) {
        if self.frames.len() == FRAMES_KEPT {
            self.frames.pop_front();
        }
        self.frames.push_back((d, edit));
    }
}

/// The value at quantile `q` of ascending `sorted` by the nearest-rank method; 0 when empty.
fn nearest_rank(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Runs before `First` ([`add_to`]).
#[derive(bevy::ecs::schedule::ScheduleLabel, Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct FrameStart;

/// Runs after `Last` ([`add_to`]).
#[derive(bevy::ecs::schedule::ScheduleLabel, Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct FrameEnd;

/// Adds [`FrameCost`] and the two schedules that bracket the main ones to measure it.
pub(crate) fn add_to(app: &mut App) {
    app.init_resource::<FrameCost>()
        .init_schedule(FrameStart)
        .init_schedule(FrameEnd)
        .add_systems(FrameStart, frame_start)
        .add_systems(FrameEnd, frame_end);
    let mut order = app
        .world_mut()
        .resource_mut::<bevy::app::MainScheduleOrder>();
    order.insert_before(First, FrameStart);
    order.insert_after(Last, FrameEnd);
}

fn frame_start(mut cost: ResMut<FrameCost>) {
    cost.started = Some(Instant::now());
}

/// The frame's time, and whether it showed an edit.
fn frame_end(mut cost: ResMut<FrameCost>, stats: Option<Res<ChunkStats>>) {
    let Some(start) = cost.started.take() else {
        return;
    };
    let groups = stats.map_or(0, |s| s.edit_groups);
    let edit = groups != cost.edit_groups_seen;
    cost.edit_groups_seen = groups;
    cost.push(start.elapsed(), edit);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_splits_edit_frames_and_takes_nearest_ranks() {
        let mut c = FrameCost::default();
        for ms in 1..=100u64 {
            c.push(Duration::from_millis(ms), false);
        }
        c.push(Duration::from_millis(7), true);
        c.push(Duration::from_millis(12), true);
        let s = c.summary();
        assert_eq!((s.steady_frames, s.edit_frames), (100, 2));
        assert_eq!((s.steady_p50_ms, s.steady_p99_ms), (50.0, 99.0));
        assert_eq!(s.edit_max_ms, 12.0);
        // Only the newest frames are kept.
        for _ in 0..FRAMES_KEPT {
            c.push(Duration::from_millis(2), false);
        }
        let s = c.summary();
        assert_eq!((s.steady_frames, s.edit_frames), (FRAMES_KEPT, 0));
        assert_eq!(
            (s.steady_p50_ms, s.steady_p99_ms, s.edit_max_ms),
            (2.0, 2.0, 0.0)
        );
        assert_eq!(FrameCost::default().summary(), FrameCostSummary::default());
    }
}
