//! The client thread with a server on loopback: ops, undo order, blocks, presence,
//! reconnect notes.

use super::*;
use loam_field::{CsgMode, EditOp};
use std::path::Path;
use std::time::Instant;

/// A ball of radius 3 m dug at the ground's height `h` over the origin.
fn dig(h: f64) -> EditOp {
    EditOp::Sphere {
        mode: CsgMode::Subtract,
        center: [0.0, h, 0.0],
        radius: 3.0,
        material: 0,
        blend: 0.0,
    }
}

/// Waits for the client thread's reports until `done` holds for one, taking each field
/// update into `field` (the editor's copy: patches applied as the editor's world applies
/// them); `done` and the result see the field once an update came in this wait.
fn wait_for(
    link: &RemoteLink,
    field: &mut Field,
    done: impl Fn(&RemoteStatus, Option<&Field>) -> bool,
) -> (RemoteStatus, Option<Field>) {
    let start = Instant::now();
    let rx = link.updates.lock().unwrap();
    let mut seen = false;
    loop {
        let u = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("a report from the client thread");
        seen |= u.field.is_some();
        match u.field {
            Some(FieldUpdate::Whole(f)) => *field = f,
            Some(FieldUpdate::Bricks(p)) => {
                field.apply_patch(&p).expect("a patch of the joined world");
            }
            None => {}
        }
        if done(&u.status, seen.then_some(&*field)) {
            return (u.status, seen.then(|| field.clone()));
        }
        assert!(start.elapsed() < Duration::from_secs(60), "{:?}", u.status);
    }
}

/// A server on a new world of `examples/generated.json` in a temporary folder (kept while
/// the returned folder lives), listening on a free loopback port, on its own runtime.
fn serve_new_world() -> (
    tempfile::TempDir,
    tokio::runtime::Runtime,
    loam_server::ServerHandle,
) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.loam");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let loaded = crate::session::load(&root.join("examples/generated.json")).unwrap();
    drop(crate::world::create(&path, &loaded.session, None).unwrap());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut config = loam_server::ServerConfig::new(&path, crate::serve::factory());
    config.listen = "127.0.0.1:0".parse().unwrap();
    let server = rt.block_on(loam_server::serve(config)).unwrap();
    (dir, rt, server)
}

/// A server stopping says why, and the status line keeps saying it while the client
/// tries to reconnect (each failed try replaced it within a second).
#[test]
fn the_reason_a_server_gave_stays_while_reconnecting() {
    let (_dir, rt, server) = serve_new_world();
    let a = connect(&server.url(), "a", None, [0.0, 0.0, 0.0], |_| 16.0).unwrap();
    let mut af = a.field.clone();
    wait_for(&a.link, &mut af, |s, _| s.connected);
    rt.block_on(server.shutdown()).unwrap();
    let (s, _) = wait_for(&a.link, &mut af, |s, _| s.note.starts_with("reconnecting"));
    assert!(!s.connected);
    assert!(
        s.note.contains("after \"")
            && s.note.contains("the server is shutting down")
            && s.note.contains("Connection refused"),
        "{}",
        s.note
    );
}

/// Block ops from the editor go through the client thread to the server's order; the
/// client's block deltas come back in the updates, and a replica applying another
/// editor's deltas in order (as `LoamBlocks` does) ends with the server's blocks.
#[test]
fn block_ops_go_to_the_server_and_come_back_as_deltas() {
    use loam_blocks::{BlockOp, BlockPos, BlockSettings, BlockSize, BlockWorld, MaterialTable};
    let (_dir, rt, server) = serve_new_world();
    let url = server.url();
    let a = connect(&url, "a", None, [0.0, 0.0, 0.0], |_| 64.0).unwrap();
    let b = connect(&url, "b", None, [0.0, 0.0, 0.0], |_| 64.0).unwrap();
    let h = a.field.generator().surface_height(0.0, 0.0);
    // Two blocks in the air above the ground: they fall and come to rest on it.
    for x in [0, 1] {
        let at = BlockPos::new(BlockSize::Full, [x, h.ceil() as i32 + 3, 0]).unwrap();
        (a.link.send)(RemoteCommand::Block {
            op: BlockOp::Place {
                at,
                material: MaterialTable::STONE,
                shape: Default::default(),
                paint: None,
            },
        });
    }
    let mut physics = loam_physics::PhysicsWorld::new(Default::default()).unwrap();
    let mut replica = BlockWorld::new(MaterialTable::standard(), BlockSettings::default()).unwrap();
    let start = Instant::now();
    let rx = b.link.updates.lock().unwrap();
    loop {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the blocks never settled"
        );
        if let Ok(u) = rx.recv_timeout(Duration::from_millis(200)) {
            for d in &u.blocks {
                replica.apply_delta(&mut physics, d).unwrap();
            }
        }
        let (_, hash, file) = rt.block_on(server.blocks(None)).unwrap();
        let settled = !file.pieces.is_empty()
            && file
                .pieces
                .iter()
                .all(|p| matches!(p.state, loam_blocks::PieceState::Rubble { .. }));
        if settled
            && loam_protocol::block_hash(&replica, None, a.field.settings().voxel_size) == hash
        {
            assert_eq!(
                replica.pieces().map(|p| p.blocks.len()).sum::<usize>(),
                2,
                "both blocks fell"
            );
            break;
        }
    }
    drop(rx);
    drop((a, b));
    rt.block_on(server.shutdown()).unwrap();
}

#[test]
fn an_editor_op_goes_to_the_server_and_a_second_editor_sees_it() {
    let (_dir, rt, server) = serve_new_world();
    let url = server.url();

    let a = connect(&url, "a", None, [0.0, 0.0, 0.0], |_| 64.0).unwrap();
    let mut af = a.field.clone();
    let h = a.field.generator().surface_height(0.0, 0.0);
    let before = a.field.hash();
    (a.link.send)(RemoteCommand::Op {
        stroke: 1,
        op: dig(h),
    });
    // The op shows at once (predicted), then comes back in the server's order. Waited for
    // by its sequence number: a ping's answer can report a round trip and nothing pending
    // before the client thread has taken the op at all (seen once under a loaded CI run).
    let (status, field) = wait_for(&a.link, &mut af, |s, f| {
        s.seq >= 1 && s.rtt_ms.is_some() && s.pending == 0 && f.is_some()
    });
    assert!(status.connected);
    assert_eq!(status.seq, 1);
    assert_eq!(status.others_ops, 0);
    let field = field.unwrap();
    let after = field.hash();
    assert_ne!(after, before, "the dig changed the field");
    // The editor's world, made from the joined field, takes the client's bricks.
    let mut world = loam_world::World::new(
        a.field.clone(),
        loam_world::WorldSettings {
            threads: 1,
            ..Default::default()
        },
    )
    .unwrap();
    let viewers = [loam_world::Viewer::at([0.0, h + 14.0, 24.0])];
    world.update(&viewers);
    assert!(world.wait_idle(Duration::from_secs(120)));
    let first = world.pull(loam_world::PullBudget::ALL);
    assert!(!first.is_empty());
    assert!(!world.replace_bricks(&field).unwrap().is_empty());
    assert_eq!(world.field().hash(), after);
    world.update(&viewers);
    assert!(world.wait_idle(Duration::from_secs(120)));
    let edit: Vec<_> = world
        .pull(loam_world::PullBudget::ALL)
        .into_iter()
        .filter_map(|u| match u {
            loam_world::Update::Group(g) if g.kind == loam_world::BatchKind::Edit => Some(g),
            _ => None,
        })
        .collect();
    assert_eq!(edit.len(), 1, "the replaced bricks' chunks, in one batch");
    assert!(!edit[0].meshes.is_empty());

    // A second editor joining later gets the dug field in its snapshot.
    let b = connect(&url, "b", None, [0.0, 0.0, 0.0], |_| 64.0).unwrap();
    let mut bf = b.field.clone();
    assert_eq!(b.field.hash(), after);
    // And sees A's next op as another player's.
    (a.link.send)(RemoteCommand::Op {
        stroke: 2,
        op: EditOp::Sphere {
            mode: CsgMode::Union,
            center: [6.0, h + 1.0, 0.0],
            radius: 2.0,
            material: 0,
            blend: 0.0,
        },
    });
    let (sa, fa) = wait_for(&a.link, &mut af, |s, f| {
        s.seq == 2 && s.pending == 0 && f.is_some()
    });
    let (sb, fb) = wait_for(&b.link, &mut bf, |s, f| s.seq == 2 && f.is_some());
    assert_eq!(sb.others_ops, 1);
    assert_eq!(sa.others_ops, 0);
    assert_eq!(fa.unwrap().hash(), fb.unwrap().hash());
    drop((a, b));
    rt.block_on(server.shutdown()).unwrap();
}

#[test]
fn presence_and_own_undo_go_through_the_client_thread() {
    let (_dir, rt, server) = serve_new_world();
    let url = server.url();
    let a = connect(&url, "ada", None, [0.0, 0.0, 0.0], |_| 64.0).unwrap();
    let mut af = a.field.clone();
    let b = connect(&url, "bob", None, [0.0, 0.0, 0.0], |_| 64.0).unwrap();
    let mut bf = b.field.clone();
    let h = a.field.generator().surface_height(0.0, 0.0);
    let before = a.field.hash();
    let (_, server_before) = rt.block_on(server.hash(None)).unwrap();

    // A's aim reaches B's status as a player.
    let aim = loam_protocol::Aim {
        tool: "cube".into(),
        point: Some([1.0, h, 2.0]),
        radius: 2.5,
    };
    (a.link.send)(RemoteCommand::Presence {
        position: [0.0, h + 10.0, 0.0],
        aim: aim.clone(),
    });
    let (sb, _) = wait_for(&b.link, &mut bf, |s, _| {
        s.players.iter().any(|p| p.aim.as_ref() == Some(&aim))
    });
    assert_eq!(sb.players.len(), 1);
    assert_eq!(sb.players[0].name, "ada");
    assert_eq!(sb.players[0].position, [0.0, h + 10.0, 0.0]);

    // A digs, then undoes its stroke: both fields are back where they were.
    (a.link.send)(RemoteCommand::Op {
        stroke: 1,
        op: dig(h),
    });
    let (sa, fa) = wait_for(&a.link, &mut af, |s, f| {
        s.seq == 1 && s.pending == 0 && f.is_some()
    });
    assert_eq!(sa.undo, (1, 0));
    assert_ne!(fa.unwrap().hash(), before);
    // The undo is not predicted: the field changes with the bricks the server sends
    // after it (a report after the op's own).
    (a.link.send)(RemoteCommand::Undo);
    let back = |f: Option<&Field>| f.is_some_and(|f| f.hash() == before);
    let (sa, _) = wait_for(&a.link, &mut af, |s, f| s.seq == 2 && back(f));
    assert_eq!(sa.undo, (0, 1));
    assert_eq!(sa.pending, 0);
    let (sb, _) = wait_for(&b.link, &mut bf, |s, f| s.seq == 2 && back(f));
    assert_eq!(sb.others_ops, 2);
    let (_, server_hash) = rt.block_on(server.hash(None)).unwrap();
    assert_eq!(server_hash, server_before, "the server's field is back too");

    // B leaving is reported to A.
    drop(b);
    let (sa, _) = wait_for(&a.link, &mut af, |s, _| s.players.is_empty());
    assert!(sa.connected);
    drop(a);
    rt.block_on(server.shutdown()).unwrap();
}

/// Ctrl+Z right after a stroke, before the server has confirmed it, used to be refused
/// by the client (its undo names confirmed strokes) while the editor's journal counted it
/// as undone. The undo now waits for the stroke to come back, and a stroke made behind
/// it waits too, so the server gets them in the editor's order: the first stroke is
/// undone, the second kept.
#[test]
fn an_undo_right_after_a_stroke_waits_for_it_and_keeps_the_order() {
    let (_dir, rt, server) = serve_new_world();
    let url = server.url();
    let a = connect(&url, "a", None, [0.0, 0.0, 0.0], |_| 64.0).unwrap();
    let mut af = a.field.clone();
    let h = a.field.generator().surface_height(0.0, 0.0);
    let dig = |x: f64| EditOp::Sphere {
        mode: CsgMode::Subtract,
        center: [x, h, 0.0],
        radius: 2.0,
        material: 0,
        blend: 0.0,
    };
    // Sent back to back: the undo reaches the client thread while stroke 1 is on its way.
    (a.link.send)(RemoteCommand::Op {
        stroke: 1,
        op: dig(0.0),
    });
    (a.link.send)(RemoteCommand::Undo);
    (a.link.send)(RemoteCommand::Op {
        stroke: 2,
        op: dig(12.0),
    });
    let mut expected = a.field.clone();
    expected.apply(&dig(12.0)).unwrap();
    let (status, field) = wait_for(&a.link, &mut af, |s, f| {
        s.seq == 3 && s.pending == 0 && f.is_some()
    });
    assert_eq!(status.undo, (1, 0), "stroke 2 to undo, nothing to redo");
    let (seq, server_hash) = rt.block_on(server.hash(None)).unwrap();
    assert_eq!(seq, 3);
    assert_eq!(
        server_hash,
        expected.hash(),
        "stroke 1 undone, stroke 2 kept"
    );
    assert_eq!(field.unwrap().hash(), expected.hash());
    drop(a);
    rt.block_on(server.shutdown()).unwrap();
}
