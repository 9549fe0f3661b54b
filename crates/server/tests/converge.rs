//! Eight clients on loopback make random edits (a third of them at one spot, at the same
//! time), drop and resume, one moves, one stays away past the server's resume window; at the
//! end every client's confirmed field equals the server's over its region, those that see
//! the whole edited area equal it over the whole world, and the world file reloads to the
//! same field.

use std::sync::Arc;
use std::time::Duration;

use loam_client::{Client, ClientConfig, ClientEvent};
use loam_field::{CsgMode, EditOp, Falloff, Field, FieldSettings};
use loam_protocol::Viewer;
use loam_server::ServerHandle;
use loam_store::Store;

use crate::util::{Rng, factory, gen_json, new_world, start, viewer};

/// Ops each client sends.
const OPS: usize = 30;
/// Ops the server keeps for resuming: small, so that a long absence needs a snapshot.
const RESUME_OPS: usize = 48;

#[derive(Debug, Default)]
struct Tally {
    sent: u64,
    confirmed: u64,
    refused: u64,
    lost: u64,
    resumed: u64,
    snapshots: u64,
}

fn random_op(rng: &mut Rng, undo: Option<u64>) -> EditOp {
    if let Some(stroke) = undo {
        return EditOp::Undo { stroke };
    }
    // A third at the same spot, the rest over a 48 m square.
    let (x, z) = if rng.chance(0.33) {
        (rng.range(-0.5, 0.5), rng.range(-0.5, 0.5))
    } else {
        (rng.range(-24.0, 24.0), rng.range(-24.0, 24.0))
    };
    let c = [x, rng.range(-1.0, 1.0), z];
    let r = rng.range(1.0, 3.5);
    match rng.next() % 8 {
        0 | 1 => EditOp::Sphere {
            mode: CsgMode::Subtract,
            center: c,
            radius: r,
            material: 0,
            blend: 0.0,
        },
        2 => EditOp::Sphere {
            mode: CsgMode::Union,
            center: c,
            radius: r,
            material: (rng.next() % 6) as u8 + 1,
            blend: rng.range(0.0, 1.0),
        },
        3 => EditOp::Cuboid {
            mode: CsgMode::Union,
            center: c,
            half_extents: [r, 0.6 * r, 0.8 * r],
            rotation: [0.0, rng.range(-1.0, 1.0), 0.0, 1.0],
            material: 2,
            blend: 0.0,
        },
        4 => EditOp::Raise {
            center: c,
            radius: r,
            strength: 0.5,
            falloff: Falloff::Smooth,
        },
        5 => EditOp::Lower {
            center: c,
            radius: r,
            strength: 0.5,
            falloff: Falloff::Linear,
        },
        6 => EditOp::Smooth {
            center: c,
            radius: r,
            strength: 0.8,
            falloff: Falloff::Smooth,
        },
        _ => EditOp::Paint {
            center: c,
            radius: r,
            material: 5,
            falloff: Falloff::Smooth,
            threshold: 0.3,
        },
    }
}

/// Takes in events for up to `ms` milliseconds.
async fn take_events(c: &mut Client, t: &mut Tally, strokes: &mut Vec<u64>, ms: u64) {
    let until = tokio::time::Instant::now() + Duration::from_millis(ms);
    while let Ok(e) = tokio::time::timeout_at(until, c.next_event()).await {
        match e.expect("the connection holds") {
            ClientEvent::Op {
                own: true, stroke, ..
            } => {
                t.confirmed += 1;
                strokes.push(stroke);
            }
            ClientEvent::Refused { .. } => t.refused += 1,
            ClientEvent::Lost { op_ids } => t.lost += op_ids.len() as u64,
            _ => {}
        }
    }
}

async fn reconnect(c: &mut Client, t: &mut Tally) {
    if c.reconnect().await.expect("reconnects") {
        t.resumed += 1;
    } else {
        t.snapshots += 1;
    }
}

async fn run_client(
    i: usize,
    v: Viewer,
    url: String,
    server: Arc<ServerHandle>,
) -> (usize, Client, Tally) {
    let mut c = Client::connect(ClientConfig::new(url, v, factory()))
        .await
        .unwrap();
    let mut rng = Rng(0xfeed + i as u64);
    let mut t = Tally::default();
    let mut strokes = Vec::new();
    for n in 0..OPS {
        let undo = if rng.chance(0.1) {
            strokes.last().copied()
        } else {
            None
        };
        let op = random_op(&mut rng, undo);
        // Strokes of one to three ops.
        let stroke = (n / (1 + i % 3)) as u64 + 1;
        c.send_op(stroke, op).await.unwrap();
        t.sent += 1;
        let ms = rng.next() % 25;
        take_events(&mut c, &mut t, &mut strokes, ms).await;
        if i == 6 && n == OPS / 2 {
            // Walk east: the bricks of the new part of the view come in.
            c.set_viewer(viewer(30.0, 0.0, -10.0, 10.0)).await.unwrap();
        }
        if i == 7 && n == 4 {
            // Away while more ops pass than the server keeps: a full snapshot on return.
            let away = c.last_seq();
            c.drop_connection();
            let start = tokio::time::Instant::now();
            while server.status().await.unwrap().seq < away + RESUME_OPS as u64 + 10 {
                assert!(
                    start.elapsed() < Duration::from_secs(60),
                    "the others stalled"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            reconnect(&mut c, &mut t).await;
            assert_eq!(t.snapshots, 1, "a long absence takes a snapshot");
        } else if (i == 2 && n == 3) || rng.chance(0.07) {
            c.drop_connection();
            tokio::time::sleep(Duration::from_millis(rng.next() % 250)).await;
            reconnect(&mut c, &mut t).await;
        }
    }
    let start = tokio::time::Instant::now();
    while c.pending_ops() > 0 {
        assert!(start.elapsed() < Duration::from_secs(60), "ops unanswered");
        take_events(&mut c, &mut t, &mut strokes, 50).await;
    }
    (i, c, t)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_clients_converge_through_disconnects() {
    let dir = tempfile::tempdir().unwrap();
    let world = new_world(dir.path());
    let server = Arc::new(
        start(&world, |c| {
            c.resume_ops = RESUME_OPS;
            c.interest_margin_m = 8.0;
        })
        .await,
    );
    // Three see the whole edited area (48 m square plus the ops' reach); five see parts.
    let views = [
        viewer(0.0, 0.0, 0.0, 48.0),
        viewer(2.0, 1.0, -3.0, 48.0),
        viewer(0.0, 0.0, 0.0, 40.0),
        viewer(20.0, 0.0, 20.0, 10.0),
        viewer(-20.0, 0.0, 20.0, 10.0),
        viewer(20.0, 0.0, -20.0, 10.0),
        viewer(-4.0, 0.0, 4.0, 6.0),
        viewer(-20.0, 0.0, -20.0, 12.0),
    ];
    let tasks: Vec<_> = views
        .iter()
        .enumerate()
        .map(|(i, v)| tokio::spawn(run_client(i, *v, server.url(), server.clone())))
        .collect();
    let mut clients = Vec::new();
    for t in tasks {
        clients.push(t.await.unwrap());
    }

    // The last digs' lumps come loose on the server's next tick: wait for it, then nothing
    // changes the field any more.
    let start = tokio::time::Instant::now();
    let status = loop {
        let s = server.status().await.unwrap();
        if s.digs_pending == 0 {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "digs never searched"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let sent: u64 = clients.iter().map(|(_, _, t)| t.sent).sum();
    let confirmed: u64 = clients.iter().map(|(_, _, t)| t.confirmed).sum();
    let refused: u64 = clients.iter().map(|(_, _, t)| t.refused).sum();
    let lost: u64 = clients.iter().map(|(_, _, t)| t.lost).sum();
    let resumed: u64 = clients.iter().map(|(_, _, t)| t.resumed).sum();
    eprintln!(
        "sent {sent}, confirmed {confirmed}, refused {refused}, resumed {resumed}, {status:?}"
    );
    assert_eq!(lost, 0, "the server never restarted");
    // A confirmation or refusal in flight at a drop comes back in the resume (an op) or not
    // at all (a refusal); an op sent again after a drop that the server had taken after all
    // is refused as a duplicate. The server's counts are the truth.
    assert!(status.accepted <= sent && status.accepted + status.refused >= sent);
    // The log also holds the ops the server made (lumps of terrain the digs cut loose).
    assert_eq!(status.seq, status.accepted + status.made);
    assert!(confirmed <= status.accepted && refused <= status.refused);
    assert!(status.accepted >= sent * 3 / 4, "{status:?}");
    assert!(resumed >= 1, "no reconnect resumed");

    let (seq, whole) = server.hash(None).await.unwrap();
    assert_eq!(seq, status.seq);
    for (i, c, _) in &mut clients {
        let report = c.sync(false).await.unwrap();
        assert!(report.matches(), "client {i} differs over its region");
        let region = c.region().unwrap();
        let (_, h) = server.hash(Some(region)).await.unwrap();
        let k = |a: [i32; 3]| loam_field::BrickKey::new(a[0], a[1], a[2]);
        assert_eq!(
            c.confirmed_field()
                .hash_region(k(region.min), k(region.max)),
            h,
            "client {i}"
        );
        // Nothing pending: what the player sees is the server's.
        assert_eq!(c.field().hash_region(k(region.min), k(region.max)), h);
        if *i < 3 {
            assert!(c.sync(true).await.unwrap().matches(), "client {i} whole");
            assert_eq!(c.confirmed_field().hash(), whole, "client {i} whole");
        }
    }
    // The small views did not hold the whole world.
    let partial = clients
        .iter()
        .filter(|(_, c, _)| c.confirmed_field().hash() != whole)
        .count();
    assert!(
        partial >= 1,
        "every client holds everything: interest untested"
    );

    drop(clients);
    let server = Arc::try_unwrap(server).ok().expect("the clients are done");
    server.shutdown().await.unwrap();
    // What the file holds is what the clients saw.
    let mut store = Store::open(&world).unwrap();
    let g = factory()(&gen_json()).unwrap();
    let loaded = store
        .load(Field::new(FieldSettings::default(), Arc::new(g)).unwrap())
        .unwrap();
    assert_eq!(loaded.last_seq, status.seq);
    assert_eq!(loaded.field.hash(), whole);
}

/// A hash is taken where the server marks it in the client's stream and computed beside the
/// ordering of ops: a client that syncs again and again while another client's ops keep
/// changing the bricks it sees matches the server every time, at a sequence number that
/// moves on between the hashes. (About 120 edited bricks make each whole hash long enough
/// for ops to arrive between its mark and its answer.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hashes_taken_while_ops_go_on_match() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&crate::util::new_flat_world(dir.path()), |_| {}).await;
    let config = |name: &str| {
        let mut c = ClientConfig::new(server.url(), viewer(0.0, 0.0, 0.0, 200.0), factory());
        c.name = name.into();
        c
    };
    let mut a = Client::connect(config("a")).await.unwrap();
    let mut b = Client::connect(config("b")).await.unwrap();
    let build = |i: u64, x: f64, z: f64| EditOp::Sphere {
        mode: if i % 3 == 2 {
            CsgMode::Subtract
        } else {
            CsgMode::Union
        },
        center: [x, 0.5, z],
        radius: 1.5,
        material: (i % 4) as u8,
        blend: 0.0,
    };
    // Bricks all over the view: an 11 x 11 grid of places, one brick apart.
    let mut last = 0;
    for i in 0..121u64 {
        let (x, z) = (
            (i % 11) as f64 * 32.0 - 160.0,
            (i / 11) as f64 * 32.0 - 160.0,
        );
        last = b.send_op(i + 1, build(0, x, z)).await.unwrap();
    }
    while !matches!(
        b.next_event().await.unwrap(),
        ClientEvent::Op { op_id, own: true, .. } if op_id == last
    ) {}
    let busy = tokio::spawn(async move {
        for i in 0..2000u64 {
            let op = build(i, (i % 9) as f64 * 3.0 - 12.0, (i % 7) as f64 * 3.0 - 9.0);
            if b.send_op(1000 + i, op).await.is_err() {
                break;
            }
            while let Ok(Ok(_)) =
                tokio::time::timeout(Duration::from_millis(1), b.next_event()).await
            {}
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        b
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut seqs = Vec::new();
    for whole in [true, false].repeat(6) {
        let r = a.sync(whole).await.unwrap();
        assert_eq!(r.server, r.local, "field at seq {} (whole: {whole})", r.seq);
        assert_eq!(r.blocks_server, r.blocks_local, "blocks at seq {}", r.seq);
        seqs.push(r.seq);
    }
    assert!(!busy.is_finished(), "the ops went on through every hash");
    busy.abort();
    assert!(
        seqs.windows(2).filter(|w| w[0] < w[1]).count() >= 6,
        "ops were ordered between the hashes: {seqs:?}"
    );
    server.shutdown().await.unwrap();
}
