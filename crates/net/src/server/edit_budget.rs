//! Each client's edit budget ([`crate::Limits::edit_samples_per_second`]): its terrain ops
//! are charged by the field samples they cover ([`loam_field::edit_samples`]); an undo or
//! redo, whose reach only the history knows, by the samples it changed. Kept by client id
//! on the ordering thread, so that a client reconnecting or resuming finds its debt where
//! it left it (a budget per connection refilled at every reconnect).
//!
//! ```text
//!  op from client c ──▶ balance > 0? ──no──▶ refused by op id ("edit budget spent")
//!                          │yes
//!                          ▼
//!                      applied ──▶ charged its samples (in full: a large op leaves a debt)
//! ```

use std::collections::BTreeMap;
use std::time::Instant;

use super::bucket::Bucket;

/// The clients' edit budgets; a budget as good as new is not kept.
#[derive(Debug)]
pub(super) struct EditBudgets {
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
    /// covers no sample); else why not. `samples` is the op's count where known before it
    /// is applied (`None` for an undo or redo).
    pub fn admit(&mut self, client: u64, samples: Option<u64>, now: Instant) -> Result<(), String> {
        if samples == Some(0) {
            return Ok(());
        }
        let Some(b) = self.spent.get_mut(&client) else {
            return Ok(());
        };
        if b.has_some(now) {
            return Ok(());
        }
        let this = samples.map_or_else(
            || "an undo or redo is charged what it changes".to_string(),
            |n| format!("this one covers {n}"),
        );
        Err(format!(
            "edit budget spent: terrain ops may cover {} samples a second (burst {}); {this}",
            self.rate, self.burst
        ))
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
        assert_eq!(
            b.admit(1, Some(10), t0),
            Err(
                "edit budget spent: terrain ops may cover 1000 samples a second (burst 3000); \
                 this one covers 10"
                    .into()
            )
        );
        assert!(
            b.admit(1, None, t0)
                .unwrap_err()
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
