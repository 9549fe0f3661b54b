//! Frames for BENCHMARKS.md (issue 50): the chunk pipeline without worker threads, as a
//! browser page runs it ([`WorldSettings::main_thread`]), beside one worker thread, on the
//! generated terrain. A frame is one `World::update` and one `pull`; frames are not paced
//! (the figures count frames and time the updates).
//!
//! - **Initial load**: frames until every chunk in view is built, and how long the updates
//!   took (p50 / max: with a budget of B ms an update lasts about B ms plus one job).
//! - **Digs**: 24 digs (a ball of radius 3 m) along a line near the viewer, one every 10
//!   frames: in how many frames each dig's batch was handed over (1: in the frame that took
//!   it), and how long the updates were.
//!
//! `cargo run --release -p loam-world --example main_thread -- [budget_ms] [view_radius]`
//! (defaults 4 and 4).

use std::sync::Arc;
use std::time::{Duration, Instant};

use loam_field::{CaveSettings, CsgMode, EditOp, Field, FieldSettings, Generator};
use loam_world::{BatchKind, PullBudget, Update, Viewer, World, WorldSettings};

/// p50 and max of `v`, milliseconds.
fn spread(v: &mut [f64]) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], *v.last().unwrap_or(&0.0))
}

fn run(name: &str, settings: WorldSettings, field: &Field, at: [f64; 3]) {
    let mut world = World::new(field.clone(), settings).expect("settings");
    let viewer = [Viewer::at(at)];
    let (mut frames, mut update_ms) = (0u32, Vec::new());
    let start = Instant::now();
    loop {
        let t = Instant::now();
        world.update(&viewer);
        update_ms.push(t.elapsed().as_secs_f64() * 1e3);
        let _ = world.pull(PullBudget::ALL);
        frames += 1;
        if world.metrics().initial_load_s.is_some() {
            break;
        }
        if settings.main_thread.is_none() {
            // Workers build meanwhile: a frame of a 60 Hz loop.
            std::thread::sleep(Duration::from_micros(16_667));
        }
    }
    let load_s = start.elapsed().as_secs_f64();
    let chunks = world.metrics().chunks_loaded;
    let (p50, max) = spread(&mut update_ms);
    println!(
        "{name}: initial load of {chunks} chunks in {frames} frames, {load_s:.2} s; update p50 \
         {p50:.2} ms, max {max:.2} ms"
    );
    // Digs, one every 10 frames; the frame that hands each one over.
    let (mut seen_after, mut update_ms) = (Vec::new(), Vec::new());
    let mut waiting: Option<u32> = None;
    let mut frame = 0u32;
    let mut digs = 0;
    while digs < 24 || waiting.is_some() {
        if waiting.is_none() && frame.is_multiple_of(10) && digs < 24 {
            let d = f64::from(digs);
            let h = field.generator().surface_height(at[0] + d, at[2] + 6.0);
            world
                .apply(&EditOp::Sphere {
                    mode: CsgMode::Subtract,
                    center: [at[0] + d, h, at[2] + 6.0],
                    radius: 3.0,
                    material: 0,
                    blend: 0.0,
                })
                .expect("dig");
            waiting = Some(frame);
            digs += 1;
        }
        let t = Instant::now();
        world.update(&viewer);
        update_ms.push(t.elapsed().as_secs_f64() * 1e3);
        let edit = world
            .pull(PullBudget::ALL)
            .iter()
            .any(|u| matches!(u, Update::Group(g) if g.kind == BatchKind::Edit));
        if let (true, Some(at)) = (edit, waiting) {
            seen_after.push(frame - at + 1);
            waiting = None;
        }
        frame += 1;
        if settings.main_thread.is_none() {
            std::thread::sleep(Duration::from_micros(16_667));
        }
    }
    seen_after.sort_unstable();
    let (p50, max) = spread(&mut update_ms);
    println!(
        "{name}: 24 digs shown after {} frames (p50), {} (max), in frames of {:?}; update p50 \
         {p50:.2} ms, max {max:.2} ms",
        seen_after[seen_after.len() / 2],
        seen_after.last().unwrap(),
        seen_after
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let budget_ms: f64 = args.first().map_or(4.0, |a| a.parse().expect("budget_ms"));
    let radius: u32 = args.get(1).map_or(4, |a| a.parse().expect("view_radius"));
    let g = Generator::noise(&Default::default(), &CaveSettings::default()).expect("generator");
    let field = Field::new(FieldSettings::default(), Arc::new(g)).expect("field");
    let h = field.generator().surface_height(0.0, 0.0);
    let at = [0.0, h + 2.0, 0.0];
    let base = WorldSettings {
        view_radius: radius,
        view_depth: 2,
        ..Default::default()
    };
    run(
        &format!("main thread, {budget_ms} ms a frame"),
        WorldSettings {
            main_thread: Some(Duration::from_secs_f64(budget_ms / 1e3)),
            ..base
        },
        &field,
        at,
    );
    run(
        "one worker thread",
        WorldSettings { threads: 1, ..base },
        &field,
        at,
    );
}
