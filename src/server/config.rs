//! Configuration read once from the environment, with defaults that work on a
//! fresh machine. README.md lists every variable; keep the two in step.

use std::env;

use super::client_addr::IpRange;

/// The server's settings. Secrets (the AI key, later) never appear in `Debug`.
#[derive(Clone, Debug)]
pub struct Config {
    /// `sqlite://…` (the file and its folder are created when missing) or
    /// `postgres://…` (`db`).
    pub database_url: String,
    /// Mark the session cookie `Secure` (set when served over HTTPS).
    pub secure_cookies: bool,
    /// Whether anyone may sign up once the first teacher exists.
    pub allow_signup: bool,
    /// How long a sign-in lasts, in days.
    pub session_days: u32,
    /// Silence after which a turn's stream sends a `: keepalive` comment.
    pub keepalive_secs: u64,
    /// Proxies whose `X-Forwarded-For` is believed (`MARGIN_TRUSTED_PROXIES`).
    pub trusted_proxies: Vec<IpRange>,
    /// The origin pages are served from, e.g. `https://margin.school.org`
    /// (`MARGIN_PUBLIC_URL`); writes from any other origin are refused.
    /// Unset: the listen address, or the host the request was sent to.
    pub public_origin: Option<String>,
    /// How long a stop may take once running turns are saved.
    pub shutdown_secs: u64,
    /// Connections one client address may hold open (`connections`).
    pub max_connections_per_client: usize,
    /// Sign-ups one client address may make in an hour (`limits`).
    pub signups_per_client_hour: u32,
    /// Replies one account may start in a minute (`limits`); 0: no limit.
    pub turns_per_minute_user: u32,
    /// Replies one school's accounts may start in a minute, together; 0: no limit.
    pub turns_per_minute_school: u32,
    /// Tokens a school may use a calendar month unless it has its own
    /// allowance (`MARGIN_MONTHLY_TOKENS`); `None`: unlimited (`budget`).
    pub monthly_tokens: Option<u64>,
    /// How long a running reply's lease lasts unrenewed; an instance that
    /// dies mid-reply leaves it running at most this long (`turns::leases`).
    pub turn_lease_secs: u64,
    /// The program that reads material in a child process (`material::
    /// sandbox`); `None`: this server's own binary. Tests name the built one.
    pub extractor_program: Option<std::path::PathBuf>,
    /// How many files are read at once (`MARGIN_EXTRACTIONS`).
    pub extractions_at_once: usize,
    /// The memory one reader may use, in MiB (`MARGIN_EXTRACT_MEMORY_MB`).
    pub extract_memory_mb: u64,
    /// What a teacher's account may keep, in MiB (`MARGIN_STORAGE_MB`).
    pub storage_mb: u64,
    /// What a student's account may keep, in MiB (`MARGIN_STUDENT_STORAGE_MB`).
    pub student_storage_mb: u64,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            database_url: "sqlite://data/margin.db".into(),
            secure_cookies: false,
            allow_signup: true,
            session_days: 30,
            keepalive_secs: 15,
            trusted_proxies: Vec::new(),
            public_origin: None,
            shutdown_secs: 10,
            max_connections_per_client: 512,
            signups_per_client_hour: super::limits::SIGNUPS_PER_CLIENT_HOUR,
            turns_per_minute_user: super::limits::TURNS_PER_MINUTE_USER,
            turns_per_minute_school: super::limits::TURNS_PER_MINUTE_SCHOOL,
            monthly_tokens: None,
            turn_lease_secs: super::turns::LEASE.as_secs(),
            extractor_program: None,
            extractions_at_once: 2,
            extract_memory_mb: 384,
            storage_mb: super::quota::TEACHER_MB,
            student_storage_mb: super::quota::STUDENT_MB,
        }
    }
}

impl Config {
    /// Reads the environment; unset or unparsable values fall back to defaults.
    pub fn from_env() -> Self {
        let d = Self::default();
        Self {
            database_url: env::var("DATABASE_URL").unwrap_or(d.database_url),
            secure_cookies: flag("MARGIN_SECURE_COOKIES").unwrap_or(d.secure_cookies),
            allow_signup: flag("MARGIN_ALLOW_SIGNUP").unwrap_or(d.allow_signup),
            session_days: positive("MARGIN_SESSION_DAYS").unwrap_or(d.session_days),
            keepalive_secs: positive("MARGIN_KEEPALIVE_SECS").unwrap_or(d.keepalive_secs),
            trusted_proxies: env::var("MARGIN_TRUSTED_PROXIES").map(|v| IpRange::parse_list(&v)).unwrap_or_default(),
            public_origin: env::var("MARGIN_PUBLIC_URL").ok().and_then(|v| origin_of(&v)),
            shutdown_secs: env::var("MARGIN_SHUTDOWN_SECS").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(d.shutdown_secs),
            max_connections_per_client: positive("MARGIN_MAX_CONNECTIONS_PER_CLIENT").unwrap_or(d.max_connections_per_client),
            signups_per_client_hour: positive("MARGIN_SIGNUPS_PER_CLIENT_HOUR").unwrap_or(d.signups_per_client_hour),
            turns_per_minute_user: env::var("MARGIN_TURNS_PER_MINUTE_USER")
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(d.turns_per_minute_user),
            turns_per_minute_school: env::var("MARGIN_TURNS_PER_MINUTE_SCHOOL")
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(d.turns_per_minute_school),
            monthly_tokens: env::var("MARGIN_MONTHLY_TOKENS").ok().and_then(|v| v.trim().parse().ok()),
            // At least three renewals fit in a lease.
            turn_lease_secs: positive::<u64>("MARGIN_TURN_LEASE_SECS").unwrap_or(d.turn_lease_secs).max(3),
            extractor_program: d.extractor_program,
            extractions_at_once: positive("MARGIN_EXTRACTIONS").unwrap_or(d.extractions_at_once),
            extract_memory_mb: positive("MARGIN_EXTRACT_MEMORY_MB").unwrap_or(d.extract_memory_mb),
            storage_mb: positive("MARGIN_STORAGE_MB").unwrap_or(d.storage_mb),
            student_storage_mb: positive("MARGIN_STUDENT_STORAGE_MB").unwrap_or(d.student_storage_mb),
        }
    }
}

/// A whole number above zero from the environment.
fn positive<T: std::str::FromStr + PartialOrd + Default>(name: &str) -> Option<T> {
    env::var(name).ok()?.trim().parse().ok().filter(|n| *n > T::default())
}

fn flag(name: &str) -> Option<bool> {
    match env::var(name).ok()?.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// `scheme://host[:port]` of a URL, lower-cased, without path or trailing slash.
pub fn origin_of(url: &str) -> Option<String> {
    let url = url.trim();
    let (scheme, rest) = url.split_once("://")?;
    let host = rest.split(['/', '?', '#']).next()?;
    (!host.is_empty() && matches!(scheme, "http" | "https"))
        .then(|| format!("{}://{}", scheme.to_ascii_lowercase(), host.to_ascii_lowercase()))
}
