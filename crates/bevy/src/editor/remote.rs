//! The editor joined to a server (`loam edit --connect`): terrain ops go to the server
//! instead of into the local world, and the world shows the field a network client keeps
//! (the server's order with this player's pending ops on top, so an op shows at once and is
//! re-applied in the server's order when others' ops come first).
//!
//! The client runs on its own thread (the caller's: see the `loam` binary); this module only
//! holds the two ends of its channel, so the app layer does not depend on the network stack.
//!
//! ```text
//!   tool ─ RemoteCommand::Op ─▶ client thread ─ WebSocket ─▶ server
//!   World::take_patch ◀─ RemoteUpdate { field: the changed bricks, status } ◀─ client thread ◀─ ordered ops
//!   Ctrl+Z / Ctrl+Y ─ RemoteCommand::Undo / Redo ─▶ (this player's own strokes only)
//!   camera + aim ─ RemoteCommand::Presence ─▶ … ◀─ RemoteStatus::players ─▶ [`players`]
//!   block tool ─ RemoteCommand::Block ─▶ …  (not predicted: the server decides what falls)
//!   LoamBlocks (a replica) ◀─ RemoteUpdate::blocks (the client's block deltas, in order)
//! ```
//!
//! Blocks: the editor's [`LoamBlocks`] becomes a replica ([`LoamBlocks::replica`]) of the
//! client's blocks, which are the server's: it applies the same deltas in the same order, so
//! it holds the same held blocks and pieces bit for bit, and plays the falls back in the
//! editor's physics world, which has the terrain colliders the client's lacks, until the
//! server's records put each piece at its rest.

use loam_world::Instant;
use std::sync::Mutex;
use std::sync::mpsc::Receiver;

use bevy::prelude::*;
use loam_blocks::{BlockDelta, BlockOp};
use loam_field::{BrickPatch, EditOp, Field};
use loam_protocol::{Aim, Player};

use super::block_tool::{BlockAim, ToolKind};
use super::players::PresenceTracker;
use super::{EditorCamera, EditorStatus, EditorTool};
use crate::LoamWorld;
use crate::blocks::LoamBlocks;
use crate::walk::Physics;

/// What the editor asks of the client thread.
#[derive(Debug, Clone, PartialEq)]
pub enum RemoteCommand {
    /// Predict `op` and send it, in the editor's stroke `stroke`.
    Op {
        /// The stroke (the editor numbers them; a new stroke has a new id).
        stroke: u64,
        /// The op.
        op: EditOp,
    },
    /// The viewer moved: the server sends the regions around `position` (world metres).
    Viewer {
        /// World position, metres.
        position: [f64; 3],
    },
    /// Where this player is and where their tool aims, for the other players.
    Presence {
        /// The camera's position, world metres.
        position: [f64; 3],
        /// The tool.
        aim: Aim,
    },
    /// Send a block op (place, break, chisel) to be ordered; its records come back as
    /// [`RemoteUpdate::blocks`].
    Block {
        /// The op.
        op: BlockOp,
    },
    /// Undo this player's newest stroke (not others' strokes). The server's undo names
    /// confirmed strokes only, so the client thread holds it, and the edits sent after it,
    /// until this player's ops in flight have come back (and while offline).
    Undo,
    /// Redo this player's stroke undone last; held as [`RemoteCommand::Undo`].
    Redo,
}

/// The connection as the HUD shows it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RemoteStatus {
    /// The server's address.
    pub url: String,
    /// Whether the WebSocket is up.
    pub connected: bool,
    /// This client's id on the server.
    pub client_id: u64,
    /// The last op of the server's order taken in.
    pub seq: u64,
    /// Own terrain and block ops sent or queued and not yet confirmed or refused.
    pub pending: usize,
    /// The last measured round trip (a ping, or an own op sent → back in the server's order),
    /// milliseconds; `None` while offline.
    pub rtt_ms: Option<f64>,
    /// Ops of other players taken in so far.
    pub others_ops: u64,
    /// The other players, by id.
    pub players: Vec<Player>,
    /// Own strokes that can be undone and redone.
    pub undo: (usize, usize),
    /// The last refusal, drop or reconnect, for the status line.
    pub note: String,
}

/// What the client thread reports after each change.
#[derive(Debug, Clone)]
pub struct RemoteUpdate {
    /// How the client's field changed since the last update, if it did.
    pub field: Option<FieldUpdate>,
    /// The block deltas the client applied since the last update, in order (the first
    /// update's first delta holds the blocks it had at the start).
    pub blocks: Vec<BlockDelta>,
    /// The connection.
    pub status: RemoteStatus,
}

/// How the client's field changed since the last [`RemoteUpdate`].
#[derive(Debug, Clone)]
pub enum FieldUpdate {
    /// The bricks that may differ (the client's `take_changed_bricks`), shared with the
    /// client's field: the editor's world takes them into its own map of bricks
    /// ([`LoamWorld::take_patch`]), so neither side copies the other's.
    Bricks(BrickPatch),
    /// Any brick may differ (a reconnect's catch-up): the whole field, compared brick by
    /// brick ([`LoamWorld::take_field`]).
    Whole(Field),
}

/// The editor's end of the client thread's channel.
pub struct RemoteLink {
    /// Hands a command to the client thread (never blocks).
    pub send: Box<dyn Fn(RemoteCommand) + Send + Sync>,
    /// The client thread's reports (behind a mutex: a resource must be `Sync`).
    pub updates: Mutex<Receiver<RemoteUpdate>>,
}

/// The connection in the editor.
#[derive(Resource)]
pub struct Remote {
    /// The channel to the client thread.
    pub link: RemoteLink,
    /// The latest status.
    pub status: RemoteStatus,
    /// The next stroke id to give out.
    next_stroke: u64,
    /// Where the viewer was last reported, metres.
    reported: Option<Vec3>,
    /// This player's presence as last reported.
    presence: PresenceTracker,
}

impl Remote {
    /// Wraps a link.
    pub fn new(link: RemoteLink, url: String) -> Self {
        Self {
            link,
            status: RemoteStatus {
                url,
                ..Default::default()
            },
            next_stroke: 1,
            reported: None,
            presence: PresenceTracker::default(),
        }
    }

    /// A fresh stroke id.
    pub fn new_stroke(&mut self) -> u64 {
        let id = self.next_stroke;
        self.next_stroke += 1;
        id
    }

    /// Sends a terrain op (predicted by the client thread at once).
    pub fn send_op(&self, stroke: u64, op: EditOp) {
        (self.link.send)(RemoteCommand::Op { stroke, op });
    }

    /// Sends a block op to the server's order.
    pub fn send_block(&self, op: BlockOp) {
        (self.link.send)(RemoteCommand::Block { op });
    }

    /// Asks the client thread to undo this player's newest stroke.
    pub fn undo(&self) {
        (self.link.send)(RemoteCommand::Undo);
    }

    /// Asks the client thread to redo this player's stroke undone last.
    pub fn redo(&self) {
        (self.link.send)(RemoteCommand::Redo);
    }
}

/// What the editor's tool is and where it aims, for the other players.
fn own_aim(tool: &EditorTool) -> Aim {
    match tool.kind {
        ToolKind::Terrain => Aim {
            tool: tool.terrain.brush.name().into(),
            point: tool.aim.map(|h| h.position),
            radius: tool.terrain.radius,
        },
        ToolKind::Blocks | ToolKind::Chisel => Aim {
            tool: tool.kind.name().into(),
            point: tool.block_aim.map(|a| match a {
                BlockAim::Terrain { point, .. } => point,
                BlockAim::Block(hit) => hit.point,
            }),
            radius: tool.block.size.edge() * 0.5,
        },
    }
}

/// How far the viewer moves before the server is told, metres.
const REPORT_AFTER_M: f32 = 8.0;

/// Takes in the client thread's reports (the newest field replaces the world's bricks, so
/// its changed chunks form this frame's batch; block deltas go to the blocks replica in
/// order) and reports the viewer when it has moved.
pub(crate) fn sync(
    remote: Option<ResMut<Remote>>,
    mut world: ResMut<LoamWorld>,
    (tool, mut shown): (Res<EditorTool>, ResMut<EditorStatus>),
    blocks: Option<ResMut<LoamBlocks>>,
    physics: Option<ResMut<Physics>>,
    camera: Query<&Transform, With<EditorCamera>>,
) {
    let Some(mut remote) = remote else {
        return;
    };
    let mut fields = Vec::new();
    let mut status = None;
    let mut deltas = Vec::new();
    if let Ok(rx) = remote.link.updates.lock() {
        for u in rx.try_iter() {
            // After a whole field, the changes before it are in it.
            if let Some(FieldUpdate::Whole(_)) = &u.field {
                fields.clear();
            }
            fields.extend(u.field);
            deltas.extend(u.blocks);
            status = Some(u.status);
        }
    }
    if let (Some(mut blocks), Some(mut physics)) = (blocks, physics) {
        for d in &deltas {
            if let Err(e) = blocks.apply_delta(&mut physics, d) {
                shown.message = format!("the server's blocks cannot be shown: {e}");
            }
        }
    }
    if let Some(s) = status {
        if !s.note.is_empty() && s.note != remote.status.note {
            shown.message = s.note.clone();
        }
        remote.status = s;
    }
    for f in &fields {
        let taken = match f {
            FieldUpdate::Bricks(patch) => world.take_patch(patch),
            FieldUpdate::Whole(field) => world.take_field(field),
        };
        match taken {
            Ok(changed) if changed.is_empty() => {}
            Ok(changed) => debug!("{} bricks from the server's field", changed.len()),
            Err(e) => shown.message = format!("the server's field cannot be shown: {e}"),
        }
    }
    if let Ok(t) = camera.single() {
        let p = t.translation;
        if remote
            .reported
            .is_none_or(|r| r.distance(p) > REPORT_AFTER_M)
        {
            (remote.link.send)(RemoteCommand::Viewer {
                position: [p.x, p.y, p.z].map(f64::from),
            });
            remote.reported = Some(p);
        }
        let position = [p.x, p.y, p.z].map(f64::from);
        if let Some(c) = remote
            .presence
            .due(Instant::now(), position, own_aim(&tool))
        {
            (remote.link.send)(c);
        }
    }
}
