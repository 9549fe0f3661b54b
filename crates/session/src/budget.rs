//! Edit budgets: each client's terrain ops are charged by the field samples they cover
//! ([`loam_field::edit_samples`]); an undo or redo, whose reach only the history knows, by
//! the samples it changed. Kept by client id wherever ops are ordered (a server, a node that
//! owns cells), so that a client reconnecting or resuming finds its debt where it left it.
//! [`Bucket`] is the token bucket they (and a server's other rate limits) are made of.
//!
//! ```text
//!  op from client c ──▶ balance > 0? ──no──▶ refused (EditBudgetError::Spent)
//!                          │yes
//!                          ▼
//!                      applied ──▶ charged its samples (in full: a large op leaves a debt)
//! ```

use std::collections::BTreeMap;
use std::time::Instant;

/// Why an op was not admitted by its client's edit budget.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EditBudgetError {
    /// The client's balance is spent (a debt is being repaid).
    #[error(
        "edit budget spent: terrain ops may cover {rate} samples a second (burst {burst}); {}",
        match samples {
            Some(n) => format!("this one covers {n}"),
            None => "an undo or redo is charged what it changes".to_string(),
        }
    )]
    Spent {
        /// Samples a second the budget refills at.
        rate: f64,
        /// Samples it saves up at most.
        burst: f64,
        /// The refused op's samples (`None`: an undo or redo, charged afterwards).
        samples: Option<u64>,
    },
}

/// A token bucket: `rate` tokens a second on average, at most `burst` saved up. An
/// infinite `rate` never runs out.
#[derive(Debug, Clone)]
pub struct Bucket {
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

    /// Tokens left, as of the last refill (below zero: a debt).
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

/// The clients' edit budgets; a budget as good as new is not kept.
#[derive(Debug)]
pub struct EditBudgets {
    rate: f64,
    burst: f64,
    spent: BTreeMap<u64, Bucket>,
}

impl EditBudgets {
    /// Budgets of `rate` samples a second and `burst` at once.
    pub fn new(rate: f64, burst: f64) -> Self {
        Self {
            rate,
            burst,
            spent: BTreeMap::new(),
        }
    }

    /// `Ok` if `client` may have an op taken at `now` (its balance is above zero, or the op
    /// covers no sample). `samples` is the op's count where known before it is applied
    /// (`None` for an undo or redo).
    ///
    /// # Errors
    /// [`EditBudgetError::Spent`] while `client`'s debt is not repaid; nothing changes.
    pub fn admit(
        &mut self,
        client: u64,
        samples: Option<u64>,
        now: Instant,
    ) -> Result<(), EditBudgetError> {
        if samples == Some(0) {
            return Ok(());
        }
        let Some(b) = self.spent.get_mut(&client) else {
            return Ok(());
        };
        if b.has_some(now) {
            return Ok(());
        }
        Err(EditBudgetError::Spent {
            rate: self.rate,
            burst: self.burst,
            samples,
        })
    }

    /// Charges `client` `samples` at `now`.
    pub fn charge(&mut self, client: u64, samples: u64, now: Instant) {
        if samples == 0 {
            return;
        }
        let (rate, burst) = (self.rate, self.burst);
        let b = self
            .spent
            .entry(client)
            .or_insert_with(|| Bucket::full(rate, burst, now));
        b.charge_at(samples as f64, now);
    }

    /// Forgets the budgets that have refilled (at most once a tick: a few hundred clients).
    pub fn prune(&mut self, now: Instant) {
        self.spent.retain(|_, b| !b.is_full(now));
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

    /// An op is taken while the balance is above zero and charged in full; past that it is
    /// refused with the rate, the burst and its count, until the debt is repaid; undos are
    /// admitted by the balance alone; budgets are per client; a refilled one is forgotten.
    #[test]
    fn ops_spend_the_balance_and_a_debt_is_waited_out() {
        let t0 = Instant::now();
        let mut b = EditBudgets::new(1000.0, 3000.0);
        assert_eq!(b.admit(1, Some(2500), t0), Ok(()));
        b.charge(1, 2500, t0);
        assert_eq!(b.admit(1, Some(2500), t0), Ok(()));
        b.charge(1, 2500, t0);
        // 3000 − 5000: a debt of 2000, repaid in 2 s.
        let spent = b.admit(1, Some(10), t0).unwrap_err();
        assert_eq!(
            spent,
            EditBudgetError::Spent {
                rate: 1000.0,
                burst: 3000.0,
                samples: Some(10)
            }
        );
        assert_eq!(
            spent.to_string(),
            "edit budget spent: terrain ops may cover 1000 samples a second (burst 3000); \
             this one covers 10"
        );
        assert!(
            b.admit(1, None, t0)
                .unwrap_err()
                .to_string()
                .ends_with("charged what it changes")
        );
        // An op covering no sample, and another client, are not held back.
        assert_eq!(b.admit(1, Some(0), t0), Ok(()));
        assert_eq!(b.admit(2, Some(10), t0), Ok(()));
        assert!(
            b.admit(1, Some(10), t0 + Duration::from_millis(1900))
                .is_err()
        );
        assert_eq!(
            b.admit(1, Some(10), t0 + Duration::from_millis(2100)),
            Ok(())
        );
        b.prune(t0 + Duration::from_millis(2100));
        assert_eq!(b.spent.len(), 1);
        b.prune(t0 + Duration::from_secs(6));
        assert!(b.spent.is_empty());
    }
}
