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
//! Months are calendar months in UTC, read from [`MonthClock`], which tests
//! move by hand.

use std::sync::{Arc, LazyLock, Mutex};

use serde::Serialize;
use time::OffsetDateTime;

use super::{
    db::{self, time::stored, Backend, Db},
    error::{AppError, Result},
    ids,
};
use crate::chat::message::UsageSummary;

/// The clock months are read from: real time until a test sets a time (every
/// copy of the state shares it).
#[derive(Clone, Debug, Default)]
pub struct MonthClock(Arc<Mutex<Option<OffsetDateTime>>>);

impl MonthClock {
    pub fn real() -> Self {
        Self::default()
    }

    /// From now on the clock reads `at` (tests).
    pub fn set(&self, at: OffsetDateTime) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(at);
    }

    pub fn now(&self) -> OffsetDateTime {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).unwrap_or_else(OffsetDateTime::now_utc)
    }
}

/// The month a time falls in, as `usage_month` keeps it: `2026-11`.
pub fn month_of(t: OffsetDateTime) -> String {
    format!("{:04}-{:02}", t.year(), u8::from(t.month()))
}

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

/// A school's monthly allowance as SQL compares it: the school's own
/// (`monthly_tokens`) or else the server's; negative is unlimited.
const ALLOWANCE: &str = "COALESCE(monthly_tokens, $3)";

/// Whether a school has anything left once the calls under way are counted
/// (`$3`: the server's allowance, `$4`: this month).
fn has_left() -> String {
    let used = "(CASE WHEN usage_month = $4 THEN month_used ELSE 0 END)";
    format!(
        "({ALLOWANCE} < 0 OR (CASE WHEN {ALLOWANCE} > {used} THEN {ALLOWANCE} - {used} ELSE 0 END) + credits - reserved > 0)"
    )
}

/// The server's allowance for schools without their own, as bound in SQL.
pub fn default_allowance(monthly_tokens: Option<u64>) -> i64 {
    monthly_tokens.map(|n| i64::try_from(n).unwrap_or(i64::MAX)).unwrap_or(-1)
}

/// What an account's replies under way hold (their reservations, recorded
/// on each reply, `reserve_for_turn`), for the SQL below; `u` is the account.
/// Counted from the replies rather than kept on the account, so that the
/// reservation before a reply's first words stays one statement.
const IN_FLIGHT: &str = "COALESCE((SELECT SUM(m.reserved_tokens) FROM chat_messages m JOIN chat_sessions c ON c.id = m.session_id
                          WHERE c.owner_id = u.id AND m.reserved_tokens > 0), 0)";

/// Whether the account `user` (an SQL expression) has something left of
/// its share (`$4`: this month), inside an `UPDATE schools`: true when the
/// school gives its accounts of that kind no share of their own.
fn share_left(user: &str) -> String {
    let share = "(CASE WHEN u.role = 'student' THEN schools.student_share ELSE schools.teacher_share END)";
    // A school without shares (most) is told by its own row, before any
    // subquery runs: `OR` stops there.
    format!(
        "((schools.teacher_share IS NULL AND schools.student_share IS NULL)
          OR NOT EXISTS (SELECT 1 FROM users u WHERE u.id = {user} AND {share} IS NOT NULL
           AND {share} - (CASE WHEN u.usage_month = $4 THEN u.month_used ELSE 0 END) - {IN_FLIGHT} <= 0))"
    )
}

/// Reserves `tokens` for a call of `user_id`'s, of school `school_id`.
/// `false`: nothing is left of the school's budget or of the account's
/// share (nothing was reserved).
pub async fn reserve(db: &Db, school_id: &str, user_id: &str, tokens: i64, default: i64, month: &str) -> Result<bool> {
    reserve_in(&mut *db.acquire().await?, school_id, user_id, tokens, default, month).await
}

/// `reserve` on the caller's connection (or in its transaction).
async fn reserve_in(conn: &mut sqlx::AnyConnection, school_id: &str, user_id: &str, tokens: i64, default: i64, month: &str) -> Result<bool> {
    static SQL: LazyLock<String> =
        LazyLock::new(|| format!("UPDATE schools SET reserved = reserved + $2 WHERE id = $1 AND {} AND {}", has_left(), share_left("$5")));
    let done = sqlx::query(SQL.as_str()).bind(school_id).bind(tokens).bind(default).bind(month).bind(user_id).execute(&mut *conn).await?;
    Ok(done.rows_affected() == 1)
}

/// The same for the account whose live session token hashes to
/// `token_hash`, so that it can run beside the query that finds the
/// account and its chat rather than after it, as one statement.
/// `Some(school)`: reserved.
pub async fn reserve_for_session(db: &Db, token_hash: &str, tokens: i64, default: i64, month: &str) -> Result<Option<String>> {
    static SQL: LazyLock<String> = LazyLock::new(|| {
        format!(
            "UPDATE schools SET reserved = reserved + $2
             WHERE id = (SELECT u.school_id FROM sessions s JOIN users u ON u.id = s.user_id
                         WHERE s.token_hash = $1 AND s.expires_at > $5)
               AND {} AND {}
             RETURNING id",
            has_left(),
            share_left("(SELECT s.user_id FROM sessions s WHERE s.token_hash = $1)")
        )
    });
    Ok(sqlx::query_scalar(SQL.as_str())
        .bind(token_hash)
        .bind(tokens)
        .bind(default)
        .bind(month)
        .bind(db::time::now())
        .fetch_optional(db)
        .await?)
}

/// Whether the account's own share of its school's budget is what is spent
/// (when a reservation was refused: which sentence to say).
pub async fn share_spent(db: &Db, user_id: &str, month: &str) -> Result<bool> {
    let share = "(CASE WHEN u.role = 'student' THEN s.student_share ELSE s.teacher_share END)";
    let spent: Option<i64> = sqlx::query_scalar(&format!(
        "SELECT 1 FROM users u JOIN schools s ON s.id = u.school_id
         WHERE u.id = $1 AND {share} IS NOT NULL AND {share} - (CASE WHEN u.usage_month = $2 THEN u.month_used ELSE 0 END) - {IN_FLIGHT} <= 0"
    ))
    .bind(user_id)
    .bind(month)
    .fetch_optional(db)
    .await?;
    Ok(spent.is_some())
}

/// Reserves `tokens` for a later call of a running turn, recorded on the
/// turn's reply too (`return_abandoned` gives it back if the turn stops
/// running without settling). `false`: nothing is left, or the turn is no
/// longer running (nothing was reserved).
pub async fn reserve_for_turn(db: &Db, school_id: &str, user_id: &str, turn_id: &str, tokens: i64, default: i64, month: &str) -> Result<bool> {
    let mut tx = db::begin_write(db).await?;
    let tied = sqlx::query("UPDATE chat_messages SET reserved_tokens = reserved_tokens + $2, reserved_school = $3 WHERE turn_id = $1 AND status = 'running'")
        .bind(turn_id)
        .bind(tokens)
        .bind(school_id)
        .execute(&mut *tx)
        .await?;
    if tied.rows_affected() != 1 {
        return Ok(false);
    }
    if !reserve_in(&mut tx, school_id, user_id, tokens, default, month).await? {
        return Ok(false);
    }
    tx.commit().await?;
    Ok(true)
}

/// Takes `tokens` off what the turn's reply records as reserved; how much
/// of them is still the caller's to give back to the school (none when
/// `return_abandoned` already gave them back).
async fn untie(conn: &mut sqlx::AnyConnection, turn_id: &str, tokens: i64) -> Result<i64> {
    if tokens <= 0 {
        return Ok(0);
    }
    let done = sqlx::query("UPDATE chat_messages SET reserved_tokens = reserved_tokens - $2 WHERE turn_id = $1 AND reserved_tokens >= $2")
        .bind(turn_id)
        .bind(tokens)
        .execute(&mut *conn)
        .await?;
    Ok(if done.rows_affected() == 1 { tokens } else { 0 })
}

/// Gives back what replies that stopped running still hold (their instance
/// died between a reservation and its settling), to their schools, from
/// any instance. Each reservation is taken off its reply and given back in
/// one transaction, so neither this nor the reply's own settling can give
/// it back twice. How many tokens were given back.
pub async fn return_abandoned(db: &Db) -> Result<i64> {
    // Every instance asks every second: a look first, without a write
    // transaction, since almost always nothing is there (the partial index
    // `chat_messages_reserved` holds only replies with something reserved).
    let any: Option<i64> = sqlx::query_scalar("SELECT 1 FROM chat_messages WHERE reserved_tokens > 0 AND status <> 'running' LIMIT 1")
        .fetch_optional(db)
        .await?;
    if any.is_none() {
        return Ok(0);
    }
    let lock = match Backend::of(db) {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    };
    let mut tx = db::begin_write(db).await?;
    // Read first (RETURNING would give the values after the update: nothing).
    let held: Vec<(String, Option<String>, i64)> = sqlx::query_as(&format!(
        "SELECT turn_id, reserved_school, reserved_tokens FROM chat_messages WHERE reserved_tokens > 0 AND status <> 'running'{lock}"
    ))
    .fetch_all(&mut *tx)
    .await?;
    let mut total = 0;
    for (turn, school, tokens) in held {
        sqlx::query("UPDATE chat_messages SET reserved_tokens = 0 WHERE turn_id = $1").bind(&turn).execute(&mut *tx).await?;
        let Some(school) = school else { continue };
        give_back(&mut tx, &school, tokens).await?;
        total += tokens;
    }
    tx.commit().await?;
    Ok(total)
}

/// What a model call used, as recorded.
#[derive(Clone, Debug, Default)]
pub struct CallRecord {
    pub school_id: String,
    pub user_id: String,
    pub turn_id: String,
    pub model: String,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    /// Counted from what was sent and received: the provider said nothing.
    pub estimated: bool,
    /// `complete`, `failed` or `cancelled`.
    pub outcome: String,
}

#[derive(sqlx::FromRow)]
struct SchoolBudget {
    monthly_tokens: Option<i64>,
    credits: i64,
    usage_month: String,
    month_used: i64,
}

/// A school's budget row, as `SchoolBudget` reads it.
const SCHOOL_BUDGET: &str = "SELECT monthly_tokens, credits, usage_month, month_used FROM schools WHERE id = $1";

impl SchoolBudget {
    /// The month's allowance (negative: unlimited), given the server's.
    fn allowance(&self, default: i64) -> i64 {
        self.monthly_tokens.unwrap_or(default)
    }

    /// What `month` has taken from the allowance so far.
    fn used_in(&self, month: &str) -> i64 {
        if self.usage_month == month {
            self.month_used
        } else {
            0
        }
    }
}

/// The first moment of `now`'s month and of the next, as stored, for
/// queries over a month's calls.
pub fn month_window(now: OffsetDateTime) -> (String, String) {
    (format!("{}-01T00:00:00.000Z", month_of(now)), stored(next_month(now)))
}

/// Settles a call: gives back its reservation, spends what it used
/// (allowance first, then credits) and records it. `tied`: the reservation
/// is recorded on the turn's reply (`reserve_for_turn`, or the turn's
/// first call) and is given back only if it is still there.
pub async fn settle(db: &Db, call: &CallRecord, reserved: i64, tied: bool, default: i64, now: OffsetDateTime) -> Result<()> {
    let month = month_of(now);
    let total = (call.prompt_tokens + call.completion_tokens).max(0);
    let lock = match Backend::of(db) {
        Backend::Postgres => " FOR UPDATE",
        Backend::Sqlite => "",
    };
    let mut tx = db::begin_write(db).await?;
    let reserved = if tied { untie(&mut tx, &call.turn_id, reserved).await? } else { reserved };
    let row: Option<SchoolBudget> =
        sqlx::query_as(&format!("{SCHOOL_BUDGET}{lock}"))
            .bind(&call.school_id)
            .fetch_optional(&mut *tx)
            .await?;
    let Some(row) = row else { return Ok(()) };
    let (allowance, used) = (row.allowance(default), row.used_in(&month));
    let from_credits = if allowance < 0 {
        0
    } else {
        let left = (allowance - used).max(0);
        (total - left).max(0).min(row.credits.max(0))
    };
    sqlx::query(
        "UPDATE schools SET reserved = CASE WHEN reserved > $2 THEN reserved - $2 ELSE 0 END,
           credits = credits - $3, usage_month = $4, month_used = $5
         WHERE id = $1",
    )
    .bind(&call.school_id)
    .bind(reserved)
    .bind(from_credits)
    .bind(&month)
    .bind(used + total - from_credits)
    .execute(&mut *tx)
    .await?;
    // The account's own month (its share, `share_left`).
    sqlx::query(
        "UPDATE users SET month_used = (CASE WHEN usage_month = $2 THEN month_used ELSE 0 END) + $3, usage_month = $2
         WHERE id = $1",
    )
    .bind(&call.user_id)
    .bind(&month)
    .bind(total)
    .execute(&mut *tx)
    .await?;
    sqlx::query(
        "INSERT INTO ai_calls (id, school_id, user_id, turn_id, model, prompt_tokens, completion_tokens, total_tokens,
           from_credits, estimated, outcome, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
    )
    .bind(ids::new_id())
    .bind(&call.school_id)
    .bind(&call.user_id)
    .bind(&call.turn_id)
    .bind(&call.model)
    .bind(call.prompt_tokens)
    .bind(call.completion_tokens)
    .bind(total)
    .bind(from_credits)
    .bind(call.estimated)
    .bind(&call.outcome)
    .bind(stored(now))
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Gives back a reservation recorded on a turn's reply, if it is still there.
pub async fn release_for_turn(db: &Db, school_id: &str, turn_id: &str, reserved: i64) -> Result<()> {
    let mut tx = db::begin_write(db).await?;
    let reserved = untie(&mut tx, turn_id, reserved).await?;
    if reserved > 0 {
        give_back(&mut tx, school_id, reserved).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Gives back a reservation for a call that was never made.
pub async fn release(db: &Db, school_id: &str, reserved: i64) -> Result<()> {
    give_back(&mut *db.acquire().await?, school_id, reserved).await
}

/// Takes `tokens` off what a school's calls under way hold (never below 0).
async fn give_back(conn: &mut sqlx::AnyConnection, school_id: &str, tokens: i64) -> Result<()> {
    sqlx::query("UPDATE schools SET reserved = CASE WHEN reserved > $2 THEN reserved - $2 ELSE 0 END WHERE id = $1")
        .bind(school_id)
        .bind(tokens)
        .execute(&mut *conn)
        .await?;
    Ok(())
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
/// The most credits a school holds, and the largest allowance: far above
/// any real use, and far enough below `i64::MAX` that no sum of them
/// (allowance + credits − reserved, in SQL or here) can overflow.
pub const MAX_TOKENS: i64 = 1_000_000_000_000_000;

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
