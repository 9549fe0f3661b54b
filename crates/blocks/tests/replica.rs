//! A replica follows an authority's records (issue 10): the chain reaction and a tipping
//! tower run on the authority, each frame's delta applied to a replica that only plays the
//! falls back; at rest the replica holds the same blocks and rubble bit for bit, and
//! applying deltas twice changes nothing.

use loam_blocks::{BlockDelta, BlockWorld, PieceState};
use loam_physics::{PhysicsSettings, PhysicsWorld};

use crate::damage::{chain_scene, run_chain};
use crate::util::*;

#[test]
fn a_replica_applying_the_deltas_ends_bit_for_bit_like_the_authority() {
    let (mut w, mut physics) = chain_scene();
    let mut rp = physics_with_floor(PhysicsSettings::default());
    let mut replica = BlockWorld::load(w.save(), &mut rp).unwrap();
    w.set_tracking(true);
    let mut deltas: Vec<BlockDelta> = Vec::new();
    let frame = |w: &mut BlockWorld,
                 physics: &mut PhysicsWorld,
                 replica: &mut BlockWorld,
                 rp: &mut PhysicsWorld,
                 deltas: &mut Vec<BlockDelta>| {
        let d = w.take_delta();
        replica.apply_delta(rp, &d).unwrap();
        replica.follow(rp, DT).unwrap();
        if !d.is_empty() {
            deltas.push(d);
        }
        w.step(physics, DT).unwrap();
    };
    // The chain reaction (a block dropped on the top of a column), then a tower whose foot
    // breaks.
    run_chain(&mut w, &mut physics, 0);
    let cells: Vec<_> = (0..6).map(|y| full(-3, y, 0)).collect();
    build(&mut w, &mut physics, &cells, stone());
    for _ in 0..20 {
        frame(&mut w, &mut physics, &mut replica, &mut rp, &mut deltas);
    }
    w.break_block(&mut physics, full(-3, 0, 0)).unwrap();
    let mut frames = 20;
    while !w
        .pieces()
        .all(|p| matches!(p.state, PieceState::Rubble { .. }))
    {
        frame(&mut w, &mut physics, &mut replica, &mut rp, &mut deltas);
        frames += 1;
        assert!(frames < 1500, "still moving");
    }
    let last = w.take_delta();
    replica.apply_delta(&mut rp, &last).unwrap();
    deltas.push(last);

    let (a, r) = (w.save(), replica.save());
    assert!(a.pieces.len() >= 2, "pieces fell: {}", a.pieces.len());
    assert!(
        deltas
            .iter()
            .any(|d| !d.gone.is_empty() || !d.unheld.is_empty())
    );
    assert_eq!(r.blocks, a.blocks, "held blocks");
    assert_eq!(
        r.pieces, a.pieces,
        "pieces and their rest poses, bit for bit"
    );
    // Deltas again, from the middle on: nothing more changes.
    for d in &deltas[deltas.len() / 2..] {
        replica.apply_delta(&mut rp, d).unwrap();
    }
    let again = replica.save();
    assert_eq!((again.blocks, again.pieces), (a.blocks, a.pieces));
    // A bad record changes nothing.
    let mut bad = deltas[0].clone();
    if let Some(h) = bad.held.first_mut() {
        h.block.damage = f32::NAN;
    } else {
        bad.pieces[0].pose.position[0] = f32::INFINITY;
    }
    let before = replica.save();
    assert!(replica.apply_delta(&mut rp, &bad).is_err());
    assert_eq!(replica.save(), before);
}

/// A piece's record sent again (rubble nudged, woken, or sent as a node's events) leaves
/// the held blocks resting on it resting on it in the replica, as they do at the authority:
/// the replica saves and loads, and equals the authority. (The replica used to drop that
/// support with the piece's old body, leaving a block marked on rubble with none under it;
/// a Loam node that made its block world from such a replica could not load it.)
#[test]
fn a_piece_record_again_keeps_what_rests_on_it_in_the_replica() {
    let mut physics = physics_with_floor(PhysicsSettings::default());
    let mut w = block_world();
    w.set_tracking(true);
    let mut rp = physics_with_floor(PhysicsSettings::default());
    let mut replica = block_world();
    let rubble = drop_block(&mut w, &mut physics, full(0, 2, 0));
    settle(&mut w, &mut physics, 300);
    let top = full(0, 1, 0);
    w.place(&mut physics, &flat, top, stone()).unwrap();
    replica.apply_delta(&mut rp, &w.take_delta()).unwrap();
    assert_eq!(replica.rests_on(top).collect::<Vec<_>>(), vec![rubble]);
    // The rubble's record alone, again.
    let again = BlockDelta {
        pieces: vec![w.piece(rubble).unwrap().clone()],
        ..Default::default()
    };
    replica.apply_delta(&mut rp, &again).unwrap();
    assert_eq!(replica.rests_on(top).collect::<Vec<_>>(), vec![rubble]);
    let saved = replica.save();
    assert_eq!(
        (&saved.blocks, &saved.pieces),
        (&w.save().blocks, &w.save().pieces)
    );
    let mut p2 = physics_with_floor(PhysicsSettings::default());
    BlockWorld::load(saved, &mut p2).expect("the replica's save loads");
    // The rubble gone: the block's own record (sent by the authority with it) ends the
    // support.
    let body = w.piece_body(rubble).unwrap();
    physics
        .set_body_velocity(body, [0.0, 0.0, 8.0], [0.0; 3])
        .unwrap();
    for _ in 0..400 {
        w.step(&mut physics, DT).unwrap();
        replica.apply_delta(&mut rp, &w.take_delta()).unwrap();
    }
    let (a, r) = (w.save(), replica.save());
    assert_eq!((&r.blocks, &r.pieces), (&a.blocks, &a.pieces));
    let mut p3 = physics_with_floor(PhysicsSettings::default());
    BlockWorld::load(r, &mut p3).expect("still loads");
}
