//! The same world and actions give the same pieces and bit-identical rubble; a saved world
//! is restored exactly.

use loam_blocks::{BlockError, BlockWorld, BlocksFile, PieceState};
use loam_physics::{PhysicsSettings, PhysicsWorld};

use crate::damage::{chain_scene, run_chain};
use crate::util::*;

/// The chain reaction plus a leaning tower (a stone column 8 high with an arm of three at
/// the top) whose foot is broken at frame 20, so it tips over; run until everything rests.
/// Returns the record of every frame (new pieces, broken blocks, impacts as bits) and the
/// rubble poses as bits.
fn collapse() -> (Vec<String>, Vec<u32>, BlockWorld, PhysicsWorld) {
    let (mut w, mut physics) = chain_scene();
    let mut cells: Vec<_> = (0..8).map(|y| full(-3, y, 0)).collect();
    cells.extend((0..3).map(|i| full(-4 - i, 7, 0)));
    build(&mut w, &mut physics, &cells, stone());
    let mut record = Vec::new();
    let mut reports = run_chain(&mut w, &mut physics, 20);
    let c = w.break_block(&mut physics, full(-3, 0, 0)).unwrap();
    record.push(format!("break {c:?}"));
    for _ in 0..900 {
        reports.push(w.step(&mut physics, DT).unwrap());
        if w.pieces()
            .all(|p| matches!(p.state, PieceState::Rubble { .. }))
        {
            break;
        }
    }
    for r in &reports {
        let impacts: Vec<_> = r
            .impacts
            .iter()
            .map(|i| {
                (
                    i.piece,
                    i.block,
                    i.target,
                    i.speed.to_bits(),
                    i.point.map(f32::to_bits),
                )
            })
            .collect();
        record.push(format!(
            "{:?} {:?} {:?} {impacts:?}",
            r.changes, r.came_to_rest, r.moved
        ));
    }
    let mut poses = Vec::new();
    for p in w.pieces() {
        assert!(
            matches!(p.state, PieceState::Rubble { .. }),
            "{:?} still moves",
            p.id
        );
        poses.push(p.id.0 as u32);
        poses.extend(p.pose.position.map(f32::to_bits));
        poses.extend(p.pose.rotation.map(f32::to_bits));
    }
    (record, poses, w, physics)
}

#[test]
fn a_replayed_collapse_ends_with_bit_identical_rubble() {
    let (record_a, poses_a, w, _) = collapse();
    let (record_b, poses_b, _, _) = collapse();
    assert_eq!(record_a.len(), record_b.len());
    for (i, (a, b)) in record_a.iter().zip(&record_b).enumerate() {
        assert_eq!(a, b, "frame record {i} differs");
    }
    assert_eq!(poses_a, poses_b);
    // The collapse did something worth comparing: the tower tipped over and the chain ran.
    assert!(w.pieces().count() >= 3);
    let tower = w
        .pieces()
        .find(|p| p.blocks.len() == 10)
        .expect("the tower fell as one piece");
    let w4 = tower.pose.rotation[3].abs();
    assert!(
        w4 < 0.95,
        "the tower should have tipped over: {:?}",
        tower.pose
    );
}

#[test]
fn a_saved_world_is_restored_exactly() {
    let (_, _, w, _) = collapse();
    let file = w.save();
    assert!(!file.pieces.is_empty() && !file.blocks.is_empty());
    let json = serde_json::to_string(&file).unwrap();
    let back: BlocksFile = serde_json::from_str(&json).unwrap();
    assert_eq!(back, file);
    let bytes = rmp_serde::to_vec_named(&file).unwrap();
    let back2: BlocksFile = rmp_serde::from_slice(&bytes).unwrap();
    assert_eq!(back2, file);

    let mut physics = physics_with_floor(PhysicsSettings::default());
    let mut loaded = BlockWorld::load(back, &mut physics).unwrap();
    assert_eq!(loaded.save(), file);
    assert_eq!(loaded.store().revision(), w.store().revision());
    assert_eq!(physics.fixed_count(), w.store().len());
    assert_eq!(physics.body_count(), w.pieces().count());
    // After a first step (which the restored rubble sits out to find its contacts), the
    // rubble sleeps at exactly the saved poses.
    let first = loaded.step(&mut physics, DT).unwrap();
    assert!(
        first.changes.is_empty() && first.moved.is_empty(),
        "{first:?}"
    );
    for p in loaded.pieces() {
        let body = loaded.piece_body(p.id).unwrap();
        let saved = file.pieces.iter().find(|s| s.id == p.id).unwrap();
        let pose = physics.body_pose(body).unwrap();
        assert_eq!(pose.position, saved.pose.position);
        assert_eq!(pose.rotation, saved.pose.rotation);
        assert_eq!(physics.body_sleeping(body), Some(true));
    }
    // The restored rubble lies still.
    for r in run(&mut loaded, &mut physics, 60) {
        assert!(r.changes.is_empty() && r.moved.is_empty(), "{r:?}");
    }
}

#[test]
fn a_bad_save_is_refused_and_changes_nothing() {
    let (_, _, w, _) = collapse();
    let file = w.save();
    let mut physics = PhysicsWorld::new(PhysicsSettings::default()).unwrap();

    let mut overlap = file.clone();
    let mut twin = overlap.blocks[0].clone();
    twin.block.id = loam_blocks::BlockId(overlap.next_block);
    overlap.next_block += 1;
    overlap.blocks.push(twin);
    assert!(matches!(
        BlockWorld::load(overlap, &mut physics),
        Err(BlockError::BadSave { .. })
    ));

    let mut nan = file.clone();
    nan.pieces[0].pose.position[1] = f32::NAN;
    assert!(BlockWorld::load(nan, &mut physics).is_err());

    let mut newer = file.clone();
    newer.version += 1;
    assert!(BlockWorld::load(newer, &mut physics).is_err());

    let mut bad_material = file.clone();
    bad_material.blocks[0].block.material = loam_blocks::MaterialId(200);
    assert!(BlockWorld::load(bad_material, &mut physics).is_err());

    let mut reused = file;
    reused.next_block = 0;
    assert!(BlockWorld::load(reused, &mut physics).is_err());

    assert_eq!(physics.body_count(), 0);
    assert_eq!(physics.fixed_count(), 0);
}
