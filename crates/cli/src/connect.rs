//! `loam edit --connect ws://HOST:PORT/ws`: the editor as a client of `loam serve`. A thread
//! runs the loam-client (tokio); the editor talks to it through
//! `loam_bevy::editor::RemoteLink`'s channel: ops out, the predicted field and the connection's
//! status back after every change.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::mpsc;
use std::time::Duration;

use anyhow::Context;
use loam_bevy::editor::{FieldUpdate, RemoteCommand, RemoteLink, RemoteStatus, RemoteUpdate};
use loam_client::{Client, ClientConfig, ClientError, ClientEvent};
use loam_field::Field;
use loam_protocol::{Player, PresenceReport, Viewer};
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
    // The editor's world starts from this field: later updates name the bricks changed
    // since.
    let _ = client.take_changed_bricks();
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
        .name("loam-client".into())
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
                        status.note = format!("caught up ({bricks} bricks in the last catch-up)");
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
                    Ok(ClientEvent::Notice { text, .. }) => status.note = text,
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
                    Err(ClientError::AnotherWorld(why)) => {
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
        // The changed bricks first: taking them brings the prediction up to date. Only
        // those go (shared, not copied); a clone of the whole field would share its map of
        // bricks with the editor's world, and the next op would copy it.
        let field = field_changed.then(|| match client.take_changed_bricks() {
            Some(keys) => FieldUpdate::Bricks(client.field().patch(keys)),
            None => FieldUpdate::Whole(client.field().clone()),
        });
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
            if let Err(e) = client.set_presence(PresenceReport { position, aim }).await
                && online
            {
                status.note = format!("presence not sent: {e}");
            }
        }
    }
    false
}

/// The other players as the editor shows them, by id.
fn players(client: &Client) -> Vec<Player> {
    client.players().values().cloned().collect()
}

#[cfg(test)]
mod tests;
