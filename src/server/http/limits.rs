//! What keeps a stranger from making the server work without bound before
//! they have an account: rate limits on signing in and up, and a gate around
//! password hashing (argon2 takes 19 MiB and tens of milliseconds a try).
//!
//! The limits, from cheap to strict:
//! - per client address (sign-in: 60 at once, then one a second; sign-up: a
//!   configured number an hour), so a fresh email per try buys nothing;
//! - per email *and* client for sign-in: five tries, then one every 12 s;
//! - per email alone, a ceiling that *slows* (each try waits its turn, at most
//!   [`MAX_SLOWDOWN`]) rather than refuses, so that someone guessing a
//!   teacher's password from many addresses cannot lock the teacher out.
//!
//! Keys are hashes (an email is never kept as a key, nor can a long one grow
//! the table), and IPv6 clients are counted per /64, which one household or
//! one attacker usually holds whole. Tests move the limits' clock by hand
//! ([`crate::server::clock::LimitClock::manual`]).
//!
//! Replies are limited too, per account (`MARGIN_TURNS_PER_MINUTE_USER`)
//! and per school (`MARGIN_TURNS_PER_MINUTE_SCHOOL`): each one costs a
//! model call, and a script with a stolen session could otherwise start
//! them without end. Both key on what the session says, never on a header.
//!
//! With one instance the limits are kept in memory (`governor`). When the
//! database is shared by many instances, they are kept there (`shared`),
//! so a client cannot multiply its tries by the number of instances.

mod rate;
mod shared;

use rate::{Key, Rate};

use std::{
    net::IpAddr,
    num::NonZeroU32,
    sync::atomic::{AtomicUsize, Ordering},
    time::Duration,
};

use governor::{clock::Clock, middleware::NoOpMiddleware, nanos::Nanos, state::keyed::DashMapStateStore, Quota, RateLimiter};
use sha2::{Digest, Sha256};
use tokio::sync::Semaphore;

use crate::server::{
    clock::LimitClock,
    config::{SIGNUPS_PER_CLIENT_HOUR, TURNS_PER_MINUTE_USER},
    db::Db,
    error::{AppError, Result},
};

type Limiter = RateLimiter<Key, DashMapStateStore<Key>, LimitClock, NoOpMiddleware<Nanos>>;

/// The longest a sign-in waits under the per-email ceiling.
pub const MAX_SLOWDOWN: Duration = Duration::from_secs(3);

/// One limit, in memory, and its name where it is kept in the database.
struct Limit {
    name: &'static str,
    rate: Rate,
    memory: Limiter,
}

/// The sign-in and sign-up limits of one server.
pub struct AccountLimits {
    clock: LimitClock,
    /// Where the limits are kept when instances share the database.
    shared: Option<Db>,
    sign_in_per_client: Limit,
    sign_up_per_client: Limit,
    sign_in_per_email_client: Limit,
    sign_in_per_email: Limit,
    /// Class codes tried (a class's page by its code, joining): per client
    /// address and per account, so eight letters cannot be guessed.
    join_per_client: Limit,
    join_per_account: Limit,
    /// Automatic-turn events sent per account (`reactions`).
    events_per_account: Limit,
    /// Lessons made per account (new, imported, duplicated).
    lessons_per_account: Limit,
    /// A course's roster read from its LMS, per class (`lti::roster`).
    rosters_per_class: Limit,
    /// Accounts a school's LMS rosters make, per school: its sign-up
    /// budget for people no launch brought.
    roster_accounts_per_school: Limit,
    /// Replies started per account; `None`: no limit.
    turns_per_user: Option<Limit>,
    turns_per_school: Option<Limit>,
}

fn quota(rate: Rate) -> Quota {
    Quota::with_period(rate.every).expect("non-zero period").allow_burst(NonZeroU32::new(rate.burst).expect("non-zero burst"))
}

impl Default for AccountLimits {
    fn default() -> Self {
        Self::with_clock(LimitClock::real(), SIGNUPS_PER_CLIENT_HOUR)
    }
}

impl AccountLimits {
    /// Limits on `clock`; `signups_per_hour` per client address (all at once
    /// at most, then evenly over the hour).
    pub fn with_clock(clock: LimitClock, signups_per_hour: u32) -> Self {
        let limit = |name, burst, every| {
            let rate = Rate { burst, every };
            Limit { name, rate, memory: RateLimiter::dashmap_with_clock(quota(rate), clock.clone()) }
        };
        let signups = signups_per_hour.max(1);
        let limits = Self {
            // A school behind one address signs in together in the morning.
            sign_in_per_client: limit("in", 60, Duration::from_secs(1)),
            sign_up_per_client: limit("up", signups, Duration::from_secs(3600) / signups),
            sign_in_per_email_client: limit("in-email", 5, Duration::from_secs(12)),
            sign_in_per_email: limit("email", 20, Duration::from_secs(6)),
            // A class joining together behind one address, then a try every few seconds.
            join_per_client: limit("join", 60, Duration::from_secs(5)),
            join_per_account: limit("join-account", 10, Duration::from_secs(30)),
            // Far more than uploads and page opens send; a script is slowed to one a second.
            events_per_account: limit("events", 30, Duration::from_secs(1)),
            // A term's lessons imported at once, then one every three seconds.
            lessons_per_account: limit("lessons", 100, Duration::from_secs(3)),
            // A teacher's launches and a press of "Read the roster": a few at
            // once, then one every two minutes.
            rosters_per_class: limit("roster", 5, Duration::from_secs(120)),
            // A school's rosters filled at the start of a term, then an account every ten seconds.
            roster_accounts_per_school: limit("roster-accounts", 5000, Duration::from_secs(10)),
            turns_per_user: None,
            turns_per_school: None,
            shared: None,
            clock,
        };
        limits.with_turns_per_minute(TURNS_PER_MINUTE_USER)
    }

    /// The same limits with `per_minute` replies per account (all at once at
    /// most, then evenly over the minute); 0: no limit.
    pub fn with_turns_per_minute(mut self, per_minute: u32) -> Self {
        self.turns_per_user = (per_minute > 0).then(|| {
            let rate = Rate { burst: per_minute, every: Duration::from_secs(60) / per_minute };
            Limit { name: "turns", rate, memory: RateLimiter::dashmap_with_clock(quota(rate), self.clock.clone()) }
        });
        self
    }

    /// The same limits with `per_minute` replies per school; 0: no limit.
    pub fn with_school_turns_per_minute(mut self, per_minute: u32) -> Self {
        self.turns_per_school = (per_minute > 0).then(|| {
            let rate = Rate { burst: per_minute, every: Duration::from_secs(60) / per_minute };
            Limit { name: "school-turns", rate, memory: RateLimiter::dashmap_with_clock(quota(rate), self.clock.clone()) }
        });
        self
    }

    /// Takes one reply for account `user_id` of school `school_id`; refused
    /// (429, with when to try again) past either limit.
    pub async fn turn(&self, user_id: &str, school_id: &str) -> Result<()> {
        if let Some(limit) = &self.turns_per_user {
            if let Some(wait) = self.take(limit, key(&[b"turns", user_id.as_bytes()])).await? {
                return Err(AppError::TooManyTurns(wait.as_secs().max(1)));
            }
        }
        if let Some(limit) = &self.turns_per_school {
            if let Some(wait) = self.take(limit, key(&[b"school-turns", school_id.as_bytes()])).await? {
                return Err(AppError::SchoolBusy(wait.as_secs().max(1)));
            }
        }
        Ok(())
    }

    /// The same limits, kept in `db` for every instance that shares it.
    pub fn shared_in(mut self, db: Db) -> Self {
        self.shared = Some(db);
        self
    }

    /// Takes one sign-in try for `email` from `client`. `Ok(Some(wait))`
    /// means the email is under attack from elsewhere: go ahead after `wait`.
    pub async fn sign_in(&self, email: &str, client: IpAddr) -> Result<Option<Duration>> {
        let client_key = client_bytes(client);
        let email = normalize(email);
        self.refuse(&self.sign_in_per_client, key(&[b"in", &client_key])).await?;
        self.refuse(&self.sign_in_per_email_client, key(&[b"in-email", email.as_bytes(), &client_key])).await?;
        Ok(self.take(&self.sign_in_per_email, key(&[b"email", email.as_bytes()])).await?.map(|wait| wait.min(MAX_SLOWDOWN)))
    }

    /// Takes one school-account sign-in started from `client` (the same
    /// per-address limit as password sign-ins: each start keeps a row).
    pub async fn sign_in_started(&self, client: IpAddr) -> Result<()> {
        self.refuse(&self.sign_in_per_client, key(&[b"in", &client_bytes(client)])).await
    }

    /// Takes one try of a class's join code, from `client` and (when signed
    /// in) `account`; refused (429) past either limit.
    pub async fn join_code(&self, client: IpAddr, account: Option<&str>) -> Result<()> {
        self.refuse(&self.join_per_client, key(&[b"join", &client_bytes(client)])).await?;
        if let Some(account) = account {
            self.refuse(&self.join_per_account, key(&[b"join-account", account.as_bytes()])).await?;
        }
        Ok(())
    }

    /// Takes one automatic-turn event of `account`'s; refused (429) past the limit.
    pub async fn event(&self, account: &str) -> Result<()> {
        self.refuse(&self.events_per_account, key(&[b"events", account.as_bytes()])).await
    }

    /// Takes one new lesson of `account`'s; refused (429) past the limit.
    pub async fn lesson(&self, account: &str) -> Result<()> {
        self.refuse(&self.lessons_per_account, key(&[b"lessons", account.as_bytes()])).await
    }

    /// Forgets what the shared limits count for one account (its replies,
    /// join tries, events, new lessons, and sign-ins to its email), when
    /// the account is deleted. Keys that also name a client address (a
    /// sign-in to the email from one address) cannot be rebuilt: they hold
    /// a hash and a time, and the housekeeping forgets them once due.
    /// Limits kept in memory forget on their own.
    pub async fn forget_account(&self, user_id: &str, email: &str) -> Result<()> {
        let Some(db) = &self.shared else { return Ok(()) };
        let email = normalize(email);
        let keys = [
            ("turns", key(&[b"turns", user_id.as_bytes()])),
            ("join-account", key(&[b"join-account", user_id.as_bytes()])),
            ("events", key(&[b"events", user_id.as_bytes()])),
            ("lessons", key(&[b"lessons", user_id.as_bytes()])),
            ("email", key(&[b"email", email.as_bytes()])),
        ];
        for (name, k) in keys {
            shared::forget(db, name, &k).await?;
        }
        Ok(())
    }

    /// Takes one roster read of `class_id`'s; refused (429) past the limit.
    pub async fn roster(&self, class_id: &str) -> Result<()> {
        self.refuse(&self.rosters_per_class, key(&[b"roster", class_id.as_bytes()])).await
    }

    /// Takes one account a roster makes for `school_id`; refused (429) past the limit.
    pub async fn roster_account(&self, school_id: &str) -> Result<()> {
        self.refuse(&self.roster_accounts_per_school, key(&[b"roster-accounts", school_id.as_bytes()])).await
    }

    /// Takes one sign-up try from `client`.
    pub async fn sign_up(&self, client: IpAddr) -> Result<()> {
        self.refuse(&self.sign_up_per_client, key(&[b"up", &client_bytes(client)])).await
    }

    /// One try; `Some(wait)` when it is not due yet.
    async fn take(&self, limit: &Limit, key: Key) -> Result<Option<Duration>> {
        match &self.shared {
            Some(db) => shared::take(db, limit.name, &key, limit.rate, self.clock.millis()).await,
            None => Ok(limit.memory.check_key(&key).err().map(|not_until| not_until.wait_time_from(self.clock.now()))),
        }
    }

    /// One try, refused (429 with `Retry-After`) when it is not due yet.
    async fn refuse(&self, limit: &Limit, key: Key) -> Result<()> {
        match self.take(limit, key).await? {
            None => Ok(()),
            Some(wait) => Err(AppError::TooManyRequests(wait.as_secs().max(1))),
        }
    }

    fn limits(&self) -> Vec<&Limit> {
        let mut all = vec![
            &self.sign_in_per_client,
            &self.sign_up_per_client,
            &self.sign_in_per_email_client,
            &self.sign_in_per_email,
            &self.join_per_client,
            &self.join_per_account,
            &self.events_per_account,
            &self.lessons_per_account,
            &self.rosters_per_class,
            &self.roster_accounts_per_school,
        ];
        all.extend(&self.turns_per_user);
        all.extend(&self.turns_per_school);
        all
    }

    /// Forgets entries that are back to a full burst (run now and then).
    pub async fn retain_recent(&self) {
        if let Some(db) = &self.shared {
            if let Err(e) = shared::forget_idle(db, self.clock.millis()).await {
                tracing::warn!(error = %e, "could not forget idle rate-limit keys");
            }
        }
        for l in self.limits() {
            l.memory.retain_recent();
            l.memory.shrink_to_fit();
        }
    }

    /// How many keys the limiters hold in memory (for tests and the soak run).
    pub fn len(&self) -> usize {
        self.limits().iter().map(|l| l.memory.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Emails are counted as sign-in reads them: case and surrounding spaces aside.
fn normalize(email: &str) -> String {
    email.trim().to_lowercase()
}

fn key(parts: &[&[u8]]) -> Key {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    let digest = h.finalize();
    let mut k = [0u8; 16];
    k.copy_from_slice(&digest[..16]);
    k
}

/// The part of an address that names one client: all of IPv4, the /64 of IPv6.
fn client_bytes(ip: IpAddr) -> Vec<u8> {
    match ip {
        IpAddr::V4(v4) => v4.octets().to_vec(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.octets().to_vec(),
            None => v6.octets()[..8].to_vec(),
        },
    }
}

/// Runs password hashes a few at a time. At most one per core hashes; a
/// bounded number wait their turn; anyone past them is told the server is
/// busy (503 with `Retry-After`) instead of holding memory and a thread.
pub struct HashGate {
    running: Semaphore,
    waiting: AtomicUsize,
    max_waiting: usize,
}

impl Default for HashGate {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
        Self::new(cores, cores * 16)
    }
}

impl HashGate {
    pub fn new(at_once: usize, max_waiting: usize) -> Self {
        Self { running: Semaphore::new(at_once.max(1)), waiting: AtomicUsize::new(0), max_waiting }
    }

    /// Runs `work` on a blocking thread once a slot is free.
    pub async fn run<T: Send + 'static>(&self, work: impl FnOnce() -> T + Send + 'static) -> Result<T> {
        let permit = match self.running.try_acquire() {
            Ok(p) => p,
            Err(_) => {
                if self.waiting.fetch_add(1, Ordering::SeqCst) >= self.max_waiting {
                    self.waiting.fetch_sub(1, Ordering::SeqCst);
                    return Err(AppError::Busy(2));
                }
                let _queued = Queued(&self.waiting);
                self.running.acquire().await.map_err(|_| AppError::Busy(2))?
            }
        };
        let done = tokio::task::spawn_blocking(work).await;
        drop(permit);
        done.map_err(|e| AppError::Internal(format!("hashing task: {e}")))
    }

    /// How many are waiting for a slot.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }
}

/// Counts a caller out of the queue however its wait ends (a dropped request too).
struct Queued<'a>(&'a AtomicUsize);

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests;
