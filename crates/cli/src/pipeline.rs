//! Running a session's timeline through the chunk pipeline: frames at the session's frame
//! length, ops at their times, viewers along their paths.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use loam_field::{ChunkKey, Field, LogEntry, SampleBox};
use loam_mesh::Mesher;
use loam_world::{IDLE_TIMEOUT, PullBudget, Shown, Viewer, World, chunks_reading};

use crate::session::Session;
use crate::timeline::{ViewerPath, Waypoint, op_times};

/// How to run the timeline.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Worker threads (0: the default).
    pub threads: usize,
    /// The mesher.
    pub mesher: Mesher,
    /// Pace frames in real time (sleep to each frame's start) instead of back to back.
    pub realtime: bool,
    /// Chunk meshes pulled per frame at most (a group is never split).
    pub pull_chunks: usize,
    /// Show a progress bar (on a terminal) for timelines longer than this many frames.
    pub progress_after_frames: u64,
    /// Levels of detail out to this many metres (`WorldSettings::with_view_distance`); 0 keeps
    /// the session's level-0 view.
    pub view_distance: f64,
}

/// The outcome of a run.
pub struct Run {
    /// The world after the last frame, every chunk built and pulled.
    pub world: World,
    /// What a front end would show.
    pub shown: Shown,
    /// Chunks whose grid held a sample some op changed.
    pub edited: BTreeSet<ChunkKey>,
    /// Samples changed, summed over ops.
    pub samples_changed: u64,
    /// The box of every changed sample.
    pub changed_box: Option<SampleBox>,
    /// Milliseconds spent inside `World::apply`.
    pub apply_ms: f64,
    /// Frames run after the initial load.
    pub frames: u64,
}

/// The viewers of a session: its paths, or one viewer standing at the first op's centre (or
/// 2 m above the ground at the origin).
pub fn viewer_paths(session: &Session, field: &Field) -> Vec<ViewerPath> {
    if !session.viewers.is_empty() {
        return session.viewers.clone();
    }
    let position = session.ops.iter().find_map(|o| o.op.center()).unwrap_or([
        0.0,
        field.generator().surface_height(0.0, 0.0) + 2.0,
        0.0,
    ]);
    vec![ViewerPath {
        path: vec![Waypoint { t: 0.0, position }],
    }]
}

/// Runs `session`'s timeline over `field` (the session's world before any op), calling
/// `on_op` with every op's log entry once it is applied (a world file appends it there).
///
/// # Errors
/// A rejected op (named by its index), a worker thread that could not start, or a pipeline
/// that did not finish building within [`IDLE_TIMEOUT`].
pub fn run(
    field: Field,
    session: &Session,
    opts: Options,
    on_op: &mut dyn FnMut(&LogEntry) -> anyhow::Result<()>,
) -> anyhow::Result<Run> {
    let paths = viewer_paths(session, &field);
    let viewers_at = |t: f64| -> Vec<Viewer> { paths.iter().map(|p| p.at(t)).collect() };
    let settings = session
        .world
        .settings(opts.threads, opts.mesher)
        .with_view_distance(opts.view_distance, field.settings().voxel_size);
    let mut world = World::new(field, settings).context("starting the chunk pipeline")?;
    let mut shown = Shown::default();

    // Initial load (a loading screen): everything around the viewers at t = 0.
    world.update(&viewers_at(0.0));
    if !world.wait_idle(IDLE_TIMEOUT) {
        bail!("the initial load did not finish within {IDLE_TIMEOUT:?}");
    }
    shown.apply(world.pull(PullBudget::ALL))?;

    let frame_s = session.world.frame_s;
    let times = op_times(&session.ops, frame_s);
    let end = times
        .last()
        .copied()
        .unwrap_or(0.0)
        .max(paths.iter().map(ViewerPath::end).fold(0.0, f64::max));
    let frames = (end / frame_s).ceil() as u64 + 1;
    let bar = (frames > opts.progress_after_frames).then(|| {
        let b = indicatif::ProgressBar::new(frames);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} replay [{bar:30}] {pos}/{len} frames, {msg} ({eta} left)",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        b
    });
    let mut run = Run {
        world,
        shown,
        edited: BTreeSet::new(),
        samples_changed: 0,
        changed_box: None,
        apply_ms: 0.0,
        frames,
    };
    let start = Instant::now();
    let mut next_op = 0;
    for f in 0..frames {
        let t = f as f64 * frame_s;
        if opts.realtime {
            let due = Duration::from_secs_f64(t);
            std::thread::sleep(due.saturating_sub(start.elapsed()));
        }
        while next_op < times.len() && times[next_op] <= t + 1e-9 {
            let timed = &session.ops[next_op];
            let op = &timed.op;
            let stroke = timed.stroke.unwrap_or(run.world.next_stroke());
            let a = Instant::now();
            let out = run.world.apply_in_stroke(stroke, op).with_context(|| {
                let json = serde_json::to_string(op).unwrap_or_default();
                format!("op {next_op} {json}")
            })?;
            run.apply_ms += a.elapsed().as_secs_f64() * 1e3;
            on_op(run.world.log().last().expect("the op just logged"))?;
            run.samples_changed += out.samples_changed;
            if let Some(b) = out.changed {
                run.changed_box = Some(run.changed_box.map_or(b, |a| a.union(b)));
                chunks_reading(&b, &mut run.edited);
            }
            next_op += 1;
        }
        run.world.update(&viewers_at(t));
        run.shown
            .apply(run.world.pull(PullBudget::chunks(opts.pull_chunks)))?;
        if let Some(b) = &bar {
            b.inc(1);
            let m = run.world.metrics();
            b.set_message(format!(
                "{next_op}/{} ops, {} chunks waiting",
                times.len(),
                m.chunks_waiting
            ));
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    run.world.update(&viewers_at(end));
    if !run.world.wait_idle(IDLE_TIMEOUT) {
        bail!("the pipeline did not finish building within {IDLE_TIMEOUT:?}");
    }
    run.shown.apply(run.world.pull(PullBudget::ALL))?;
    Ok(run)
}
