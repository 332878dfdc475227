//! A turn's meter: the agent's [`Meter`] over the school's budget
//! (`budget`). The request that starts a turn reserves its first call
//! (held as a [`Spending`]) so that a spent budget answers 402 before any
//! stream starts; every later call reserves as it comes, and each settles
//! with what it used, whoever is still listening.

use std::sync::Mutex;

use futures::future::BoxFuture;

use super::gate::Stored;
use crate::{
    agent::{
        meter::{CallUsage, Meter},
        provider::ProviderError,
    },
    server::{
        accounts::budget::{self, CallRecord},
        clock::MonthClock,
        db::Db,
        error::AppError,
    },
};

/// Whose budget a turn spends, with its first call already reserved. Until
/// it becomes the turn's meter, dropping it gives the reservation back (a
/// request refused after reserving, for any reason, keeps nothing).
pub struct Spending {
    /// Where the budget is written (the state's `budget_writer`).
    pub budget: Db,
    pub school_id: String,
    pub user_id: String,
    /// The server's allowance for schools without their own (`budget::default_allowance`).
    pub default: i64,
    pub clock: MonthClock,
    /// Tokens reserved for the first call.
    pub first: i64,
    /// The reservation is still this value's to give back.
    held: bool,
}

impl Spending {
    /// A reservation of `first` tokens already made for `user_id` of `school_id`.
    pub fn held(budget: Db, school_id: String, user_id: String, default: i64, clock: MonthClock, first: i64) -> Self {
        Self { budget, school_id, user_id, default, clock, first, held: true }
    }

    /// The turn's meter. Its first reservation is recorded on the turn's
    /// reply when the reply is stored (`store::TurnIds::reserved`), which
    /// `stored` tells.
    pub fn meter(mut self, turn_id: &str, model: &str, stored: Stored) -> SchoolMeter {
        self.held = false;
        let held = Mutex::new(Some(self.first));
        SchoolMeter { spending: self, turn_id: turn_id.into(), model: model.into(), held, prepaid: Mutex::new(true), stored }
    }
}

/// The meter of a paused turn resumed by this process: nothing is reserved
/// for it (its calls so far were settled), so its next call reserves as
/// any later call does.
pub fn unreserved(spending: (Db, String, String), default: i64, clock: MonthClock, turn_id: &str, model: &str, stored: Stored) -> SchoolMeter {
    let (budget, school_id, user_id) = spending;
    let spending = Spending { budget, school_id, user_id, default, clock, first: 0, held: false };
    SchoolMeter { spending, turn_id: turn_id.into(), model: model.into(), held: Mutex::new(None), prepaid: Mutex::new(false), stored }
}

impl Drop for Spending {
    fn drop(&mut self) {
        if !std::mem::take(&mut self.held) {
            return;
        }
        let (db, school, tokens) = (self.budget.clone(), std::mem::take(&mut self.school_id), self.first);
        tokio::spawn(async move {
            if let Err(e) = budget::release(&db, &school, tokens).await {
                tracing::error!(error = %e, "could not give back a reservation");
            }
        });
    }
}

/// The 402 of a spent budget.
pub fn exhausted(now: time::OffsetDateTime) -> AppError {
    AppError::BudgetExhausted { message: exhausted_message(now), resets_at: crate::server::db::time::stored(budget::next_month(now)) }
}

fn exhausted_message(now: time::OffsetDateTime) -> String {
    crate::chat::message::budget_spent(&budget::reset_day(now))
}

/// The 402 of an account's own share spent (the school may have more).
pub fn share_exhausted(now: time::OffsetDateTime) -> AppError {
    AppError::BudgetExhausted { message: share_message(now), resets_at: crate::server::db::time::stored(budget::next_month(now)) }
}

fn share_message(now: time::OffsetDateTime) -> String {
    crate::chat::message::share_spent(&budget::reset_day(now))
}

/// Why a reservation was refused, for `user_id`: their share, or the school's budget.
pub async fn refusal(db: &Db, user_id: &str, now: time::OffsetDateTime) -> AppError {
    match budget::share_spent(db, user_id, &budget::month_of(now)).await {
        Ok(true) => share_exhausted(now),
        _ => exhausted(now),
    }
}

pub struct SchoolMeter {
    spending: Spending,
    turn_id: String,
    model: String,
    /// What the call under way holds.
    held: Mutex<Option<i64>>,
    /// The first call is already reserved by the request.
    prepaid: Mutex<bool>,
    /// Whether the turn's reply was stored: its reservations are recorded
    /// there (so that any instance can give them back if this one dies),
    /// and they are given back through it.
    stored: Stored,
}

impl SchoolMeter {
    /// The school whose budget the turn spends (its audit log's, too).
    pub fn school_id(&self) -> &str {
        &self.spending.school_id
    }

    /// Gives back what no call used (a turn that ended before its first call).
    pub async fn close(&self) {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(held) = held.filter(|n| *n > 0) {
            let s = &self.spending;
            let released = if self.stored.wait().await {
                budget::release_for_turn(&s.budget, &s.school_id, &self.turn_id, held).await
            } else {
                budget::release(&s.budget, &s.school_id, held).await
            };
            if let Err(e) = released {
                tracing::error!(error = %e, turn = %self.turn_id, "could not give back a reservation");
            }
        }
    }
}

impl Meter for SchoolMeter {
    fn reserve(&self, tokens: u32) -> BoxFuture<'_, Result<(), ProviderError>> {
        Box::pin(async move {
            if std::mem::take(&mut *self.prepaid.lock().unwrap_or_else(|e| e.into_inner())) {
                return Ok(());
            }
            let s = &self.spending;
            let now = s.clock.now();
            // A turn whose reply could not be stored makes no more calls.
            if !self.stored.wait().await {
                return Err(ProviderError::new("internal", "The reply could not be saved, so it stopped. Please try again."));
            }
            let month = budget::month_of(now);
            match budget::reserve_for_turn(&s.budget, &s.school_id, &s.user_id, &self.turn_id, i64::from(tokens), s.default, &month).await {
                Ok(true) => {
                    *self.held.lock().unwrap_or_else(|e| e.into_inner()) = Some(i64::from(tokens));
                    Ok(())
                }
                Ok(false) => {
                    let own = budget::share_spent(&s.budget, &s.user_id, &month).await.unwrap_or(false);
                    Err(ProviderError::new("budget_exhausted", if own { share_message(now) } else { exhausted_message(now) }))
                }
                Err(e) => {
                    tracing::error!(error = %e, turn = %self.turn_id, "could not reserve budget");
                    Err(ProviderError::new("internal", "Your school's AI budget could not be checked, so the reply stopped. Please try again."))
                }
            }
        })
    }

    fn settle(&self, used: CallUsage) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let held = self.held.lock().unwrap_or_else(|e| e.into_inner()).take().unwrap_or(0);
            let s = &self.spending;
            let call = CallRecord {
                school_id: s.school_id.clone(),
                user_id: s.user_id.clone(),
                turn_id: self.turn_id.clone(),
                model: self.model.clone(),
                prompt_tokens: i64::from(used.prompt_tokens),
                completion_tokens: i64::from(used.completion_tokens),
                estimated: used.estimated,
                outcome: used.outcome.as_str().into(),
            };
            crate::server::metrics::METRICS.used(&s.school_id, u64::from(used.prompt_tokens) + u64::from(used.completion_tokens));
            let tied = self.stored.wait().await;
            if let Err(e) = budget::settle(&s.budget, &call, held, tied, s.default, s.clock.now()).await {
                tracing::error!(error = %e, turn = %self.turn_id, "could not record a model call's usage");
            }
        })
    }
}
