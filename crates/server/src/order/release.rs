//! Releasing what became durable: acknowledgements and broadcasts in sequence order, each
//! op's patches right after it, refusals in their place, and the resume ring fed as they go.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use loam_field::BrickKey;

use super::{Item, Order, chunks, patch_of, push};
use crate::protocol::{OpRecord, ServerMessage, WireSamples};
use crate::resume::RingEntry;

impl Order {
    /// Sends what is durable, in order: acks and broadcasts, patches after their op,
    /// refusals in their place.
    pub(super) fn release(&mut self) {
        let mut dead = Vec::new();
        while let Some(item) = self.durability.inflight.pop_front() {
            let waits = match &item {
                // On a node the stream is the durable log (JetStream stored the op before the
                // node applied it): the world file is its snapshot, and a node that dies
                // before writing it replays the op from the stream.
                Item::Accepted(a) => self.node.is_none() && a.entry.seq > self.durability.durable,
                Item::Block(b) => b.seq > self.durability.durable,
                Item::Refused { .. } => false,
            };
            if waits {
                self.durability.inflight.push_front(item);
                break;
            }
            match item {
                Item::Block(b) => {
                    if !b.event {
                        if b.author == 0 {
                            self.made += 1;
                        } else {
                            self.accepted += 1;
                        }
                        self.durability.released = b.seq;
                    }
                    for (&id, peer) in &mut self.clients.peers {
                        if id == b.author
                            || b.to_all
                            || b.blocks.is_some_and(|w| w.intersects(&peer.region))
                        {
                            push(id, peer, b.frame.clone(), self.clients.outbox, &mut dead);
                            peer.informed = peer.informed.max(b.seq);
                        }
                    }
                    self.clients.ring.push(RingEntry {
                        seq: b.seq,
                        event: b.event,
                        author: b.author,
                        frame: b.frame,
                        written: (!b.event).then_some(None),
                        reach: None,
                        blocks: b.blocks,
                        to_all: b.to_all,
                    });
                }
                Item::Refused {
                    client,
                    op_id,
                    reason,
                } => {
                    self.refused += 1;
                    if let Some(p) = self.clients.peers.get(&client) {
                        let msg = ServerMessage::OpRefused { op_id, reason };
                        push(
                            client,
                            p,
                            msg.encode().into(),
                            self.clients.outbox,
                            &mut dead,
                        );
                    }
                }
                Item::Accepted(a) => {
                    if a.author == 0 {
                        self.made += 1;
                    } else {
                        self.accepted += 1;
                    }
                    let seq = a.entry.seq;
                    self.durability.released = seq;
                    let frame: Bytes = ServerMessage::Op(OpRecord {
                        seq,
                        author: a.author,
                        op_id: a.op_id,
                        entry: a.entry.encode(),
                    })
                    .encode()
                    .into();
                    for (&id, peer) in &mut self.clients.peers {
                        if id == a.author || a.written.is_some_and(|w| w.intersects(&peer.region)) {
                            push(id, peer, frame.clone(), self.clients.outbox, &mut dead);
                            peer.informed = seq;
                        }
                    }
                    // Each brick's changed samples are encoded once, for every client.
                    let mut boxes: BTreeMap<BrickKey, Arc<WireSamples>> = BTreeMap::new();
                    for (client, bricks) in a.patches {
                        let (Some(p), Some(changed)) = (self.clients.peers.get(&client), a.changed)
                        else {
                            continue;
                        };
                        let wires = bricks
                            .iter()
                            .map(|(k, b)| {
                                boxes
                                    .entry(*k)
                                    .or_insert_with(|| Arc::new(patch_of(*k, b, &changed)))
                                    .clone()
                            })
                            .collect();
                        let bytes = |w: &WireSamples| w.data.len();
                        for f in chunks(wires, self.max_message, bytes, |samples, _| {
                            ServerMessage::Patch { seq, samples }
                        }) {
                            push(client, p, f, self.clients.outbox, &mut dead);
                        }
                    }
                    self.clients.ring.push(RingEntry {
                        seq,
                        event: false,
                        author: a.author,
                        frame,
                        written: Some(a.written),
                        reach: a.reach,
                        blocks: None,
                        to_all: false,
                    });
                }
            }
        }
        self.latency
            .released(self.durability.released, Instant::now());
        self.bury(dead);
    }
}
