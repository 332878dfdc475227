//! The teacher's doors to feedback on open answers: "Draft feedback" (a
//! turn of their assistant, which reads the answers and keeps drafts), the
//! review queue (`GET /api/lessons/{id}/feedback`), and approving,
//! editing then approving, or discarding drafts, one by one or all at
//! once, by the API and by the Results page's forms. Every door looks the
//! lesson up by its owner: another teacher's is a 404, a student a 403.

use axum::{
    extract::State,
    response::{IntoResponse, Redirect, Response},
    routing::{get, post},
    Json, Router,
};
use serde::{Deserialize, Serialize};

use super::feedback::{self, Decision};
use crate::{
    lesson::open::open_items,
    models::FeedbackDraft,
    server::{
        accounts::current_user::{CurrentUser, TeacherPage},
        chats::turns::{self, OnBehalf, TurnKind},
        error::{AppError, Result},
        http::{
            extractors::{ApiForm, ApiJson, ApiPath},
        },
        state::AppState,
    },
};

pub fn router() -> axum::Router<AppState> {
    Router::new()
        .route("/api/lessons/{id}/feedback", get(api_queue))
        .route("/api/lessons/{id}/feedback/draft", post(api_draft))
        .route("/api/lessons/{id}/feedback/approve", post(api_approve))
        .route("/api/lessons/{id}/feedback/discard", post(api_discard))
        .route("/lessons/{id}/feedback/draft", post(form_draft))
        .route("/lessons/{id}/feedback", post(form_decide))
}

/// What the teacher sees in the chat where a typed message would be.
pub const NOTE: &str = "Draft feedback";

const PROMPT: &str = include_str!("../../../prompts/chat/draft_feedback.md");

/// Starts "Draft feedback" for one open item, or all of them; its chat and
/// turn. Refused when nobody has answered an open item yet.
pub async fn start(state: &AppState, owner: &str, lesson_id: &str, item: Option<&str>) -> Result<(String, String)> {
    let (_, xml) = super::published_xml(&state.db, owner, lesson_id).await?;
    let root = crate::lesson::parse(&xml).map_err(|_| AppError::Conflict("The lesson students have cannot be read.".into()))?;
    let items: Vec<_> = open_items(&root).into_iter().filter(|i| item.is_none_or(|id| i.id == id)).collect();
    if items.is_empty() {
        return Err(match item {
            Some(_) => AppError::NotFound,
            None => AppError::Conflict("This lesson has no short-answer questions or writing to give feedback on.".into()),
        });
    }
    let ids: Vec<&str> = items.iter().map(|i| i.id.as_str()).collect();
    let answered: Vec<String> = sqlx::query_scalar("SELECT DISTINCT item_id FROM student_answers WHERE lesson_id = $1 AND value <> ''")
        .bind(lesson_id)
        .fetch_all(&state.db)
        .await?;
    if !answered.iter().any(|a| ids.contains(&a.as_str())) {
        return Err(AppError::Conflict("No student has answered the open questions yet: there is nothing to give feedback on.".into()));
    }
    let listed: Vec<String> = items.iter().map(|i| format!("- {} ({}): {}", i.id, i.kind, i.prompt.chars().take(120).collect::<String>())).collect();
    let content = format!("{}\n\nItems to draft feedback for: {}\n{}", PROMPT.trim(), ids.join(", "), listed.join("\n"));
    let turn = OnBehalf { owner_id: owner, lesson_id, chat_id: None, note: NOTE.into(), content, kind: TurnKind::Feedback };
    let (chat, log) = turns::start_for(state, turn).await?;
    Ok((chat, log.turn_id.clone()))
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct DraftBody {
    /// One open item; all of them when left out.
    #[serde(default)]
    item_id: Option<String>,
}

async fn api_draft(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>, body: Option<ApiJson<DraftBody>>) -> Result<Response> {
    let body = body.map(|ApiJson(b)| b).unwrap_or_default();
    Ok(super::improve::started(start(&state, &user.id, &id, body.item_id.as_deref()).await?))
}

async fn api_queue(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Json<Vec<FeedbackDraft>>> {
    Ok(Json(feedback::queue(&state.db, &user.id, &id).await?))
}

/// One draft decided: the student and the item, and for an approval the
/// teacher's edits.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Decided {
    student_id: String,
    item_id: String,
    #[serde(default)]
    feedback: Option<String>,
    #[serde(default)]
    points: Option<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Batch {
    /// The drafts decided; all of the lesson's when left out.
    #[serde(default)]
    drafts: Option<Vec<Decided>>,
}

#[derive(Serialize)]
struct Done {
    decided: usize,
}

/// The drafts a batch names, or all that wait.
async fn batch(state: &AppState, owner: &str, lesson_id: &str, drafts: Option<Vec<Decided>>) -> Result<Vec<Decided>> {
    Ok(match drafts {
        Some(d) => d,
        None => feedback::queue(&state.db, owner, lesson_id)
            .await?
            .into_iter()
            .map(|d| Decided { student_id: d.student_id, item_id: d.item_id, feedback: None, points: None })
            .collect(),
    })
}

async fn api_approve(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>, ApiJson(body): ApiJson<Batch>) -> Result<Json<Done>> {
    let drafts = batch(&state, &user.id, &id, body.drafts).await?;
    for d in &drafts {
        feedback::decide(&state.db, &user.id, &id, &d.student_id, &d.item_id, Decision::Approve { feedback: d.feedback.clone(), points: d.points }).await?;
    }
    Ok(Json(Done { decided: drafts.len() }))
}

async fn api_discard(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>, ApiJson(body): ApiJson<Batch>) -> Result<Json<Done>> {
    let drafts = batch(&state, &user.id, &id, body.drafts).await?;
    for d in &drafts {
        feedback::decide(&state.db, &user.id, &id, &d.student_id, &d.item_id, Decision::Discard).await?;
    }
    Ok(Json(Done { decided: drafts.len() }))
}

#[derive(Deserialize)]
struct DraftForm {
    /// One open item, or empty for all.
    #[serde(default)]
    item: String,
}

/// The Results page's "Draft feedback".
async fn form_draft(State(state): State<AppState>, TeacherPage(user): TeacherPage, ApiPath(id): ApiPath<String>, ApiForm(form): ApiForm<DraftForm>) -> Result<Response> {
    let item = Some(form.item.as_str()).filter(|i| !i.is_empty());
    super::improve::after_form(start(&state, &user.id, &id, item).await, &id, "feedback")
}

/// A decision from the review queue: `action` is `approve` or `discard`
/// for the draft of `student` on `item` (with the teacher's `feedback`
/// and `points` as the form has them), or `approve_all` / `discard_all`.
#[derive(Deserialize)]
struct DecideForm {
    action: String,
    #[serde(default)]
    student: String,
    #[serde(default)]
    item: String,
    #[serde(default)]
    feedback: Option<String>,
    #[serde(default)]
    points: Option<String>,
}

async fn form_decide(State(state): State<AppState>, TeacherPage(user): TeacherPage, ApiPath(id): ApiPath<String>, ApiForm(form): ApiForm<DecideForm>) -> Result<Response> {
    let points = match form.points.as_deref().map(str::trim).filter(|p| !p.is_empty()) {
        Some(p) => Some(p.parse::<i64>().map_err(|_| AppError::BadRequest(format!("\"{p}\" is not a number of points.")))?),
        None => None,
    };
    match form.action.as_str() {
        "approve" => feedback::decide(&state.db, &user.id, &id, &form.student, &form.item, Decision::Approve { feedback: form.feedback, points }).await?,
        "discard" => feedback::decide(&state.db, &user.id, &id, &form.student, &form.item, Decision::Discard).await?,
        "approve_all" | "discard_all" => {
            for d in batch(&state, &user.id, &id, None).await? {
                let decision = if form.action == "approve_all" { Decision::Approve { feedback: None, points: None } } else { Decision::Discard };
                feedback::decide(&state.db, &user.id, &id, &d.student_id, &d.item_id, decision).await?;
            }
        }
        other => return Err(AppError::BadRequest(format!("Unknown action \"{other}\"."))),
    }
    Ok(Redirect::to(&format!("/lessons/{id}/results#feedback")).into_response())
}
