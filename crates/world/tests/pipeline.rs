//! Scripted sessions: streaming, edits on chunk faces and corners, towers into unloaded air,
//! mesher switches, thread counts, and case C04.

use std::collections::BTreeSet;
use std::time::Duration;

use loam_field::{ChunkKey, CsgMode, EditOp, SampleBox, SamplePos};
use loam_mesh::Mesher;
use loam_world::{BatchKind, PullBudget, Shown, Update, Viewer, World, chunks_reading};

use crate::util::*;

fn sphere(mode: CsgMode, center: [f64; 3], radius: f64) -> EditOp {
    EditOp::Sphere {
        blend: 0.0,
        mode,
        center,
        radius,
        material: 1,
    }
}

fn groups(updates: &[Update], kind: BatchKind) -> Vec<&loam_world::Group> {
    updates
        .iter()
        .filter_map(|u| match u {
            Update::Group(g) if g.kind == kind => Some(g),
            _ => None,
        })
        .collect()
}

#[test]
fn initial_load_meshes_every_surface_chunk_and_skips_air_and_solid() {
    let base = flat_field(31.5, 1.0);
    let mut world = World::new(base.clone(), small(2)).unwrap();
    let mut shown = Shown::default();
    let v = [Viewer::at([40.0, 40.0, 40.0])];
    let updates = settle(&mut world, &v, &mut shown);
    // Columns within radius 2 of column (1, 1): 13 columns. Ground at 31.5 m with a 1 m band:
    // layers 0 and 1 may hold surface (top = ⌊(32.5 + 1) / 32⌋ = 1); the viewer is in layer 1,
    // so loading starts at layer 0 (view depth 1). Layer 0's cells hold the surface; layer 1
    // reads the solid sample 31 in its halo, so it is built too, and its mesh is empty.
    assert_eq!(world.loaded().count(), 13 * 2);
    assert_eq!(groups(&updates, BatchKind::Stream).len(), 26);
    assert_eq!(assert_matches_scratch(&world, &shown, &base, &[]), 13);
    assert!(shown.meshes().all(|m| m.key.y == 0));
    let m = world.metrics();
    assert_eq!(m.chunks_built, 26);
    assert_eq!(m.stale_dropped, 0);
    assert!(m.initial_load_s.is_some());
}

#[test]
fn case_c04_single_changed_samples_reach_every_reader_in_one_batch() {
    // Ground at 31.5 m and a 1 m band: a dig of radius 1e-9 m at a solid sample of layer 31
    // turns exactly that sample to air (the neighbours' new values round to their old ones),
    // and a build of the same radius at an air sample of layer 32 turns exactly it solid.
    let base = flat_field(31.5, 1.0);
    let mut world = World::new(base.clone(), small(2)).unwrap();
    let mut shown = Shown::default();
    let v = [Viewer::at([32.0, 40.0, 32.0])];
    settle(&mut world, &v, &mut shown);
    let mut ops = Vec::new();
    let cases = [
        (CsgMode::Subtract, [32, 31, 5]),
        (CsgMode::Subtract, [31, 31, 5]),
        (CsgMode::Subtract, [31, 31, 31]),
        (CsgMode::Union, [32, 32, 32]),
    ];
    for (mode, p) in cases {
        let op = sphere(mode, p.map(f64::from), 1e-9);
        let before: Vec<(ChunkKey, u64)> = world
            .loaded()
            .map(|k| (k, world.version(k).unwrap()))
            .collect();
        let out = world.apply(&op).unwrap();
        ops.push(op);
        assert_eq!(out.samples_changed, 1, "{p:?}");
        let point = SamplePos::new(p[0], p[1], p[2]);
        assert_eq!(out.changed, Some(SampleBox::point(point)));
        let updates = settle(&mut world, &v, &mut shown);
        let edits = groups(&updates, BatchKind::Edit);
        assert_eq!(edits.len(), 1, "one batch for {p:?}");
        let got: BTreeSet<ChunkKey> = edits[0].meshes.iter().map(|m| m.key).collect();
        let mut readers = BTreeSet::new();
        chunks_reading(&SampleBox::point(point), &mut readers);
        assert_eq!(got, readers, "{p:?}");
        // Faces: 2 chunks along x, 2 layers (31 is read by layer 1's halo) → 4; the corner
        // samples are read by 8 chunks.
        assert_eq!(got.len(), if p[2] == 5 { 4 } else { 8 }, "{p:?}");
        for (k, old) in before {
            let new = world.version(k).unwrap();
            assert_eq!(new > old, got.contains(&k), "version of {k:?} after {p:?}");
        }
        assert_matches_scratch(&world, &shown, &base, &ops);
    }
}

#[test]
fn scripted_session_equals_from_scratch() {
    let base = noise_field(3);
    let h = base.generator().surface_height(0.0, 0.0);
    let mut world = World::new(base.clone(), small(2)).unwrap();
    let mut shown = Shown::default();
    let mut v = [Viewer::at([0.0, h + 2.0, 0.0])];
    settle(&mut world, &v, &mut shown);
    let mut ops = Vec::new();
    let mut edit = |world: &mut World, op: EditOp| {
        world.apply(&op).unwrap();
        ops.push(op);
    };
    // On a chunk face, on a corner shared by 8 chunks, and two ops in one frame.
    edit(&mut world, sphere(CsgMode::Subtract, [32.0, h, 5.0], 4.0));
    settle(&mut world, &v, &mut shown);
    edit(
        &mut world,
        sphere(
            CsgMode::Subtract,
            [0.0, 32.0 * (h / 32.0).round(), 0.0],
            4.0,
        ),
    );
    edit(
        &mut world,
        sphere(CsgMode::Union, [-3.0, h + 1.0, -30.0], 3.0),
    );
    let u = settle(&mut world, &v, &mut shown);
    assert_eq!(groups(&u, BatchKind::Edit).len(), 1);
    assert_eq!(groups(&u, BatchKind::Edit)[0].ops, 2);
    // A tower rising into unloaded air: balls stacked 4 m apart up to 100 m above ground.
    let top_before = world
        .loaded()
        .filter(|k| (k.x, k.z) == (0, 0))
        .map(|k| k.y)
        .max()
        .unwrap();
    for i in 0..25 {
        edit(
            &mut world,
            sphere(CsgMode::Union, [16.0, h + 4.0 * f64::from(i), 16.0], 3.0),
        );
        if i % 5 == 4 {
            settle(&mut world, &v, &mut shown);
        }
    }
    let top_after = world
        .loaded()
        .filter(|k| (k.x, k.z) == (0, 0))
        .map(|k| k.y)
        .max()
        .unwrap();
    assert!(
        top_after >= top_before + 2,
        "tower layers loaded: {top_before} → {top_after}"
    );
    let tower_top = ChunkKey::new(0, ((h + 96.0) / 32.0).floor() as i32, 0);
    assert!(
        shown.get(tower_top).is_some(),
        "the tower's top chunk is shown"
    );
    // The viewer walks away and back: chunks are dropped beyond the margin and reloaded.
    v[0].position[0] += 32.0 * 4.0;
    let u = settle(&mut world, &v, &mut shown);
    assert!(u.iter().any(|u| matches!(u, Update::Removed(_))));
    assert!(world.loaded().all(|k| k.x >= 1));
    v[0].position[0] -= 32.0 * 4.0;
    settle(&mut world, &v, &mut shown);
    assert_matches_scratch(&world, &shown, &base, &ops);
    // Switching the mesher rebuilds every chunk.
    for mesher in [Mesher::SurfaceNets, Mesher::DualContouring, Mesher::Mc33] {
        world.set_mesher(mesher);
        let u = settle(&mut world, &v, &mut shown);
        assert!(!groups(&u, BatchKind::Rebuild).is_empty());
        assert_matches_scratch(&world, &shown, &base, &ops);
    }
    assert_eq!(world.metrics().stale_dropped, 0, "settled steps never race");
}

#[test]
fn one_two_and_eight_threads_show_the_same_meshes() {
    let base = noise_field(5);
    let h = base.generator().surface_height(10.0, 10.0);
    let ops: Vec<EditOp> = (0..12)
        .map(|i| {
            let t = f64::from(i);
            let mode = if i % 3 == 2 {
                CsgMode::Union
            } else {
                CsgMode::Subtract
            };
            sphere(
                mode,
                [32.0 + 3.0 * t, h - t, 31.5 - 2.0 * t],
                3.0 + 0.25 * t,
            )
        })
        .collect();
    let mut results = Vec::new();
    // 0: no worker threads, the jobs built in each update within 1 ms (a browser page).
    for threads in [1, 2, 8, 0] {
        let settings = if threads == 0 {
            loam_world::WorldSettings {
                main_thread: Some(Duration::from_millis(1)),
                ..small(1)
            }
        } else {
            small(threads)
        };
        assert_eq!(settings.worker_count(), threads);
        let mut world = World::new(base.clone(), settings).unwrap();
        let mut shown = Shown::default();
        let v = [Viewer::at([20.0, h, 20.0])];
        world.update(&v);
        // Edits while the initial load is still running, without waiting.
        for op in &ops {
            world.apply(op).unwrap();
            world.update(&v);
            let u = world.pull(PullBudget::chunks(3));
            check_current(&world, &u);
            shown.apply(u).unwrap();
        }
        settle(&mut world, &v, &mut shown);
        assert_matches_scratch(&world, &shown, &base, &ops);
        let meshes: Vec<(ChunkKey, Vec<[f32; 3]>, Vec<u32>)> = shown
            .meshes()
            .map(|m| (m.key, m.mesh.positions.clone(), m.mesh.indices.clone()))
            .collect();
        results.push(meshes);
    }
    assert!(results[0] == results[1] && results[1] == results[2] && results[2] == results[3]);
}

/// Without worker threads, each update builds at least one queued job on its own thread,
/// the edited chunks before the streaming ones: an edit is ready to pull after the update
/// that took it while most of the initial load still waits, and updates alone (no
/// `wait_idle`) finish the load.
#[test]
fn without_threads_updates_build_edited_chunks_first() {
    let base = flat_field(0.5, 4.0);
    let settings = loam_world::WorldSettings {
        // The least budget: one job an update on any machine that meshes a chunk in more
        // than 0.1 ms, a few more otherwise.
        main_thread: Some(Duration::from_micros(100)),
        ..small(4)
    };
    let mut world = World::new(base.clone(), settings).unwrap();
    let v = [Viewer::at([16.0, 4.0, 16.0])];
    world.update(&v);
    let m = world.metrics();
    assert!(m.chunks_built >= 1, "{m:?}");
    let loaded = m.chunks_loaded;
    assert!(m.queue_depth > 10, "most of the load waits: {m:?}");
    // A build in the air of chunk (0, 0, 0): only that chunk reads its samples.
    let op = sphere(CsgMode::Union, [16.0, 16.0, 16.0], 3.0);
    world.apply(&op).unwrap();
    world.update(&v);
    let updates = world.pull(PullBudget::ALL);
    check_current(&world, &updates);
    let edits = groups(&updates, BatchKind::Edit);
    assert_eq!(edits.len(), 1, "the edit is ready after its update");
    assert_eq!(edits[0].meshes.len(), 1);
    assert!(world.metrics().queue_depth > 5, "{:?}", world.metrics());
    let mut shown = Shown::default();
    shown.apply(updates).unwrap();
    let mut frames = 2;
    while world.metrics().chunks_waiting > 0 {
        world.update(&v);
        shown.apply(world.pull(PullBudget::ALL)).unwrap();
        frames += 1;
        assert!(frames < 10 * loaded + 100, "{:?}", world.metrics());
    }
    assert_eq!(world.metrics().queue_depth, 0);
    assert_matches_scratch(&world, &shown, &base, &[op]);
}

/// The budget of a world without threads changes while it runs (a page with slow frames
/// builds more in each): a larger one builds more jobs in one update; one out of range, or
/// a world with worker threads, is refused and changes nothing.
#[test]
fn the_main_thread_budget_changes_while_the_world_runs() {
    let base = flat_field(0.5, 4.0);
    let settings = loam_world::WorldSettings {
        main_thread: Some(Duration::from_micros(100)),
        ..small(4)
    };
    let mut world = World::new(base.clone(), settings).unwrap();
    let v = [Viewer::at([16.0, 4.0, 16.0])];
    world.update(&v);
    let first = world.metrics().chunks_built;
    let waiting = world.metrics().queue_depth;
    assert!(waiting > 10, "{:?}", world.metrics());
    world
        .set_main_thread_budget(Duration::from_secs(1))
        .unwrap();
    assert_eq!(world.settings().main_thread, Some(Duration::from_secs(1)));
    world.update(&v);
    let second = world.metrics().chunks_built - first;
    assert!(
        second > 10.min(waiting as u64) && second > first,
        "1 s builds more than 0.1 ms: {first} then {second}"
    );
    for bad in [Duration::from_micros(99), Duration::from_millis(1001)] {
        let e = world.set_main_thread_budget(bad).unwrap_err();
        assert!(
            matches!(
                e,
                loam_world::WorldError::OutOfRange {
                    name: "main_thread",
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(world.settings().main_thread, Some(Duration::from_secs(1)));
    }
    let mut threaded = World::new(base, small(1)).unwrap();
    assert!(
        threaded
            .set_main_thread_budget(Duration::from_millis(5))
            .is_err()
    );
    assert_eq!(threaded.settings().main_thread, None);
}

#[test]
fn edits_out_of_view_make_no_batch_and_bad_ops_change_nothing() {
    let base = flat_field(10.0, 2.0);
    let mut world = World::new(base.clone(), small(1)).unwrap();
    let mut shown = Shown::default();
    let v = [Viewer::at([0.0, 12.0, 0.0])];
    settle(&mut world, &v, &mut shown);
    let hash = world.field().hash();
    let bad = sphere(CsgMode::Subtract, [f64::NAN, 10.0, 0.0], 3.0);
    assert!(world.apply(&bad).is_err());
    assert_eq!(world.field().hash(), hash);
    let far = sphere(CsgMode::Subtract, [5000.0, 10.0, 0.0], 3.0);
    world.apply(&far).unwrap();
    let u = settle(&mut world, &v, &mut shown);
    assert!(groups(&u, BatchKind::Edit).is_empty());
    assert_eq!(world.metrics().edits, 1);
    assert_matches_scratch(&world, &shown, &base, &[far]);
}

#[test]
fn picking_reads_the_field_before_the_meshes_catch_up() {
    let base = flat_field(10.0, 2.0);
    let mut world = World::new(base, small(1)).unwrap();
    let mut shown = Shown::default();
    let v = [Viewer::at([5.0, 30.0, 5.0])];
    settle(&mut world, &v, &mut shown);
    let down = [0.0, -1.0, 0.0];
    let hit = world
        .raycast([5.5, 30.0, 5.5], down, 100.0)
        .unwrap()
        .unwrap();
    assert!((hit.position[1] - 10.0).abs() < 1e-5, "{hit:?}");
    assert!((hit.normal[1] - 1.0).abs() < 1e-6);
    // Dig a ball at the hit: the very next ray (no update, no mesh yet) goes into the hole and
    // stops at its bottom, about 10 − 4 m.
    world
        .apply(&sphere(CsgMode::Subtract, hit.position, 4.0))
        .unwrap();
    let deeper = world
        .raycast([5.5, 30.0, 5.5], down, 100.0)
        .unwrap()
        .unwrap();
    assert!((deeper.position[1] - 6.0).abs() < 0.1, "{deeper:?}");
    assert!(world.raycast([f64::NAN, 0.0, 0.0], down, 10.0).is_err());
    assert!(world.raycast([0.0, 30.0, 0.0], [0.0; 3], 10.0).is_err());
    assert_eq!(
        world
            .raycast([0.0, 30.0, 0.0], [0.0, 1.0, 0.0], 10.0)
            .unwrap(),
        None
    );
}

#[test]
fn strokes_undo_and_redo_flow_through_batches() {
    use loam_field::Falloff;
    let base = noise_field(8);
    let h = base.generator().surface_height(10.0, 10.0);
    let mut world = World::new(base.clone(), small(2)).unwrap();
    let mut shown = Shown::default();
    let v = [Viewer::at([10.0, h + 3.0, 10.0])];
    settle(&mut world, &v, &mut shown);
    // Stroke 1: a raise dragged across a chunk border, one op per frame.
    for i in 0..6 {
        let c = [26.0 + 2.0 * f64::from(i), h, 10.0];
        let op = EditOp::Raise {
            center: c,
            radius: 5.0,
            strength: 1.0,
            falloff: Falloff::Smooth,
        };
        world.apply_in_stroke(1, &op).unwrap();
        world.update(&v);
    }
    settle(&mut world, &v, &mut shown);
    let raised = world.field().hash();
    // Stroke 2: paint; then undo stroke 1 while stroke 2 stays.
    let paint = EditOp::Paint {
        center: [0.0, h, 0.0],
        radius: 4.0,
        material: 4,
        falloff: Falloff::Constant,
        threshold: 0.5,
    };
    world.apply_in_stroke(2, &paint).unwrap();
    world.apply(&EditOp::Undo { stroke: 1 }).unwrap();
    let u = settle(&mut world, &v, &mut shown);
    assert_eq!(
        groups(&u, BatchKind::Edit).len(),
        1,
        "paint and undo in one frame, one batch"
    );
    assert_matches_log(&world, &shown, &base);
    let mut only_paint = base.clone();
    only_paint.apply(&paint).unwrap();
    assert_eq!(world.field().hash(), only_paint.hash());
    assert!(
        shown.meshes().any(|m| m.mesh.materials.contains(&4)),
        "painted meshes carry the material"
    );
    world.apply(&EditOp::Redo { stroke: 1 }).unwrap();
    settle(&mut world, &v, &mut shown);
    assert_matches_log(&world, &shown, &base);
    assert_ne!(world.field().hash(), raised, "the paint stays");
    // Bad undo: nothing changes, no batch.
    let hash = world.field().hash();
    assert!(world.apply(&EditOp::Undo { stroke: 9 }).is_err());
    assert!(
        world.apply_in_stroke(1, &paint).is_err(),
        "stroke 1 is closed"
    );
    let u = settle(&mut world, &v, &mut shown);
    assert!(groups(&u, BatchKind::Edit).is_empty());
    assert_eq!(world.field().hash(), hash);
    assert_eq!(world.log().len(), 9);
    assert_eq!(
        world.log().iter().map(|e| e.seq).collect::<Vec<_>>(),
        (1..=9).collect::<Vec<_>>()
    );
}

/// The from-scratch check fails when the shown meshes are not those of the field it is
/// given (so the "equals from scratch" tests can fail).
#[test]
fn verify_shown_catches_a_wrong_mesh() {
    let base = flat_field(10.0, 2.0);
    let mut world = World::new(base.clone(), small(1)).unwrap();
    let mut shown = Shown::default();
    settle(&mut world, &[Viewer::at([0.0, 12.0, 0.0])], &mut shown);
    assert!(loam_world::verify_shown(&world, &shown, &base).is_ok());
    let mut other = base.clone();
    other
        .apply(&sphere(CsgMode::Subtract, [5.0, 10.0, 5.0], 3.0))
        .unwrap();
    assert_eq!(
        loam_world::verify_shown(&world, &shown, &other),
        Err(ChunkKey::new(0, 0, 0))
    );
}

#[test]
fn a_resumed_world_numbers_ops_after_the_saved_ones_and_undoes_their_strokes() {
    let base = flat_field(10.0, 2.0);
    let dig = |x: f64| EditOp::Sphere {
        mode: CsgMode::Subtract,
        center: [x, 10.0, 0.0],
        radius: 2.0,
        material: 0,
        blend: 0.0,
    };
    // A first session: strokes 1 and 5, three ops.
    let mut first = World::new(base.clone(), small(1)).unwrap();
    first.apply_in_stroke(1, &dig(0.0)).unwrap();
    first.apply_in_stroke(5, &dig(6.0)).unwrap();
    first.apply_in_stroke(5, &dig(8.0)).unwrap();
    let (field, history) = (first.field().clone(), first.history().clone());
    let after_first = field.hash();

    let mut second = World::resume(field, history, 3, small(1)).unwrap();
    assert_eq!(
        second.next_stroke(),
        6,
        "above every stroke the history saw"
    );
    assert!(second.log().is_empty());
    second.apply(&EditOp::Undo { stroke: 5 }).unwrap();
    second.apply(&dig(20.0)).unwrap();
    let seqs: Vec<u64> = second.log().iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [4, 5]);
    assert_eq!(second.log()[1].stroke, 6);
    // Undoing the first session's stroke 5 restored what stroke 1 left.
    let mut expect = base.clone();
    expect.apply(&dig(0.0)).unwrap();
    expect.apply(&dig(20.0)).unwrap();
    assert_eq!(second.field().hash(), expect.hash());
    assert_ne!(second.field().hash(), after_first);
}

/// Issue 6: ops leave their bricks decoded and an update packs all but the field's working
/// set (27 bricks), on threads, after the edit's jobs are queued; the meshes are the same as
/// from scratch.
#[test]
fn updates_pack_the_bricks_ops_left_decoded() {
    let base = flat_field(31.5, 1.0);
    let mut world = World::new(base.clone(), small(2)).unwrap();
    let mut shown = Shown::default();
    let v = [Viewer::at([40.0, 40.0, 40.0])];
    settle(&mut world, &v, &mut shown);
    let mut ops = Vec::new();
    // 12 digs at separate chunk corners: 8 bricks each, 96 in all.
    for i in 0..12 {
        let (x, z) = (f64::from(i % 4) * 64.0, f64::from(i / 4) * 64.0);
        let op = sphere(CsgMode::Subtract, [x, 32.0, z], 3.0);
        world.apply(&op).unwrap();
        ops.push(op);
    }
    let hot = world.field().brick_bytes();
    assert!(
        hot >= 90 * (96 << 10),
        "{hot}: the ops left their bricks decoded"
    );
    settle(&mut world, &v, &mut shown);
    let packed = world.field().brick_bytes();
    let n = world.field().brick_count();
    assert!(n >= 90, "{n}");
    assert!(
        packed <= loam_field::DEFAULT_HOT_BRICKS * (96 << 10) + n * (16 << 10),
        "{packed} bytes for {n} bricks"
    );
    assert_matches_scratch(&world, &shown, &base, &ops);
}

#[test]
fn replaced_bricks_rebuild_exactly_their_readers_in_one_batch() {
    // A replica field edited elsewhere (a network client's, say) handed to the world.
    let base = noise_field(5);
    let h = base.generator().surface_height(0.0, 0.0);
    let mut world = World::new(base.clone(), small(2)).unwrap();
    let mut shown = Shown::default();
    let v = [Viewer::at([0.0, h + 2.0, 0.0])];
    settle(&mut world, &v, &mut shown);
    let ops = vec![
        sphere(CsgMode::Subtract, [32.0, h, 5.0], 4.0),
        sphere(CsgMode::Union, [-3.0, h + 1.0, -30.0], 3.0),
        sphere(CsgMode::Union, [16.0, h + 40.0, 16.0], 3.0),
    ];
    let mut replica = world.field().clone();
    for op in &ops {
        replica.apply(op).unwrap();
    }
    let n = world.replace_bricks(&replica).unwrap();
    let every: Vec<_> = replica.bricks().map(|(k, _)| k).collect();
    assert_eq!(n, every, "every brick is new to the world, in key order");
    let u = settle(&mut world, &v, &mut shown);
    let edits = groups(&u, BatchKind::Edit);
    assert_eq!(edits.len(), 1, "one batch for the whole replacement");
    assert_matches_scratch(&world, &shown, &base, &ops);
    assert!(world.log().is_empty(), "the log is not touched");

    // The same field again changes nothing; taking the base back removes every brick.
    assert!(world.replace_bricks(&replica).unwrap().is_empty());
    assert_eq!(world.replace_bricks(&base).unwrap(), n);
    settle(&mut world, &v, &mut shown);
    assert_matches_scratch(&world, &shown, &base, &[]);

    // A patch of named bricks only (a client's changed bricks): the same result, comparing
    // only those; a named brick that did not change is not reported.
    let mut named: std::collections::BTreeSet<_> = every.iter().copied().collect();
    named.insert(loam_field::BrickKey::new(1000, 0, 1000));
    let patch = replica.patch(named.iter().copied());
    assert_eq!(world.take_patch(&patch).unwrap(), n);
    settle(&mut world, &v, &mut shown);
    assert_matches_scratch(&world, &shown, &base, &ops);
    assert!(world.take_patch(&patch).unwrap().is_empty());
    assert!(matches!(
        world.take_patch(&noise_field(5).patch(named.iter().copied())),
        Err(loam_world::WorldError::FieldMismatch(
            loam_field::PatchError::Generator
        ))
    ));
    assert_eq!(world.replace_bricks(&base).unwrap(), n);
    settle(&mut world, &v, &mut shown);

    // A field of another generator is refused and changes nothing.
    let other = noise_field(5);
    assert!(matches!(
        world.replace_bricks(&other),
        Err(loam_world::WorldError::FieldMismatch(_))
    ));
    assert_eq!(world.field().hash(), base.hash());
}

#[test]
fn a_complete_edit_is_handed_over_before_older_streaming_groups() {
    // A front end that pulls one group a frame while the initial load is still waiting in
    // the outbox: the edit comes first, not after hundreds of streaming groups.
    let base = noise_field(4);
    let h = base.generator().surface_height(0.0, 0.0);
    let mut world = World::new(base, small(1)).unwrap();
    let v = [Viewer::at([0.0, h + 2.0, 0.0])];
    world.update(&v);
    assert!(world.wait_idle(Duration::from_secs(120)));
    world
        .apply(&sphere(CsgMode::Subtract, [0.0, h, 0.0], 3.0))
        .unwrap();
    world.update(&v);
    assert!(world.wait_idle(Duration::from_secs(120)));
    let first = world.pull(PullBudget::chunks(1));
    let Some(Update::Group(g)) = first.first() else {
        panic!("a group first: {first:?}");
    };
    assert_eq!(g.kind, BatchKind::Edit);
    assert_eq!(g.ops, 1);
    // The streaming groups follow, each chunk shown once, the edited ones at their new
    // versions.
    let mut shown = Shown::default();
    shown.apply(first).unwrap();
    let rest = world.pull(PullBudget::ALL);
    assert!(groups(&rest, BatchKind::Stream).len() > 4);
    check_current(&world, &rest);
    shown.apply(rest).unwrap();
    assert_eq!(world.pending_batches(), 0);
}

/// A stroke shows its progress: ops one frame apart over the same chunks are shown op by op
/// (each frame's batch once built), not merged into one batch shown when the stroke ends.
/// Whether the second op waited for the first one's builds or came after them, the first
/// edit group to arrive holds the first op alone and shows the field after it, and the
/// groups after it the rest; with a merge window of 10 s nothing merges by age. Before, a
/// newer op took the older batch's chunks over (merged while younger than the window): one
/// group for all four.
#[test]
fn a_stroke_is_shown_op_by_op_not_at_its_end() {
    for mesher in [Mesher::MarchingCubes, Mesher::SurfaceNets] {
        let base = flat_field(10.0, 1.0);
        let settings = loam_world::WorldSettings {
            mesher,
            merge_window: Duration::from_secs(10),
            ..small(2)
        };
        let mut world = World::new(base.clone(), settings).unwrap();
        let mut shown = Shown::default();
        let v = [Viewer::at([0.0, 12.0, 0.0])];
        settle(&mut world, &v, &mut shown);
        let stroke: Vec<EditOp> = (0..4)
            .map(|i| sphere(CsgMode::Subtract, [f64::from(i) * 0.5, 10.0, 30.0], 4.0))
            .collect();
        let mut after_first = base.clone();
        after_first.apply(&stroke[0]).unwrap();
        let mut seen: Vec<usize> = Vec::new();
        // One frame: take one group at most; check the first edit group's picture.
        let frame = |world: &mut World, shown: &mut Shown, seen: &mut Vec<usize>| {
            world.update(&v);
            let u = world.pull(PullBudget::chunks(1));
            check_current(world, &u);
            let ops: Vec<usize> = groups(&u, BatchKind::Edit).iter().map(|g| g.ops).collect();
            shown.apply(u).unwrap();
            if seen.is_empty() && !ops.is_empty() {
                assert_eq!(ops, vec![1], "{mesher:?}: the first edit group");
                assert!(
                    loam_world::verify_shown(world, shown, &after_first).is_ok(),
                    "{mesher:?}: the first group shows the field after the first op"
                );
            }
            seen.extend(&ops);
            !ops.is_empty()
        };
        // One op per frame.
        for op in &stroke {
            world.apply(op).unwrap();
            frame(&mut world, &mut shown, &mut seen);
        }
        // Then frames until everything is shown.
        for n in 0.. {
            assert!(world.wait_idle(Duration::from_secs(60)));
            let got = frame(&mut world, &mut shown, &mut seen);
            if !got && world.pending_batches() == 0 && world.waiting() == 0 {
                break;
            }
            assert!(n < 100, "the stroke never finished showing");
        }
        assert_eq!(seen.iter().sum::<usize>(), 4, "{mesher:?}: {seen:?}");
        assert!(seen.len() >= 2, "{mesher:?}: {seen:?}");
        assert_matches_scratch(&world, &shown, &base, &stroke);
    }
}

/// Vertex colours made on the workers: every mesh built after they are set carries one
/// colour per vertex, the one the function gives for that mesh, its origin and its size; an
/// edit's meshes too; none before they are set.
#[test]
fn workers_colour_the_meshes_they_build() {
    let base = flat_field(31.5, 1.0);
    let mut world = World::new(base, small(2)).unwrap();
    // Red from the height of the vertex in the world, green from the chunk's size.
    let colour = |m: &loam_mesh::MeshBuffer, _: &loam_field::Generator, o: [f64; 3], s: f64| {
        m.positions
            .iter()
            .map(|p| [(o[1] + f64::from(p[1])) as f32, s as f32, 0.0, 1.0])
            .collect::<Vec<_>>()
    };
    world.set_vertex_colors(Some(std::sync::Arc::new(colour)));
    let mut shown = Shown::default();
    let v = [Viewer::at([40.0, 40.0, 40.0])];
    let mut updates = settle(&mut world, &v, &mut shown);
    world
        .apply(&sphere(CsgMode::Subtract, [32.0, 31.5, 32.0], 4.0))
        .unwrap();
    let edit = settle(&mut world, &v, &mut shown);
    assert_eq!(groups(&edit, BatchKind::Edit).len(), 1);
    updates.extend(edit);
    let mut coloured = 0;
    for u in &updates {
        if let Update::Group(g) = u {
            for m in &g.meshes {
                assert_eq!(m.colors.len(), m.mesh.positions.len(), "{:?}", m.key);
                let want = colour(&m.mesh, world.field().generator(), m.origin, 32.0);
                assert_eq!(m.level, 0);
                assert_eq!(&*m.colors, &want[..]);
                coloured += usize::from(!m.colors.is_empty());
            }
        }
    }
    assert!(coloured >= 13, "{coloured}");
    // Unset: the next edit's meshes carry none.
    world.set_vertex_colors(None);
    world
        .apply(&sphere(CsgMode::Union, [32.0, 34.0, 32.0], 2.0))
        .unwrap();
    let edit = settle(&mut world, &v, &mut shown);
    let meshes: Vec<_> = groups(&edit, BatchKind::Edit)
        .into_iter()
        .flat_map(|g| &g.meshes)
        .collect();
    assert!(!meshes.is_empty());
    assert!(meshes.iter().all(|m| m.colors.is_empty()));
}
