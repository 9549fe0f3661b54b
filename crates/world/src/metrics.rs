//! What the pipeline measures about itself.

use serde::Serialize;

/// The 50th and 99th percentile of a list of values (nearest-rank), or 0 for an empty list.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Percentiles {
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
}

impl Percentiles {
    /// Nearest-rank percentiles of `values` (NaNs sort last).
    pub fn of(values: &[f64]) -> Self {
        if values.is_empty() {
            return Self::default();
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let rank = |p: f64| {
            let i = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len());
            v[i - 1]
        };
        Self {
            p50: rank(0.50),
            p99: rank(0.99),
        }
    }
}

/// A snapshot of the pipeline's measurements ([`World::metrics`](crate::World::metrics)).
///
/// JSON (`loam replay --metrics-json`): one object with these keys; times in milliseconds
/// except `initial_load_s`.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Metrics {
    /// From an op's [`World::apply`](crate::World::apply) call to the moment the last chunk
    /// of its batch was built (the batch is ready to pull), ms.
    pub edit_latency_ms: Percentiles,
    /// Worker time per chunk job, filling its grid from the field and meshing it, ms.
    pub mesh_ms_per_chunk: Percentiles,
    /// Samples changed per applied op.
    pub samples_changed_per_edit: Percentiles,
    /// Built meshes thrown away because their chunk's version had moved on (or the chunk was
    /// dropped) before they arrived; never shown.
    pub stale_dropped: u64,
    /// Queued jobs replaced by a newer version of the same chunk before a worker took them.
    pub jobs_superseded: u64,
    /// Most jobs queued at once.
    pub queue_depth_max: usize,
    /// Jobs queued now.
    pub queue_depth: usize,
    /// Chunks loaded now (meshed, waiting, or known to be all air or all solid).
    pub chunks_loaded: usize,
    /// Loaded chunks whose current version is not yet built.
    pub chunks_waiting: usize,
    /// Chunk jobs built (current or stale).
    pub chunks_built: u64,
    /// Batches of edits delivered to the front end.
    pub batches_delivered: u64,
    /// Times an edit batch gave a chunk up before it was built: to a view change of the
    /// levels of detail, or because the chunk left the view. (A newer edit waits for an
    /// older edit's builds, or merges with it; it never takes its chunks.)
    pub batches_released: u64,
    /// Updates at which the ops of a frame waited for an older edit's builds to finish
    /// before forming their batch (`World::seal`; each try counts).
    pub edits_deferred: u64,
    /// Ops applied.
    pub edits: u64,
    /// Seconds from the first update until every chunk then wanted was built, once reached.
    pub initial_load_s: Option<f64>,
    /// Unedited bricks whose generator values are cached now.
    pub generator_cache_bricks: usize,
}

/// Raw measurements kept by the world.
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    pub edit_latency_ms: Vec<f64>,
    pub mesh_ms: Vec<f64>,
    pub samples_changed: Vec<f64>,
    pub stale_dropped: u64,
    pub jobs_superseded: u64,
    pub queue_depth_max: usize,
    pub chunks_built: u64,
    pub batches_delivered: u64,
    pub batches_released: u64,
    pub edits_deferred: u64,
    pub initial_load_s: Option<f64>,
    /// Ops applied since the metrics were last reset.
    pub edits: u64,
    /// The first update (the initial load's start).
    pub started: Option<crate::Instant>,
    /// When the newest chunk job finished (the initial load's end).
    pub last_built: Option<crate::Instant>,
}

/// Most raw values kept per measurement; older ones are dropped first so a long session's
/// percentiles describe its recent part.
const KEEP: usize = 1 << 20;

pub(crate) fn record(list: &mut Vec<f64>, value: f64) {
    if list.len() >= KEEP {
        list.drain(..KEEP / 2);
    }
    list.push(value);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(
            Percentiles::of(&v),
            Percentiles {
                p50: 50.0,
                p99: 99.0
            }
        );
        assert_eq!(Percentiles::of(&[3.0]), Percentiles { p50: 3.0, p99: 3.0 });
        assert_eq!(Percentiles::of(&[]), Percentiles { p50: 0.0, p99: 0.0 });
        assert_eq!(
            Percentiles::of(&[5.0, 1.0]),
            Percentiles { p50: 1.0, p99: 5.0 }
        );
    }
}
