//! Writing a session to its world file: the ops as they happen ([`flush`]) and the world as
//! it is at a save ([`bake`]).
//!
//! - **As it happens:** every op, terrain or block, is appended to the op log in the order it
//!   was applied, under one sequence numbering ([`loam_field::Journal`]): terrain ops from
//!   the field's log, block ops from a journal of [`BlockLogEntry`]s, merged by sequence.
//! - **At a save:** [`bake`] flushes, then writes the bricks, the history and the block
//!   world's snapshot (held blocks, shapes, damage, pieces and rubble poses exactly) at the
//!   current physics step in one transaction, covering every op so far.
//!
//! [`crate::load`] reads both back.

use loam_blocks::BlockWorld;
use loam_field::{Field, History, LogEntry};
use loam_store::{BlockLogEntry, Store, StoreError};

/// Appends to `store` every op applied since the last flush: the terrain ops of `log` (the
/// session's terrain log, in sequence order; those at or below the store's last sequence
/// number are already written) and the block ops of `journal` (drained), merged in sequence
/// order. Returns how many were written.
///
/// # Errors
/// As [`Store::append`] and [`Store::append_block`]; [`StoreError::OutOfOrder`] when an op's
/// number is missing. The ops before the failing one stay written; the block ops not
/// written stay in `journal` for the next flush (terrain ops stay in `log`).
pub fn flush(
    store: &mut Store,
    log: &[LogEntry],
    journal: &mut Vec<BlockLogEntry>,
) -> Result<usize, StoreError> {
    let last = store.last_seq();
    let start = log.partition_point(|e| e.seq <= last);
    let mut terrain = log[start..].iter().peekable();
    let mut block = std::mem::take(journal).into_iter().peekable();
    let mut written = 0;
    let result = loop {
        let take_block = match (terrain.peek(), block.peek()) {
            (Some(t), Some(b)) => b.seq < t.seq,
            (None, Some(_)) => true,
            (Some(_), None) => false,
            (None, None) => break Ok(written),
        };
        let r = if take_block {
            let e: &BlockLogEntry = block.peek().expect("peeked");
            store.append_block(e).map(|()| {
                block.next();
            })
        } else {
            store.append(terrain.next().expect("peeked"))
        };
        if let Err(e) = r {
            break Err(e);
        }
        written += 1;
    };
    *journal = block.collect();
    result
}

/// What [`bake`] writes: the session as it is now.
pub struct Bake<'a> {
    /// The session's terrain log (flushed first, see [`flush`]).
    pub log: &'a [LogEntry],
    /// The field after every op so far.
    pub field: &'a Field,
    /// The undo history after every op so far.
    pub history: &'a History,
    /// The block world after every op so far.
    pub blocks: &'a BlockWorld,
    /// The world file's physics step now (`step_base + physics.step_count()`).
    pub step: u64,
}

/// Flushes (see [`flush`]) and bakes the session into `store`: bricks, history and the block
/// world's snapshot at `what.step`, covering every op so far. Returns the number of bricks
/// written.
///
/// # Errors
/// As [`flush`] and [`Store::bake_with_blocks`]; nothing is baked when the flush fails.
pub fn bake(
    store: &mut Store,
    what: Bake<'_>,
    journal: &mut Vec<BlockLogEntry>,
) -> Result<usize, StoreError> {
    flush(store, what.log, journal)?;
    let seq = store.last_seq();
    let file = what.blocks.save().encode();
    store.bake_with_blocks(what.field, what.history, seq, what.step, &file)
}
