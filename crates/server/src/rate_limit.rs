//! A per-caller rate limit (a token bucket per caller): each caller may
//! spend up to `burst` at once, and gets `per_second` back every second.
//! Used for creating games, the one call that makes the server keep
//! something for every request. It never decides who a caller is: the
//! service names the caller.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How fast one caller may go.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate {
    pub per_second: f64,
    pub burst: f64,
}

/// Callers remembered before the full buckets are forgotten.
const PRUNE_ABOVE: usize = 10_000;

/// The buckets of the callers seen lately.
pub struct Limiter {
    rate: Rate,
    buckets: Mutex<HashMap<String, Bucket>>,
}

#[derive(Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Limiter {
    pub fn new(rate: Rate) -> Limiter {
        Limiter {
            rate,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one for `caller`: Ok, or how long until one is there.
    pub fn take(&self, caller: &str) -> Result<(), Duration> {
        self.take_at(caller, Instant::now())
    }

    fn take_at(&self, caller: &str, now: Instant) -> Result<(), Duration> {
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() > PRUNE_ABOVE && !buckets.contains_key(caller) {
            // A caller whose bucket has filled up again is as if new.
            let rate = self.rate;
            buckets.retain(|_, bucket| bucket.refilled(rate, now).tokens < rate.burst);
        }
        let bucket = buckets.entry(caller.to_string()).or_insert(Bucket {
            tokens: self.rate.burst,
            at: now,
        });
        *bucket = bucket.refilled(self.rate, now);
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            let missing = 1.0 - bucket.tokens;
            Err(Duration::from_secs_f64(missing / self.rate.per_second))
        }
    }
}

impl Bucket {
    fn refilled(self, rate: Rate, now: Instant) -> Bucket {
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        Bucket {
            tokens: (self.tokens + elapsed * rate.per_second).min(rate.burst),
            at: now,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_spends_its_burst_then_gets_the_rate_back() {
        let limiter = Limiter::new(Rate {
            per_second: 10.0,
            burst: 3.0,
        });
        let start = Instant::now();
        for _ in 0..3 {
            assert_eq!(limiter.take_at("a", start), Ok(()));
        }
        let wait = limiter.take_at("a", start).unwrap_err();
        assert!((wait.as_secs_f64() - 0.1).abs() < 1e-9, "{wait:?}");
        // Another caller has a bucket of its own.
        assert_eq!(limiter.take_at("b", start), Ok(()));
        // A tenth of a second later, one more; then none.
        let later = start + Duration::from_millis(100);
        assert_eq!(limiter.take_at("a", later), Ok(()));
        assert!(limiter.take_at("a", later).is_err());
        // Never more than the burst, however long it waited.
        let much_later = start + Duration::from_secs(3600);
        for _ in 0..3 {
            assert_eq!(limiter.take_at("a", much_later), Ok(()));
        }
        assert!(limiter.take_at("a", much_later).is_err());
    }

    #[test]
    fn many_callers_do_not_fill_the_memory() {
        let limiter = Limiter::new(Rate {
            per_second: 1000.0,
            burst: 1.0,
        });
        let start = Instant::now();
        for i in 0..3 * PRUNE_ABOVE {
            // Each caller's bucket is full again 1 ms later.
            let now = start + Duration::from_millis(i as u64);
            assert_eq!(limiter.take_at(&format!("caller {i}"), now), Ok(()));
        }
        let kept = limiter.buckets.lock().unwrap().len();
        assert!(kept <= PRUNE_ABOVE + 1, "{kept}");
    }
}
