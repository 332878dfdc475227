//! The operator: whoever runs this Margin server, as opposed to a school's
//! admin. Anyone may sign up while sign-up is open, and every uninvited
//! sign-up starts a school and runs it, so a school's admin cannot be the
//! one who decides what the server spends: only an operator grants credits
//! or lets a school's allowance go above the server's (`MARGIN_MONTHLY_TOKENS`).
//! A school's admin may lower the allowance and divide what the school has.
//!
//! Operators are named on the server's command line (`margin operators add
//! <email>`), by someone who can already run the server's binary against
//! its database; never by signing up, since an email address is not
//! checked when an account is made.

use crate::server::{
    db::{self, Db},
    error::{AppError, Result},
};

/// Whether the account is one of the server's operators.
pub async fn is_operator(db: &Db, user_id: &str) -> Result<bool> {
    let found: Option<i64> = sqlx::query_scalar("SELECT 1 FROM operators WHERE user_id = $1").bind(user_id).fetch_optional(db).await?;
    Ok(found.is_some())
}

/// Makes the account with this email an operator. `false`: it already was.
pub async fn add(db: &Db, email: &str) -> Result<bool> {
    let id: Option<String> = sqlx::query_scalar("SELECT id FROM users WHERE lower(email) = lower($1)").bind(email.trim()).fetch_optional(db).await?;
    let id = id.ok_or(AppError::NotFound)?;
    if is_operator(db, &id).await? {
        return Ok(false);
    }
    sqlx::query("INSERT INTO operators (user_id, added_at) VALUES ($1, $2)").bind(&id).bind(db::time::now()).execute(db).await?;
    Ok(true)
}

/// The account with this email is no longer an operator. `false`: it was not one.
pub async fn remove(db: &Db, email: &str) -> Result<bool> {
    let done = sqlx::query("DELETE FROM operators WHERE user_id IN (SELECT id FROM users WHERE lower(email) = lower($1))")
        .bind(email.trim())
        .execute(db)
        .await?;
    Ok(done.rows_affected() > 0)
}

/// The operators' emails, in the order they were named.
pub async fn list(db: &Db) -> Result<Vec<String>> {
    Ok(sqlx::query_scalar("SELECT u.email FROM operators o JOIN users u ON u.id = o.user_id ORDER BY o.added_at, u.email").fetch_all(db).await?)
}

/// Whether `who` may give a school the allowance `wanted` (`None`: the
/// server's; negative: unlimited) when the server's is `server` (`None`:
/// unlimited). An admin may keep or lower it; only an operator may raise it
/// above the server's.
pub fn may_set_allowance(wanted: Option<i64>, server: Option<i64>, operator: bool) -> bool {
    match (wanted, server) {
        _ if operator => true,
        (None, _) => true,
        (Some(_), None) => true,
        (Some(n), Some(cap)) => n >= 0 && n <= cap,
    }
}

#[cfg(test)]
mod tests {
    use super::may_set_allowance;

    #[test]
    fn only_an_operator_raises_a_school_above_the_server() {
        // The server allows 100,000 a month.
        let cap = Some(100_000);
        assert!(may_set_allowance(None, cap, false), "the server's own");
        assert!(may_set_allowance(Some(50_000), cap, false), "lower");
        assert!(may_set_allowance(Some(100_000), cap, false), "the same");
        assert!(!may_set_allowance(Some(100_001), cap, false), "higher");
        assert!(!may_set_allowance(Some(-1), cap, false), "unlimited");
        assert!(may_set_allowance(Some(-1), cap, true));
        assert!(may_set_allowance(Some(10_000_000), cap, true));
        // An unlimited server: any allowance is a limit, none is a raise.
        assert!(may_set_allowance(Some(5), None, false));
        assert!(may_set_allowance(Some(-1), None, false));
    }
}
