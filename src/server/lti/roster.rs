//! The course's roster (Names and Role Provisioning): an instructor's launch
//! names where the platform lists the course's members; Margin reads it
//! (after that launch, in the background, or when the class's teacher asks)
//! and makes the class match it: every active learner gets a student
//! account of the school (as a launch would make it) in the class; a student
//! who came from that platform and is no longer an active member leaves the
//! class. Students who joined by the class's code are left as they are.
//! Pages are followed to 20, members read to 2,000, each answer to 1 MiB;
//! a roster read in part changes nobody. Reads are limited per class, and
//! the accounts they make per school (`http::limits`).

use std::collections::HashSet;

use serde_json::Value;

use super::{
    tokens::AccessTokens,
    launch::Launch,
    people,
    platforms::{self, Platform},
};
use crate::server::{
    db::Db,
    error::AppError,
    http::outbound,
    state::AppState,
};

pub const NRPS_CLAIM: &str = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice";
pub const ROSTER_SCOPE: &str = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly";
const MEMBERSHIPS: &str = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json";
const MAX_PAGES: usize = 20;
const MAX_MEMBERS: usize = 2000;

/// After an instructor's launch that names the course's roster: kept, and
/// read in the background.
pub async fn after_launch(state: &AppState, launch: &Launch) -> Result<(), AppError> {
    let Some(context_id) = launch.lti("context")["id"].as_str().filter(|c| !c.is_empty()) else { return Ok(()) };
    if !people::teaches(launch) || !remember(&state.db, launch, context_id).await? {
        return Ok(());
    }
    let class: Option<String> = sqlx::query_scalar("SELECT class_id FROM lti_contexts WHERE platform_id = $1 AND context_id = $2")
        .bind(&launch.platform.id)
        .bind(context_id)
        .fetch_optional(&state.db)
        .await?;
    if let Some(class_id) = class {
        let state = state.clone();
        tokio::spawn(async move {
            if let Err(why) = sync(&state, &class_id).await {
                tracing::warn!(class = %class_id, reason = %why, "the roster could not be read from the LMS");
            }
        });
    }
    Ok(())
}

/// Keeps where the launch's course lists its members.
async fn remember(db: &Db, launch: &Launch, context_id: &str) -> Result<bool, AppError> {
    let Some(url) = launch.claims[NRPS_CLAIM]["context_memberships_url"].as_str().filter(|u| (u.starts_with("https://") || u.starts_with("http://")) && u.len() <= 2000) else {
        return Ok(false);
    };
    if !launch.platform.serves(url) {
        tracing::warn!(platform = %launch.platform.id, "a launch named a roster outside the registration's origins; it is not read");
        return Ok(false);
    }
    sqlx::query("UPDATE lti_contexts SET memberships_url = $3 WHERE platform_id = $1 AND context_id = $2")
        .bind(&launch.platform.id)
        .bind(context_id)
        .bind(url)
        .execute(db)
        .await?;
    Ok(true)
}

/// What a sync changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Synced {
    pub added: usize,
    pub removed: usize,
}

/// Makes the class match its course's roster. `Ok(None)`: the class has no
/// course roster to read.
pub async fn sync(state: &AppState, class_id: &str) -> Result<Option<Synced>, String> {
    let row: Option<(String, String)> = sqlx::query_as("SELECT platform_id, memberships_url FROM lti_contexts WHERE class_id = $1 AND memberships_url IS NOT NULL")
        .bind(class_id)
        .fetch_optional(&state.db)
        .await
        .map_err(|e| e.to_string())?;
    let Some((platform_id, url)) = row else { return Ok(None) };
    state.limits.roster(class_id).await.map_err(|_| "the roster was read a moment ago; try again in a few minutes".to_string())?;
    let platform = platforms::get(&state.db, &platform_id).await.map_err(|e| e.to_string())?.ok_or("the platform was removed")?;
    let members = read(&state.lti_tokens, &state.db, &platform, &url).await?;
    let mut active = HashSet::new();
    let mut synced = Synced::default();
    for m in members {
        let Some(subject) = m["user_id"].as_str().filter(|s| !s.is_empty()) else { continue };
        let is_active = m["status"].as_str().is_none_or(|s| s == "Active");
        let roles: Vec<&str> = m["roles"].as_array().map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
        let learner = roles.iter().any(|r| r.ends_with("#Learner") || *r == "Learner") && !roles.iter().any(|r| people::is_instructor_role(r));
        if !is_active || !learner {
            continue;
        }
        active.insert(subject.to_string());
        let user = match people::account_of(state, None, &platform, subject, m["email"].as_str(), false).await {
            Ok(u) if u.is_student() => u,
            Ok(_) => continue,
            Err(e) => {
                tracing::warn!(platform = %platform.id, reason = %e, "a roster member was left out");
                continue;
            }
        };
        let joined = sqlx::query("INSERT INTO class_members (class_id, user_id, joined_at) VALUES ($1, $2, $3) ON CONFLICT (class_id, user_id) DO NOTHING")
            .bind(class_id)
            .bind(&user.id)
            .bind(crate::server::db::time::now())
            .execute(&state.db)
            .await
            .map_err(|e| e.to_string())?;
        synced.added += joined.rows_affected() as usize;
    }
    let from_platform: Vec<(String, String)> = sqlx::query_as(
        "SELECT cm.user_id, x.subject FROM class_members cm JOIN lti_users x ON x.user_id = cm.user_id AND x.platform_id = $2 WHERE cm.class_id = $1",
    )
    .bind(class_id)
    .bind(&platform.id)
    .fetch_all(&state.db)
    .await
    .map_err(|e| e.to_string())?;
    for (user_id, subject) in from_platform {
        if !active.contains(&subject) {
            sqlx::query("DELETE FROM class_members WHERE class_id = $1 AND user_id = $2").bind(class_id).bind(&user_id).execute(&state.db).await.map_err(|e| e.to_string())?;
            synced.removed += 1;
        }
    }
    tracing::info!(class = %class_id, platform = %platform.id, added = synced.added, removed = synced.removed, "roster read from the LMS");
    Ok(Some(synced))
}

/// Every member, page after page.
async fn read(tokens: &AccessTokens, db: &Db, platform: &Platform, first: &str) -> Result<Vec<Value>, String> {
    let token = tokens.for_service(db, platform, ROSTER_SCOPE, first).await?;
    let mut members = Vec::new();
    let mut next = Some(first.to_string());
    for _ in 0..MAX_PAGES {
        let Some(url) = next.take() else { break };
        if !platform.serves(&url) {
            return Err("a roster page is not on the registration's origins".into());
        }
        let answer = tokens
            .http
            .request(reqwest::Method::GET, &url)?
            .bearer_auth(&token)
            .header(reqwest::header::ACCEPT, MEMBERSHIPS)
            .send()
            .await
            .map_err(|e| e.without_url().to_string())?;
        if !answer.status().is_success() {
            return Err(format!("the platform's roster answered {}", answer.status()));
        }
        next = next_page(&url, answer.headers())?;
        let bytes = outbound::read_capped(answer, 1024 * 1024).await.map_err(|e| format!("a roster page: {e}"))?;
        let page: Value = serde_json::from_slice(&bytes).map_err(|_| "a roster page is not JSON".to_string())?;
        members.extend(page["members"].as_array().cloned().unwrap_or_default());
        if members.len() > MAX_MEMBERS {
            return Err(format!("the roster has more than {MAX_MEMBERS} members"));
        }
    }
    // A roster read in part would take everyone on the pages not read out
    // of the class: all of it, or nothing changes.
    if next.is_some() {
        return Err(format!("the roster has more than {MAX_PAGES} pages"));
    }
    Ok(members)
}

/// The next page a roster page names: the `Link` headers' target whose
/// relations include `next`, read as RFC 8288 writes them (quoted or not,
/// several relations, parameters in any order, relative to the page).
fn next_page(page: &str, headers: &reqwest::header::HeaderMap) -> Result<Option<String>, String> {
    let base = reqwest::Url::parse(page).map_err(|_| "a roster page's address does not read".to_string())?;
    for value in headers.get_all(reqwest::header::LINK) {
        let value = value.to_str().map_err(|_| "a roster page's Link header is not text".to_string())?;
        let links = http_link::parse_link_header(value, &base).map_err(|e| format!("a roster page's Link header does not read: {e}"))?;
        if let Some(next) = links.into_iter().find(|l| l.rel == "next") {
            return Ok(Some(next.target.to_string()));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::next_page;
    use reqwest::header::{HeaderMap, HeaderValue, LINK};

    fn next(values: &[&str]) -> Result<Option<String>, String> {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append(LINK, HeaderValue::from_str(v).unwrap());
        }
        next_page("https://lms.example/api/memberships/9?page=1", &headers)
    }

    #[test]
    fn the_next_page_is_read_as_rfc_8288_writes_it() {
        let two = Some("https://lms.example/api/memberships/9?page=2".to_string());
        assert_eq!(next(&["<https://lms.example/api/memberships/9?page=2>; rel=\"next\""]), Ok(two.clone()), "quoted");
        assert_eq!(next(&["<https://lms.example/api/memberships/9?page=2>; rel=next"]), Ok(two.clone()), "unquoted (lti1p3platform writes it so)");
        assert_eq!(next(&["<https://lms.example/api/memberships/9?page=2>; title=\"Page 2\"; REL=\"last next\""]), Ok(two.clone()), "several relations, any order, any case");
        assert_eq!(
            next(&["<https://lms.example/api/memberships/9?page=0>; rel=\"first\", <https://lms.example/api/memberships/9?page=2>; rel=next"]),
            Ok(two.clone()),
            "one of several links"
        );
        assert_eq!(next(&["<https://lms.example/x>; rel=prev", "</api/memberships/9?page=2>; rel=next"]), Ok(two), "in a second header, relative to the page");
        assert_eq!(next(&["<https://lms.example/api/memberships/9?page=2>; rel=\"nextish\""]), Ok(None), "not next");
        assert_eq!(next(&[]), Ok(None));
        assert!(next(&["https://lms.example/no-brackets; rel=next"]).is_err(), "a header that does not read stops the sync");
    }
}
