//! Flags: what a student's conversation with the tutor raised, kept for
//! the people who must see it. A flag is a student's data: its lesson's
//! teacher sees it, and the school's admin sees those about harm and abuse
//! (the safeguarding ones); anyone else is told it does not exist. Flags
//! are acknowledged, never deleted.

use crate::{
    models::{Flag, FlagCategory, UserInfo},
    server::{
        db::{time, Db, Flag as DbFlag},
        error::{AppError, Result},
        ids,
        metrics::METRICS,
    },
};

/// A flag to keep.
pub struct NewFlag<'a> {
    pub school_id: &'a str,
    pub student_id: &'a str,
    pub lesson_id: &'a str,
    pub chat_id: &'a str,
    pub category: FlagCategory,
    pub excerpt: &'a str,
    pub from_student: bool,
}

/// Keeps a flag and counts it (by category, without any text).
pub async fn raise(db: &Db, f: NewFlag<'_>) -> Result<()> {
    sqlx::query(
        "INSERT INTO safety_flags (id, school_id, student_id, lesson_id, chat_id, category, excerpt, from_student, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(ids::new_id())
    .bind(f.school_id)
    .bind(f.student_id)
    .bind(f.lesson_id)
    .bind(f.chat_id)
    .bind(f.category.as_str())
    .bind(f.excerpt)
    .bind(f.from_student)
    .bind(time::now())
    .execute(db)
    .await?;
    METRICS.flagged(f.category.as_str());
    // The audit log has the flag's category, never its words.
    let entry = crate::server::audit::NewEntry {
        school_id: f.school_id,
        action: crate::models::AuditAction::Flag,
        actor: crate::models::AuditActor::Student,
        person_id: f.student_id,
        lesson_id: Some(f.lesson_id),
        turn_id: None,
        model: "",
        tokens: 0,
        outcome: f.category.as_str(),
        tools: Vec::new(),
    };
    crate::server::audit::record(db, entry).await;
    Ok(())
}

/// The flags `viewer` may see, as a condition on `f` (the flag) and `l`
/// (its lesson), with `$1` the viewer's id and `$2` their school: the
/// lesson's teacher, or the school's admin for the safeguarding ones.
fn visible(viewer: &UserInfo) -> &'static str {
    if viewer.is_admin() {
        "f.school_id = $2 AND (l.owner_id = $1 OR f.category IN ('harm', 'abuse'))"
    } else {
        "f.school_id = $2 AND l.owner_id = $1"
    }
}

#[derive(sqlx::FromRow)]
struct Row {
    id: String,
    category: String,
    excerpt: String,
    #[sqlx(try_from = "DbFlag")]
    from_student: bool,
    student_id: String,
    student_email: String,
    lesson_id: String,
    lesson_title: String,
    created_at: String,
    acknowledged_at: Option<String>,
    acknowledged_by: Option<String>,
    owner_id: String,
}

/// The flags `viewer` may see, newest first; open ones only unless `all`.
/// `lesson` narrows them to one lesson.
pub async fn list(db: &Db, viewer: &UserInfo, all: bool, lesson: Option<&str>) -> Result<Vec<Flag>> {
    if viewer.is_student() || viewer.school_id.is_empty() {
        return Ok(Vec::new());
    }
    let open = if all { "" } else { " AND f.acknowledged_at IS NULL" };
    let one = if lesson.is_some() { " AND f.lesson_id = $3" } else { "" };
    let sql = format!(
        "SELECT f.id, f.category, f.excerpt, f.from_student, f.student_id, s.email AS student_email, f.lesson_id, l.title AS lesson_title,
                f.created_at, f.acknowledged_at, a.email AS acknowledged_by, l.owner_id
         FROM safety_flags f JOIN lessons l ON l.id = f.lesson_id JOIN users s ON s.id = f.student_id
         LEFT JOIN users a ON a.id = f.acknowledged_by
         WHERE {}{open}{one} ORDER BY f.created_at DESC, f.id LIMIT 500",
        visible(viewer)
    );
    let mut q = sqlx::query_as::<_, Row>(&sql).bind(&viewer.id).bind(&viewer.school_id);
    if let Some(lesson) = lesson {
        q = q.bind(lesson);
    }
    let rows = q.fetch_all(db).await?;
    Ok(rows
        .into_iter()
        .filter_map(|r| {
            Some(Flag {
                id: r.id,
                category: FlagCategory::from_wire(&r.category)?,
                excerpt: r.excerpt,
                from_student: r.from_student,
                student_id: r.student_id,
                student_email: r.student_email,
                lesson_id: r.lesson_id,
                lesson_title: r.lesson_title,
                created_at: r.created_at,
                acknowledged_at: r.acknowledged_at,
                acknowledged_by: r.acknowledged_by,
                yours: r.owner_id == viewer.id,
            })
        })
        .collect())
}

/// How many flags `viewer` has not acknowledged yet (the count on their pages).
pub async fn open_count(db: &Db, viewer: &UserInfo) -> Result<i64> {
    if viewer.is_student() || viewer.school_id.is_empty() {
        return Ok(0);
    }
    let sql = format!(
        "SELECT COUNT(*) FROM safety_flags f JOIN lessons l ON l.id = f.lesson_id WHERE {} AND f.acknowledged_at IS NULL",
        visible(viewer)
    );
    Ok(sqlx::query_scalar(&sql).bind(&viewer.id).bind(&viewer.school_id).fetch_one(db).await?)
}

/// Acknowledges a flag `viewer` may see (again is fine); any other is not found.
pub async fn acknowledge(db: &Db, viewer: &UserInfo, flag_id: &str) -> Result<()> {
    if viewer.is_student() || viewer.school_id.is_empty() {
        return Err(AppError::NotFound);
    }
    let sql = format!("SELECT f.id FROM safety_flags f JOIN lessons l ON l.id = f.lesson_id WHERE {} AND f.id = $3", visible(viewer));
    let found: Option<String> = sqlx::query_scalar(&sql).bind(&viewer.id).bind(&viewer.school_id).bind(flag_id).fetch_optional(db).await?;
    if found.is_none() {
        return Err(AppError::NotFound);
    }
    sqlx::query("UPDATE safety_flags SET acknowledged_at = $1, acknowledged_by = $2 WHERE id = $3 AND acknowledged_at IS NULL")
        .bind(time::now())
        .bind(&viewer.id)
        .bind(flag_id)
        .execute(db)
        .await?;
    Ok(())
}
