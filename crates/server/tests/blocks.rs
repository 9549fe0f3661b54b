//! Blocks over the network (issue 10): block ops in the server's order and its regions of
//! interest, collapses decided by the server and mirrored by every client bit for bit,
//! refusals, resume.

use std::time::Duration;

use loam_blocks::{BlockOp, BlockPos, BlockSize, BlocksFile, MaterialTable, PieceState};
use loam_client::{Client, ClientConfig, ClientEvent};
use loam_field::{CsgMode, EditOp};
use loam_protocol::block_hash;
use loam_server::ServerHandle;

use crate::util::{factory, new_flat_world, start, viewer};

pub fn full(x: i32, y: i32, z: i32) -> BlockPos {
    BlockPos::new(BlockSize::Full, [x, y, z]).unwrap()
}

pub fn place(at: BlockPos) -> BlockOp {
    BlockOp::Place {
        at,
        material: MaterialTable::STONE,
        shape: Default::default(),
        paint: None,
    }
}

/// A dig 6 m from the origin, beside the test blocks (they keep their ground).
fn small_dig() -> EditOp {
    EditOp::Sphere {
        mode: CsgMode::Subtract,
        center: [6.0, 0.0, 0.0],
        radius: 1.5,
        material: 0,
        blend: 0.0,
    }
}

pub async fn client(server: &ServerHandle, x: f64) -> Client {
    let cfg = ClientConfig::new(server.url(), viewer(x, 4.0, 0.0, 24.0), factory());
    Client::connect(cfg).await.unwrap()
}

/// Waits for the client's own op `op_id` to come back in the server's order (or be
/// refused: then the reason).
pub async fn confirmed(c: &mut Client, op_id: u64) -> Result<u64, String> {
    let wait = async {
        loop {
            match c.next_event().await.unwrap() {
                ClientEvent::BlockOp {
                    seq,
                    op_id: id,
                    own: true,
                    ..
                }
                | ClientEvent::Op {
                    seq,
                    op_id: id,
                    own: true,
                    ..
                } if id == op_id => return Ok(seq),
                ClientEvent::Refused { op_id: id, reason } if id == op_id => return Err(reason),
                _ => {}
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(30), wait)
        .await
        .expect("the server answers the op within 30 s")
}

/// Waits until the server has pieces and none is falling; returns its block hash and world.
pub async fn settled(server: &ServerHandle) -> ([u8; 32], BlocksFile) {
    for _ in 0..600 {
        let s = server.status().await.unwrap();
        if s.pieces > 0 && s.falling == 0 {
            let (_, hash, file) = server.blocks(None).await.unwrap();
            return (hash, file);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the pieces did not come to rest within 30 s");
}

/// The events queued at a client (those its last calls took in).
async fn drain(c: &mut Client) -> Vec<ClientEvent> {
    let mut seen = Vec::new();
    while let Ok(e) = tokio::time::timeout(Duration::from_millis(20), c.next_event()).await {
        seen.push(e.unwrap());
    }
    seen
}

/// `(piece id, rest pose bits)` of every piece, all of which must be rubble.
fn rubble_bits(pieces: &[loam_blocks::Piece]) -> Vec<(u64, [u32; 7], usize)> {
    pieces
        .iter()
        .map(|p| {
            let PieceState::Rubble { rest } = p.state else {
                panic!("piece {:?} is still falling", p.id);
            };
            assert_eq!(rest, p.pose, "a resting piece lies at its rest pose");
            let b = [
                rest.position[0].to_bits(),
                rest.position[1].to_bits(),
                rest.position[2].to_bits(),
                rest.rotation[0].to_bits(),
                rest.rotation[1].to_bits(),
                rest.rotation[2].to_bits(),
                rest.rotation[3].to_bits(),
            ];
            (p.id.0, b, p.blocks.len())
        })
        .collect()
}

/// Checks that `c` holds exactly the server's blocks: hashes over its region and overall,
/// and the rubble's poses bit for bit.
pub async fn same_as_server(c: &mut Client, server_hash: [u8; 32], file: &BlocksFile) {
    let r = c.sync(false).await.unwrap();
    assert!(
        r.matches(),
        "client {} differs over its region: {r:?}",
        c.id()
    );
    assert_eq!(c.block_hash(None), server_hash, "client {}", c.id());
    let mine: Vec<_> = c.blocks().pieces().cloned().collect();
    assert_eq!(rubble_bits(&mine), rubble_bits(&file.pieces));
    assert_eq!(c.blocks().store().len(), file.blocks.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_block_placed_by_one_client_appears_at_another() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_flat_world(dir.path()), |_| {}).await;
    let mut a = client(&server, 0.0).await;
    let mut b = client(&server, 2.0).await;
    let at = full(1, 0, -2);
    let op_id = a.send_block_op(&place(at)).await.unwrap();
    let seq = confirmed(&mut a, op_id).await.unwrap();
    assert_eq!(seq, 1);
    // B sees it in the server's order, authored by A.
    let seen = loop {
        if let ClientEvent::BlockOp {
            seq, author, op, ..
        } = b.next_event().await.unwrap()
        {
            break (seq, author, op);
        }
    };
    assert_eq!(seen, (1, a.id(), place(at)));
    let block = b.blocks().store().get(at).expect("B holds the block");
    assert_eq!(block.material, MaterialTable::STONE);
    assert!(block.on_ground, "it stands on the flat ground");
    assert_eq!(b.blocks().store().len(), 1);
    let (_, hash, file) = server.blocks(None).await.unwrap();
    assert_eq!(file.blocks.len(), 1);
    assert_eq!(b.block_hash(None), hash);
    assert_eq!(a.block_hash(None), hash);
    assert!(b.sync(false).await.unwrap().matches());

    // Interest: a client 500 m away is not sent the op; moving there, it catches up.
    let mut far = client(&server, 500.0).await;
    drain(&mut far).await;
    let id = a.send_block_op(&place(full(2, 0, -2))).await.unwrap();
    confirmed(&mut a, id).await.unwrap();
    assert!(far.sync(false).await.unwrap().matches());
    let seen = drain(&mut far).await;
    assert!(
        !seen
            .iter()
            .any(|e| matches!(e, ClientEvent::BlockOp { .. })),
        "{seen:?}"
    );
    assert!(far.blocks().store().is_empty());
    far.set_viewer(viewer(1.0, 4.0, 0.0, 24.0)).await.unwrap();
    assert!(far.sync(false).await.unwrap().matches());
    assert_eq!(
        far.blocks().store().len(),
        2,
        "the catch-up brought both blocks"
    );
    assert_eq!(far.block_hash(None), server.blocks(None).await.unwrap().1);
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removed_pillar_drops_the_beam_identically_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_flat_world(dir.path()), |_| {}).await;
    let mut a = client(&server, 0.0).await;
    let mut b = client(&server, 3.0).await;
    // A pillar of two blocks and a beam of three on top, reaching out to the side.
    let cells = [[0, 0, 0], [0, 1, 0], [0, 2, 0], [1, 2, 0], [2, 2, 0]];
    let mut last = 0;
    for c in cells {
        last = a
            .send_block_op(&place(full(c[0], c[1], c[2])))
            .await
            .unwrap();
    }
    confirmed(&mut a, last).await.unwrap();
    assert_eq!(server.status().await.unwrap().blocks, 5);
    let knock = a
        .send_block_op(&BlockOp::Break { at: full(0, 0, 0) })
        .await
        .unwrap();
    confirmed(&mut a, knock).await.unwrap();
    let (hash, file) = settled(&server).await;
    assert!(
        file.blocks.is_empty(),
        "nothing stays held: {:?}",
        file.blocks
    );
    assert_eq!(file.pieces.len(), 1);
    let piece = &file.pieces[0];
    assert_eq!(piece.blocks.len(), 4);
    let PieceState::Rubble { rest } = piece.state else {
        panic!("at rest")
    };
    // It fell: its frame started at the block (0, 1, 0)'s corner, 1 m up.
    assert!(rest.position[1] < 0.9, "rest pose {rest:?}");
    assert_eq!(hash, block_hash_of(&file));
    same_as_server(&mut a, hash, &file).await;
    same_as_server(&mut b, hash, &file).await;
    server.shutdown().await.unwrap();
}

/// The server's hash recomputed from its saved world (the hash covers the records only).
pub fn block_hash_of(file: &BlocksFile) -> [u8; 32] {
    let mut physics = loam_physics::PhysicsWorld::new(Default::default()).unwrap();
    let w = loam_blocks::BlockWorld::load(file.clone(), &mut physics).unwrap();
    block_hash(&w, None, 1.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dig_under_a_tower_collapses_it_identically_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_flat_world(dir.path()), |_| {}).await;
    let mut a = client(&server, 4.0).await;
    let mut b = client(&server, 6.0).await;
    let mut last = 0;
    for y in 0..3 {
        last = a.send_block_op(&place(full(4, y, 0))).await.unwrap();
    }
    confirmed(&mut a, last).await.unwrap();
    // B's block deltas feed a mirror (as the editor keeps one), started mid-stream: the
    // first delta brings what B holds by then.
    b.mirror_blocks(true);
    // B digs the ground away under the tower.
    let dig = undermine_tower();
    let id = b.send_op(1, dig).await.unwrap();
    confirmed(&mut b, id).await.unwrap();
    let (hash, file) = settled(&server).await;
    assert!(file.blocks.is_empty(), "the tower fell: {:?}", file.blocks);
    let fallen: usize = file.pieces.iter().map(|p| p.blocks.len()).sum();
    assert_eq!(fallen, 3);
    for p in &file.pieces {
        let PieceState::Rubble { rest } = p.state else {
            panic!("at rest")
        };
        assert!(rest.position[1] < -0.2, "it fell into the hole: {rest:?}");
    }
    same_as_server(&mut a, hash, &file).await;
    same_as_server(&mut b, hash, &file).await;
    let deltas = b.take_block_deltas();
    assert!(deltas.len() >= 2, "{deltas:?}");
    let mut physics = loam_physics::PhysicsWorld::new(Default::default()).unwrap();
    let mut mirror = loam_blocks::BlockWorld::new(
        MaterialTable::standard(),
        loam_blocks::BlockSettings::default(),
    )
    .unwrap();
    for d in &deltas {
        mirror.apply_delta(&mut physics, d).unwrap();
    }
    assert_eq!(
        block_hash(&mirror, None, 1.0),
        hash,
        "the mirror holds B's blocks"
    );
    assert_eq!(
        rubble_bits(&mirror.pieces().cloned().collect::<Vec<_>>()),
        rubble_bits(&file.pieces)
    );
    assert!(b.take_block_deltas().is_empty(), "taken once");
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_block_op_is_refused_by_its_op_id_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_flat_world(dir.path()), |_| {}).await;
    let mut a = client(&server, 0.0).await;
    let ok = a.send_block_op(&place(full(0, 0, 0))).await.unwrap();
    confirmed(&mut a, ok).await.unwrap();
    let (seq, hash, _) = server.blocks(None).await.unwrap();
    let bad = [
        (place(full(0, 0, 0)), "overlap"),
        (BlockOp::Break { at: full(5, 0, 5) }, "no block"),
        (
            BlockOp::Lump {
                size: BlockSize::Full,
                blocks: vec![loam_blocks::LumpBlock {
                    cell: [0, 9, 0],
                    material: MaterialTable::STONE,
                    paint: None,
                }],
            },
            "made by the server",
        ),
        (place(full(0, -3, 0)), "ground"),
    ];
    for (op, why) in bad {
        let id = a.send_block_op(&op).await.unwrap();
        let reason = confirmed(&mut a, id).await.unwrap_err();
        assert!(
            reason.to_lowercase().contains(why),
            "op {id} ({op:?}) refused because {reason:?}, expected {why:?}"
        );
    }
    let (seq2, hash2, file) = server.blocks(None).await.unwrap();
    assert_eq!((seq2, hash2), (seq, hash), "the refusals changed nothing");
    assert_eq!(file.blocks.len(), 1);
    let s = server.status().await.unwrap();
    assert_eq!((s.accepted, s.refused), (1, 4));
    assert_eq!(a.block_hash(None), hash);
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconnecting_client_resumes_block_ops_by_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_flat_world(dir.path()), |_| {}).await;
    let mut a = client(&server, 0.0).await;
    let mut b = client(&server, 1.0).await;
    let first = a.send_block_op(&place(full(0, 0, 0))).await.unwrap();
    confirmed(&mut a, first).await.unwrap();
    assert!(b.sync(false).await.unwrap().matches());
    drain(&mut b).await;
    let held = b.last_seq();
    assert_eq!(held, 1);
    b.drop_connection();
    // While B is away: a tower, a knocked-out foot (it falls), another block.
    let mut last = 0;
    for y in 1..3 {
        last = a.send_block_op(&place(full(0, y, 0))).await.unwrap();
    }
    confirmed(&mut a, last).await.unwrap();
    let knock = a
        .send_block_op(&BlockOp::Break { at: full(0, 0, 0) })
        .await
        .unwrap();
    confirmed(&mut a, knock).await.unwrap();
    let (hash, file) = settled(&server).await;
    assert!(b.reconnect().await.unwrap(), "resumed, not a snapshot");
    let r = b.sync(false).await.unwrap();
    assert!(r.matches(), "{r:?}");
    let seen = drain(&mut b).await;
    let ops: Vec<u64> = seen
        .iter()
        .filter_map(|e| match e {
            ClientEvent::BlockOp { seq, .. } => Some(*seq),
            _ => None,
        })
        .collect();
    assert_eq!(ops, (held + 1..=held + 3).collect::<Vec<_>>(), "{seen:?}");
    same_as_server(&mut b, hash, &file).await;
    server.shutdown().await.unwrap();
}

/// Block ops made while disconnected wait in the client and go out, in op id order with the
/// terrain ops, when it reconnects: to the same server, and to a restarted one (they were
/// never sent, so they are not lost).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn block_ops_queued_while_disconnected_are_sent_on_reconnect() {
    let dir = tempfile::tempdir().unwrap();
    let world = new_flat_world(dir.path());
    let server = start(&world, |_| {}).await;
    let addr = server.local_addr();
    let mut a = client(&server, 0.0).await;
    a.drop_connection();
    let first = a.queue_block_op(&place(full(0, 0, 0))).await;
    let between = a.queue_op(1, small_dig()).await.unwrap();
    let second = a.queue_block_op(&place(full(0, 1, 0))).await;
    assert!(first < between && between < second);
    assert_eq!((a.pending_block_ops(), a.pending_ops()), (2, 1));
    assert!(a.blocks().store().is_empty(), "block ops are not predicted");
    a.reconnect().await.unwrap();
    assert_eq!(confirmed(&mut a, second).await, Ok(3), "in op id order");
    assert_eq!(a.pending_block_ops(), 0);
    assert_eq!(a.blocks().store().len(), 2);

    // Offline again, and the server restarts before the client is back: the queued op was
    // never sent, so it is sent, not reported lost.
    a.drop_connection();
    let third = a.queue_block_op(&place(full(0, 2, 0))).await;
    server.shutdown().await.unwrap();
    let server = start(&world, |c| c.listen = addr).await;
    a.reconnect().await.unwrap();
    assert_eq!(confirmed(&mut a, third).await, Ok(4));
    let (_, hash, file) = server.blocks(None).await.unwrap();
    assert_eq!(file.blocks.len(), 3);
    assert_eq!(a.block_hash(None), hash);
    server.shutdown().await.unwrap();
}

/// A client away while blocks fell and the server restarted resumes by sequence, not with a
/// snapshot: the terrain ops it missed come as ops, and (the block events before the
/// restart being gone) every block of its region comes whole. It then holds exactly the
/// server's blocks and terrain.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_resumes_across_a_restart_of_a_world_with_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let world = new_flat_world(dir.path());
    let server = start(&world, |_| {}).await;
    let addr = server.local_addr();
    let mut a = client(&server, 0.0).await;
    let mut b = client(&server, 1.0).await;
    let mut last = 0;
    for y in 0..3 {
        last = a.send_block_op(&place(full(0, y, 0))).await.unwrap();
    }
    confirmed(&mut a, last).await.unwrap();
    assert!(b.sync(false).await.unwrap().matches());
    drain(&mut b).await;
    assert_eq!(b.blocks().store().len(), 3);
    b.drop_connection();
    // While B is away: the tower's foot knocked out (it falls), a dig, another block.
    let knock = a
        .send_block_op(&BlockOp::Break { at: full(0, 0, 0) })
        .await
        .unwrap();
    confirmed(&mut a, knock).await.unwrap();
    let dug = a.send_op(1, small_dig()).await.unwrap();
    confirmed(&mut a, dug).await.unwrap();
    let placed = a.send_block_op(&place(full(3, 0, 0))).await.unwrap();
    confirmed(&mut a, placed).await.unwrap();
    settled(&server).await;
    // The server restarts; after it, one more block.
    server.shutdown().await.unwrap();
    let server = start(&world, |c| c.listen = addr).await;
    a.reconnect().await.unwrap();
    let after = a.send_block_op(&place(full(4, 0, 0))).await.unwrap();
    confirmed(&mut a, after).await.unwrap();
    let (hash, file) = settled(&server).await;
    assert!(b.reconnect().await.unwrap(), "resumed, not a snapshot");
    same_as_server(&mut b, hash, &file).await;
    assert_eq!(b.confirmed_field().hash(), a.confirmed_field().hash());
    server.shutdown().await.unwrap();
}

/// Terrain ops that keep changing the chunks around falling pieces (their colliders
/// rebuilt each tick, more than a tick's budget) slow the falls down but never stop them:
/// the tower's pieces drop into the hole dug under it while the ops go on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pieces_keep_falling_while_digs_keep_their_colliders_busy() {
    tower_drops_while_digs_go_on(0).await;
}

/// The same on a machine whose every core another program keeps busy: the ground worker
/// (under `SCHED_IDLE`) gets almost no CPU, and the tower's pieces still drop, because its
/// rests are capped and the ordering thread builds the colliders it has held too long
/// (before, they hung in the air: 3 of 3 runs with two busy loops on 2 cores). Ignored in
/// the parallel run, as it keeps every core busy: `.ci/run` runs it alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "keeps every core busy: run alone (.ci/run does)"]
async fn pieces_fall_on_a_machine_whose_cores_are_all_busy() {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    tower_drops_while_digs_go_on(cores).await;
}

/// Processes (`sh` loops) that keep `n` cores busy until dropped. Processes, not threads
/// of the test: busy threads of the server's own process did not starve its worker. Each
/// loop also ends by itself once the test's process is gone (a test killed by a timeout
/// runs no `Drop`).
struct BusyCores(Vec<std::process::Child>);

impl BusyCores {
    fn start(n: usize) -> Self {
        let mut busy = Self(Vec::new());
        for _ in 0..n {
            let child = std::process::Command::new("sh")
                .args(["-c", "p=$PPID; while kill -0 $p 2>/dev/null; do :; done"])
                .spawn()
                .expect("sh starts");
            // Held (and so killed on a panic) from the moment it runs.
            busy.0.push(child);
        }
        busy
    }
}

impl Drop for BusyCores {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A tower of blocks at x = 4, a client building and digging a bump near it every 8 ms,
/// then the ground dug away under the tower, with `busy_cores` cores kept busy all along:
/// the tower's pieces must drop into the hole within 10 s.
async fn tower_drops_while_digs_go_on(busy_cores: usize) {
    // From the start, and a while before the dig: busy loops started just before it, and
    // not yet spread over the cores, left the worker a core for a while.
    let busy = BusyCores::start(busy_cores);
    if busy_cores > 0 {
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_flat_world(dir.path()), |_| {}).await;
    let mut a = client(&server, 4.0).await;
    let mut digger = client(&server, -2.0).await;
    let mut last = 0;
    for y in 0..3 {
        last = a.send_block_op(&place(full(4, y, 0))).await.unwrap();
    }
    confirmed(&mut a, last).await.unwrap();
    // A bump built and dug again and again where the eight chunks around the origin meet
    // (all loaded for the tower's colliders): every tick has all eight to rebuild.
    let digs = tokio::spawn(async move {
        for i in 0..4000u64 {
            let op = EditOp::Sphere {
                mode: if i % 2 == 0 {
                    CsgMode::Union
                } else {
                    CsgMode::Subtract
                },
                center: [-2.0, 1.0, -2.0],
                radius: 1.5,
                material: 0,
                blend: 0.0,
            };
            if digger.send_op(i + 1, op).await.is_err() {
                break;
            }
            // Its own events, so that its outbox never fills.
            while let Ok(Ok(_)) =
                tokio::time::timeout(Duration::from_millis(1), digger.next_event()).await
            {
            }
            tokio::time::sleep(Duration::from_millis(8)).await;
        }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let dig = undermine_tower();
    let id = a.send_op(1, dig).await.unwrap();
    confirmed(&mut a, id).await.unwrap();
    let start = server.status().await.unwrap();
    let mut lowest = f32::INFINITY;
    for _ in 0..200 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let (_, _, file) = server.blocks(None).await.unwrap();
        lowest = file
            .pieces
            .iter()
            .map(|p| p.pose.position[1])
            .fold(f32::INFINITY, f32::min);
        if lowest < -0.2 {
            break;
        }
        while let Ok(Ok(_)) = tokio::time::timeout(Duration::from_millis(1), a.next_event()).await {
        }
    }
    drop(busy);
    let end = server.status().await.unwrap();
    if busy_cores > 0 {
        // Whether the worker was starved here (chunks rescued) or got a CPU after all.
        eprintln!("{busy_cores} cores busy: {:?}", end.ground);
    }
    assert!(!digs.is_finished(), "the digs went on all along");
    digs.abort();
    assert!(
        lowest < -0.2,
        "the tower's pieces did not drop into the hole in 10 s of digs with {busy_cores} cores \
         kept busy (lowest at {lowest} m): steps {} → {}, {} of {} falling, {:?}",
        start.step,
        end.step,
        end.falling,
        end.pieces,
        end.ground
    );
    server.shutdown().await.unwrap();
}

/// The dig that takes the ground away under the tower of blocks at x = 4.
pub fn undermine_tower() -> EditOp {
    EditOp::Sphere {
        mode: CsgMode::Subtract,
        center: [4.5, -0.5, 0.5],
        radius: 2.5,
        material: 0,
        blend: 0.0,
    }
}

/// A hard box dig covering the samples `lo ..= hi` (1 m voxels) and half a voxel round them.
pub fn box_dig(lo: [i32; 3], hi: [i32; 3]) -> EditOp {
    EditOp::Cuboid {
        mode: CsgMode::Subtract,
        center: [0, 1, 2].map(|a| f64::from(lo[a] + hi[a]) * 0.5),
        half_extents: [0, 1, 2].map(|a| f64::from(hi[a] - lo[a]) * 0.5 + 0.5),
        rotation: [0.0, 0.0, 0.0, 1.0],
        material: 0,
        blend: 0.0,
    }
}

/// A client digs a ring trench round a 3 × 3 pillar and then its base: the server finds the
/// lump (on its ground worker, checked again on the field as it is by then), takes it out of
/// the field with terrain ops of its own, drops it as a lump of 36 blocks, and both clients
/// end with the server's field and rubble, bit for bit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pillar_dug_loose_falls_as_a_lump_on_every_client() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_flat_world(dir.path()), |_| {}).await;
    let mut a = client(&server, 0.0).await;
    let mut b = client(&server, 2.0).await;
    let mut last = 0;
    for (lo, hi) in [
        ([-4, -6, 2], [4, -1, 4]),
        ([-4, -6, -4], [4, -1, -2]),
        ([2, -6, -1], [4, -1, 1]),
        ([-4, -6, -1], [-2, -1, 1]),
        // The base, under the pillar's samples y −4 ..= −1.
        ([-2, -6, -2], [2, -5, 2]),
    ] {
        last = a.send_op(1, box_dig(lo, hi)).await.unwrap();
    }
    confirmed(&mut a, last).await.unwrap();
    let (hash, file) = settled(&server).await;
    let status = server.status().await.unwrap();
    assert_eq!(status.accepted, 5);
    assert_eq!(status.digs_pending, 0);
    assert!(status.made >= 2, "removal digs and the lump: {status:?}");
    assert_eq!(status.seq, status.accepted + status.made);
    // Found by the ground worker, which also built the colliders the lump fell onto.
    let g = status.ground;
    assert!(
        g.searches >= 1 && g.colliders >= 1 && g.busy_us > 0,
        "{g:?}"
    );
    assert!(
        g.cache_misses >= 1,
        "the ground's bricks generated and kept: {g:?}"
    );
    // Each search's lumps and each collider build taken in on the ordering thread, timed.
    let l = status.latency;
    assert!(
        l.ground.count > g.searches,
        "a result per search and per collider job: {l:?}"
    );
    assert_eq!(l.ops.count, 5, "the client's ops, not the server's: {l:?}");
    // Every physics step of this new world ran one at a time between the commands, timed.
    assert!(status.step > 0);
    assert_eq!(l.steps.count, status.step, "{l:?}");
    assert_eq!(file.pieces.len(), 1, "one lump");
    assert_eq!(file.pieces[0].blocks.len(), 36);
    // It dropped into the 2 m hole under it: its lowest corner from y −4.5 to about −6.5.
    let p = &file.pieces[0];
    let lowest = p
        .blocks
        .iter()
        .map(|blk| p.to_world(p.local_min(blk.pos))[1])
        .fold(f64::INFINITY, f64::min);
    assert!((lowest - -6.5).abs() < 0.1, "{lowest}");
    // The pillar's samples are air in the server's field and in both clients'.
    let (_, whole) = server.hash(None).await.unwrap();
    for c in [&mut a, &mut b] {
        same_as_server(c, hash, &file).await;
        assert_eq!(c.confirmed_field().hash(), whole, "client {}", c.id());
        let s = c
            .confirmed_field()
            .sample(loam_field::SamplePos::new(0, -2, 0));
        assert!(s >= 0.5, "the pillar left the field: {s}");
    }
    server.shutdown().await.unwrap();
}
