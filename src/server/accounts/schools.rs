//! Schools and who is in them. An account that signs up without an
//! invitation starts a school of its own and is its admin; an admin invites
//! teachers with single-use links. Roles are read from the database with
//! the session, never taken from what a client sends.

use std::time::Duration;

use serde::Serialize;
use sqlx::{Any, Transaction};

use crate::server::{
    db::{self, Db},
    error::{AppError, Result},
    ids,
};
use crate::models::{Invite, Member, School, UserInfo};

/// How long an invitation link works.
pub const INVITE_DAYS: u64 = 7;
/// Longest school name, in characters.
pub const MAX_SCHOOL_NAME_CHARS: usize = 120;

/// Starts a school (in the transaction that creates its first account).
pub async fn create(tx: &mut Transaction<'static, Any>, name: &str) -> Result<String> {
    let id = ids::new_id();
    sqlx::query("INSERT INTO schools (id, name, created_at) VALUES ($1, $2, $3)")
        .bind(&id)
        .bind(name)
        .bind(db::time::now())
        .execute(&mut **tx)
        .await?;
    Ok(id)
}

/// Whether an invitation token is one that can still be used (checked before
/// the password is hashed, so a dead link fails fast).
pub async fn invite_is_open(db: &Db, token: &str) -> Result<bool> {
    let found: Option<String> = sqlx::query_scalar("SELECT id FROM invites WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2")
        .bind(ids::token_hash(token))
        .bind(db::time::now())
        .fetch_optional(db)
        .await?;
    Ok(found.is_some())
}

/// Uses an invitation for `user_id`; the school it is for, or `None` when it
/// was used, revoked or has expired meanwhile.
pub async fn take_invite(tx: &mut Transaction<'static, Any>, token: &str, user_id: &str) -> Result<Option<String>> {
    let now = db::time::now();
    let school: Option<String> = sqlx::query_scalar(
        "UPDATE invites SET used_at = $2, used_by = $3
         WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2
         RETURNING school_id",
    )
    .bind(ids::token_hash(token))
    .bind(&now)
    .bind(user_id)
    .fetch_optional(&mut **tx)
    .await?;
    Ok(school)
}

/// A new invitation and its link's token (shown once; only its hash is kept).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct NewInvite {
    pub invite: Invite,
    pub token: String,
    /// The path to send: `/signup?invite=…`.
    pub path: String,
}

/// The admin's school, or 403 for anyone else.
pub fn admin_school(user: &UserInfo) -> Result<&str> {
    if user.is_admin() && !user.school_id.is_empty() {
        Ok(&user.school_id)
    } else {
        Err(AppError::Forbidden("Only your school's admin can do that.".into()))
    }
}

pub async fn create_invite(db: &Db, admin: &UserInfo) -> Result<NewInvite> {
    let school = admin_school(admin)?;
    let token = ids::random_hex(24);
    let invite = Invite {
        id: ids::new_id(),
        created_at: db::time::now(),
        expires_at: db::time::from_now(Duration::from_secs(INVITE_DAYS * 86_400)),
    };
    sqlx::query("INSERT INTO invites (id, token_hash, school_id, created_by, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)")
        .bind(&invite.id)
        .bind(ids::token_hash(&token))
        .bind(school)
        .bind(&admin.id)
        .bind(&invite.created_at)
        .bind(&invite.expires_at)
        .execute(db)
        .await?;
    Ok(NewInvite { path: format!("/signup?invite={token}"), invite, token })
}

/// Invitations not used yet and still valid.
pub async fn open_invites(db: &Db, school_id: &str) -> Result<Vec<Invite>> {
    Ok(sqlx::query_as(
        "SELECT id, created_at, expires_at FROM invites
         WHERE school_id = $1 AND used_at IS NULL AND expires_at > $2 ORDER BY created_at DESC",
    )
    .bind(school_id)
    .bind(db::time::now())
    .fetch_all(db)
    .await?)
}

pub async fn revoke_invite(db: &Db, admin: &UserInfo, id: &str) -> Result<()> {
    let school = admin_school(admin)?;
    let done = sqlx::query("DELETE FROM invites WHERE id = $1 AND school_id = $2 AND used_at IS NULL")
        .bind(id)
        .bind(school)
        .execute(db)
        .await?;
    db::touched_one(&done)?;
    Ok(())
}

pub async fn members(db: &Db, school_id: &str, month_from: &str, month_to: &str) -> Result<Vec<Member>> {
    Ok(sqlx::query_as(
        "SELECT u.id, u.email, u.role, u.created_at, u.stored_bytes,
           COALESCE((SELECT CAST(SUM(a.total_tokens) AS BIGINT) FROM ai_calls a
                     WHERE a.user_id = u.id AND a.school_id = $1 AND a.created_at >= $2 AND a.created_at < $3), 0) AS tokens_this_month
         FROM users u WHERE u.school_id = $1 ORDER BY u.role, lower(u.email)",
    )
    .bind(school_id)
    .bind(month_from)
    .bind(month_to)
    .fetch_all(db)
    .await?)
}

/// The admin lets a member waiting (`ROLE_PENDING`) in as a teacher, or
/// declines them (`ROLE_REMOVED`: they cannot sign in, by any way). Only a
/// member of the admin's own school who is waiting.
pub async fn decide(db: &Db, admin: &UserInfo, member_id: &str, approve: bool) -> Result<()> {
    let school = admin_school(admin)?;
    let role = if approve { crate::models::ROLE_TEACHER } else { crate::models::ROLE_REMOVED };
    let done = sqlx::query("UPDATE users SET role = $1 WHERE id = $2 AND school_id = $3 AND role = $4")
        .bind(role)
        .bind(member_id)
        .bind(school)
        .bind(crate::models::ROLE_PENDING)
        .execute(db)
        .await?;
    if done.rows_affected() == 0 {
        return Err(AppError::NotFound);
    }
    tracing::info!(school, member = member_id, role, "a member waiting was decided on");
    Ok(())
}

/// The admin removes a teacher or student of the school: the account signs
/// in by no door again (password, school account or LMS), its sessions end,
/// and its work stays where it is. Not the admin themselves, nor another admin.
pub async fn remove_member(db: &Db, admin: &UserInfo, member_id: &str) -> Result<()> {
    let school = admin_school(admin)?;
    let mut tx = db::begin_write(db).await?;
    let done = sqlx::query("UPDATE users SET role = $1 WHERE id = $2 AND school_id = $3 AND role IN ($4, $5, $6)")
        .bind(crate::models::ROLE_REMOVED)
        .bind(member_id)
        .bind(school)
        .bind(crate::models::ROLE_TEACHER)
        .bind(crate::models::ROLE_STUDENT)
        .bind(crate::models::ROLE_PENDING)
        .execute(&mut *tx)
        .await?;
    if done.rows_affected() == 0 {
        return Err(AppError::NotFound);
    }
    sqlx::query("DELETE FROM sessions WHERE user_id = $1").bind(member_id).execute(&mut *tx).await?;
    tx.commit().await?;
    tracing::info!(school, member = member_id, "a member was removed from the school");
    Ok(())
}

pub async fn get(db: &Db, school_id: &str) -> Result<School> {
    sqlx::query_as("SELECT id, name, monthly_tokens, teacher_share, student_share FROM schools WHERE id = $1")
        .bind(school_id)
        .fetch_optional(db)
        .await?
        .ok_or(AppError::NotFound)
}

/// Finds a school by id or by exact name (for the command line).
pub async fn find(db: &Db, id_or_name: &str) -> Result<Vec<School>> {
    Ok(sqlx::query_as("SELECT id, name, monthly_tokens, teacher_share, student_share FROM schools WHERE id = $1 OR name = $1 ORDER BY created_at")
        .bind(id_or_name)
        .fetch_all(db)
        .await?)
}

pub async fn rename(db: &Db, admin: &UserInfo, name: &str) -> Result<()> {
    let school = admin_school(admin)?;
    let name = name.trim();
    if name.is_empty() || name.chars().count() > MAX_SCHOOL_NAME_CHARS {
        return Err(AppError::BadRequest(format!("Give the school a name of 1 to {MAX_SCHOOL_NAME_CHARS} characters.")));
    }
    sqlx::query("UPDATE schools SET name = $2 WHERE id = $1").bind(school).bind(name).execute(db).await?;
    Ok(())
}
