//! Which standards a lesson (or a class's lessons) covers, by which
//! exercises, and how the students did on those exercises; and "Align to a
//! standard", which asks the assistant to tag or write exercises for one.
//!
//! Tags are read from the lesson as the teacher has it now; results from
//! the students' checked answers, marked against the published version
//! (ids stay stable across versions, so the two line up). A code on the
//! lesson itself stands for every exercise.

use std::collections::{HashMap, HashSet};

use axum::{
    extract::State,
    response::{IntoResponse, Redirect, Response},
    Json,
};
use serde::Deserialize;

use super::{improve, sheets};
use crate::lesson::{self, answers::Item, standards::tagged, Element};
use crate::models::{Coverage, LessonStandards};
use crate::server::{
    accounts::current_user::{CurrentUser, TeacherPage},
    chats::turns::{self, OnBehalf, TurnKind},
    db::Db,
    error::{AppError, Result},
    http::{
        extractors::{ApiForm, ApiJson, ApiPath},
    },
    lessons,
    standards::frameworks,
    state::AppState,
};

const PROMPT: &str = include_str!("../../../prompts/chat/align_to_standard.md");

/// The standards `root` names, each with what names it and the ids of the
/// exercises it stands for.
fn tags(root: &Element, prefix: &str) -> Vec<(String, Vec<String>, HashSet<String>)> {
    let exercises: Vec<&Element> = root.elements().filter(|e| e.name == "exercise").collect();
    let mut out: Vec<(String, Vec<String>, HashSet<String>)> = Vec::new();
    for t in tagged(root) {
        let ids: HashSet<String> = match t.id {
            Some(id) => HashSet::from([id.to_string()]),
            None => exercises.iter().filter_map(|e| e.id().map(str::to_string)).collect(),
        };
        let label = if t.id.is_none() && prefix.is_empty() { "The lesson".to_string() } else if t.id.is_none() { prefix.to_string() } else if prefix.is_empty() { t.label.clone() } else { format!("{prefix}, {}", t.label) };
        for code in t.codes {
            match out.iter_mut().find(|(c, _, _)| c == code) {
                Some((_, by, set)) => {
                    by.push(label.clone());
                    set.extend(ids.iter().cloned());
                }
                None => out.push((code.to_string(), vec![label.clone()], ids.clone())),
            }
        }
    }
    out
}

/// The items of each exercise of `root`, by exercise id: the exercise's
/// own id (a sequence is one item) and every id inside it.
fn items_by_exercise(root: &Element) -> HashMap<String, HashSet<String>> {
    fn ids(e: &Element, into: &mut HashSet<String>) {
        if let Some(id) = e.id() {
            into.insert(id.to_string());
        }
        for child in e.elements() {
            ids(child, into);
        }
    }
    root.elements()
        .filter(|e| e.name == "exercise")
        .filter_map(|e| {
            let mut set = HashSet::new();
            ids(e, &mut set);
            e.id().map(|id| (id.to_string(), set))
        })
        .collect()
}

/// Right and marked answers per item of `items`, from the answers of
/// `students` (only items marked automatically count).
async fn marks(db: &Db, lesson_id: &str, items: &[Item], students: &HashSet<String>) -> Result<HashMap<String, (i64, i64)>> {
    let answers: Vec<(String, String, String)> = sqlx::query_as("SELECT student_id, item_id, value FROM student_answers WHERE lesson_id = $1 AND value <> ''")
        .bind(lesson_id)
        .fetch_all(db)
        .await?;
    let by_id: HashMap<&str, &Item> = items.iter().map(|i| (i.id.as_str(), i)).collect();
    let mut out: HashMap<String, (i64, i64)> = HashMap::new();
    for (student, item, value) in &answers {
        if !students.contains(student) {
            continue;
        }
        if let Some(right) = by_id.get(item.as_str()).and_then(|i| i.mark(value)) {
            let e = out.entry(item.clone()).or_default();
            e.0 += i64::from(right);
            e.1 += 1;
        }
    }
    Ok(out)
}

/// One lesson's coverage rows, labelled with `prefix` (a class's view
/// names the lesson), results from `students` (`None`: every student of
/// the teacher's classes that have it).
async fn lesson_rows(db: &Db, owner: &str, lesson_id: &str, prefix: &str, students: Option<&HashSet<String>>) -> Result<Vec<(String, Vec<String>, i64, i64)>> {
    let current = lessons::get_own(db, owner, lesson_id).await?;
    let Ok(root) = lesson::parse(&current.document_xml) else { return Ok(Vec::new()) };
    let tags = tags(&root, prefix);
    if tags.is_empty() {
        return Ok(Vec::new());
    }
    let (_, published) = super::published_xml(db, owner, lesson_id).await?;
    let items = sheets::items_of(&published);
    let students: HashSet<String> = match students {
        Some(s) => s.clone(),
        None => sheets::results(db, owner, lesson_id, &items).await?.into_iter().map(|r| r.student_id).collect(),
    };
    let marks = marks(db, lesson_id, &items, &students).await?;
    let by_exercise = items_by_exercise(&root);
    Ok(tags
        .into_iter()
        .map(|(code, by, exercises)| {
            let item_ids: HashSet<&String> = exercises.iter().filter_map(|e| by_exercise.get(e)).flatten().collect();
            let (right, marked) = item_ids.iter().filter_map(|id| marks.get(*id)).fold((0, 0), |(r, m), (a, b)| (r + a, m + b));
            (code, by, right, marked)
        })
        .collect())
}

/// Rows with their statements, codes merged across lessons, in the order
/// first named.
async fn with_statements(db: &Db, owner: &str, rows: Vec<(String, Vec<String>, i64, i64)>) -> Result<Vec<Coverage>> {
    let school = frameworks::school_of(db, owner).await?;
    let catalog = if rows.is_empty() { Default::default() } else { frameworks::catalog(db, &school).await? };
    let mut out: Vec<Coverage> = Vec::new();
    for (code, by, right, marked) in rows {
        match out.iter_mut().find(|c| c.code == code) {
            Some(c) => {
                c.tagged_by.extend(by);
                c.right += right;
                c.marked += marked;
            }
            None => {
                let statement = catalog.get(&code).map(|s| s.statement.clone()).unwrap_or_default();
                out.push(Coverage { code, statement, tagged_by: by, right, marked });
            }
        }
    }
    Ok(out)
}

/// A lesson's Standards page; `query` searches the school's frameworks.
pub async fn lesson_page(state: &AppState, owner: &str, lesson_id: &str, query: &str) -> Result<LessonStandards> {
    let current = lessons::get_own(&state.db, owner, lesson_id).await?;
    let rows = lesson_rows(&state.db, owner, lesson_id, "", None).await?;
    let coverage = with_statements(&state.db, owner, rows).await?;
    let school = frameworks::school_of(&state.db, owner).await?;
    let has_frameworks = frameworks::any(&state.db, &school).await?;
    let query: String = query.trim().chars().take(200).collect();
    let hits = crate::server::standards::routes::search(state, &school, &query).await?;
    Ok(LessonStandards { lesson_id: lesson_id.to_string(), title: current.title, coverage, has_frameworks, query, hits })
}

/// The standards a class's lessons cover, with how that class's students did.
pub async fn class_coverage(db: &Db, owner: &str, class_id: &str) -> Result<Vec<Coverage>> {
    let lessons: Vec<(String, String)> = sqlx::query_as(
        "SELECT l.id, l.title FROM class_lessons cl JOIN classes c ON c.id = cl.class_id AND c.owner_id = $2
           JOIN lessons l ON l.id = cl.lesson_id AND l.deleted_at IS NULL
         WHERE cl.class_id = $1 ORDER BY l.title, l.id",
    )
    .bind(class_id)
    .bind(owner)
    .fetch_all(db)
    .await?;
    let students: HashSet<String> = sqlx::query_scalar::<_, String>("SELECT user_id FROM class_members WHERE class_id = $1")
        .bind(class_id)
        .fetch_all(db)
        .await?
        .into_iter()
        .collect();
    let mut rows = Vec::new();
    for (id, title) in lessons {
        rows.extend(lesson_rows(db, owner, &id, &title, Some(&students)).await?);
    }
    with_statements(db, owner, rows).await
}

/// What the teacher sees in the chat where a typed message would be.
pub fn note(code: &str) -> String {
    format!("Align to {code}")
}

/// Starts the assistant on aligning the lesson to `code` (a code of the
/// school's frameworks), in the lesson's latest chat; its chat and turn.
/// Its edits follow the lesson's review setting, as the teacher's own
/// requests do.
pub async fn align(state: &AppState, owner: &str, lesson_id: &str, code: &str) -> Result<(String, String)> {
    lessons::get_own(&state.db, owner, lesson_id).await?;
    let code = code.trim();
    let school = frameworks::school_of(&state.db, owner).await?;
    let catalog = frameworks::catalog(&state.db, &school).await?;
    let standard = catalog.get(code).ok_or_else(|| AppError::BadRequest(format!("`{}` is not a standard of your school's frameworks.", lesson::standards::statement_excerpt(code))))?;
    let content = PROMPT.trim().replace("{code}", &standard.code).replace("{statement}", &standard.statement).replace("{framework}", &standard.framework);
    let turn = OnBehalf { owner_id: owner, lesson_id, chat_id: None, note: note(&standard.code), content, kind: TurnKind::Teacher };
    let (chat, log) = turns::start_for(state, turn).await?;
    Ok((chat, log.turn_id.clone()))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlignBody {
    code: String,
}

/// `POST /api/lessons/{id}/align {code}`: 202 with the chat and the turn;
/// 400 for a code the school does not have.
pub async fn api_align(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>, ApiJson(body): ApiJson<AlignBody>) -> Result<Response> {
    Ok(improve::started(align(&state, &user.id, &id, &body.code).await?))
}

#[derive(Deserialize)]
pub struct AlignForm {
    #[serde(default)]
    code: String,
}

/// The Standards page's "Align": to the lesson, where the reply shows in
/// its chat; back to the page with why when it could not start.
pub async fn form_align(State(state): State<AppState>, TeacherPage(user): TeacherPage, ApiPath(id): ApiPath<String>, ApiForm(form): ApiForm<AlignForm>) -> Result<Response> {
    match align(&state, &user.id, &id, &form.code).await {
        Ok(_) => Ok(Redirect::to(&format!("/lessons/{id}")).into_response()),
        Err(AppError::NotFound) => Err(AppError::NotFound),
        Err(AppError::BadRequest(_)) => Ok(Redirect::to(&format!("/lessons/{id}/standards?align=unknown")).into_response()),
        Err(e) => {
            tracing::info!(error = %e, lesson = %id, "Align to a standard could not start");
            Ok(Redirect::to(&format!("/lessons/{id}/standards?align=unavailable")).into_response())
        }
    }
}

/// `GET /api/lessons/{id}/standards`: the lesson's coverage.
pub async fn api_lesson(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Json<Vec<Coverage>>> {
    Ok(Json(lesson_page(&state, &user.id, &id, "").await?.coverage))
}

/// `GET /api/classes/{id}/standards`: the class's coverage.
pub async fn api_class(State(state): State<AppState>, CurrentUser(user): CurrentUser, ApiPath(id): ApiPath<String>) -> Result<Json<Vec<Coverage>>> {
    // A class that is not the teacher's is not found, as everywhere.
    let owned: Option<String> = sqlx::query_scalar("SELECT id FROM classes WHERE id = $1 AND owner_id = $2").bind(&id).bind(&user.id).fetch_optional(&state.db).await?;
    owned.ok_or(AppError::NotFound)?;
    Ok(Json(class_coverage(&state.db, &user.id, &id).await?))
}
