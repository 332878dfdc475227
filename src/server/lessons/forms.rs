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
    error::AppError,
    http::extractors::{ApiForm, ApiPath},
    lessons::import_reports,
    lessons::imports::{self, Reading},
    lessons::worksheets,
    lessons::events,
    material::sandbox::Refusal,
    lessons,
    lessons::library,
    state::AppState,
};
use crate::{
    lesson::word::Carried,
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
    let problems = match (limited, bytes) {
        (Some(limited), _) => vec![limited.to_string()],
        (None, None) => vec!["Choose a lesson file (.xml, a .docx Margin made, or a QTI package) to import.".to_string()],
        (None, Some(bytes)) => match lesson_to_make(&state, &user.id, &file, &bytes).await {
            Ok((title, xml, left_out)) => match bring_in(&state, &user.id, &file, title.as_deref(), &xml, left_out).await {
                Ok(done) => return done,
                Err(problems) => problems,
            },
            Err(Ok(problems)) => problems,
            Err(Err(e)) => return answer(Err(e)),
        },
    };
    match import_reports::keep(&state.db, &user.id, &ImportReport { file, problems, made: None }).await {
        Ok(token) => Redirect::to(&format!("/?import={token}")).into_response(),
        Err(e) => answer(Err(e)),
    }
}

/// The lesson an uploaded file makes: its title (else its first heading),
/// its XML, and what could not come in; or the problems to report, or the
/// server's own failure.
async fn lesson_to_make(state: &AppState, user_id: &str, file: &str, bytes: &[u8]) -> Result<(Option<String>, String, Vec<String>), Result<Vec<String>, AppError>> {
    match read_import(state, file, bytes).await.map_err(|why| Ok(vec![why]))? {
        Reading::Lesson(xml) | Reading::Word(Carried::Key(xml)) => Ok((None, xml, Vec::new())),
        Reading::Word(Carried::Worksheet(w)) => match worksheets::resolve(&state.db, user_id, &w).await {
            // The teacher's own worksheet (or one of a lesson they edit): the whole lesson.
            Ok(Some(xml)) => Ok((None, xml, Vec::new())),
            // Anyone else's: what it shows, which holds no answers.
            Ok(None) => {
                let title: String = Some(w.title.clone()).filter(|t| !t.trim().is_empty()).unwrap_or_else(|| file_stem(file)).chars().take(120).collect();
                Ok((Some(title), w.shown, vec![WORKSHEET_SHOWN.to_string()]))
            }
            Err(AppError::BadRequest(why)) => Err(Ok(vec![why])),
            Err(e) => Err(Err(e)),
        },
        Reading::Quiz(quiz) => {
            let title: String = quiz.title.clone().unwrap_or_else(|| file_stem(file)).chars().take(120).collect();
            Ok((Some(title.clone()), quiz.titled(&title), quiz.left_out))
        }
    }
}

/// What an import of another teacher's worksheet says: it came in as it reads.
pub const WORKSHEET_SHOWN: &str = "A worksheet holds none of its answers (it is made for students), and this one is not from a lesson you edit, so it came in as the text it shows: its exercises are paragraphs. Make them exercises again in the editor, or ask the assistant to.";

/// What the uploaded file holds, read in the bounded child reader; or why
/// it holds nothing, as a sentence for the teacher.
async fn read_import(state: &AppState, file: &str, bytes: &[u8]) -> Result<Reading, String> {
    match state.extractor.import_of(file, bytes).await {
        Ok(answer) => imports::reading_of(&answer).ok_or_else(|| format!("“{file}” could not be read. Export it again and import the new file.")),
        Err(Refusal::File(why)) => Err(why),
        Err(Refusal::Unsafe(_)) => Err(format!(
            "“{file}” could not be read safely: reading it needed far more memory or time than any lesson or quiz should. Export it again, or in parts, and import the new files."
        )),
        Err(Refusal::Server(why)) => {
            tracing::error!(error = %why, "an import could not be read");
            Err(Refusal::Server(why).sentence())
        }
        Err(refused) => Err(refused.sentence()),
    }
}

/// `xml` made into a new lesson of the teacher's (titled `title`, else by
/// its first heading): the answer that goes to it, or to the list with
/// `left_out` when something could not come in; the problems when it
/// cannot be made.
async fn bring_in(state: &AppState, user_id: &str, file: &str, title: Option<&str>, xml: &str, left_out: Vec<String>) -> Result<Response, Vec<String>> {
    match library::import(&state.db, user_id, title, xml).await {
        Ok(lesson) if left_out.is_empty() => Ok(Redirect::to(&format!("/lessons/{}", lesson.id)).into_response()),
        Ok(lesson) => {
            let report = ImportReport { file: file.to_string(), problems: left_out, made: Some((lesson.id, lesson.title)) };
            Ok(match import_reports::keep(&state.db, user_id, &report).await {
                Ok(token) => Redirect::to(&format!("/?import={token}")).into_response(),
                Err(e) => answer(Err(e)),
            })
        }
        Err(AppError::InvalidLesson(errors)) => Err(errors.iter().map(|e| sentence(&e.to_string())).collect()),
        Err(e @ (AppError::PayloadTooLarge(_) | AppError::Title(_))) => Err(vec![e.to_string()]),
        Err(e) => Ok(answer(Err(e))),
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
        Ok(lesson) => {
            // The assistant may greet the new lesson (`lessonCreated`).
            state.lesson_listener.created(&state, &user.id, &lesson.id).await;
            Redirect::to(&format!("/lessons/{}", lesson.id)).into_response()
        }
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
