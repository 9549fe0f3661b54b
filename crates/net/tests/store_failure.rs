//! A world store that fails under a running server: the ordering thread stops, every client
//! is told why, the handle says why, and what was acknowledged before is in the file.

use std::time::Duration;

use loam_net::protocol::ServerMessage;
use loam_store::Store;

use crate::util::{dig, disconnect_reason, joined, new_world, op_msg, recv_until, send_raw, start};

/// Another process holds SQLite's write lock on the world past the store's busy wait (5 s):
/// the group commit fails, the server stops, the client is disconnected with the reason,
/// and the op it sent then is not in the log while the acknowledged one is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_store_stops_the_server_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let world = new_world(dir.path());
    let server = start(&world, |_| {}).await;
    let mut ws = joined(&server.url(), None).await;
    send_raw(&mut ws, op_msg(1, dig(0.0))).await;
    let acked = recv_until(&mut ws, |m| match m {
        ServerMessage::Op(r) if r.op_id == 1 => Some(r.seq),
        _ => None,
    })
    .await;

    // SQLite's own locks, not the store's `flock`: a plain connection can take them.
    let lock = rusqlite::Connection::open(&world).unwrap();
    lock.execute_batch("BEGIN EXCLUSIVE").unwrap();
    send_raw(&mut ws, op_msg(2, dig(4.0))).await;
    let reason = tokio::time::timeout(Duration::from_secs(30), disconnect_reason(&mut ws))
        .await
        .expect("the client is told within 30 s");
    assert_eq!(reason, "the server's world store failed");
    let why = server.stopped().await;
    assert!(why.contains("was busy for"), "{why}");
    lock.execute_batch("ROLLBACK").unwrap();
    drop(lock);

    let err = server.shutdown().await.expect_err("the store's failure");
    let err = loam_net::error_chain(&err);
    assert!(err.contains("was busy for"), "{err}");
    let store = Store::open(&world).unwrap();
    let ops = store.ops_after(0).unwrap();
    assert_eq!(ops.iter().map(|e| e.seq).collect::<Vec<_>>(), [acked]);
}
