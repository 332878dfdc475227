//! Leases of running replies, so that many instances can share one
//! database. A reply is written by the instance that started it; its row
//! carries that instance and a lease, which the instance renews once it
//! has run down by a third (looked at every `TICK`, one statement for all
//! its replies, so that each reply's row is written every ten seconds or
//! so rather than every second). Every instance, on the same
//! tick, marks replies whose lease ran out as interrupted: an instance that
//! dies mid-turn leaves no reply "running" for longer than the lease. Each
//! tick also reads the turns someone asked another instance to stop
//! (`store::request_cancel`), which are then stopped here.

use super::store;
use std::{sync::Arc, time::Duration};

use tokio::task::JoinHandle;

use super::{hub::TurnHub, resume::Resumer};
use crate::server::{
    db::{time, Db},
    error::Result,
};

/// How often leases are renewed and expired ones looked for; also how long
/// a stop asked of another instance may wait before it is seen.
pub const TICK: Duration = Duration::from_secs(1);

/// How far a lease runs down before it is renewed: a third of it, plus a
/// tick. A live instance's leases never have less than two thirds of their
/// length left, less a tick (the shortest lease, 3 s, is renewed every
/// tick), and each reply's row is written about once every third of a lease
/// (every 10 s with the default 30 s), not every tick.
pub fn renewal_due(lease: Duration) -> Duration {
    (lease - lease / 3 + TICK).min(lease)
}

/// One round: renew this instance's leases that are due, stop the turns
/// asked to stop, interrupt the replies nobody holds any more and give back
/// what they had reserved. Returns how many were interrupted.
pub async fn tick(db: &Db, hub: &TurnHub) -> Result<u64> {
    let now = time::now();
    if !hub.running().is_empty() {
        let until = time::shifted(&now, hub.lease, true).unwrap_or_else(|| time::from_now(hub.lease));
        let due = time::shifted(&now, renewal_due(hub.lease), true).unwrap_or_else(|| until.clone());
        store::renew_leases(db, &hub.instance, &until, &due).await?;
        for turn in store::stops_asked(db, &hub.instance).await? {
            if let Some(log) = hub.get(&turn) {
                log.cancel.cancel();
            }
        }
    }
    let interrupted = store::interrupt_abandoned(db, &now, false).await?;
    // What the interrupted replies (or any reply that stopped without
    // settling) still held of their schools' budgets goes back.
    match crate::server::accounts::budget::return_abandoned(db).await? {
        0 => {}
        n => tracing::warn!(tokens = n, "gave back budget reserved by replies that stopped without settling"),
    }
    Ok(interrupted)
}

/// Runs `tick` every `TICK` until the process ends, and on the same tick
/// adopts the paused replies nobody holds (`resume`).
pub fn spawn(db: Db, hub: Arc<TurnHub>, resumer: Resumer) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(TICK);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            every.tick().await;
            match tick(&db, &hub).await {
                Ok(0) => {}
                Ok(n) => tracing::warn!(replies = n, "marked replies whose instance stopped renewing them as interrupted"),
                Err(e) => tracing::warn!(error = %e, "could not renew or check the leases of running replies"),
            }
            match resumer.adopt(false).await {
                Ok(0) => {}
                Ok(n) => tracing::info!(replies = n, "adopted replies paused on a held edit that their instance left"),
                Err(e) => tracing::warn!(error = %e, "could not look for paused replies to adopt"),
            }
        }
    })
}
