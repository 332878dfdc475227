//! The students' doors: joining a class, their classes, a published lesson
//! with their answers, saving answers as they type, and checking them. Each
//! takes a `Member` and finds the lesson through the student's own classes
//! (`classes::student_lesson`): anything else is a 404, and nothing here
//! ever answers with a key, a note or the teacher's draft.

use axum::{
    extract::State,
    http::StatusCode,
    response::{IntoResponse, Redirect, Response},
    routing::{get, post},
    Json, Router,
};
use serde::{Deserialize, Serialize};

use super::sheets;
use crate::{
    lesson::{
        self,
        answers::{self, Item},
    },
    models::{StudentLessonView, UserInfo},
    server::{
        http::client_addr::ClientAddr,
        accounts::current_user::Member,
        error::{AppError, Result},
        http::extractors::{ApiForm, ApiJson, ApiPath},
        state::AppState,
    },
};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api/learn", get(api_classes))
        .route("/api/learn/join", post(api_join))
        .route("/api/learn/lessons/{id}", get(api_lesson))
        .route("/api/learn/lessons/{id}/answers", axum::routing::put(api_save))
        .route("/api/learn/lessons/{id}/sheet", post(api_save_form))
        .route("/api/learn/lessons/{id}/check", post(api_check))
        .route("/learn/join", post(form_join))
        .route("/learn/lessons/{id}/answers", post(form_answers))
}

/// The student's view of a lesson, or `NotFound`.
pub async fn view(state: &AppState, student: &UserInfo, lesson_id: &str) -> Result<StudentLessonView> {
    let l = super::student_lesson(&state.db, &student.id, lesson_id).await?;
    let sheet = sheets::load(&state.db, lesson_id, &student.id).await?;
    // Only what the teacher approved (`feedback` never reads a draft here).
    let feedback = super::feedback::for_student(&state.db, lesson_id, &student.id).await?;
    let feedback_notice = super::feedback::notice(&state.db, lesson_id, &student.id).await?;
    let html = match lesson::parse(&l.xml) {
        Ok(root) => lesson::to_answer_sheet(&root, &sheet.answers, &sheet.marks, &feedback),
        Err(_) => "<p class=\"form-error\">This lesson cannot be shown. Tell your teacher.</p>".into(),
    };
    let score = match (sheet.right, sheet.graded, &sheet.checked_at) {
        (Some(r), Some(g), Some(_)) => Some(score_line(r, g)),
        _ => None,
    };
    let tutor = crate::server::safety::policy::of_lesson(&state.db, lesson_id).await?;
    Ok(StudentLessonView { id: l.id, title: l.title, revision: l.revision, html, seen: sheet.version, score, answers: sheet.answers, feedback_notice, tutor })
}

/// A score as the student reads it.
pub fn score_line(right: i64, graded: i64) -> String {
    format!("{right} of {graded} right")
}

async fn api_classes(State(state): State<AppState>, Member(user): Member) -> Result<Json<Vec<super::StudentClass>>> {
    Ok(Json(super::student_classes(&state.db, &user.id).await?))
}

#[derive(Deserialize)]
struct JoinRequest {
    #[serde(default)]
    code: String,
}

#[derive(Serialize)]
struct Joined {
    id: String,
    name: String,
}

async fn api_join(State(state): State<AppState>, ClientAddr(client): ClientAddr, Member(user): Member, ApiJson(body): ApiJson<JoinRequest>) -> Result<Json<Joined>> {
    state.limits.join_code(client, Some(&user.id)).await?;
    let (id, name) = super::join(&state.db, &user, &body.code).await?;
    Ok(Json(Joined { id, name }))
}

async fn api_lesson(State(state): State<AppState>, Member(user): Member, ApiPath(id): ApiPath<String>) -> Result<Json<StudentLessonView>> {
    Ok(Json(view(&state, &user, &id).await?))
}

#[derive(Deserialize)]
struct SaveRequest {
    /// The sheet's version the client last saw (0 for none).
    #[serde(default)]
    seen: i64,
    answers: std::collections::BTreeMap<String, String>,
}

/// The reply to a save: 200, or 409 when some items were changed
/// elsewhere (those were kept; the others were saved).
fn saved_reply(saved: sheets::Saved) -> Response {
    let status = if saved.conflicts.is_empty() { StatusCode::OK } else { StatusCode::CONFLICT };
    (status, Json(saved)).into_response()
}

/// The items of a lesson the student may see (its published version).
async fn items(state: &AppState, user: &UserInfo, lesson_id: &str) -> Result<Vec<Item>> {
    let l = super::student_lesson(&state.db, &user.id, lesson_id).await?;
    Ok(sheets::items_of(&l.xml))
}

async fn api_save(State(state): State<AppState>, Member(user): Member, ApiPath(id): ApiPath<String>, ApiJson(body): ApiJson<SaveRequest>) -> Result<Response> {
    let sent: Vec<(String, String)> = body.answers.into_iter().collect();
    let items = items(&state, &user, &id).await?;
    Ok(saved_reply(sheets::save(&state.db, &id, &user.id, &items, &sent, body.seen).await?))
}

/// The answer sheet's form as it stands (the page saves it as the student
/// types): its fields, `_seen` among them, URL-encoded as a form sends
/// them, in one JSON string (the browser's client speaks JSON).
async fn api_save_form(State(state): State<AppState>, Member(user): Member, ApiPath(id): ApiPath<String>, ApiJson(form): ApiJson<String>) -> Result<Response> {
    let fields: Vec<(String, String)> =
        serde_urlencoded::from_str(&form).map_err(|e| AppError::BadRequest(format!("Send the answer sheet's fields URL-encoded in a JSON string ({e}).")))?;
    let items = items(&state, &user, &id).await?;
    let sent = sheets::from_fields(&items, &fields);
    Ok(saved_reply(sheets::save(&state.db, &id, &user.id, &items, &sent, seen_of(&fields)).await?))
}

fn seen_of(fields: &[(String, String)]) -> i64 {
    fields.iter().find(|(k, _)| k == "_seen").and_then(|(_, v)| v.trim().parse().ok()).unwrap_or(0)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CheckReply {
    #[serde(flatten)]
    checked: sheets::Checked,
    score: String,
}

/// A student's "Check answers": marked and kept, then what follows every
/// check: the teacher's wrong-answer counts and, for a student who came from
/// an LMS, the score sent back there.
async fn check(state: &AppState, lesson_id: &str, student_id: &str, items: &[Item]) -> Result<sheets::Checked> {
    let (checked, answers, checks) = sheets::check(&state.db, lesson_id, student_id, items).await?;
    super::wrong_answers::after_check(state, lesson_id, items, &checked, &answers, checks).await;
    crate::server::lti::grades::after_check(state, lesson_id, student_id, &checked).await;
    Ok(checked)
}

async fn api_check(State(state): State<AppState>, Member(user): Member, ApiPath(id): ApiPath<String>) -> Result<Json<CheckReply>> {
    let items = items(&state, &user, &id).await?;
    let checked = check(&state, &id, &user.id, &items).await?;
    Ok(Json(CheckReply { score: score_line(checked.right, checked.graded), checked }))
}

// ---- pages and forms ----

/// The signed-in account, or to sign in and back to `back`.
fn signed_in(user: Result<Option<Member>, AppError>, back: &str) -> std::result::Result<UserInfo, Response> {
    match user {
        Ok(Some(Member(u))) => Ok(u),
        Ok(None) => Err(Redirect::to(&format!("/signin?{}", serde_urlencoded::to_string([("next", back)]).unwrap_or_default())).into_response()),
        Err(e) => Err(e.into_response()),
    }
}

/// "My classes": the student's classes and the scores of what they checked.
pub async fn home(state: &AppState, user: &UserInfo) -> Result<crate::models::StudentHome, AppError> {
    let classes = super::student_classes(&state.db, &user.id).await?;
    let rows: Vec<(String, Option<i64>, Option<i64>)> =
        sqlx::query_as("SELECT lesson_id, right_count, graded FROM student_sheets WHERE student_id = $1 AND checked_at IS NOT NULL")
            .bind(&user.id)
            .fetch_all(&state.db)
            .await?;
    let scores = rows.into_iter().filter_map(|(l, r, g)| Some((l, score_line(r?, g?)))).collect();
    Ok(crate::models::StudentHome { classes, scores })
}

async fn form_join(State(state): State<AppState>, ClientAddr(client): ClientAddr, user: Result<Option<Member>, AppError>, ApiForm(form): ApiForm<JoinRequest>) -> Response {
    let user = match signed_in(user, "/learn") {
        Ok(u) => u,
        Err(r) => return r,
    };
    if let Err(e) = state.limits.join_code(client, Some(&user.id)).await {
        return e.into_response();
    }
    match super::join(&state.db, &user, &form.code).await {
        Ok(_) => Redirect::to("/learn").into_response(),
        Err(AppError::NotFound) => Redirect::to("/learn?error=code").into_response(),
        Err(e) => e.into_response(),
    }
}

/// What a join link opens. Naming the class is a try of its code, so each
/// look counts against the client's (and the account's) limit.
pub async fn join_view(state: &AppState, client: std::net::IpAddr, user: Option<UserInfo>, code: &str) -> Result<crate::models::JoinView, AppError> {
    state.limits.join_code(client, user.as_ref().map(|u| u.id.as_str())).await?;
    let code = super::tidy_code(code);
    let class = super::by_code(&state.db, &code).await?;
    Ok(crate::models::JoinView { code, class_name: class.map(|c| c.1), user, sso: state.sso.buttons() })
}

/// The answer sheet sent as a form: saved; then, as its button asked, an
/// item of a sequence moved or the answers checked; back to the lesson.
async fn form_answers(State(state): State<AppState>, user: Result<Option<Member>, AppError>, ApiPath(id): ApiPath<String>, ApiForm(fields): ApiForm<Vec<(String, String)>>) -> Response {
    let back = format!("/learn/lessons/{id}");
    let user = match signed_in(user, &back) {
        Ok(u) => u,
        Err(r) => return r,
    };
    let done = async {
        let items = items(&state, &user, &id).await?;
        let mut sent = sheets::from_fields(&items, &fields);
        if let Some((_, mv)) = fields.iter().find(|(k, _)| k == "_move") {
            moved(&mut sent, mv);
        }
        let saved = sheets::save(&state.db, &id, &user.id, &items, &sent, seen_of(&fields)).await?;
        if fields.iter().any(|(k, _)| k == "_check") {
            check(&state, &id, &user.id, &items).await?;
        }
        Ok::<_, AppError>(saved.conflicts.len())
    };
    match done.await {
        Ok(0) => Redirect::to(&back).into_response(),
        Ok(n) => Redirect::to(&format!("{back}?conflicts={n}")).into_response(),
        Err(e) => e.into_response(),
    }
}

/// "Move up" / "Move down" without the page's code: `up:<sequence>:<item>`.
fn moved(sent: &mut [(String, String)], how: &str) {
    let mut parts = how.splitn(3, ':');
    let (Some(way), Some(seq), Some(item)) = (parts.next(), parts.next(), parts.next()) else { return };
    let Some((_, value)) = sent.iter_mut().find(|(k, _)| k == seq) else { return };
    let mut order = answers::list(value);
    let Some(at) = order.iter().position(|i| i == item) else { return };
    let to = match way {
        "up" if at > 0 => at - 1,
        "down" if at + 1 < order.len() => at + 1,
        _ => return,
    };
    order.swap(at, to);
    *value = order.join(",");
}

#[cfg(test)]
mod tests {
    use super::moved;

    #[test]
    fn moving_an_item_swaps_it_with_its_neighbour() {
        let mut sent = vec![("e1".to_string(), "a,b,c".to_string())];
        moved(&mut sent, "up:e1:b");
        assert_eq!(sent[0].1, "b,a,c");
        moved(&mut sent, "up:e1:b");
        assert_eq!(sent[0].1, "b,a,c");
        moved(&mut sent, "down:e1:a");
        assert_eq!(sent[0].1, "b,c,a");
    }
}
