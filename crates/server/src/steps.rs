//! The block world's physics steps on the ordering thread, one at a time between the
//! commands.
//!
//! ```text
//!  tick (every 50 ms) ──▶ steps due by the clock ──▶ Stepping
//!  serve loop, while steps are owed: one command ──▶ one step (its events ordered after
//!              that command) ──▶ the next command ──▶ one step … ──▶ done: the clock caught
//!              up (or the rest dropped); else: batches of every queued command
//! ```
//!
//! A tick used to run all its steps at once (up to [`BLOCK_BUDGET`], 8 ms), and every op
//! that arrived meanwhile waited for them. Now an op waits for at most one step, and the
//! steps are not held back by a long queue: while a tick's steps are owed, the ordering
//! thread takes one command, then one step, in turn (`Order::serve`).
//!
//! A block op is logged with the physics step it was applied after ([`Order::log_step`]),
//! so a replay steps as often between the same block ops. A terrain op carries no step: a
//! replay applies it where the log has it among the block ops, not between the same two
//! steps (as before, when ticks fell between terrain ops too).

use std::time::{Duration, Instant};

use super::order::Order;

/// Most physics steps one tick runs; a server further behind drops the rest (slows down).
const MAX_STEPS_PER_TICK: u64 = 30;
/// The ordering thread's time one tick's physics steps may take (of 50 ms), summed over the
/// steps (the commands taken between them do not count).
const BLOCK_BUDGET: Duration = Duration::from_millis(8);

/// The steps one tick owes, taken one at a time ([`Order::step_once`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Stepping {
    /// When the tick found them due.
    at: Instant,
    /// Steps due by the clock at `at`.
    due: u64,
    /// Steps run so far.
    done: u64,
    /// Time the steps run so far took.
    spent: Duration,
}

impl Order {
    /// At a tick: works out the physics steps the clock asks for (only while a piece is
    /// awake and no collider a falling piece needs is missing), to be run one at a time
    /// between the commands ([`Order::step_once`]). Steps the last tick still owed are
    /// dropped: behind the clock, the falls slow down rather than the ops. Colliders are
    /// built on the ground worker meanwhile; a changed chunk's old collider serves until its
    /// new one comes.
    pub(super) fn start_steps(&mut self) {
        if self.sim.stepping.is_some() {
            self.end_steps();
        }
        let now = Instant::now();
        self.ensure_falling();
        self.build_colliders();
        if !self.sim.colliders.ready() || !self.blocks_awake() {
            self.sim.stepped_at = now;
            self.flush_block_events();
            return;
        }
        let dt = f64::from(self.sim.physics.settings().timestep);
        let due = (now
            .saturating_duration_since(self.sim.stepped_at)
            .as_secs_f64()
            / dt) as u64;
        self.sim.stepping = Some(Stepping {
            at: now,
            due,
            done: 0,
            spent: Duration::ZERO,
        });
        if due == 0 {
            self.end_steps();
        }
    }

    /// Whether a tick's physics steps are still to run.
    pub(super) fn stepping(&self) -> bool {
        self.sim.stepping.is_some()
    }

    /// Runs the next physics step the tick owes and sends what happened (ordered after
    /// everything taken before it); ends the tick's stepping when none is left, the budget
    /// is spent or a falling piece waits for a collider.
    pub(super) fn step_once(&mut self) {
        let Some(mut s) = self.sim.stepping else {
            return;
        };
        let over = s.done > 0 && s.spent >= BLOCK_BUDGET;
        // A piece that fell into a chunk without a collider waits for it (`ready`).
        if s.done >= s.due.min(MAX_STEPS_PER_TICK) || !self.sim.colliders.ready() || over {
            return self.end_steps();
        }
        let start = Instant::now();
        let dt = self.sim.physics.settings().timestep;
        let ground = loam_blocks::FieldGround(&self.field);
        if self.sim.blocks.step(&mut self.sim.physics, dt).is_err()
            || self
                .sim
                .blocks
                .bury_sunken(&mut self.sim.physics, &ground)
                .is_err()
        {
            return self.end_steps();
        }
        s.done += 1;
        self.ensure_falling();
        self.flush_block_events();
        let took = start.elapsed();
        s.spent += took;
        self.latency.stepped(took);
        self.sim.stepping = Some(s);
        if s.done >= s.due.min(MAX_STEPS_PER_TICK) {
            self.end_steps();
        }
    }

    /// Ends the tick's stepping: the clock moves on by the steps run, or to the tick's time
    /// if some were not (they are dropped).
    fn end_steps(&mut self) {
        let Some(s) = self.sim.stepping.take() else {
            return;
        };
        self.build_colliders();
        let dt = f64::from(self.sim.physics.settings().timestep);
        self.sim.stepped_at = if s.done < s.due {
            s.at
        } else {
            self.sim.stepped_at + Duration::from_secs_f64(s.done as f64 * dt)
        };
        self.flush_block_events();
    }
}
