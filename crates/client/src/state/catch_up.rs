//! Snapshots and region catch-ups taken into the client's fields: bricks and block records
//! of a region arrive in parts; the last part resets what the server did not list.

use std::collections::BTreeSet;

use loam_blocks::BlockDelta;
use loam_field::{Brick, BrickKey};

use super::{BlockCatching, Catching, ClientEvent, State, key_in};
use crate::error::ClientError;
use crate::protocol::{BlockCatchUp, CatchUp, decode_brick};
use loam_protocol::blocks::{brick_of_block, brick_of_piece};

impl State {
    /// Part of a block snapshot: records applied; when done, what the client holds in the
    /// region (outside `keep`) that the server did not list is gone.
    pub(super) fn block_catch_up(&mut self, c: BlockCatchUp) -> Result<(), ClientError> {
        if !c.region.is_valid() || c.seq < self.last_seq {
            return Err(ClientError::Protocol(format!(
                "block catch-up at op {} after op {}",
                c.seq, self.last_seq
            )));
        }
        let same = self
            .replica
            .catching
            .as_ref()
            .is_some_and(|k| k.region == c.region && k.keep == c.keep);
        if !same {
            self.replica.catching = Some(BlockCatching {
                region: c.region,
                keep: c.keep,
                held: BTreeSet::new(),
                pieces: BTreeSet::new(),
            });
        }
        self.apply_delta(&c.delta)?;
        let k = self.replica.catching.as_mut().expect("set above");
        k.held.extend(c.delta.held.iter().map(|h| h.pos));
        k.pieces.extend(c.delta.pieces.iter().map(|p| p.id));
        if !c.done {
            return Ok(());
        }
        let k = self.replica.catching.take().expect("set above");
        let vs = self.voxel_size();
        let outside_keep =
            |b: [i32; 3]| c.region.contains(b) && c.keep.is_none_or(|kb| !kb.contains(b));
        let stale = BlockDelta {
            unheld: self
                .replica
                .world
                .store()
                .iter()
                .map(|(pos, _)| pos)
                .filter(|pos| outside_keep(brick_of_block(*pos, vs)) && !k.held.contains(pos))
                .collect(),
            gone: self
                .replica
                .world
                .pieces()
                .filter(|p| outside_keep(brick_of_piece(p, vs)) && !k.pieces.contains(&p.id))
                .map(|p| p.id)
                .collect(),
            ..Default::default()
        };
        self.apply_delta(&stale)
    }

    pub(super) fn catch_up(&mut self, c: CatchUp) -> Result<(), ClientError> {
        if !c.region.is_valid() || c.seq < self.last_seq {
            return Err(ClientError::Protocol(format!(
                "catch-up at op {} after op {}",
                c.seq, self.last_seq
            )));
        }
        let same = self
            .catching
            .as_ref()
            .is_some_and(|k| k.region == c.region && k.keep == c.keep);
        if !same {
            self.catching = Some(Catching {
                region: c.region,
                keep: c.keep,
                got: BTreeSet::new(),
            });
        }
        let band = self.meta.field.band();
        let mut bricks = Vec::with_capacity(c.bricks.len());
        for w in &c.bricks {
            let (k, b) = decode_brick(w, band)?;
            if !key_in(&c.region, k) {
                return Err(ClientError::Protocol(
                    "a catch-up brick outside its region".into(),
                ));
            }
            bricks.push((k, b));
        }
        let catching = self.catching.as_mut().expect("set above");
        catching.got.extend(bricks.iter().map(|(k, _)| *k));
        for (k, _) in &bricks {
            self.touched_brick(*k);
        }
        self.confirmed.insert_bricks(bricks);
        self.prediction.stale = true;
        if !c.done {
            return Ok(());
        }
        let catching = self.catching.take().expect("set above");
        // Bricks held in the new part of the region that the server did not send are the
        // generator's there.
        let s = *self.confirmed.settings();
        let reset: Vec<(BrickKey, Brick)> = self
            .confirmed
            .bricks()
            .map(|(k, _)| k)
            .filter(|&k| {
                key_in(&c.region, k)
                    && c.keep.is_none_or(|b| !key_in(&b, k))
                    && !catching.got.contains(&k)
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|k| {
                (
                    k,
                    Brick::generate(&self.generator, k, s.voxel_size, s.band()),
                )
            })
            .collect();
        for (k, _) in &reset {
            self.touched_brick(*k);
        }
        self.confirmed.insert_bricks(reset);
        self.region = Some(c.region);
        self.last_seq = c.seq;
        self.caught_up = true;
        self.events.push_back(ClientEvent::CaughtUp {
            seq: c.seq,
            region: c.region,
            bricks: catching.got.len(),
        });
        Ok(())
    }
}
