//! The School library: a teacher shares a lesson with their school (with a
//! subject and a grade if they like), colleagues of the same school find it
//! (search, filters), open it to read, and copy it into their own lessons
//! with its material and without its chats. Sharing can be withdrawn; the
//! copies stay, as they are their copiers' lessons. Another school sees
//! nothing of it: a lesson not shared with the reader's school is "not
//! found", whoever asks.
//!
//! JSON doors (`/api/library…`, `/api/lessons/{id}/share`) and the pages'
//! plain forms (`/lessons/{id}/share`, `/library/{id}/copy`).

use axum::{
    extract::State,
    http::StatusCode,
    response::{IntoResponse, Redirect, Response},
    routing::{get, post, put},
    Json, Router,
};
use serde::Deserialize;

use crate::{
    models::{Lesson, SchoolLibrary, SharedLesson, SharedLessonView, Sharing, UserInfo, SHARE_GRADES as GRADES},
    server::{
        accounts::current_user::{CurrentUser, TeacherPage},
        db::{self, Db},
        error::{AppError, Result},
        http::{
            extractors::{ApiForm, ApiJson, ApiPath, ApiQuery},
        },
        lessons::library,
        state::AppState,
    },
};

/// The longest subject kept, in characters.
pub const MAX_SUBJECT_CHARS: usize = 40;
/// The most lessons one library page lists.
pub const MAX_LISTED: i64 = 200;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/library", get(api_list))
        .route("/api/library/{id}", get(api_open))
        .route("/api/library/{id}/copy", post(api_copy))
        .route("/api/lessons/{id}/share", put(api_share).delete(api_unshare).get(api_sharing))
        .route("/lessons/{id}/share", post(form_share))
        .route("/library/{id}/copy", post(form_copy))
}

/// A subject and a grade as the teacher gave them, checked.
fn checked(subject: &str, grade: &str) -> Result<(String, String)> {
    let subject = subject.split_whitespace().collect::<Vec<_>>().join(" ");
    if subject.chars().count() > MAX_SUBJECT_CHARS {
        return Err(AppError::BadRequest(format!("A subject is at most {MAX_SUBJECT_CHARS} characters.")));
    }
    let grade = grade.trim().to_ascii_uppercase();
    if !grade.is_empty() && !GRADES.contains(&grade.as_str()) {
        return Err(AppError::BadRequest("A grade is K or a number from 1 to 12.".into()));
    }
    Ok((subject, grade))
}

/// Shares one of `owner`'s lessons with their school (again: with the
/// subject and grade given now).
pub async fn share(db: &Db, owner: &str, id: &str, subject: &str, grade: &str) -> Result<Sharing> {
    let (subject, grade) = checked(subject, grade)?;
    let done = sqlx::query(
        "UPDATE lessons SET shared_at = COALESCE(shared_at, $1), shared_subject = $2, shared_grade = $3
         WHERE id = $4 AND owner_id = $5 AND deleted_at IS NULL",
    )
    .bind(db::time::now())
    .bind(&subject)
    .bind(&grade)
    .bind(id)
    .bind(owner)
    .execute(db)
    .await?;
    db::touched_one(&done)?;
    sharing(db, owner, id).await
}

/// Withdraws the lesson from the School library; copies made stay.
pub async fn unshare(db: &Db, owner: &str, id: &str) -> Result<Sharing> {
    let done = sqlx::query("UPDATE lessons SET shared_at = NULL WHERE id = $1 AND owner_id = $2 AND deleted_at IS NULL").bind(id).bind(owner).execute(db).await?;
    db::touched_one(&done)?;
    sharing(db, owner, id).await
}

/// Whether one of `owner`'s lessons is shared.
pub async fn sharing(db: &Db, owner: &str, id: &str) -> Result<Sharing> {
    let row: Option<(String, Option<String>, Option<String>, Option<String>)> =
        sqlx::query_as("SELECT title, shared_at, shared_subject, shared_grade FROM lessons WHERE id = $1 AND owner_id = $2 AND deleted_at IS NULL")
            .bind(id)
            .bind(owner)
            .fetch_optional(db)
            .await?;
    let (title, at, subject, grade) = row.ok_or(AppError::NotFound)?;
    let editors = super::editors::list(db, owner, id).await?;
    Ok(Sharing { lesson_id: id.to_string(), title, shared: at.is_some(), subject: subject.unwrap_or_default(), grade: grade.unwrap_or_default(), editors })
}

/// The columns of a shared lesson, the reader's id being `$1` and their school `$2`.
const SHARED: &str = "SELECT l.id, l.title, COALESCE(l.shared_subject, ''), COALESCE(l.shared_grade, ''), u.email, l.shared_at, l.owner_id
     FROM lessons l JOIN users u ON u.id = l.owner_id
     WHERE l.shared_at IS NOT NULL AND l.deleted_at IS NULL AND u.school_id = $2";

type Row = (String, String, String, String, String, String, String);

fn shared(reader: &str, (id, title, subject, grade, teacher, shared_at, owner): Row) -> SharedLesson {
    SharedLesson { id, title, subject, grade, teacher, shared_at, mine: owner == reader }
}

/// `text` for a LIKE pattern: its own `%`, `_` and `\` taken literally.
fn like(text: &str) -> String {
    let escaped: String = text.chars().flat_map(|c| if matches!(c, '%' | '_' | '\\') { vec!['\\', c] } else { vec![c] }).collect();
    format!("%{}%", escaped.to_lowercase())
}

/// What `reader`'s school shares: those matching `q` (in the title or the
/// text) and the subject and grade when given, newest first.
pub async fn list(db: &Db, reader: &UserInfo, q: &str, subject: &str, grade: &str) -> Result<SchoolLibrary> {
    let (q, subject, grade) = (q.trim(), subject.trim(), grade.trim());
    let mut sql = String::from(SHARED);
    let mut args: Vec<String> = Vec::new();
    if !q.is_empty() {
        args.push(like(q));
        let n = args.len() + 2;
        sql.push_str(&format!(" AND (LOWER(l.title) LIKE ${n} ESCAPE '\\' OR LOWER(l.search_text) LIKE ${n} ESCAPE '\\')"));
    }
    if !subject.is_empty() {
        args.push(subject.to_string());
        sql.push_str(&format!(" AND l.shared_subject = ${}", args.len() + 2));
    }
    if !grade.is_empty() {
        args.push(grade.to_string());
        sql.push_str(&format!(" AND l.shared_grade = ${}", args.len() + 2));
    }
    sql.push_str(&format!(" ORDER BY l.shared_at DESC, l.id LIMIT {MAX_LISTED}"));
    let mut query = sqlx::query_as::<_, Row>(&sql).bind(&reader.id).bind(&reader.school_id);
    for a in &args {
        query = query.bind(a);
    }
    let lessons = query.fetch_all(db).await?.into_iter().map(|r| shared(&reader.id, r)).collect();
    let facets: Vec<(String, String)> = sqlx::query_as(
        "SELECT DISTINCT COALESCE(l.shared_subject, ''), COALESCE(l.shared_grade, '') FROM lessons l JOIN users u ON u.id = l.owner_id
         WHERE l.shared_at IS NOT NULL AND l.deleted_at IS NULL AND u.school_id = $1",
    )
    .bind(&reader.school_id)
    .fetch_all(db)
    .await?;
    let mut subjects: Vec<String> = facets.iter().map(|f| f.0.clone()).filter(|s| !s.is_empty()).collect();
    subjects.sort_by_key(|s| s.to_lowercase());
    subjects.dedup();
    let mut grades: Vec<String> = facets.into_iter().map(|f| f.1).filter(|g| !g.is_empty()).collect();
    grades.sort_by_key(|g| GRADES.iter().position(|k| k == g));
    grades.dedup();
    Ok(SchoolLibrary { lessons, subjects, grades })
}

/// One lesson of `reader`'s school's library, with its document.
async fn find(db: &Db, reader: &UserInfo, id: &str) -> Result<(SharedLesson, String)> {
    let sql = format!("{SHARED} AND l.id = $3");
    let row: Option<Row> = sqlx::query_as(&sql).bind(&reader.id).bind(&reader.school_id).bind(id).fetch_optional(db).await?;
    let lesson = shared(&reader.id, row.ok_or(AppError::NotFound)?);
    let xml: String = sqlx::query_scalar("SELECT document_xml FROM lessons WHERE id = $1").bind(id).fetch_one(db).await?;
    Ok((lesson, xml))
}

/// A shared lesson to read.
pub async fn open(db: &Db, reader: &UserInfo, id: &str) -> Result<SharedLessonView> {
    let (lesson, xml) = find(db, reader, id).await?;
    Ok(SharedLessonView { lesson, html: crate::lesson::render_both(&xml) })
}

/// A copy of a shared lesson in `reader`'s own lessons, with its material
/// and without its chats.
pub async fn copy(state: &AppState, reader: &UserInfo, id: &str) -> Result<Lesson> {
    let (lesson, xml) = find(&state.db, reader, id).await?;
    state.limits.lesson(&reader.id).await?;
    let title = library::fit_title(&lesson.title);
    let summary: String = format!("Copied from “{}” in the School library ({})", lesson.title, lesson.teacher).chars().take(200).collect();
    library::insert_copy(&state.db, &reader.id, &title, &xml, &summary, id).await
}

#[derive(Deserialize)]
struct ListQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    subject: String,
    #[serde(default)]
    grade: String,
}

#[derive(Deserialize)]
struct ShareRequest {
    #[serde(default)]
    subject: String,
    #[serde(default)]
    grade: String,
}

async fn api_list(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiQuery(q): ApiQuery<ListQuery>) -> Result<Json<SchoolLibrary>> {
    Ok(Json(list(&state.db, &user, &q.q, &q.subject, &q.grade).await?))
}

async fn api_open(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Json<SharedLessonView>> {
    Ok(Json(open(&state.db, &user, &id).await?))
}

/// `201 {"id","title"}`: the copy.
async fn api_copy(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Response> {
    let made = copy(&state, &user, &id).await?;
    Ok((StatusCode::CREATED, Json(serde_json::json!({ "id": made.id, "title": made.title }))).into_response())
}

async fn api_sharing(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Json<Sharing>> {
    Ok(Json(sharing(&state.db, &user.id, &id).await?))
}

async fn api_share(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>, ApiJson(body): ApiJson<ShareRequest>) -> Result<Json<Sharing>> {
    Ok(Json(share(&state.db, &user.id, &id, &body.subject, &body.grade).await?))
}

async fn api_unshare(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Json<Sharing>> {
    Ok(Json(unshare(&state.db, &user.id, &id).await?))
}

#[derive(Deserialize)]
struct ShareForm {
    #[serde(default)]
    action: String,
    #[serde(default)]
    subject: String,
    #[serde(default)]
    grade: String,
}

/// The Share page's form: share (or change what it is shared under), or
/// stop sharing; back to the page, with why when it was refused.
async fn form_share(State(state): State<AppState>, TeacherPage(user): TeacherPage, ApiPath(id): ApiPath<String>, ApiForm(form): ApiForm<ShareForm>) -> Result<Response> {
    let done = if form.action == "stop" { unshare(&state.db, &user.id, &id).await } else { share(&state.db, &user.id, &id, &form.subject, &form.grade).await };
    match done {
        Ok(_) => Ok(Redirect::to(&format!("/lessons/{id}/share")).into_response()),
        Err(AppError::BadRequest(_)) => Ok(Redirect::to(&format!("/lessons/{id}/share?error=input")).into_response()),
        Err(e) => Err(e),
    }
}

/// "Copy to my lessons": to the copy.
async fn form_copy(State(state): State<AppState>, TeacherPage(user): TeacherPage, ApiPath(id): ApiPath<String>) -> Result<Response> {
    let made = copy(&state, &user, &id).await?;
    Ok(Redirect::to(&format!("/lessons/{}", made.id)).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_and_grades_are_checked_and_tidied() {
        assert_eq!(checked("  Year 5   French ", "k").unwrap(), ("Year 5 French".to_string(), "K".to_string()));
        assert_eq!(checked("", "").unwrap(), (String::new(), String::new()));
        assert!(checked(&"x".repeat(41), "").is_err());
        assert!(checked("Maths", "13").is_err());
    }

    #[test]
    fn a_search_takes_its_wildcards_literally() {
        assert_eq!(like("50%_off\\"), "%50\\%\\_off\\\\%");
        assert_eq!(like("Verbs"), "%verbs%");
    }
}
