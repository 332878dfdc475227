//! The state every handler and server function shares. It reaches server
//! functions through Leptos context (`leptos_routes_with_context` provides it).

use std::sync::Arc;

use axum::extract::FromRef;
use leptos::config::LeptosOptions;
use super::db::Db;

use super::{
    ai::AiRuntime,
    config::Config,
    import_reports::ImportReports,
    limits::{AccountLimits, HashGate, LimitClock},
    turns::TurnHub,
};

#[derive(Clone, FromRef)]
pub struct AppState {
    pub leptos_options: LeptosOptions,
    pub db: Db,
    /// The same database, one connection: the turn engine writes through it
    /// (see `db::turn_writer`).
    #[from_ref(skip)]
    pub turn_writer: Db,
    pub config: Arc<Config>,
    pub limits: Arc<AccountLimits>,
    pub hash_gate: Arc<HashGate>,
    pub ai: Arc<AiRuntime>,
    pub turns: Arc<TurnHub>,
    /// Problems of lesson files that could not be imported, briefly.
    pub import_reports: Arc<ImportReports>,
}

impl AppState {
    pub fn new(leptos_options: LeptosOptions, db: Db, config: Config, ai: AiRuntime) -> Self {
        let signups = config.signups_per_client_hour;
        Self {
            leptos_options,
            turn_writer: super::db::turn_writer(&db),
            db,
            config: Arc::new(config),
            limits: Arc::new(AccountLimits::with_clock(LimitClock::real(), signups)),
            hash_gate: Arc::new(HashGate::default()),
            ai: Arc::new(ai),
            turns: Arc::new(TurnHub::default()),
            import_reports: Arc::new(ImportReports::default()),
        }
    }
}
