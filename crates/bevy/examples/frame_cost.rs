//! The main thread's time per frame ([`loam_bevy::FrameCost`]) with the editor's default view,
//! headless: [`LoamPlugins`] in an app without a renderer (no window, no GPU), the default
//! noise world with caves at 1 m voxels, levels of detail out to 2 km, the viewer 20 m above
//! the ground at the origin.
//!
//! Streams the view in, then measures `FRAMES` frames at steady state; then digs balls of
//! radius 4 m at chunk corners near the viewer (eight chunks each), one every 20 frames
//! paced at 60 Hz, and reports the frames that swapped in an edit and how long (frames and
//! milliseconds) each edit took to show.
//!
//! ```text
//! cargo build --workspace --locked --example frame_cost
//! $CARGO_TARGET_DIR/debug/examples/frame_cost [THREADS] [FRAMES] [EDITS]
//! ```
//! (defaults 2 worker threads, 600 frames, 20 edits; `--release` for the release build).
//! The steady frames are not paced: each runs as soon as the previous one ends. The frame
//! figures cover the last [`loam_bevy::FRAMES_KEPT`] frames, so at most the last 30 edits
//! count in them.
//!
//! Without a renderer, Bevy's render systems in the main world (visibility, extraction) are
//! not in these figures; with one, `loam render` prints the same measure for its frames. On a
//! machine without a sound device the first dig's sound logs that none opened (ALSA's lines
//! on Linux).

use std::sync::Arc;
use std::time::{Duration, Instant};

use bevy::prelude::*;
use loam_bevy::prelude::*;
use loam_bevy::{ChunkStats, FrameCost};

fn main() -> std::process::ExitCode {
    let usage = "usage: frame_cost [THREADS] [FRAMES] [EDITS] (whole numbers; THREADS 0 is the cores minus one)";
    let args: Result<Vec<usize>, _> = std::env::args().skip(1).map(|a| a.parse()).collect();
    let args = match args {
        Ok(a) if a.len() <= 3 => a,
        _ => {
            eprintln!("{usage}");
            return std::process::ExitCode::from(2);
        }
    };
    let threads = args.first().copied().unwrap_or(2);
    let frames = args.get(1).copied().unwrap_or(600);
    let edits = args.get(2).copied().unwrap_or(20);

    let generator = Generator::noise(&NoiseTerrainSettings::default(), &CaveSettings::default())
        .expect("default settings are valid");
    let ground = generator.surface_height(0.0, 0.0);
    let field = Field::new(FieldSettings::default(), Arc::new(generator))
        .expect("default settings are valid");
    let settings = WorldSettings {
        threads,
        ..Default::default()
    }
    .with_view_distance(2048.0, 1.0);
    let world = match loam_bevy::prelude::World::new(field, settings) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("{e}\n{usage}");
            return std::process::ExitCode::from(2);
        }
    };

    let mut app = App::new();
    app.add_plugins((MinimalPlugins, AssetPlugin::default(), TransformPlugin))
        .init_asset::<Mesh>()
        .init_asset::<Image>()
        .init_asset::<StandardMaterial>()
        .add_plugins(LoamPlugins)
        .insert_resource(LoamWorld::new(world));
    let eye = Transform::from_xyz(0.0, ground as f32 + 20.0, 0.0);
    app.world_mut()
        .spawn((eye, GlobalTransform::from(eye), LoamViewer));

    let t = Instant::now();
    let mut loading = 0;
    loop {
        app.update();
        loading += 1;
        let w = &app.world().resource::<LoamWorld>().world;
        if w.waiting() == 0 && w.pending_batches() == 0 && w.metrics().queue_depth == 0 {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(1800),
            "the view never loaded"
        );
    }
    let shown = app.world().resource::<ChunkStats>().shown;
    println!(
        "view loaded in {loading} frames, {:.1} s: {shown} chunks shown, {} levels to {:.0} m, {} worker threads",
        t.elapsed().as_secs_f64(),
        settings.lod_levels,
        settings.view_distance,
        settings.worker_count()
    );
    // Fades and late swaps end within a few frames.
    for _ in 0..60 {
        app.update();
    }

    app.world_mut().resource_mut::<FrameCost>().clear();
    for _ in 0..frames {
        app.update();
    }
    let steady = app.world().resource::<FrameCost>().summary();
    println!(
        "steady: p50 {:.2} ms, p99 {:.2} ms over {} frames",
        steady.steady_p50_ms, steady.steady_p99_ms, steady.steady_frames
    );

    app.world_mut().resource_mut::<FrameCost>().clear();
    let mut to_show: Vec<u32> = Vec::new();
    let mut skipped = 0;
    let mut to_show_ms: Vec<f64> = Vec::new();
    let mut upload_max = Duration::ZERO;
    for i in 0..edits {
        // The 25 chunk corners around the viewer, 32 m apart, where a ray from 60 m above
        // the ground's height meets the terrain; then again, a ball lower each round (a dig
        // must change samples to show).
        let (x, z) = (
            32.0 * ((i % 5) as f64 - 2.0),
            32.0 * ((i / 5 % 5) as f64 - 2.0),
        );
        let w = app.world().resource::<LoamWorld>();
        let top = w.world.field().generator().surface_height(x, z) as f32 + 60.0;
        let Some(hit) = w.raycast(Vec3::new(x as f32, top, z as f32), Vec3::NEG_Y, 200.0) else {
            skipped += 1;
            continue;
        };
        let y = hit.position[1] - 6.0 * (i / 25) as f64;
        let before = app.world().resource::<ChunkStats>().edit_groups;
        let out = app
            .world_mut()
            .resource_mut::<LoamWorld>()
            .apply(
                None,
                &EditOp::Sphere {
                    mode: CsgMode::Subtract,
                    center: [x, y, z],
                    radius: 4.0,
                    material: 0,
                    blend: 0.0,
                },
            )
            .expect("a dig within the field's limits");
        if out.changed.is_none() {
            // Nothing there to dig: nothing to show.
            skipped += 1;
            continue;
        }
        let mut n = 0;
        while app.world().resource::<ChunkStats>().edit_groups == before {
            paced(&mut app);
            n += 1;
            let st = app.world().resource::<ChunkStats>();
            upload_max = upload_max.max(st.upload_time_last_frame);
            assert!(n < 10_000, "edit {i} never showed");
        }
        to_show.push(n);
        if let Some(ms) = app.world().resource::<ChunkStats>().last_edit_to_visible_ms {
            to_show_ms.push(ms);
        }
        for _ in n..20 {
            paced(&mut app);
        }
    }
    let e = app.world().resource::<FrameCost>().summary();
    to_show.sort_unstable();
    println!(
        "with edits (the last {} frames): {} frames showed an edit, longest {:.2} ms; other frames p50 {:.2} ms, p99 {:.2} ms",
        e.steady_frames + e.edit_frames,
        e.edit_frames,
        e.edit_max_ms,
        e.steady_p50_ms,
        e.steady_p99_ms
    );
    println!(
        "longest mesh upload in those frames: {:.2} ms",
        upload_max.as_secs_f64() * 1e3
    );
    if !to_show.is_empty() {
        to_show_ms.sort_by(f64::total_cmp);
        println!(
            "from an edit to its swap (all {} edits; {skipped} changed nothing), frames at 60 Hz: median {}, max {}; ms: median {:.1}, max {:.1}",
            to_show.len(),
            to_show[to_show.len() / 2],
            to_show[to_show.len() - 1],
            to_show_ms[to_show_ms.len() / 2],
            to_show_ms[to_show_ms.len() - 1],
        );
    }
    std::process::ExitCode::SUCCESS
}

/// One frame, then a wait to the end of its 1/60 s, as a display at 60 Hz paces frames.
fn paced(app: &mut App) {
    let start = Instant::now();
    app.update();
    if let Some(rest) = Duration::from_secs_f64(1.0 / 60.0).checked_sub(start.elapsed()) {
        std::thread::sleep(rest);
    }
}
