//! The ordering thread's side of the writer: ops handed to it as they are applied, its
//! acknowledgements taken (releasing what became durable), the bakes' snapshots, and the
//! last writes on a shutdown or a failure.

use std::time::Instant;

use super::Order;
use crate::error::ServerError;
use crate::writer::{Ack, Write};

impl Order {
    /// Takes one of the writer's reports; `Some` with the thread's result when it must stop.
    pub(super) fn take_ack(&mut self, ack: Option<Ack>) -> Option<Result<(), ServerError>> {
        match ack {
            Some(Ack::Durable {
                seq,
                records,
                took,
                at,
            }) => {
                self.latency.appended(records, took);
                self.latency.acked(at.elapsed());
                self.durability.durable = self.durability.durable.max(seq);
                self.release();
                if self.resume_deferred() {
                    return Some(self.close("the server is shutting down"));
                }
                None
            }
            Some(Ack::Failed(why)) => Some(self.fail(why)),
            None => Some(self.fail("the writer stopped".into())),
        }
    }

    /// The store failed: everyone is told, the thread stops.
    pub(super) fn fail(&mut self, why: String) -> Result<(), ServerError> {
        for (_, p) in std::mem::take(&mut self.clients.peers) {
            p.link.kill("the server's world store failed");
        }
        Err(match self.durability.writer.finish(None) {
            Err(e) => e,
            Ok(()) => ServerError::ServerStopped(why),
        })
    }

    /// Whether nothing is applied but not yet released.
    pub(super) fn idle(&self) -> bool {
        self.durability.inflight.is_empty()
            && self.durability.unsent.is_empty()
            && self.durability.written <= self.durability.durable
    }

    /// Hands the applied ops to the writer (which commits whatever has queued up while it
    /// synced the last group as the next one), or a bake when one is due and nothing is in
    /// flight.
    pub(super) fn pump(&mut self) {
        if let Some(last) = self.durability.unsent.last() {
            self.durability.written = last.seq();
            self.durability.writer.send(Write::Append(
                std::mem::take(&mut self.durability.unsent),
                self.followed(),
            ));
        } else if self.idle()
            && self.durability.bake_every > 0
            && self.journal.last_seq() - self.durability.baked >= self.durability.bake_every
        {
            self.bake();
        }
    }

    /// A snapshot of the field, history and blocks for the writer to bake.
    pub(super) fn bake_write(&self) -> Write {
        Write::Bake {
            field: Box::new(self.field.clone()),
            history: Box::new(self.journal.history().clone()),
            seq: self.journal.last_seq(),
            step: self.log_step(),
            blocks: self.shown_blocks().save().encode(),
        }
    }

    /// Hands a snapshot of the field, history and blocks to the writer to bake (nothing in
    /// flight, so every op it covers is in the log). The writer encodes it beside the next
    /// groups, so the ops go on.
    pub(super) fn bake(&mut self) {
        let start = Instant::now();
        let w = self.bake_write();
        self.latency.snapshotted(start.elapsed());
        self.durability.writer.send(w);
        self.durability.baked = self.journal.last_seq();
    }

    /// Disconnects everyone, bakes what the last bake does not cover, closes the store.
    pub(super) fn close(&mut self, reason: &str) -> Result<(), ServerError> {
        for (_, p) in std::mem::take(&mut self.clients.peers) {
            p.link.kill(reason);
        }
        // Applied ops not yet written go first (nobody saw them acknowledged, but the bake
        // below covers them).
        // A node saves where it stands even with no record to write: block outcomes and
        // skipped messages move it without adding any.
        if !self.durability.unsent.is_empty() || self.node.is_some() {
            self.durability.writer.send(Write::Append(
                std::mem::take(&mut self.durability.unsent),
                self.followed(),
            ));
        }
        // A node always bakes: its blocks come from the stream's outcomes, which add no op,
        // and a load of its file replays block ops by the single server's rule, not the
        // replica's, so the file must hold the replica as it is.
        let last = (self.journal.last_seq() > self.durability.baked || self.node.is_some())
            .then(|| self.bake_write());
        self.durability.writer.finish(last)
    }
}
