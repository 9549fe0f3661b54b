//! What may wait for a client: a client that does not read is dropped by bytes as well as
//! by messages.

use std::time::Duration;

use futures_util::SinkExt;
use loam_protocol::ClientMessage;
use tokio_tungstenite::tungstenite::Message;

use crate::util::{
    disconnect_reason, edit_two_places, joined, new_world, start, still_serves, viewer,
};

/// A client that moves its viewer (a few bytes a message, each answered by a catch-up of
/// its new region) and never reads is dropped once the bytes waiting for it pass
/// `outbox_bytes`, long before `outbox_messages`: its catch-ups do not pile up in the
/// server's memory. Found by an adversarial trial (3 GB in 20 s before the byte limit).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_asks_for_catch_ups_and_does_not_read_is_dropped_by_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_world(dir.path()), |c| {
        c.limits.outbox_bytes = c.limits.max_message_bytes;
        // Every move answered at once (the default budget would hold them back).
        c.limits.catch_up_bytes_per_second = f64::INFINITY;
        c.limits.catch_up_burst_bytes = f64::INFINITY;
    })
    .await;
    let mut ws = joined(&server.url(), None).await;
    // Edited bricks around two places 320 m apart: a region's catch-up sends them.
    edit_two_places(&mut ws).await;
    let mut moves = 0;
    while server.status().await.unwrap().clients > 0 {
        assert!(moves < 2000, "the client was never dropped");
        // Back and forth with a 48 m view: each region is new to the client.
        let x = 320.0 * f64::from(moves % 2);
        let m = ClientMessage::Viewer(viewer(x, 0.0, 0.0, 48.0));
        if ws.send(Message::Binary(m.encode().into())).await.is_err() {
            break;
        }
        moves += 1;
        if moves % 16 == 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let reason = disconnect_reason(&mut ws).await;
    assert!(reason.contains("bytes waiting"), "{reason}");
    still_serves(&server.url()).await;
}

/// A join whose first frames do not fit the outbox's message cap (here the least allowed,
/// 16, against a generator in 24 parts) is refused with that reason, not as a server
/// stopping (found by an adversarial trial, where an id overflow gave the same message).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_join_larger_than_the_outbox_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = crate::util::padded_world(dir.path(), "loam".repeat(6 << 18));
    let server = start(&path, |c| c.limits.outbox_messages = 16).await;
    let cfg = loam_client::ClientConfig::new(
        server.url(),
        viewer(0.0, 0.0, 0.0, 8.0),
        crate::util::factory(),
    );
    match loam_client::Client::connect(cfg).await {
        Err(loam_client::ClientError::Refused(r)) => {
            assert!(r.reason.contains("16 messages waiting"), "{}", r.reason);
        }
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("joined"),
    }
    // Every join of this world is refused the same way; the server itself runs on.
    assert_eq!(server.status().await.unwrap().clients, 0);
}
