//! The JSON API for lessons as a collection (`library`): list and search,
//! create (empty or from XML), read, rename, duplicate, delete to the trash,
//! restore, and delete forever. Bearer or cookie; another teacher's lesson is
//! 404 like one that does not exist.

use axum::{
    extract::State,
    http::StatusCode,
    response::{IntoResponse, Response},
    routing::{delete, get, post},
    Json, Router,
};
use serde::{Deserialize, Serialize};

use crate::server::{
    accounts::current_user::CurrentUser,
    error::Result,
    http::extractors::{ApiJson, ApiPath, ApiQuery},
    lessons::events,
    lessons,
    lessons::library::{self, Sort},
    state::AppState,
};
use crate::{
    lesson::LessonHtml,
    models::{Lesson, LessonEvent, LessonList, TrashedLesson},
};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/lessons", get(list).post(create))
        .route("/api/lessons/{id}", get(open).patch(rename).delete(trash))
        .route("/api/lessons/{id}/duplicate", post(duplicate))
        .route("/api/lessons/{id}/restore", post(restore))
        .route("/api/trash", get(list_trash))
        .route("/api/trash/{id}", delete(delete_forever))
}

#[derive(Deserialize)]
struct ListQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    sort: Sort,
    limit: Option<i64>,
    #[serde(default)]
    offset: i64,
}

/// A lesson as the API answers it: its document and how it renders.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LessonReply {
    id: String,
    title: String,
    revision: i64,
    document_xml: String,
    updated_at: String,
    review_edits: bool,
    edit_mode: crate::models::EditMode,
    html: LessonHtml,
}

impl From<Lesson> for LessonReply {
    fn from(l: Lesson) -> Self {
        let html = crate::lesson::render_both(&l.document_xml);
        Self {
            id: l.id,
            title: l.title,
            revision: l.revision,
            document_xml: l.document_xml,
            updated_at: l.updated_at,
            review_edits: l.review_edits,
            edit_mode: l.edit_mode,
            html,
        }
    }
}

#[derive(Deserialize)]
struct NewLesson {
    #[serde(default)]
    title: String,
    /// A whole lesson document; without it the lesson starts from the template.
    xml: Option<String>,
}

#[derive(Deserialize)]
struct Rename {
    title: String,
}

async fn list(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiQuery(q): ApiQuery<ListQuery>) -> Result<Json<LessonList>> {
    let limit = q.limit.unwrap_or(50);
    Ok(Json(library::find(&state.db, &user.id, &q.q, q.sort, limit, q.offset).await?))
}

async fn create(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiJson(body): ApiJson<NewLesson>) -> Result<Response> {
    state.limits.lesson(&user.id).await?;
    let lesson = match body.xml.as_deref() {
        Some(xml) => library::import(&state.db, &user.id, Some(&body.title), xml).await?,
        None => {
            let lesson = lessons::create(&state.db, &user.id, &body.title).await?;
            // The assistant may greet the new lesson (`lessonCreated`).
            state.lesson_listener.created(&state, &user.id, &lesson.id).await;
            lesson
        }
    };
    Ok((StatusCode::CREATED, Json(LessonReply::from(lesson))).into_response())
}

async fn open(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Json<LessonReply>> {
    Ok(Json(lessons::get_editable(&state.db, &user.id, &id).await?.into()))
}

async fn rename(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    ApiPath(id): ApiPath<String>,
    ApiJson(body): ApiJson<Rename>,
) -> Result<Json<LessonReply>> {
    let lesson = library::rename(&state.db, &user.id, &id, &body.title).await?;
    events::tell(&state.bus, &state.db, &id, LessonEvent::Lesson).await;
    Ok(Json(lesson.into()))
}

async fn duplicate(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Response> {
    state.limits.lesson(&user.id).await?;
    let copy = library::duplicate(&state.db, &user.id, &id).await?;
    Ok((StatusCode::CREATED, Json(LessonReply::from(copy))).into_response())
}

/// What a delete did.
#[derive(Serialize)]
struct TrashReply {
    status: &'static str,
    /// Days until the lesson is deleted for good.
    days: u32,
}

async fn trash(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Json<TrashReply>> {
    library::trash(&state.db, &state.turns, &user.id, &id).await?;
    events::tell(&state.bus, &state.db, &id, LessonEvent::Lesson).await;
    Ok(Json(TrashReply { status: "trashed", days: library::TRASH_DAYS }))
}

async fn restore(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Json<LessonReply>> {
    Ok(Json(library::restore(&state.db, &user.id, &id).await?.into()))
}

async fn list_trash(State(state): State<AppState>, CurrentUser(user): CurrentUser) -> Result<Json<Vec<TrashedLesson>>> {
    Ok(Json(library::list_trash(&state.db, &user.id).await?))
}

async fn delete_forever(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<StatusCode> {
    library::delete_forever(&state.db, &user.id, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}
