//! Versions of a lesson for every learner: "Make a version" copies the
//! lesson (the core) into a new lesson linked to it, keeping every id so
//! answers and changes line up, and starts the assistant on it in the
//! version's own chat: bringing it to a reading level (measured with
//! `check_reading_level`, within ±0.5 grade or saying why not), to simpler
//! language with a glossary for English learners, or into another
//! language. The core's Versions page lists them with their measured level
//! and whether a change from the core waits for the teacher there.
//!
//! A later edit of the core reaches each version as a change the assistant
//! proposes in the version's own terms: the lesson announces the edit
//! (`events::changed`) and the reactions carry it (`reactions::carry`).

use axum::{
    extract::State,
    http::StatusCode,
    response::{IntoResponse, Redirect, Response},
    Json,
};
use serde::{Deserialize, Serialize};

use crate::lesson::{self, reading};
use crate::models::{Author, LessonVersions, VersionSummary};
use crate::server::{
    accounts::current_user::{CurrentUser, TeacherPage},
    chats::turns::{self, OnBehalf, TurnKind},
    db::{self, Db},
    error::{AppError, Result},
    http::{
        extractors::{ApiForm, ApiJson, ApiPath},
    },
    lessons::{self, clean_title},
    state::AppState,
};

const PROMPT: &str = include_str!("../../../prompts/chat/make_version.md");

/// The most versions one lesson may have.
pub const MAX_VERSIONS: i64 = 12;

/// Which version to make.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "camelCase", deny_unknown_fields)]
pub enum VersionKind {
    /// At a reading level: a school grade from 1 to 12.
    Grade { grade: f64 },
    /// Simpler language and a glossary, for English learners.
    Learners,
    /// In another language, named by its code ("es", "de", "pt-BR").
    Language { language: String },
}

/// Languages named in full; others by their code.
const LANGUAGES: &[(&str, &str)] = &[
    ("ar", "Arabic"), ("de", "German"), ("en", "English"), ("es", "Spanish"), ("fr", "French"), ("it", "Italian"), ("ja", "Japanese"),
    ("ko", "Korean"), ("nl", "Dutch"), ("pl", "Polish"), ("pt", "Portuguese"), ("ru", "Russian"), ("sv", "Swedish"), ("tr", "Turkish"),
    ("uk", "Ukrainian"), ("vi", "Vietnamese"), ("zh", "Chinese"),
];

fn language_name(code: &str) -> String {
    let base = code.split('-').next().unwrap_or(code).to_ascii_lowercase();
    LANGUAGES.iter().find(|(c, _)| *c == base).map(|(_, n)| n.to_string()).unwrap_or_else(|| code.to_string())
}

/// A language code as `lang` takes it: letters, then optional `-` parts.
fn valid_language(code: &str) -> bool {
    let mut parts = code.split('-');
    matches!(parts.next(), Some(p) if (2..=3).contains(&p.len()) && p.chars().all(|c| c.is_ascii_alphabetic()))
        && parts.all(|p| (2..=8).contains(&p.len()) && p.chars().all(|c| c.is_ascii_alphanumeric()))
}

impl VersionKind {
    /// What it is called, and what the assistant is asked.
    fn label_and_ask(&self) -> Result<(String, String)> {
        match self {
            Self::Grade { grade } if (1.0..=12.0).contains(grade) => {
                let g = if grade.fract() == 0.0 { format!("{grade:.0}") } else { format!("{grade:.1}") };
                Ok((format!("grade {g}"), format!("Bring this lesson to the reading level for grade {g}: load the reading-level skill, measure with check_reading_level, revise, and measure again until it is within ±0.5 of grade {g}, or say why it cannot be.")))
            }
            Self::Grade { .. } => Err(AppError::BadRequest("A version's grade is a school grade from 1 to 12.".into())),
            Self::Learners => Ok((
                "English learners".into(),
                "Make this lesson a version for English learners: shorter sentences and common words, the key terms kept and explained in a short glossary (a <h2>Glossary</h2> and a <p> per term) at the end. Measure with check_reading_level before and after.".into(),
            )),
            Self::Language { language } if valid_language(language.trim()) => {
                let code = language.trim();
                let name = language_name(code);
                Ok((name.clone(), format!("Translate this lesson into {name}: every text students and the teacher read, the answers of blanks included, with lang=\"{code}\" on <lesson>. Keep the structure and every id.")))
            }
            Self::Language { .. } => Err(AppError::BadRequest("Name the language by its code, such as es, de or pt-BR.".into())),
        }
    }
}

/// The measured level of a lesson's XML, as said.
fn level_of(xml: &str) -> Option<String> {
    lesson::parse(xml).ok().and_then(|root| reading::of_lesson(&root)).map(|l| l.said())
}

/// The core a lesson is a version of: (id, title, label).
async fn core_of(db: &Db, owner: &str, id: &str) -> Result<Option<(String, String, String)>> {
    Ok(sqlx::query_as(
        "SELECT c.id, c.title, COALESCE(v.version_label, '') FROM lessons v JOIN lessons c ON c.id = v.version_of AND c.deleted_at IS NULL
         WHERE v.id = $1 AND v.owner_id = $2",
    )
    .bind(id)
    .bind(owner)
    .fetch_optional(db)
    .await?)
}

/// The versions of a lesson, oldest first, each with how many of the
/// assistant's changes wait for the teacher in it.
pub async fn list(db: &Db, owner: &str, core: &str) -> Result<Vec<VersionSummary>> {
    let rows: Vec<(String, String, Option<String>, String, i64)> = sqlx::query_as(
        "SELECT l.id, l.title, l.version_label, l.document_xml,
                (SELECT COUNT(*) FROM proposals p WHERE p.lesson_id = l.id AND p.status = 'pending')
         FROM lessons l WHERE l.version_of = $1 AND l.owner_id = $2 AND l.deleted_at IS NULL ORDER BY l.created_at, l.id",
    )
    .bind(core)
    .bind(owner)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, title, label, xml, waiting)| VersionSummary { id, title, label: label.unwrap_or_default(), level: level_of(&xml), waiting })
        .collect())
}

/// The Versions page of a lesson.
pub async fn page(db: &Db, owner: &str, id: &str) -> Result<LessonVersions> {
    let l = lessons::get_own(db, owner, id).await?;
    Ok(LessonVersions { lesson_id: l.id.clone(), level: level_of(&l.document_xml), title: l.title, core: core_of(db, owner, id).await?, versions: list(db, owner, id).await? })
}

/// A version made, and the turn working on it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Made {
    pub lesson_id: String,
    pub chat_id: String,
    pub turn_id: String,
}

/// Makes a version of `core_id` and starts the assistant on it.
pub async fn make(state: &AppState, owner: &str, core_id: &str, kind: &VersionKind) -> Result<Made> {
    let core = lessons::get_own(&state.db, owner, core_id).await?;
    if core_of(&state.db, owner, core_id).await?.is_some() {
        return Err(AppError::Conflict("This lesson is itself a version: make versions from its core.".into()));
    }
    let (label, ask) = kind.label_and_ask()?;
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM lessons WHERE version_of = $1 AND deleted_at IS NULL").bind(core_id).fetch_one(&state.db).await?;
    if count >= MAX_VERSIONS {
        return Err(AppError::Conflict(format!("A lesson may have at most {MAX_VERSIONS} versions. Delete one you no longer use first.")));
    }
    state.limits.lesson(owner).await?;
    let title = clean_title(&format!("{} ({label})", core.title)).or_else(|_| clean_title(&label))?;
    // The copy and its link to the core are written together: a version
    // that could not be linked is not left behind as a plain lesson.
    let mut tx = db::begin_write(&state.db).await?;
    let made = lessons::insert_in(&mut tx, owner, &title, &core.document_xml, Author::Teacher, &format!("Made as a version of “{}”: {label}", core.title)).await?;
    // Its base is the core it was copied from: later changes of the core
    // are carried from there (`carry`).
    let done = sqlx::query(
        "UPDATE lessons SET version_of = $1, version_label = $2, version_base_xml = $3, version_base_revision = $4 WHERE id = $5 AND owner_id = $6",
    )
    .bind(core_id)
    .bind(&label)
    .bind(&core.document_xml)
    .bind(core.revision)
    .bind(&made)
    .bind(owner)
    .execute(&mut *tx)
    .await?;
    db::touched_one(&done)?;
    tx.commit().await?;
    let content = PROMPT.trim().replace("{core}", &core.title).replace("{label}", &label).replace("{ask}", &ask);
    let turn = OnBehalf { owner_id: owner, lesson_id: &made, chat_id: None, note: format!("Make a version: {label}"), content, kind: TurnKind::Teacher };
    let (chat_id, log) = turns::start_for(state, turn).await?;
    Ok(Made { lesson_id: made, chat_id, turn_id: log.turn_id.clone() })
}

/// `POST /api/lessons/{id}/versions` with `{"kind": "grade", "grade": 4}`,
/// `{"kind": "learners"}` or `{"kind": "language", "language": "es"}`:
/// `202 {"lessonId","chatId","turnId"}`.
pub async fn api_make(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>, ApiJson(kind): ApiJson<VersionKind>) -> Result<Response> {
    let made = make(&state, &user.id, &id, &kind).await?;
    Ok((StatusCode::ACCEPTED, Json(made)).into_response())
}

/// `GET /api/lessons/{id}/versions`.
pub async fn api_page(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Json<LessonVersions>> {
    Ok(Json(page(&state.db, &user.id, &id).await?))
}

#[derive(Deserialize)]
pub struct MakeForm {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    grade: String,
    #[serde(default)]
    language: String,
}

/// The Versions page's "Make a version": to the new version, where the
/// assistant works in its chat; back with why when it could not start.
pub async fn form_make(State(state): State<AppState>, TeacherPage(user): TeacherPage, ApiPath(id): ApiPath<String>, ApiForm(form): ApiForm<MakeForm>) -> Result<Response> {
    let kind = match form.kind.as_str() {
        "grade" => form.grade.trim().parse::<f64>().ok().map(|grade| VersionKind::Grade { grade }),
        "learners" => Some(VersionKind::Learners),
        "language" => Some(VersionKind::Language { language: form.language.trim().to_string() }),
        _ => None,
    };
    let Some(kind) = kind else { return Ok(Redirect::to(&format!("/lessons/{id}/versions?error=input")).into_response()) };
    match make(&state, &user.id, &id, &kind).await {
        Ok(made) => Ok(Redirect::to(&format!("/lessons/{}", made.lesson_id)).into_response()),
        Err(AppError::NotFound) => Err(AppError::NotFound),
        Err(AppError::BadRequest(_)) => Ok(Redirect::to(&format!("/lessons/{id}/versions?error=input")).into_response()),
        Err(AppError::Conflict(_)) => Ok(Redirect::to(&format!("/lessons/{id}/versions?error=conflict")).into_response()),
        Err(e) => {
            tracing::info!(error = %e, lesson = %id, "a version could not be made");
            Ok(Redirect::to(&format!("/lessons/{id}/versions?error=unavailable")).into_response())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_a_label_and_an_ask_and_bad_ones_are_refused() {
        let (label, ask) = VersionKind::Grade { grade: 4.0 }.label_and_ask().unwrap();
        assert_eq!(label, "grade 4");
        assert!(ask.contains("reading level for grade 4"), "{ask}");
        assert_eq!(VersionKind::Grade { grade: 6.5 }.label_and_ask().unwrap().0, "grade 6.5");
        assert!(VersionKind::Grade { grade: 0.0 }.label_and_ask().is_err());
        assert_eq!(VersionKind::Learners.label_and_ask().unwrap().0, "English learners");
        let (label, ask) = VersionKind::Language { language: "es".into() }.label_and_ask().unwrap();
        assert_eq!(label, "Spanish");
        assert!(ask.contains("lang=\"es\""), "{ask}");
        assert_eq!(VersionKind::Language { language: "pt-BR".into() }.label_and_ask().unwrap().0, "Portuguese");
        assert_eq!(VersionKind::Language { language: "haw".into() }.label_and_ask().unwrap().0, "haw");
        for bad in ["", "e", "spanish!", "es\"><x", "toolonglanguage"] {
            assert!(VersionKind::Language { language: bad.into() }.label_and_ask().is_err(), "{bad}");
        }
    }
}
