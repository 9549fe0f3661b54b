//! One undo order over terrain strokes and block edits ([`UndoJournal`]): an undo takes back
//! the player's last action, whichever it was. The editor's Ctrl+Z / Ctrl+Y go through it,
//! alone or joined to a server.
//!
//! Terrain strokes are undone by the field's history ([`loam_field::History`], locally) or
//! the server (joined): the journal only records *that* the action was a terrain stroke, in
//! order with the block actions. A block edit is undone by a block op that reverses it, computed from the blocks
//! as they were just before it ([`block_inverse`]): a placed block is broken, a broken block placed
//! again (material, chisel shape and paint; undamaged), a chiselled edge given its old shape.
//! What a break set falling (unsupported blocks, now pieces or rubble) stays where it fell:
//! the blocks have no history of their own. Breaking a block off rubble is not undoable and
//! not recorded.
//!
//! A world opened again starts with the journal its file's op log describes
//! ([`UndoJournal::from_log`]): its terrain strokes and block ops in their order, the block ops'
//! inverses found from the log alone ([`LogInverses`]), so block edits made before a reopen
//! can be undone after it, like terrain strokes (whose history the file keeps).
//!
//! A journal empty of undo (a world with no log, or more actions than [`UndoJournal::LIMIT`])
//! falls back to the terrain history, as before block edits were recorded.

use loam_blocks::{BlockOp, BlockSpec, BlockStore};
#[cfg(feature = "store")]
use {
    loam_blocks::LogInverses,
    loam_field::EditOp,
    loam_store::{LogRecord, Store, StoreError},
};

/// One part of an action, undone in reverse order.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A terrain stroke: undone and redone by the terrain history (or the server).
    Terrain,
    /// A block op and the op that reverses it.
    Block {
        /// The op as made (applied again by a redo).
        op: BlockOp,
        /// The op that reverses it (applied by an undo).
        inverse: BlockOp,
    },
}

/// What one click or one held stroke did.
pub type Action = Vec<Step>;

/// The undo and redo stacks of a player's actions.
#[derive(Debug, Default)]
pub struct UndoJournal {
    undo: Vec<Action>,
    redo: Vec<Action>,
    /// The terrain stroke last recorded (a stroke's later ops add nothing).
    last_stroke: Option<u64>,
}

impl UndoJournal {
    /// Most actions kept for undo; older ones fall to the terrain history's own limit.
    pub const LIMIT: usize = 512;

    /// Records a new action; the redo stack is cleared (a new action forks the history).
    pub fn record(&mut self, action: Action) {
        if action.is_empty() {
            return;
        }
        if self.undo.len() == Self::LIMIT {
            self.undo.remove(0);
        }
        self.undo.push(action);
        self.redo.clear();
    }

    /// Records terrain stroke `id` once, at its first op.
    pub fn terrain_stroke(&mut self, id: u64) {
        if self.last_stroke != Some(id) {
            self.last_stroke = Some(id);
            self.record(vec![Step::Terrain]);
        }
    }

    /// The action to undo: the newest recorded, else (`terrain_left`: the terrain history
    /// has a stroke to undo) a terrain stroke from before the journal. It moves to the redo
    /// stack.
    pub fn undo(&mut self, terrain_left: bool) -> Option<Action> {
        let action = self
            .undo
            .pop()
            .or_else(|| terrain_left.then(|| vec![Step::Terrain]))?;
        self.redo.push(action.clone());
        self.last_stroke = None;
        Some(action)
    }

    /// The action to redo (the one undone last); it moves back to the undo stack.
    pub fn redo(&mut self) -> Option<Action> {
        let action = self.redo.pop()?;
        self.undo.push(action.clone());
        self.last_stroke = None;
        Some(action)
    }

    /// Actions that can be undone and redone (the undo count without the terrain history's
    /// strokes from before the journal).
    pub fn counts(&self) -> (usize, usize) {
        (self.undo.len(), self.redo.len())
    }

    /// The journal of a world file's op log ([`UndoJournal::from_log`]).
    ///
    /// # Errors
    /// As [`Store::log_after`].
    #[cfg(feature = "store")]
    pub fn from_store(store: &Store) -> Result<Self, StoreError> {
        Ok(Self::from_log(&store.log_after(0)?))
    }

    /// The journal that `records` (a world's op log, in order) leave: each terrain stroke
    /// one action, each block op that can be undone one action with its inverse found from
    /// the log ([`LogInverses`]). The log's terrain undos and redos move the newest terrain
    /// action between the stacks; a block op that is the inverse of the newest action (as an
    /// undo logs it) is taken for its undo, and one that repeats the newest undone op for
    /// its redo. What the log does not tell apart comes back a little otherwise than it was
    /// made: a block placed on a levelled pad and its pad are two actions, and a block placed
    /// and then broken by hand reads as placed and undone.
    #[cfg(feature = "store")]
    pub fn from_log(records: &[LogRecord]) -> Self {
        let mut journal = Self::default();
        let mut inverses = LogInverses::default();
        let only_block = |a: Option<&Action>| match a.map(Vec::as_slice) {
            Some([Step::Block { op, inverse }]) => Some((op.clone(), inverse.clone())),
            _ => None,
        };
        for r in records {
            match r {
                LogRecord::Terrain(e) => match e.op {
                    EditOp::Undo { .. } => {
                        if journal.undo.last() == Some(&vec![Step::Terrain]) {
                            journal.undo(false);
                        }
                    }
                    EditOp::Redo { .. } => {
                        if journal.redo.last() == Some(&vec![Step::Terrain]) {
                            journal.redo();
                        }
                    }
                    _ => journal.terrain_stroke(e.stroke),
                },
                LogRecord::Block(e) => {
                    // An op that does not decode was skipped by the load too.
                    let Ok(op) = BlockOp::decode(&e.op) else {
                        continue;
                    };
                    let inverse = inverses.next(&op);
                    if only_block(journal.undo.last()).is_some_and(|(_, inv)| inv == op) {
                        journal.undo(false);
                    } else if only_block(journal.redo.last()).is_some_and(|(made, _)| made == op) {
                        journal.redo();
                    } else if let Some(inverse) = inverse {
                        journal.record(vec![Step::Block { op, inverse }]);
                    }
                }
            }
        }
        journal.last_stroke = None;
        journal
    }
}

/// The block op that reverses `op` on `store` as it is before `op` ([`BlockOp::inverse`]);
/// `None` when there is none (`op` would be refused, or breaks a block off rubble, or makes
/// a lump).
pub fn block_inverse(op: &BlockOp, store: &BlockStore) -> Option<BlockOp> {
    op.inverse(|at| {
        store.get(at).map(|b| BlockSpec {
            material: b.material,
            shape: b.shape,
            paint: b.paint,
        })
    })
}

/// The step for block op `op` on `store` as it is before `op`, if `op` can be undone.
pub fn block_step(op: &BlockOp, store: &BlockStore) -> Option<Step> {
    block_inverse(op, store).map(|inverse| Step::Block {
        op: op.clone(),
        inverse,
    })
}

#[cfg(test)]
mod tests {
    use loam_blocks::{BlockPos, BlockSize, BlockWorld, ChiselShape, MaterialTable};

    use super::*;

    fn at(x: i32, y: i32, z: i32) -> BlockPos {
        BlockPos::new(BlockSize::Full, [x, y, z]).unwrap()
    }

    fn place(p: BlockPos) -> BlockOp {
        BlockOp::Place {
            at: p,
            material: MaterialTable::STONE,
            shape: ChiselShape::default(),
            paint: Some([10, 20, 30]),
        }
    }

    #[test]
    fn terrain_strokes_and_block_ops_undo_in_one_order() {
        let mut j = UndoJournal::default();
        j.terrain_stroke(1);
        j.terrain_stroke(1); // the same stroke's later ops
        let b = Step::Block {
            op: place(at(0, 0, 0)),
            inverse: BlockOp::Break { at: at(0, 0, 0) },
        };
        j.record(vec![Step::Terrain, b.clone()]);
        j.terrain_stroke(2);
        assert_eq!(j.counts(), (3, 0));
        assert_eq!(j.undo(true), Some(vec![Step::Terrain]));
        assert_eq!(j.undo(true), Some(vec![Step::Terrain, b.clone()]));
        assert_eq!(j.counts(), (1, 2));
        assert_eq!(j.redo(), Some(vec![Step::Terrain, b.clone()]));
        // A new action clears the redo stack.
        j.terrain_stroke(3);
        assert_eq!(j.counts(), (3, 0));
        assert_eq!(j.redo(), None);
        // Past the journal: the terrain history's strokes, while it has some.
        for _ in 0..3 {
            assert!(j.undo(false).is_some());
        }
        assert_eq!(j.undo(false), None);
        assert_eq!(j.undo(true), Some(vec![Step::Terrain]));
        assert_eq!(j.counts(), (0, 4));
        // A stroke id seen before the undo is a new action after it.
        j.terrain_stroke(3);
        assert_eq!(j.counts(), (1, 0));
    }

    #[test]
    fn the_journal_keeps_its_newest_actions() {
        let mut j = UndoJournal::default();
        for id in 0..UndoJournal::LIMIT as u64 + 10 {
            j.terrain_stroke(id);
        }
        assert_eq!(j.counts(), (UndoJournal::LIMIT, 0));
        j.record(Vec::new());
        assert_eq!(
            j.counts(),
            (UndoJournal::LIMIT, 0),
            "an empty action is not recorded"
        );
    }

    #[test]
    fn each_block_op_is_reversed_by_its_inverse() {
        let mut world = BlockWorld::new(MaterialTable::standard(), Default::default()).unwrap();
        let mut physics = loam_physics::PhysicsWorld::new(Default::default()).unwrap();
        // Flat ground: solid below y = 0, where the block stands.
        let ground = |p: [f64; 3]| p[1] as f32;
        let p = at(0, 0, 0);
        let apply = |w: &mut BlockWorld, ph: &mut loam_physics::PhysicsWorld, op: &BlockOp| {
            w.apply(ph, &ground, op).unwrap();
        };
        // Place, then its inverse breaks it.
        let op = place(p);
        let inv = block_inverse(&op, world.store()).unwrap();
        assert_eq!(inv, BlockOp::Break { at: p });
        apply(&mut world, &mut physics, &op);
        assert!(world.store().get(p).is_some());
        assert_eq!(
            block_inverse(&op, world.store()),
            None,
            "placing on a block is refused"
        );
        // Chisel, then its inverse gives the old shape back.
        let round = ChiselShape::default().with_round(loam_blocks::Edge::new(0, true, true));
        let chisel = BlockOp::Chisel {
            at: p,
            shape: round,
        };
        let back = block_inverse(&chisel, world.store()).unwrap();
        apply(&mut world, &mut physics, &chisel);
        assert_eq!(world.store().get(p).unwrap().shape, round);
        apply(&mut world, &mut physics, &back);
        assert_eq!(world.store().get(p).unwrap().shape, ChiselShape::default());
        // Break (with a shape and paint), then its inverse places the same block again.
        apply(&mut world, &mut physics, &chisel);
        let brk = BlockOp::Break { at: p };
        let again = block_inverse(&brk, world.store()).unwrap();
        apply(&mut world, &mut physics, &brk);
        assert!(world.store().get(p).is_none());
        assert_eq!(block_inverse(&brk, world.store()), None, "nothing to break");
        apply(&mut world, &mut physics, &again);
        let b = world.store().get(p).unwrap();
        assert_eq!(
            (b.material, b.shape, b.paint),
            (MaterialTable::STONE, round, Some([10, 20, 30]))
        );
        apply(&mut world, &mut physics, &inv);
        assert!(world.store().get(p).is_none());
    }
}
