//! Strokes as a front end makes them: the ops of one held button, repeated at an interval,
//! with what a brush takes once at the start of the stroke (the flatten plane).

use std::time::Duration;

use crate::Instant;

/// The default interval between the ops of a held button.
pub const DEFAULT_REPEAT: Duration = Duration::from_millis(120);

/// One held button: when to emit the next op, and the stroke's id and plane.
///
/// ```
/// use std::time::{Duration, Instant};
/// use loam_world::StrokeClock;
///
/// let t0 = Instant::now();
/// let mut s = StrokeClock::press(7, t0, Duration::from_millis(120));
/// assert_eq!(s.id(), 7);
/// assert!(s.due(t0)); // the press emits at once
/// assert!(!s.due(t0 + Duration::from_millis(100)));
/// assert!(s.due(t0 + Duration::from_millis(120)));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct StrokeClock {
    id: u64,
    repeat: Duration,
    next: Instant,
    plane: Option<([f64; 3], [f64; 3])>,
}

impl StrokeClock {
    /// A button pressed at `now` starts stroke `id` (take it from
    /// [`World::next_stroke`](crate::World::next_stroke)); ops repeat every `repeat` while it
    /// is held (a zero interval emits on every call).
    pub fn press(id: u64, now: Instant, repeat: Duration) -> Self {
        Self {
            id,
            repeat,
            next: now,
            plane: None,
        }
    }

    /// The stroke's id: every op of the stroke goes to
    /// [`World::apply_in_stroke`](crate::World::apply_in_stroke) with it.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Whether an op is due at `now` (once per interval; a frame that comes late emits one op,
    /// not a burst), and if so, schedules the next.
    pub fn due(&mut self, now: Instant) -> bool {
        if now < self.next {
            return false;
        }
        // From `now`, not from when it was due: a late frame emits one op, not a burst.
        self.next = now.checked_add(self.repeat).unwrap_or(now);
        true
    }

    /// The plane a flatten stroke holds: the first call stores `hit` (a point and a normal,
    /// from the field raycast at the press), every later call returns the stored plane.
    pub fn plane(&mut self, hit: ([f64; 3], [f64; 3])) -> ([f64; 3], [f64; 3]) {
        *self.plane.get_or_insert(hit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_at_the_interval_without_bursts() {
        let t0 = Instant::now();
        let ms = Duration::from_millis;
        let mut s = StrokeClock::press(3, t0, DEFAULT_REPEAT);
        let frames: Vec<bool> = (0..=20).map(|i| s.due(t0 + ms(16 * i))).collect();
        // Frames at 0, 16, …, 320 ms: ops at 0, 128 (first frame ≥ 120) and 256 (≥ 248).
        let at: Vec<u64> = frames
            .iter()
            .enumerate()
            .filter(|(_, d)| **d)
            .map(|(i, _)| 16 * i as u64)
            .collect();
        assert_eq!(at, vec![0, 128, 256]);
        // A 1 s stall emits one op, then the interval starts again.
        assert!(s.due(t0 + ms(1400)));
        assert!(!s.due(t0 + ms(1450)));
        assert!(s.due(t0 + ms(1520)));
    }

    #[test]
    fn the_plane_is_taken_once() {
        let mut s = StrokeClock::press(1, Instant::now(), DEFAULT_REPEAT);
        let first = ([0.0, 10.0, 0.0], [0.0, 1.0, 0.0]);
        assert_eq!(s.plane(first), first);
        assert_eq!(s.plane(([5.0, 3.0, 1.0], [1.0, 0.0, 0.0])), first);
    }
}
