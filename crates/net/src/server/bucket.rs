//! Token buckets: a client's messages per second ([`crate::Limits::ops_per_second`]), its
//! catch-up bytes per second ([`crate::Limits::catch_up_bytes_per_second`]) and its terrain
//! ops' samples per second ([`crate::Limits::edit_samples_per_second`]).

use std::time::Instant;

/// A token bucket: `rate` tokens a second on average, at most `burst` saved up. An
/// infinite `rate` never runs out.
#[derive(Debug, Clone)]
pub(crate) struct Bucket {
    rate: f64,
    burst: f64,
    tokens: f64,
    last: Instant,
}

impl Bucket {
    /// A full bucket at `now`.
    pub fn full(rate: f64, burst: f64, now: Instant) -> Self {
        Self {
            rate,
            burst,
            tokens: burst,
            last: now,
        }
    }

    fn refill(&mut self, now: Instant) {
        if self.rate.is_infinite() {
            self.tokens = self.burst;
        } else {
            let dt = now.saturating_duration_since(self.last).as_secs_f64();
            self.tokens = (self.tokens + dt * self.rate).min(self.burst);
        }
        self.last = now;
    }

    /// Takes one token at `now` if there is one.
    pub fn take(&mut self, now: Instant) -> bool {
        self.refill(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// Whether any tokens are left at `now` (the balance is above zero).
    pub fn has_some(&mut self, now: Instant) -> bool {
        self.refill(now);
        self.tokens > 0.0
    }

    /// Tokens left, as of the last refill.
    #[cfg(test)]
    pub fn tokens(&self) -> f64 {
        self.tokens
    }

    /// Whether it is full at `now` (as good as a new one).
    pub fn is_full(&mut self, now: Instant) -> bool {
        self.refill(now);
        self.tokens >= self.burst
    }

    /// Refills up to `now`, then takes `n` tokens as [`Bucket::charge`] does: a cost known
    /// as it happens, which cannot bank more than the burst before it.
    pub fn charge_at(&mut self, n: f64, now: Instant) {
        self.refill(now);
        self.charge(n);
    }

    /// Takes `n` tokens, going into debt if there are fewer: [`Bucket::has_some`] is false
    /// until the debt is repaid at `rate`. (For costs known only afterwards.)
    pub fn charge(&mut self, n: f64) {
        if self.rate.is_finite() {
            self.tokens -= n;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_bucket_gives_its_burst_then_its_rate() {
        let t0 = Instant::now();
        let mut b = Bucket::full(10.0, 3.0, t0);
        assert_eq!((0..5).filter(|_| b.take(t0)).count(), 3);
        // 0.25 s at 10 a second: 2.5 tokens, two whole ones.
        let t1 = t0 + Duration::from_millis(250);
        assert_eq!((0..5).filter(|_| b.take(t1)).count(), 2);
        // Never more than the burst saved up.
        let t2 = t1 + Duration::from_secs(60);
        assert_eq!((0..10).filter(|_| b.take(t2)).count(), 3);
    }

    #[test]
    fn a_debt_is_repaid_at_the_rate() {
        let t0 = Instant::now();
        let mut b = Bucket::full(1000.0, 500.0, t0);
        assert!(b.has_some(t0));
        b.charge(2500.0);
        // 2000 in debt: 2 s at 1000 a second.
        assert!(!b.has_some(t0 + Duration::from_millis(1990)));
        assert!(b.has_some(t0 + Duration::from_millis(2010)));
        // Full again 0.5 s later (500 saved up at 1000 a second).
        assert!(!b.is_full(t0 + Duration::from_millis(2490)));
        assert!(b.is_full(t0 + Duration::from_millis(2510)));
    }

    #[test]
    fn an_infinite_rate_never_runs_out() {
        let t0 = Instant::now();
        let mut b = Bucket::full(f64::INFINITY, 1.0, t0);
        b.charge(1e30);
        assert!(b.has_some(t0));
        assert_eq!((0..100).filter(|_| b.take(t0)).count(), 100);
    }
}
