//! Server start-up: logs → configuration → database → router → serve, and a
//! graceful stop on SIGINT or SIGTERM.

use std::{future::IntoFuture, net::SocketAddr, process::ExitCode, sync::Arc, time::Duration};

use axum::serve::ListenerExt;
use leptos::config::get_configuration;
use tracing_subscriber::EnvFilter;

use crate::server::{
    chats::ai::AiRuntime,
    chats,
    http::connections::{Counted, PerClientCap},
    db,
    edge::router,
    state::AppState,
};

pub async fn run() -> ExitCode {
    // `MARGIN_LOG_FORMAT=json`: one JSON object per line, for log collectors.
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn"));
    match std::env::var("MARGIN_LOG_FORMAT").as_deref().map(str::trim) {
        Ok("json") => tracing_subscriber::fmt().json().with_env_filter(filter).init(),
        Ok("" | "text") | Err(_) => tracing_subscriber::fmt().with_env_filter(filter).init(),
        Ok(other) => {
            tracing_subscriber::fmt().with_env_filter(filter).init();
            tracing::warn!("MARGIN_LOG_FORMAT is {other:?}: logs are plain text (set it to json or text)");
        }
    }

    // Every setting checked before anything starts: a bad one stops here,
    // named, rather than quietly becoming its default.
    let (config, ai_config) = match crate::server::config::load() {
        Ok((config, ai, _)) => (config, ai),
        Err(why) => {
            eprintln!("{why}");
            return ExitCode::from(2);
        }
    };
    let mut leptos_options = match get_configuration(None) {
        Ok(conf) => conf.leptos_options,
        Err(e) => {
            tracing::error!(error = %e, "could not read the site configuration");
            return ExitCode::FAILURE;
        }
    };
    if leptos_options.output_name.is_empty() {
        leptos_options.output_name = "margin".into();
    }
    let addr = leptos_options.site_addr;

    let pool = match db::connect(&config.database_url).await {
        Ok(pool) => pool,
        Err(e) => {
            // The URL may hold the database's password: never logged whole.
            tracing::error!(error = %e, url = %db::redacted(&config.database_url), "could not open the database");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = crate::server::accounts::quota::configure(&pool, config.storage_mb, config.student_storage_mb).await {
        tracing::error!(error = %e, "could not write the storage limits");
        return ExitCode::FAILURE;
    }
    if let Err(e) = crate::server::lessons::library::fill_search_text(&pool).await {
        tracing::error!(error = %e, "could not prepare older lessons for search");
    }
    if let Some(dir) = &config.standards_dir {
        match crate::server::standards::folder::load(&pool, dir).await {
            Ok(done) => {
                tracing::info!(loaded = done.loaded, unchanged = done.unchanged, "read the standards folder");
                for (file, why) in done.refused {
                    tracing::warn!(%file, "a standards framework was not loaded: {why}");
                }
            }
            Err(why) => tracing::error!("{why}"),
        }
    }
    // SQLite is one process's file: whatever is still running is left from
    // the last one. On PostgreSQL other instances may be writing replies;
    // only the expired leases are anyone's to end (`turns::leases`).
    let all = db::Backend::of(&pool) == db::Backend::Sqlite;
    match chats::turns::store::interrupt_abandoned(&pool, &db::time::now(), all).await {
        Ok(0) => {}
        Ok(n) => tracing::warn!(turns = n, "marked turns left running by the last process as interrupted"),
        Err(e) => tracing::error!(error = %e, "could not mark interrupted turns"),
    }
    if let Err(e) = crate::server::accounts::budget::return_abandoned(&pool).await {
        tracing::error!(error = %e, "could not give back budget reserved by interrupted turns");
    }
    let ai = AiRuntime::start(ai_config).await;
    if let Err(why) = ai.agent() {
        tracing::warn!("the assistant is unavailable: {why}");
    }
    let shutdown_secs = config.shutdown_secs;
    let (max_connections, trusted) = (config.max_connections_per_client, config.trusted_proxies.clone());
    let state = AppState::new(leptos_options, pool.clone(), config, ai, Arc::new(crate::server::reactions::versions::Listener));
    let turns = state.turns.clone();
    spawn_housekeeping(state.clone());
    // Replies paused on a held edit outlive their process: adopted here
    // (SQLite: every one, before the first request), or by any instance's
    // lease tick once nobody holds them (`turns::resume`).
    let resumer = chats::turns::resume::Resumer {
        db: state.turn_writer.clone(),
        budget: state.budget_writer.clone(),
        hub: turns.clone(),
        bus: state.bus.clone(),
        agent: state.ai.agent().ok(),
        feedback: state.ai.feedback_agent().ok(),
        default: crate::server::accounts::budget::default_allowance(state.config.monthly_tokens),
        clock: state.clock.clone(),
    };
    if all {
        match resumer.adopt(true).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(turns = n, "resumed replies paused on a held edit"),
            Err(e) => tracing::error!(error = %e, "could not resume paused replies"),
        }
    }
    crate::server::chats::turns::leases::spawn(state.turn_writer.clone(), turns.clone(), resumer);
    let app = router::build(state);

    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(l) => l,
        Err(e) => {
            tracing::error!(error = %e, %addr, "could not listen");
            return ExitCode::FAILURE;
        }
    };
    tracing::info!("Margin is listening on http://{addr}");
    // Each client address holds a bounded number of connections; each
    // connection sends small writes at once (see `net::no_delay`).
    let listener = PerClientCap::new(listener, max_connections, trusted).tap_io(|c: &mut Counted| {
        if let Err(e) = c.tcp().set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
    });
    let stopping = Arc::new(tokio::sync::Notify::new());
    // `into_make_service…` turns the routes into services once (serving the
    // router itself would rebuild its route table for every connection); the
    // peer address reaches handlers for per-client limits (`client_addr`).
    let served = axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>())
        .with_graceful_shutdown({
            let stopping = stopping.clone();
            async move {
                shutdown_signal().await;
                // Running turns save what they have and close their streams, so
                // that open connections can end.
                turns.shutdown(Duration::from_secs(5)).await;
                stopping.notify_one();
            }
        })
        .into_future();
    // Connections that stay open anyway (a slow upload, a reader that never
    // reads) get `shutdown_secs` once the turns are saved, then the process ends.
    let bound = async {
        stopping.notified().await;
        tokio::time::sleep(Duration::from_secs(shutdown_secs)).await;
        tracing::warn!(secs = shutdown_secs, "connections still open after the shutdown bound; stopping anyway");
    };
    let served = tokio::select! {
        served = served => served,
        () = bound => Ok(()),
    };
    pool.close().await;
    match served {
        Ok(()) => {
            tracing::info!("stopped");
            ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::error!(error = %e, "server error");
            ExitCode::FAILURE
        }
    }
}

/// Periodic clean-up: forget idle rate-limit entries, expired sessions,
/// turn events kept for other instances and old import reports, and delete lessons that have been
/// in the trash for 30 days; and wait again for lessons with events due.
fn spawn_housekeeping(state: AppState) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(300));
        loop {
            tick.tick().await;
            state.limits.retain_recent().await;
            // Once a day, on the instance that claims the day first.
            if let Err(e) = crate::server::ops::retention::daily(&state.db, &state.turns.instance, state.clock.now()).await {
                tracing::warn!(error = %e, "could not delete the chats schools keep no longer");
            }
            let deleted = sqlx::query("DELETE FROM sessions WHERE expires_at <= $1")
                .bind(crate::server::db::time::now())
                .execute(&state.db)
                .await;
            if let Err(e) = deleted {
                tracing::warn!(error = %e, "could not delete expired sessions");
            }
            if let Err(e) = crate::server::chats::turns::remote::purge(&state.db, &crate::server::db::time::now()).await {
                tracing::warn!(error = %e, "could not forget old turn events");
            }
            if let Err(e) = crate::server::lessons::import_reports::purge(&state.db, &crate::server::db::time::now()).await {
                tracing::warn!(error = %e, "could not forget old import reports");
            }
            match crate::server::lessons::library::purge(&state.db, &crate::server::db::time::now()).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(lessons = n, "emptied lessons older than 30 days from the trash"),
                Err(e) => tracing::warn!(error = %e, "could not empty the trash"),
            }
            // Events due at a lesson's gate are waited for here too (at
            // once on start): the instance that queued them may have stopped.
            if let Err(e) = crate::server::reactions::fire::resume(&state).await {
                tracing::warn!(error = %e, "could not read the events waiting for the assistant");
            }
        }
    });
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
    tracing::info!("shutting down");
}
