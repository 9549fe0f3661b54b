//! The ordering thread of a node (`loam serve --nats`): its clients' ops go to the world's
//! stream first, and every op comes back from the stream, in the stream's order, to be
//! applied by the one rule ([`crate::cluster::log::apply`]) that every node and
//! `loam world export` share.
//!
//! ```text
//!  client op ──▶ checks (op id, decode, edit budget) ──▶ publisher ──▶ JetStream (ordered,
//!                                                                       deduplicated)
//!  follower ◀── the stream, in order ◀──────────────────────────────────────┘
//!     └──▶ Command::Logged ──▶ apply ──▶ the group: local world file, acks, broadcasts
//! ```

use std::time::Instant;

use loam_field::LogEntry;
use tokio::sync::mpsc::UnboundedSender;

use super::{Command, Order};
use crate::cluster::log::{Applied, Kind, Names, OpMessage, Position, apply};

/// An op on its way to the stream.
#[derive(Debug)]
pub(crate) struct Outgoing {
    pub subject: String,
    pub msg_id: String,
    pub payload: Vec<u8>,
}

/// The ordering thread's part of a node: where its ops go and where it stands in the
/// stream.
pub(crate) struct NodeLink {
    pub names: Names,
    pub publish: UnboundedSender<Outgoing>,
    /// The last stream sequence applied.
    pub applied: u64,
    /// The world's tag ([`crate::cluster::Genesis::tag`]), saved with the position.
    pub tag: String,
    /// Joins that resume from an op this node has not applied yet (the client came from a
    /// node further along), with when they came: let in once this node has caught up, or
    /// after [`JOIN_PATIENCE`] (the client then finds the node behind it and says so).
    pub waiting_joins: Vec<(Instant, Command)>,
    /// While the node applies what the stream held when it started: from which sequence,
    /// up to which, since when (logged once reached: how long a restart takes to catch up).
    pub catching_up: Option<(u64, u64, Instant)>,
    /// This node's id (1–4095).
    pub node_id: u16,
    /// Its blocks: the replica its clients see, and whether it decides them
    /// (`order/node_blocks.rs`).
    pub blocks: super::node_blocks::NodeBlocks,
    /// Whether NATS is out of reach now (the clients were told, and joiners are).
    pub log_away: bool,
}

/// The notice a node's clients get when its NATS goes (`away`) or comes back.
pub(crate) fn log_notice(away: bool) -> crate::protocol::ServerMessage {
    use crate::protocol::{Notice, NoticeKind, ServerMessage};
    ServerMessage::Notice(if away {
        Notice {
            kind: NoticeKind::LogAway,
            text: "the world's log (NATS) is out of reach: your edits wait and are applied \
                   when it is back"
                .into(),
        }
    } else {
        Notice {
            kind: NoticeKind::LogBack,
            text: "the world's log (NATS) is back: edits are applied again".into(),
        }
    })
}

/// How long a resuming join waits for its node to catch up with the client's last op.
pub(crate) const JOIN_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

impl Order {
    /// Where the world file stands in the stream after the records handed to the writer
    /// (`None` for a server that follows no stream).
    pub(super) fn followed(&self) -> Option<String> {
        self.node.as_ref().map(|n| {
            Position {
                world: n.tag.clone(),
                seq: n.applied,
                open: self.journal.open_stroke(),
            }
            .encode()
        })
    }

    /// A local client's op on a node: checked as the single server checks it before
    /// applying (op ids increase, the record decodes, the edit budget admits it), then
    /// published. It is applied, acknowledged and broadcast when it comes back from the
    /// stream ([`Order::take_logged`]).
    pub(super) fn publish_op(&mut self, client: u64, op_id: u64, entry: Result<LogEntry, String>) {
        let Some(a) = self.admit_op(client, op_id, entry) else {
            return;
        };
        // The budget is this node's: a client is connected to one node at a time. Charged
        // now with the op's footprint (an undo's is known only when applied: uncharged).
        let known = if a.reverts { None } else { a.samples };
        self.edit_budgets.charge(client, known.unwrap_or(0), a.now);
        let entry = a.entry;
        let Some(node) = &self.node else { return };
        let subject = node.names.op_subject(&entry.op, self.field.settings());
        self.publish_client_op(subject, Kind::Terrain, client, op_id, entry.encode());
    }

    /// Publishes a local client's op (terrain, or a block request) on `subject` under its
    /// message id; refuses it if the node is shutting down.
    pub(super) fn publish_client_op(
        &mut self,
        subject: String,
        kind: Kind,
        client: u64,
        op_id: u64,
        record: Vec<u8>,
    ) {
        let Some(node) = &self.node else { return };
        let m = OpMessage {
            kind,
            author: client,
            op_id,
            record,
        };
        let out = Outgoing {
            subject,
            msg_id: m.msg_id(),
            payload: m.encode(),
        };
        if node.publish.send(out).is_err() {
            self.refuse(client, op_id, "the node is shutting down".into());
        }
    }

    /// Message `seq` of the stream: applied by the shared rule, then taken into the group
    /// as the single server takes its ops (the local world file, acks to a local author,
    /// broadcasts and patches to local clients).
    pub(super) fn take_logged(&mut self, seq: u64, bytes: &[u8]) {
        let Some(node) = self.node.as_mut() else {
            return;
        };
        if seq <= node.applied {
            // A redelivery (a consumer that resumed): already applied.
            return;
        }
        node.applied = seq;
        if let Some((from, to, since)) = node.catching_up
            && seq >= to
        {
            tracing::info!(
                "caught up with the world's stream: applied messages {}..={to} in {:.3} s",
                from + 1,
                since.elapsed().as_secs_f64()
            );
            node.catching_up = None;
        }
        match apply(&mut self.journal, &mut self.field, bytes) {
            Applied::Accepted {
                author,
                op_id,
                entry,
                outcome,
            } => {
                self.note_op_id(author, op_id);
                let may_cut = super::super::blocks::may_cut(&entry.op);
                self.accept_terrain(author, op_id, entry, &outcome);
                if let Some(changed) = outcome.changed {
                    self.after_terrain(changed, may_cut);
                }
            }
            Applied::Refused {
                author,
                op_id,
                reason,
            } => {
                self.note_op_id(author, op_id);
                self.refuse(author, op_id, reason);
            }
            Applied::Cut { removed, lump } => self.take_cut(seq, removed, lump),
            Applied::Blocks(m) => self.take_blocks_message(seq, &m),
            Applied::Skipped { why } => {
                tracing::warn!(
                    stream_seq = seq,
                    "skipped a message of the world's stream: {why}"
                );
            }
        }
    }

    /// NATS went away (`up` false) or came back: every client is told once.
    pub(super) fn log_reach(&mut self, up: bool) {
        let Some(node) = &mut self.node else { return };
        if node.log_away != up {
            return;
        }
        node.log_away = !up;
        let frame: bytes::Bytes = log_notice(!up).encode().into();
        let mut dead = Vec::new();
        for (id, peer) in &self.clients.peers {
            crate::frames::push(*id, peer, frame.clone(), self.clients.outbox, &mut dead);
        }
        self.bury(dead);
    }

    /// Whether `cmd` is a join that resumes from beyond what this node has applied: it
    /// waits ([`NodeLink::waiting_joins`]).
    pub(super) fn join_waits(&mut self, cmd: Command) -> Option<Command> {
        let last = self.journal.last_seq();
        match (&cmd, self.node.as_mut()) {
            (Command::Join { hello, .. }, Some(node))
                if hello.resume.as_ref().is_some_and(|r| r.last_seq > last) =>
            {
                node.waiting_joins.push((Instant::now(), cmd));
                None
            }
            _ => Some(cmd),
        }
    }

    /// Lets in the waiting joins whose node caught up, or that waited long enough.
    pub(crate) fn let_in_joins(&mut self) {
        let last = self.journal.last_seq();
        let Some(node) = self.node.as_mut() else {
            return;
        };
        if node.waiting_joins.is_empty() {
            return;
        }
        let now = Instant::now();
        let (ready, wait): (Vec<_>, Vec<_>) = std::mem::take(&mut node.waiting_joins)
            .into_iter()
            .partition(|(at, cmd)| match cmd {
                Command::Join { hello, .. } => {
                    hello.resume.as_ref().is_none_or(|r| r.last_seq <= last)
                        || now.duration_since(*at) >= JOIN_PATIENCE
                }
                _ => true,
            });
        node.waiting_joins = wait;
        for (_, cmd) in ready {
            // Joins wait for nothing in flight; one that must is deferred as any.
            if self.idle() {
                self.handle(cmd);
            } else {
                self.durability.deferred.push_back(cmd);
            }
        }
    }

    /// Each author's last op id in the stream before this node's start (read there).
    pub(crate) fn note_op_ids(&mut self, last: std::collections::BTreeMap<u64, u64>) {
        for (author, op_id) in last {
            self.note_op_id(author, op_id);
        }
    }

    /// The last op id taken from `author`, as every node sees it in the stream (the
    /// welcome's `last_op_id` on whichever node the client joins next).
    pub(super) fn note_op_id(&mut self, author: u64, op_id: u64) {
        let last = self.last_op.entry(author).or_insert(op_id);
        *last = (*last).max(op_id);
    }
}
