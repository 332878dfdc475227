//! The clocks that matter to behaviour, each real in production and moved by
//! hand in tests: the month budgets are counted in (`MonthClock`), how long
//! what the teacher was shown of a held edit stays good (`ShownClock`), the rate
//! limits' clock (`LimitClock`), and the clock automatic turns are timed by
//! (`ReactionClock`). They live here, apart from what reads them, so the
//! shared state can hold them without importing the domains.

use std::{
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex,
    },
    time::{Duration, Instant, SystemTime},
};

use governor::{clock::Clock, nanos::Nanos};
use time::OffsetDateTime;
use tokio::sync::watch;

/// A wall clock: real time until a test sets a time (every copy shares it).
#[derive(Clone, Debug, Default)]
pub struct WallClock(Arc<Mutex<Option<OffsetDateTime>>>);

/// The clock months are read from (budgets).
pub type MonthClock = WallClock;

/// How long the digest of a held edit the teacher was shown stays good (the
/// time a paused reply waits, `MARGIN_APPROVAL_WAIT_SECS`), on a wall clock
/// of its own that tests set (`lessons::shown`).
#[derive(Clone, Debug)]
pub struct ShownClock {
    pub clock: WallClock,
    pub lasts: Duration,
}

impl ShownClock {
    pub fn real(lasts: Duration) -> Self {
        Self { clock: WallClock::real(), lasts }
    }
}

impl WallClock {
    pub fn real() -> Self {
        Self::default()
    }

    /// From now on the clock reads `at` (tests).
    pub fn set(&self, at: OffsetDateTime) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(at);
    }

    pub fn now(&self) -> OffsetDateTime {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).unwrap_or_else(OffsetDateTime::now_utc)
    }
}

/// The limits' clock: real time, or time that moves only when a test says.
#[derive(Clone, Debug)]
pub struct LimitClock {
    start: Instant,
    manual: Option<Arc<AtomicU64>>,
}

impl LimitClock {
    pub fn real() -> Self {
        Self { start: Instant::now(), manual: None }
    }

    /// A clock standing still until [`LimitClock::advance`].
    pub fn manual() -> Self {
        Self { start: Instant::now(), manual: Some(Arc::new(AtomicU64::new(0))) }
    }

    /// Milliseconds on this clock: since the Unix epoch for a real one (so
    /// every instance reads the same), since its start for a manual one.
    pub fn millis(&self) -> u64 {
        match &self.manual {
            Some(n) => n.load(Ordering::SeqCst) / 1_000_000,
            None => SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0),
        }
    }

    /// Moves a manual clock on (a real one ignores this).
    pub fn advance(&self, by: Duration) {
        if let Some(n) = &self.manual {
            n.fetch_add(u64::try_from(by.as_nanos()).unwrap_or(u64::MAX), Ordering::SeqCst);
        }
    }
}

impl Clock for LimitClock {
    type Instant = Nanos;

    fn now(&self) -> Nanos {
        match &self.manual {
            Some(n) => Nanos::from(n.load(Ordering::SeqCst)),
            None => Nanos::from(self.start.elapsed()),
        }
    }
}

/// The clock automatic turns are timed by: milliseconds since the Unix epoch
/// (so every instance sharing the database reads the same), or, in tests,
/// time that moves only when the test moves it, waking whoever waits.
#[derive(Clone, Debug, Default)]
pub struct ReactionClock {
    manual: Option<Arc<watch::Sender<i64>>>,
}

impl ReactionClock {
    pub fn real() -> Self {
        Self::default()
    }

    /// A clock standing still (at one second) until [`ReactionClock::advance`].
    pub fn manual() -> Self {
        Self { manual: Some(Arc::new(watch::channel(1_000).0)) }
    }

    pub fn now_ms(&self) -> i64 {
        match &self.manual {
            Some(t) => *t.borrow(),
            None => time::OffsetDateTime::now_utc().unix_timestamp_nanos().div_euclid(1_000_000) as i64,
        }
    }

    /// Moves a manual clock on (a real one ignores this).
    pub fn advance(&self, by: Duration) {
        if let Some(t) = &self.manual {
            t.send_modify(|t| *t += by.as_millis() as i64);
        }
    }

    /// Waits until the clock reads `at_ms` or later.
    pub async fn sleep_until(&self, at_ms: i64) {
        match &self.manual {
            Some(t) => {
                let mut rx = t.subscribe();
                let _ = rx.wait_for(|now| *now >= at_ms).await;
            }
            None => {
                let wait = at_ms.saturating_sub(self.now_ms()).max(0);
                tokio::time::sleep(Duration::from_millis(wait as u64)).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_manual_clock_wakes_sleepers_only_when_moved_far_enough() {
        let clock = ReactionClock::manual();
        let start = clock.now_ms();
        let sleeper = tokio::spawn({
            let clock = clock.clone();
            async move { clock.sleep_until(start + 2_000).await }
        });
        clock.advance(Duration::from_millis(1_999));
        tokio::task::yield_now().await;
        assert!(!sleeper.is_finished());
        clock.advance(Duration::from_millis(1));
        sleeper.await.unwrap();
        assert_eq!(clock.now_ms(), start + 2_000);
    }
}
