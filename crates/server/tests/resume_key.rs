//! Who a client is: a resume keeps its id only with the key the server sent that id.

use loam_protocol::PROTOCOL_VERSION;
use loam_protocol::{BrickBox, ClientMessage, Hello, Resume, ServerMessage};

use crate::util::{
    Raw, dig, disconnect_reason, hello, new_world, op_msg, raw, recv_until, send_raw, start,
    still_serves, viewer,
};

/// A hello that resumes as `client_id` with `key`, holding one brick at the origin as of op
/// `last_seq`.
fn resume_hello(client_id: u64, key: [u64; 2], last_seq: u64) -> Vec<u8> {
    ClientMessage::Hello(Hello {
        protocol: PROTOCOL_VERSION,
        name: "resumer".into(),
        token: None,
        viewer: viewer(0.0, 0.0, 0.0, 8.0),
        resume: Some(Resume {
            client_id,
            key,
            last_seq,
            region: BrickBox {
                min: [0; 3],
                max: [0; 3],
            },
        }),
    })
    .encode()
}

/// The welcome's client id, resume key and last op id.
async fn welcome(ws: &mut Raw) -> (u64, [u64; 2], Option<u64>) {
    recv_until(ws, |m| match m {
        ServerMessage::Welcome(w) => Some((w.client_id, w.resume_key, w.last_op_id)),
        ServerMessage::Refused(r) => panic!("refused: {r}"),
        _ => None,
    })
    .await
}

/// Ids are public (presence lists them): a resume keeps its id only with the key the server
/// sent that id. A resume as another player with a wrong key, or as an id never given out
/// (the largest one stopped a debug server, its next id overflowing), joins under a new id
/// and learns no last op id; the player keeps its connection and its ops. The player's own
/// resume, with its key, keeps its id and its last op id. Found by an adversarial trial.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_keeps_its_id_only_with_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_world(dir.path()), |_| {}).await;
    let mut player = raw(&server.url()).await;
    send_raw(&mut player, hello(None)).await;
    let (id, key, last) = welcome(&mut player).await;
    assert_eq!(last, None);
    send_raw(&mut player, op_msg(5, dig(0.0))).await;
    let seq = recv_until(&mut player, |m| match m {
        ServerMessage::Op(r) if r.op_id == 5 => Some(r.seq),
        _ => None,
    })
    .await;

    for (claimed, forged) in [
        (id, [key[0] ^ 1, key[1]]),
        (id, [0, 0]),
        (u64::MAX, key),
        (0, key),
    ] {
        let mut thief = raw(&server.url()).await;
        send_raw(&mut thief, resume_hello(claimed, forged, seq)).await;
        let (got, got_key, got_last) = welcome(&mut thief).await;
        assert!(
            got != id && got != claimed && got != 0,
            "{claimed} got id {got}"
        );
        assert_ne!(got_key, key);
        assert_eq!(got_last, None, "a new id has no last op id");
    }
    // The player was not replaced: its next op comes back to it.
    send_raw(&mut player, op_msg(6, dig(1.0))).await;
    recv_until(&mut player, |m| match m {
        ServerMessage::Op(r) if r.op_id == 6 => Some(()),
        ServerMessage::Disconnect { reason } => panic!("the player was dropped: {reason}"),
        _ => None,
    })
    .await;

    let mut again = raw(&server.url()).await;
    send_raw(&mut again, resume_hello(id, key, seq)).await;
    assert_eq!(welcome(&mut again).await, (id, key, Some(6)));
    assert_eq!(
        disconnect_reason(&mut player).await,
        "replaced by a newer connection of the same client"
    );
    still_serves(&server.url()).await;
}

/// A player whose link died without a close still holds its slot until TCP notices. When
/// that fills the server, the player's own resume (with its key) is let in and replaces
/// the old connection; a resume with a wrong key is refused as any new client (found by an
/// adversarial trial: `--max-clients` full refused the player's own reconnect).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_server_lets_a_player_resume_its_own_connection() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_world(dir.path()), |c| c.limits.max_clients = 1).await;
    // A client that joined and left: its key is valid, but it holds no slot.
    let mut gone = raw(&server.url()).await;
    send_raw(&mut gone, hello(None)).await;
    let (gone_id, gone_key, _) = welcome(&mut gone).await;
    drop(gone);
    let mut old = None;
    for _ in 0..100 {
        let mut ws = raw(&server.url()).await;
        send_raw(&mut ws, hello(None)).await;
        let joined = recv_until(&mut ws, |m| match m {
            ServerMessage::Welcome(w) => Some(Some((w.client_id, w.resume_key))),
            ServerMessage::Refused(_) => Some(None),
            _ => None,
        })
        .await;
        if let Some(w) = joined {
            old = Some((ws, w));
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let (mut old, (id, key)) = old.expect("the slot of the client that left is given back");

    // Harvested keys do not add slots (found by an adversarial trial: six keys of clients
    // that had left let nine clients in under a limit of three).
    let mut harvested = raw(&server.url()).await;
    send_raw(&mut harvested, resume_hello(gone_id, gone_key, 0)).await;
    let refused = recv_until(&mut harvested, |m| match m {
        ServerMessage::Refused(r) => Some(r),
        ServerMessage::Welcome(_) => panic!("a key with no connection was let in past the limit"),
        _ => None,
    })
    .await;
    assert!(refused.reason.contains("maximum of clients"), "{refused}");

    let mut thief = raw(&server.url()).await;
    send_raw(&mut thief, resume_hello(id, [key[0], key[1] ^ 1], 0)).await;
    let refused = recv_until(&mut thief, |m| match m {
        ServerMessage::Refused(r) => Some(r),
        ServerMessage::Welcome(_) => panic!("a wrong key was let in past the limit"),
        _ => None,
    })
    .await;
    assert!(refused.reason.contains("maximum of clients"), "{refused}");

    let mut new = raw(&server.url()).await;
    send_raw(&mut new, resume_hello(id, key, 0)).await;
    let (got, _, _) = welcome(&mut new).await;
    assert_eq!(got, id);
    let reason = disconnect_reason(&mut old).await;
    assert!(reason.contains("replaced"), "{reason}");
    // The new connection is the player's: its op comes back to it.
    send_raw(&mut new, op_msg(1, dig(2.0))).await;
    recv_until(&mut new, |m| match m {
        ServerMessage::Op(r) if r.op_id == 1 => Some(()),
        _ => None,
    })
    .await;
    // Both slots are given back: once the player leaves, a new client gets in.
    drop((old, new, thief, harvested));
    for attempt in 0.. {
        let mut next = raw(&server.url()).await;
        send_raw(&mut next, hello(None)).await;
        let joined = recv_until(&mut next, |m| match m {
            ServerMessage::Welcome(_) => Some(true),
            ServerMessage::Refused(_) => Some(false),
            _ => None,
        })
        .await;
        if joined {
            break;
        }
        assert!(attempt < 100, "the slots were never given back");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// A resume claiming a region that is not a box, or one larger than 2²⁴ bricks, is
/// refused, each with its own reason (a fresh-user trial was told "not a valid box" for a
/// box that was only too large).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resume_region_too_large_or_inverted_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&new_world(dir.path()), |_| {}).await;
    let cases = [
        (
            [0, 0, 0],
            [300, 300, 300],
            "the resume region is too large: 27270901 bricks, at most 16777216",
        ),
        ([5, 0, 0], [0, 0, 0], "the resume region is not a valid box"),
    ];
    for (min, max, expect) in cases {
        let mut ws = raw(&server.url()).await;
        let ClientMessage::Hello(mut h) =
            ClientMessage::decode(&resume_hello(1, [0, 0], 0), 1 << 20).unwrap()
        else {
            unreachable!()
        };
        if let Some(r) = &mut h.resume {
            r.region = BrickBox { min, max };
        }
        send_raw(&mut ws, ClientMessage::Hello(h).encode()).await;
        let reason = recv_until(&mut ws, |m| match m {
            ServerMessage::Refused(r) => Some(r.reason),
            _ => None,
        })
        .await;
        assert_eq!(reason, expect);
    }
    still_serves(&server.url()).await;
}
