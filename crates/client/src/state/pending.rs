//! The own ops not yet confirmed: the prediction built from them, queueing an op, and what
//! a reconnect sends again.

use std::collections::{BTreeMap, VecDeque};
use std::time::Instant;

use loam_field::{EditOp, Field, LogEntry};

use super::{ClientEvent, Pending, State};
use crate::error::ClientError;
use crate::protocol::Welcome;

impl State {
    /// The predicted field (the confirmed one when nothing is pending).
    ///
    /// The bricks where the field shown changes (those the old prediction's ops wrote, and
    /// those the new one's write) are noted for [`State::take_changed`].
    pub fn predicted(&mut self) -> &Field {
        if self.pending.is_empty() {
            self.prediction.field = None;
            self.prediction.stale = false;
            self.forget_prediction();
        } else if self.prediction.stale || self.prediction.field.is_none() {
            self.forget_prediction();
            let mut f = self.confirmed.clone();
            let mut wrote = Vec::new();
            for p in self.pending.iter_mut() {
                // An op the server may still take can fail here (e.g. an undo): it simply
                // predicts nothing. A plan still good on the field as it is now (the
                // confirmed field has not changed since) is committed; else the op is
                // planned again, and that plan kept for the confirmation.
                if matches!(p.op, EditOp::Undo { .. } | EditOp::Redo { .. }) {
                    continue;
                }
                if let Some(o) = p.planned.as_ref().and_then(|e| f.commit_edit(e).ok()) {
                    wrote.push(o.changed);
                    continue;
                }
                p.planned = f.plan_edit(&p.op).ok();
                if let Some(e) = &p.planned {
                    let o = f.commit_edit(e).expect("planned on this field just now");
                    wrote.push(o.changed);
                }
            }
            for changed in wrote {
                self.predicted_wrote(changed);
            }
            self.prediction.field = Some(f);
            self.prediction.stale = false;
        }
        self.prediction.field.as_ref().unwrap_or(&self.confirmed)
    }

    /// Notes the bricks the prediction's ops wrote as changed in the field shown, and
    /// forgets them: the prediction is dropped or built again.
    fn forget_prediction(&mut self) {
        let keys = std::mem::take(&mut self.prediction.keys);
        for k in keys {
            self.touched_brick(k);
        }
    }

    /// Notes that a prediction's op wrote the samples `changed`.
    fn predicted_wrote(&mut self, changed: Option<loam_field::SampleBox>) {
        if let Some(b) = changed {
            self.prediction.keys.extend(super::bricks_meeting(b));
            self.touched(Some(b));
        }
    }

    /// Checks an own op and queues it; the prediction ([`State::predicted`]) includes it.
    /// Undo and redo are not predicted.
    ///
    /// The prediction is made when it is asked for: an up-to-date one (someone looks at it,
    /// as the editor does every frame) takes the op at once. Otherwise, with nothing
    /// pending, the op is planned on the confirmed field and the plan kept, to be written
    /// when the server confirms the op first; behind other pending ops it is only checked
    /// ([`Field::check_edit`]) and planned when the server's order reaches it. So a client
    /// that does not look (a bot, the load benchmark's clients) plans each op once and
    /// copies no brick for a prediction.
    ///
    /// # Errors
    /// The field's [`loam_field::EditError`]: nothing is queued then.
    pub fn predict(&mut self, stroke: u64, op: EditOp) -> Result<(u64, Vec<u8>), ClientError> {
        let mut planned = None;
        if !matches!(op, EditOp::Undo { .. } | EditOp::Redo { .. }) {
            match self.prediction.field.as_mut() {
                Some(f) if !self.prediction.stale && !self.pending.is_empty() => {
                    // Planned and committed on the prediction: the confirmed field commits
                    // the same plan if the server confirms the pending ops in this order.
                    let plan = f.plan_edit(&op)?;
                    let o = f.commit_edit(&plan)?;
                    planned = Some(plan);
                    self.predicted_wrote(o.changed);
                }
                _ => {
                    if self.pending.is_empty() {
                        planned = Some(self.confirmed.plan_edit(&op)?);
                    } else {
                        // A plan on the confirmed field would not be this op's (the pending
                        // ops come first): only checked now, planned once when confirmed.
                        self.confirmed.check_edit(&op)?;
                    }
                    self.prediction.field = None;
                    self.prediction.stale = false;
                }
            }
        }
        let op_id = self.next_op_id;
        self.next_op_id += 1;
        let entry = LogEntry::new(0, stroke, op.clone()).encode();
        let message = crate::protocol::ClientMessage::Op { op_id, entry }.encode();
        self.pending.push_back(Pending {
            op_id,
            stroke,
            op,
            sent_at: Instant::now(),
            message: message.clone(),
            sent: true,
            planned,
        });
        Ok((op_id, message))
    }

    /// Marks a predicted op as not sent (queued while disconnected).
    pub fn unsent(&mut self, op_id: u64) {
        if let Some(p) = self.pending.iter_mut().find(|p| p.op_id == op_id) {
            p.sent = false;
        }
    }

    /// Takes back an op that could not be sent: it leaves the prediction.
    pub fn unpredict(&mut self, op_id: u64) {
        self.pending.retain(|p| p.op_id != op_id);
        self.prediction.stale = true;
    }

    /// After a reconnect's welcome: the ops the server took (up to `last_op_id`) come back
    /// in its order or are in its snapshot, so they leave the pending list; the rest are
    /// returned to be sent again. If the server cannot tell (`None`), every pending op that
    /// was sent is dropped and reported lost; ops queued while disconnected (terrain and
    /// block ops) are sent.
    pub fn rewelcome(&mut self, welcome: &Welcome) -> Vec<Vec<u8>> {
        self.id = welcome.client_id;
        self.resume_key = welcome.resume_key;
        self.caught_up = false;
        self.catching = None;
        // The last connection's hashes are not answered on this one.
        self.hash_marks.clear();
        self.replica.catching = None;
        // The server lists everyone again after a join.
        self.players.clear();
        let before = self.pending.len();
        match welcome.last_op_id {
            Some(last) => {
                let mut op_ids: Vec<u64> = self
                    .pending
                    .iter()
                    .map(|p| p.op_id)
                    .chain(self.replica.pending.keys().copied())
                    .filter(|&id| id <= last)
                    .collect();
                self.pending.retain(|p| p.op_id > last);
                self.replica.pending.retain(|&id, _| id > last);
                if !op_ids.is_empty() {
                    op_ids.sort_unstable();
                    self.events.push_back(ClientEvent::Resumed { op_ids });
                }
            }
            None => {
                let (sent, queued): (VecDeque<Pending>, VecDeque<Pending>) =
                    self.pending.drain(..).partition(|p| p.sent);
                self.pending = queued;
                let mut op_ids: Vec<u64> = sent.into_iter().map(|p| p.op_id).collect();
                let blocks = std::mem::take(&mut self.replica.pending);
                let (sent, queued): (BTreeMap<_, _>, BTreeMap<_, _>) =
                    blocks.into_iter().partition(|(_, p)| p.sent);
                self.replica.pending = queued;
                op_ids.extend(sent.into_keys());
                op_ids.sort_unstable();
                if !op_ids.is_empty() {
                    self.events.push_back(ClientEvent::Lost { op_ids });
                }
            }
        }
        if self.pending.len() != before {
            self.prediction.stale = true;
        }
        let pending = &self.pending;
        self.reverting
            .retain(|id, _| pending.iter().any(|p| p.op_id == *id));
        // Again in op id order (the server takes only increasing ids).
        let mut again: Vec<(u64, Vec<u8>)> = self
            .pending
            .iter()
            .map(|p| (p.op_id, p.message.clone()))
            .chain(
                self.replica
                    .pending
                    .iter()
                    .map(|(&id, p)| (id, p.message.clone())),
            )
            .collect();
        again.sort_by_key(|(id, _)| *id);
        // Handed to the new connection now: from here on their fate is the server's to tell.
        for p in &mut self.pending {
            p.sent = true;
        }
        for p in self.replica.pending.values_mut() {
            p.sent = true;
        }
        again.into_iter().map(|(_, m)| m).collect()
    }
}
