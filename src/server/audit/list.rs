//! Reading the audit log: one school's entries, newest first, narrowed as
//! the admin asks (a person, a lesson, days), each held edit with the
//! teacher's decision as it stands now (read from its proposal).

use std::collections::HashMap;

use crate::{
    models::{AuditAction, AuditActor, AuditEntry, AuditFilter, AuditTool, AuditView},
    server::{
        db::Db,
        error::{AppError, Result},
    },
};

/// The most entries the page shows; the export has them all.
pub const PAGE: i64 = 300;

#[derive(sqlx::FromRow)]
struct Row {
    id: String,
    at: String,
    action: String,
    actor: String,
    person_id: Option<String>,
    person_email: Option<String>,
    lesson_id: Option<String>,
    lesson_title: Option<String>,
    turn_id: Option<String>,
    model: String,
    tokens: i64,
    outcome: String,
    detail: String,
}

/// A day as the filter takes it (YYYY-MM-DD), or a clear error.
fn day(text: &str, what: &str) -> Result<Option<String>> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(None);
    }
    let format = time::macros::format_description!("[year]-[month]-[day]");
    time::Date::parse(t, format).map_err(|_| AppError::BadRequest(format!("Write the {what} day as YYYY-MM-DD (for example 2026-09-01).")))?;
    Ok(Some(t.to_string()))
}

/// `school_id`'s entries under `filter`, newest first, at most `limit`.
pub async fn list(db: &Db, school_id: &str, filter: &AuditFilter, limit: Option<i64>) -> Result<Vec<AuditEntry>> {
    let (from, to) = (day(&filter.from, "first")?, day(&filter.to, "last")?);
    let person = filter.person.trim();
    let lesson = filter.lesson.trim();
    let mut sql = String::from(
        "SELECT a.id, a.at, a.action, a.actor, a.person_id, u.email AS person_email, a.lesson_id, l.title AS lesson_title,
                a.turn_id, a.model, a.tokens, a.outcome, a.detail
         FROM audit_events a LEFT JOIN users u ON u.id = a.person_id LEFT JOIN lessons l ON l.id = a.lesson_id
         WHERE a.school_id = $1",
    );
    let mut binds: Vec<String> = vec![school_id.to_string()];
    let add = |cond: &str, value: String, sql: &mut String, binds: &mut Vec<String>| {
        binds.push(value);
        sql.push_str(&cond.replace('?', &format!("${}", binds.len())));
    };
    if !person.is_empty() {
        // An id as written, or an email (stored lowercased).
        binds.push(person.to_string());
        binds.push(person.to_lowercase());
        sql.push_str(&format!(" AND (a.person_id = ${} OR a.person_id IN (SELECT id FROM users WHERE email = ${}))", binds.len() - 1, binds.len()));
    }
    if !lesson.is_empty() {
        add(" AND a.lesson_id = ?", lesson.to_string(), &mut sql, &mut binds);
    }
    if let Some(from) = from {
        add(" AND substr(a.at, 1, 10) >= ?", from, &mut sql, &mut binds);
    }
    if let Some(to) = to {
        add(" AND substr(a.at, 1, 10) <= ?", to, &mut sql, &mut binds);
    }
    sql.push_str(" ORDER BY a.at DESC, a.id DESC");
    if let Some(limit) = limit {
        sql.push_str(&format!(" LIMIT {}", limit.max(0)));
    }
    let mut query = sqlx::query_as::<_, Row>(&sql);
    for b in &binds {
        query = query.bind(b.as_str());
    }
    let rows = query.fetch_all(db).await?;
    let mut entries: Vec<AuditEntry> = rows.into_iter().map(entry).collect();
    decisions(db, &mut entries).await?;
    Ok(entries)
}

fn entry(r: Row) -> AuditEntry {
    let tools = serde_json::from_str::<serde_json::Value>(&r.detail)
        .ok()
        .and_then(|d| serde_json::from_value::<Vec<AuditTool>>(d.get("tools").cloned().unwrap_or_default()).ok())
        .unwrap_or_default();
    AuditEntry {
        id: r.id,
        at: r.at,
        action: AuditAction::from_wire(&r.action).unwrap_or(AuditAction::Reply),
        actor: AuditActor::from_wire(&r.actor).unwrap_or(AuditActor::Teacher),
        person_id: r.person_id,
        person_email: r.person_email,
        lesson_id: r.lesson_id,
        lesson_title: r.lesson_title,
        turn_id: r.turn_id,
        model: r.model,
        tokens: r.tokens,
        outcome: r.outcome,
        tools,
    }
}

/// Fills in where each held edit stands: the proposal's status now and
/// the revision it was applied as ("gone" when its lesson was deleted).
async fn decisions(db: &Db, entries: &mut [AuditEntry]) -> Result<()> {
    let ids: Vec<String> = entries.iter().flat_map(|e| e.tools.iter().filter_map(|t| t.proposal.clone())).collect();
    let mut found: HashMap<String, (String, Option<i64>)> = HashMap::new();
    for chunk in ids.chunks(200) {
        let marks = (1..=chunk.len()).map(|i| format!("${i}")).collect::<Vec<_>>().join(", ");
        let sql = format!("SELECT id, status, applied_revision FROM proposals WHERE id IN ({marks})");
        let mut q = sqlx::query_as::<_, (String, String, Option<i64>)>(&sql);
        for id in chunk {
            q = q.bind(id.as_str());
        }
        for (id, status, revision) in q.fetch_all(db).await? {
            found.insert(id, (status, revision));
        }
    }
    for tool in entries.iter_mut().flat_map(|e| e.tools.iter_mut()) {
        if let Some(id) = &tool.proposal {
            let (status, revision) = found.get(id).cloned().unwrap_or_else(|| ("gone".into(), None));
            tool.decision = Some(status);
            tool.applied_revision = revision;
        }
    }
    Ok(())
}

/// The Audit page for `school_id` under `filter`.
pub async fn view(db: &Db, school_id: &str, filter: &AuditFilter) -> Result<AuditView> {
    let mut entries = list(db, school_id, filter, Some(PAGE + 1)).await?;
    let more = entries.len() as i64 > PAGE;
    entries.truncate(PAGE as usize);
    let lessons: Vec<(String, String)> = sqlx::query_as(
        "SELECT l.id, l.title FROM lessons l WHERE l.id IN (SELECT DISTINCT lesson_id FROM audit_events WHERE school_id = $1) ORDER BY l.title, l.id",
    )
    .bind(school_id)
    .fetch_all(db)
    .await?;
    let people: Vec<(String,)> = sqlx::query_as(
        "SELECT u.email FROM users u WHERE u.id IN (SELECT DISTINCT person_id FROM audit_events WHERE school_id = $1) ORDER BY u.email",
    )
    .bind(school_id)
    .fetch_all(db)
    .await?;
    let keep_days = crate::server::accounts::keeping::of_school(db, school_id).await?.audit_days.unwrap_or(crate::server::accounts::keeping::AUDIT_DAYS);
    Ok(AuditView { entries, more, lessons, people: people.into_iter().map(|(e,)| e).collect(), keep_days })
}
