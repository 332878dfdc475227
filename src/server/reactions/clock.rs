//! The clock automatic turns are timed by: milliseconds since the Unix epoch
//! (so every instance sharing the database reads the same), or, in tests,
//! time that moves only when the test moves it, waking whoever waits.

use std::{sync::Arc, time::Duration};

use tokio::sync::watch;

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
