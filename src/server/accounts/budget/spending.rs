//! Spending: every model call reserves from its school (and its account's
//! share) before it is made, and settles after with what it used; a
//! reservation left by a reply that stopped running is given back. The
//! reservations are single conditional statements (see `budget`).

use std::sync::LazyLock;

use time::OffsetDateTime;

use crate::server::{
    db::{self, time::stored, Backend, Db},
    error::Result,
    ids,
};

use super::month::month_of;

/// A school's monthly allowance as SQL compares it: the school's own
/// (`monthly_tokens`) or else the server's; negative is unlimited.
pub(super) const ALLOWANCE: &str = "COALESCE(monthly_tokens, $3)";

/// Whether a school has anything left once the calls under way are counted
/// (`$3`: the server's allowance, `$4`: this month).
pub(super) fn has_left() -> String {
    let used = "(CASE WHEN usage_month = $4 THEN month_used ELSE 0 END)";
    format!(
        "({ALLOWANCE} < 0 OR (CASE WHEN {ALLOWANCE} > {used} THEN {ALLOWANCE} - {used} ELSE 0 END) + credits - reserved > 0)"
    )
}

/// What an account's replies under way hold (their reservations, recorded
/// on each reply, `reserve_for_turn`), for the SQL below; `u` is the account.
/// Counted from the replies rather than kept on the account, so that the
/// reservation before a reply's first words stays one statement.
pub(super) const IN_FLIGHT: &str = "COALESCE((SELECT SUM(m.reserved_tokens) FROM chat_messages m JOIN chat_sessions c ON c.id = m.session_id
                          WHERE c.owner_id = u.id AND m.reserved_tokens > 0), 0)";

/// Whether the account `user` (an SQL expression) has something left of
/// its share (`$4`: this month), inside an `UPDATE schools`: true when the
/// school gives its accounts of that kind no share of their own.
pub(super) fn share_left(user: &str) -> String {
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
pub(super) async fn reserve_in(conn: &mut sqlx::AnyConnection, school_id: &str, user_id: &str, tokens: i64, default: i64, month: &str) -> Result<bool> {
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
pub(super) async fn untie(conn: &mut sqlx::AnyConnection, turn_id: &str, tokens: i64) -> Result<i64> {
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
pub(super) struct SchoolBudget {
    pub(super) monthly_tokens: Option<i64>,
    pub(super) credits: i64,
    pub(super) usage_month: String,
    pub(super) month_used: i64,
}

/// A school's budget row, as `SchoolBudget` reads it.
pub(super) const SCHOOL_BUDGET: &str = "SELECT monthly_tokens, credits, usage_month, month_used FROM schools WHERE id = $1";

impl SchoolBudget {
    /// The month's allowance (negative: unlimited), given the server's.
    pub(super) fn allowance(&self, default: i64) -> i64 {
        self.monthly_tokens.unwrap_or(default)
    }

    /// What `month` has taken from the allowance so far.
    pub(super) fn used_in(&self, month: &str) -> i64 {
        if self.usage_month == month {
            self.month_used
        } else {
            0
        }
    }
}

/// What this month has taken from the school's allowance so far, in
/// `settle`'s statements (`$3`: this month).
const SETTLE_USED: &str = "(CASE WHEN usage_month = $3 THEN month_used ELSE 0 END)";

/// What a call of `$4` tokens takes from the school's credits, in
/// `settle`'s statements (`$2`: the server's allowance, `$3`: this month):
/// nothing when the allowance is unlimited, else what the month's
/// allowance left cannot cover, up to the credits there are.
fn from_credits() -> String {
    let allowance = "COALESCE(monthly_tokens, $2)";
    let left = format!("(CASE WHEN {allowance} > {SETTLE_USED} THEN {allowance} - {SETTLE_USED} ELSE 0 END)");
    let over = format!("(CASE WHEN $4 > {left} THEN $4 - {left} ELSE 0 END)");
    let credits = "(CASE WHEN credits > 0 THEN credits ELSE 0 END)";
    format!("(CASE WHEN {allowance} < 0 THEN 0 WHEN {over} < {credits} THEN {over} ELSE {credits} END)")
}

/// Settles a call: gives back its reservation, spends what it used
/// (allowance first, then credits) and records it. `tied`: the reservation
/// is recorded on the turn's reply (`reserve_for_turn`, or the turn's
/// first call) and is given back only if it is still there.
pub async fn settle(db: &Db, call: &CallRecord, reserved: i64, tied: bool, default: i64, now: OffsetDateTime) -> Result<()> {
    let month = month_of(now);
    let total = (call.prompt_tokens + call.completion_tokens).max(0);
    let mut tx = db::begin_write(db).await?;
    let reserved = if tied { untie(&mut tx, &call.turn_id, reserved).await? } else { reserved };
    // The account's own month (its share, `share_left`); before the school's
    // row is locked, which every call of the school waits on, so that lock
    // is held for as few statements as can be.
    sqlx::query(
        "UPDATE users SET month_used = (CASE WHEN usage_month = $2 THEN month_used ELSE 0 END) + $3, usage_month = $2
         WHERE id = $1",
    )
    .bind(&call.user_id)
    .bind(&month)
    .bind(total)
    .execute(&mut *tx)
    .await?;
    // The call is recorded with what it took from credits, read off the
    // school's row, which PostgreSQL then keeps locked (SQLite's write
    // transaction has it to itself), so the update after it takes the same.
    // Written once for each database: PostgreSQL's with `FOR UPDATE`.
    static RECORD: LazyLock<[String; 2]> = LazyLock::new(|| {
        let record = format!(
            "INSERT INTO ai_calls (id, school_id, user_id, turn_id, model, prompt_tokens, completion_tokens, total_tokens,
               from_credits, estimated, outcome, created_at)
             SELECT $5, $1, $6, $7, $8, $9, $10, $4, {}, $11, $12, $13 FROM schools WHERE id = $1",
            from_credits()
        );
        [format!("{record} FOR UPDATE"), record]
    });
    static SPEND: LazyLock<String> = LazyLock::new(|| {
        format!(
            "UPDATE schools SET reserved = CASE WHEN reserved > $5 THEN reserved - $5 ELSE 0 END,
               credits = credits - {x}, usage_month = $3, month_used = {used} + $4 - {x}
             WHERE id = $1",
            x = from_credits(),
            used = SETTLE_USED
        )
    });
    let record = match Backend::of(db) {
        Backend::Postgres => &RECORD[0],
        Backend::Sqlite => &RECORD[1],
    };
    sqlx::query(record)
        .bind(&call.school_id)
        .bind(default)
        .bind(&month)
        .bind(total)
        .bind(ids::new_id())
        .bind(&call.user_id)
        .bind(&call.turn_id)
        .bind(&call.model)
        .bind(call.prompt_tokens)
        .bind(call.completion_tokens)
        .bind(call.estimated)
        .bind(&call.outcome)
        .bind(stored(now))
        .execute(&mut *tx)
        .await?;
    sqlx::query(SPEND.as_str()).bind(&call.school_id).bind(default).bind(&month).bind(total).bind(reserved).execute(&mut *tx).await?;
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
pub(super) async fn give_back(conn: &mut sqlx::AnyConnection, school_id: &str, tokens: i64) -> Result<()> {
    sqlx::query("UPDATE schools SET reserved = CASE WHEN reserved > $2 THEN reserved - $2 ELSE 0 END WHERE id = $1")
        .bind(school_id)
        .bind(tokens)
        .execute(&mut *conn)
        .await?;
    Ok(())
}
