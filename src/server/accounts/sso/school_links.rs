//! Which school a new school-account sign-in lands in. A school's admin
//! links a provider to the school by something the provider vouched for in
//! the admin's own linked identity: the domain of its confirmed email, or
//! its tenant (the organisation claim). So nobody links a domain or tenant
//! they do not belong to, and one that belongs to a mail service anyone can
//! join (gmail.com, outlook.com…) is refused. One school per domain or
//! tenant on a server.

use crate::{
    models::{SsoLink, UserInfo},
    server::{
        accounts::schools::admin_school,
        db::{self, Db},
        http::error::{AppError, Result},
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

/// What this admin may link: from each of their own identities, its
/// confirmed email's domain (not a public mail service) and its tenant,
/// less what the school has linked already.
pub async fn options(state: &AppState, admin: &UserInfo) -> Result<Vec<SsoLink>> {
    let rows: Vec<(String, Option<String>, db::Flag, Option<String>)> =
        sqlx::query_as("SELECT provider, email, email_verified, tenant FROM user_identities WHERE user_id = $1 ORDER BY linked_at")
            .bind(&admin.id)
            .fetch_all(&state.db)
            .await?;
    let linked = of_school(state, &admin.school_id).await?;
    let mut out: Vec<SsoLink> = Vec::new();
    for (provider, email, verified, tenant) in rows {
        if state.sso.get(&provider).is_err() {
            continue;
        }
        let label = state.sso.label(&provider);
        let domain = email.filter(|_| verified.0).and_then(|e| e.rsplit_once('@').map(|(_, d)| d.to_ascii_lowercase())).filter(|d| !is_public_domain(d));
        let candidates = [("domain", domain), ("tenant", tenant.filter(|_| state.sso.get(&provider).is_ok_and(|p| p.tenant_claim.is_some())))];
        for (kind, value) in candidates {
            let Some(value) = value.map(|v| v.trim().to_ascii_lowercase()).filter(|v| !v.is_empty()) else { continue };
            let link = SsoLink { provider: provider.clone(), label: label.clone(), kind: kind.into(), value };
            if !linked.contains(&link) && !out.contains(&link) {
                out.push(link);
            }
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
