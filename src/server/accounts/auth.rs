//! Accounts and sign-in sessions: argon2id password hashes, random session
//! tokens stored only as SHA-256 hashes, and the token
//! a request carries (cookie for the browser, `Authorization: Bearer` for API
//! clients; both carry the same token; `CurrentUser` turns it into a teacher).

use std::time::Duration;

use argon2::{
    password_hash::{rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString},
    Argon2,
};
use axum::http::{header, HeaderMap};

use crate::server::{
    db::{self, Db},
    error::{AppError, Result},
    ids,
    http::limits::HashGate,
    accounts::schools,
};
use crate::{
    models::{UserInfo, ROLE_ADMIN, ROLE_STUDENT, ROLE_TEACHER},
    refusals::{AccountRefusal, MIN_PASSWORD_LEN},
};

/// Name of the session cookie.
pub const SESSION_COOKIE: &str = "margin_session";
const MAX_PASSWORD_LEN: usize = 1024;
const MAX_EMAIL_LEN: usize = 254;

/// Refuses an email or password too long to be real, before it is hashed,
/// counted or looked up.
pub fn check_lengths(email: &str, password: &str) -> Result<()> {
    if email.len() > MAX_EMAIL_LEN {
        return Err(AppError::Account(AccountRefusal::InvalidEmail));
    }
    if password.len() > MAX_PASSWORD_LEN {
        return Err(AppError::Account(AccountRefusal::LongPassword));
    }
    Ok(())
}

/// Checks the shape of sign-up input and says exactly what to change.
pub fn validate_new_account(email: &str, password: &str) -> Result<()> {
    let email = email.trim();
    let at = email.find('@');
    let valid_email = email.len() <= MAX_EMAIL_LEN
        && matches!(at, Some(i) if i > 0 && i < email.len() - 1)
        && !email.contains(char::is_whitespace);
    if !valid_email {
        return Err(AppError::Account(AccountRefusal::InvalidEmail));
    }
    if password.chars().count() < MIN_PASSWORD_LEN {
        return Err(AppError::Account(AccountRefusal::ShortPassword));
    }
    if password.len() > MAX_PASSWORD_LEN {
        return Err(AppError::Account(AccountRefusal::LongPassword));
    }
    Ok(())
}

/// Hashes a password with argon2id through the gate (it is slow on purpose).
pub async fn hash_password(gate: &HashGate, password: String) -> Result<String> {
    gate.run(move || hash_now(&password)).await?
}

fn hash_now(password: &str) -> Result<String> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| AppError::Internal(format!("hashing: {e}")))
}

/// Verifies a password against a stored hash through the gate.
pub async fn verify_password(gate: &HashGate, password: String, hash: String) -> Result<bool> {
    gate.run(move || {
        PasswordHash::new(&hash)
            .map(|parsed| Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok())
            .unwrap_or(false)
    })
    .await
}

/// A hash of a throwaway password, verified against when the account does not
/// exist so that a wrong email takes as long as a wrong password.
fn dummy_hash() -> &'static str {
    static HASH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HASH.get_or_init(|| hash_now("not-a-real-password").unwrap_or_default())
}

use crate::server::ids::token_hash;

/// Creates an account. The email must be new; the message never reveals more
/// than that the address cannot be used. With an invitation the account
/// joins the inviting school as a teacher (even when sign-up is closed);
/// without one it starts a school of its own and is its admin.
///
/// With a class's join code (`join`) the account is a student's: it joins
/// that class, in its teacher's school, whether or not sign-up is open.
pub async fn create_user(db: &Db, gate: &HashGate, allow_signup: bool, email: &str, password: &str, invite: Option<&str>, join: Option<&str>) -> Result<UserInfo> {
    validate_new_account(email, password)?;
    let invite = invite.map(str::trim).filter(|t| !t.is_empty());
    let class = match join.map(str::trim).filter(|c| !c.is_empty()) {
        Some(code) => Some(crate::server::classes::by_code(db, code).await?.ok_or(AppError::Account(AccountRefusal::JoinCodeInvalid))?),
        None => None,
    };
    match invite {
        _ if class.is_some() => {}
        Some(token) => {
            if !schools::invite_is_open(db, token).await? {
                return Err(AppError::Account(AccountRefusal::InviteInvalid));
            }
        }
        None if !allow_signup => {
            let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM users").fetch_one(db).await?;
            if count > 0 {
                return Err(AppError::Account(AccountRefusal::SignupClosed));
            }
        }
        None => {}
    }
    let email = email.trim().to_string();
    let hash = hash_password(gate, password.to_string()).await?;
    let id = ids::new_id();
    let mut tx = db::begin_write(db).await?;
    let (school_id, role) = match (&class, invite) {
        (Some((_, _, school)), _) => (school.clone(), ROLE_STUDENT),
        (None, Some(token)) => match schools::take_invite(&mut tx, token, &id).await? {
            Some(school) => (school, ROLE_TEACHER),
            None => return Err(AppError::Account(AccountRefusal::InviteInvalid)),
        },
        // Whoever starts a school runs it.
        (None, None) => (schools::create(&mut tx, "My school").await?, ROLE_ADMIN),
    };
    let inserted = sqlx::query("INSERT INTO users (id, email, password_hash, school_id, role) VALUES ($1, $2, $3, $4, $5)")
        .bind(&id)
        .bind(&email)
        .bind(&hash)
        .bind(&school_id)
        .bind(role)
        .execute(&mut *tx)
        .await;
    match inserted {
        Ok(_) => {
            if let Some((class_id, _, _)) = &class {
                crate::server::classes::add_member(&mut *tx, class_id, &id).await?;
            }
            tx.commit().await?;
            Ok(UserInfo { id, email, school_id, role: role.into() })
        }
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Err(AppError::Account(AccountRefusal::EmailTaken)),
        Err(e) => Err(e.into()),
    }
}

/// A stored account, as sign-in reads it.
#[derive(sqlx::FromRow)]
struct Account {
    id: String,
    email: String,
    password_hash: String,
    school_id: String,
    role: String,
}

/// Checks an email and password. A wrong email and a wrong password get the
/// same answer, so the message gives no hint whether the account exists.
pub async fn authenticate(db: &Db, gate: &HashGate, email: &str, password: &str) -> Result<UserInfo> {
    let row: Option<Account> = sqlx::query_as("SELECT id, email, password_hash, COALESCE(school_id, '') AS school_id, role FROM users WHERE lower(email) = lower($1)")
        .bind(email.trim())
        .fetch_optional(db)
        .await?;
    let wrong = || AppError::Account(AccountRefusal::WrongCredentials);
    match row {
        Some(Account { id, email, password_hash, school_id, role }) => {
            if verify_password(gate, password.to_string(), password_hash).await? {
                // The right password of an account its school removed: it says so.
                if role == crate::models::ROLE_REMOVED {
                    return Err(AppError::Account(AccountRefusal::AccountRemoved));
                }
                Ok(UserInfo { id, email, school_id, role })
            } else {
                Err(wrong())
            }
        }
        None => {
            let dummy = tokio::task::spawn_blocking(dummy_hash).await.map_err(|e| AppError::Internal(e.to_string()))?;
            verify_password(gate, password.to_string(), dummy.to_string()).await?;
            Err(wrong())
        }
    }
}

/// Starts a session for a teacher and returns its token (shown once, never stored).
pub async fn create_session(db: &Db, user_id: &str, days: u32) -> Result<String> {
    let token = ids::random_hex(32);
    sqlx::query(
        "INSERT INTO sessions (token_hash, user_id, expires_at)
         VALUES ($1, $2, $3)",
    )
    .bind(token_hash(&token))
    .bind(user_id)
    .bind(db::time::from_now(Duration::from_secs(u64::from(days) * 86_400)))
    .execute(db)
    .await?;
    Ok(token)
}

/// Ends a session; unknown tokens are ignored.
pub async fn delete_session(db: &Db, token: &str) -> Result<()> {
    sqlx::query("DELETE FROM sessions WHERE token_hash = $1")
        .bind(token_hash(token))
        .execute(db)
        .await?;
    Ok(())
}

/// The teacher a live session token belongs to.
pub async fn user_for_token(db: &Db, token: &str) -> Result<Option<UserInfo>> {
    let user: Option<UserInfo> = sqlx::query_as(
        "SELECT u.id, u.email, COALESCE(u.school_id, '') AS school_id, u.role FROM sessions s JOIN users u ON u.id = s.user_id
         WHERE s.token_hash = $1 AND s.expires_at > $2 AND u.role IN ('admin', 'teacher', 'student')",
    )
    .bind(token_hash(token))
    .bind(db::time::now())
    .fetch_optional(db)
    .await?;
    Ok(user)
}

/// The session token a request carries: `Authorization: Bearer` first, then the cookie.
pub fn token_from_headers(headers: &HeaderMap) -> Option<String> {
    if let Some(auth) = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()) {
        if let Some(token) = auth.strip_prefix("Bearer ").map(str::trim) {
            if !token.is_empty() {
                return Some(token.to_string());
            }
        }
    }
    cookie(headers, SESSION_COOKIE).filter(|v| !v.is_empty()).map(str::to_string)
}

/// The value of the cookie `name` a request carries.
pub fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, value)| value.trim())
}

/// The `Set-Cookie` value that stores a session in the browser.
pub fn session_cookie(token: &str, days: u32, secure: bool) -> String {
    let max_age = u64::from(days) * 24 * 60 * 60;
    let secure = if secure { "; Secure" } else { "" };
    format!("{SESSION_COOKIE}={token}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}")
}

/// The `Set-Cookie` value that removes the session cookie.
pub fn clear_session_cookie(secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!("{SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0{secure}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_wins_over_cookie() {
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, "a=b; margin_session=fromcookie".parse().unwrap());
        assert_eq!(token_from_headers(&h).as_deref(), Some("fromcookie"));
        h.insert(header::AUTHORIZATION, "Bearer frombearer".parse().unwrap());
        assert_eq!(token_from_headers(&h).as_deref(), Some("frombearer"));
    }

    #[test]
    fn empty_or_missing_tokens_are_none() {
        let mut h = HeaderMap::new();
        assert_eq!(token_from_headers(&h), None);
        h.insert(header::COOKIE, "margin_session=".parse().unwrap());
        assert_eq!(token_from_headers(&h), None);
        h.insert(header::AUTHORIZATION, "Bearer ".parse().unwrap());
        assert_eq!(token_from_headers(&h), None);
    }

    #[test]
    fn sign_up_input_is_checked() {
        assert!(validate_new_account("teacher@school.org", "long enough").is_ok());
        assert!(validate_new_account("not-an-email", "long enough").is_err());
        assert!(validate_new_account("@school.org", "long enough").is_err());
        assert!(validate_new_account("a b@school.org", "long enough").is_err());
        assert!(validate_new_account("teacher@school.org", "short").is_err());
    }

    #[test]
    fn cookie_is_http_only_and_same_site() {
        let c = session_cookie("abc", 30, false);
        assert!(c.contains("HttpOnly") && c.contains("SameSite=Lax") && !c.contains("Secure"));
        assert!(session_cookie("abc", 30, true).contains("Secure"));
    }
}
