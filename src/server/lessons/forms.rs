//! The browser's plain HTML forms for lessons: create, import a file,
//! duplicate, delete to the trash, restore, delete forever, and the
//! "Download XML" link. Like the sign-in forms, they answer with redirects,
//! so they work as soon as the page arrives and need no code in the browser
//! bundle. Creating goes to the new lesson, or back to the list with a short
//! error code and the title that was typed (so nothing is lost). Opening
//! `/lessons/new` in the address bar leads to the list, where the form is.

use axum::{
    extract::{Multipart, State},
    http::header,
    response::{IntoResponse, Redirect, Response},
    routing::{get, post},
    Router,
};
use serde::Deserialize;

use crate::server::{
    accounts::current_user::CurrentUser,
    http::error::AppError,
    http::extractors::{ApiForm, ApiPath},
    lessons::import_reports,
    lessons::events,
    lessons,
    lessons::library,
    state::AppState,
};
use crate::{
    lesson,
    models::{ImportReport, LessonEvent},
    refusals::TitleRefusal,
};

/// Where the form posts. Not a lesson page, though it looks like one.
pub const NEW_LESSON_PATH: &str = "/lessons/new";

pub fn router() -> Router<AppState> {
    Router::new()
        .route(NEW_LESSON_PATH, get(|| async { Redirect::to("/") }).post(form_create))
        .route("/lessons/{id}/duplicate", post(form_duplicate))
        .route("/lessons/{id}/delete", post(form_delete))
        .route("/lessons/{id}/restore", post(form_restore))
        .route("/lessons/{id}/download", get(download))
        .route("/trash/{id}/delete", post(form_delete_forever))
        .route(IMPORT_PATH, get(|| async { Redirect::to("/") }).post(form_import))
}

/// Where "Import lesson" posts its file.
pub const IMPORT_PATH: &str = "/lessons/import";

/// "Import lesson": a lesson file (Margin's XML, or a .docx made by
/// "Download for Word") as a new lesson, then to it; when the file has problems, nothing is created and the list shows
/// every problem with its line. A QTI package (or one item) becomes a new
/// lesson of its exercises; what could not be brought in is listed on the
/// lessons page, with a link to the lesson.
async fn form_import(State(state): State<AppState>, user: Result<Option<CurrentUser>, AppError>, mut form: Multipart) -> Response {
    let CurrentUser(user) = match signed_in(user) {
        Ok(u) => u,
        Err(e) => return answer(Err(e)),
    };
    let (mut file, mut bytes) = (String::new(), None);
    loop {
        match form.next_field().await {
            Ok(Some(field)) if field.name() == Some("file") => {
                file = field.file_name().unwrap_or("lesson.xml").chars().take(200).collect();
                bytes = field.bytes().await.ok();
            }
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(_) => break,
        }
    }
    // Counted once the file is here, so that the refusal can be reported like any other.
    let limited = state.limits.lesson(&user.id).await.err();
    let problems = match (limited, bytes.as_deref().map(Upload::of)) {
        (Some(limited), _) => vec![limited.to_string()],
        (None, None) => vec!["Choose a lesson file (.xml, a .docx Margin made, or a QTI package) to import.".to_string()],
        (None, Some(Err(why))) => vec![why],
        (None, Some(Ok(Upload::Lesson(xml)))) => match library::import(&state.db, &user.id, None, &xml).await {
            Ok(lesson) => return Redirect::to(&format!("/lessons/{}", lesson.id)).into_response(),
            Err(AppError::InvalidLesson(errors)) => errors.iter().map(|e| sentence(&e.to_string())).collect(),
            Err(e @ (AppError::PayloadTooLarge(_) | AppError::Title(_))) => vec![e.to_string()],
            Err(e) => return answer(Err(e)),
        },
        (None, Some(Ok(Upload::Quiz(quiz)))) => {
            let title: String = quiz.title.clone().unwrap_or_else(|| file_stem(&file)).chars().take(120).collect();
            match library::import(&state.db, &user.id, Some(&title), &quiz.titled(&title)).await {
                Ok(lesson) if quiz.left_out.is_empty() => return Redirect::to(&format!("/lessons/{}", lesson.id)).into_response(),
                Ok(lesson) => {
                    let report = ImportReport { file, problems: quiz.left_out, made: Some((lesson.id, lesson.title)) };
                    return match import_reports::keep(&state.db, &user.id, &report).await {
                        Ok(token) => Redirect::to(&format!("/?import={token}")).into_response(),
                        Err(e) => answer(Err(e)),
                    };
                }
                Err(AppError::InvalidLesson(errors)) => errors.iter().map(|e| sentence(&e.to_string())).collect(),
                Err(e @ (AppError::PayloadTooLarge(_) | AppError::Title(_))) => vec![e.to_string()],
                Err(e) => return answer(Err(e)),
            }
        }
    };
    match import_reports::keep(&state.db, &user.id, &ImportReport { file, problems, made: None }).await {
        Ok(token) => Redirect::to(&format!("/?import={token}")).into_response(),
        Err(e) => answer(Err(e)),
    }
}

/// What an uploaded file holds: a lesson (Margin's XML, or the one a .docx
/// made here carries), or a quiz package (QTI, or a single QTI item) to make
/// one from; or why it can be neither, as a sentence.
enum Upload {
    Lesson(String),
    Quiz(lesson::qti::Imported),
}

impl Upload {
    fn of(bytes: &[u8]) -> Result<Upload, String> {
        if lesson::qti::is_package(bytes) {
            return lesson::qti::lesson_of_package(bytes).map(Upload::Quiz);
        }
        // A .docx (a zip archive) made by "Download for Word" carries its lesson.
        if bytes.starts_with(b"PK\x03\x04") {
            return lesson::word::lesson_of_docx(bytes).map(Upload::Lesson);
        }
        let text = std::str::from_utf8(bytes).map_err(|_| "The file is not text in UTF-8. Save it as UTF-8 XML and try again.".to_string())?;
        match lesson::qti::lesson_of_qti_xml(text) {
            Some(quiz) => quiz.map(Upload::Quiz),
            None => Ok(Upload::Lesson(text.to_string())),
        }
    }
}

/// A file's name without its folder and ending, as a title.
fn file_stem(file: &str) -> String {
    let name = file.rsplit(['/', '\\']).next().unwrap_or(file);
    name.rsplit_once('.').map(|(stem, _)| stem).unwrap_or(name).to_string()
}

/// A teacher's form sent without a session goes to sign in; a lesson that
/// is not theirs (or not there) to the app's "not found" page.
fn answer(done: Result<String, AppError>) -> Response {
    match done {
        Ok(to) => Redirect::to(&to).into_response(),
        Err(AppError::Unauthorized) => Redirect::to("/signin").into_response(),
        Err(AppError::NotFound) => Redirect::to("/lessons/not-found").into_response(),
        Err(e) => {
            tracing::error!(error = %e, "a lesson form failed");
            Redirect::to("/?error=server").into_response()
        }
    }
}

fn signed_in(user: Result<Option<CurrentUser>, AppError>) -> Result<CurrentUser, AppError> {
    user?.ok_or(AppError::Unauthorized)
}

/// `text` with a capital first letter.
fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// "Duplicate": to the copy.
async fn form_duplicate(State(state): State<AppState>, user: Result<Option<CurrentUser>, AppError>, ApiPath(id): ApiPath<String>) -> Response {
    answer(async {
        let CurrentUser(user) = signed_in(user)?;
        state.limits.lesson(&user.id).await?;
        let copy = library::duplicate(&state.db, &user.id, &id).await?;
        Ok(format!("/lessons/{}", copy.id))
    }.await)
}

/// "Delete": to the list, which says the lesson is in the trash and offers Undo.
async fn form_delete(State(state): State<AppState>, user: Result<Option<CurrentUser>, AppError>, ApiPath(id): ApiPath<String>) -> Response {
    answer(async {
        let CurrentUser(user) = signed_in(user)?;
        library::trash(&state.db, &state.turns, &user.id, &id).await?;
        events::tell(&state.bus, &state.db, &id, LessonEvent::Lesson).await;
        Ok(format!("/?trashed={id}"))
    }.await)
}

/// "Restore" (in the trash, or Undo after a delete): to the lesson.
async fn form_restore(State(state): State<AppState>, user: Result<Option<CurrentUser>, AppError>, ApiPath(id): ApiPath<String>) -> Response {
    answer(async {
        let CurrentUser(user) = signed_in(user)?;
        library::restore(&state.db, &user.id, &id).await?;
        Ok(format!("/lessons/{id}"))
    }.await)
}

/// "Delete forever" in the trash: back to the trash.
async fn form_delete_forever(State(state): State<AppState>, user: Result<Option<CurrentUser>, AppError>, ApiPath(id): ApiPath<String>) -> Response {
    answer(async {
        let CurrentUser(user) = signed_in(user)?;
        library::delete_forever(&state.db, &user.id, &id).await?;
        Ok("/trash".to_string())
    }.await)
}

/// "Download XML": the lesson's document as a file named after the lesson.
async fn download(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Response, AppError> {
    let lesson = lessons::get_editable(&state.db, &user.id, &id).await?;
    let (ascii, full) = file_names(&lesson.title);
    let disposition = format!("attachment; filename=\"{ascii}.xml\"; filename*=UTF-8''{}.xml", crate::url::percent_encode(&full));
    Ok((
        [
            (header::CONTENT_TYPE, "application/xml; charset=utf-8".to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        lesson.document_xml,
    )
        .into_response())
}

/// File names from a title: letters (any script), digits, spaces and dashes
/// kept, the rest dropped; and the same in ASCII alone, for browsers that
/// read only `filename=`.
fn file_names(title: &str) -> (String, String) {
    let tidy = |keep: &dyn Fn(char) -> bool| {
        let kept: String = title.chars().map(|c| if keep(c) { c } else { ' ' }).collect();
        let joined = kept.split_whitespace().collect::<Vec<_>>().join(" ");
        if joined.is_empty() {
            "lesson".to_string()
        } else {
            joined
        }
    };
    let full = tidy(&|c: char| c.is_alphanumeric() || c == '-');
    let ascii = tidy(&|c: char| c.is_ascii_alphanumeric() || c == '-');
    (ascii, full)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn download_names_come_from_the_title_and_stay_header_safe() {
        assert_eq!(file_names("Verbs: the \"present\" tense"), ("Verbs the present tense".into(), "Verbs the present tense".into()));
        assert_eq!(file_names("Les verbes français"), ("Les verbes fran ais".into(), "Les verbes français".into()));
        assert_eq!(file_names("\r\n;\\"), ("lesson".into(), "lesson".into()));
    }
}

#[derive(Deserialize)]
struct NewLesson {
    #[serde(default)]
    title: String,
}

/// What the lessons page is told went wrong.
fn refusal(e: &AppError) -> TitleRefusal {
    match e {
        AppError::Title(r) => *r,
        _ => TitleRefusal::Server,
    }
}

async fn form_create(
    State(state): State<AppState>,
    user: Result<Option<CurrentUser>, AppError>,
    ApiForm(form): ApiForm<NewLesson>,
) -> Response {
    let user = match user {
        Ok(Some(CurrentUser(user))) => user,
        Ok(None) => return Redirect::to("/signin").into_response(),
        Err(e) => return back(&e, &form.title),
    };
    if let Err(e) = state.limits.lesson(&user.id).await {
        return back(&e, &form.title);
    }
    match lessons::create(&state.db, &user.id, &form.title).await {
        Ok(lesson) => Redirect::to(&format!("/lessons/{}", lesson.id)).into_response(),
        Err(e) => back(&e, &form.title),
    }
}

fn back(e: &AppError, title: &str) -> Response {
    if let AppError::Internal(_) = e {
        tracing::error!(error = %e, "creating a lesson failed");
    }
    // Keep what was typed, within reason (it travels in the address).
    let kept: String = title.chars().take(400).collect();
    let qs = serde_urlencoded::to_string([("error", refusal(e).code()), ("title", kept.as_str())]).unwrap_or_default();
    Redirect::to(&format!("/?{qs}")).into_response()
}
