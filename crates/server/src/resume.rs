//! The recent ops a reconnecting client resumes from, and what it needs to catch up.

use std::collections::{BTreeSet, VecDeque};

use bytes::Bytes;

use crate::protocol::BrickBox;

/// One op (or the block events after one) as the ring keeps it.
#[derive(Debug, Clone)]
pub(crate) struct RingEntry {
    /// The op's sequence number (for block events: the op they follow).
    pub seq: u64,
    /// Block events after op `seq` rather than an op.
    pub event: bool,
    pub author: u64,
    /// The encoded `Op` message, as broadcast.
    pub frame: Bytes,
    /// Bricks the op changed: `Some(None)` nothing, `None` unknown (read back from the world
    /// file after a restart: a block op, or an undo or redo of a stroke the reloaded history
    /// no longer keeps).
    pub written: Option<Option<BrickBox>>,
    /// Bricks the op may have read ([`loam_protocol::interest::op_reach`]); `None` for undo and redo.
    pub reach: Option<BrickBox>,
    /// The bricks of the block records it carries.
    pub blocks: Option<BrickBox>,
    /// It removes pieces: every client is sent it.
    pub to_all: bool,
}

/// What a resuming client is sent: the ops it missed that touch its region or are its own,
/// then the current bricks of `stale`, the bricks of its region it cannot have computed
/// exactly from those ops.
#[derive(Debug, Default)]
pub(crate) struct ResumePlan {
    pub frames: Vec<Bytes>,
    pub stale: BTreeSet<[i32; 3]>,
    /// Block events it may have missed are no longer known (a restart, or evicted from the
    /// ring): it is sent every block of its region, not only those of the part it did not
    /// hold. Block ops never write terrain, so its bricks still resume from the ops.
    pub blocks_lost: bool,
}

/// The last ops and block events, oldest first, at most `cap`.
#[derive(Debug)]
pub(crate) struct Ring {
    entries: VecDeque<RingEntry>,
    cap: usize,
    /// Every op after this one is in the ring.
    start: u64,
    /// The newest op that block events evicted from the ring followed.
    events_lost: Option<u64>,
    /// The op at `start`, the last one evicted (a resume from exactly `start` needs it).
    evicted: Option<RingEntry>,
}

impl Ring {
    /// An empty ring that holds every op after `start` (none yet).
    pub fn new(cap: usize, start: u64) -> Self {
        Self {
            entries: VecDeque::new(),
            cap,
            start,
            events_lost: None,
            evicted: None,
        }
    }

    pub fn push(&mut self, e: RingEntry) {
        debug_assert!(self.entries.back().is_none_or(|b| if e.event {
            b.seq == e.seq
        } else {
            b.seq + 1 == e.seq
        }));
        if self.cap == 0 {
            self.forget(e);
            return;
        }
        if self.entries.len() == self.cap
            && let Some(old) = self.entries.pop_front()
        {
            self.forget(old);
        }
        self.entries.push_back(e);
    }

    /// Block events after ops up to `seq` are not known (a restart): a client resuming
    /// from before it takes a snapshot.
    pub fn lose_events_upto(&mut self, seq: u64) {
        self.events_lost = Some(self.events_lost.map_or(seq, |s| s.max(seq)));
    }

    fn forget(&mut self, e: RingEntry) {
        if e.event {
            self.events_lost = Some(e.seq);
        } else {
            self.start = e.seq;
            self.evicted = Some(e);
        }
    }

    /// The plan for a client of id `author` that held `held` after op `from`, the log now
    /// being at `to`; `None` if the ring no longer has op `from` and every op after it (or
    /// `from` is beyond `to`), if one of them changed bricks nobody knows, or if more than
    /// `max_frames` ops would be sent: then the client needs a full snapshot. Block events
    /// lost after `from` only ask for the region's blocks ([`ResumePlan::blocks_lost`]).
    ///
    /// The client has op `from` but maybe not all of its patches (the connection may have
    /// dropped between the op and its patches), so the bricks op `from` patched are stale.
    pub fn plan(
        &self,
        from: u64,
        to: u64,
        held: &BrickBox,
        author: u64,
        max_frames: usize,
    ) -> Option<ResumePlan> {
        // Needed: every op after `from`, and the block events after op `from` itself (the
        // client may have missed some of them; records applied twice change nothing).
        if from > to || from < self.start {
            return None;
        }
        let mut plan = ResumePlan {
            blocks_lost: self.events_lost.is_some_and(|s| s >= from),
            ..ResumePlan::default()
        };
        if from > 0 {
            let last = self
                .entries
                .iter()
                .chain(&self.evicted)
                .find(|e| e.seq == from && !e.event)?;
            mark_stale(last, held, &mut plan.stale)?;
        }
        for e in &self.entries {
            if e.seq < from || (e.seq == from && !e.event) {
                continue;
            }
            debug_assert!(e.seq <= to);
            let blocks = e.to_all || e.blocks.is_some_and(|b| b.intersects(held));
            if e.event {
                if blocks {
                    if plan.frames.len() == max_frames {
                        return None;
                    }
                    plan.frames.push(e.frame.clone());
                }
                continue;
            }
            let touched = mark_stale(e, held, &mut plan.stale)?;
            if touched || blocks || e.author == author {
                if plan.frames.len() == max_frames {
                    return None;
                }
                plan.frames.push(e.frame.clone());
            }
        }
        Some(plan)
    }
}

/// For op `e`: marks the bricks of `held` the client may hold wrong after it. An op that
/// reads outside `held` the client does not compute, and the server patches the bricks it
/// changed there: those. An op within `held` that reads a stale brick the client computes
/// from wrong samples, which may change any brick of its reach: all of them.
/// `Some(whether it changed bricks of held)`; `None` if what it changed is unknown.
fn mark_stale(e: &RingEntry, held: &BrickBox, stale: &mut BTreeSet<[i32; 3]>) -> Option<bool> {
    let touched = e.written?.and_then(|w| w.intersection(held));
    let within = e.reach.filter(|r| held.contains_box(r));
    let mark = match within {
        Some(r) if stale.iter().any(|k| r.contains(*k)) => Some(r),
        Some(_) => None,
        None => touched,
    };
    if let Some(t) = mark {
        for z in t.min[2]..=t.max[2] {
            for y in t.min[1]..=t.max[1] {
                for x in t.min[0]..=t.max[0] {
                    stale.insert([x, y, z]);
                }
            }
        }
    }
    Some(touched.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every brick of `lo..=hi` on all three axes.
    fn cube(lo: i32, hi: i32) -> BTreeSet<[i32; 3]> {
        let r = lo..=hi;
        r.clone()
            .flat_map(|z| {
                let r = r.clone();
                r.clone()
                    .flat_map(move |y| r.clone().map(move |x| [x, y, z]))
            })
            .collect()
    }

    fn b(min: [i32; 3], max: [i32; 3]) -> BrickBox {
        BrickBox { min, max }
    }

    fn entry(seq: u64, author: u64, w: BrickBox, r: Option<BrickBox>) -> RingEntry {
        RingEntry {
            seq,
            author,
            event: false,
            frame: Bytes::from(seq.to_le_bytes().to_vec()),
            written: Some(Some(w)),
            reach: r,
            blocks: None,
            to_all: false,
        }
    }

    #[test]
    fn resume_sends_touching_ops_and_marks_what_it_cannot_reproduce() {
        let mut ring = Ring::new(4, 0);
        let held = b([0, 0, 0], [3, 3, 3]);
        // 1: inside, reproducible. 2: outside, not ours. 3: ours, outside. 4: reads outside.
        // 5: reads the stale brick of 4.
        ring.push(entry(1, 7, b([1; 3], [1; 3]), Some(b([0; 3], [2; 3]))));
        ring.push(entry(2, 7, b([9; 3], [9; 3]), Some(b([8; 3], [9; 3]))));
        ring.push(entry(3, 1, b([9; 3], [9; 3]), Some(b([8; 3], [9; 3]))));
        ring.push(entry(4, 7, b([3; 3], [3; 3]), Some(b([3; 3], [4; 3]))));
        ring.push(entry(5, 7, b([2; 3], [2; 3]), Some(b([2; 3], [3; 3]))));
        // The ring holds 2..=5 now: from 0 is too old.
        assert!(ring.plan(0, 5, &held, 1, 100).is_none());
        let p = ring.plan(1, 5, &held, 1, 100).unwrap();
        let seqs: Vec<u8> = p.frames.iter().map(|f| f[0]).collect();
        assert_eq!(seqs, [3, 4, 5]);
        assert_eq!(p.stale, cube(2, 3));
        assert!(ring.plan(1, 5, &held, 1, 2).is_none());
        assert!(ring.plan(6, 5, &held, 1, 100).is_none());
        assert!(ring.plan(5, 5, &held, 1, 100).unwrap().frames.is_empty());
    }

    #[test]
    fn resume_right_after_a_patched_op_refreshes_its_bricks() {
        // A drop between an op and its patches: the client has op 4 but maybe not the
        // bricks it patched, and op 5 read one of them.
        let mut ring = Ring::new(4, 0);
        let held = b([0, 0, 0], [3, 3, 3]);
        ring.push(entry(1, 7, b([1; 3], [1; 3]), Some(b([0; 3], [2; 3]))));
        ring.push(entry(2, 7, b([9; 3], [9; 3]), Some(b([8; 3], [9; 3]))));
        ring.push(entry(3, 7, b([1; 3], [1; 3]), Some(b([0; 3], [2; 3]))));
        ring.push(entry(4, 7, b([3; 3], [3; 3]), Some(b([3; 3], [4; 3]))));
        ring.push(entry(5, 7, b([2; 3], [2; 3]), Some(b([2; 3], [3; 3]))));
        let p = ring.plan(4, 5, &held, 1, 100).unwrap();
        let seqs: Vec<u8> = p.frames.iter().map(|f| f[0]).collect();
        assert_eq!(seqs, [5]);
        // Op 5 is computed from the stale brick: every brick of its reach may be wrong.
        assert_eq!(p.stale, cube(2, 3));
        // From op 3 (computed exactly) the same: op 4's bricks, then op 5's reach.
        assert_eq!(ring.plan(3, 5, &held, 1, 100).unwrap().stale, cube(2, 3));
        let p = ring.plan(5, 5, &held, 1, 100).unwrap();
        assert!(p.frames.is_empty() && p.stale.is_empty());
        // Op 1 left the ring but is still known: a resume from it works.
        assert!(ring.plan(1, 5, &held, 1, 100).is_some());
        // Block events lost up to op 4 (a restart): a resume from before asks for the
        // region's blocks whole; its bricks still resume from the ops.
        ring.lose_events_upto(4);
        let p = ring.plan(3, 5, &held, 1, 100).unwrap();
        assert!(p.blocks_lost && p.stale == cube(2, 3));
        assert!(!ring.plan(5, 5, &held, 1, 100).unwrap().blocks_lost);
        // Nothing known about op `start` (a ring filled after a restart): a snapshot.
        let mut fresh = Ring::new(4, 3);
        fresh.push(entry(4, 7, b([3; 3], [3; 3]), Some(b([3; 3], [4; 3]))));
        assert!(fresh.plan(3, 4, &held, 1, 100).is_none());
        assert!(
            fresh
                .plan(4, 4, &held, 1, 100)
                .unwrap()
                .stale
                .contains(&[3, 3, 3])
        );
    }
}
