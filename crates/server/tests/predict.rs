//! Prediction: a client's own op shows at once; when the server puts another client's op
//! before it, the client re-applies its op over that one, in the server's order.

use loam_client::{Client, ClientConfig, ClientError, ClientEvent};
use loam_field::{BrickKey, CsgMode, EditOp, Field};
use loam_protocol::BrickBox;

use crate::util::{factory, new_world, start, viewer};

/// The next op or refusal, past catch-ups.
/// The next event that is not a catch-up or another player's presence (which the server
/// sends whenever a player joins or moves, in no fixed place among the ops).
async fn next_op(c: &mut Client) -> ClientEvent {
    loop {
        match c.next_event().await.unwrap() {
            ClientEvent::CaughtUp { .. } | ClientEvent::Presence { .. } => {}
            e => return e,
        }
    }
}

fn hash_over(f: &Field, b: BrickBox) -> loam_field::FieldHash {
    let k = |a: [i32; 3]| BrickKey::new(a[0], a[1], a[2]);
    f.hash_region(k(b.min), k(b.max))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prediction_is_reapplied_in_the_servers_order() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_world(dir.path()), |_| {}).await;
    let cfg = |r| ClientConfig::new(server.url(), viewer(0.0, 0.0, 0.0, r), factory());
    let mut a = Client::connect(cfg(20.0)).await.unwrap();
    let mut b = Client::connect(cfg(20.0)).await.unwrap();
    let region = a.region().unwrap();
    let before = a.confirmed_field().clone();

    // B's build is ordered first; A has not read it when it digs into the same spot.
    let build = EditOp::Sphere {
        mode: CsgMode::Union,
        center: [0.0, 1.0, 0.0],
        radius: 3.0,
        material: 4,
        blend: 0.0,
    };
    let dig = EditOp::Sphere {
        mode: CsgMode::Subtract,
        center: [1.0, 1.5, 0.0],
        radius: 2.0,
        material: 0,
        blend: 0.0,
    };
    b.send_op(1, build.clone()).await.unwrap();
    while b.pending_ops() > 0 {
        b.next_event().await.unwrap();
    }
    a.send_op(1, dig.clone()).await.unwrap();

    // At once: A sees its dig over what it had.
    let mut predicted = before.clone();
    predicted.apply(&dig).unwrap();
    assert_eq!(
        hash_over(a.field(), region),
        hash_over(&predicted, region),
        "the own op is shown at once"
    );
    // The server's order: build, then dig.
    while server.status().await.unwrap().seq < 2 {
        tokio::task::yield_now().await;
    }
    let (_, truth) = server.hash(Some(region)).await.unwrap();
    let mut in_order = before.clone();
    in_order.apply(&build).unwrap();
    in_order.apply(&dig).unwrap();
    assert_eq!(hash_over(&in_order, region), truth);
    assert_ne!(
        hash_over(&predicted, region),
        truth,
        "the order matters here"
    );

    // B's op arrives: A re-applies its dig over it, before the server confirms the dig.
    let e = next_op(&mut a).await;
    assert!(
        matches!(
            e,
            ClientEvent::Op {
                seq: 1,
                own: false,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(a.pending_ops(), 1);
    assert_eq!(hash_over(a.field(), region), truth, "re-applied in order");
    assert_ne!(hash_over(a.confirmed_field(), region), truth);

    // The dig is confirmed: confirmed and predicted agree with the server.
    let e = next_op(&mut a).await;
    assert!(
        matches!(
            e,
            ClientEvent::Op {
                seq: 2,
                own: true,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(a.pending_ops(), 0);
    assert_eq!(hash_over(a.confirmed_field(), region), truth);
    assert_eq!(hash_over(a.field(), region), truth);

    // A refused op leaves the prediction as the confirmed field.
    let lower = EditOp::Lower {
        center: [0.0, 0.0, 0.0],
        radius: 2.0,
        strength: 1.0,
        falloff: loam_field::Falloff::Smooth,
    };
    a.send_op(2, lower).await.unwrap();
    a.send_op(3, EditOp::Undo { stroke: 424242 }).await.unwrap();
    let mut refused = 0;
    while a.pending_ops() > 0 {
        if let ClientEvent::Refused { .. } = a.next_event().await.unwrap() {
            refused += 1;
        }
    }
    assert_eq!(refused, 1, "the undo of an unknown stroke is refused");
    let (_, truth) = server.hash(Some(region)).await.unwrap();
    assert_eq!(hash_over(a.field(), region), truth);
    assert!(a.sync(false).await.unwrap().matches());
    server.shutdown().await.unwrap();
}

/// A client seeing 20 m around the origin.
async fn near_origin(url: &str) -> Client {
    let cfg = ClientConfig::new(url, viewer(0.0, 0.0, 0.0, 20.0), factory());
    Client::connect(cfg).await.unwrap()
}

/// A 2 m dig at (x, 1, 0).
fn dig(x: f64) -> EditOp {
    EditOp::Sphere {
        mode: CsgMode::Subtract,
        center: [x, 1.0, 0.0],
        radius: 2.0,
        material: 0,
        blend: 0.0,
    }
}

/// Ops made while the connection is down (an editor keeps sculpting) are predicted at once
/// and sent by the reconnect, also when the server restarted in between and cannot tell
/// which of the client's ops it took: none is lost, and the server ends with all of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ops_queued_while_disconnected_are_sent_on_reconnect() {
    let dir = tempfile::tempdir().unwrap();
    let world = new_world(dir.path());
    let server = start(&world, |_| {}).await;
    let addr = server.local_addr();
    let mut a = near_origin(&server.url()).await;
    let region = a.region().unwrap();
    let mut want = a.confirmed_field().clone();
    // Offline: the op shows at once and waits.
    a.drop_connection();
    a.queue_op(1, dig(0.0)).await.unwrap();
    want.apply(&dig(0.0)).unwrap();
    assert_eq!(hash_over(a.field(), region), hash_over(&want, region));
    assert_eq!(a.pending_ops(), 1);
    a.reconnect().await.unwrap();
    while a.pending_ops() > 0 {
        a.next_event().await.unwrap();
    }
    // Offline again, and the server restarts before the client is back: the queued op was
    // never sent, so it is sent, not reported lost.
    a.drop_connection();
    a.queue_op(2, dig(6.0)).await.unwrap();
    want.apply(&dig(6.0)).unwrap();
    server.shutdown().await.unwrap();
    let server = start(&world, |c| c.listen = addr).await;
    a.reconnect().await.unwrap();
    while a.pending_ops() > 0 {
        if let ClientEvent::Lost { op_ids } = a.next_event().await.unwrap() {
            panic!("lost {op_ids:?}");
        }
    }
    let (seq, h) = server.hash(Some(region)).await.unwrap();
    assert_eq!(seq, 2);
    assert_eq!(h, hash_over(&want, region));
    assert!(a.sync(false).await.unwrap().matches());
    server.shutdown().await.unwrap();
}

/// A reconnect that finds another world at the address (made from the same settings, so its
/// metadata is the same, but behind the ops this client saw) is refused with
/// `AnotherWorld`, once and clearly, and the client stays as it was (its pending ops too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconnect_to_another_world_with_the_same_settings_is_refused() {
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let server = start(&new_world(dir_a.path()), |_| {}).await;
    let addr = server.local_addr();
    let mut a = near_origin(&server.url()).await;
    a.send_op(1, dig(0.0)).await.unwrap();
    while a.pending_ops() > 0 {
        a.next_event().await.unwrap();
    }
    assert_eq!(a.last_seq(), 1);
    a.drop_connection();
    a.queue_op(2, dig(5.0)).await.unwrap();
    server.shutdown().await.unwrap();
    let other = start(&new_world(dir_b.path()), |c| c.listen = addr).await;
    match a.reconnect().await {
        Err(ClientError::AnotherWorld(why)) => assert!(why.contains("at op 0"), "{why}"),
        r => panic!("reconnected to another world: {r:?}"),
    }
    assert!(!a.is_connected());
    assert_eq!((a.last_seq(), a.pending_ops()), (1, 1));
    let (seq, _) = other.hash(None).await.unwrap();
    assert_eq!(seq, 0, "nothing was sent to the other world");
    other.shutdown().await.unwrap();
}
