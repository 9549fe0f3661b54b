//! The edit budget: a client's terrain ops are charged by the field samples they cover
//! (`Limits::edit_samples_per_second`), which the message rate does not see.

use std::time::Duration;

use loam_field::{CsgMode, EditOp};
use loam_protocol::ServerMessage;

use crate::util::{dig, joined, new_world, op_msg, recv_until, send_raw, start};

/// Whether op `id` was taken (`Ok`) or refused (`Err` with the reason).
async fn answer(ws: &mut crate::util::Raw, id: u64) -> Result<(), String> {
    recv_until(ws, |m| match m {
        ServerMessage::Op(r) if r.op_id == id => Some(Ok(())),
        ServerMessage::OpRefused { op_id, reason } if op_id == id => Some(Err(reason)),
        _ => None,
    })
    .await
}

/// Balls of 64 m (2.35 million samples each) against a budget of 1 million a second and
/// 3 million at once: the first two are taken (the second while the balance is still
/// above zero, leaving a debt), the third and a small dig right after are refused with the
/// reason and change nothing; once the debt is repaid, a dig is taken again. (A
/// fresh-user trial's 10 such balls a second, far under the message rate, stalled every
/// client's ops for a minute and grew the world file by 145 MB.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_ops_spend_the_edit_budget_and_are_refused_past_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_world(dir.path()), |c| {
        c.limits.edit_samples_per_second = 1e6;
        c.limits.edit_samples_burst = 3e6;
    })
    .await;
    let mut ws = joined(&server.url(), None).await;
    // High in the air: the balls change nothing there, and cost their samples all the same.
    let big = || EditOp::Sphere {
        mode: CsgMode::Subtract,
        center: [0.0, 500.0, 0.0],
        radius: 64.0,
        material: 0,
        blend: 0.0,
    };
    for id in 1..=3 {
        send_raw(&mut ws, op_msg(id, big())).await;
    }
    send_raw(&mut ws, op_msg(4, dig(0.0))).await;
    assert_eq!(answer(&mut ws, 1).await, Ok(()));
    assert_eq!(answer(&mut ws, 2).await, Ok(()));
    let (_, before) = server.hash(None).await.unwrap();
    assert_eq!(
        answer(&mut ws, 3).await.unwrap_err(),
        "edit budget spent: terrain ops may cover 1000000 samples a second (burst 3000000); \
         this one covers 2352637"
    );
    let why = answer(&mut ws, 4).await.unwrap_err();
    assert!(why.starts_with("edit budget spent"), "{why}");
    let (_, after) = server.hash(None).await.unwrap();
    assert_eq!(before, after, "a refused op changed the world");
    // 3 − 4.7 million: repaid in 1.7 s.
    tokio::time::sleep(Duration::from_millis(2000)).await;
    send_raw(&mut ws, op_msg(5, dig(0.0))).await;
    assert_eq!(answer(&mut ws, 5).await, Ok(()));
    let s = server.status().await.unwrap();
    assert_eq!((s.accepted, s.refused), (3, 2));
    server.shutdown().await.unwrap();
}
