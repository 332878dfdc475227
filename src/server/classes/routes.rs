//! The teacher's doors to classes: the JSON API, the forms of the class
//! pages (answered with redirects), those pages, and publishing a lesson.
//! Every one takes a `CurrentUser`, so a student's session is a 403 here,
//! and looks the class or lesson up by its owner, so another teacher's is a
//! 404.

use axum::{
    extract::State,
    http::{header, HeaderMap, StatusCode},
    response::{IntoResponse, Redirect, Response},
    routing::{get, post, put},
    Json, Router,
};
use serde::{Deserialize, Serialize};

use super::sheets;
use crate::{
    lesson,
    server::{
        chats,
        accounts::current_user::{CurrentUser, TeacherPage},
        error::{AppError, Result},
        http::extractors::{ApiForm, ApiJson, ApiPath},
        state::AppState,
    },
};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/classes", get(api_list).post(api_create))
        .route("/api/classes/{id}", get(api_get).delete(api_delete))
        .route("/api/classes/{id}/students/{student}", axum::routing::delete(api_remove_student))
        .route("/api/classes/{id}/code", post(api_renew))
        .route("/api/classes/{id}/lessons/{lesson}", put(api_add).delete(api_remove))
        .route("/api/lessons/{id}/publication", get(api_publication))
        .route("/api/lessons/{id}/publish", post(api_publish))
        .route("/api/lessons/{id}/unpublish", post(api_unpublish))
        .route("/api/lessons/{id}/results", get(api_results))
        .route("/api/lessons/{id}/results/{student}", get(api_student))
        .route("/api/lessons/{id}/improve", post(super::improve::api_improve))
        .route("/lessons/{id}/improve", post(super::improve::form_improve))
        .route("/api/lessons/{id}/align", post(super::coverage::api_align))
        .route("/lessons/{id}/align", post(super::coverage::form_align))
        .route("/api/lessons/{id}/standards", get(super::coverage::api_lesson))
        .route("/api/classes/{id}/standards", get(super::coverage::api_class))
        .route("/classes", post(form_create))
        .route("/classes/{id}/code", post(form_renew))
        .route("/classes/{id}/lessons", post(form_add))
        .route("/classes/{id}/lessons/{lesson}/remove", post(form_remove))
        .route("/classes/{id}/students/{student}/remove", post(form_remove_student))
        .route("/classes/{id}/delete", post(form_delete))
        .route("/lessons/{id}/publish", post(form_publish))
}

#[derive(Deserialize)]
struct NewClass {
    #[serde(default)]
    name: String,
}

async fn api_list(State(state): State<AppState>, CurrentUser(user): CurrentUser) -> Result<Json<Vec<super::ClassSummary>>> {
    Ok(Json(super::list(&state.db, &user.id).await?))
}

async fn api_create(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiJson(body): ApiJson<NewClass>) -> Result<Response> {
    Ok((StatusCode::CREATED, Json(super::create(&state.db, &user.id, &body.name).await?)).into_response())
}

async fn api_get(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Json<super::ClassDetail>> {
    Ok(Json(super::get(&state.db, &user.id, &id).await?))
}

async fn api_delete(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<StatusCode> {
    super::delete(&state.db, &user.id, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn api_remove_student(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath((id, student)): ApiPath<(String, String)>) -> Result<StatusCode> {
    super::remove_member(&state.db, &user.id, &id, &student).await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CodeReply {
    join_code: String,
}

async fn api_renew(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Json<CodeReply>> {
    Ok(Json(CodeReply { join_code: super::renew_code(&state.db, &user.id, &id).await? }))
}

async fn api_add(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath((id, lesson)): ApiPath<(String, String)>) -> Result<StatusCode> {
    super::add_lesson(&state.db, &user.id, &id, &lesson).await?;
    Ok(StatusCode::NO_CONTENT)
}

async fn api_remove(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath((id, lesson)): ApiPath<(String, String)>) -> Result<StatusCode> {
    super::remove_lesson(&state.db, &user.id, &id, &lesson).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Which version students see, and the classes that have the lesson.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Publication {
    published_revision: Option<i64>,
    revision: i64,
    classes: Vec<ClassRef>,
}

#[derive(Serialize)]
struct ClassRef {
    id: String,
    name: String,
}

async fn publication(state: &AppState, owner: &str, lesson_id: &str) -> Result<Publication> {
    let (published_revision, revision, classes) = super::publication(&state.db, owner, lesson_id).await?;
    Ok(Publication { published_revision, revision, classes: classes.into_iter().map(|(id, name)| ClassRef { id, name }).collect() })
}

async fn api_publication(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Json<Publication>> {
    Ok(Json(publication(&state, &user.id, &id).await?))
}

async fn api_publish(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Json<Publication>> {
    super::publish(&state.db, &user.id, &id).await?;
    Ok(Json(publication(&state, &user.id, &id).await?))
}

async fn api_unpublish(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Json<Publication>> {
    super::unpublish(&state.db, &user.id, &id).await?;
    Ok(Json(publication(&state, &user.id, &id).await?))
}

/// The published version (the current one while unpublished): its title,
/// its XML and its items, which are what students answer.
async fn published_items(state: &AppState, owner: &str, lesson_id: &str) -> Result<(String, String, Vec<lesson::answers::Item>)> {
    let (title, xml) = super::published_xml(&state.db, owner, lesson_id).await?;
    let items = sheets::items_of(&xml);
    Ok((title, xml, items))
}

async fn api_results(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Json<Vec<sheets::ResultRow>>> {
    let (_, _, items) = published_items(&state, &user.id, &id).await?;
    Ok(Json(sheets::results(&state.db, &user.id, &id, &items).await?))
}

/// One student's work, as the API gives it (their page shows it as
/// `models::StudentWork`).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WorkRecord {
    sheet: sheets::Sheet,
    chats: Vec<ChatRecord>,
}

#[derive(Serialize)]
struct ChatRecord {
    id: String,
    title: String,
    messages: Vec<crate::chat::message::ChatMessage>,
}

async fn student_work(state: &AppState, owner: &str, lesson_id: &str, student: &str) -> Result<WorkRecord> {
    // The teacher's lesson, in a class of theirs the student is in (or
    // was: a former student's answers are kept for the teacher).
    if !super::teaches(&state.db, owner, student, lesson_id).await? {
        return Err(AppError::NotFound);
    }
    let sheet = sheets::load(&state.db, lesson_id, student).await?;
    let found: Vec<(String, String)> = sqlx::query_as("SELECT id, title FROM chat_sessions WHERE owner_id = $1 AND lesson_id = $2 ORDER BY created_at, id")
        .bind(student)
        .bind(lesson_id)
        .fetch_all(&state.db)
        .await?;
    let mut chats = Vec::new();
    for (id, title) in found {
        let messages = chats::list_messages(&state.db, student, &id).await?;
        chats.push(ChatRecord { id, title, messages });
    }
    Ok(WorkRecord { sheet, chats })
}

async fn api_student(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath((id, student)): ApiPath<(String, String)>) -> Result<Json<WorkRecord>> {
    Ok(Json(student_work(&state, &user.id, &id, &student).await?))
}

// ---- pages and forms ----

/// Back to a page after a form.
fn to(path: &str) -> Response {
    Redirect::to(path).into_response()
}

async fn form_create(State(state): State<AppState>, TeacherPage(user): TeacherPage, ApiForm(form): ApiForm<NewClass>) -> Result<Response> {
    match super::create(&state.db, &user.id, &form.name).await {
        Ok(c) => Ok(to(&format!("/classes/{}", c.id))),
        // Back to the form, saying why.
        Err(AppError::BadRequest(_)) => Ok(to("/classes?error=name")),
        Err(e) => Err(e),
    }
}

/// This server's address for the join link: `MARGIN_PUBLIC_URL` when it is
/// set (the request's `Host` is the client's to write), otherwise the
/// address the browser reached.
fn origin(state: &AppState, headers: &HeaderMap) -> String {
    if let Some(origin) = &state.config.public_origin {
        return origin.clone();
    }
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).filter(|h| h.chars().all(|c| c.is_ascii_alphanumeric() || ".:-[]".contains(c))).unwrap_or("localhost");
    format!("{}://{host}", if state.config.secure_cookies { "https" } else { "http" })
}

/// A class's page (`components::classes::ClassPage`): the class, the
/// teacher's lessons it could be given, and the join link.
pub async fn class_page(state: &AppState, user: &crate::models::UserInfo, headers: &HeaderMap, id: &str) -> Result<crate::models::ClassPage> {
    let class = super::get(&state.db, &user.id, id).await?;
    let own_lessons: Vec<(String, String)> = sqlx::query_as("SELECT id, title FROM lessons WHERE owner_id = $1 AND deleted_at IS NULL ORDER BY title, id")
        .bind(&user.id)
        .fetch_all(&state.db)
        .await?;
    let join_link = format!("{}/join/{}", origin(state, headers), class.join_code);
    let coverage = super::coverage::class_coverage(&state.db, &user.id, id).await?;
    Ok(crate::models::ClassPage { class, own_lessons, join_link, coverage })
}

async fn form_renew(State(state): State<AppState>, TeacherPage(user): TeacherPage, ApiPath(id): ApiPath<String>) -> Result<Response> {
    super::renew_code(&state.db, &user.id, &id).await?;
    Ok(to(&format!("/classes/{id}")))
}

#[derive(Deserialize)]
struct AddLesson {
    #[serde(default)]
    lesson: String,
}

async fn form_add(State(state): State<AppState>, TeacherPage(user): TeacherPage, ApiPath(id): ApiPath<String>, ApiForm(form): ApiForm<AddLesson>) -> Result<Response> {
    super::add_lesson(&state.db, &user.id, &id, &form.lesson).await?;
    Ok(to(&format!("/classes/{id}")))
}

async fn form_remove(State(state): State<AppState>, TeacherPage(user): TeacherPage, ApiPath((id, lesson)): ApiPath<(String, String)>) -> Result<Response> {
    super::remove_lesson(&state.db, &user.id, &id, &lesson).await?;
    Ok(to(&format!("/classes/{id}")))
}

async fn form_remove_student(State(state): State<AppState>, TeacherPage(user): TeacherPage, ApiPath((id, student)): ApiPath<(String, String)>) -> Result<Response> {
    super::remove_member(&state.db, &user.id, &id, &student).await?;
    Ok(to(&format!("/classes/{id}")))
}

/// The class page's "Delete class": only with its box ticked (the
/// browser asks for it; a form sent without it deletes nothing).
#[derive(Deserialize)]
struct DeleteForm {
    #[serde(default)]
    confirm: String,
}

async fn form_delete(State(state): State<AppState>, TeacherPage(user): TeacherPage, ApiPath(id): ApiPath<String>, ApiForm(form): ApiForm<DeleteForm>) -> Result<Response> {
    super::get(&state.db, &user.id, &id).await?;
    if form.confirm != "yes" {
        return Err(AppError::BadRequest("Tick the box to say you mean to delete this class, then delete it.".into()));
    }
    super::delete(&state.db, &user.id, &id).await?;
    Ok(to("/classes"))
}

#[derive(Deserialize)]
struct PublishForm {
    /// `publish` or `unpublish`.
    #[serde(default)]
    action: String,
    /// A class to hand the lesson to at the same time.
    #[serde(default)]
    class: String,
    /// How much the tutor helps on it (`models::TutorPolicy`'s word), set
    /// with any action; `tutor` as the action sets only that.
    #[serde(default)]
    tutor: String,
}

/// The lesson page's "Publish" / "Unpublish" (with, optionally, a class
/// to add the lesson to), back to the lesson.
async fn form_publish(State(state): State<AppState>, TeacherPage(user): TeacherPage, ApiPath(id): ApiPath<String>, ApiForm(form): ApiForm<PublishForm>) -> Result<Response> {
    if !form.tutor.is_empty() {
        let policy = crate::models::TutorPolicy::from_wire(&form.tutor).ok_or_else(|| AppError::BadRequest("Choose full help, hints only or off.".into()))?;
        crate::server::safety::policy::set(&state.db, &user.id, &id, policy).await?;
    }
    if !form.class.is_empty() {
        super::add_lesson(&state.db, &user.id, &form.class, &id).await?;
    }
    match form.action.as_str() {
        "tutor" => {}
        "unpublish" => super::unpublish(&state.db, &user.id, &id).await?,
        _ => {
            super::publish(&state.db, &user.id, &id).await?;
        }
    }
    Ok(to(&format!("/lessons/{id}")))
}

/// A lesson's results page: each student's progress and score.
pub async fn lesson_results(state: &AppState, user: &crate::models::UserInfo, id: &str) -> Result<crate::models::LessonResults> {
    let (title, xml, items) = published_items(state, &user.id, id).await?;
    let rows = sheets::results(&state.db, &user.id, id, &items).await?;
    let tell_wrong_answers = crate::server::reactions::tells_wrong_answers(&state.db, &user.id).await?;
    let open = lesson::parse(&xml).map(|root| lesson::open::open_items(&root)).unwrap_or_default();
    let drafts = super::feedback::queue_of(&state.db, id, &open, &rows).await?;
    let open_items = open.into_iter().map(|i| (i.id, i.prompt)).collect();
    let deleted_students: i64 = sqlx::query_scalar("SELECT deleted_students FROM lessons WHERE id = $1").bind(id).fetch_one(&state.db).await?;
    Ok(crate::models::LessonResults { lesson_id: id.to_string(), title, rows, tell_wrong_answers, open_items, drafts, deleted_students })
}

/// One student's work on a lesson, for their teacher.
pub async fn student_work_page(state: &AppState, user: &crate::models::UserInfo, id: &str, student: &str) -> Result<crate::models::StudentWork> {
    use crate::models::{TutorChat, TutorLine};
    let (title, xml, items) = published_items(state, &user.id, id).await?;
    let work = student_work(state, &user.id, id, student).await?;
    let email: String = sqlx::query_scalar("SELECT email FROM users WHERE id = $1").bind(student).fetch_one(&state.db).await?;
    let checked = sheets::mark(&items, &work.sheet.answers);
    let score = format!("{} of {} marked items right; {} answers for you to read.", checked.right, checked.graded, checked.for_teacher);
    let feedback = super::feedback::for_student(&state.db, id, student).await?;
    let sheet_html = lesson::parse(&xml).map(|root| lesson::to_answer_sheet(&root, &work.sheet.answers, &checked.marks, &feedback)).unwrap_or_default();
    let chats = work
        .chats
        .into_iter()
        .map(|c| TutorChat {
            title: c.title,
            messages: c
                .messages
                .into_iter()
                .map(|m| match m.role {
                    crate::chat::message::Role::User => TutorLine::Student(m.content),
                    crate::chat::message::Role::Assistant => TutorLine::Tutor(crate::chat::markdown::render(&m.content)),
                })
                .collect(),
        })
        .collect();
    Ok(crate::models::StudentWork { lesson_id: id.to_string(), title, email, sheet_html, score, chats })
}
