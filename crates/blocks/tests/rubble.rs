//! Pieces come to rest as rubble; blocks rest on rubble and fall when it moves away;
//! blocks break off rubble.

use loam_blocks::{BlockTarget, ImpactTarget, PieceState};
use loam_physics::PhysicsSettings;

use crate::util::*;

#[test]
fn a_block_resting_only_on_rubble_falls_when_the_rubble_moves_away() {
    let mut physics = physics_with_floor(PhysicsSettings::default());
    let mut w = block_world();
    // A block placed in the air falls at once, lands and comes to rest as rubble.
    let c = w
        .place(&mut physics, &flat, full(0, 3, 0), stone())
        .unwrap();
    assert_eq!(c.new_pieces.len(), 1);
    let rubble = c.new_pieces[0];
    let frames = settle(&mut w, &mut physics, 300);
    assert!(frames < 200, "{frames}");
    let p = w.piece(rubble).unwrap();
    assert!(matches!(p.state, PieceState::Rubble { .. }));
    assert!(
        p.pose.position[1].abs() < 0.01,
        "on the floor: {:?}",
        p.pose
    );

    // A block on top of it rests only on the rubble (the ground is 1 m below).
    let top = full(0, 1, 0);
    let c = w.place(&mut physics, &flat, top, stone()).unwrap();
    assert!(c.new_pieces.is_empty(), "{c:?}");
    let b = w.store().get(top).unwrap();
    assert!(b.on_rubble && !b.on_ground);
    assert_eq!(w.rests_on(top).collect::<Vec<_>>(), vec![rubble]);
    // A second block hangs on it through a face.
    let side = full(1, 1, 0);
    assert!(
        w.place(&mut physics, &flat, side, stone())
            .unwrap()
            .new_pieces
            .is_empty()
    );
    // Quiet frames change nothing.
    for r in run(&mut w, &mut physics, 30) {
        assert!(r.changes.is_empty() && r.moved.is_empty(), "{r:?}");
    }

    // Push the rubble out from under it.
    let body = w.piece_body(rubble).unwrap();
    physics
        .set_body_velocity(body, [0.0, 0.0, 8.0], [0.0; 3])
        .unwrap();
    let reports = run(&mut w, &mut physics, 10);
    let moved_at = reports.iter().position(|r| r.moved.contains(&rubble));
    let fell_at = reports
        .iter()
        .position(|r| !r.changes.new_pieces.is_empty());
    assert!(moved_at.is_some() && moved_at == fell_at, "{reports:?}");
    let fallen = all_new_pieces(&reports);
    assert_eq!(fallen.len(), 1);
    assert_eq!(piece_cells(&w, fallen[0]), vec![top, side]);
    assert!(w.store().is_empty());
    // And it lands on the floor, 1 m lower.
    settle(&mut w, &mut physics, 600);
    let y = lowest_corner(&w, fallen[0]);
    assert!(y.abs() < 0.05, "{y}");
}

#[test]
fn rubble_that_is_nudged_but_stays_keeps_what_rests_on_it() {
    let mut physics = physics_with_floor(PhysicsSettings::default());
    let mut w = block_world();
    let rubble = drop_block(&mut w, &mut physics, full(0, 2, 0));
    settle(&mut w, &mut physics, 300);
    let top = full(0, 1, 0);
    assert!(
        w.place(&mut physics, &flat, top, stone())
            .unwrap()
            .new_pieces
            .is_empty()
    );
    // Wake the rubble without moving it: it stays rubble and keeps holding.
    physics.wake_body(w.piece_body(rubble).unwrap());
    for r in run(&mut w, &mut physics, 60) {
        assert!(r.moved.is_empty() && r.changes.is_empty(), "{r:?}");
    }
    assert!(w.store().get(top).unwrap().on_rubble);
}

#[test]
fn blocks_break_off_rubble_and_what_is_left_splits() {
    // Build a bar that falls as one: hang it on a pillar, then break the pillar.
    let mut w = block_world();
    let mut physics = physics_with_floor(PhysicsSettings::default());
    let mut cells = vec![full(0, 0, 0), full(0, 1, 0)];
    cells.extend((1..4).map(|x| full(x, 1, 0)));
    build(&mut w, &mut physics, &cells, stone());
    let c = w.break_block(&mut physics, full(0, 0, 0)).unwrap();
    assert_eq!(c.new_pieces.len(), 1);
    let bar = c.new_pieces[0];
    settle(&mut w, &mut physics, 600);
    assert_eq!(w.piece(bar).unwrap().blocks.len(), 4);

    // Aim at the bar's second block from above and break it off: two pieces are left.
    let second = w.piece(bar).unwrap().blocks[1].clone();
    let c2 = second.pos.centre();
    let hit = w
        .raycast([c2[0], 10.0, c2[2]], [0.0, -1.0, 0.0], 20.0)
        .unwrap()
        .unwrap();
    assert_eq!(hit.target, BlockTarget::Piece(bar, second.block.id));
    let c = w.break_off(&mut physics, bar, second.block.id).unwrap();
    assert_eq!(c.broken, vec![(second.pos, second.block.id)]);
    assert_eq!(c.removed_pieces, vec![bar]);
    assert_eq!(c.new_pieces.len(), 2);
    let sizes: Vec<usize> = c
        .new_pieces
        .iter()
        .map(|p| w.piece(*p).unwrap().blocks.len())
        .collect();
    assert_eq!(sizes, vec![1, 2]);
    assert!(w.piece(bar).is_none());
    assert!(w.break_off(&mut physics, bar, second.block.id).is_err());
    // The parts stay where they were (rubble) and settle again.
    settle(&mut w, &mut physics, 600);
    for p in &c.new_pieces {
        assert!(w.piece(*p).unwrap().pose.position[1].abs() < 0.05);
    }
}

#[test]
fn pieces_report_landing_impacts() {
    let mut physics = physics_with_floor(PhysicsSettings::default());
    let mut w = block_world();
    // Dropped from 2 m: lands at about √(2 · 9.81 · 2) = 6.3 m/s.
    let piece = drop_block(&mut w, &mut physics, full(0, 2, 0));
    let reports = run(&mut w, &mut physics, 60);
    let impacts: Vec<_> = reports.iter().flat_map(|r| r.impacts.clone()).collect();
    assert!(!impacts.is_empty());
    let first = impacts[0];
    assert_eq!(first.piece, piece);
    assert_eq!(first.target, ImpactTarget::Terrain);
    assert!((first.speed - 6.26).abs() < 0.2, "{first:?}");
    assert!((first.energy - 0.5 * 2400.0 * first.speed * first.speed).abs() < 10.0);
    assert!(first.point[1].abs() < 0.05);
    assert!(reports.iter().all(|r| r.impacts.len() <= 1));
}

/// Restored rubble sleeps through its first step with no contacts yet: when what it rests on
/// goes before that step (a piece broken off, a held block broken), it must still fall, not
/// be put to sleep where it hangs.
#[test]
fn restored_rubble_falls_when_its_support_goes_before_the_first_step() {
    let mut physics = physics_with_floor(PhysicsSettings::default());
    let mut w = block_world();
    // A on the floor, B on A; a held block with C on it.
    let a = drop_block(&mut w, &mut physics, full(0, 2, 0));
    settle(&mut w, &mut physics, 300);
    let b = drop_block(&mut w, &mut physics, full(0, 4, 0));
    build(&mut w, &mut physics, &[full(4, 0, 0)], stone());
    let c = drop_block(&mut w, &mut physics, full(4, 3, 0));
    // D on a held column of two, whose top block will detach as a piece.
    build(
        &mut w,
        &mut physics,
        &[full(8, 0, 0), full(8, 1, 0)],
        stone(),
    );
    let d = drop_block(&mut w, &mut physics, full(8, 4, 0));
    settle(&mut w, &mut physics, 600);
    assert!((lowest_corner(&w, b) - 1.0).abs() < 0.05);
    assert!((lowest_corner(&w, c) - 1.0).abs() < 0.05);
    assert!((lowest_corner(&w, d) - 2.0).abs() < 0.05);

    let mut physics = physics_with_floor(PhysicsSettings::default());
    let mut w = loam_blocks::BlockWorld::load(w.save(), &mut physics).unwrap();
    let a_block = w.piece(a).unwrap().blocks[0].block.id;
    w.break_off(&mut physics, a, a_block).unwrap();
    w.break_block(&mut physics, full(4, 0, 0)).unwrap();
    let fell = w.break_block(&mut physics, full(8, 0, 0)).unwrap();
    assert_eq!(fell.new_pieces.len(), 1);
    run(&mut w, &mut physics, 120);
    for p in [b, c] {
        let y = lowest_corner(&w, p);
        assert!(y.abs() < 0.05, "{p:?} hangs at {y}");
    }
    // D rides the detached block down to the floor, a metre lower.
    let y = lowest_corner(&w, d);
    assert!((y - 1.0).abs() < 0.1, "{d:?} at {y}");
}

/// Terrain built over rubble buries it: a piece whose every block has its centre half its
/// edge or more inside the ground after a terrain change in its region is removed (what
/// rested on it now rests on that ground); a piece covered less, or outside the changed
/// region, stays. (Left in, a
/// buried piece sank through the ground, whose collider is only its surface, down to the
/// fall limit, 1 000 m below: on a server under digs and builds, dozens at once, each
/// asking for the collider of every chunk on its way.)
#[test]
fn rubble_that_terrain_is_built_over_is_buried() {
    use loam_blocks::WorldBox;
    let mut physics = physics_with_floor(PhysicsSettings::default());
    let mut w = block_world();
    let a = drop_block(&mut w, &mut physics, full(0, 3, 0));
    let b = drop_block(&mut w, &mut physics, full(5, 3, 0));
    settle(&mut w, &mut physics, 300);
    // A block resting only on rubble `a`.
    let top = full(0, 1, 0);
    build(&mut w, &mut physics, &[top], stone());
    assert!(w.store().get(top).unwrap().on_rubble);

    // The ground raised to 0.9 m west of x = 3 (`a`'s centre, 0.5 m up, 0.4 m under it,
    // not buried by that margin) and to 0.4 m east (`b` not even covered to its centre).
    let c = w
        .terrain_changed(
            &mut physics,
            &|p: [f64; 3]| (p[1] - 0.9) as f32,
            WorldBox {
                min: [-2.0, -1.0, -2.0],
                max: [8.0, 2.0, 2.0],
            },
        )
        .unwrap();
    assert!(c.removed_pieces.is_empty(), "{c:?}");
    // Now to 1.01 m west of x = 3 (over `a`'s centre by 0.51 m) and to 0.4 m east. The
    // held block now stands on the ground that buried its rubble: it stays.
    let raised = |west: f64, east: f64| {
        move |p: [f64; 3]| (p[1] - if p[0] < 3.0 { west } else { east }) as f32
    };
    let everywhere = WorldBox {
        min: [-2.0, -1.0, -2.0],
        max: [8.0, 2.0, 2.0],
    };
    let c = w
        .terrain_changed(&mut physics, &raised(1.01, 0.4), everywhere)
        .unwrap();
    assert_eq!(c.removed_pieces, vec![a]);
    assert!(w.piece(a).is_none() && w.piece_body(a).is_none());
    assert!(c.new_pieces.is_empty(), "{c:?}");
    let held = w.store().get(top).unwrap();
    assert!(held.on_ground && !held.on_rubble, "{held:?}");
    assert_eq!(w.rests_on(top).count(), 0);
    assert!(w.piece(b).is_some());

    // Covered, but the change was elsewhere: it stays until a change reaches it.
    let west = WorldBox {
        min: [-2.0, -1.0, -2.0],
        max: [2.0, 2.0, 2.0],
    };
    let c = w
        .terrain_changed(&mut physics, &raised(1.01, 1.01), west)
        .unwrap();
    assert!(!c.removed_pieces.contains(&b), "{c:?}");
    let east = WorldBox {
        min: [4.0, -1.0, -2.0],
        max: [7.0, 2.0, 2.0],
    };
    let c = w
        .terrain_changed(&mut physics, &raised(1.01, 1.01), east)
        .unwrap();
    assert_eq!(c.removed_pieces, vec![b]);
}

/// A hundred blocks dropped over rolling terrain roll into its hollows and pile up there;
/// every one comes to rest (falls asleep: rubble) within 15 s. With Rapier's own sleep
/// speed (0.1 m/s at a body's farthest point) some 40 of them, a pile in one hollow,
/// crept at a few cm/s for as long as anyone watched: a server stepped them and sent their records every step, for
/// minutes after the last op (a fresh-user trial). With Rapier's contact clustering, one
/// block at a time rocked on the curved terrain for as long as it was stepped
/// (`a_block_on_curved_terrain_does_not_rock_forever`).
#[test]
fn a_pile_in_a_hollow_comes_to_rest() {
    use loam_blocks::field_collider;
    use loam_field::{CaveSettings, Field, FieldSettings, Generator, NoiseTerrainSettings};
    let caves = CaveSettings {
        enabled: false,
        ..Default::default()
    };
    let g = Generator::noise(&NoiseTerrainSettings::default(), &caves).unwrap();
    let field = Field::new(FieldSettings::default(), std::sync::Arc::new(g)).unwrap();
    let mut physics = loam_physics::PhysicsWorld::new(PhysicsSettings::default()).unwrap();
    // Wide enough for every block to stay on the terrain as it rolls (32 m chunks).
    for z in -1..5 {
        for y in 0..3 {
            for x in -1..5 {
                physics.set_chunk([x, y, z], field_collider(&field, [x, y, z]));
            }
        }
    }
    let mut w = block_world();
    for i in 0..10 {
        for j in 0..10 {
            drop_block(&mut w, &mut physics, full(3 + i * 5, 80, 3 + j * 5));
        }
    }
    settle(&mut w, &mut physics, 15 * 60);
    // They piled up: some 40 within 4 m of one another in one hollow.
    let at: Vec<[f32; 3]> = w.pieces().map(|p| p.pose.position).collect();
    let near = |a: [f32; 3], b: [f32; 3]| (0..3).map(|i| (a[i] - b[i]).powi(2)).sum::<f32>() < 16.0;
    let most = at
        .iter()
        .map(|&a| at.iter().filter(|&&b| near(a, b)).count())
        .max();
    assert!(most.unwrap() >= 20, "no pile: {most:?}");
    assert!(at.iter().all(|p| p[1] > 30.0), "one fell through");
}

/// A falling piece that sank a whole edge into the ground (here: no collider under
/// analytic ground solid below y = 0, as under terrain built over part of a piece) is
/// taken out by `bury_sunken`, the first step its every block's centre is 1 m deep; one
/// resting on a floor at the ground's surface never is.
#[test]
fn a_piece_sunk_into_the_ground_is_taken_out() {
    let mut bare = loam_physics::PhysicsWorld::new(PhysicsSettings::default()).unwrap();
    let mut w = block_world();
    let sinking = drop_block(&mut w, &mut bare, full(0, 2, 0));
    let mut removed_at = None;
    for f in 0..240 {
        w.step(&mut bare, DT).unwrap();
        let centre = f64::from(w.piece(sinking).unwrap().pose.position[1]) + 0.5;
        let c = w.bury_sunken(&mut bare, &flat).unwrap();
        if !c.removed_pieces.is_empty() {
            assert_eq!(c.removed_pieces, vec![sinking]);
            assert!(centre < -1.0 && centre > -1.5, "taken out at {centre}");
            removed_at = Some(f);
            break;
        }
        assert!(centre >= -1.0, "still there at {centre}");
    }
    assert!(removed_at.is_some() && w.piece(sinking).is_none());

    // On the floor, at the ground's surface: never.
    let mut physics = physics_with_floor(PhysicsSettings::default());
    let mut w = block_world();
    let resting = drop_block(&mut w, &mut physics, full(0, 2, 0));
    for _ in 0..240 {
        w.step(&mut physics, DT).unwrap();
        assert!(w.bury_sunken(&mut physics, &flat).unwrap().is_empty());
    }
    assert!(w.piece(resting).is_some());
}

/// A lone block lying across a few triangles of gently curved terrain (normals 1–5° apart)
/// comes to rest. With Rapier's contact clustering on (its default), the triangles' contact
/// manifolds were merged into one solved along the first one's normal, which jumped as the
/// block rocked: from this pose (where a block of `a_pile_in_a_hollow_comes_to_rest` ended
/// up) it rocked at up to 0.4 m/s at its corners for as long as it was stepped, every
/// swing above the sleep speed.
#[test]
fn a_block_on_curved_terrain_does_not_rock_forever() {
    use loam_blocks::field_collider;
    use loam_field::{CaveSettings, Field, FieldSettings, Generator, NoiseTerrainSettings};
    use loam_physics::{Part, PartShape, Pose};
    let caves = CaveSettings {
        enabled: false,
        ..Default::default()
    };
    let g = Generator::noise(&NoiseTerrainSettings::default(), &caves).unwrap();
    let field = Field::new(FieldSettings::default(), std::sync::Arc::new(g)).unwrap();
    let mut physics = loam_physics::PhysicsWorld::new(PhysicsSettings::default()).unwrap();
    for (x, z) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
        physics.set_chunk([x, 1, z], field_collider(&field, [x, 1, z]));
    }
    // A 1 m stone block (a piece's frame: its lowest corner) lying on the slope at
    // (34.8, 41.3, 37.6).
    let pose = Pose {
        position: [34.293594, 42.300354, 37.08917],
        rotation: [0.37443787, -0.054463394, 0.92212814, -0.08068328],
    };
    let part = Part {
        offset: [0.5; 3],
        shape: PartShape::Cuboid {
            half_extents: [0.5; 3],
        },
        density: 2400.0,
    };
    let body = physics.spawn_compound(pose, &[part], false).unwrap();
    let asleep_at = (0..300).find(|_| {
        physics.step(DT).unwrap();
        physics.body_sleeping(body).unwrap()
    });
    assert!(asleep_at.is_some_and(|f| f < 120), "{asleep_at:?}");
    let moved = physics.body_pose(body).unwrap().position;
    let d: f32 = (0..3).map(|i| (moved[i] - pose.position[i]).powi(2)).sum();
    assert!(d.sqrt() < 0.05, "moved {moved:?}");
}
