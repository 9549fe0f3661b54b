//! Where the editor's edits go: applied to the world here, or, joined to a server, sent to
//! it (the client thread predicts terrain ops at once, and the world shows the server's
//! order as it comes back, `remote::sync`). The one place that knows the difference: the
//! tools and the undo keys call [`EditSink`] alike.

use bevy::ecs::system::SystemParam;
use bevy::prelude::*;
use loam_blocks::BlockOp;
use loam_field::EditOp;

use super::remote::Remote;
use super::{EditorStatus, apply, block_tool};
use crate::LoamWorld;
use crate::blocks::LoamBlocks;
use crate::walk::Physics;

/// Which way a terrain stroke is stepped through the history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Direction {
    Undo,
    Redo,
}

/// The world, its blocks and physics, and the connection when joined: what an edit is
/// applied to or sent through.
#[derive(SystemParam)]
pub(crate) struct EditSink<'w> {
    pub world: ResMut<'w, LoamWorld>,
    pub blocks: ResMut<'w, LoamBlocks>,
    pub physics: ResMut<'w, Physics>,
    remote: Option<ResMut<'w, Remote>>,
}

impl EditSink<'_> {
    /// A fresh stroke id: the world's next one, or joined, this player's next (the server
    /// names strokes per player).
    pub fn new_stroke(&mut self) -> u64 {
        match self.remote.as_mut() {
            Some(r) => r.new_stroke(),
            None => self.world.world.next_stroke(),
        }
    }

    /// Applies or sends terrain op `op` in `stroke` (`None`: a stroke of its own). Returns
    /// whether it was taken: applied here, or sent (the server may still refuse it; the
    /// client thread reports that on the status line). A refusal here is on the status line.
    pub fn terrain(&mut self, status: &mut EditorStatus, stroke: Option<u64>, op: EditOp) -> bool {
        match self.remote.as_mut() {
            Some(r) => {
                let stroke = stroke.unwrap_or_else(|| r.new_stroke());
                r.send_op(stroke, op);
                status.ops += 1;
                true
            }
            None => apply(status, &mut self.world, stroke, &op),
        }
    }

    /// Applies or sends block op `op`.
    ///
    /// # Errors
    /// Applied here: why it was refused (nothing changed). Sent: never (the server decides).
    pub fn block(&mut self, op: &BlockOp) -> Result<(), String> {
        match self.remote.as_ref() {
            Some(r) => {
                r.send_block(op.clone());
                Ok(())
            }
            None => {
                block_tool::apply_block_op(&mut self.blocks, &mut self.physics, &mut self.world, op)
            }
        }
    }

    /// Whether a terrain stroke is left to undo: in the history here, or joined, among this
    /// player's strokes the server confirmed (the server's undo names those only).
    pub fn terrain_undo_left(&self) -> bool {
        match self.remote.as_ref() {
            Some(r) => r.status.undo.0 > 0,
            None => self.world.world.history().undo_target().is_some(),
        }
    }

    /// Undoes or redoes one terrain stroke: the history's newest done (or oldest undone)
    /// stroke here, or joined, this player's on the server.
    pub fn step_terrain(&mut self, status: &mut EditorStatus, direction: Direction) {
        if let Some(r) = self.remote.as_ref() {
            match direction {
                Direction::Undo => r.undo(),
                Direction::Redo => r.redo(),
            }
            return;
        }
        let history = self.world.world.history();
        let op = match direction {
            Direction::Undo => history.undo_target().map(|stroke| EditOp::Undo { stroke }),
            Direction::Redo => history.redo_target().map(|stroke| EditOp::Redo { stroke }),
        };
        match op {
            Some(op) => {
                apply(status, &mut self.world, None, &op);
            }
            None => status.message = "no terrain stroke left to undo or redo".into(),
        }
    }
}
