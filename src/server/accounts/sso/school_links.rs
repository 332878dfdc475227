//! Which school a new school-account sign-in lands in (as a member waiting
//! for its admin: `identities`). A school's admin links a provider to the
//! school by the organisation the provider vouches for in the admin's own
//! linked identity: its tenant claim (`hd`, Google's hosted domain; `tid`,
//! Microsoft's tenant), which only the organisation's own accounts carry.
//! A confirmed email address is no such proof (a pupil's address at the
//! domain would let anyone claim it), so a domain by email is linked only
//! by the server's operator (`margin sso link`), who also settles a domain
//! or tenant two schools claim. One school per domain or tenant on a server.

use crate::{
    models::{SsoLink, UserInfo},
    server::{
        accounts::schools::admin_school,
        db::{self, Db},
        error::{AppError, Result},
        state::AppState,
    },
};

/// Mail services anyone can sign up to: their domains say nothing about a school.
const PUBLIC_DOMAINS: &[&str] = &[
    "gmail.com", "googlemail.com", "outlook.com", "hotmail.com", "live.com", "msn.com", "yahoo.com", "ymail.com", "icloud.com", "me.com", "mac.com",
    "aol.com", "proton.me", "protonmail.com", "gmx.com", "gmx.net", "gmx.de", "web.de", "mail.com", "zoho.com", "yandex.com", "yandex.ru", "mail.ru",
    "qq.com", "163.com", "126.com", "fastmail.com", "hey.com", "tutanota.com", "laposte.net", "orange.fr", "free.fr", "libero.it",
];
/// Mail services with a domain in many countries (yahoo.co.uk, hotmail.fr…).
const PUBLIC_PREFIXES: &[&str] = &["yahoo.", "hotmail.", "outlook."];

pub fn is_public_domain(domain: &str) -> bool {
    let domain = domain.trim().to_ascii_lowercase();
    PUBLIC_DOMAINS.contains(&domain.as_str()) || PUBLIC_PREFIXES.iter().any(|p| domain.starts_with(p))
}

/// The school linked to `value` (a domain or tenant) for `provider`.
pub async fn school_for(db: &Db, provider: &str, kind: &str, value: &str) -> Result<Option<String>> {
    Ok(sqlx::query_scalar("SELECT school_id FROM school_sso WHERE provider = $1 AND kind = $2 AND value = $3")
        .bind(provider)
        .bind(kind)
        .bind(value.trim().to_ascii_lowercase())
        .fetch_optional(db)
        .await?)
}

/// The school's links, for its page.
pub async fn of_school(state: &AppState, school_id: &str) -> Result<Vec<SsoLink>> {
    let rows: Vec<(String, String, String)> = sqlx::query_as("SELECT provider, kind, value FROM school_sso WHERE school_id = $1 ORDER BY created_at")
        .bind(school_id)
        .fetch_all(&state.db)
        .await?;
    Ok(rows.into_iter().map(|(provider, kind, value)| SsoLink { label: state.sso.label(&provider), provider, kind, value }).collect())
}

/// What this admin may link: the tenant of each of their own identities
/// (from a provider with a tenant claim; not a public mail service's),
/// less what the school has linked already.
pub async fn options(state: &AppState, admin: &UserInfo) -> Result<Vec<SsoLink>> {
    let rows: Vec<(String, Option<String>)> =
        sqlx::query_as("SELECT provider, tenant FROM user_identities WHERE user_id = $1 ORDER BY linked_at")
            .bind(&admin.id)
            .fetch_all(&state.db)
            .await?;
    let linked = of_school(state, &admin.school_id).await?;
    let mut out: Vec<SsoLink> = Vec::new();
    for (provider, tenant) in rows {
        if !state.sso.get(&provider).is_ok_and(|p| p.tenant_claim.is_some()) {
            continue;
        }
        let Some(value) = tenant.map(|v| v.trim().to_ascii_lowercase()).filter(|v| !v.is_empty() && !is_public_domain(v)) else { continue };
        let link = SsoLink { provider: provider.clone(), label: state.sso.label(&provider), kind: "tenant".into(), value };
        if !linked.contains(&link) && !out.contains(&link) {
            out.push(link);
        }
    }
    Ok(out)
}

/// Links `provider`'s `kind` (`domain` or `tenant`) to the admin's school,
/// with the value their own identity carries.
pub async fn add(state: &AppState, admin: &UserInfo, provider: &str, kind: &str, value: &str) -> Result<()> {
    let school = admin_school(admin)?.to_string();
    let value = value.trim().to_ascii_lowercase();
    let allowed = options(state, admin).await?.into_iter().any(|o| o.provider == provider && o.kind == kind && o.value == value);
    if !allowed {
        return Err(AppError::BadRequest(
            "Link your own school account on the Account page first; the school can then be linked to its email domain or organisation.".into(),
        ));
    }
    let done = sqlx::query("INSERT INTO school_sso (provider, kind, value, school_id, created_by, created_at) VALUES ($1, $2, $3, $4, $5, $6)")
        .bind(provider)
        .bind(kind)
        .bind(&value)
        .bind(&school)
        .bind(&admin.id)
        .bind(db::time::now())
        .execute(&state.db)
        .await;
    match done {
        Ok(_) => {
            tracing::info!(school = %school, provider, kind, "school linked to a sign-in provider");
            Ok(())
        }
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
            Err(AppError::Conflict("Another school on this server is linked to that already. Whoever runs Margin can move it.".into()))
        }
        Err(e) => Err(e.into()),
    }
}

/// The operator's link (`margin sso link`): `provider`'s `kind` (`domain`
/// or `tenant`) `value` to `school_id`, taken from any school that had it.
pub async fn link_by_operator(db: &Db, school_id: &str, provider: &str, kind: &str, value: &str) -> Result<Option<String>> {
    if !matches!(kind, "domain" | "tenant") {
        return Err(AppError::BadRequest("The kind is domain or tenant.".into()));
    }
    let value = value.trim().to_ascii_lowercase();
    if value.is_empty() || is_public_domain(&value) {
        return Err(AppError::BadRequest("That is no school's domain or tenant.".into()));
    }
    let mut tx = db::begin_write(db).await?;
    let before: Option<String> = sqlx::query_scalar("DELETE FROM school_sso WHERE provider = $1 AND kind = $2 AND value = $3 RETURNING school_id")
        .bind(provider)
        .bind(kind)
        .bind(&value)
        .fetch_optional(&mut *tx)
        .await?;
    sqlx::query("INSERT INTO school_sso (provider, kind, value, school_id, created_by, created_at) VALUES ($1, $2, $3, $4, NULL, $5)")
        .bind(provider)
        .bind(kind)
        .bind(&value)
        .bind(school_id)
        .bind(db::time::now())
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    tracing::info!(school = %school_id, provider, kind, "school linked to a sign-in provider by the operator");
    Ok(before.filter(|b| b != school_id))
}

/// Every link on the server, for the operator: provider, kind, value, school.
pub async fn all(db: &Db) -> Result<Vec<(String, String, String, String)>> {
    Ok(sqlx::query_as("SELECT provider, kind, value, school_id FROM school_sso ORDER BY provider, kind, value").fetch_all(db).await?)
}

/// The school's student domains (`sso_student_domains`): a sign-in through
/// a link whose confirmed email is at one of them is a student's.
pub async fn student_domains(db: &Db, school_id: &str) -> Result<Vec<String>> {
    let text: Option<String> = sqlx::query_scalar("SELECT sso_student_domains FROM schools WHERE id = $1").bind(school_id).fetch_optional(db).await?;
    Ok(text.unwrap_or_default().lines().map(str::to_string).filter(|d| !d.is_empty()).collect())
}

/// Sets the admin's school's student domains from what they typed
/// (separated by commas, spaces or lines); a sentence for what is wrong.
pub async fn set_student_domains(db: &Db, admin: &UserInfo, typed: &str) -> Result<()> {
    let school = admin_school(admin)?;
    let mut domains: Vec<String> = Vec::new();
    for d in typed.split([',', ' ', '\n', '\r', '\t']).map(|d| d.trim().trim_start_matches('@').to_ascii_lowercase()).filter(|d| !d.is_empty()) {
        let ok = d.len() <= 253 && d.contains('.') && d.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-') && !is_public_domain(&d);
        if !ok || domains.len() >= 20 {
            return Err(AppError::BadRequest("Enter each students' email domain like students.lincoln.org (up to 20, never a mail service anyone can join).".into()));
        }
        if !domains.contains(&d) {
            domains.push(d);
        }
    }
    sqlx::query("UPDATE schools SET sso_student_domains = $1 WHERE id = $2").bind(domains.join("\n")).bind(school).execute(db).await?;
    Ok(())
}

/// Removes one of the school's links; people who signed in through it keep their accounts.
pub async fn remove(state: &AppState, admin: &UserInfo, provider: &str, kind: &str, value: &str) -> Result<()> {
    let school = admin_school(admin)?;
    sqlx::query("DELETE FROM school_sso WHERE school_id = $1 AND provider = $2 AND kind = $3 AND value = $4")
        .bind(school)
        .bind(provider)
        .bind(kind)
        .bind(value.trim().to_ascii_lowercase())
        .execute(&state.db)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::is_public_domain;

    #[test]
    fn mail_services_are_not_schools() {
        assert!(is_public_domain("gmail.com"));
        assert!(is_public_domain("Yahoo.co.uk"));
        assert!(!is_public_domain("lincoln.k12.example.us"));
    }
}
