//! `loam edit --connect ws://HOST:PORT/ws`: the editor as a client of `loam serve`. A thread
//! runs the loam-net client (tokio); the editor talks to it through
//! `loam_bevy::editor::remote`'s channel: ops out, the predicted field and the connection's
//! status back after every change.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::mpsc;
use std::time::Duration;

use anyhow::Context;
use loam_bevy::editor::remote::{
    RemoteAim, RemoteCommand, RemoteLink, RemotePlayer, RemoteStatus, RemoteUpdate,
};
use loam_field::Field;
use loam_net::{Aim, Client, ClientConfig, ClientEvent, NetError, PresenceReport, Viewer};
use tokio::sync::mpsc::UnboundedReceiver;

/// How long a dropped connection waits before trying again.
const RECONNECT_AFTER: Duration = Duration::from_secs(1);

/// How often the round-trip time is measured (a WebSocket ping), so the HUD shows it before
/// the player's first edit and keeps it current while they only look around.
const PING_EVERY: Duration = Duration::from_secs(2);

/// A connected client and the editor's end of its thread's channel.
pub struct Connected {
    /// The field the server sent (the world to open the editor on: its generator is the
    /// client's, so the editor's world can take the client's bricks).
    pub field: Field,
    /// The editor's end.
    pub link: RemoteLink,
}

/// Connects to `url` with a viewer at `position` seeing `radius_for(voxel_size)` metres
/// around it, then starts the client thread. The world's voxel size is known only after
/// joining: the hello asks for `radius_for(1.0)`, and the viewer is corrected right after
/// if the world's differs.
///
/// # Errors
/// The server refuses (protocol version, token, full), is unreachable, or serves a world
/// whose generator this build cannot make.
pub fn connect(
    url: &str,
    name: &str,
    token: Option<String>,
    position: [f64; 3],
    radius_for: impl Fn(f64) -> f64,
) -> anyhow::Result<Connected> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let mut config = ClientConfig::new(
        url,
        Viewer {
            position,
            radius: radius_for(1.0),
        },
        crate::serve::factory(),
    );
    config.name = name.into();
    config.token = token;
    let mut client = rt
        .block_on(Client::connect(config))
        .with_context(|| format!("joining {url}"))?;
    let radius = radius_for(client.field().settings().voxel_size);
    if radius != radius_for(1.0) {
        rt.block_on(client.set_viewer(Viewer { position, radius }))
            .with_context(|| format!("asking {url} for {radius} m around the viewer"))?;
    }
    let field = client.field().clone();
    let (cmd_tx, cmd_rx) = tokio::sync::mpsc::unbounded_channel();
    let (up_tx, up_rx) = mpsc::channel();
    let mut status = RemoteStatus {
        url: url.into(),
        connected: true,
        client_id: client.id(),
        seq: client.last_seq(),
        ..Default::default()
    };
    status.note = format!("joined {url} as #{}", client.id());
    std::thread::Builder::new()
        .name("loam-net client".into())
        .spawn(move || rt.block_on(run(client, cmd_rx, up_tx, status)))
        .context("starting the client thread")?;
    Ok(Connected {
        field,
        link: RemoteLink {
            send: Box::new(move |c| {
                // The thread is gone only when the editor is closing.
                let _ = cmd_tx.send(c);
            }),
            updates: Mutex::new(up_rx),
        },
    })
}

/// The client thread: commands from the editor and events from the server, in the order
/// they come; after each, the predicted field and the status go back.
async fn run(
    mut client: Client,
    mut commands: UnboundedReceiver<RemoteCommand>,
    updates: mpsc::Sender<RemoteUpdate>,
    mut status: RemoteStatus,
) {
    // The editor's blocks are a replica of this client's: every delta goes to it in order.
    client.mirror_blocks(true);
    let _ = updates.send(RemoteUpdate {
        field: None,
        blocks: client.take_block_deltas(),
        status: status.clone(),
    });
    // Set when a reconnect found another world at the address: no more tries.
    let mut gave_up: Option<String> = None;
    // Why the connection went (the server's reason, e.g. its shutdown), kept in the status
    // line while reconnecting: each failed try would otherwise replace it.
    let mut dropped: Option<String> = None;
    let mut ping = tokio::time::interval(PING_EVERY);
    ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // Edits held back behind an undo or redo that waits for this client's own ops to come
    // back (the server's undo names confirmed strokes only: sent earlier, it would take back
    // an older stroke), or for the connection; kept in the order the editor made them.
    let mut held: VecDeque<RemoteCommand> = VecDeque::new();
    loop {
        let mut field_changed = false;
        if client.is_connected() {
            tokio::select! {
                _ = ping.tick() => {
                    match client.ping().await {
                        Ok(()) => continue,
                        Err(e) => status.note = format!("ping not sent: {e}"),
                    }
                }
                command = commands.recv() => match command {
                    None => break,
                    Some(c) => field_changed |= take(&mut client, &mut held, c, &mut status).await,
                },
                event = client.next_event() => match event {
                    Ok(ClientEvent::Op { own, latency, .. }) => {
                        field_changed = true;
                        if own {
                            status.rtt_ms = latency.map(|d| d.as_secs_f64() * 1e3);
                        } else {
                            status.others_ops += 1;
                        }
                    }
                    Ok(ClientEvent::Refused { op_id, reason }) => {
                        field_changed = true;
                        status.note = format!("the server refused op {op_id}: {reason}");
                    }
                    Ok(ClientEvent::CaughtUp { bricks, .. }) => {
                        field_changed = true;
                        status.note = format!("caught up: {bricks} bricks");
                    }
                    Ok(ClientEvent::Lost { op_ids }) => {
                        field_changed = true;
                        status.note = format!("{} ops were lost when the server restarted", op_ids.len());
                    }
                    Ok(ClientEvent::Presence { left, .. }) => {
                        if !left.is_empty() {
                            status.note = format!("{} player(s) left", left.len());
                        }
                    }
                    Ok(ClientEvent::Pong { rtt }) => status.rtt_ms = Some(rtt.as_secs_f64() * 1e3),
                    Ok(_) => field_changed = true,
                    Err(e) => {
                        status.note = format!("disconnected: {e}");
                        dropped = Some(e.to_string());
                    }
                },
            }
        } else {
            tokio::time::sleep(RECONNECT_AFTER).await;
            // Ops made while offline are queued, and the reconnect sends them: terrain ops
            // predicted, block ops not (the server decides what falls); undo and redo wait.
            while let Ok(c) = commands.try_recv() {
                field_changed |= take(&mut client, &mut held, c, &mut status).await;
            }
            if let Some(why) = &gave_up {
                status.note = format!("not reconnecting: {why} (restart the editor to join it)");
            } else {
                match client.reconnect().await {
                    Ok(resumed) => {
                        field_changed = true;
                        dropped = None;
                        status.note = if resumed {
                            "reconnected (resumed)".into()
                        } else {
                            "reconnected (fresh snapshot)".into()
                        };
                    }
                    Err(NetError::AnotherWorld(why)) => {
                        status.note =
                            format!("not reconnecting: {why} (restart the editor to join it)");
                        gave_up = Some(why);
                    }
                    Err(e) => {
                        let waiting =
                            client.pending_ops() + client.pending_block_ops() + held.len();
                        let after = dropped
                            .as_ref()
                            .map_or_else(String::new, |d| format!(" after \"{d}\""));
                        status.note = if waiting > 0 {
                            format!("reconnecting{after} ({waiting} edits wait): {e}")
                        } else {
                            format!("reconnecting{after}: {e}")
                        };
                    }
                }
            }
        }
        field_changed |= release(&mut client, &mut held, &mut status).await;
        status.connected = client.is_connected();
        if !status.connected {
            // Not measured until the next pong.
            status.rtt_ms = None;
        }
        status.seq = client.last_seq();
        status.pending = client.pending_ops()
            + client.pending_block_ops()
            + held
                .iter()
                .filter(|c| matches!(c, RemoteCommand::Op { .. } | RemoteCommand::Block { .. }))
                .count();
        status.undo = client.undo_counts();
        status.players = players(&client);
        let field = field_changed.then(|| client.field().clone());
        if updates
            .send(RemoteUpdate {
                field,
                blocks: client.take_block_deltas(),
                status: status.clone(),
            })
            .is_err()
        {
            break;
        }
    }
    client.close().await;
}

/// Whether held command `c` can run now: an undo or redo once connected with none of this
/// client's ops unconfirmed; anything else once it is first in line.
fn ready(client: &Client, c: &RemoteCommand) -> bool {
    match c {
        RemoteCommand::Undo | RemoteCommand::Redo => {
            client.is_connected() && client.pending_ops() == 0
        }
        _ => true,
    }
}

/// Takes command `c` from the editor: runs it, or holds it (an undo or redo that is not
/// [`ready`], and any edit behind a held one, so that the server gets them in the editor's
/// order). Viewer and presence reports never wait. Returns whether the predicted field
/// changed.
async fn take(
    client: &mut Client,
    held: &mut VecDeque<RemoteCommand>,
    c: RemoteCommand,
    status: &mut RemoteStatus,
) -> bool {
    let report = matches!(
        c,
        RemoteCommand::Viewer { .. } | RemoteCommand::Presence { .. }
    );
    if report || (held.is_empty() && ready(client, &c)) {
        return execute(client, c, status).await;
    }
    if matches!(c, RemoteCommand::Undo | RemoteCommand::Redo) {
        status.note = if client.is_connected() {
            format!(
                "{} waits for {} of your ops to come back",
                direction(&c),
                client.pending_ops()
            )
        } else {
            format!("offline: {} waits for the server", direction(&c))
        };
    }
    held.push_back(c);
    false
}

/// Runs the held commands that are [`ready`], in order, up to the first that is not.
/// Returns whether the predicted field changed.
async fn release(
    client: &mut Client,
    held: &mut VecDeque<RemoteCommand>,
    status: &mut RemoteStatus,
) -> bool {
    let mut changed = false;
    while held.front().is_some_and(|c| ready(client, c)) {
        let c = held.pop_front().expect("a front");
        changed |= execute(client, c, status).await;
    }
    changed
}

fn direction(c: &RemoteCommand) -> &'static str {
    match c {
        RemoteCommand::Redo => "redo",
        _ => "undo",
    }
}

/// Runs command `c` on the client: terrain ops predicted and sent (queued while offline),
/// block ops sent (queued while offline), undo and redo sent (callers check [`ready`]),
/// viewer and presence sent (kept while offline: the reconnect sends the latest). Returns
/// whether the predicted field changed.
async fn execute(client: &mut Client, c: RemoteCommand, status: &mut RemoteStatus) -> bool {
    let online = client.is_connected();
    match c {
        RemoteCommand::Op { stroke, op } => match client.queue_op(stroke, op).await {
            Ok(_) => {
                if !online {
                    status.note =
                        format!("offline: {} ops wait for the server", client.pending_ops());
                }
                return true;
            }
            Err(e) => status.note = format!("op refused here: {e}"),
        },
        RemoteCommand::Block { op } => {
            client.queue_block_op(&op).await;
            if !online {
                status.note = format!(
                    "offline: {} block ops wait for the server",
                    client.pending_block_ops()
                );
            }
        }
        RemoteCommand::Undo => {
            status.note = match client.undo().await {
                Ok(Some(ids)) => format!("undo sent ({} ops)", ids.len()),
                Ok(None) => "nothing of yours to undo".into(),
                Err(e) => format!("undo not sent: {e}"),
            };
        }
        RemoteCommand::Redo => {
            status.note = match client.redo().await {
                Ok(Some(ids)) => format!("redo sent ({} ops)", ids.len()),
                Ok(None) => "nothing of yours to redo".into(),
                Err(e) => format!("redo not sent: {e}"),
            };
        }
        RemoteCommand::Viewer { position } => {
            let radius = client.viewer().radius;
            if let Err(e) = client.set_viewer(Viewer { position, radius }).await
                && online
            {
                status.note = format!("viewer not sent: {e}");
            }
        }
        RemoteCommand::Presence { position, aim } => {
            if let Err(e) = client.set_presence(presence(position, aim)).await
                && online
            {
                status.note = format!("presence not sent: {e}");
            }
        }
    }
    false
}

/// The editor's presence as the client sends it.
fn presence(position: [f64; 3], aim: RemoteAim) -> PresenceReport {
    PresenceReport {
        position,
        aim: Aim {
            tool: aim.tool,
            point: aim.point,
            radius: aim.radius,
        },
    }
}

/// The other players as the editor shows them, by id.
fn players(client: &Client) -> Vec<RemotePlayer> {
    client
        .players()
        .values()
        .map(|p| RemotePlayer {
            id: p.id,
            name: p.name.clone(),
            position: p.position,
            aim: p.aim.as_ref().map(|a| RemoteAim {
                tool: a.tool.clone(),
                point: a.point,
                radius: a.radius,
            }),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use loam_field::{CsgMode, EditOp};
    use std::path::Path;
    use std::time::Instant;

    /// Waits for the client thread's reports until `done` holds for one; returns the newest
    /// field seen with it.
    fn wait_for(
        link: &RemoteLink,
        mut field: Option<Field>,
        done: impl Fn(&RemoteStatus, Option<&Field>) -> bool,
    ) -> (RemoteStatus, Option<Field>) {
        let start = Instant::now();
        let rx = link.updates.lock().unwrap();
        loop {
            let u = rx
                .recv_timeout(Duration::from_secs(60))
                .expect("a report from the client thread");
            if u.field.is_some() {
                field = u.field;
            }
            if done(&u.status, field.as_ref()) {
                return (u.status, field);
            }
            assert!(start.elapsed() < Duration::from_secs(60), "{:?}", u.status);
        }
    }

    /// A server on a new world of `examples/generated.json` in a temporary folder (kept while
    /// the returned folder lives), listening on a free loopback port, on its own runtime.
    fn serve_new_world() -> (
        tempfile::TempDir,
        tokio::runtime::Runtime,
        loam_net::ServerHandle,
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
        let mut config = loam_net::ServerConfig::new(&path, crate::serve::factory());
        config.listen = "127.0.0.1:0".parse().unwrap();
        let server = rt.block_on(loam_net::serve(config)).unwrap();
        (dir, rt, server)
    }

    /// A server stopping says why, and the status line keeps saying it while the client
    /// tries to reconnect (each failed try replaced it within a second).
    #[test]
    fn the_reason_a_server_gave_stays_while_reconnecting() {
        let (_dir, rt, server) = serve_new_world();
        let a = connect(&server.url(), "a", None, [0.0, 0.0, 0.0], |_| 16.0).unwrap();
        wait_for(&a.link, None, |s, _| s.connected);
        rt.block_on(server.shutdown()).unwrap();
        let (s, _) = wait_for(&a.link, None, |s, _| s.note.starts_with("reconnecting"));
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
        let mut replica =
            BlockWorld::new(MaterialTable::standard(), BlockSettings::default()).unwrap();
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
                && loam_net::block_hash(&replica, None, a.field.settings().voxel_size) == hash
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
        let h = a.field.generator().surface_height(0.0, 0.0);
        let before = a.field.hash();
        (a.link.send)(RemoteCommand::Op {
            stroke: 1,
            op: EditOp::Sphere {
                mode: CsgMode::Subtract,
                center: [0.0, h, 0.0],
                radius: 3.0,
                material: 0,
                blend: 0.0,
            },
        });
        // The op shows at once (predicted), then comes back in the server's order.
        let (status, field) = wait_for(&a.link, None, |s, f| {
            s.rtt_ms.is_some() && s.pending == 0 && f.is_some()
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
        assert!(world.replace_bricks(&field).unwrap() > 0);
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
        let (sa, fa) = wait_for(&a.link, None, |s, f| {
            s.seq == 2 && s.pending == 0 && f.is_some()
        });
        let (sb, fb) = wait_for(&b.link, None, |s, f| s.seq == 2 && f.is_some());
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
        let b = connect(&url, "bob", None, [0.0, 0.0, 0.0], |_| 64.0).unwrap();
        let h = a.field.generator().surface_height(0.0, 0.0);
        let before = a.field.hash();
        let (_, server_before) = rt.block_on(server.hash(None)).unwrap();

        // A's aim reaches B's status as a player.
        let aim = RemoteAim {
            tool: "cube".into(),
            point: Some([1.0, h, 2.0]),
            radius: 2.5,
        };
        (a.link.send)(RemoteCommand::Presence {
            position: [0.0, h + 10.0, 0.0],
            aim: aim.clone(),
        });
        let (sb, _) = wait_for(&b.link, None, |s, _| {
            s.players.iter().any(|p| p.aim.as_ref() == Some(&aim))
        });
        assert_eq!(sb.players.len(), 1);
        assert_eq!(sb.players[0].name, "ada");
        assert_eq!(sb.players[0].position, [0.0, h + 10.0, 0.0]);

        // A digs, then undoes its stroke: both fields are back where they were.
        (a.link.send)(RemoteCommand::Op {
            stroke: 1,
            op: EditOp::Sphere {
                mode: CsgMode::Subtract,
                center: [0.0, h, 0.0],
                radius: 3.0,
                material: 0,
                blend: 0.0,
            },
        });
        let (sa, fa) = wait_for(&a.link, None, |s, f| {
            s.seq == 1 && s.pending == 0 && f.is_some()
        });
        assert_eq!(sa.undo, (1, 0));
        assert_ne!(fa.unwrap().hash(), before);
        // The undo is not predicted: the field changes with the bricks the server sends
        // after it (a report after the op's own).
        (a.link.send)(RemoteCommand::Undo);
        let back = |f: Option<&Field>| f.is_some_and(|f| f.hash() == before);
        let (sa, _) = wait_for(&a.link, None, |s, f| s.seq == 2 && back(f));
        assert_eq!(sa.undo, (0, 1));
        assert_eq!(sa.pending, 0);
        let (sb, _) = wait_for(&b.link, None, |s, f| s.seq == 2 && back(f));
        assert_eq!(sb.others_ops, 2);
        let (_, server_hash) = rt.block_on(server.hash(None)).unwrap();
        assert_eq!(server_hash, server_before, "the server's field is back too");

        // B leaving is reported to A.
        drop(b);
        let (sa, _) = wait_for(&a.link, None, |s, _| s.players.is_empty());
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
        let (status, field) = wait_for(&a.link, None, |s, f| {
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
}
