//! Whose account a verified school identity is. In order:
//! 1. linking: the identity joins the signed-in account that asked (unless
//!    another account has it);
//! 2. an identity seen before: its account;
//! 3. a new person: an account with the provider's email, which must be
//!    confirmed (or come with the tenant a school linked) and not belong to
//!    an account here already (no silent merging: that account links it
//!    itself, signed in); a student through a class's link joins that class;
//!    anyone else lands in the school linked to their tenant or domain
//!    (`school_links`) as a member *waiting* for the school's admin
//!    (`ROLE_PENDING`: no session until the admin lets them in as a
//!    teacher), since a school's students and staff share one domain,
//!    unless the school's rule says they are a student (a confirmed
//!    address at one of its student domains); or nowhere, with a sentence.
//!
//! An account waiting, or one the school declined or removed, does not sign
//! in (the sentence says which). A new account from a school identity has
//! no password; it signs in only through its provider.

use std::net::IpAddr;

use super::{
    flow::{Identity, Purpose, SsoError},
    school_links,
};
use crate::{
    models::{LinkedIdentity, UserInfo, ROLE_PENDING, ROLE_REMOVED, ROLE_STUDENT},
    refusals::AccountRefusal,
    server::{db, ids, state::AppState},
};

/// What the identity did.
pub enum Outcome {
    /// Sign in as this account.
    SignedIn(UserInfo),
    /// Linked to the account that asked.
    Linked(UserInfo),
}

pub async fn resolve(state: &AppState, client: IpAddr, id: &Identity, purpose: &Purpose) -> Result<Outcome, SsoError> {
    let db = &state.db;
    let owner: Option<String> = sqlx::query_scalar("SELECT user_id FROM user_identities WHERE issuer = $1 AND subject = $2")
        .bind(&id.issuer)
        .bind(&id.subject)
        .fetch_optional(db)
        .await?;
    if let Some(linking) = purpose.link_user_id.as_deref() {
        if owner.as_deref().is_some_and(|o| o != linking) {
            return Err(SsoError::Refused(AccountRefusal::SsoLinkedElsewhere));
        }
        if owner.is_none() {
            insert(db, id, linking).await?;
        }
        let user = user(state, linking).await?.ok_or(SsoError::Expired("the account that asked to link is gone"))?;
        tracing::info!(user = %user.id, provider = %id.provider, "school account linked");
        return Ok(Outcome::Linked(user));
    }
    if let Some(owner) = owner {
        refresh(db, id).await?;
        let user = user(state, &owner).await?.ok_or(SsoError::Expired("the account is gone"))?;
        let user = may_sign_in(user)?;
        if let (Some(code), true) = (purpose.join_code.as_deref(), user.is_student()) {
            if let Some((class_id, _, school)) = crate::server::classes::by_code(db, code).await? {
                if school == user.school_id {
                    crate::server::classes::add_member(db, &class_id, &user.id).await?;
                }
            }
        }
        return Ok(Outcome::SignedIn(user));
    }
    let user = create(state, client, id, purpose).await?;
    may_sign_in(user).map(Outcome::SignedIn)
}

/// An account waiting for its school's admin, or one the school removed,
/// is refused with the sentence that says so.
fn may_sign_in(user: UserInfo) -> Result<UserInfo, SsoError> {
    match user.role.as_str() {
        ROLE_PENDING => Err(SsoError::Refused(AccountRefusal::SsoWaiting)),
        ROLE_REMOVED => Err(SsoError::Refused(AccountRefusal::AccountRemoved)),
        _ => Ok(user),
    }
}

/// A new account for a new person, in the class or school they belong to.
async fn create(state: &AppState, client: IpAddr, id: &Identity, purpose: &Purpose) -> Result<UserInfo, SsoError> {
    let db = &state.db;
    let email = id.email.as_deref().map(str::trim).filter(|e| e.contains('@') && e.len() <= 254).ok_or(SsoError::Refused(AccountRefusal::SsoNoEmail))?;
    let domain = email.rsplit_once('@').map(|(_, d)| d.to_ascii_lowercase()).unwrap_or_default();
    let class = match purpose.join_code.as_deref() {
        Some(code) => Some(crate::server::classes::by_code(db, code).await?.ok_or(SsoError::Refused(AccountRefusal::JoinCodeInvalid))?),
        None => None,
    };
    let tenant_school = match &id.tenant {
        Some(t) => school_links::school_for(db, &id.provider, "tenant", t).await?,
        None => None,
    };
    if !id.email_verified && tenant_school.is_none() {
        // Without the provider confirming the address, or vouching for the
        // person by a tenant a school linked, the email could be anyone's.
        return Err(SsoError::Refused(AccountRefusal::SsoNoEmail));
    }
    let (school_id, role) = match &class {
        Some((_, _, school)) => (school.clone(), ROLE_STUDENT),
        None => {
            let by_domain = if id.email_verified { school_links::school_for(db, &id.provider, "domain", &domain).await? } else { None };
            match tenant_school.or(by_domain) {
                // The school's rule: its students' confirmed addresses are at these domains.
                Some(school) if id.email_verified && school_links::student_domains(db, &school).await?.contains(&domain) => (school, ROLE_STUDENT),
                Some(school) => (school, ROLE_PENDING),
                None => return Err(SsoError::Refused(AccountRefusal::SsoNoSchool)),
            }
        }
    };
    let taken: Option<String> = sqlx::query_scalar("SELECT id FROM users WHERE lower(email) = lower($1)").bind(email).fetch_optional(db).await?;
    if taken.is_some() {
        return Err(SsoError::Refused(AccountRefusal::SsoEmailTaken));
    }
    state.limits.sign_up(client).await?;
    let user_id = ids::new_id();
    let mut tx = db::begin_write(db).await?;
    // No password: an empty hash never verifies (`auth::verify_password`).
    let inserted = sqlx::query("INSERT INTO users (id, email, password_hash, school_id, role) VALUES ($1, $2, '', $3, $4)")
        .bind(&user_id)
        .bind(email)
        .bind(&school_id)
        .bind(role)
        .execute(&mut *tx)
        .await;
    match inserted {
        Ok(_) => {}
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => return Err(SsoError::Refused(AccountRefusal::SsoEmailTaken)),
        Err(e) => return Err(e.into()),
    }
    insert(&mut *tx, id, &user_id).await?;
    if let Some((class_id, _, _)) = &class {
        crate::server::classes::add_member(&mut *tx, class_id, &user_id).await?;
    }
    tx.commit().await?;
    tracing::info!(user = %user_id, provider = %id.provider, role, "account made from a school account");
    Ok(UserInfo { id: user_id, email: email.to_string(), school_id, role: role.into() })
}

async fn insert<'e, E: sqlx::Executor<'e, Database = sqlx::Any>>(db: E, id: &Identity, user_id: &str) -> Result<(), SsoError> {
    let done = sqlx::query(
        "INSERT INTO user_identities (issuer, subject, provider, user_id, email, email_verified, tenant, linked_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&id.issuer)
    .bind(&id.subject)
    .bind(&id.provider)
    .bind(user_id)
    .bind(&id.email)
    .bind(id.email_verified)
    .bind(&id.tenant)
    .bind(db::time::now())
    .execute(db)
    .await;
    match done {
        Ok(_) => Ok(()),
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Err(SsoError::Refused(AccountRefusal::SsoLinkedElsewhere)),
        Err(e) => Err(e.into()),
    }
}

/// Keeps what the provider last said of the person.
async fn refresh(db: &db::Db, id: &Identity) -> Result<(), SsoError> {
    sqlx::query("UPDATE user_identities SET email = $3, email_verified = $4, tenant = $5 WHERE issuer = $1 AND subject = $2")
        .bind(&id.issuer)
        .bind(&id.subject)
        .bind(&id.email)
        .bind(id.email_verified)
        .bind(&id.tenant)
        .execute(db)
        .await?;
    Ok(())
}

async fn user(state: &AppState, id: &str) -> Result<Option<UserInfo>, SsoError> {
    Ok(sqlx::query_as("SELECT id, email, COALESCE(school_id, '') AS school_id, role FROM users WHERE id = $1").bind(id).fetch_optional(&state.db).await?)
}

/// The school accounts linked to an account, for its Account page.
pub async fn linked(state: &AppState, user_id: &str) -> Result<Vec<LinkedIdentity>, crate::server::error::AppError> {
    let rows: Vec<(String, Option<String>)> = sqlx::query_as("SELECT provider, email FROM user_identities WHERE user_id = $1 ORDER BY linked_at")
        .bind(user_id)
        .fetch_all(&state.db)
        .await?;
    Ok(rows.into_iter().map(|(provider, email)| LinkedIdentity { label: state.sso.label(&provider), provider, email }).collect())
}

/// Whether the account has a password (accounts made from a school account do not).
pub async fn has_password(state: &AppState, user_id: &str) -> Result<bool, crate::server::error::AppError> {
    let hash: Option<String> = sqlx::query_scalar("SELECT password_hash FROM users WHERE id = $1").bind(user_id).fetch_optional(&state.db).await?;
    Ok(hash.is_some_and(|h| !h.is_empty()))
}

/// Unlinks the account's identities from `provider`, unless that would leave
/// it with no way to sign in.
pub async fn unlink(state: &AppState, user_id: &str, provider: &str) -> Result<(), crate::server::error::AppError> {
    let others: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM user_identities WHERE user_id = $1 AND provider <> $2")
        .bind(user_id)
        .bind(provider)
        .fetch_one(&state.db)
        .await?;
    if others == 0 && !has_password(state, user_id).await? {
        return Err(crate::server::error::AppError::BadRequest(
            "This is the only way this account signs in, so it stays linked.".into(),
        ));
    }
    sqlx::query("DELETE FROM user_identities WHERE user_id = $1 AND provider = $2").bind(user_id).bind(provider).execute(&state.db).await?;
    Ok(())
}
