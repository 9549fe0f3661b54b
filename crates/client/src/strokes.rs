//! The client's own strokes, for undo and redo over the network.
//!
//! The server numbers strokes itself: a client's stroke keeps one server stroke id while no
//! other client's op comes between its ops, and gets a new one after such an op. So one
//! stroke of the client is a list of server strokes, learnt as its ops come back in the
//! server's order. Undo sends an [`loam_field::EditOp::Undo`] for each of them (newest
//! first), redo a [`loam_field::EditOp::Redo`] for each (oldest first).

use std::collections::VecDeque;

/// Own strokes remembered for undo; older ones are forgotten (the server's history has a
/// memory budget too).
const MAX_STROKES: usize = 256;

/// One stroke of this client: its own id and the server's ids for it, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OwnStroke {
    pub stroke: u64,
    pub server: Vec<u64>,
}

/// Own strokes done (oldest first) and undone (most recently undone last).
#[derive(Debug, Default)]
pub(crate) struct OwnStrokes {
    done: VecDeque<OwnStroke>,
    undone: Vec<OwnStroke>,
}

impl OwnStrokes {
    /// An own op of client stroke `stroke` came back in the server's order as part of server
    /// stroke `server`. A new stroke drops what could be redone.
    pub fn confirmed(&mut self, stroke: u64, server: u64) {
        match self.done.back_mut() {
            Some(last) if last.stroke == stroke => {
                if !last.server.contains(&server) {
                    last.server.push(server);
                }
            }
            _ => {
                self.undone.clear();
                if self.done.len() == MAX_STROKES {
                    self.done.pop_front();
                }
                self.done.push_back(OwnStroke {
                    stroke,
                    server: vec![server],
                });
            }
        }
    }

    /// The newest stroke done, moved to the undone ones.
    pub fn undo(&mut self) -> Option<OwnStroke> {
        let s = self.done.pop_back()?;
        self.undone.push(s.clone());
        Some(s)
    }

    /// The stroke undone last, moved back to the done ones.
    pub fn redo(&mut self) -> Option<OwnStroke> {
        let s = self.undone.pop()?;
        self.done.push_back(s.clone());
        Some(s)
    }

    /// An undo (`undo: true`) or redo of client stroke `stroke` was refused by the server
    /// (e.g. another client undid it first, or the server's history dropped it): the stroke
    /// goes back where it was, so the next undo or redo names it again.
    pub fn refused(&mut self, undo: bool, stroke: u64) {
        if undo {
            if let Some(i) = self.undone.iter().rposition(|s| s.stroke == stroke) {
                let s = self.undone.remove(i);
                self.done.push_back(s);
            }
        } else if let Some(i) = self.done.iter().rposition(|s| s.stroke == stroke)
            && let Some(s) = self.done.remove(i)
        {
            self.undone.push(s);
        }
    }

    /// Strokes that can be undone and redone.
    pub fn counts(&self) -> (usize, usize) {
        (self.done.len(), self.undone.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strokes_split_by_others_are_one_undo_and_a_new_stroke_drops_redo() {
        let mut s = OwnStrokes::default();
        s.confirmed(1, 10);
        s.confirmed(1, 10);
        s.confirmed(1, 12); // another client's op came between
        s.confirmed(2, 13);
        assert_eq!(s.counts(), (2, 0));
        assert_eq!(s.undo().unwrap().server, vec![13]);
        assert_eq!(s.undo().unwrap().server, vec![10, 12]);
        assert!(s.undo().is_none());
        assert_eq!(s.redo().unwrap().stroke, 1);
        assert_eq!(s.counts(), (1, 1));
        s.confirmed(3, 20);
        assert_eq!(s.counts(), (2, 0));
        assert!(s.redo().is_none());
    }

    #[test]
    fn a_refused_undo_or_redo_puts_the_stroke_back() {
        let mut s = OwnStrokes::default();
        s.confirmed(1, 10);
        s.confirmed(2, 11);
        assert_eq!(s.undo().unwrap().stroke, 2);
        s.refused(true, 2);
        assert_eq!(s.counts(), (2, 0));
        assert_eq!(s.undo().unwrap().stroke, 2, "named again");
        assert_eq!(s.redo().unwrap().stroke, 2);
        s.refused(false, 2);
        assert_eq!(s.counts(), (1, 1));
        assert_eq!(s.redo().unwrap().stroke, 2);
        // A second refusal of the same batch changes nothing more.
        s.refused(true, 7);
        assert_eq!(s.counts(), (2, 0));
    }
}
