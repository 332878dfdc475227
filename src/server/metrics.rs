//! What the process counts as it goes, for the operator's Prometheus
//! (`prometheus-client`, the Prometheus project's own Rust client).
//! Counters and histograms live for the process (`METRICS`) and are added
//! to where things happen; what is a state (replies running, pages open,
//! the pool) is given when scraped (`ops::metrics`, the route). It stands on
//! the server's floor, so the turn engine counts without knowing the route.

use std::sync::LazyLock;

use prometheus_client::{
    encoding::text::encode,
    metrics::{
        counter::Counter,
        family::Family,
        gauge::Gauge,
        histogram::{exponential_buckets, Histogram},
    },
    registry::Registry,
};

type Labels = Vec<(String, String)>;

/// What the process counts as it goes.
pub struct Metrics {
    /// From a reply starting to the model's first event.
    pub provider_first_event: Histogram,
    /// Replies that ended in an error, by the error's code.
    pub provider_errors: Family<Labels, Counter>,
    /// Tokens used, by school.
    pub tokens: Family<Labels, Counter>,
    /// From a batch of events written by the instance running a reply to
    /// its being sent to a reader on another instance.
    pub event_lag: Histogram,
    /// How long the relay waited for a database connection.
    pub pool_wait: Histogram,
    /// Flags raised in students' conversations with the tutor, by category
    /// (never any text: `server::safety`).
    pub flags: Family<Labels, Counter>,
    /// What the daily retention sweep deleted, by what it was.
    pub retention: Family<Labels, Counter>,
    replies_running: Gauge,
    lesson_pages: Gauge,
    reply_readers: Gauge,
    pool_size: Gauge,
    pool_idle: Gauge,
    registry: Registry,
}

pub static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);

/// Readers following a reply from another instance now.
pub fn reader_opened() -> ReaderGuard {
    METRICS.reply_readers.inc();
    ReaderGuard
}

pub struct ReaderGuard;

impl Drop for ReaderGuard {
    fn drop(&mut self) {
        METRICS.reply_readers.dec();
    }
}

impl Metrics {
    fn new() -> Self {
        let seconds = || Histogram::new(exponential_buckets(0.001, 2.0, 16));
        let m = Self {
            provider_first_event: seconds(),
            provider_errors: Family::default(),
            tokens: Family::default(),
            event_lag: seconds(),
            pool_wait: seconds(),
            flags: Family::default(),
            retention: Family::default(),
            replies_running: Gauge::default(),
            lesson_pages: Gauge::default(),
            reply_readers: Gauge::default(),
            pool_size: Gauge::default(),
            pool_idle: Gauge::default(),
            registry: Registry::default(),
        };
        let mut r = Registry::default();
        r.register("margin_replies_running", "Replies running on this instance", m.replies_running.clone());
        r.register("margin_lesson_pages_open", "Lesson pages following live updates from this instance", m.lesson_pages.clone());
        r.register("margin_reply_readers_open", "Readers following a reply that runs on another instance", m.reply_readers.clone());
        r.register("margin_provider_first_event_seconds", "From a reply starting to the model's first event", m.provider_first_event.clone());
        r.register("margin_provider_errors", "Replies that ended in an error, by code", m.provider_errors.clone());
        r.register("margin_tokens", "Tokens used, by school", m.tokens.clone());
        r.register("margin_event_lag_seconds", "From a batch of a reply's events being stored to its reaching a reader on another instance", m.event_lag.clone());
        r.register("margin_db_pool_wait_seconds", "How long the instance's writer waited for a database connection", m.pool_wait.clone());
        r.register("margin_retention_deleted", "What the daily retention sweep deleted, by what it was", m.retention.clone());
        r.register("margin_safety_flags", "Flags raised in students' conversations with the tutor, by category", m.flags.clone());
        r.register("margin_db_pool_connections", "Database connections held by this instance", m.pool_size.clone());
        r.register("margin_db_pool_idle", "Database connections of this instance not in use", m.pool_idle.clone());
        Self { registry: r, ..m }
    }

    /// Tokens a school used.
    pub fn used(&self, school: &str, tokens: u64) {
        self.tokens.get_or_create(&vec![("school".to_string(), school.to_string())]).inc_by(tokens);
    }

    /// What a retention sweep deleted (counted even when none, so the
    /// series exists from the first sweep).
    pub fn retention_deleted(&self, what: &str, n: u64) {
        self.retention.get_or_create(&vec![("what".to_string(), what.to_string())]).inc_by(n);
    }

    /// A flag raised, by its category.
    pub fn flagged(&self, category: &str) {
        self.flags.get_or_create(&vec![("category".to_string(), category.to_string())]).inc();
    }

    /// A reply that ended in an error.
    pub fn failed(&self, code: &str) {
        self.provider_errors.get_or_create(&vec![("code".to_string(), code.to_string())]).inc();
    }
}

/// What is a state when scraped: the instance's own reading of itself.
pub struct Now {
    pub replies_running: usize,
    pub lesson_pages: usize,
    pub pool_size: u32,
    pub pool_idle: usize,
}

impl Metrics {
    /// Everything counted, with `now`, in the OpenMetrics text format;
    /// `None` when it cannot be written.
    pub fn encode(&self, now: Now) -> Option<String> {
        self.replies_running.set(now.replies_running as i64);
        self.lesson_pages.set(now.lesson_pages as i64);
        self.pool_size.set(i64::from(now.pool_size));
        self.pool_idle.set(now.pool_idle as i64);
        let mut body = String::new();
        encode(&mut body, &self.registry).ok()?;
        Some(body)
    }
}
