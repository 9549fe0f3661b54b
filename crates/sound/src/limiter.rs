//! At most N sounds may start in any window of time (issue 9: 6 per 0.1 s).

use std::collections::VecDeque;

/// Default number of sounds that may start in one window.
pub const MAX_STARTS: usize = 6;
/// Default window length, seconds.
pub const WINDOW_S: f64 = 0.1;

/// Caps how many sounds start in any sliding window: a start at time `t` is accepted when
/// fewer than `max_starts` accepted starts lie in `(t - window_s, t]`. Rejected starts do not
/// count. Deterministic: the answer depends only on the sequence of times passed in.
/// Times are rounded to whole nanoseconds first, so `0.11 - 0.01` is exactly one 0.1 s
/// window despite binary floating point.
///
/// ```
/// use loam_sound::RateLimiter;
/// let mut limit = RateLimiter::default(); // 6 per 0.1 s
/// let accepted = (0..7).filter(|i| limit.try_start(*i as f64 * 0.01)).count();
/// assert_eq!(accepted, 6);
/// assert!(limit.try_start(0.1)); // the start at 0.0 has left the window
/// ```
#[derive(Clone, Debug)]
pub struct RateLimiter {
    max_starts: usize,
    window_s: f64,
    /// Window length, integer nanoseconds.
    window_ns: i64,
    /// Accepted start times still inside the window, integer nanoseconds, oldest first.
    recent: VecDeque<i64>,
}

impl Default for RateLimiter {
    /// [`MAX_STARTS`] (6) per [`WINDOW_S`] (0.1 s).
    fn default() -> Self {
        RateLimiter::new(MAX_STARTS, WINDOW_S)
    }
}

impl RateLimiter {
    /// At most `max_starts` starts in any `window_s` seconds.
    ///
    /// # Panics
    /// If `window_s` is not finite and positive (a programming error, not user input).
    pub fn new(max_starts: usize, window_s: f64) -> RateLimiter {
        assert!(
            window_s.is_finite() && window_s > 0.0,
            "window_s must be finite and > 0, got {window_s}"
        );
        RateLimiter {
            max_starts,
            window_s,
            window_ns: to_ns(window_s),
            recent: VecDeque::with_capacity(max_starts),
        }
    }

    /// Asks to start a sound at `t_seconds`; returns whether it may play (and, if so,
    /// records it).
    ///
    /// Times should not decrease; one earlier than the latest accepted start is treated as
    /// that start's time. A NaN or infinite time is rejected.
    pub fn try_start(&mut self, t_seconds: f64) -> bool {
        if !t_seconds.is_finite() {
            return false;
        }
        let t = to_ns(t_seconds);
        let t = self.recent.back().map_or(t, |&last| t.max(last));
        while self
            .recent
            .front()
            .is_some_and(|&old| t - old >= self.window_ns)
        {
            self.recent.pop_front();
        }
        if self.recent.len() < self.max_starts {
            self.recent.push_back(t);
            true
        } else {
            false
        }
    }

    /// Forgets every start (e.g. when a replay jumps).
    pub fn clear(&mut self) {
        self.recent.clear();
    }

    /// The window length, seconds.
    pub fn window_s(&self) -> f64 {
        self.window_s
    }

    /// How many starts a window may hold.
    pub fn max_starts(&self) -> usize {
        self.max_starts
    }
}

/// Seconds to whole nanoseconds (saturating at about ±292 years).
fn to_ns(t_s: f64) -> i64 {
    (t_s * 1e9).round() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_cap_rejects_everything() {
        let mut l = RateLimiter::new(0, 0.1);
        assert!(!l.try_start(0.0));
    }

    #[test]
    fn non_finite_time_is_rejected() {
        let mut l = RateLimiter::default();
        assert!(!l.try_start(f64::NAN));
        assert!(l.try_start(0.0));
    }

    #[test]
    #[should_panic(expected = "window_s")]
    fn zero_window_panics() {
        RateLimiter::new(6, 0.0);
    }
}
