//! Configuration read once from the environment, with defaults that work on a
//! fresh machine. Every value is checked (`settings::Env`): a bad one stops
//! the server with a sentence naming it. docs/operating.md lists every variable;
//! keep the two in step. `margin config` prints what is in effect.

pub mod ip_range;
pub mod sso;

use ip_range::IpRange;

use crate::{agent::config::AiConfig, settings::Env};

/// Sign-ups one client address may make in an hour, unless configured
/// (`MARGIN_SIGNUPS_PER_CLIENT_HOUR`): enough for a school's staff training
/// behind one address, too few to fill the database.
pub const SIGNUPS_PER_CLIENT_HOUR: u32 = 60;

/// Replies one account may start in a minute, unless configured: far more
/// than a teacher asks for by hand.
pub const TURNS_PER_MINUTE_USER: u32 = 30;
/// Replies a school's accounts may start in a minute together, by default.
pub const TURNS_PER_MINUTE_SCHOOL: u32 = 300;

/// What a teacher keeps by default: some hundreds of lessons with their
/// history and material.
pub const TEACHER_MB: u64 = 500;
/// What a student keeps by default: answers to many lessons.
pub const STUDENT_MB: u64 = 20;

/// The most credits a school holds, and the largest allowance: far above
/// any real use, and far enough below `i64::MAX` that no sum of them
/// (allowance + credits − reserved, in SQL or here) can overflow.
pub const MAX_TOKENS: i64 = 1_000_000_000_000_000;

/// How long a running reply's lease lasts unless renewed, in seconds
/// (`MARGIN_TURN_LEASE_SECS`; `chats::turns::LEASE`).
pub const TURN_LEASE_SECS: u64 = 30;

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
    /// Addresses inside the server's network that Margin may still fetch
    /// from for a school (`MARGIN_OUTBOUND_ALLOW`, `http::outbound`): an
    /// identity provider or LMS on the school's own network. Empty: none.
    pub outbound_allow: Vec<IpRange>,
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
    /// Live lesson pages one account may hold open on an instance
    /// (`MARGIN_LESSON_STREAMS_PER_ACCOUNT`, `lessons::live`); 0: no limit.
    pub lesson_streams_per_account: usize,
    /// How often an instance looks at every open lesson for a change whose
    /// note was lost (`MARGIN_LESSON_SWEEP_MS`).
    pub lesson_sweep_ms: u64,
    /// The token `/metrics` asks for (`MARGIN_METRICS_TOKEN`); unset, there is no `/metrics`.
    pub metrics_token: Option<String>,
    /// How long a reply paused on an edit held for review waits for the
    /// teacher before it ends, leaving the edit for later
    /// (`MARGIN_APPROVAL_WAIT_SECS`).
    pub approval_wait_secs: u64,
    /// A folder of 1EdTech CASE packages (`.json`) offered to every school
    /// (`MARGIN_STANDARDS_DIR`, `standards::folder`); unset, none.
    pub standards_dir: Option<std::path::PathBuf>,
    /// The school-account providers people may sign in with
    /// (`MARGIN_SSO_PROVIDERS`, `accounts::sso::providers`); none by default.
    pub sso: Vec<sso::ProviderConfig>,
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
            outbound_allow: Vec::new(),
            public_origin: None,
            shutdown_secs: 10,
            max_connections_per_client: 512,
            signups_per_client_hour: SIGNUPS_PER_CLIENT_HOUR,
            turns_per_minute_user: TURNS_PER_MINUTE_USER,
            turns_per_minute_school: TURNS_PER_MINUTE_SCHOOL,
            monthly_tokens: None,
            turn_lease_secs: TURN_LEASE_SECS,
            extractor_program: None,
            extractions_at_once: 2,
            extract_memory_mb: 384,
            storage_mb: TEACHER_MB,
            student_storage_mb: STUDENT_MB,
            lesson_streams_per_account: 24,
            lesson_sweep_ms: 5_000,
            metrics_token: None,
            approval_wait_secs: 30 * 60,
            standards_dir: None,
            sso: Vec::new(),
        }
    }
}

impl Config {
    /// Reads every server setting from `env`, checking each; what is wrong
    /// is left in `env.problems()`, and the default stands in meanwhile.
    pub fn read(env: &mut Env) -> Self {
        let d = Self::default();
        let database_url = env.text_masked("DATABASE_URL", crate::server::db::redacted).unwrap_or(d.database_url);
        if crate::server::db::Backend::of_url(&database_url).is_none() {
            env.problem(format!(
                "DATABASE_URL must begin sqlite:// (a file) or postgres:// (a server), not {:?}.",
                crate::server::db::redacted(&database_url)
            ));
        }
        let public_origin = env.http_url("MARGIN_PUBLIC_URL").and_then(|v| origin_of(&v));
        // Served at an https:// address (behind a reverse proxy with TLS),
        // the session cookie is `Secure` unless the operator says otherwise.
        let https = public_origin.as_deref().is_some_and(|o| o.starts_with("https://"));
        Self {
            database_url,
            secure_cookies: env.flag("MARGIN_SECURE_COOKIES", d.secure_cookies || https),
            allow_signup: env.flag("MARGIN_ALLOW_SIGNUP", d.allow_signup),
            session_days: env.number("MARGIN_SESSION_DAYS", d.session_days, 1, 3650, "days"),
            keepalive_secs: env.number("MARGIN_KEEPALIVE_SECS", d.keepalive_secs, 1, 3600, "seconds"),
            trusted_proxies: env.list("MARGIN_TRUSTED_PROXIES", "addresses or ranges such as 10.0.0.0/8", IpRange::parse),
            outbound_allow: env.list("MARGIN_OUTBOUND_ALLOW", "addresses or ranges such as 10.0.0.5 or 10.1.0.0/16", IpRange::parse),
            public_origin,
            shutdown_secs: env.number("MARGIN_SHUTDOWN_SECS", d.shutdown_secs, 0, 3600, "seconds"),
            max_connections_per_client: env.number("MARGIN_MAX_CONNECTIONS_PER_CLIENT", d.max_connections_per_client, 1, 1_000_000, "connections"),
            signups_per_client_hour: env.number("MARGIN_SIGNUPS_PER_CLIENT_HOUR", d.signups_per_client_hour, 1, 1_000_000, "sign-ups an hour"),
            turns_per_minute_user: env.number("MARGIN_TURNS_PER_MINUTE_USER", d.turns_per_minute_user, 0, 1_000_000, "replies a minute; 0 for no limit"),
            turns_per_minute_school: env.number("MARGIN_TURNS_PER_MINUTE_SCHOOL", d.turns_per_minute_school, 0, 1_000_000, "replies a minute; 0 for no limit"),
            monthly_tokens: env.optional_number("MARGIN_MONTHLY_TOKENS", 0, MAX_TOKENS as u64, "tokens"),
            // At least three renewals fit in a lease.
            turn_lease_secs: env.number("MARGIN_TURN_LEASE_SECS", d.turn_lease_secs, 3, 3600, "seconds"),
            extractor_program: d.extractor_program,
            extractions_at_once: env.number("MARGIN_EXTRACTIONS", d.extractions_at_once, 1, 64, "files at once"),
            extract_memory_mb: env.number("MARGIN_EXTRACT_MEMORY_MB", d.extract_memory_mb, 32, 65_536, "MiB"),
            storage_mb: env.number("MARGIN_STORAGE_MB", d.storage_mb, 1, 10_000_000, "MiB"),
            student_storage_mb: env.number("MARGIN_STUDENT_STORAGE_MB", d.student_storage_mb, 1, 10_000_000, "MiB"),
            lesson_streams_per_account: env.number("MARGIN_LESSON_STREAMS_PER_ACCOUNT", d.lesson_streams_per_account, 0, 1_000_000, "pages; 0 for no limit"),
            lesson_sweep_ms: env.number("MARGIN_LESSON_SWEEP_MS", d.lesson_sweep_ms, 50, 3_600_000, "milliseconds"),
            metrics_token: env.secret("MARGIN_METRICS_TOKEN").filter(|t| !t.trim().is_empty()),
            approval_wait_secs: env.number("MARGIN_APPROVAL_WAIT_SECS", d.approval_wait_secs, 1, 7 * 24 * 3600, "seconds"),
            standards_dir: env.text("MARGIN_STANDARDS_DIR").filter(|d| !d.trim().is_empty()).map(std::path::PathBuf::from),
            sso: sso::read(env),
        }
    }
}

/// The server's and the agent's settings from the process's environment,
/// every one checked. `Err`: the sentences naming each bad value, for the
/// operator; the server does not start.
pub fn load() -> Result<(Config, AiConfig, Env), String> {
    let mut env = Env::from_process();
    let config = Config::read(&mut env);
    let ai = AiConfig::read(&mut env);
    env.finish()?;
    Ok((config, ai, env))
}

#[cfg(test)]
mod tests {
    use super::{Config, Env};

    #[test]
    fn an_https_public_address_marks_the_session_cookie_secure_unless_told_otherwise() {
        let read = |pairs: &[(&str, &str)]| Config::read(&mut Env::from_pairs(pairs.iter().copied())).secure_cookies;
        assert!(!read(&[]));
        assert!(!read(&[("MARGIN_PUBLIC_URL", "http://margin.school.test")]));
        assert!(read(&[("MARGIN_PUBLIC_URL", "https://margin.school.org")]));
        assert!(!read(&[("MARGIN_PUBLIC_URL", "https://margin.school.org"), ("MARGIN_SECURE_COOKIES", "false")]));
        assert!(read(&[("MARGIN_SECURE_COOKIES", "true")]));
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
