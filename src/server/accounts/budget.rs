//! What a school may spend on the model, and what it has spent. Each school
//! has a monthly allowance (`MARGIN_MONTHLY_TOKENS`, or its own) and credits
//! that do not expire; spending takes the allowance first, then credits.
//!
//! Every model call reserves before it is made and settles after with what
//! it really used (a call that used nothing gives its reservation back). A
//! reservation is let through while the school has anything left once the
//! other running calls' reservations are counted, and it is one conditional
//! `UPDATE` of the school's row, so parallel turns on any number of
//! instances cannot spend past the budget by more than one call's
//! reservation (its prompt, estimated, plus `AI_MAX_TOKENS`).
//!
//! Months are calendar months in UTC, read from [`crate::server::clock::MonthClock`], which tests
//! move by hand.

use serde::Serialize;
use time::OffsetDateTime;

use crate::server::{
    db::{self, time::stored, Db},
    error::{AppError, Result},
    ids,
};
use crate::chat::message::UsageSummary;

pub mod month;
pub mod spending;

pub use month::month_of;

pub use spending::{
    release, release_for_turn, reserve, reserve_for_session, reserve_for_turn, return_abandoned, settle, share_spent, CallRecord,
};
use spending::{SchoolBudget, SCHOOL_BUDGET};

/// The first moment of the next month.
pub fn next_month(t: OffsetDateTime) -> OffsetDateTime {
    let (year, month) = match t.month() {
        time::Month::December => (t.year() + 1, time::Month::January),
        m => (t.year(), m.next()),
    };
    time::Date::from_calendar_date(year, month, 1).map(|d| d.midnight().assume_utc()).unwrap_or(t)
}

/// "1 December", as the teacher reads when the allowance comes back.
pub fn reset_day(t: OffsetDateTime) -> String {
    let next = next_month(t);
    format!("1 {}", next.month())
}

/// The server's allowance for schools without their own, as bound in SQL.
pub fn default_allowance(monthly_tokens: Option<u64>) -> i64 {
    monthly_tokens.map(|n| i64::try_from(n).unwrap_or(i64::MAX)).unwrap_or(-1)
}

/// The first moment of `now`'s month and of the next, as stored, for
/// queries over a month's calls.
pub fn month_window(now: OffsetDateTime) -> (String, String) {
    (format!("{}-01T00:00:00.000Z", month_of(now)), stored(next_month(now)))
}

/// Sets the school's shares: what each teacher, and each student, may use a
/// month (`None`: no share of their own).
pub async fn set_shares(db: &Db, school_id: &str, teacher: Option<i64>, student: Option<i64>) -> Result<()> {
    if [teacher, student].iter().flatten().any(|n| *n < 0 || *n > MAX_TOKENS) {
        return Err(AppError::BadRequest(format!(
            "A share is a whole number of tokens from 0 to {}.",
            crate::chat::message::thousands(MAX_TOKENS)
        )));
    }
    sqlx::query("UPDATE schools SET teacher_share = $2, student_share = $3 WHERE id = $1").bind(school_id).bind(teacher).bind(student).execute(db).await?;
    Ok(())
}

/// Where a school stands this month.
pub async fn summary(db: &Db, school_id: &str, default: i64, now: OffsetDateTime) -> Result<UsageSummary> {
    let row: Option<SchoolBudget> = sqlx::query_as(SCHOOL_BUDGET).bind(school_id).fetch_optional(db).await?;
    let row = row.ok_or(AppError::NotFound)?;
    let (allowance, used) = (row.allowance(default), row.used_in(&month_of(now)));
    let credits = row.credits.max(0);
    let (allowance, remaining) =
        if allowance < 0 { (None, None) } else { (Some(allowance), Some(allowance.saturating_sub(used).max(0).saturating_add(credits))) };
    Ok(UsageSummary { used, allowance, credits, remaining, resets_at: stored(next_month(now)), reset_day: reset_day(now) })
}

/// The most tokens one grant of credits adds.
pub const MAX_GRANT: i64 = 1_000_000_000_000;
/// The most credits a school holds, and the largest allowance (the
/// configuration's bound too, so it stands there).
pub use crate::server::config::MAX_TOKENS;

/// Adds credits to a school; `by` is the operator's account (`None`: the
/// command line).
pub async fn add_credits(db: &Db, school_id: &str, tokens: i64, by: Option<&str>, now: OffsetDateTime) -> Result<()> {
    if tokens <= 0 || tokens > MAX_GRANT {
        return Err(AppError::BadRequest(format!(
            "Add a whole number of tokens above zero and at most {}.",
            crate::chat::message::thousands(MAX_GRANT)
        )));
    }
    let mut tx = db::begin_write(db).await?;
    let exists: Option<i64> = sqlx::query_scalar("SELECT credits FROM schools WHERE id = $1").bind(school_id).fetch_optional(&mut *tx).await?;
    if exists.is_none() {
        return Err(AppError::NotFound);
    }
    // Checked in the statement, so two grants at once cannot pass it together.
    let done = sqlx::query("UPDATE schools SET credits = credits + $2 WHERE id = $1 AND credits <= $3 - $2")
        .bind(school_id)
        .bind(tokens)
        .bind(MAX_TOKENS)
        .execute(&mut *tx)
        .await?;
    if done.rows_affected() == 0 {
        return Err(AppError::BadRequest(format!(
            "A school holds at most {} tokens of credits.",
            crate::chat::message::thousands(MAX_TOKENS)
        )));
    }
    sqlx::query("INSERT INTO credit_grants (id, school_id, tokens, added_by, created_at) VALUES ($1, $2, $3, $4, $5)")
        .bind(ids::new_id())
        .bind(school_id)
        .bind(tokens)
        .bind(by)
        .bind(stored(now))
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// Sets a school's own allowance (`None`: the server's; negative:
/// unlimited). Who may set which is `operators::may_set_allowance`.
pub async fn set_allowance(db: &Db, school_id: &str, tokens: Option<i64>) -> Result<()> {
    if tokens.is_some_and(|n| n > MAX_TOKENS) {
        return Err(AppError::BadRequest(format!(
            "An allowance is at most {} tokens a month.",
            crate::chat::message::thousands(MAX_TOKENS)
        )));
    }
    let tokens = tokens.map(|n| if n < 0 { -1 } else { n });
    sqlx::query("UPDATE schools SET monthly_tokens = $2 WHERE id = $1").bind(school_id).bind(tokens).execute(db).await?;
    Ok(())
}

/// A month's use: by teacher and by day.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct UsageReport {
    pub month: String,
    pub total: i64,
    pub by_teacher: Vec<TeacherUsage>,
    pub by_day: Vec<DayUsage>,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq, sqlx::FromRow)]
#[serde(rename_all = "camelCase")]
pub struct TeacherUsage {
    pub user_id: String,
    pub email: String,
    pub tokens: i64,
    pub calls: i64,
}

#[derive(Clone, Debug, Serialize, PartialEq, Eq, sqlx::FromRow)]
#[serde(rename_all = "camelCase")]
pub struct DayUsage {
    pub day: String,
    pub tokens: i64,
}

/// The month's use of a school, or of one of its teachers (`user`).
pub async fn report(db: &Db, school_id: &str, user: Option<&str>, now: OffsetDateTime) -> Result<UsageReport> {
    let (from, to) = month_window(now);
    // `$4` is '' for the whole school, bound either way so both backends type it.
    let only = if user.is_some() { "AND a.user_id = $4" } else { "AND $4 = ''" };
    let month_calls = format!("a.school_id = $1 AND a.created_at >= $2 AND a.created_at < $3 {only}");
    let by_teacher: Vec<TeacherUsage> = sqlx::query_as(&format!(
        "SELECT a.user_id, COALESCE(u.email, '') AS email, CAST(SUM(a.total_tokens) AS BIGINT) AS tokens, COUNT(*) AS calls
         FROM ai_calls a LEFT JOIN users u ON u.id = a.user_id WHERE {month_calls}
         GROUP BY a.user_id, u.email ORDER BY tokens DESC, email"
    ))
    .bind(school_id)
    .bind(&from)
    .bind(&to)
    .bind(user.unwrap_or(""))
    .fetch_all(db)
    .await?;
    let by_day: Vec<DayUsage> = sqlx::query_as(&format!(
        "SELECT substr(a.created_at, 1, 10) AS day, CAST(SUM(a.total_tokens) AS BIGINT) AS tokens
         FROM ai_calls a WHERE {month_calls} GROUP BY substr(a.created_at, 1, 10) ORDER BY day"
    ))
    .bind(school_id)
    .bind(&from)
    .bind(&to)
    .bind(user.unwrap_or(""))
    .fetch_all(db)
    .await?;
    let total = by_day.iter().map(|d| d.tokens).sum();
    Ok(UsageReport { month: month_of(now), total, by_teacher, by_day })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub fn at(year: i32, month: u8, day: u8) -> OffsetDateTime {
        time::Date::from_calendar_date(year, time::Month::try_from(month).unwrap(), day).unwrap().midnight().assume_utc()
    }

    #[test]
    fn months_roll_over_at_the_year_end() {
        assert_eq!(month_of(at(2026, 11, 24)), "2026-11");
        assert_eq!(stored(next_month(at(2026, 12, 31))), "2027-01-01T00:00:00.000Z");
        assert_eq!(reset_day(at(2026, 11, 24)), "1 December");
    }
}
