//! Floods below the message layer: pings and frames that never make a message. Each must
//! end with the flooding client disconnected with a reason and the server serving others
//! (a fresh-user trial took the server to 4.1 GB with pings it never read, and kept a core
//! busy with empty continuation frames).

use std::time::Duration;

use futures_util::SinkExt;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::Frame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};

use loam_protocol::ServerMessage;

use crate::util::{
    disconnect_reason, joined, new_world, raw, recv_raw, start, still_serves, viewer,
};

/// Pings count against the message rate like any message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pings_count_against_the_message_rate() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_world(dir.path()), |c| {
        c.limits.ops_per_second = 20.0;
        c.limits.op_burst = 5.0;
    })
    .await;
    let mut ws = joined(&server.url(), None).await;
    for _ in 0..40 {
        if ws.send(Message::Ping(vec![7; 100].into())).await.is_err() {
            break;
        }
    }
    let reason = disconnect_reason(&mut ws).await;
    assert!(reason.contains("rate limit"), "{reason:?}");
    still_serves(&server.url()).await;
    server.shutdown().await.unwrap();
}

/// A message begun and never finished (empty continuation frames, each a few bytes, which
/// no message limit sees) runs into the byte budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_that_never_ends_runs_into_the_byte_budget() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_world(dir.path()), |c| {
        c.limits.max_message_bytes = 8192;
        c.limits.received_bytes_per_second = 64.0 * 1024.0;
    })
    .await;
    let mut ws = joined(&server.url(), None).await;
    let start = Frame::message(vec![1u8; 16], OpCode::Data(Data::Binary), false);
    ws.send(Message::Frame(start)).await.unwrap();
    // The burst is 2 × 8 KiB + 1 MiB; each empty frame is 6 bytes (header and mask): about
    // 180 000 frames. Up to ten times that are sent, until the server closes.
    'flood: for _ in 0..200 {
        for _ in 0..10_000 {
            let f = Frame::message(Vec::<u8>::new(), OpCode::Data(Data::Continue), false);
            if ws.feed(Message::Frame(f)).await.is_err() {
                break 'flood;
            }
        }
        if ws.flush().await.is_err() {
            break;
        }
    }
    let reason = disconnect_reason(&mut ws).await;
    assert!(reason.contains("bytes/s received"), "{reason:?}");
    still_serves(&server.url()).await;
    server.shutdown().await.unwrap();
}

/// Before its hello a connection may ping a little, not without end (the rate limit starts
/// with the hello).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pings_before_the_hello_are_few() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_world(dir.path()), |_| {}).await;
    let mut ws = raw(&server.url()).await;
    // Far more than the server reads before it refuses: it closes with pings unread, which
    // must not destroy the refusal (a reset did, now and then, before the server lingered).
    'flood: for _ in 0..20 {
        for _ in 0..100 {
            if ws.feed(Message::Ping(vec![1; 8].into())).await.is_err() {
                break 'flood;
            }
        }
        if ws.flush().await.is_err() {
            break;
        }
    }
    match recv_raw(&mut ws).await {
        Some(ServerMessage::Refused(r)) => {
            assert!(
                r.reason.contains("pings or pongs before the hello"),
                "{r:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    still_serves(&server.url()).await;
    server.shutdown().await.unwrap();
}

/// Connections open at once are capped at `max_clients + max_waiting_connections`: past
/// it, a connection is answered 503 and closed at once, while those within it stay open
/// (here until the hello timeout). Once they close, clients join again. Without the cap, a
/// flood of connections that never say hello holds a file descriptor each (the world store
/// needs them too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_connections_are_capped_and_the_rest_answered_busy() {
    use tokio::io::AsyncReadExt;
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_world(dir.path()), |c| {
        c.limits.max_clients = 2;
        c.limits.max_waiting_connections = 3;
    })
    .await;
    let addr = server.local_addr();
    let mut idle = Vec::new();
    for _ in 0..5 {
        idle.push(tokio::net::TcpStream::connect(addr).await.unwrap());
    }
    // The sixth: answered and closed, without a request.
    let mut sixth = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), sixth.read_to_end(&mut answer)).await;
    assert!(read.is_ok(), "the sixth connection was held open");
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        answer.starts_with("HTTP/1.1 503 Service Unavailable"),
        "{answer:?}"
    );
    // The five within the cap are still open (the hello timeout is 10 s).
    for s in &mut idle {
        let mut buf = [0u8; 16];
        let r = tokio::time::timeout(Duration::from_millis(200), s.read(&mut buf)).await;
        assert!(r.is_err(), "a connection within the cap was closed: {r:?}");
    }
    // A client over the cap is refused by its WebSocket handshake, with the status.
    let e = loam_client::Client::connect(loam_client::ClientConfig::new(
        server.url(),
        viewer(0.0, 0.0, 0.0, 8.0),
        crate::util::factory(),
    ))
    .await
    .err()
    .expect("joined over the cap");
    assert!(e.to_string().contains("503"), "{e}");
    drop(idle);
    // Their places come back as the server sees them close.
    tokio::time::sleep(Duration::from_millis(300)).await;
    still_serves(&server.url()).await;
    server.shutdown().await.unwrap();
}
