//! The state every handler and server function shares. It reaches server
//! functions through Leptos context (`leptos_routes_with_context` provides it).

use std::{sync::Arc, time::Duration};

use axum::extract::FromRef;
use leptos::config::LeptosOptions;

use crate::server::{
    chats::ai::AiRuntime,
    lessons::announce::ChangeListener,
    clock::{LimitClock, MonthClock, ReactionClock, ShownClock},
    bus::Bus,
    config::Config,
    db::Db,
    http::limits::{AccountLimits, HashGate},
    chats::turns::TurnHub,
};

#[derive(Clone, FromRef)]
pub struct AppState {
    pub leptos_options: LeptosOptions,
    pub db: Db,
    /// The same database, one connection: the turn engine writes through it
    /// (see `db::turn_writer`).
    #[from_ref(skip)]
    pub turn_writer: Db,
    /// Where budgets are reserved and settled (see `db::budget_writer`).
    #[from_ref(skip)]
    pub budget_writer: Db,
    pub config: Arc<Config>,
    pub limits: Arc<AccountLimits>,
    pub hash_gate: Arc<HashGate>,
    pub ai: Arc<AiRuntime>,
    pub turns: Arc<TurnHub>,
    /// Notes to and from the other instances sharing the database.
    pub bus: Arc<Bus>,
    /// The lesson pages open on this instance, fed from the bus.
    #[from_ref(skip)]
    pub lesson_pages: Arc<crate::server::lessons::live::LessonPages>,
    /// The clock budgets read their month from (tests set it).
    pub clock: MonthClock,
    /// How long what the teacher is shown of a held edit stays good, on a
    /// clock tests set (the turn hub's, shared).
    pub shown: ShownClock,
    /// The clock automatic turns are timed by (tests move it).
    pub reactions: ReactionClock,
    /// Reads material in child processes with limits.
    pub extractor: crate::server::material::sandbox::Extractor,
    /// The lessons this instance waits on to start automatic turns.
    #[from_ref(skip)]
    pub scheduler: Arc<crate::server::reactions::scheduler::Scheduler>,
    /// The school-account providers and what they publish (`accounts::sso`).
    #[from_ref(skip)]
    pub sso: Arc<crate::server::accounts::sso::providers::Providers>,
    /// The LMS platforms' published keys (`lti::platforms`).
    #[from_ref(skip)]
    pub lti_keys: Arc<crate::server::lti::platforms::PlatformKeys>,
    /// Access tokens from the LMS platforms (`lti::tokens`).
    #[from_ref(skip)]
    pub lti_tokens: Arc<crate::server::lti::tokens::AccessTokens>,
    /// What hears that a lesson's content changed (`lessons::announce`):
    /// the reactions, carrying a core's change to its versions.
    #[from_ref(skip)]
    pub lesson_listener: Arc<dyn ChangeListener<AppState>>,
}

impl AppState {
    /// The state, with what listens to lessons changing (the server's is
    /// `reactions::versions::Listener`; the state does not name it, as it
    /// stands below the reactions).
    pub fn new(leptos_options: LeptosOptions, db: Db, config: Config, ai: AiRuntime, listener: Arc<dyn ChangeListener<AppState>>) -> Self {
        let signups = config.signups_per_client_hour;
        let lease = Duration::from_secs(config.turn_lease_secs);
        let bus = Arc::new(Bus::start(&db));
        let limits = AccountLimits::with_clock(LimitClock::real(), signups)
            .with_turns_per_minute(config.turns_per_minute_user)
            .with_school_turns_per_minute(config.turns_per_minute_school);
        let limits = Arc::new(shared_limits(limits, &db));
        let extractor = crate::server::material::sandbox::Extractor::new(
            config.extractor_program.clone(),
            crate::server::material::sandbox::ChildLimits { memory_bytes: config.extract_memory_mb * 1024 * 1024, ..Default::default() },
            config.extractions_at_once,
        );
        let turns = Arc::new(TurnHub::default().with_lease(lease).with_approval_wait(Duration::from_secs(config.approval_wait_secs)));
        if bus.shared() {
            turns.start_relay(db.clone(), bus.clone());
        }
        let lesson_pages = crate::server::lessons::live::LessonPages::start(
            db.clone(),
            &bus,
            config.lesson_streams_per_account,
            Duration::from_millis(config.lesson_sweep_ms),
        );
        let outbound = crate::server::http::outbound::Outbound::new(config.outbound_allow.clone());
        let sso = Arc::new(crate::server::accounts::sso::providers::Providers::new(config.sso.clone(), outbound.clone()));
        let turn_writer = crate::server::db::turn_writer(&db);
        Self {
            leptos_options,
            sso,
            lti_keys: Arc::new(crate::server::lti::platforms::PlatformKeys::new(outbound.clone())),
            lti_tokens: Arc::new(crate::server::lti::tokens::AccessTokens::new(outbound)),
            lesson_pages,
            budget_writer: crate::server::db::budget_writer(&db, &turn_writer),
            turn_writer,
            db,
            config: Arc::new(config),
            limits,
            hash_gate: Arc::new(HashGate::default()),
            ai: Arc::new(ai),
            shown: turns.shown.clone(),
            turns,
            bus,
            clock: MonthClock::real(),
            reactions: ReactionClock::real(),
            extractor,
            scheduler: Arc::default(),
            lesson_listener: listener,
        }
    }
}

impl AppState {
    /// This site's origin, for addresses Margin gives another site (a
    /// provider's redirect, an LMS's launch): `MARGIN_PUBLIC_URL`, else the
    /// host the request was sent to (host characters only), else the listen
    /// address.
    pub fn origin(&self, headers: &axum::http::HeaderMap) -> String {
        if let Some(public) = &self.config.public_origin {
            return public.clone();
        }
        let host = headers
            .get(axum::http::header::HOST)
            .and_then(|h| h.to_str().ok())
            .filter(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']')))
            .map(str::to_string)
            .unwrap_or_else(|| self.leptos_options.site_addr.to_string());
        format!("http://{host}")
    }
}

/// Limits kept in the database when it is shared by many instances.
pub fn shared_limits(limits: AccountLimits, db: &Db) -> AccountLimits {
    if crate::server::db::Backend::of(db) == crate::server::db::Backend::Postgres {
        limits.shared_in(db.clone())
    } else {
        limits
    }
}
