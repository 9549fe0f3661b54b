//! Undo and redo over the network: a client takes back its own stroke (which the server
//! split in two because another client's op came between its ops) and brings it back; both
//! clients converge to the server's hash each time.

use std::time::Duration;

use loam_client::{Client, ClientConfig, ClientError, ClientEvent};
use loam_field::{BrickKey, CsgMode, EditOp, Field, FieldHash};
use loam_protocol::BrickBox;

use crate::util::{factory, new_world, start, viewer};

fn hash_over(f: &Field, b: BrickBox) -> FieldHash {
    let k = |a: [i32; 3]| BrickKey::new(a[0], a[1], a[2]);
    f.hash_region(k(b.min), k(b.max))
}

fn sphere(mode: CsgMode, x: f64) -> EditOp {
    EditOp::Sphere {
        mode,
        center: [x, 0.5, 0.0],
        radius: 2.0,
        material: 2,
        blend: 0.0,
    }
}

/// Takes in events until none of `c`'s ops are pending (20 s at most).
async fn settle(c: &mut Client) {
    tokio::time::timeout(Duration::from_secs(20), async {
        while c.pending_ops() > 0 {
            c.next_event().await.unwrap();
        }
    })
    .await
    .expect("own ops come back");
}

/// Both clients in step with the server at `seq`, over their region.
async fn converged(a: &mut Client, b: &mut Client) {
    for c in [a, b] {
        let r = c.sync(false).await.unwrap();
        assert!(r.matches(), "client {} differs at op {}", c.id(), r.seq);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_undoes_and_redoes_its_own_stroke_and_everyone_converges() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_world(dir.path()), |_| {}).await;
    let cfg = || ClientConfig::new(server.url(), viewer(0.0, 0.0, 0.0, 24.0), factory());
    let mut a = Client::connect(cfg()).await.unwrap();
    let mut b = Client::connect(cfg()).await.unwrap();
    let region = a.region().unwrap();
    assert_eq!(b.region(), Some(region));
    let before = a.confirmed_field().clone();
    assert_eq!(a.undo().await.unwrap(), None, "nothing of a's to undo yet");

    // B builds; A's stroke 1 digs twice, with another of B's builds between (the server
    // gives A's second dig a stroke of its own). The edits do not overlap.
    let (b1, a1, b2, a2) = (
        sphere(CsgMode::Union, 9.0),
        sphere(CsgMode::Subtract, 0.0),
        sphere(CsgMode::Union, -9.0),
        sphere(CsgMode::Subtract, 1.0),
    );
    b.send_op(1, b1.clone()).await.unwrap();
    settle(&mut b).await;
    a.send_op(1, a1.clone()).await.unwrap();
    settle(&mut a).await;
    b.send_op(2, b2.clone()).await.unwrap();
    settle(&mut b).await;
    a.send_op(1, a2.clone()).await.unwrap();
    settle(&mut a).await;
    assert_eq!(a.undo_counts(), (1, 0), "one stroke of a's");
    assert_eq!(b.undo_counts(), (2, 0));
    let mut without_a = before.clone();
    let mut with_a = before.clone();
    for op in [&b1, &b2] {
        without_a.apply(op).unwrap();
    }
    for op in [&b1, &a1, &b2, &a2] {
        with_a.apply(op).unwrap();
    }
    let (seq, h) = server.hash(Some(region)).await.unwrap();
    assert_eq!(seq, 4);
    assert_eq!(h, hash_over(&with_a, region));
    converged(&mut a, &mut b).await;

    // Undo: both of A's server strokes are taken back, B's builds stay.
    let undos = a.undo().await.unwrap().expect("a stroke to undo");
    assert_eq!(undos.len(), 2, "one undo per server stroke");
    settle(&mut a).await;
    assert_eq!(a.undo_counts(), (0, 1));
    let (seq, h) = server.hash(Some(region)).await.unwrap();
    assert_eq!(seq, 6);
    assert_eq!(h, hash_over(&without_a, region), "a's digs are gone");
    converged(&mut a, &mut b).await;
    assert_eq!(hash_over(a.field(), region), h);
    assert_eq!(hash_over(b.confirmed_field(), region), h);
    // B learnt of the restored bricks as an event after the undo's own (an editor shows the
    // field again on it).
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            if let ClientEvent::Patched { seq: 6, bricks } = b.next_event().await.unwrap() {
                assert!(bricks > 0);
                return;
            }
        }
    })
    .await
    .expect("b is told of the undo's bricks");

    // Redo brings them back.
    let redos = a.redo().await.unwrap().expect("a stroke to redo");
    assert_eq!(redos.len(), 2);
    settle(&mut a).await;
    let (seq, h) = server.hash(Some(region)).await.unwrap();
    assert_eq!(seq, 8);
    assert_eq!(h, hash_over(&with_a, region), "a's digs are back");
    converged(&mut a, &mut b).await;
    assert_eq!(hash_over(b.confirmed_field(), region), h);
    assert_eq!(a.redo().await.unwrap(), None, "nothing left to redo");

    // An undo while own ops are on their way is refused before anything is sent.
    a.send_op(2, sphere(CsgMode::Subtract, 4.0)).await.unwrap();
    match a.undo().await {
        Err(ClientError::Unsettled { ops: 1 }) => {}
        r => panic!("an undo with an op in flight: {r:?}"),
    }
    settle(&mut a).await;
    assert_eq!(a.undo_counts(), (2, 0));
    converged(&mut a, &mut b).await;
    drop((a, b));
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undo_refused_because_another_client_undid_the_stroke_first_puts_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_world(dir.path()), |_| {}).await;
    let cfg = || ClientConfig::new(server.url(), viewer(0.0, 0.0, 0.0, 24.0), factory());
    let mut a = Client::connect(cfg()).await.unwrap();
    let mut b = Client::connect(cfg()).await.unwrap();
    let region = a.region().unwrap();
    let before = a.confirmed_field().clone();

    a.send_op(1, sphere(CsgMode::Subtract, 0.0)).await.unwrap();
    // B learns the server's stroke id of A's dig from its broadcast.
    let stroke = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            if let ClientEvent::Op {
                own: false, stroke, ..
            } = b.next_event().await.unwrap()
            {
                return stroke;
            }
        }
    })
    .await
    .expect("b sees a's dig");
    settle(&mut a).await;
    let (_, dug) = server.hash(Some(region)).await.unwrap();

    // B undoes A's stroke; A's own undo of it comes after and is refused.
    b.send_op(1, EditOp::Undo { stroke }).await.unwrap();
    settle(&mut b).await;
    let ids = a.undo().await.unwrap().expect("a's stroke");
    assert_eq!(a.undo_counts(), (0, 1));
    let refused = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            if let ClientEvent::Refused { op_id, reason } = a.next_event().await.unwrap() {
                return (op_id, reason);
            }
        }
    })
    .await
    .expect("the undo is refused");
    assert_eq!(refused.0, ids[0], "{}", refused.1);
    assert_eq!(a.undo_counts(), (1, 0), "the stroke counts as done again");
    let (_, h) = server.hash(Some(region)).await.unwrap();
    assert_eq!(h, hash_over(&before, region), "b's undo holds");
    converged(&mut a, &mut b).await;

    // B redoes it; A's undo now goes through.
    b.send_op(2, EditOp::Redo { stroke }).await.unwrap();
    settle(&mut b).await;
    assert_eq!(server.hash(Some(region)).await.unwrap().1, dug);
    converged(&mut a, &mut b).await;
    assert_eq!(a.undo().await.unwrap().map(|ids| ids.len()), Some(1));
    settle(&mut a).await;
    assert_eq!(a.undo_counts(), (0, 1));
    let (seq, h) = server.hash(Some(region)).await.unwrap();
    assert_eq!(
        seq, 4,
        "dig, b's undo and redo, a's undo (the refusal is not in the log)"
    );
    assert_eq!(h, hash_over(&before, region));
    converged(&mut a, &mut b).await;
    drop((a, b));
    server.shutdown().await.unwrap();
}

/// A client that dropped before another's undo resumes across it after the server restarted
/// (the undo read back from the world file): the reloaded history tells which bricks the undo
/// wrote, so the client gets the ops and those bricks, not a full snapshot, and converges.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_resumes_across_an_undo_made_before_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let world = new_world(dir.path());
    let server = start(&world, |_| {}).await;
    let addr = server.local_addr();
    let cfg = || ClientConfig::new(server.url(), viewer(0.0, 0.0, 0.0, 24.0), factory());
    let mut a = Client::connect(cfg()).await.unwrap();
    let mut b = Client::connect(cfg()).await.unwrap();
    let region = a.region().unwrap();
    a.send_op(1, sphere(CsgMode::Subtract, 0.0)).await.unwrap();
    settle(&mut a).await;
    a.send_op(2, sphere(CsgMode::Union, 8.0)).await.unwrap();
    settle(&mut a).await;
    converged(&mut a, &mut b).await;
    b.drop_connection();
    // While B is away: A undoes its dig (stroke 1 is not its newest, so undo the newest
    // first, then the dig), and the server restarts on the same file and port.
    for _ in 0..2 {
        a.undo().await.unwrap().expect("a stroke to undo");
        settle(&mut a).await;
    }
    assert_eq!(a.undo_counts(), (0, 2));
    let (seq, want) = server.hash(Some(region)).await.unwrap();
    assert_eq!(seq, 4);
    server.shutdown().await.unwrap();
    let server = start(&world, |c| c.listen = addr).await;
    assert!(b.reconnect().await.unwrap(), "resumed, not a snapshot");
    let r = b.sync(false).await.unwrap();
    assert!(r.matches(), "{r:?}");
    assert_eq!((r.seq, r.server), (4, want));
    server.shutdown().await.unwrap();
}

/// A digs, B digs inside A's crater, A undoes: the rule of `loam_field::History` (a sample
/// shows its newest done stroke) keeps B's dig where it changed the ground, on the server
/// and on both clients, and fills again what only A dug.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_keeps_another_players_later_dig_in_the_same_place() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_world(dir.path()), |_| {}).await;
    let cfg = || ClientConfig::new(server.url(), viewer(0.0, 0.0, 0.0, 24.0), factory());
    let mut a = Client::connect(cfg()).await.unwrap();
    let mut b = Client::connect(cfg()).await.unwrap();
    let region = a.region().unwrap();
    let before = a.confirmed_field().clone();

    let (dig_a, dig_b) = (
        sphere(CsgMode::Subtract, 0.0),
        EditOp::Sphere {
            mode: CsgMode::Subtract,
            center: [1.5, -0.5, 0.0],
            radius: 2.0,
            material: 2,
            blend: 0.0,
        },
    );
    a.send_op(1, dig_a.clone()).await.unwrap();
    settle(&mut a).await;
    b.send_op(1, dig_b.clone()).await.unwrap();
    settle(&mut b).await;
    converged(&mut a, &mut b).await;
    let both = b.confirmed_field().clone();

    assert_eq!(a.undo().await.unwrap().map(|ids| ids.len()), Some(1));
    settle(&mut a).await;

    // The same three steps on one history give the expected field.
    let mut expected = before.clone();
    let mut history = loam_field::History::default();
    history.apply(&mut expected, 1, &dig_a).unwrap();
    history.apply(&mut expected, 2, &dig_b).unwrap();
    history
        .apply(&mut expected, 0, &EditOp::Undo { stroke: 1 })
        .unwrap();
    let (_, h) = server.hash(Some(region)).await.unwrap();
    assert_eq!(h, hash_over(&expected, region), "the server");
    converged(&mut a, &mut b).await;
    assert_eq!(hash_over(a.confirmed_field(), region), h, "client a");
    assert_eq!(hash_over(b.confirmed_field(), region), h, "client b");

    // B's dig is still there where it changed the ground (below A's crater), on both.
    let mut only_a = before.clone();
    only_a.apply(&dig_a).unwrap();
    let (mut kept, mut filled) = (0, 0);
    let (lo, hi) = (region.min, region.max);
    for key in (lo[2]..=hi[2]).flat_map(|z| {
        (lo[1]..=hi[1]).flat_map(move |y| (lo[0]..=hi[0]).map(move |x| BrickKey::new(x, y, z)))
    }) {
        let m = key.min_sample();
        let n = loam_field::BRICK_SAMPLES;
        for p in (0..n * n * n)
            .map(|i| loam_field::SamplePos::new(m.x + i % n, m.y + (i / n) % n, m.z + i / (n * n)))
        {
            let (now, b_then, a_only, ground) = (
                b.confirmed_field().sample(p),
                both.sample(p),
                only_a.sample(p),
                before.sample(p),
            );
            if b_then.to_bits() != a_only.to_bits() {
                assert_eq!(now.to_bits(), b_then.to_bits(), "b's dig at {p:?}");
                kept += 1;
            } else if a_only.to_bits() != ground.to_bits() {
                assert_eq!(now.to_bits(), ground.to_bits(), "a's dig undone at {p:?}");
                filled += 1;
            }
        }
    }
    assert!(
        kept > 20 && filled > 20,
        "{kept} of b's samples kept, {filled} of a's filled"
    );
    drop((a, b));
    server.shutdown().await.unwrap();
}
